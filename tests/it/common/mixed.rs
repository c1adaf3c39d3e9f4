//! One table holding typed entities the cache keeps, a versioned one, one with a chunked
//! field and untyped rows identified by their sharded keys, so that each feature's tests
//! run beside the others' rows: the cache against every write path, migrations of sharded
//! entities, scatter-gather over untyped rows, the spans of cache hits and of history.

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::{Entity, Item, Table};
use time::OffsetDateTime;

/// Its own table type: key templates are registered per table type.
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
pub struct Mixed;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Mixed, pk = "HOT#{id}", sk = "HOT")]
pub struct Hot {
    pub id: String,
    pub v: String,
    #[dynamo(default)]
    pub n: u64,
}

pub fn hot(id: &str, v: &str) -> Hot {
    Hot {
        id: id.into(),
        v: v.into(),
        n: 0,
    }
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Mixed, pk = "DOC#{id}", sk = "DOC", history)]
pub struct Doc {
    pub id: String,
    pub title: String,
    #[dynamo(version)]
    pub version: u64,
}

/// Readings another program writes (no entity type), sharded by id, bucketed by day.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Mixed, identify = "keys", delimiter = "_",
         pk = "RD_{id:shard(16)}", sk = "{at:date}_{id}")]
pub struct Reading {
    pub id: String,
    pub at: OffsetDateTime,
    pub value: u64,
}

/// Untyped rows identified by keys, over shards, for scatter-gather.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Mixed, identify = "keys", store_key_fields = false,
         pk = "TK#{shard}", sk = "N#{n}")]
pub struct Tick {
    #[dynamo(key_format = "unpadded")]
    pub shard: u8,
    #[dynamo(key_format = "padded(4)")]
    pub n: u32,
    pub tag: u8,
}

/// Fields only in the keys: the id is read back from the sort key, its shard checked
/// against the partition key.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Mixed, identify = "keys", store_key_fields = false, delimiter = "_",
         pk = "SH_{id:shard(8)}", sk = "X_{id}")]
pub struct Slim {
    pub id: String,
    pub v: u64,
}

pub fn tick_row(shard: u8, n: u32, tag: u8) -> Item {
    Item::from([
        ("PK".to_owned(), s(&format!("TK#{shard}"))),
        ("SK".to_owned(), s(&format!("N#{n:04}"))),
        ("tag".to_owned(), AttributeValue::N(tag.to_string())),
    ])
}

/// A table with an index, for sharded index keys.
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
pub struct Queues;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Queues, pk = "TIX#{id}", sk = "TIX",
         index(GSI1, pk = "Q#{queue}#{owner:shard(4)}", sk = "{id}"))]
pub struct Tix {
    pub id: String,
    pub queue: String,
    pub owner: String,
}

/// An entity with a chunked field: never answered from the cache.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Mixed, pk = "BIG#{id}", sk = "BIG")]
pub struct Big {
    pub id: String,
    pub small: String,
    #[dynamo(chunked(inline = 16, chunk_size = 1024))]
    pub body: dynamo_model::Chunked<String>,
}
