//! Chunked attributes: values too large for an item (DynamoDB caps an item at 400 KB and
//! charges reads by 4 KB), stored in chunk items of their own so the item that holds
//! them stays small and cheap to list.
//!
//! A field `#[dynamo(chunked)] body: Chunked<String>` (or `Chunked<Vec<u8>>`) is stored
//! in the item itself while its encoded value is at most the inline threshold (1 KiB by
//! default, `chunked(inline = N)`), as a Binary attribute. Above it, the value is split
//! into chunk items of at most `chunk_size` bytes (350 KiB by default) and the item keeps
//! a manifest: a map `{t: token, n: chunk count, len: total bytes, crc: CRC-32}`.
//!
//! # Chunk items
//!
//! Chunk `k` (0-based) of a write whose token is `T` is stored under the partition key
//! `_CHUNK#T#k` (six digits) and, for a table with a sort key, the sort key `_CHUNK`:
//! every chunk has a partition of its own, so reading and writing a large value spreads
//! over partitions instead of making one hot (the chunk keys do not embed the parent's
//! key, which could already be 2 KB; the parent's key is stored in the chunk as
//! attributes `_ppk` / `_psk`, with the attribute name `_field`). A chunk carries the
//! entity type `_chunk`, so no query of an entity ever decodes one, its data in `_d`
//! (Binary) and the time it was written in `_ct` (epoch milliseconds). The token is 128
//! random bits, unique to the write: two writes never share a chunk.
//!
//! # Writing: new chunks first, the item flipped conditionally, old chunks last
//!
//! `db.put(&entity)` of an entity with chunked fields:
//! 1. reads the stored item's manifests (strongly consistent);
//! 2. writes the new chunks with `BatchWriteItem` (25 at a time, unprocessed items
//!    retried; nothing is dropped);
//! 3. puts the item with its manifests, on the condition that the stored manifests are
//!    still those read in step 1 (with every condition of the put itself);
//! 4. deletes the chunks of the manifests it replaced, those it owns (see "Ownership").
//!    A put resent with the write token of an earlier call whose outcome was unknown
//!    ([`Error::OutcomeUnknown`]) finds in step 3 the item that call stored: it then
//!    deletes the chunks it read or wrote that this item does not name (its own new
//!    ones), and keeps those it names.
//!
//! A crash or an error at any step leaves the old or the new value readable, never a mix:
//! a reader loads exactly the chunks its manifest names and checks their count, length
//! and CRC. What a crash can leave is orphan chunks (written but never referenced, or
//! replaced but not deleted). Two concurrent writers of one item cannot both succeed in
//! step 3: the loser gets [`Error::ConditionFailed`] (its new chunks are deleted).
//!
//! # Reading
//!
//! `db.get` loads the chunks of the item it reads (one `BatchGetItem` for all its chunked
//! fields; eventually consistent, since chunks never change once written, and again
//! strongly consistent for any chunk not seen yet). Queries, scans and batch gets return items whose chunked fields are not
//! loaded ([`Chunked::get`] is `None`, [`Chunked::manifest`] says how large they are), so
//! listing stays cheap; [`Db::load_chunks`] loads those of many items in one call.
//!
//! Plain deletes of such an item delete its chunks too. Batch writes and transactions
//! cannot follow this protocol (no read, no condition, or no room for chunks) and refuse
//! entities with chunked fields.
//!
//! A value read without its chunks and put under another key, where no item is stored,
//! is refused with [`Error::ChunksNotLoaded`] before anything is written: the put would
//! name chunks it does not own and cannot copy (it does not hold the value). Load the
//! value first ([`Db::load_chunks`]); the put then writes chunks of the new item's own.
//!
//! # Ownership
//!
//! A chunk belongs to the item and field that wrote it, as it records (`_ppk`, `_psk`,
//! `_field`), and only that item's calls delete it. Every chunk deletion (a put's removal
//! of the chunks it replaced, of its own chunks after it failed, a delete's removal of
//! the item's chunks, [`Db::collect_orphans`]) is a `DeleteItem` on the condition that the
//! chunk records that owner: one request per chunk (eight at a time), since
//! `BatchWriteItem` takes no condition. It costs the same write units as a batch delete
//! (a delete is charged by the size of the item deleted, and a chunk of another owner
//! costs one unit to leave alone), in more requests: one per chunk instead of one per 25.
//! Reading the chunks' owners first instead would cost read units for the whole chunk
//! (up to 350 KB each) and leave a moment between the read and the delete; the condition
//! is checked atomically with the delete, and a chunk's owner never changes after it is
//! written.
//!
//! # Copies
//!
//! Another program that copies an item holding manifests to a new key (or moves it:
//! copies, then deletes the original) makes two items name the same chunks, of which one
//! is the owner. What the crate guarantees then:
//! - no crate call on the copy (a put of loaded, inline or listed values, a delete, an
//!   update) deletes the owner's chunks: the owner stays readable. A put of loaded values
//!   over the copy writes chunks of the copy's own;
//! - [`Db::collect_orphans`] keeps chunks their owner no longer names while another item
//!   names them (a moved item stays readable), and removes them once none does;
//! - what it cannot guarantee: the copy stays readable only while the owner keeps those
//!   chunks. A put over the owner, or its delete, removes the chunks it replaced, whoever
//!   else names them: the copy then fails to read ("chunk ... is missing"). Copy an item
//!   with chunked fields through the crate instead (`db.get`, which loads the values,
//!   then `db.put` under the new key): the copy then owns chunks of its own.
//!
//! [`Db::load_chunks`]: crate::Db::load_chunks
//! [`Db::collect_orphans`]: crate::Db::collect_orphans

