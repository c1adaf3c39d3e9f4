//! A table another program wrote, adopted through declared key formats: which rows are an
//! entity's on every path (queries, scans, `one`, page counts, migrations), and
//! migrations of those rows racing that program's own writes. Rows are written with the
//! raw SDK as another program would; migrations run against DynamoDB Local.

use crate::common::*;
use dynamo_model::migrate::{MemoryCheckpoints, Report};
use dynamo_model::{local, Db, Entity, Error, Item, Table};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use time::macros::datetime;
use time::OffsetDateTime;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "BySk", pk = "Owner", sk = "SK"))]
pub struct Yard;

/// Another program's rows: `K#<id>` / `AT#<rfc3339 millis>`, no type attribute, the key
/// fields in the keys only, an index sorted by the table's own sort key.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Yard, identify = "keys", store_key_fields = false,
         pk = "K#{id}", sk = "AT#{at}",
         index(BySk, pk = [owner]))]
pub struct Crate {
    #[dynamo(key_format = "unpadded")]
    pub id: u64,
    #[dynamo(key_format = "rfc3339(3)")]
    pub at: OffsetDateTime,
    #[dynamo(rename = "Owner")]
    pub owner: Option<String>,
    #[dynamo(alias = "lbl")]
    pub label: Option<String>,
    #[dynamo(default)]
    pub weight: u32,
}

/// Another identified-by-keys entity sharing the partition: `K#<id>` / `P#<padded 4>`.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Yard, identify = "keys", pk = "K#{id}", sk = "P#{slot}")]
pub struct Pallet {
    #[dynamo(key_format = "unpadded", key_only)]
    pub id: u64,
    #[dynamo(key_format = "padded(4)", key_only)]
    pub slot: u32,
    pub kind: String,
}

/// Seconds since the epoch in the sort key (another program's layout).
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Yard, identify = "keys", pk = "E#{id}", sk = "{at}")]
pub struct Event {
    #[dynamo(key_format = "unpadded", key_only)]
    pub id: i64,
    #[dynamo(key_format = "epoch_seconds", key_only)]
    pub at: OffsetDateTime,
    pub what: String,
}

/// A typed entity the crate writes.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Yard, pk = "TALLY#{id}", sk = "TALLY")]
pub struct Tally {
    pub id: u32,
    pub n: u64,
    pub note: Option<String>,
}

/// Rows under `K#<id>` keys that are not exactly the declared formats of `Crate` or
/// `Pallet`: each must be nobody's.
fn near_misses() -> Vec<Item> {
    let x = [("x", s("foreign"))];
    [
        ("K#07", "AT#2020-04-24T14:40:00.250Z"), // leading zero
        ("K#+7", "AT#2020-04-24T14:40:00.250Z"), // plus sign
        ("K#-0", "AT#2020-04-24T14:40:00.250Z"), // negative zero
        ("K#-7", "AT#2020-04-24T14:40:00.250Z"), // negative for a u64
        ("K#7 ", "AT#2020-04-24T14:40:00.250Z"), // trailing space
        ("K#", "AT#2020-04-24T14:40:00.250Z"),   // empty
        ("K#18446744073709551616", "AT#2020-04-24T14:40:00.250Z"), // u64::MAX + 1
        ("K#7", "AT#2020-04-24T14:40:00.250z"),  // lowercase z
        ("K#7", "AT#2020-04-24t14:40:00.250Z"),  // lowercase t
        ("K#7", "AT#2020-04-24T14:40:00.25Z"),   // two fraction digits
        ("K#7", "AT#2020-04-24T14:40:00.2500Z"), // four fraction digits
        ("K#7", "AT#2020-04-24T14:40:00Z"),      // no fraction
        ("K#7", "AT#2020-04-24T14:40:00.250"),   // no Z
        ("K#7", "AT#2020-04-24T14:40:00.250+00:00"), // offset
        ("K#7", "AT#2016-12-31T23:59:60.000Z"),  // leap second
        ("K#7", "AT#2020-04-24T24:00:00.000Z"),  // hour 24
        ("K#7", "AT#2019-02-29T00:00:00.000Z"),  // not a date
        ("K#7", "AT#2020-04-24T14:40:00.250ZZ"), // trailing garbage
        ("K#7", "AT#2020-04-24T14:40:00.250Z#x"), // another component
        ("K#7", "AT#+020-04-24T14:40:00.250Z"),  // signed year
        ("K#7", "AT#2020-04-24T14:40:0\u{661}.250Z"), // a non-ASCII digit
        ("K#7", "P#007"),                        // three digits for padded(4)
        ("K#7", "P#00007"),                      // five digits
        ("K#7", "P#-007"),                       // a sign
        ("K#7", "P#0x07"),                       // hex
        ("K#07", "P#0007"),                      // the pk's leading zero
        ("E#1", "01587739200"),                  // epoch with a leading zero
        ("E#1", "+1587739200"),                  // epoch with a plus
        ("E#1", "-0"),                           // negative zero
        ("E#1", "1587739200.5"),                 // a fraction
        ("E#1", "999999999999999999999"),        // out of range
        ("E#01", "1587739200"),                  // the pk's leading zero
    ]
    .into_iter()
    .map(|(pk, sk)| raw_row(pk, sk, &x))
    .collect()
}

