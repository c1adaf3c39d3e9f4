//! The read-through cache (feature `cache`): hits, bounds, and invalidation by this
//! client's own writes on every write path.

use crate::common::*;
use dynamo_model::cache::Cache;
use dynamo_model::local::faults::{FaultKind, Faults};
use dynamo_model::{local, Db, Entity};
use std::time::Duration;

fn user(id: &str, name: &str) -> User {
    User {
        user_id: id.into(),
        display_name: name.into(),
        email: None,
        login_count: 0,
        labels: vec![],
    }
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
    let db = local::fresh_table::<App>().await?;
    let cache = Cache::builder().entity::<User>().build();
    let cached = db.with_cache(&cache);
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
    let db = local::fresh_table::<App>().await?;
    let cache = Cache::builder()
        .entity::<User>()
        .time_to_live(Duration::from_millis(300))
        .build();
    let cached = db.with_cache(&cache);
    db.put(&user("u", "old")).await?;
    assert_eq!(
        cached
            .get(User::key("u"))
            .await?
            .ok_or("missing")?
            .display_name,
        "old"
    );
    db.put(&user("u", "new")).await?; // not through the cache
    assert_eq!(
        cached
            .get(User::key("u"))
            .await?
            .ok_or("missing")?
            .display_name,
        "old"
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(
        cached
            .get(User::key("u"))
            .await?
            .ok_or("missing")?
            .display_name,
        "new"
    );
    Ok(())
}

/// A get that read the old item while this client's write was under way never stores it:
/// the next get reads the write's item.
#[tokio::test]
async fn a_get_racing_an_own_write_never_caches_the_old_item() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    db.put(&user("u", "old")).await?;
    // Gets answered late: the write below completes while the get's answer is on its way.
    let faults = Faults::new(1)
        .rate(1.0)
        .kinds([FaultKind::Delay(Duration::from_millis(400))])
        .operations(["GetItem"]);
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
    let db = local::fresh_table::<App>().await?;
    let cache = Cache::builder().entity::<User>().max_items(10).build();
    let cached = db.with_cache(&cache);
    for i in 0..50 {
        db.put(&user(&format!("u{i}"), "x")).await?;
        cached.get(User::key(format!("u{i}"))).await?;
    }
    // Eviction is asynchronous in moka: let it settle, then count.
    for _ in 0..50 {
        if cache.stats().items <= 10 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        cached.get(User::key("u0")).await?;
    }
    assert!(cache.stats().items <= 10, "{:?}", cache.stats());
    Ok(())
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
    let db = local::fresh_table::<App>().await?;
    let cache = Cache::builder()
        .entity::<User>()
        .max_bytes(64 * 1024)
        .build();
    let cached = db.with_cache(&cache);
    for i in 0..20 {
        let mut u = user(&format!("big{i}"), &"n".repeat(16 * 1024));
        u.labels = vec![];
        db.put(&u).await?;
        cached.get(User::key(format!("big{i}"))).await?;
    }
    for _ in 0..50 {
        if cache.stats().items <= 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        cached.get(User::key("big0")).await?;
    }
    // 16 KB items in 64 KB: at most 4 stay.
    assert!(cache.stats().items <= 4, "{:?}", cache.stats());
    Ok(())
}