use crate::error::DecodeErrorKind;
use crate::{Error, RawKey};
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// The inline threshold by default: values encoded in at most this many bytes stay in
/// the item.
pub const DEFAULT_INLINE: usize = 1024;
/// The chunk size by default (bytes of value per chunk item).
pub const DEFAULT_CHUNK_SIZE: usize = 350 * 1024;
/// The largest chunk size: a chunk item also holds its key and a few attributes, and
/// must stay under DynamoDB's 400 KB item limit.
pub const MAX_CHUNK_SIZE: usize = 390 * 1024;
/// The longest a put lets pass between writing its chunks and writing the item that names
/// them: past it, the put deletes its chunks and fails with [`Error::DeadlineExceeded`].
/// [`Db::collect_orphans`], whose `older_than` must be at least this, therefore never
/// deletes chunks a put is about to name.
///
/// [`Db::collect_orphans`]: crate::Db::collect_orphans
pub const MAX_FLIP_DELAY: std::time::Duration = std::time::Duration::from_secs(5 * 60);
/// The shortest `older_than` [`Db::collect_orphans`] accepts: [`MAX_FLIP_DELAY`] and as
/// much again, for clocks that differ between the machines that put and sweep.
///
/// [`Db::collect_orphans`]: crate::Db::collect_orphans
pub const MIN_ORPHAN_AGE: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// The most chunks one value may have (about 39 GB at the largest chunk size): a bound on
/// what reading a manifest may ask for.
pub const MAX_CHUNKS: u64 = 100_000;

/// The entity type of chunk items.
pub const CHUNK_TYPE: &str = "_chunk";

/// The attribute of a chunk that holds its parent item's partition key.
pub const PARENT_PK: &str = "_ppk";
/// The attribute of a chunk that holds its parent item's sort key (tables with one).
pub const PARENT_SK: &str = "_psk";
/// The attribute of a chunk that names the parent's chunked field it belongs to.
pub const FIELD: &str = "_field";
/// The attribute of a chunk that holds when it was written (epoch milliseconds): the
/// orphan sweep's measure of its age.
pub const CREATED: &str = "_ct";
/// The partition-key prefix of chunk items. Their keys are the crate's own format, not
/// rendered from a template, so whatever delimiter the table's entities use they are
/// written and split at `#`; no encoded key value contains `#` under any delimiter (see
/// [`Delimiter`](crate::key::Delimiter)), so no entity's key part can forge this prefix
/// after a delimiter.
pub const CHUNK_PREFIX: &str = "_CHUNK#";
/// The sort key of chunk items, in tables with a sort key.
pub const CHUNK_SORT_KEY: &str = "_CHUNK";