/// A fresh table holding the rows of `Crate`, `Pallet` and `Event` that are exactly their
/// declared formats.
async fn with_good_rows() -> Res<local::TempTable<Yard>> {
    with_rows::<Yard>([
        raw_row(
            "K#7",
            "AT#2020-04-24T14:40:00.250Z",
            &[("lbl", s("old")), ("vendor", s("v7"))],
        ),
        raw_row(
            "K#7",
            "AT#1969-12-31T23:59:59.999Z",
            &[("Owner", s("ann")), ("weight", n(3))],
        ),
        raw_row("K#0", "AT#0000-01-01T00:00:00.000Z", &[]),
        raw_row("K#7", "P#0007", &[("kind", s("euro"))]),
        raw_row("E#-1", "-1", &[("what", s("before"))]),
        raw_row("E#1", "1587739200", &[("what", s("after"))]),
    ])
    .await
}

// ------------------------------------------------------------------------ key formats

/// Every near miss of a declared format is nobody's: not read by a query or a scan, not
/// touched by a migration of any of the entities, counted as another's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn near_misses_of_the_formats_are_nobodys_on_every_path() -> TestResult {
    let db = with_good_rows().await?;
    let misses = near_misses();
    for item in &misses {
        put_raw(&db, item.clone()).await?;
    }
    let before = raw_table(&db).await?;

    let crates = db.scan::<Crate>().consistent().all().await?.items;
    assert_eq!(crates.len(), 3, "{crates:?}");
    let pallets = db.scan::<Pallet>().consistent().all().await?.items;
    assert_eq!(pallets.len(), 1, "{pallets:?}");
    let events = db.scan::<Event>().consistent().all().await?.items;
    assert_eq!(events.len(), 2, "{events:?}");
    let q = items_of(db.query(Crate::partition(7u64)).consistent()).await?;
    assert_eq!(q.len(), 2, "{q:?}");
    let q = items_of(db.query(Event::partition(1i64)).consistent()).await?;
    assert_eq!(q.len(), 1, "{q:?}");

    // A dry-run rewrite of each claims exactly its rows and no near miss.
    let total = before.len() as u64;
    let r = db.migration::<Crate>("c").rewrite().dry_run().run().await?;
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    assert_eq!(r.progress.other, total - 3, "{:?}", r.progress);
    let r = db
        .migration::<Pallet>("p")
        .rewrite()
        .dry_run()
        .run()
        .await?;
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    assert_eq!(r.progress.other, total - 1, "{:?}", r.progress);
    let r = db.migration::<Event>("e").rewrite().dry_run().run().await?;
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    assert_eq!(r.progress.other, total - 2, "{:?}", r.progress);

    // And the real rewrites leave every near miss byte for byte.
    db.migration::<Crate>("c").rewrite().run().await?;
    db.migration::<Pallet>("p").rewrite().run().await?;
    db.migration::<Event>("e").rewrite().run().await?;
    let after = raw_table(&db).await?;
    for item in &misses {
        let key = (
            item["PK"].as_s().map_err(|_| "pk")?.clone(),
            item["SK"].as_s().map_err(|_| "sk")?.clone(),
        );
        assert_eq!(after.get(&key), Some(item), "{key:?} changed");
    }
    Ok(())
}

