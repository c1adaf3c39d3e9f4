//! Migrations (`dynamo_model::migrate`) on DynamoDB Local: rows another program wrote get
//! the entity type and a new index, renamed attributes move, defaults are written, a
//! killed run resumes with exactly-once effects, a concurrent application write
//! survives, a dry run writes nothing, other items are never touched.

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::migrate::{Checkpoint, Failure, MemoryCheckpoints, Report, MIGRATIONS_ATTRIBUTE};
use dynamo_model::{local, Db, DecodeErrorKind, Entity, Error, Item, Table, ValidationReason};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "ByModel", pk = "GSI1PK", sk = "GSI1SK")
)]
pub struct Fleet;

/// Rows of another program: `T#<id>` / `TRUCK`, no entity type, `km` since renamed,
/// no `trips`, no index attributes.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Fleet, identify = "keys", pk = "T#{id}", sk = "TRUCK",
         index(ByModel, pk = "MODEL#{model}", sk = "T#{id}"))]
pub struct Truck {
    #[dynamo(key_format = "unpadded")]
    pub id: u64,
    pub model: String,
    #[dynamo(default)]
    pub trips: u64,
    #[dynamo(alias = "km")]
    pub mileage: Option<u64>,
}

/// Written by the crate, in the same table.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Fleet, pk = "D#{id}", sk = "DRIVER")]
pub struct Driver {
    pub id: String,
    pub name: String,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Fleet, pk = "C#{id}", sk = "COUNTER")]
pub struct Counter {
    pub id: u32,
    pub n: u64,
    pub note: Option<String>,
}

/// A truck row as the other program writes it: `km` if any, no entity type.
pub fn truck_row(id: u64, model: &str, km: Option<u64>) -> Item {
    let mut row = Item::from([
        ("PK".to_owned(), s(&format!("T#{id}"))),
        ("SK".to_owned(), s("TRUCK")),
        ("model".to_owned(), s(model)),
    ]);
    if let Some(km) = km {
        row.insert("km".to_owned(), n(km));
    }
    row
}

/// A fresh table holding what [`seed`] puts.
async fn seeded(count: u64) -> Res<local::TempTable<Fleet>> {
    let db = local::fresh_table::<Fleet>().await?;
    seed(&db, count).await?;
    Ok(db)
}

/// `count` trucks as the other program writes them, a driver and a foreign row.
async fn seed(db: &Db<Fleet>, count: u64) -> TestResult {
    for id in 1..=count {
        let model = if id.is_multiple_of(2) {
            "volvo"
        } else {
            "scania"
        };
        let mut row = truck_row(id, model, (!id.is_multiple_of(3)).then_some(id * 1000));
        // An attribute only the other program knows.
        row.insert("vendor".to_owned(), s(&format!("v-{id}")));
        put_raw(db, row).await?;
    }
    db.put(&Driver {
        id: "d-1".into(),
        name: "Ann".into(),
    })
    .await?;
    put_raw(
        db,
        Item::from([
            ("PK".to_owned(), s("X#1")),
            ("SK".to_owned(), s("TRUCK")),
            ("model".to_owned(), s("foreign")),
        ]),
    )
    .await?;
    Ok(())
}

/// A fresh table holding counters `0..count`, each at 0.
async fn with_counters(count: u32) -> Res<local::TempTable<Fleet>> {
    let db = local::fresh_table::<Fleet>().await?;
    for id in 0..count {
        db.put(&Counter {
            id,
            n: 0,
            note: None,
        })
        .await?;
    }
    Ok(db)
}

/// Asserts that every counter was incremented once from 0.
async fn assert_each_counter_once(db: &Db<Fleet>) -> TestResult {
    let counters = db.scan::<Counter>().consistent().all().await?.items;
    assert!(counters.iter().all(|c| c.n == 1), "{counters:?}");
    Ok(())
}

/// The failure `report` holds for the item of partition key `pk`.
fn failure_at<'r>(report: &'r Report, pk: &str) -> Option<&'r Failure> {
    report.failures.iter().find(|f| f.key.pk == pk)
}