/// Whether `key` is a chunk item's key (the crate's own key space).
pub(crate) fn is_chunk_key(key: &RawKey) -> bool {
    key.pk.starts_with(CHUNK_PREFIX)
}

/// Where a chunked value's chunks are: the parent item's record of one write.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Manifest {
    /// The token of the write that stored the chunks (unique to it).
    pub token: String,
    /// How many chunk items.
    pub chunks: u32,
    /// The encoded value's length in bytes.
    pub len: u64,
    /// CRC-32 of the encoded value.
    pub crc: u32,
}

impl Manifest {
    pub(crate) fn to_attr(&self) -> AttributeValue {
        AttributeValue::M(HashMap::from([
            ("t".to_owned(), AttributeValue::S(self.token.clone())),
            ("n".to_owned(), AttributeValue::N(self.chunks.to_string())),
            ("len".to_owned(), AttributeValue::N(self.len.to_string())),
            ("crc".to_owned(), AttributeValue::N(self.crc.to_string())),
        ]))
    }

    pub(crate) fn from_attr(
        map: &HashMap<String, AttributeValue>,
    ) -> Result<Self, DecodeErrorKind> {
        pub(crate) fn number<T: std::str::FromStr>(
            map: &HashMap<String, AttributeValue>,
            name: &str,
        ) -> Result<T, DecodeErrorKind> {
            map.get(name)
                .and_then(|v| v.as_n().ok())
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| DecodeErrorKind::Invalid(format!("chunk manifest without `{name}`")))
        }
        let token = match map.get("t") {
            Some(AttributeValue::S(t)) if !t.is_empty() && !t.contains('#') => t.clone(),
            _ => {
                return Err(DecodeErrorKind::Invalid(
                    "chunk manifest without a token".to_owned(),
                ));
            }
        };
        let manifest = Manifest {
            token,
            chunks: number(map, "n")?,
            len: number(map, "len")?,
            crc: number(map, "crc")?,
        };
        // What a write can have made: at least one chunk, each of 1 to MAX_CHUNK_SIZE
        // bytes (a hostile count or length must not size an allocation).
        let n = u64::from(manifest.chunks);
        if n == 0
            || n > MAX_CHUNKS
            || manifest.len < n
            || manifest.len > n.saturating_mul(MAX_CHUNK_SIZE as u64)
        {
            return Err(DecodeErrorKind::Invalid(format!(
                "a chunk manifest of {} chunks holding {} bytes cannot have been written",
                manifest.chunks, manifest.len
            )));
        }
        Ok(manifest)
    }

    /// The keys of this manifest's chunk items.
    pub(crate) fn keys(&self, schema: &crate::TableSchema) -> Vec<RawKey> {
        (0..self.chunks)
            .map(|seq| chunk_key(schema, &self.token, seq))
            .collect()
    }
}

pub(crate) fn chunk_key(schema: &crate::TableSchema, token: &str, seq: u32) -> RawKey {
    RawKey {
        pk: format!("{CHUNK_PREFIX}{token}#{seq:06}"),
        sk: schema.sk.map(|_| CHUNK_SORT_KEY.to_owned()),
    }
}

/// A value a chunked field can hold: converted to and from bytes.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the value of a chunked field",
    label = "a `Chunked<{Self}>` field",
    note = "a chunked field holds `Chunked<String>` or `Chunked<Vec<u8>>`; store other values as bytes (e.g. serialised) in a `Chunked<Vec<u8>>`"
)]
pub trait ChunkValue: Sized + Send + Sync + 'static {
    /// The value's bytes.
    fn to_bytes(&self) -> Cow<'_, [u8]>;
    /// The value back from its bytes.
    fn from_bytes(bytes: Vec<u8>) -> Result<Self, DecodeErrorKind>;
}

