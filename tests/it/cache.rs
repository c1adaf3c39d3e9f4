//! The read-through cache (feature `cache`): hits, bounds, and invalidation by this
//! client's own writes on every write path.

use crate::common::mixed::{hot, Big, Doc, Hot, Mixed};
use crate::common::*;
use dynamo_model::cache::{Cache, CacheBuilder};
use dynamo_model::capacity::Meter;
use dynamo_model::local::faults::{FaultKind, Faults};
use dynamo_model::migrate::Report;
use dynamo_model::period::{Period, PeriodTables};
use dynamo_model::{local, Db, Entity};
use std::time::Duration;
use time::macros::datetime;

fn user(id: &str, name: &str) -> User {
    User {
        user_id: id.into(),
        display_name: name.into(),
        email: None,
        login_count: 0,
        labels: vec![],
    }
}

/// A fresh table, a cache of users configured by `configure`, and a client of the table
/// through that cache.
async fn users_cached(
    configure: impl FnOnce(CacheBuilder) -> CacheBuilder,
) -> Res<(local::TempTable<App>, Cache, Db<App>)> {
    let db = local::fresh_table::<App>().await?;
    let cache = configure(Cache::builder().entity::<User>()).build();
    let cached = db.with_cache(&cache);
    Ok((db, cache, cached))
}

/// The display name of user `id`, read through `db`.
async fn display_name(db: &Db<App>, id: &str) -> Res<String> {
    Ok(db.get(User::key(id)).await?.ok_or("missing")?.display_name)
}

/// Asserts that at most `max` items stay in `cache` once its evictions settle (they are
/// asynchronous in moka), reading user `id` through `cached` while waiting.
async fn assert_at_most_once_settled(
    cache: &Cache,
    cached: &Db<App>,
    max: u64,
    id: &str,
) -> TestResult {
    for _ in 0..50 {
        if cache.stats().items <= max {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        cached.get(User::key(id)).await?;
    }
    assert!(cache.stats().items <= max, "{:?}", cache.stats());
    Ok(())
}

fn gets(faults: &Faults) -> usize {
    faults
        .calls()
        .iter()
        .filter(|c| c.operation == "GetItem")
        .count()
}

#[tokio::test]
async fn hot_items_are_read_once_and_counted() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    db.put(&user("hot", "Hot")).await?;
    db.put(&order_for("hot")).await?;
    let faults = Faults::new(0).record();
    let cache = Cache::builder().entity::<User>().build();
    let cached = faulty(&db, &faults).await?.with_cache(&cache);
    for _ in 0..100 {
        let got = cached.get(User::key("hot")).await?;
        assert_eq!(got.map(|u| u.display_name), Some("Hot".into()));
    }
    assert_eq!(gets(&faults), 1, "one read for 100 gets");
    let stats = cache.stats();
    assert_eq!((stats.hits, stats.misses), (99, 1));
    assert!((stats.hit_rate() - 0.99).abs() < 1e-9);

    // Another entity is cached only when a get asks.
    let key = order_for("hot").primary_key();
    cached.get(key.clone()).await?;
    cached.get(key.clone()).await?;
    assert_eq!(gets(&faults), 3);
    cached.get(key.clone()).cached().await?;
    cached.get(key.clone()).cached().await?;
    assert_eq!(gets(&faults), 4);
    // A consistent read always reads; a missing item is not cached.
    cached.get(User::key("hot")).consistent().await?;
    assert_eq!(gets(&faults), 5);
    assert!(cached.get(User::key("nobody")).await?.is_none());
    assert!(cached.get(User::key("nobody")).await?.is_none());
    assert_eq!(gets(&faults), 7);
    // The same cache on a Db of another table never answers for this one.
    let other = local::fresh_table::<App>().await?;
    let other_cached = faulty(&other, &faults).await?.with_cache(&cache);
    assert!(other_cached.get(User::key("hot")).await?.is_none());
    Ok(())
}

fn order_for(user: &str) -> Order {
    Order {
        user_id: user.into(),
        order_id: uuid::Uuid::from_u128(7),
        created_at: time::OffsetDateTime::UNIX_EPOCH,
        total_cents: 1,
        status: "OPEN".into(),
        note: None,
    }
}