/// The one failure of `report` (else `missing`): asserts that it is `T#2`'s, refused as a
/// renamed field holding two values.
fn only_t2_refused_as_renamed<'r>(report: &'r Report, missing: &'static str) -> Res<&'r Failure> {
    let failure = report.failures.first().ok_or(missing)?;
    assert_eq!(report.failures.len(), 1, "{:?}", report.failures);
    assert_eq!(failure.key.pk, "T#2");
    assert_refused(&failure.error, ValidationReason::RenamedField);
    Ok(failure)
}

fn is_truck(key: &(String, String)) -> bool {
    key.0.starts_with("T#")
}

#[tokio::test]
async fn a_rewrite_types_the_rows_backfills_the_index_and_moves_renamed_attributes() -> TestResult {
    let db = seeded(12).await?;
    let before = raw_table(&db).await?;
    // Readable as they are, but not in the new index yet.
    assert_eq!(db.scan::<Truck>().all().await?.items.len(), 12);
    let volvos = || async {
        db.query(Truck::by_model_partition("volvo"))
            .all()
            .await
            .map(|p| p.items)
    };
    assert!(volvos().await?.is_empty());

    let report = db
        .migration::<Truck>("trucks-v2")
        .rewrite()
        .page_size(5)
        .run()
        .await?;
    let p = report.progress;
    assert_eq!((p.changed, p.other, p.failed), (12, 2, 0), "{report:?}");
    assert_eq!(p.scanned, 14);
    assert!(p.write_units >= 12.0 && p.read_units > 0.0, "{p:?}");
    assert!(!report.resumed && !report.dry_run);

    let after = raw_table(&db).await?;
    for (key, item) in &after {
        if !is_truck(key) {
            assert_eq!(
                Some(item),
                before.get(key),
                "{key:?} is not a truck: untouched"
            );
            continue;
        }
        let id: u64 = key.0[2..].parse()?;
        assert_eq!(item.get("_type"), Some(&s("Truck")), "{key:?}");
        assert_eq!(item.get("trips"), Some(&n(0)), "{key:?}");
        assert_eq!(item.get("km"), None, "{key:?}: the old name is gone");
        assert_eq!(
            item.get("mileage"),
            (!id.is_multiple_of(3)).then(|| n(id * 1000)).as_ref()
        );
        assert!(
            !item.contains_key(MIGRATIONS_ATTRIBUTE),
            "a rewrite writes no marker"
        );
    }
    let mut found: Vec<u64> = volvos().await?.into_iter().map(|t| t.id).collect();
    found.sort();
    assert_eq!(found, vec![2, 4, 6, 8, 10, 12], "the new index answers");

    // Run again: nothing left to do.
    let again = db
        .migration::<Truck>("trucks-v2-again")
        .rewrite()
        .run()
        .await?;
    assert_eq!((again.progress.changed, again.progress.unchanged), (0, 12));
    assert_eq!(raw_table(&db).await?, after);
    Ok(())
}

#[tokio::test]
async fn a_dry_run_reports_what_it_would_change_and_writes_nothing() -> TestResult {
    let db = seeded(7).await?;
    let before = raw_table(&db).await?;
    let store = MemoryCheckpoints::new();
    let report = db
        .migration::<Truck>("dry")
        .rewrite()
        .page_size(3)
        .checkpoints(store.clone())
        .dry_run()
        .run()
        .await?;
    assert!(report.dry_run);
    assert_eq!(report.progress.changed, 7);
    assert_eq!(report.sample.len(), 7);
    let first = report
        .sample
        .iter()
        .find(|c| c.key.pk == "T#1")
        .ok_or("T#1 planned")?;
    // The key field is stored as an attribute of its own too (`store_key_fields`).
    assert_eq!(
        first.set,
        ["GSI1PK", "GSI1SK", "_type", "id", "mileage", "trips"]
    );
    assert_eq!(first.removed, ["km"]);
    assert_eq!(raw_table(&db).await?, before, "nothing written");
    assert_eq!(store.get("dry"), None, "no checkpoint either");
    Ok(())
}