impl ChunkValue for String {
    fn to_bytes(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(self.as_bytes())
    }
    fn from_bytes(bytes: Vec<u8>) -> Result<Self, DecodeErrorKind> {
        String::from_utf8(bytes)
            .map_err(|e| DecodeErrorKind::Invalid(format!("a chunked string is not UTF-8: {e}")))
    }
}

impl ChunkValue for Vec<u8> {
    fn to_bytes(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(self)
    }
    fn from_bytes(bytes: Vec<u8>) -> Result<Self, DecodeErrorKind> {
        Ok(bytes)
    }
}

/// The stored form of a value, as [`crate::compress`] writes it: a tag byte (0: as is),
/// then the bytes, compressed when the field says so and it pays.
pub(crate) fn encode<T: ChunkValue>(value: &T, field: &ChunkedField) -> Arc<[u8]> {
    let bytes = value.to_bytes();
    match field.compression {
        // Compressed only within the field's `max_size`, the most a read decompresses: a
        // larger value is stored as is (tag 0), which reads take at any size, so every
        // value written can be read back.
        Some(c) if bytes.len() <= c.max_size => {
            crate::compress::encode(c.codec, c.threshold, &bytes).into()
        }
        _ => {
            let mut out = Vec::with_capacity(bytes.len() + 1);
            out.push(0);
            out.extend_from_slice(&bytes);
            out.into()
        }
    }
}

/// The value from its stored form (any tag [`crate::compress`] reads, whatever the
/// field's codec now); a compressed value may expand to the field's `max_size`.
pub(crate) fn decode<T: ChunkValue>(
    encoded: &[u8],
    field: &ChunkedField,
) -> Result<T, DecodeErrorKind> {
    // A value stored as is (tag 0) is as large as the bytes read: no bound to apply. A
    // compressed one may expand to the field's bound (the default one when the field is
    // not compressed now but the value was written compressed).
    let max = match (encoded.first(), field.compression) {
        (Some(0), _) => usize::MAX,
        (_, Some(c)) => c.max_size,
        (_, None) => crate::compress::DEFAULT_MAX_SIZE,
    };
    let bytes = crate::compress::decode(encoded, max).map_err(DecodeErrorKind::Decompress)?;
    T::from_bytes(bytes.into_owned())
}

/// A field stored in chunk items when it is large; see the [module documentation](self).
///
/// Read by a query, scan or batch get it is not loaded: [`get`](Self::get) is `None` and
/// [`manifest`](Self::manifest) says where and how large it is; [`Db::get`] and
/// [`Db::load_chunks`] load it.
///
/// [`Db::get`]: crate::Db::get
/// [`Db::load_chunks`]: crate::Db::load_chunks
pub struct Chunked<T> {
    state: State<T>,
    /// The encoded value, computed once (a put sizes it, splits it and may send it).
    encoded: OnceLock<Arc<[u8]>>,
}

enum State<T> {
    Loaded(T),
    Stored(Manifest),
}

impl<T> Chunked<T> {
    /// A loaded value.
    pub fn new(value: T) -> Self {
        Chunked {
            state: State::Loaded(value),
            encoded: OnceLock::new(),
        }
    }

    /// The value, when loaded.
    pub fn get(&self) -> Option<&T> {
        match &self.state {
            State::Loaded(v) => Some(v),
            State::Stored(_) => None,
        }
    }

    /// The value, when loaded.
    pub fn into_inner(self) -> Option<T> {
        match self.state {
            State::Loaded(v) => Some(v),
            State::Stored(_) => None,
        }
    }

    /// Replaces the value.
    pub fn set(&mut self, value: T) {
        self.state = State::Loaded(value);
        self.encoded = OnceLock::new();
    }

    /// Whether the value is loaded.
    pub fn is_loaded(&self) -> bool {
        matches!(self.state, State::Loaded(_))
    }

    /// Where the stored value's chunks are, when it was read without them.
    pub fn manifest(&self) -> Option<&Manifest> {
        match &self.state {
            State::Stored(m) => Some(m),
            State::Loaded(_) => None,
        }
    }
}

