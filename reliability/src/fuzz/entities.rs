//! The entities the fuzz targets decode into: one representative of every kind of field
//! (numbers, sets, maps, nested attributes, serde trees), one per key format and
//! delimiter, and the chunked and compressed fields of each codec.

use crate::Rig;
use dynamo_model::{Attribute, Binary, Chunked, Entity};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use time::{Date, OffsetDateTime, PrimitiveDateTime};

/// A nested map attribute.
#[derive(Attribute, Debug, Clone, PartialEq)]
pub struct Address {
    pub street: String,
    pub zip: Option<u32>,
    pub lines: Vec<String>,
    pub geo: Option<Geo>,
}

/// A map nested in a nested map.
#[derive(Attribute, Debug, Clone, PartialEq)]
pub struct Geo {
    pub lat: f64,
    pub lon: f64,
}

/// An enumeration stored as an attribute.
#[derive(Attribute, Debug, Clone, PartialEq)]
pub enum Status {
    Active,
    Suspended { reason: String, until: Option<u64> },
}

/// A tree of any depth, stored through serde_dynamo.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
pub enum Tree {
    Flag(bool),
    Number(i64),
    Text(String),
    List(Vec<Tree>),
    Map(BTreeMap<String, Tree>),
}

/// The representative entity: a field of every kind the codec reads.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Rig, pk = "PROFILE#{id}", sk = "PROFILE")]
pub struct Profile {
    pub id: String,
    pub name: String,
    pub age: u8,
    pub balance: i64,
    pub total: u64,
    pub big: i128,
    pub score: f64,
    pub active: Option<bool>,
    pub tags: HashSet<String>,
    pub ordered: BTreeSet<String>,
    pub counts: HashMap<String, i64>,
    pub nested: BTreeMap<String, Vec<Option<u32>>>,
    pub address: Option<Address>,
    pub previous: Vec<Address>,
    pub status: Status,
    #[dynamo(serde)]
    pub tree: Option<Tree>,
    pub photo: Binary,
    pub seen: Option<OffsetDateTime>,
    pub born: Option<Date>,
    #[dynamo(version)]
    pub version: u64,
}

/// The attribute names of [`Profile`] and its nested attributes: what the item
/// interpreter names attributes with (or a text of its own).
pub const PROFILE_NAMES: &[&str] = &[
    "PK",
    "SK",
    "_type",
    "id",
    "name",
    "age",
    "balance",
    "total",
    "big",
    "score",
    "active",
    "tags",
    "ordered",
    "counts",
    "nested",
    "address",
    "previous",
    "status",
    "tree",
    "photo",
    "seen",
    "born",
    "version",
    "street",
    "zip",
    "lines",
    "geo",
    "lat",
    "lon",
    "Active",
    "Suspended",
    "reason",
    "until",
];

/// Keys of `#` with the default encodings (escaped strings, padded numbers).
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Rig, store_key_fields = false, pk = "A#{id}", sk = "{n}#{at}#{small}")]
pub struct HashKeys {
    pub id: String,
    pub n: u64,
    pub at: i64,
    pub small: i8,
}

/// Keys of `.` with `unpadded`, `padded(4)` and `verbatim` fields.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Rig, store_key_fields = false, delimiter = ".", pk = "B.{device}", sk = "{seq}.{state}")]
pub struct DotKeys {
    #[dynamo(key_format = "unpadded")]
    pub device: i64,
    #[dynamo(key_format = "padded(4)")]
    pub seq: u32,
    #[dynamo(key_format = "verbatim")]
    pub state: String,
}

/// Keys of `_` with the `rfc3339` formats.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Rig, store_key_fields = false, delimiter = "_", pk = "C_{day}", sk = "{at}_{at_ms}_{local}")]
pub struct UnderscoreKeys {
    pub day: Date,
    #[dynamo(key_format = "rfc3339")]
    pub at: OffsetDateTime,
    #[dynamo(key_format = "rfc3339(3)")]
    pub at_ms: OffsetDateTime,
    #[dynamo(key_format = "rfc3339(0, no_z)")]
    pub local: PrimitiveDateTime,
}

/// Keys of `|` with the epoch formats and a default-encoded instant.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Rig, store_key_fields = false, delimiter = "|", pk = "D|{secs}", sk = "{millis}|{plain}")]
pub struct PipeKeys {
    #[dynamo(key_format = "epoch_seconds")]
    pub secs: OffsetDateTime,
    #[dynamo(key_format = "epoch_millis")]
    pub millis: OffsetDateTime,
    pub plain: OffsetDateTime,
}

/// Keys of `:` with more default encodings (an unsigned byte, a UUID, a string).
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Rig, store_key_fields = false, delimiter = ":", pk = "E:{id}:{name}", sk = "{rank}:{when}")]
pub struct ColonKeys {
    pub id: uuid::Uuid,
    pub name: String,
    #[dynamo(key_format = "padded(3)")]
    pub rank: u16,
    #[dynamo(key_format = "rfc3339(9)")]
    pub when: OffsetDateTime,
}

/// A chunked string, compressed with zstd, and a plain chunked byte string.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Rig, pk = "PACKED#{id}", sk = "PACKED")]
pub struct Packed {
    pub id: String,
    #[dynamo(
        chunked(inline = 64, chunk_size = 1024),
        compress(codec = "zstd", max_size = 65536)
    )]
    pub text: Chunked<String>,
    #[dynamo(chunked(inline = 16, chunk_size = 1024))]
    pub raw: Chunked<Vec<u8>>,
}

/// Compressed fields of both codecs, each read with a small bound.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Rig, pk = "SQUEEZED#{id}", sk = "SQUEEZED")]
pub struct Squeezed {
    pub id: String,
    #[dynamo(compress(codec = "zstd", threshold = 0, max_size = 4096))]
    pub z: Vec<u8>,
    #[dynamo(compress(codec = "gzip", threshold = 0, max_size = 4096))]
    pub g: String,
    #[dynamo(serde, compress(codec = "gzip", threshold = 16, max_size = 4096))]
    pub tree: Option<Tree>,
}

/// The bound of every compressed field of [`Squeezed`].
pub const SQUEEZED_MAX: usize = 4096;
/// The bound of [`Packed::text`].
pub const PACKED_MAX: usize = 65536;