/// A function that is not idempotent (an increment), killed in the middle of a page and
/// resumed from its checkpoint: every counter incremented exactly once.
#[tokio::test]
async fn a_killed_migration_resumes_with_exactly_once_effects() -> TestResult {
    let db = local::fresh_table::<Fleet>().await?;
    for id in 0..40u32 {
        db.put(&Counter {
            id,
            n: u64::from(id) * 10,
            note: None,
        })
        .await?;
    }
    seed(&db, 3).await?;
    let store = MemoryCheckpoints::new();
    let calls = Arc::new(AtomicUsize::new(0));
    let kill = Arc::new(tokio::sync::Notify::new());
    let migration = |calls: Arc<AtomicUsize>, kill: Arc<tokio::sync::Notify>| {
        db.migration::<Counter>("count-once")
            .map(move |mut c| {
                // The 13th item: in the middle of the third page of 5.
                if calls.fetch_add(1, Ordering::SeqCst) == 12 {
                    kill.notify_one();
                }
                c.n += 1;
                Some(c)
            })
            .page_size(5)
            .checkpoints(store.clone())
    };
    let first = migration(Arc::clone(&calls), Arc::clone(&kill)).run();
    tokio::select! {
        result = first => panic!("the run was to be killed: {result:?}"),
        () = kill.notified() => {}
    }
    // A write in flight when the run was dropped may still reach DynamoDB after the drop:
    // let it land before counting what was written.
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let saved: Checkpoint = store
        .get("count-once")
        .ok_or("a checkpoint after each page")?;
    let checkpointed = saved.progress.changed as usize;
    let written = raw_table(&db)
        .await?
        .values()
        .filter(|i| i.contains_key(MIGRATIONS_ATTRIBUTE))
        .count();
    // The twelve items before the 13th call were written; the checkpoint is at the end
    // of the last whole page before it.
    assert!(
        written >= 12 && checkpointed <= written && checkpointed < 40,
        "{written} written, {saved:?}"
    );

    let report = migration(
        Arc::new(AtomicUsize::new(100)),
        Arc::new(tokio::sync::Notify::new()),
    )
    .run()
    .await?;
    assert!(report.resumed);
    let p = report.progress;
    assert_eq!(p.changed + p.already, 40, "{p:?}");
    assert_eq!(p.already as usize, written - checkpointed, "{p:?}");
    let counters = db.scan::<Counter>().consistent().all().await?.items;
    assert_eq!(counters.len(), 40);
    for c in counters {
        assert_eq!(
            c.n,
            u64::from(c.id) * 10 + 1,
            "counter {} incremented once",
            c.id
        );
    }
    // The same migration again: every item holds its marker.
    let again = migration(
        Arc::new(AtomicUsize::new(100)),
        Arc::new(tokio::sync::Notify::new()),
    )
    .checkpoints(MemoryCheckpoints::new())
    .run()
    .await?;
    assert_eq!((again.progress.changed, again.progress.already), (0, 40));
    Ok(())
}

/// The application writes an item between the migration's read and its write: the
/// write's condition fails, the item is read again and the change applied on top.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_concurrent_write_survives_and_the_change_applies_on_top() -> TestResult {
    let db = with_counters(6).await?;
    let app = db.clone();
    let interfered = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&interfered);
    let report = db
        .migration::<Counter>("concurrent")
        .map(move |mut c| {
            if c.id == 3 && seen.fetch_add(1, Ordering::SeqCst) == 0 {
                // The application's write, after the migration read the item.
                let app = app.clone();
                tokio::task::block_in_place(|| {
                    tokio::runtime::Handle::current().block_on(async move {
                        app.update(Counter::key(3u32))
                            .set(Counter::fields().note, Some("app".to_owned()))
                            .add(Counter::fields().n, 100)
                            .await
                    })
                })
                .expect("the application's update");
            }
            c.n += 1;
            Some(c)
        })
        .run()
        .await?;
    assert_eq!(report.progress.conflicts, 1, "{report:?}");
    assert_eq!(report.progress.changed, 6);
    let three = db
        .get(Counter::key(3u32))
        .consistent()
        .await?
        .ok_or("counter 3")?;
    assert_eq!(
        three.note.as_deref(),
        Some("app"),
        "the application's write survives"
    );
    assert_eq!(
        three.n, 101,
        "and the migration's change is applied on top of it"
    );
    Ok(())
}

