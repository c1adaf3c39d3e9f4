//! The soak's table and entity types: one per feature the workload drives. Every key
//! names the worker that owns it (`w3-…`), so each item has one writer and the model of
//! its state is exact; only the counters are shared, by their worker and the background
//! migration.

use dynamo_model::{Chunked, Entity, Table};

/// The one table of a soak run.
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
pub struct Soak;

/// A profile read through the cache and written by single-item puts, updates and
/// deletes, optimistic-locked by its version.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Soak, pk = "PROFILE#{id}", sk = "PROFILE")]
pub struct Profile {
    pub id: String,
    pub name: String,
    pub visits: u64,
    #[dynamo(version)]
    pub version: u64,
}

/// A value in chunks, compressed first: small thresholds, so a few kilobytes of noise
/// take several chunk items while a repetitive value compresses to an inline one.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Soak, pk = "BLOB#{id}", sk = "BLOB")]
pub struct Blob {
    pub id: String,
    #[dynamo(chunked(inline = 64, chunk_size = 1024), compress = "zstd")]
    pub data: Chunked<Vec<u8>>,
}

/// A document with history: every write adds a revision beside the latest copy.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Soak, pk = "DOC#{id}", sk = "DOC", history)]
pub struct Doc {
    pub id: String,
    pub body: String,
    #[dynamo(version)]
    pub version: u64,
}

/// An account money moves between in transactions; read through the cache.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Soak, pk = "ACCT#{id}", sk = "ACCT")]
pub struct Account {
    pub id: String,
    pub balance: i64,
    pub transfers: u64,
}

/// An event in a sharded partition (eight partitions per owner), written in batches
/// and read back by key in batches and by a scatter query over the shards.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Soak, pk = "EV#{owner}#{id:shard(8)}", sk = "EV#{id}")]
pub struct Event {
    pub owner: String,
    pub id: String,
    pub payload: String,
}

/// A counter the background migration adds one to (`n`) while its worker adds to
/// `hits`: all counters in one partition, which the migration reads page by page.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Soak, pk = "CTR", sk = "C#{id}")]
pub struct Counter {
    pub id: u32,
    pub n: u64,
    pub hits: u64,
}
