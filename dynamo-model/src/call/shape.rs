//! Read shapes (a query's or a scan's expressions, values left out) and the stable hash
//! they are keyed by.

/// 64-bit FNV-1a: stable across processes and releases, unlike the standard hasher.
pub(crate) struct Fnv(u64);

impl Fnv {
    pub(crate) fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    pub(crate) fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    pub(crate) fn finish(&self) -> u64 {
        self.0
    }
}

/// A read shape's key: the hash of what every request of one read, on every partition, sends
/// alike.
pub(crate) fn shape_key(parts: &[Option<&str>]) -> u64 {
    let mut h = Fnv::new();
    for part in parts {
        match part {
            Some(text) => {
                h.write(b"\x01");
                h.write(text.as_bytes());
            }
            None => h.write(b"\x00"),
        }
    }
    h.finish()
}

/// The shape of a `Query`: its table, index, key condition, filter and projection.
pub(crate) fn query_shape(input: &aws_sdk_dynamodb::operation::query::QueryInput) -> u64 {
    shape_key(&[
        Some("Query"),
        input.table_name(),
        input.index_name(),
        input.key_condition_expression(),
        input.filter_expression(),
        input.projection_expression(),
    ])
}

/// The shape of a `Scan`: its table, index, filter and projection.
pub(crate) fn scan_shape(input: &aws_sdk_dynamodb::operation::scan::ScanInput) -> u64 {
    shape_key(&[
        Some("Scan"),
        input.table_name(),
        input.index_name(),
        None,
        input.filter_expression(),
        input.projection_expression(),
    ])
}