/// Every write path through a `Db` sharing the cache removes the key: a get right after
/// the write reads what the write left.
#[tokio::test]
async fn own_writes_invalidate_on_every_path() -> TestResult {
    let (_db, cache, cached) = users_cached(|b| b).await?;
    let name = |db: Db<App>| async move {
        Ok::<_, dynamo_model::Error>(db.get(User::key("u")).await?.map(|u| u.display_name))
    };
    cached.put(&user("u", "v1")).await?;
    assert_eq!(name(cached.clone()).await?, Some("v1".into()));
    assert_eq!(name(cached.clone()).await?, Some("v1".into()));
    assert_eq!(cache.stats().hits, 1);

    cached.put(&user("u", "v2")).await?;
    assert_eq!(name(cached.clone()).await?, Some("v2".into()), "put");
    cached
        .update(User::key("u"))
        .set(User::fields().display_name, "v3".to_owned())
        .await?;
    assert_eq!(name(cached.clone()).await?, Some("v3".into()), "update");
    cached.batch_write().put(&user("u", "v4")).await?;
    assert_eq!(name(cached.clone()).await?, Some("v4".into()), "batch put");
    cached
        .transact_write()
        .put(cached.put(&user("u", "v5")))
        .await?;
    assert_eq!(
        name(cached.clone()).await?,
        Some("v5".into()),
        "transaction"
    );
    cached.delete(User::key("u")).await?;
    assert_eq!(name(cached.clone()).await?, None, "delete");
    cached.put(&user("u", "v6")).await?;
    assert_eq!(name(cached.clone()).await?, Some("v6".into()));
    cached.batch_write().delete(User::key("u")).await?;
    assert_eq!(name(cached.clone()).await?, None, "batch delete");
    assert!(cache.stats().invalidations >= 5, "{:?}", cache.stats());
    Ok(())
}

/// A write by another client is seen once the cached item expires, not before.
#[tokio::test]
async fn others_writes_show_after_the_time_to_live() -> TestResult {
    let (db, _cache, cached) = users_cached(|b| b.time_to_live(Duration::from_millis(300))).await?;
    db.put(&user("u", "old")).await?;
    assert_eq!(display_name(&cached, "u").await?, "old");
    db.put(&user("u", "new")).await?; // not through the cache
    assert_eq!(display_name(&cached, "u").await?, "old");
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(display_name(&cached, "u").await?, "new");
    Ok(())
}

/// Every get answered `late` (read at once, its answer held back), by the seed `seed`.
fn late_gets(seed: u64, late: Duration) -> Faults {
    Faults::new(seed)
        .rate(1.0)
        .kinds([FaultKind::Delay(late)])
        .operations(["GetItem"])
}

/// A get that read the old item while this client's write was under way never stores it:
/// the next get reads the write's item.
#[tokio::test]
async fn a_get_racing_an_own_write_never_caches_the_old_item() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    db.put(&user("u", "old")).await?;
    // The write below completes while the get's answer is on its way.
    let faults = late_gets(1, Duration::from_millis(400));
    let cache = Cache::builder().entity::<User>().build();
    let slow = faulty(&db, &faults).await?.with_cache(&cache);
    let writer = slow.clone();
    let get = tokio::spawn(async move { slow.get(User::key("u")).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    writer.put(&user("u", "new")).await?;
    let raced = get.await??.ok_or("missing")?;
    assert_eq!(raced.display_name, "old", "the get read before the write");
    let after = writer.get(User::key("u")).await?.ok_or("missing")?;
    assert_eq!(after.display_name, "new", "the old item was not cached");
    Ok(())
}

/// Bounded: at most `max_items` items stay.
#[tokio::test]
async fn the_cache_is_bounded() -> TestResult {
    let (db, cache, cached) = users_cached(|b| b.max_items(10)).await?;
    for i in 0..50 {
        db.put(&user(&format!("u{i}"), "x")).await?;
        cached.get(User::key(format!("u{i}"))).await?;
    }
    assert_at_most_once_settled(&cache, &cached, 10, "u0").await
}

/// Misses are filled by strongly consistent reads; a consistent get reads DynamoDB and
/// refreshes the cache; writes by other clients can be announced; a busy client's writes
/// to other keys leave the hot item cached.
#[tokio::test]
async fn fills_are_consistent_and_others_writes_can_be_announced() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    db.put(&user("u", "v1")).await?;
    let faults = Faults::new(0).record();
    let cache = Cache::builder().entity::<User>().build();
    let cached = faulty(&db, &faults).await?.with_cache(&cache);
    cached.get(User::key("u")).await?;
    let fill = faults.calls().pop().ok_or("no call")?;
    assert!(
        fill.body.contains("\"ConsistentRead\":true"),
        "{}",
        fill.body
    );

    // Another client writes; a consistent get sees it and refreshes the cache.
    db.put(&user("u", "v2")).await?;
    let name = |u: Option<User>| u.map(|u| u.display_name);
    assert_eq!(name(cached.get(User::key("u")).await?), Some("v1".into()));
    assert_eq!(
        name(cached.get(User::key("u")).consistent().await?),
        Some("v2".into())
    );
    assert_eq!(
        name(cached.get(User::key("u")).await?),
        Some("v2".into()),
        "refreshed"
    );

    // Announced: the next get reads.
    db.put(&user("u", "v3")).await?;
    cache.invalidate(db.table_name(), &User::key("u"))?;
    assert_eq!(name(cached.get(User::key("u")).await?), Some("v3".into()));

    // Writes of other keys while the hot item is read: it stays cached.
    let before = gets(&faults);
    for i in 0..20 {
        cached.put(&user(&format!("other{i}"), "x")).await?;
        assert_eq!(name(cached.get(User::key("u")).await?), Some("v3".into()));
    }
    assert_eq!(
        gets(&faults),
        before,
        "every read of the hot item was a hit"
    );
    Ok(())
}

