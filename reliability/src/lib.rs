//! The table, entities and raw-table helpers the reliability harnesses share (the crash
//! harness, `src/bin/crash`; the soak, `src/bin/soak`; the load run, `src/bin/load`), and
//! the fuzz targets (`fuzz`, run by the AFL++ binaries of `fuzz/`). Not a library for
//! users: evidence for `RELIABILITY.md`.

pub mod fuzz;

use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::{Chunked, Db, Entity, Item, Table};

/// A boxed error: what the harnesses return.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// A result with a [`BoxError`].
pub type Res<T> = Result<T, BoxError>;

/// The table every protocol runs on.
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
pub struct Rig;

/// A value in chunks: small thresholds, so a few kilobytes take several chunk items
/// and a put several requests.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Rig, pk = "BLOB#{id}", sk = "BLOB")]
pub struct Blob {
    pub id: String,
    pub label: String,
    #[dynamo(chunked(inline = 16, chunk_size = 1024))]
    pub data: Chunked<Vec<u8>>,
}

/// An account the transfers move money between.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Rig, pk = "ACCT#{id}", sk = "ACCT")]
pub struct Account {
    pub id: String,
    pub balance: i64,
    pub transfers: u32,
}

/// A document with history: each write adds a revision item beside the latest copy.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Rig, pk = "DOC#{id}", sk = "DOC", history)]
pub struct Doc {
    pub id: String,
    pub body: String,
    #[dynamo(version)]
    pub version: u64,
}

/// A counter a migration adds one to.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Rig, pk = "CTR#{id}", sk = "CTR")]
pub struct Counter {
    pub id: u32,
    pub n: u64,
}

/// A row of a bulk load.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Rig, pk = "ROW#{n}", sk = "ROW")]
pub struct Row {
    pub n: u32,
    pub payload: String,
}

/// One hot item under optimistic locking: writers read it, add one to `n` and put it back
/// at the version they read.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Rig, pk = "TALLY#{id}", sk = "TALLY")]
pub struct Tally {
    pub id: String,
    pub n: u64,
    #[dynamo(version)]
    pub version: u64,
}

/// One hot item with history: each revision adds one to `n` and names its writer, so
/// revision `k` holds `n = k - 1` when no update was lost.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Rig, pk = "LEDGER#{id}", sk = "LEDGER", history)]
pub struct Ledger {
    pub id: String,
    pub n: u64,
    /// The writer step that wrote this revision (`w{writer}-{step}`).
    pub writer: String,
    #[dynamo(version)]
    pub version: u64,
}

/// An event of a hot partition spread over 16 shards by its id.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Rig, pk = "EV#{run}#{id:shard(16)}", sk = "EV#{id}")]
pub struct Event {
    pub run: u32,
    pub id: u64,
    pub payload: String,
}

/// An item no protocol writes: every check asks that it is still there, unchanged.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Rig, pk = "BYSTANDER", sk = "BYSTANDER")]
pub struct Bystander {
    pub note: String,
}

impl Bystander {
    /// The one bystander of a table.
    pub fn sample() -> Self {
        Bystander {
            note: "written before the protocol; nothing may touch it".into(),
        }
    }
}

/// `n` deterministic bytes of pattern `seed`.
pub fn bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..n).map(|_| rng.u8(..)).collect()
}

/// Every item of the table, as stored (a consistent scan, every page).
pub async fn raw_items(db: &Db<Rig>) -> Res<Vec<Item>> {
    let mut items = Vec::new();
    let mut start = None;
    loop {
        let page = db
            .client()
            .scan()
            .table_name(db.table_name())
            .consistent_read(true)
            .set_exclusive_start_key(start)
            .send()
            .await?;
        items.extend(page.items.unwrap_or_default());
        start = page.last_evaluated_key;
        if start.is_none() {
            return Ok(items);
        }
    }
}

/// The string attribute `name` of `item`.
pub fn text<'i>(item: &'i Item, name: &str) -> Option<&'i str> {
    item.get(name)
        .and_then(|v| v.as_s().ok())
        .map(String::as_str)
}

/// Whether `item` is a chunk item (the chunk protocol's, `stored_format`).
pub fn is_chunk(item: &Item) -> bool {
    text(item, "_type") == Some("_chunk")
}

/// Ages every chunk item by an hour (its `_ct` written time), as if the sweep ran an hour
/// later: `collect_orphans` spares chunks younger than ten minutes.
pub async fn age_chunks(db: &Db<Rig>) -> Res<()> {
    for item in raw_items(db).await?.into_iter().filter(is_chunk) {
        let written: u64 = item
            .get("_ct")
            .and_then(|v| v.as_n().ok())
            .ok_or("a chunk without its written time")?
            .parse()?;
        let key = ["PK", "SK"].map(|a| (a.to_owned(), item.get(a).cloned()));
        let mut update = db
            .client()
            .update_item()
            .table_name(db.table_name())
            .update_expression("SET #ct = :ct")
            .expression_attribute_names("#ct", "_ct")
            .expression_attribute_values(
                ":ct",
                AttributeValue::N(written.saturating_sub(3_600_000).to_string()),
            );
        for (name, value) in key {
            update = update.key(name, value.ok_or("a chunk without its key")?);
        }
        update.send().await?;
    }
    Ok(())
}

/// The chunk keys the items' manifests name, and the chunk items present, both sorted.
pub async fn named_and_present(db: &Db<Rig>) -> Res<(Vec<String>, Vec<String>)> {
    let items = raw_items(db).await?;
    let mut named = Vec::new();
    for item in &items {
        if let Some(AttributeValue::M(m)) = item.get("data") {
            let token = m.get("t").and_then(|t| t.as_s().ok()).ok_or("token")?;
            let n: u32 = m.get("n").and_then(|n| n.as_n().ok()).ok_or("n")?.parse()?;
            named.extend((0..n).map(|seq| format!("_CHUNK#{token}#{seq:06}")));
        }
    }
    let mut present: Vec<String> = items
        .iter()
        .filter(|i| is_chunk(i))
        .filter_map(|i| text(i, "PK").map(str::to_owned))
        .collect();
    named.sort();
    present.sort();
    Ok((named, present))
}

/// The schema of the period tables (one per month) the period protocol creates and drops:
/// with TTL, so that creating one takes two requests (the table, then its TTL).
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", ttl = "expires")]
pub struct Series;

/// A reading in a period table.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Series, pk = "READING#{n}", sk = "READING")]
pub struct Reading {
    pub n: u32,
    pub value: u64,
}
