//! Migrations of entities whose keys are computed (shards, date buckets) and of untyped
//! rows identified by those keys: every real item changed once, forged shards and buckets
//! left alone, sharded index keys recomputed.

use crate::common::mixed::{Mixed, Queues, Reading, Slim, Tix};
use crate::common::*;
use dynamo_model::cache::Cache;
use dynamo_model::key::computed::shard_of;
use dynamo_model::{local, Entity, Item};
use time::macros::datetime;

fn reading(id: &str, value: u64) -> Reading {
    Reading {
        id: id.into(),
        at: datetime!(2014-07-09 13:14:15 UTC),
        value,
    }
}

/// The item of reading `id` (worth `value`) as another program would write it, forged
/// under the partition of the first of `ids` whose shard is another; and that partition.
fn forged_on_another_shard(ids: &[String], id: &str, value: u64) -> Res<(Item, String)> {
    let other = ids
        .iter()
        .find(|other| shard_of(other, 16) != shard_of(id, 16))
        .ok_or("no other shard")?;
    let mut forged = foreign(&reading(id, value))?;
    let other_pk = reading(other, 0).primary_key().raw()?.pk.clone();
    forged.insert("PK".into(), s(&other_pk));
    Ok((forged, other_pk))
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
    let db = local::fresh_table::<Mixed>().await?;
    let ids: Vec<String> = (0..24).map(|i| format!("r-{i}")).collect();
    let mut shards = std::collections::BTreeSet::new();
    for (i, id) in ids.iter().enumerate() {
        shards.insert(shard_of(id, 16));
        put_raw(&db, foreign(&reading(id, i as u64))?).await?;
    }
    assert!(shards.len() > 4, "spread over shards: {shards:?}");
    // Forged: the item of r-0 under the partition of an id of another shard.
    let (forged, other_pk) = forged_on_another_shard(&ids, "r-0", 1000)?;
    put_raw(&db, forged.clone()).await?;
    // Not a reading: another shape in a readings partition.
    let mut meta = Item::new();
    meta.insert("PK".into(), s(&other_pk));
    meta.insert("SK".into(), s("META"));
    meta.insert("value".into(), n(7));
    put_raw(&db, meta.clone()).await?;

    let report = db
        .migration::<Reading>("r18-shards")
        .map(each(|r: &mut Reading| r.value += 1_000_000))
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
        .map(each(|r: &mut Reading| r.value += 1_000_000))
        .run()
        .await?;
    assert_eq!(again.progress.changed, 0, "{again:?}");
    Ok(())
}

/// A rewrite of the same sharded entity adds the entity type to every real item, and a
/// migration of one shard's partition changes only that shard.
#[tokio::test]
async fn a_partition_migration_of_one_shard_changes_only_it() -> TestResult {
    let db = local::fresh_table::<Mixed>().await?;
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

/// A rewrite in parallel segments of the sharded, day-bucketed entity identified by its
/// keys: every real item gains its entity type (and stays readable); an item whose shard
/// or whose day bucket does not match its fields is reported and left as it is.
#[tokio::test]
async fn a_segmented_rewrite_types_real_items_and_leaves_forged_buckets_alone() -> TestResult {
    let db = local::fresh_table::<Mixed>().await?;
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
    let (bad_shard, _) = forged_on_another_shard(&ids, "w-shard", 6)?;
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

/// An untyped row whose fields live only in its keys, stored under a shard that does not
/// match the id its sort key gives: never read as the entity (not by a query of its shard,
/// not by scatter-gather), and never touched by a migration.
#[tokio::test]
async fn a_forged_shard_of_a_keys_only_row_is_never_decoded_nor_migrated() -> TestResult {
    let db = local::fresh_table::<Mixed>().await?;
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
        .map(each(|x: &mut Slim| x.v = 9))
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
    let db = local::fresh_table::<Queues>().await?;
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
    let old = items_of(db.query(queue.shard(shard_of("ann", 4)))).await?;
    let moved = items_of(db.query(queue.shard(shard_of(&new, 4)))).await?;
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
