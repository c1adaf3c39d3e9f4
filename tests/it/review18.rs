//! Review 18: hostile tests of feature interactions — the read-through cache against
//! every write path (migrations, history, bulk loads, metered clients, raw SDK calls,
//! per-period tables), migrations of sharded entities identified by their keys, tracing
//! of cache hits and history, and scatter-gather over untyped rows.

use crate::common::*;
use crate::spans::{Capture, Captured, Scope};
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::cache::Cache;
use dynamo_model::capacity::Meter;
use dynamo_model::key::computed::shard_of;
use dynamo_model::local;
use dynamo_model::local::faults::{FaultKind, Faults};
use dynamo_model::period::{Period, PeriodTables};
use dynamo_model::{Db, Entity, Item, Table};
use std::collections::BTreeMap;
use std::time::Duration;
use time::macros::datetime;
use time::OffsetDateTime;

/// Its own table type: key templates are registered per table type.
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
pub struct R18;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = R18, pk = "HOT#{id}", sk = "HOT")]
pub struct Hot {
    pub id: String,
    pub v: String,
    #[dynamo(default)]
    pub n: u64,
}

fn hot(id: &str, v: &str) -> Hot {
    Hot {
        id: id.into(),
        v: v.into(),
        n: 0,
    }
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = R18, pk = "DOC#{id}", sk = "DOC", versioned)]
pub struct Doc {
    pub id: String,
    pub title: String,
    #[dynamo(version)]
    pub version: u64,
}

/// Readings another program writes (no entity type), sharded by id, bucketed by day.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = R18, identify = "keys", delimiter = "_",
         pk = "RD_{id:shard(16)}", sk = "{at:date}_{id}")]
pub struct Reading {
    pub id: String,
    pub at: OffsetDateTime,
    pub value: u64,
}

/// Untyped rows identified by keys, over shards, for scatter-gather.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = R18, identify = "keys", store_key_fields = false,
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
#[dynamo(table = R18, identify = "keys", store_key_fields = false, delimiter = "_",
         pk = "SH_{id:shard(8)}", sk = "X_{id}")]
pub struct Slim {
    pub id: String,
    pub v: u64,
}

/// A table with an index, for sharded index keys.
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
pub struct R18i;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = R18i, pk = "TIX#{id}", sk = "TIX",
         index(GSI1, pk = "Q#{queue}#{owner:shard(4)}", sk = "{id}"))]
pub struct Tix {
    pub id: String,
    pub queue: String,
    pub owner: String,
}

/// An entity with a chunked field: never answered from the cache.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = R18, pk = "BIG#{id}", sk = "BIG")]
pub struct Big {
    pub id: String,
    pub small: String,
    #[dynamo(chunked(inline = 16, chunk_size = 1024))]
    pub body: dynamo_model::Chunked<String>,
}

fn name_of(found: Option<Hot>) -> Option<String> {
    found.map(|h| h.v)
}

async fn fetch(db: &Db<R18>, id: &str) -> Res<Option<String>> {
    Ok(name_of(db.get(Hot::key(id)).await?))
}

fn keeps_hot() -> Cache {
    Cache::builder().entity::<Hot>().entity::<Doc>().build()
}

// ------------------------------------------------------------------ cache × writes

/// A migration sent through a `Db` sharing the cache (its raw `UpdateItem`s) removes the
/// items it changes: a get right after reads the migrated item.
#[tokio::test]
async fn a_migration_through_the_cache_invalidates_what_it_changes() -> TestResult {
    let db = local::fresh_table::<R18>().await?;
    let cache = keeps_hot();
    let cached = db.with_cache(&cache);
    for i in 0..5 {
        cached.put(&hot(&format!("m{i}"), "before")).await?;
        assert_eq!(
            fetch(&cached, &format!("m{i}")).await?.as_deref(),
            Some("before")
        );
    }
    assert_eq!(fetch(&cached, "m0").await?.as_deref(), Some("before"));
    assert!(cache.stats().hits >= 1);
    let report = cached
        .migration::<Hot>("r18-upper")
        .map(|mut h| {
            h.v = "after".into();
            Some(h)
        })
        .run()
        .await?;
    assert_eq!(report.progress.changed, 5, "{report:?}");
    for i in 0..5 {
        assert_eq!(
            fetch(&cached, &format!("m{i}")).await?.as_deref(),
            Some("after"),
            "m{i} served stale from the cache"
        );
    }
    // A raw attribute step (set_default of an attribute the entity does not declare):
    // the typed value does not change, but the cached items still leave.
    for i in 0..5 {
        fetch(&cached, &format!("m{i}")).await?;
    }
    let before = cache.stats();
    let report = cached
        .migration::<Hot>("r18-default")
        .set_default("legacy", s("x"))
        .run()
        .await?;
    assert_eq!(report.progress.changed, 5, "{report:?}");
    assert_eq!(fetch(&cached, "m3").await?.as_deref(), Some("after"));
    let after = cache.stats();
    assert!(after.invalidations >= before.invalidations + 5, "{after:?}");
    assert_eq!(after.misses, before.misses + 1, "{after:?}");
    let raw = raw_get(&cached, "HOT#m3", "HOT").await?;
    assert_eq!(raw.get("legacy"), Some(&s("x")));
    Ok(())
}