#[tokio::test]
async fn raw_changes_rename_and_default_only_the_entitys_items() -> TestResult {
    let db = seeded(6).await?;
    let before = raw_table(&db).await?;
    let report = db
        .migration::<Truck>("raw")
        .rename_attribute("km", "mileage")
        .set_default("trips", n(5))
        .run()
        .await?;
    assert_eq!((report.progress.changed, report.progress.other), (6, 2));
    let after = raw_table(&db).await?;
    for (key, item) in &after {
        if !is_truck(key) {
            assert_eq!(Some(item), before.get(key));
            continue;
        }
        let old = &before[key];
        assert_eq!(item.get("trips"), Some(&n(5)));
        assert_eq!(item.get("mileage"), old.get("km"));
        assert!(!item.contains_key("km") && !item.contains_key("_type"));
    }
    let trucks = db.scan::<Truck>().all().await?.items;
    assert!(trucks.iter().all(|t| t.trips == 5), "{trucks:?}");
    // Key, index key and crate attributes are refused before anything is read.
    for attribute in ["PK", "GSI1PK", "_type", "_wt", MIGRATIONS_ATTRIBUTE] {
        refused(
            db.migration::<Truck>("bad")
                .set_default(attribute, s("x"))
                .run(),
            ValidationReason::InvalidOption,
        )
        .await;
    }
    refused(
        db.migration::<Truck>("none").run(),
        ValidationReason::NoOperations,
    )
    .await;
    Ok(())
}

/// A fresh table holding trucks as another program wrote them: `T#1` with only the older
/// name `km`, `T#2` with both names holding different values, `T#3` with both names
/// holding one value.
async fn trucks_with_km_and_mileage() -> Res<local::TempTable<Fleet>> {
    let db = local::fresh_table::<Fleet>().await?;
    let truck = |id: u64, extra: &[(&str, AttributeValue)]| {
        let mut rest = vec![("model", s("volvo"))];
        rest.extend(extra.iter().cloned());
        raw_row(&format!("T#{id}"), "TRUCK", &rest)
    };
    put_raw(&db, truck(1, &[("km", n(100))])).await?;
    put_raw(&db, truck(2, &[("km", n(200)), ("mileage", n(250))])).await?;
    put_raw(&db, truck(3, &[("km", n(300)), ("mileage", n(300))])).await?;
    Ok(db)
}

/// A rename never loses a value: an item holding both names with different values is
/// reported and left as it was; with equal values the older name goes; a rename onto
/// itself is refused. The same holds with the marker on (exactly-once mode) and in a
/// dry run.
#[tokio::test]
async fn a_rename_onto_an_existing_attribute_loses_nothing() -> TestResult {
    let db = trucks_with_km_and_mileage().await?;
    let before = raw_table(&db).await?;

    let dry = db
        .migration::<Truck>("rename-dry")
        .rename_attribute("km", "mileage")
        .dry_run()
        .run()
        .await?;
    assert_eq!((dry.progress.changed, dry.progress.failed), (2, 1));
    assert_eq!(raw_table(&db).await?, before, "a dry run writes nothing");

    for marker in [false, true] {
        let migration = db
            .migration::<Truck>(format!("rename-{marker}"))
            .rename_attribute("km", "mileage");
        let migration = if marker {
            migration.with_marker()
        } else {
            migration.without_marker()
        };
        let report = migration.run().await?;
        only_t2_refused_as_renamed(&report, "the conflicting row is reported")?;
        let after = raw_table(&db).await?;
        let row = |id: u64| &after[&(format!("T#{id}"), "TRUCK".to_owned())];
        // The conflicting row keeps both of its values, untouched.
        assert_eq!(row(2), &before[&("T#2".to_owned(), "TRUCK".to_owned())]);
        for (id, mileage) in [(1, 100), (3, 300)] {
            assert_eq!(row(id).get("mileage"), Some(&n(mileage)));
            assert!(!row(id).contains_key("km"), "{:?}", row(id));
        }
    }
    refused(
        db.migration::<Truck>("self")
            .rename_attribute("km", "km")
            .run(),
        ValidationReason::InvalidOption,
    )
    .await;
    Ok(())
}