impl<T> From<T> for Chunked<T> {
    fn from(value: T) -> Self {
        Chunked::new(value)
    }
}

impl<T: Clone> Clone for Chunked<T> {
    fn clone(&self) -> Self {
        Chunked {
            state: match &self.state {
                State::Loaded(v) => State::Loaded(v.clone()),
                State::Stored(m) => State::Stored(m.clone()),
            },
            encoded: self.encoded.clone(),
        }
    }
}

impl<T: PartialEq> PartialEq for Chunked<T> {
    fn eq(&self, other: &Self) -> bool {
        match (&self.state, &other.state) {
            (State::Loaded(a), State::Loaded(b)) => a == b,
            (State::Stored(a), State::Stored(b)) => a == b,
            _ => false,
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for Chunked<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.state {
            State::Loaded(v) => f.debug_tuple("Chunked").field(v).finish(),
            State::Stored(m) => f.debug_tuple("Chunked::Stored").field(m).finish(),
        }
    }
}

impl<T: ChunkValue> Chunked<T> {
    pub(crate) fn encoded(&self, field: &ChunkedField) -> Option<Arc<[u8]>> {
        match &self.state {
            State::Loaded(v) => Some(Arc::clone(self.encoded.get_or_init(|| encode(v, field)))),
            State::Stored(_) => None,
        }
    }
}

/// A chunked field seen by the runtime, whatever its value type.
#[doc(hidden)]
pub trait ChunkSlot: Send + Sync {
    /// The manifest of a value read without its chunks.
    fn manifest(&self) -> Option<&Manifest>;
    /// The encoded value, when loaded.
    fn encoded(&self, field: &ChunkedField) -> Option<Arc<[u8]>>;
    /// Loads the value from its encoded bytes.
    fn fill(&mut self, encoded: &[u8], field: &ChunkedField) -> Result<(), DecodeErrorKind>;
}

impl<T: ChunkValue> ChunkSlot for Chunked<T> {
    fn manifest(&self) -> Option<&Manifest> {
        Chunked::manifest(self)
    }
    fn encoded(&self, field: &ChunkedField) -> Option<Arc<[u8]>> {
        Chunked::encoded(self, field)
    }
    fn fill(&mut self, encoded: &[u8], field: &ChunkedField) -> Result<(), DecodeErrorKind> {
        self.state = State::Loaded(decode(encoded, field)?);
        Ok(())
    }
}

/// A chunked field of an entity: its attribute and sizes (generated by the derive).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkedField {
    /// The attribute holding the value or its manifest.
    pub attribute: &'static str,
    /// Encoded values up to this many bytes stay in the item.
    pub inline: usize,
    /// Bytes of value per chunk item.
    pub chunk_size: usize,
    /// How the value is compressed before it is stored or split (`chunked` with
    /// `compress`), if it is.
    pub compression: Option<&'static crate::compress::Compression>,
}

/// The stored form of a chunked field: inline (Binary), its manifest (Map) when it was
/// read without its chunks, or `NULL` when the put must write chunks (which only
/// `db.put` does; every other write refuses an item holding that mark).
pub(crate) fn to_attr<T: ChunkValue>(field: &ChunkedField, value: &Chunked<T>) -> AttributeValue {
    match (&value.state, value.encoded(field)) {
        (State::Stored(manifest), _) => manifest.to_attr(),
        (State::Loaded(_), Some(bytes)) if bytes.len() <= field.inline => {
            AttributeValue::B(Blob::new(bytes.to_vec()))
        }
        (State::Loaded(_), _) => AttributeValue::Null(true),
    }
}

/// Reads a chunked field's stored form: an inline value, or a manifest (not loaded).
pub(crate) fn from_attr<T: ChunkValue>(
    stored: Option<AttributeValue>,
    field: &ChunkedField,
) -> Result<Chunked<T>, DecodeErrorKind> {
    match stored {
        Some(AttributeValue::B(bytes)) => decode(bytes.as_ref(), field).map(Chunked::new),
        Some(AttributeValue::M(map)) => Manifest::from_attr(&map).map(|manifest| Chunked {
            state: State::Stored(manifest),
            encoded: OnceLock::new(),
        }),
        Some(other) => Err(DecodeErrorKind::WrongType {
            expected: "B or M",
            found: crate::codec::type_name(&other),
        }),
        None => Err(DecodeErrorKind::Missing),
    }
}