/// A get whose answer arrives late while a migration (through another `Db` sharing the
/// cache) rewrites the item never caches the pre-migration item.
#[tokio::test]
async fn a_get_racing_a_migration_write_never_caches_the_old_item() -> TestResult {
    let db = local::fresh_table::<R18>().await?;
    db.put(&hot("race", "old")).await?;
    let faults = Faults::new(18)
        .rate(1.0)
        .kinds([FaultKind::Delay(Duration::from_millis(500))])
        .operations(["GetItem"]);
    let cache = keeps_hot();
    let slow = faulty(&db, &faults).await?.with_cache(&cache);
    let migrator = db.with_cache(&cache);
    let get = tokio::spawn({
        let slow = slow.clone();
        async move { slow.get(Hot::key("race")).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let report = migrator
        .migration::<Hot>("r18-race")
        .map(|mut h| {
            h.v = "new".into();
            Some(h)
        })
        .run()
        .await?;
    assert_eq!(report.progress.changed, 1, "{report:?}");
    let raced = get.await??.ok_or("missing")?;
    assert_eq!(raced.v, "old", "the get read before the migration");
    assert_eq!(fetch(&migrator, "race").await?.as_deref(), Some("new"));
    Ok(())
}

/// History writes (create, revise, restore, delete_all) through a `Db` sharing the cache
/// leave no stale latest copy behind.
#[tokio::test]
async fn history_writes_invalidate_the_latest_copy() -> TestResult {
    let db = local::fresh_table::<R18>().await?;
    let cache = keeps_hot();
    let cached = db.with_cache(&cache);
    let versions = cached.versions::<Doc>();
    let title = |db: Db<R18>| async move {
        Ok::<_, dynamo_model::Error>(db.get(Doc::key("d")).await?.map(|d| d.title))
    };
    versions
        .create(&Doc {
            id: "d".into(),
            title: "t1".into(),
            version: 0,
        })
        .await?;
    assert_eq!(title(cached.clone()).await?.as_deref(), Some("t1"));
    assert_eq!(title(cached.clone()).await?.as_deref(), Some("t1"));
    let hits = cache.stats().hits;
    assert!(hits >= 1);
    versions
        .revise(Doc::key("d"), |d| d.title = "t2".into())
        .await?;
    assert_eq!(
        title(cached.clone()).await?.as_deref(),
        Some("t2"),
        "revise"
    );
    versions.restore(Doc::key("d"), 1).await?;
    assert_eq!(
        title(cached.clone()).await?.as_deref(),
        Some("t1"),
        "restore"
    );
    versions.delete_all(Doc::key("d")).await?;
    assert_eq!(title(cached.clone()).await?, None, "delete_all");
    Ok(())
}

/// Bulk loads, deletes returning the old item, raw SDK writes through the cached client,
/// and a metered `Db` made from a cached one (or the reverse) all invalidate.
#[tokio::test]
async fn bulk_loads_return_old_deletes_raw_and_metered_writes_invalidate() -> TestResult {
    let db = local::fresh_table::<R18>().await?;
    let cache = keeps_hot();
    let cached = db.with_cache(&cache);
    cached.put(&hot("b", "v1")).await?;
    assert_eq!(fetch(&cached, "b").await?.as_deref(), Some("v1"));
    cached.bulk_load().put(&hot("b", "v2")).send().await?;
    assert_eq!(
        fetch(&cached, "b").await?.as_deref(),
        Some("v2"),
        "bulk load"
    );

    let old = cached.delete(Hot::key("b")).return_old().await?;
    assert_eq!(name_of(old).as_deref(), Some("v2"));
    assert_eq!(fetch(&cached, "b").await?, None, "delete returning old");

    cached.put(&hot("b", "v3")).await?;
    assert_eq!(fetch(&cached, "b").await?.as_deref(), Some("v3"));
    cached
        .client()
        .update_item()
        .table_name(cached.table_name())
        .set_key(Some(raw_key("HOT#b", "HOT")))
        .update_expression("SET v = :v")
        .expression_attribute_values(":v", s("raw"))
        .send()
        .await?;
    assert_eq!(
        fetch(&cached, "b").await?.as_deref(),
        Some("raw"),
        "raw SDK"
    );

    let meter = Meter::new();
    let metered = cached.metered(&meter);
    metered.put(&hot("b", "v4")).await?;
    assert_eq!(fetch(&cached, "b").await?.as_deref(), Some("v4"), "metered");
    let reverse = db.metered(&meter).with_cache(&cache);
    assert_eq!(fetch(&reverse, "b").await?.as_deref(), Some("v4"));
    reverse.put(&hot("b", "v5")).await?;
    assert_eq!(
        fetch(&cached, "b").await?.as_deref(),
        Some("v5"),
        "metered first"
    );
    assert_eq!(fetch(&metered, "b").await?.as_deref(), Some("v5"));
    Ok(())
}

/// PartiQL writes (`ExecuteStatement`, `BatchExecuteStatement`, `ExecuteTransaction`)
/// sent through the cached client are writes of this client too.
#[tokio::test]
async fn partiql_writes_through_the_cached_client_invalidate() -> TestResult {
    let db = local::fresh_table::<R18>().await?;
    let cache = keeps_hot();
    let cached = db.with_cache(&cache);
    cached.put(&hot("p", "v1")).await?;
    assert_eq!(fetch(&cached, "p").await?.as_deref(), Some("v1"));
    cached
        .client()
        .execute_statement()
        .statement(format!(
            "UPDATE \"{}\" SET v = 'partiql' WHERE PK = 'HOT#p' AND SK = 'HOT'",
            cached.table_name()
        ))
        .send()
        .await?;
    let stored = raw_get(&cached, "HOT#p", "HOT").await?;
    assert_eq!(stored.get("v"), Some(&s("partiql")), "DynamoDB applied it");
    assert_eq!(
        fetch(&cached, "p").await?.as_deref(),
        Some("partiql"),
        "the cached get still serves the item from before this client's own write"
    );
    Ok(())
}

/// Per-period tables made from a cached `Db`: each period's table is its own slot, and
/// writes to one period's table invalidate that table's item only.
#[tokio::test]
async fn period_tables_share_the_cache_per_table() -> TestResult {
    let client = local::client().await?;
    let prefix = local::unique_table_name("r18").replace('-', "_");
    let cache = keeps_hot();
    let template = Db::<R18>::new(client, prefix.as_str()).with_cache(&cache);
    let tables = PeriodTables::new(&template, Period::Month)?;
    let sept = datetime!(2026-09-15 10:00 UTC);
    let oct = datetime!(2026-10-15 10:00 UTC);
    let created = tables.create_ahead(sept, 1).await?;
    let result = async {
        let (a, b) = (tables.db_at(sept), tables.db_at(oct));
        a.put(&hot("k", "sept")).await?;
        b.put(&hot("k", "oct")).await?;
        assert_eq!(fetch(&a, "k").await?.as_deref(), Some("sept"));
        assert_eq!(fetch(&b, "k").await?.as_deref(), Some("oct"));
        let hits = cache.stats().hits;
        assert_eq!(fetch(&a, "k").await?.as_deref(), Some("sept"));
        assert_eq!(cache.stats().hits, hits + 1);
        b.update(Hot::key("k"))
            .set(Hot::fields().v, "oct2".to_owned())
            .await?;
        assert_eq!(fetch(&b, "k").await?.as_deref(), Some("oct2"));
        assert_eq!(fetch(&a, "k").await?.as_deref(), Some("sept"));
        // A migration of one period's table.
        let report = a
            .migration::<Hot>("r18-period")
            .map(|mut h| {
                h.v.push_str("-m");
                Some(h)
            })
            .run()
            .await?;
        assert_eq!(report.progress.changed, 1);
        assert_eq!(fetch(&a, "k").await?.as_deref(), Some("sept-m"));
        assert_eq!(fetch(&b, "k").await?.as_deref(), Some("oct2"));
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
    }
    .await;
    for table in &created {
        let _ = tables.db(table).delete_table().await;
    }
    result
}

// ------------------------------------------------------------------ migrations × computed keys

fn reading(id: &str, value: u64) -> Reading {
    Reading {
        id: id.into(),
        at: datetime!(2014-07-09 13:14:15 UTC),
        value,
    }
}

/// The item another program would write: keys and fields, no entity type.
fn foreign(r: &Reading) -> Res<Item> {
    let raw = r.primary_key().raw()?.clone();
    let mut item = Item::new();
    item.insert("PK".into(), s(&raw.pk));
    item.insert("SK".into(), s(raw.sk.as_deref().ok_or("no sk")?));
    item.insert("id".into(), s(&r.id));
    item.insert(
        "at".into(),
        s(&r.at
            .format(&time::format_description::well_known::Rfc3339)?),
    );
    item.insert("value".into(), n(r.value));
    Ok(item)
}

/// A migration of a sharded, day-bucketed entity identified by its keys finds every
/// item over every shard and changes each once; an item whose shard does not match its
/// id (forged) and rows of other shapes are left alone.
#[tokio::test]
async fn a_migration_of_a_sharded_untyped_entity_changes_every_real_item_only() -> TestResult {
    let db = local::fresh_table::<R18>().await?;
    let ids: Vec<String> = (0..24).map(|i| format!("r-{i}")).collect();
    let mut shards = std::collections::BTreeSet::new();
    for (i, id) in ids.iter().enumerate() {
        shards.insert(shard_of(id, 16));
        put_raw(&db, foreign(&reading(id, i as u64))?).await?;
    }
    assert!(shards.len() > 4, "spread over shards: {shards:?}");
    // Forged: the item of r-0 under the partition of an id of another shard.
    let other = ids
        .iter()
        .find(|id| shard_of(id, 16) != shard_of("r-0", 16))
        .ok_or("no other shard")?;
    let mut forged = foreign(&reading("r-0", 1000))?;
    let other_pk = reading(other, 0).primary_key().raw()?.pk.clone();
    forged.insert("PK".into(), s(&other_pk));
    put_raw(&db, forged.clone()).await?;
    // Not a reading: another shape in a readings partition.
    let mut meta = Item::new();
    meta.insert("PK".into(), s(&other_pk));
    meta.insert("SK".into(), s("META"));
    meta.insert("value".into(), n(7));
    put_raw(&db, meta.clone()).await?;

    let report = db
        .migration::<Reading>("r18-shards")
        .map(|mut r| {
            r.value += 1_000_000;
            Some(r)
        })
        .run()
        .await?;
    assert_eq!(report.progress.changed, ids.len() as u64, "{report:?}");
    for (i, id) in ids.iter().enumerate() {
        let got = db
            .get(reading(id, 0).primary_key())
            .await?
            .ok_or_else(|| format!("{id} missing"))?;
        assert_eq!(got.value, i as u64 + 1_000_000, "{id}");
    }
    let forged_now = raw_get(&db, &other_pk, forged["SK"].as_s().map_err(|_| "sk")?).await?;
    assert_eq!(forged_now, forged, "the forged item was changed");
    let meta_now = raw_get(&db, &other_pk, "META").await?;
    assert_eq!(meta_now, meta);
    // Run again: a map with its marker does nothing more.
    let again = db
        .migration::<Reading>("r18-shards")
        .map(|mut r| {
            r.value += 1_000_000;
            Some(r)
        })
        .run()
        .await?;
    assert_eq!(again.progress.changed, 0, "{again:?}");
    Ok(())
}

/// A rewrite of the same sharded entity adds the entity type to every real item, and a
/// migration of one shard's partition changes only that shard.
#[tokio::test]
async fn a_partition_migration_of_one_shard_changes_only_it() -> TestResult {
    let db = local::fresh_table::<R18>().await?;
    let ids: Vec<String> = (0..16).map(|i| format!("p-{i}")).collect();
    for id in &ids {
        put_raw(&db, foreign(&reading(id, 1))?).await?;
    }
    let target = shard_of(&ids[0], 16);
    let partition = Reading::partition().shard(target);
    let report = db
        .migration::<Reading>("r18-one-shard")
        .partition(partition)
        .map(|mut r| {
            r.value = 2;
            Some(r)
        })
        .run()
        .await?;
    let expected = ids.iter().filter(|id| shard_of(id, 16) == target).count() as u64;
    assert_eq!(report.progress.changed, expected, "{report:?}");
    for id in &ids {
        let got = db.get(reading(id, 0).primary_key()).await?.ok_or("gone")?;
        let want = if shard_of(id, 16) == target { 2 } else { 1 };
        assert_eq!(got.value, want, "{id}");
    }
    Ok(())
}

// ------------------------------------------------------------------ tracing × cache, history

fn capture() -> (Capture, Scope) {
    let scope = Scope::begin();
    (scope.capture.clone(), scope)
}

fn field<'a>(span: &'a Captured, name: &str) -> &'a str {
    span.fields
        .get(name)
        .map(String::as_str)
        .unwrap_or("<absent>")
}

/// A cache hit is still an operation with its span, counting the item, and records the
/// key only with `trace_keys`; it sends no request.
#[tokio::test]
async fn a_cache_hit_has_a_span_and_records_keys_only_when_asked() -> TestResult {
    let (cap, _guard) = capture();
    let db = local::fresh_table::<R18>().await?;
    let cache = keeps_hot();
    let cached = db.with_cache(&cache);
    cached.put(&hot("tr-SECRETKEY", "v")).await?;
    cap.clear();
    cached.get(Hot::key("tr-SECRETKEY")).await?;
    cached.get(Hot::key("tr-SECRETKEY")).await?;
    assert_eq!(cache.stats().hits, 1);
    let ops = cap.operations("GetItem");
    assert_eq!(ops.len(), 2, "{:?}", cap.spans());
    for (_, span) in &ops {
        assert_eq!(field(span, "dynamo_model.items"), "1", "{span:?}");
        assert_eq!(field(span, "dynamo_model.key"), "<absent>", "{span:?}");
    }
    assert!(
        !cap.everything().iter().any(|v| v.contains("SECRETKEY")),
        "a key leaked without trace_keys"
    );
    cap.clear();
    let keyed = cached.clone().trace_keys(true);
    keyed.get(Hot::key("tr-SECRETKEY")).await?;
    let ops = cap.operations("GetItem");
    let (_, span) = ops.first().ok_or("no span")?;
    assert!(
        field(span, "dynamo_model.key").contains("HOT#tr-SECRETKEY"),
        "{span:?}"
    );
    assert_eq!(cache.stats().hits, 2, "a hit again");
    Ok(())
}

/// A cache miss reads strongly consistently (to fill the cache): its span must not claim
/// an eventually consistent read, or capacity in traces looks doubled for no reason.
#[tokio::test]
async fn a_cache_miss_span_reports_the_consistent_read_it_sent() -> TestResult {
    let (cap, _guard) = capture();
    let db = local::fresh_table::<R18>().await?;
    let cache = keeps_hot();
    let cached = db.with_cache(&cache);
    cached.put(&hot("cm", "v")).await?;
    cap.clear();
    cached.get(Hot::key("cm")).await?;
    let ops = cap.operations("GetItem");
    let (_, span) = ops.first().ok_or("no span")?;
    assert_eq!(cache.stats().misses, 1);
    assert_eq!(
        field(span, "aws.dynamodb.consistent_read"),
        "true",
        "the miss sent ConsistentRead=true: {span:?}"
    );
    Ok(())
}

/// History operations have spans that never record keys or values without trace_keys.
#[tokio::test]
async fn history_spans_record_no_keys_without_trace_keys() -> TestResult {
    let (cap, _guard) = capture();
    let db = local::fresh_table::<R18>().await?;
    let versions = db.versions::<Doc>();
    versions
        .create(&Doc {
            id: "SECRETDOC".into(),
            title: "SECRETTITLE".into(),
            version: 0,
        })
        .await?;
    versions
        .revise(Doc::key("SECRETDOC"), |d| d.title = "SECRETTITLE2".into())
        .await?;
    let _ = versions.revision(Doc::key("SECRETDOC"), 1).await?;
    versions.delete_all(Doc::key("SECRETDOC")).await?;
    assert!(!cap.spans().is_empty(), "history writes are traced");
    let leaked: Vec<String> = cap
        .everything()
        .into_iter()
        .filter(|v| v.contains("SECRET"))
        .collect();
    assert!(leaked.is_empty(), "{leaked:?}");
    Ok(())
}

// ------------------------------------------------------------------ scatter × untyped rows

fn tick_row(shard: u8, n: u32, tag: u8) -> Item {
    Item::from([
        ("PK".to_owned(), s(&format!("TK#{shard}"))),
        ("SK".to_owned(), s(&format!("N#{n:04}"))),
        ("tag".to_owned(), AttributeValue::N(tag.to_string())),
    ])
}

/// Scatter-gather over rows another program wrote (no entity type, fields in the keys),
/// with a filter and a small page size, read page by page through cursors: every matching
/// row exactly once, in sort-key order, foreign rows skipped.
#[tokio::test]
async fn scatter_over_untyped_rows_with_filter_and_cursors() -> TestResult {
    let db = local::fresh_table::<R18>().await?;
    let mut expected: BTreeMap<(u32, u8), u8> = BTreeMap::new();
    for shard in 0..4u8 {
        for i in 0..15u32 {
            let n = i * 4 + u32::from(shard);
            let tag = ((n * 7) % 3) as u8;
            put_raw(&db, tick_row(shard, n, tag)).await?;
            if tag == 1 {
                expected.insert((n, shard), tag);
            }
        }
        // A row of another shape in the same partition.
        put_raw(
            &db,
            Item::from([
                ("PK".to_owned(), s(&format!("TK#{shard}"))),
                ("SK".to_owned(), s("N#meta")),
                ("tag".to_owned(), n(1)),
            ]),
        )
        .await?;
    }
    let f = Tick::fields();
    let q = || {
        db.scatter_query((0..4u8).map(Tick::partition))
            .filter(f.tag.eq(1u8))
            .page_size(3)
            .limit(5)
    };
    let mut got = Vec::new();
    let mut cursor = None;
    for _ in 0..100 {
        let page = q().page(cursor.as_ref()).await?;
        assert!(page.items.len() <= 5);
        got.extend(page.items.iter().map(|t| (t.n, t.shard, t.tag)));
        cursor = page.cursor;
        if cursor.is_none() {
            break;
        }
    }
    let want: Vec<(u32, u8, u8)> = expected.iter().map(|(&(n, s), &t)| (n, s, t)).collect();
    assert_eq!(got, want);
    // And in one read, without a limit.
    let all = db
        .scatter_query((0..4u8).map(Tick::partition))
        .filter(f.tag.eq(1u8))
        .page_size(3)
        .all()
        .await?
        .items;
    let all: Vec<(u32, u8, u8)> = all.iter().map(|t| (t.n, t.shard, t.tag)).collect();
    assert_eq!(all, want);
    Ok(())
}

/// A rewrite in parallel segments of the sharded, day-bucketed entity identified by its
/// keys: every real item gains its entity type (and stays readable); an item whose shard
/// or whose day bucket does not match its fields is reported and left as it is.
#[tokio::test]
async fn a_segmented_rewrite_types_real_items_and_leaves_forged_buckets_alone() -> TestResult {
    let db = local::fresh_table::<R18>().await?;
    let ids: Vec<String> = (0..20).map(|i| format!("w-{i}")).collect();
    for (i, id) in ids.iter().enumerate() {
        put_raw(&db, foreign(&reading(id, i as u64))?).await?;
    }
    // The day bucket says the 10th, the field the 9th.
    let mut next_day = reading("w-0", 0);
    next_day.at = datetime!(2014-07-10 01:00 UTC);
    let mut bad_day = foreign(&reading("w-bucket", 5))?;
    let bucket_key = {
        let mut r = next_day.clone();
        r.id = "w-bucket".into();
        r.primary_key().raw()?.clone()
    };
    bad_day.insert("PK".into(), s(&bucket_key.pk));
    bad_day.insert("SK".into(), s(bucket_key.sk.as_deref().ok_or("sk")?));
    put_raw(&db, bad_day.clone()).await?;
    // The shard of another id.
    let other = ids
        .iter()
        .find(|id| shard_of(id, 16) != shard_of("w-shard", 16))
        .ok_or("no other shard")?;
    let mut bad_shard = foreign(&reading("w-shard", 6))?;
    let other_pk = reading(other, 0).primary_key().raw()?.pk.clone();
    bad_shard.insert("PK".into(), s(&other_pk));
    put_raw(&db, bad_shard.clone()).await?;

    let report = db
        .migration::<Reading>("r18-rewrite")
        .rewrite()
        .segments(4)
        .run()
        .await?;
    assert_eq!(report.progress.changed, ids.len() as u64, "{report:?}");
    for id in &ids {
        let raw = reading(id, 0).primary_key().raw()?.clone();
        let item = raw_get(&db, &raw.pk, raw.sk.as_deref().ok_or("sk")?).await?;
        assert!(
            item.values().any(|v| v == &s("Reading")),
            "{id} not typed: {item:?}"
        );
    }
    for forged in [&bad_day, &bad_shard] {
        let now = raw_get(
            &db,
            forged["PK"].as_s().map_err(|_| "pk")?,
            forged["SK"].as_s().map_err(|_| "sk")?,
        )
        .await?;
        assert_eq!(&now, forged, "a forged item was rewritten");
    }
    Ok(())
}

/// Keys-only scatter over untyped rows, hydrated page by page through cursors: the
/// typed items, every row once, in order.
#[tokio::test]
async fn hydrated_scatter_over_untyped_rows_pages_through_cursors() -> TestResult {
    let db = local::fresh_table::<R18>().await?;
    let mut want = Vec::new();
    for shard in 0..3u8 {
        for i in 0..7u32 {
            let n = i * 3 + u32::from(shard);
            put_raw(&db, tick_row(shard, n, (n % 2) as u8)).await?;
            want.push((n, shard, (n % 2) as u8));
        }
    }
    want.sort();
    let q = || {
        db.scatter_query((0..3u8).map(Tick::partition))
            .keys_only()
            .limit(4)
    };
    let mut got = Vec::new();
    let mut cursor = None;
    for _ in 0..50 {
        let page = q().hydrate(cursor.as_ref()).await?;
        got.extend(page.items.iter().map(|t: &Tick| (t.n, t.shard, t.tag)));
        cursor = page.cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(got, want);
    Ok(())
}

/// An untyped row whose fields live only in its keys, stored under a shard that does not
/// match the id its sort key gives: never read as the entity (not by a query of its shard,
/// not by scatter-gather), and never touched by a migration.
#[tokio::test]
async fn a_forged_shard_of_a_keys_only_row_is_never_decoded_nor_migrated() -> TestResult {
    let db = local::fresh_table::<R18>().await?;
    let real = Slim {
        id: "s-1".into(),
        v: 1,
    };
    let raw = real.primary_key().raw()?.clone();
    let sk = raw.sk.clone().ok_or("sk")?;
    let other = (0..100)
        .map(|i| format!("o-{i}"))
        .find(|id| shard_of(id, 8) != shard_of("s-1", 8))
        .ok_or("shard")?;
    let good_pk = raw.pk.clone();
    let bad_pk = Slim { id: other, v: 0 }.primary_key().raw()?.pk.clone();
    let row = |pk: &str| {
        Item::from([
            ("PK".to_owned(), s(pk)),
            ("SK".to_owned(), s(&sk)),
            ("v".to_owned(), n(1)),
        ])
    };
    put_raw(&db, row(&good_pk)).await?;
    put_raw(&db, row(&bad_pk)).await?;
    // Every shard, scatter-gathered: the forged row is refused as a key mismatch (as a
    // query of its shard refuses it), never returned as the real item.
    let all = db
        .scatter_query((0..8u16).map(|s| Slim::partition().shard(s)))
        .all()
        .await;
    match all {
        Err(dynamo_model::Error::Decode(e)) => {
            assert_eq!(e.attribute.as_deref(), Some("PK"), "{e}");
            assert!(
                matches!(e.kind, dynamo_model::DecodeErrorKind::KeyMismatch { .. }),
                "{e}"
            );
        }
        other => panic!("{other:?}"),
    }
    let good_only = db
        .scatter_query([Slim::partition().shard(shard_of("s-1", 8))])
        .all()
        .await?;
    assert_eq!(good_only.items, vec![real.clone()]);
    let report = db
        .migration::<Slim>("r18-slim")
        .map(|mut x| {
            x.v = 9;
            Some(x)
        })
        .run()
        .await?;
    assert_eq!(report.progress.changed, 1, "{report:?}");
    assert_eq!(
        raw_get(&db, &bad_pk, &sk).await?,
        row(&bad_pk),
        "forged row changed"
    );
    assert_eq!(db.get(Slim::key("s-1")).await?.map(|x| x.v), Some(9));
    Ok(())
}

/// A migration (through a cached `Db`) that changes the source of a sharded index key
/// moves each item to its new index shard, and a rewrite repairs index keys written under
/// an older shard count; cached gets see the new owner.
#[tokio::test]
async fn migrations_recompute_sharded_index_keys() -> TestResult {
    let db = local::fresh_table::<R18i>().await?;
    let cache = Cache::builder().entity::<Tix>().build();
    let cached = db.with_cache(&cache);
    for i in 0..8 {
        cached
            .put(&Tix {
                id: format!("t{i}"),
                queue: "ops".into(),
                owner: "ann".into(),
            })
            .await?;
        cached.get(Tix::key(format!("t{i}"))).await?;
    }
    let new = (0..)
        .map(|i| format!("user-{i}"))
        .find(|a| shard_of(a, 4) != shard_of("ann", 4))
        .ok_or("no other shard")?;
    let to = new.clone();
    let report = cached
        .migration::<Tix>("r18-owner")
        .map(move |mut t| {
            t.owner = to.clone();
            Some(t)
        })
        .run()
        .await?;
    assert_eq!(report.progress.changed, 8, "{report:?}");
    let queue = Tix::gsi1_partition("ops");
    let old = db.query(queue.shard(shard_of("ann", 4))).all().await?.items;
    let moved = db.query(queue.shard(shard_of(&new, 4))).all().await?.items;
    assert!(old.is_empty(), "{old:?}");
    assert_eq!(moved.len(), 8);
    for i in 0..8 {
        let t = cached
            .get(Tix::key(format!("t{i}")))
            .await?
            .ok_or("missing")?;
        assert_eq!(t.owner, new, "t{i} stale in the cache");
    }
    // Index keys of an older template (two shards, another prefix): a rewrite repairs them.
    let mut raw = Tix {
        id: "old".into(),
        queue: "ops".into(),
        owner: "zed".into(),
    }
    .to_item()?;
    raw.insert("GSI1PK".into(), s("QUEUE#ops#1"));
    raw.insert("GSI1SK".into(), s("stale"));
    put_raw(&db, raw).await?;
    let report = db.migration::<Tix>("r18-repair").rewrite().run().await?;
    assert_eq!(report.progress.changed, 1, "{report:?}");
    let now = raw_get(&db, "TIX#old", "TIX").await?;
    assert_eq!(
        now.get("GSI1PK"),
        Some(&s(&format!("Q#ops#{}", shard_of("zed", 4)))),
        "{now:?}"
    );
    assert_eq!(now.get("GSI1SK"), Some(&s("old")), "{now:?}");
    Ok(())
}

/// A cache told to keep an entity with chunked fields (and gets marked `cached()`) never
/// answers for it: writes by another client show at once, chunked puts too.
#[tokio::test]
async fn an_entity_with_chunked_fields_is_never_served_from_the_cache() -> TestResult {
    let db = local::fresh_table::<R18>().await?;
    let cache = Cache::builder().entity::<Big>().build();
    let cached = db.with_cache(&cache);
    let big = |small: &str, body: String| Big {
        id: "b".into(),
        small: small.into(),
        body: body.into(),
    };
    cached.put(&big("v1", "x".repeat(3000))).await?;
    let got = cached.get(Big::key("b")).cached().await?.ok_or("missing")?;
    assert_eq!(got.small, "v1");
    db.put(&big("v2", "y".repeat(5000))).await?; // another client
    let got = cached.get(Big::key("b")).cached().await?.ok_or("missing")?;
    assert_eq!(
        (got.small.as_str(), got.body.get().map(String::len)),
        ("v2", Some(5000))
    );
    let stats = cache.stats();
    assert_eq!((stats.hits, stats.items), (0, 0), "{stats:?}");
    Ok(())
}

/// A bulk load of more items than one `BatchWriteItem` takes (split over requests,
/// interleaved by partition) and a transaction over several keys invalidate every key.
#[tokio::test]
async fn multi_request_bulk_loads_and_multi_key_transactions_invalidate_every_key() -> TestResult {
    let db = local::fresh_table::<R18>().await?;
    let cache = keeps_hot();
    let cached = db.with_cache(&cache);
    let ids: Vec<String> = (0..60).map(|i| format!("bulk-{i}")).collect();
    let first: Vec<Hot> = ids.iter().map(|id| hot(id, "v1")).collect();
    cached.bulk_load().puts(&first).send().await?;
    for id in &ids {
        assert_eq!(fetch(&cached, id).await?.as_deref(), Some("v1"));
    }
    let second: Vec<Hot> = ids.iter().map(|id| hot(id, "v2")).collect();
    cached
        .bulk_load()
        .interleave_partitions()
        .concurrency(3)
        .puts(&second)
        .send()
        .await?;
    for id in &ids {
        assert_eq!(fetch(&cached, id).await?.as_deref(), Some("v2"), "{id}");
    }
    cached
        .transact_write()
        .put(cached.put(&hot("bulk-0", "tx")))
        .delete(cached.delete(Hot::key("bulk-1")))
        .update(
            cached
                .update(Hot::key("bulk-2"))
                .set(Hot::fields().v, "tx-up".to_owned()),
        )
        .send()
        .await?;
    assert_eq!(fetch(&cached, "bulk-0").await?.as_deref(), Some("tx"));
    assert_eq!(fetch(&cached, "bulk-1").await?, None);
    assert_eq!(fetch(&cached, "bulk-2").await?.as_deref(), Some("tx-up"));
    Ok(())
}