/// `rewrite()` and `rename_attribute` agree on a renamed field (`alias = "km"`) whose
/// older and current names hold different values: the item is reported
/// (`RenamedField`) and left byte for byte, where the rewrite used to keep the current
/// name's value and drop the older one without a word. One value under both names is
/// rewritten to the current name only; `map` refuses the same way.
#[tokio::test]
async fn a_rewrite_reports_a_renamed_field_holding_two_values_and_leaves_it() -> TestResult {
    let db = trucks_with_km_and_mileage().await?;
    let before = raw_table(&db).await?;
    let key = |id: u64| (format!("T#{id}"), "TRUCK".to_owned());

    let dry = db
        .migration::<Truck>("rewrite-dry")
        .rewrite()
        .dry_run()
        .run()
        .await?;
    assert_eq!((dry.progress.changed, dry.progress.failed), (2, 1));
    assert_eq!(raw_table(&db).await?, before, "a dry run writes nothing");

    let mapped = db
        .migration::<Truck>("map")
        .map(each(|t: &mut Truck| t.trips += 1))
        .run()
        .await?;
    assert_eq!(mapped.failures.len(), 1, "{:?}", mapped.failures);
    assert_refused(&mapped.failures[0].error, ValidationReason::RenamedField);

    let report = db.migration::<Truck>("rewrite").rewrite().run().await?;
    let failure = only_t2_refused_as_renamed(&report, "the two-valued row is reported")?;
    assert!(
        failure.error.to_string().contains("`km`"),
        "{}",
        failure.error
    );
    let after = raw_table(&db).await?;
    assert_eq!(
        after[&key(2)],
        before[&key(2)],
        "left as it was, both values kept"
    );
    for (id, mileage) in [(1, 100), (3, 300)] {
        assert_eq!(after[&key(id)].get("mileage"), Some(&n(mileage)));
        assert!(!after[&key(id)].contains_key("km"), "{:?}", after[&key(id)]);
    }
    Ok(())
}

/// A migration whose every write DynamoDB refuses for one reason (here an empty string
/// set, which DynamoDB does not store) stops after `stop_after_refusals` such items in a
/// row with `MigrationStopped`, instead of reporting every item of the table as failed.
/// The checkpoint it leaves holds the pages finished before the stop and resumes.
#[tokio::test]
async fn a_run_of_identical_refusals_stops_the_migration_with_a_valid_checkpoint() -> TestResult {
    let db = seeded(40).await?;
    let store = MemoryCheckpoints::new();
    let migration = || {
        db.migration::<Truck>("empty-set")
            .set_default("labels", AttributeValue::Ss(Vec::new()))
            .page_size(8)
            .checkpoints(store.clone())
    };
    let err = migration()
        .stop_after_refusals(12)
        .run()
        .await
        .err()
        .ok_or("stopped")?;
    match &err {
        Error::MigrationStopped {
            migration,
            refusals,
            last,
            ..
        } => {
            assert_eq!((migration.as_str(), *refusals), ("empty-set", 12));
            assert!(
                last.to_string().contains("ValidationException")
                    || last.to_string().contains("empty"),
                "{last}"
            );
        }
        other => panic!("expected MigrationStopped, got {other:?}"),
    }
    // Stopped in the second page of trucks: the checkpoint holds whole pages only.
    let saved: Checkpoint = store
        .get("empty-set")
        .ok_or("a checkpoint of the first page")?;
    assert!(
        saved.progress.failed >= 1 && saved.progress.failed < 12,
        "{:?}",
        saved.progress
    );
    assert!(saved.progress.scanned < 43, "{:?}", saved.progress);
    assert!(
        raw_table(&db)
            .await?
            .values()
            .all(|i| !i.contains_key("labels")),
        "nothing was written"
    );
    // The checkpoint is valid: the same migration resumes from it and reads the rest.
    let report = migration().stop_after_refusals(u32::MAX).run().await?;
    assert!(report.resumed);
    assert_eq!(
        report.progress.failed, 40,
        "every truck refused once: {:?}",
        report.progress
    );
    assert_eq!(report.progress.scanned, 42, "{:?}", report.progress);
    // 0 would stop before any write.
    refused(
        migration().stop_after_refusals(0).run(),
        ValidationReason::InvalidOption,
    )
    .await;
    Ok(())
}

