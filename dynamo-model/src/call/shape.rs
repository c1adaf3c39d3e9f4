//! Read shapes (a query's or a scan's expressions, values left out) and the stable hash
//! they are keyed by; the record of a query or a scan, from what it asks ([`ReadAsked`]).

use super::{Call, Operation};
use aws_sdk_dynamodb::types::Select;
use std::borrow::Cow;
use std::sync::Arc;

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

/// What a query or a scan asks, whichever way it is held: the builder the crate fills, or
/// the input of a request it did not build.
pub(crate) struct ReadAsked<'a> {
    pub(crate) operation: Operation,
    pub(crate) table: Option<&'a str>,
    pub(crate) index: Option<&'a str>,
    /// A query's key condition (a scan has none).
    pub(crate) key_condition: Option<&'a str>,
    pub(crate) filter: Option<&'a str>,
    pub(crate) projection: Option<&'a str>,
    /// `AttributesToGet` is set.
    pub(crate) attributes_to_get: bool,
    pub(crate) select: Option<&'a Select>,
    pub(crate) consistent: bool,
}

impl ReadAsked<'_> {
    /// The read's shape: its operation, table, index, key condition, filter and
    /// projection.
    pub(crate) fn shape(&self) -> u64 {
        shape_key(&[
            Some(self.operation.name()),
            self.table,
            self.index,
            self.key_condition,
            self.filter,
            self.projection,
        ])
    }

    /// The record of the read's call (its entity and partition are the caller's).
    pub(crate) fn call(&self) -> Call {
        let partial = matches!(
            self.select,
            Some(Select::Count | Select::SpecificAttributes)
        );
        Call {
            index: self.index.map(|index| Cow::Owned(index.to_owned())),
            shape: Some(self.shape()),
            consistent: self.consistent,
            projected: self.projection.is_some() || self.attributes_to_get || partial,
            whole_items: self.projection.is_none() && self.select.is_none(),
            ..Call::new(self.operation, Arc::from(self.table.unwrap_or_default()))
        }
    }
}

/// What a `Query` input asks.
pub(crate) fn query_asked(input: &aws_sdk_dynamodb::operation::query::QueryInput) -> ReadAsked<'_> {
    ReadAsked {
        operation: Operation::Query,
        table: input.table_name(),
        index: input.index_name(),
        key_condition: input.key_condition_expression(),
        filter: input.filter_expression(),
        projection: input.projection_expression(),
        attributes_to_get: input.attributes_to_get.is_some(),
        select: input.select(),
        consistent: input.consistent_read() == Some(true),
    }
}

/// What a `Scan` input asks.
pub(crate) fn scan_asked(input: &aws_sdk_dynamodb::operation::scan::ScanInput) -> ReadAsked<'_> {
    ReadAsked {
        operation: Operation::Scan,
        table: input.table_name(),
        index: input.index_name(),
        key_condition: None,
        filter: input.filter_expression(),
        projection: input.projection_expression(),
        attributes_to_get: input.attributes_to_get.is_some(),
        select: input.select(),
        consistent: input.consistent_read() == Some(true),
    }
}

/// The shape of a `Query` input.
pub(crate) fn query_shape(input: &aws_sdk_dynamodb::operation::query::QueryInput) -> u64 {
    query_asked(input).shape()
}

/// The shape of a `Scan` input.
pub(crate) fn scan_shape(input: &aws_sdk_dynamodb::operation::scan::ScanInput) -> u64 {
    scan_asked(input).shape()
}