/// A rewrite types the rows, writes the renamed field under its new name (dropping the
/// alias), fills the default, keeps the other program's attributes and the index key,
/// and writes no key-field attribute for key-only fields.
#[tokio::test]
async fn a_rewrite_of_adopted_rows_keeps_foreign_attributes() -> TestResult {
    let db = with_good_rows().await?;
    let r = db.migration::<Crate>("rewrite").rewrite().run().await?;
    assert_eq!(r.progress.changed, 3, "{:?}", r.progress);
    let rows = raw_table(&db).await?;
    let a = &rows[&("K#7".to_owned(), "AT#2020-04-24T14:40:00.250Z".to_owned())];
    assert_holds(a, &[("_type", s("Crate")), ("label", s("old"))]);
    assert_eq!(a.get("lbl"), None);
    assert_eq!(a.get("weight"), Some(&n(0)));
    assert_eq!(
        a.get("vendor"),
        Some(&s("v7")),
        "another program's attribute"
    );
    assert!(!a.contains_key("id") && !a.contains_key("at"), "{a:?}");
    let b = &rows[&("K#7".to_owned(), "AT#1969-12-31T23:59:59.999Z".to_owned())];
    assert_holds(b, &[("Owner", s("ann")), ("weight", n(3))]);
    // The pallet sharing the partition is untouched.
    let p = &rows[&("K#7".to_owned(), "P#0007".to_owned())];
    assert_eq!(p.get("_type"), None);
    // A second run finds nothing to do.
    let r = db.migration::<Crate>("rewrite-2").rewrite().run().await?;
    assert_eq!(
        (r.progress.changed, r.progress.unchanged),
        (0, 3),
        "{:?}",
        r.progress
    );
    // The index over the table's own sort key finds the owned row.
    let by_owner = items_of(db.query(Crate::by_sk_partition("ann"))).await?;
    assert_eq!(by_owner.len(), 1, "{by_owner:?}");
    assert_eq!(by_owner[0].at, datetime!(1969-12-31 23:59:59.999 UTC));
    Ok(())
}

/// A stored value of the old name and the new name: reads take the new name, and the
/// rewrite keeps the new name's value (documenting which one wins).
#[tokio::test]
async fn an_item_holding_both_names_keeps_the_new_names_value() -> TestResult {
    let db = with_rows::<Yard>([raw_row(
        "K#9",
        "AT#2020-04-24T14:40:00.000Z",
        &[("lbl", s("old")), ("label", s("new"))],
    )])
    .await?;
    let got = db
        .get(Crate::key(CrateKey {
            id: 9u64,
            at: datetime!(2020-04-24 14:40 UTC),
        }))
        .consistent()
        .await?
        .ok_or("crate 9")?;
    assert_eq!(got.label.as_deref(), Some("new"));
    db.migration::<Crate>("both").rewrite().run().await?;
    let rows = raw_table(&db).await?;
    let a = &rows[&("K#9".to_owned(), "AT#2020-04-24T14:40:00.000Z".to_owned())];
    assert_eq!(a.get("label"), Some(&s("new")));
    Ok(())
}

// ------------------------------------------------------------------------ concurrency

/// A fresh table holding tallies `0..count`, each at 0.
async fn with_tallies(count: u32) -> Res<local::TempTable<Yard>> {
    let db = local::fresh_table::<Yard>().await?;
    for id in 0..count {
        db.put(&Tally {
            id,
            n: 0,
            note: None,
        })
        .await?;
    }
    Ok(db)
}

/// Runs the migration `name` that increments every tally; the first time it meets tally
/// `id`, `write` (the application's, through `db`'s client) changes it first, between the
/// migration's read and its write; `write` failing panics with `what`.
async fn increment_after_a_write<T, F>(
    db: &Db<Yard>,
    name: &str,
    id: u32,
    what: &'static str,
    write: impl Fn(Db<Yard>) -> F + Send + Sync + 'static,
) -> Result<Report, Error>
where
    F: std::future::Future<Output = Result<T, Error>>,
{
    let app = db.clone();
    db.migration::<Tally>(name)
        .map(interfered_once(
            move |t: &Tally| t.id == id,
            move || {
                block_on(write(app.clone())).expect(what);
            },
            |t| t.n += 1,
        ))
        .run()
        .await
}

/// Tally `id`, read strongly consistent.
async fn tally(db: &Db<Yard>, id: u32) -> Res<Tally> {
    Ok(db
        .get(Tally::key(id))
        .consistent()
        .await?
        .ok_or_else(|| format!("tally {id}"))?)
}