/// A versioned entity whose items a map changes: the version moves on, so a writer
/// holding a copy read before the migration conflicts instead of undoing the change; a
/// rewrite (the stored form only) leaves the version as it is.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Fleet, pk = "V#{id}", sk = "VERSIONED")]
pub struct Ledger {
    pub id: u32,
    pub balance: i64,
    #[dynamo(default)]
    pub note: String,
    #[dynamo(version)]
    pub version: u64,
}

/// Ledger 1, read strongly consistent.
async fn ledger(db: &Db<Fleet>) -> Res<Ledger> {
    Ok(db
        .get(Ledger::key(1u32))
        .consistent()
        .await?
        .ok_or("ledger")?)
}

#[tokio::test]
async fn a_map_moves_a_versioned_items_version_on() -> TestResult {
    let db = local::fresh_table::<Fleet>().await?;
    db.put(&Ledger {
        id: 1,
        balance: 10,
        note: String::new(),
        version: 0,
    })
    .await?;
    let before = ledger(&db).await?;
    assert_eq!(before.version, 1);
    db.migration::<Ledger>("rewrite").rewrite().run().await?;
    let rewritten = ledger(&db).await?;
    assert_eq!(rewritten.version, 1, "a rewrite keeps the version");
    let report = db
        .migration::<Ledger>("interest")
        .map(each(|l: &mut Ledger| l.balance += 1))
        .run()
        .await?;
    assert_eq!(report.progress.changed, 1);
    let after = ledger(&db).await?;
    assert_eq!((after.balance, after.version), (11, 2));
    // The application's copy from before the migration: its put conflicts.
    let stale = Ledger {
        note: "stale".into(),
        ..before
    };
    let err = db.put(&stale).await.err().ok_or("a stale put conflicts")?;
    assert!(matches!(err, Error::VersionConflict { .. }), "{err:?}");
    let kept = ledger(&db).await?;
    assert_eq!(kept.balance, 11);
    Ok(())
}

/// DynamoDB Local gives every segment the whole table: each item is read three times,
/// and still changed once.
#[tokio::test]
async fn segments_that_overlap_still_change_each_item_once() -> TestResult {
    let db = with_counters(20).await?;
    let report = db
        .migration::<Counter>("segments")
        .map(each(|c: &mut Counter| c.n += 1))
        .segments(3)
        .page_size(4)
        .run()
        .await?;
    let p = report.progress;
    assert_eq!(p.changed, 20, "{p:?}");
    // Whether or not the segments overlap, every read is a change or finds it made.
    assert!(p.scanned == 20 || p.scanned == 60, "{p:?}");
    assert_eq!(p.changed + p.already, p.scanned, "{p:?}");
    assert_each_counter_once(&db).await?;
    Ok(())
}