/// Refuses a write that cannot follow the chunk protocol (a batch write, a transaction)
/// for an entity with chunked fields.
pub(crate) fn refuse(
    entity: &'static str,
    chunked: &[ChunkedField],
    operation: &str,
) -> Result<(), Error> {
    if chunked.is_empty() {
        return Ok(());
    }
    Err(Error::invalid(
        entity,
        crate::ValidationReason::NotSupportedInBatch,
        format!(
            "{entity} has chunked fields, written by db.put and removed by db.delete (new chunks, then the item conditionally, then the old chunks); a {operation} cannot follow that protocol"
        ),
    ))
}

/// What [`Db::collect_orphans`] found and removed.
///
/// [`Db::collect_orphans`]: crate::Db::collect_orphans
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Orphans {
    /// Chunk items examined (old enough to be judged).
    pub examined: usize,
    /// Chunk items deleted: no item names their write any more.
    pub deleted: usize,
    /// Chunk items kept: their item names them.
    pub kept: usize,
    /// Chunk items kept although their item no longer names them: another item does (a
    /// copy of their item made outside the crate, under another key), and would be
    /// unreadable without them. See "Copies" in the module documentation.
    pub named_by_others: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const PLAIN: ChunkedField = ChunkedField {
        attribute: "body",
        inline: DEFAULT_INLINE,
        chunk_size: DEFAULT_CHUNK_SIZE,
        compression: None,
    };

    const PACKED: ChunkedField = ChunkedField {
        compression: Some(&crate::compress::Compression::new(
            crate::compress::Codec::Zstd { level: 3 },
        )),
        ..PLAIN
    };

    #[test]
    fn a_manifest_round_trips_and_bad_ones_are_refused() {
        let m = Manifest {
            token: "abc".into(),
            chunks: 3,
            len: 1_000_000,
            crc: 42,
        };
        let AttributeValue::M(map) = m.to_attr() else {
            panic!("a map");
        };
        assert_eq!(Manifest::from_attr(&map), Ok(m));
        let mut bad = map.clone();
        bad.insert("t".into(), AttributeValue::S("a#b".into()));
        assert!(Manifest::from_attr(&bad).is_err());
        let mut bad = map.clone();
        bad.remove("crc");
        assert!(Manifest::from_attr(&bad).is_err());
        // Counts and lengths no write makes.
        for (n, len) in [
            ("0", "0"),
            ("4000000000", "1000000000000000000"),
            ("2", "1"),
        ] {
            let mut bad = map.clone();
            bad.insert("n".into(), AttributeValue::N(n.into()));
            bad.insert("len".into(), AttributeValue::N(len.into()));
            assert!(Manifest::from_attr(&bad).is_err(), "n {n}, len {len}");
        }
    }

    proptest! {
        #[test]
        fn values_round_trip_through_their_encoding(bytes in proptest::collection::vec(any::<u8>(), 0..2000), text in ".{0,200}") {
            prop_assert_eq!(decode::<Vec<u8>>(&encode(&bytes, &PLAIN), &PLAIN), Ok(bytes));
            prop_assert_eq!(decode::<String>(&encode(&text, &PLAIN), &PLAIN), Ok(text));
        }

        /// Decoding never panics, whatever the bytes.
        #[test]
        fn decoding_anything_never_panics(
            tag in 0u8..4,
            rest in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let mut bytes = vec![tag];
            bytes.extend(rest);
            for field in [&PLAIN, &PACKED] {
                let _ = decode::<String>(&bytes, field);
                let _ = decode::<Vec<u8>>(&bytes, field);
                let _ = decode::<String>(&bytes[1..], field);
            }
        }
    }
}