/// The adopted table's other program keeps writing while the migration runs. It adds an
/// attribute to an item after the migration read it and before it wrote it: the
/// migration's write must not drop it ("Nothing lost").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_write_adding_an_attribute_mid_migration_survives() -> TestResult {
    let db = with_rows::<Yard>([raw_row("K#1", "AT#2020-04-24T14:40:00.000Z", &[])]).await?;
    let other = db.clone();
    let report = db
        .migration::<Crate>("foreign-add")
        .map(interfered_once(
            |_| true,
            move || {
                let at = "AT#2020-04-24T14:40:00.000Z";
                block_on(raw_set(&other, "K#1", at, &[("vendor", s("acme"))]))
                    .expect("the other program's write");
            },
            |c: &mut Crate| c.weight += 1,
        ))
        .run()
        .await?;
    assert_eq!(report.progress.changed, 1, "{:?}", report.progress);
    let rows = raw_table(&db).await?;
    let a = &rows[&("K#1".to_owned(), "AT#2020-04-24T14:40:00.000Z".to_owned())];
    assert_eq!(
        a.get("vendor"),
        Some(&s("acme")),
        "the other program's concurrent write was overwritten: {a:?}"
    );
    Ok(())
}

/// The same through the crate: a transaction's update has no write token, so setting an
/// absent field between the migration's read and write goes unseen by its condition.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transactional_update_setting_an_absent_field_mid_migration_survives() -> TestResult {
    let db = with_tallies(3).await?;
    let tx = |app: Db<Yard>| async move {
        app.transact_write()
            .update(
                app.update(Tally::key(1u32))
                    .set(Tally::fields().note, Some("tx".to_owned())),
            )
            .send()
            .await
    };
    let report =
        increment_after_a_write(&db, "tx-add", 1, "the application's transaction", tx).await?;
    assert_eq!(report.progress.changed, 3, "{:?}", report.progress);
    let one = tally(&db, 1).await?;
    assert_eq!(one.n, 1);
    assert_eq!(
        one.note.as_deref(),
        Some("tx"),
        "the transaction's write was overwritten by the migration"
    );
    Ok(())
}

/// A batch put replaces the item with one that has no write token: when the migration
/// read an item without one (batch-written), a batch put that only adds a field is unseen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_put_adding_a_field_mid_migration_survives() -> TestResult {
    let db = local::fresh_table::<Yard>().await?;
    let all: Vec<Tally> = (0..3)
        .map(|id| Tally {
            id,
            n: 0,
            note: None,
        })
        .collect();
    db.batch_write().puts(&all).send().await?;
    let batch = |app: Db<Yard>| async move {
        let changed = Tally {
            id: 2,
            n: 0,
            note: Some("batch".into()),
        };
        app.batch_write().put(&changed).send().await
    };
    increment_after_a_write(&db, "batch-add", 2, "the application's batch", batch).await?;
    let two = tally(&db, 2).await?;
    assert_eq!(
        two.note.as_deref(),
        Some("batch"),
        "the batch put's write was overwritten by the migration"
    );
    Ok(())
}

/// A crate update (which writes a token) mid-migration is seen: the change is applied on
/// top of it. The guarantee that holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_update_setting_an_absent_field_mid_migration_survives() -> TestResult {
    let db = with_tallies(2).await?;
    let update = |app: Db<Yard>| async move {
        app.update(Tally::key(0u32))
            .set(Tally::fields().note, Some("app".to_owned()))
            .await
    };
    let report =
        increment_after_a_write(&db, "single-add", 0, "the application's update", update).await?;
    assert_eq!(report.progress.conflicts, 1, "{:?}", report.progress);
    let zero = tally(&db, 0).await?;
    assert_eq!((zero.n, zero.note.as_deref()), (1, Some("app")));
    Ok(())
}

/// A delete mid-migration stays a delete: the migration does not bring the item back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_delete_mid_migration_stays_deleted() -> TestResult {
    let db = with_rows::<Yard>([raw_row("K#3", "AT#2020-04-24T14:40:00.000Z", &[])]).await?;
    let other = db.clone();
    let report = db
        .migration::<Crate>("foreign-delete")
        .map(move |c| {
            block_on(raw_delete(&other, "K#3", "AT#2020-04-24T14:40:00.000Z"))
                .expect("the other program's delete");
            Some(c)
        })
        .run()
        .await?;
    assert_eq!(report.progress.vanished, 1, "{:?}", report.progress);
    assert!(raw_table(&db).await?.is_empty());
    Ok(())
}

// ------------------------------------------------------------------------- migrations