#[tokio::test]
async fn a_malformed_item_is_reported_and_the_rest_migrated() -> TestResult {
    let db = seeded(4).await?;
    // A truck row whose model is a number.
    put_raw(
        &db,
        Item::from([
            ("PK".to_owned(), s("T#99")),
            ("SK".to_owned(), s("TRUCK")),
            ("model".to_owned(), n(7)),
        ]),
    )
    .await?;
    // A truck row with more attributes than one 4 KB condition can check.
    let mut wide = Item::from([
        ("PK".to_owned(), s("T#98")),
        ("SK".to_owned(), s("TRUCK")),
        ("model".to_owned(), s("wide")),
    ]);
    for i in 0..300 {
        wide.insert(format!("extra{i}"), n(i));
    }
    put_raw(&db, wide).await?;
    let report = db.migration::<Truck>("malformed").rewrite().run().await?;
    assert_eq!((report.progress.changed, report.progress.failed), (4, 2));
    let wide = failure_at(&report, "T#98").ok_or("the wide row is reported")?;
    assert!(
        matches!(wide.error, Error::Validation { .. }),
        "{:?}",
        wide.error
    );
    let failure = failure_at(&report, "T#99").ok_or("the malformed row is reported")?;
    assert_eq!(failure.key.pk, "T#99");
    match &failure.error {
        Error::Decode(e) => {
            assert_eq!(e.attribute.as_deref(), Some("model"));
            assert!(matches!(e.kind, DecodeErrorKind::WrongType { .. }), "{e:?}");
        }
        other => panic!("expected a decode error, got {other:?}"),
    }
    Ok(())
}

/// The write budget paces the writes by the capacity DynamoDB reports.
#[tokio::test]
async fn the_write_budget_is_honoured() -> TestResult {
    let db = with_counters(30).await?;
    let started = std::time::Instant::now();
    let report = db
        .migration::<Counter>("paced")
        .map(each(|c: &mut Counter| c.n += 1))
        .max_write_units_per_second(20.0)
        .run()
        .await?;
    let elapsed = started.elapsed().as_secs_f64();
    let units = report.progress.write_units;
    assert!(units >= 30.0, "{units} write units reported");
    // The last write may start once the units before it fit in the time elapsed.
    let least = (units - 2.0) / 20.0;
    assert!(
        elapsed >= least,
        "{units} units in {elapsed:.2} s, at most 20 a second"
    );
    Ok(())
}

/// A checkpoint is bound to its migration: another segment count is refused.
#[tokio::test]
async fn a_checkpoint_of_another_shape_is_refused() -> TestResult {
    let db = seeded(3).await?;
    let store = MemoryCheckpoints::new();
    let in_segments = |segments| {
        db.migration::<Truck>("shape")
            .rewrite()
            .segments(segments)
            .checkpoints(store.clone())
    };
    run_until_first_page(in_segments(2).page_size(1)).await;
    assert!(store.get("shape").is_some());
    let err = in_segments(3).run().await.err().ok_or("refused")?;
    assert!(matches!(err, Error::Cursor { .. }), "{err:?}");
    Ok(())
}

/// Writes applied by DynamoDB whose responses are lost (HTTP 500 after the write; the SDK
/// sends the same update again and its condition fails on the migration's own result): each
/// counter is still incremented exactly once, and counted as changed.
#[tokio::test]
async fn lost_responses_change_each_item_once() -> TestResult {
    let db = with_counters(30).await?;
    let (lossy, faults) = lossy(&db, 7, 0.4, "UpdateItem", "migration-lost-responses").await?;
    let report = lossy
        .migration::<Counter>("lossy")
        .map(each(|c: &mut Counter| c.n += 1))
        .run()
        .await?;
    assert!(
        faults.stats().server_errors_after_apply > 0,
        "no response was lost: nothing proved"
    );
    assert_eq!(report.progress.changed, 30, "{report:?}");
    assert_eq!(report.progress.conflicts, 0, "{report:?}");
    assert_each_counter_once(&db).await?;
    Ok(())
}