/// A byte bound weighs items by their size.
#[tokio::test]
async fn a_byte_bound_weighs_items() -> TestResult {
    let (db, cache, cached) = users_cached(|b| b.max_bytes(64 * 1024)).await?;
    for i in 0..20 {
        let mut u = user(&format!("big{i}"), &"n".repeat(16 * 1024));
        u.labels = vec![];
        db.put(&u).await?;
        cached.get(User::key(format!("big{i}"))).await?;
    }
    // 16 KB items in 64 KB: at most 4 stay.
    assert_at_most_once_settled(&cache, &cached, 4, "big0").await
}

// ------------------------------------------------- the cache against every write path

fn name_of(found: Option<Hot>) -> Option<String> {
    found.map(|h| h.v)
}

async fn fetch(db: &Db<Mixed>, id: &str) -> Res<Option<String>> {
    Ok(name_of(db.get(Hot::key(id)).await?))
}

/// Puts `hot(id, v)` through `db` and asserts that a get through it reads `v` back.
async fn put_and_read_back(db: &Db<Mixed>, id: &str, v: &str) -> TestResult {
    db.put(&hot(id, v)).await?;
    assert_eq!(fetch(db, id).await?.as_deref(), Some(v));
    Ok(())
}

/// Runs the migration `name` through `db` that sets every hot item's value to `v`.
async fn set_every_v(db: &Db<Mixed>, name: &str, v: &'static str) -> Res<Report> {
    Ok(db
        .migration::<Hot>(name)
        .map(each(move |h: &mut Hot| h.v = v.into()))
        .run()
        .await?)
}

pub(crate) fn keeps_hot() -> Cache {
    Cache::builder().entity::<Hot>().entity::<Doc>().build()
}

/// A fresh table, a cache that [`keeps_hot`], and a client of the table through that
/// cache.
pub(crate) async fn hot_cached() -> Res<(local::TempTable<Mixed>, Cache, Db<Mixed>)> {
    let db = local::fresh_table::<Mixed>().await?;
    let cache = keeps_hot();
    let cached = db.with_cache(&cache);
    Ok((db, cache, cached))
}

/// A migration sent through a `Db` sharing the cache (its raw `UpdateItem`s) removes the
/// items it changes: a get right after reads the migrated item.
#[tokio::test]
async fn a_migration_through_the_cache_invalidates_what_it_changes() -> TestResult {
    let (_db, cache, cached) = hot_cached().await?;
    for i in 0..5 {
        cached.put(&hot(&format!("m{i}"), "before")).await?;
        assert_eq!(
            fetch(&cached, &format!("m{i}")).await?.as_deref(),
            Some("before")
        );
    }
    assert_eq!(fetch(&cached, "m0").await?.as_deref(), Some("before"));
    assert!(cache.stats().hits >= 1);
    let report = set_every_v(&cached, "r18-upper", "after").await?;
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
    let db = local::fresh_table::<Mixed>().await?;
    db.put(&hot("race", "old")).await?;
    let faults = late_gets(18, Duration::from_millis(500));
    let cache = keeps_hot();
    let slow = faulty(&db, &faults).await?.with_cache(&cache);
    let migrator = db.with_cache(&cache);
    let get = tokio::spawn({
        let slow = slow.clone();
        async move { slow.get(Hot::key("race")).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let report = set_every_v(&migrator, "r18-race", "new").await?;
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
    let (_db, cache, cached) = hot_cached().await?;
    let versions = cached.history::<Doc>();
    let title = |db: Db<Mixed>| async move {
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
    let (db, cache, cached) = hot_cached().await?;
    put_and_read_back(&cached, "b", "v1").await?;
    cached.bulk_load().put(&hot("b", "v2")).send().await?;
    assert_eq!(
        fetch(&cached, "b").await?.as_deref(),
        Some("v2"),
        "bulk load"
    );

    let old = cached.delete(Hot::key("b")).return_old().await?;
    assert_eq!(name_of(old).as_deref(), Some("v2"));
    assert_eq!(fetch(&cached, "b").await?, None, "delete returning old");

    put_and_read_back(&cached, "b", "v3").await?;
    raw_set(&cached, "HOT#b", "HOT", &[("v", s("raw"))]).await?;
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
    let (_db, _cache, cached) = hot_cached().await?;
    put_and_read_back(&cached, "p", "v1").await?;
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
    let template = Db::<Mixed>::new(client, prefix.as_str()).with_cache(&cache);
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
            .map(each(|h: &mut Hot| h.v.push_str("-m")))
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

/// A cache told to keep an entity with chunked fields (and gets marked `cached()`) never
/// answers for it: writes by another client show at once, chunked puts too.
#[tokio::test]
async fn an_entity_with_chunked_fields_is_never_served_from_the_cache() -> TestResult {
    let db = local::fresh_table::<Mixed>().await?;
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
    let (_db, _cache, cached) = hot_cached().await?;
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