/// A map that moves the item (changes a key field) is refused and the item is left; an
/// item of the partition of another entity is never changed by a partition migration.
#[tokio::test]
async fn a_partition_migration_changes_only_its_entitys_rows() -> TestResult {
    let db = with_good_rows().await?;
    put_raw_rows(&db, near_misses()).await?;
    let before = raw_table(&db).await?;
    let report = db
        .migration::<Crate>("part")
        .partition(Crate::partition(7u64))
        .map(|mut c| {
            c.weight += 10;
            Some(c)
        })
        .page_size(1)
        .run()
        .await?;
    assert_eq!(report.progress.changed, 2, "{:?}", report.progress);
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    let after = raw_table(&db).await?;
    for (key, item) in &before {
        let ours = key.0 == "K#7"
            && (key.1 == "AT#2020-04-24T14:40:00.250Z" || key.1 == "AT#1969-12-31T23:59:59.999Z");
        if !ours {
            assert_eq!(after.get(key), Some(item), "{key:?} changed");
        }
    }
    // A map that moves an item to another key is a failure, and nothing moves.
    let report = db
        .migration::<Crate>("move")
        .partition(Crate::partition(7u64))
        .map(|mut c| {
            c.at += time::Duration::seconds(1);
            Some(c)
        })
        .run()
        .await?;
    assert_eq!(report.progress.failed, 2, "{:?}", report.progress);
    assert_eq!(report.progress.changed, 0);
    assert_eq!(raw_table(&db).await?.len(), after.len());
    Ok(())
}

/// A map over an entity whose key parts use the epoch format, including negative counts.
#[tokio::test]
async fn epoch_keys_before_1970_migrate_in_place() -> TestResult {
    let db = with_good_rows().await?;
    let report = db
        .migration::<Event>("events")
        .map(each(|e: &mut Event| e.what.push('!')))
        .run()
        .await?;
    assert_eq!(report.progress.changed, 2, "{:?}", report.progress);
    let rows = raw_table(&db).await?;
    let before = &rows[&("E#-1".to_owned(), "-1".to_owned())];
    assert_eq!(before.get("what"), Some(&s("before!")));
    assert!(!before.contains_key("id") && !before.contains_key("at"));
    let e = db
        .get(Event::key(EventKey {
            id: -1i64,
            at: datetime!(1969-12-31 23:59:59 UTC),
        }))
        .await?
        .ok_or("event")?;
    assert_eq!(e.what, "before!");
    Ok(())
}

/// A resumed map (checkpoints in memory) applies its function once per item, with page
/// size 1 and a crash after the first pages.
#[tokio::test]
async fn a_resumed_map_over_untyped_rows_applies_once() -> TestResult {
    let crates = (0..6u64).map(|id| {
        raw_row(
            &format!("K#{id}"),
            "AT#2020-04-24T14:40:00.000Z",
            &[("weight", n(0))],
        )
    });
    let db = with_rows::<Yard>(crates.chain(near_misses())).await?;
    let store = MemoryCheckpoints::new();
    let calls = Arc::new(AtomicUsize::new(0));
    let resume = || {
        let counted = Arc::clone(&calls);
        db.migration::<Crate>("resume")
            .map(move |mut c| {
                counted.fetch_add(1, Ordering::SeqCst);
                c.weight += 1;
                Some(c)
            })
            .page_size(1)
            .checkpoints(store.clone())
    };
    // Cut the first run short wherever it stands (a cancelled future).
    let cut = tokio::time::timeout(std::time::Duration::from_millis(1), resume().run()).await;
    drop(cut);
    let report = resume().run().await?;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    let crates = db.scan::<Crate>().consistent().all().await?.items;
    assert_eq!(crates.len(), 6);
    assert!(crates.iter().all(|c| c.weight == 1), "{crates:?}");
    Ok(())
}

// --------------------------------------------------------- Query::one and page counts

/// `one()` over a partition where the other program's rows (nobody's) come first: the
/// second matching row is still found (NotUnique), and a single one is returned.
#[tokio::test]
async fn one_looks_past_rows_that_are_nobodys() -> TestResult {
    let db = local::fresh_table::<Yard>().await?;
    // Sort before `AT#...`: `A...` < `AT`.
    for i in 0..7 {
        put_raw(&db, raw_row("K#5", &format!("A{i}"), &[])).await?;
    }
    put_raw(&db, raw_row("K#5", "AT#2020-01-01T00:00:00.000Z", &[])).await?;
    let one = db.query(Crate::partition(5u64)).consistent().one().await?;
    assert_eq!(
        one.map(|c| c.at),
        Some(datetime!(2020-01-01 00:00 UTC)),
        "the only crate"
    );
    // More nobody's rows between, then a second crate.
    for i in 0..7 {
        put_raw(
            &db,
            raw_row("K#5", &format!("AT#2020-01-01T00:00:00.000Zx{i}"), &[]),
        )
        .await?;
    }
    put_raw(&db, raw_row("K#5", "AT#2021-01-01T00:00:00.000Z", &[])).await?;
    let err = db
        .query(Crate::partition(5u64))
        .consistent()
        .page_size(1)
        .one()
        .await
        .err()
        .ok_or("two crates")?;
    assert!(matches!(err, Error::NotUnique { .. }), "{err:?}");
    // Pallets are not crates: one pallet with one crate is one crate.
    put_raw(&db, raw_row("K#6", "AT#2020-01-01T00:00:00.000Z", &[])).await?;
    put_raw(&db, raw_row("K#6", "P#0001", &[("kind", s("x"))])).await?;
    let one = db.query(Crate::partition(6u64)).one().await?;
    assert!(one.is_some());
    let one = db.query(Pallet::partition(6u64)).one().await?;
    assert_eq!(one.map(|p| p.slot), Some(1));
    Ok(())
}

/// Page counts count what DynamoDB returned, including rows under the template's prefix
/// dropped on the client as nobody's; rows outside the prefix are not read at all.
#[tokio::test]
async fn page_counts_include_rows_dropped_on_the_client() -> TestResult {
    let db = local::fresh_table::<Yard>().await?;
    for i in 0..5 {
        put_raw(&db, raw_row("K#8", &format!("AT#x{i}"), &[])).await?;
        put_raw(&db, raw_row("K#8", &format!("A{i}"), &[])).await?;
    }
    put_raw(&db, raw_row("K#8", "AT#2020-01-01T00:00:00.000Z", &[])).await?;
    put_raw(&db, raw_row("K#8", "P#0002", &[("kind", s("x"))])).await?;
    let page = db
        .query(Crate::partition(8u64))
        .consistent()
        .page_size(2)
        .all()
        .await?;
    assert_eq!(page.items.len(), 1);
    assert_eq!(page.scanned_count, 6, "{page:?}");
    assert_eq!(page.count, 6, "{page:?}");
    assert!(page.requests >= 3, "{page:?}");
    Ok(())
}

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
pub struct Shared;

/// Two entities identified by their keys that both render `S#1` / `AT#2020-...Z`.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shared, identify = "keys", pk = "S#{id}", sk = "AT#{at}")]
pub struct Stamp {
    #[dynamo(key_format = "unpadded", key_only)]
    pub id: u64,
    #[dynamo(key_format = "rfc3339(3)", key_only)]
    pub at: OffsetDateTime,
    #[dynamo(default)]
    pub n: u32,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shared, identify = "keys", pk = "S#{id}", sk = "AT#{tag}")]
pub struct Tag {
    #[dynamo(key_format = "unpadded", key_only)]
    pub id: u64,
    #[dynamo(key_format = "verbatim", key_only)]
    pub tag: String,
    #[dynamo(default)]
    pub n: u32,
}

/// An untyped row both entities' templates render is neither's: a migration of either
/// reports it (ambiguous) and writes nothing; a row only one renders is migrated.
#[tokio::test]
async fn ambiguous_untyped_rows_are_never_migrated() -> TestResult {
    let db = with_rows::<Shared>([
        raw_row("S#1", "AT#2020-04-24T14:40:00.000Z", &[]),
        raw_row("S#1", "AT#blue", &[]),
    ])
    .await?;
    for (name, report) in [
        ("stamp", db.migration::<Stamp>("m").rewrite().run().await?),
        ("tag", db.migration::<Tag>("m").rewrite().run().await?),
    ] {
        let p = report.progress;
        match name {
            "stamp" => assert_eq!((p.failed, p.changed, p.other), (1, 0, 1), "{name} {p:?}"),
            _ => assert_eq!((p.failed, p.changed), (1, 1), "{name} {p:?}"),
        }
        let failure = report.failures.first().ok_or("a failure")?;
        assert!(
            matches!(
                &failure.error,
                Error::Decode(d) if matches!(d.kind, dynamo_model::DecodeErrorKind::AmbiguousEntity { .. })
            ),
            "{name}: {:?}",
            failure.error
        );
    }
    let item = raw_get(&db, "S#1", "AT#2020-04-24T14:40:00.000Z").await?;
    assert_eq!(item.len(), 2, "the ambiguous row was written: {item:?}");
    Ok(())
}
