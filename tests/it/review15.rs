//! Review 15 (attack): migrations written as `UpdateItem`s conditioned attribute by
//! attribute (`Job::write_if_unchanged`), and the tracing of streams. Rows are changed
//! with the raw SDK as another program would; everything runs against DynamoDB Local.

use crate::common::*;
use crate::spans::{Capture, Captured, Scope};
use dynamo_model::aws_sdk_dynamodb::config::retry::RetryConfig;
use dynamo_model::aws_sdk_dynamodb::primitives::Blob;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::local;
use dynamo_model::local::faults::{client_with_faults, FaultKind, Faults};
use dynamo_model::migrate::MIGRATIONS_ATTRIBUTE;
use dynamo_model::{Db, Entity, Item, Table};
use futures_util::{StreamExt, TryStreamExt};
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "Gs1", pk = "G1PK", sk = "G1SK"))]
pub struct Yard15;

/// A string set, a counter and an optional note.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Yard15, pk = "BAG#{id}", sk = "BAG")]
pub struct Bag {
    #[dynamo(key_format = "unpadded")]
    pub id: u32,
    pub tags: BTreeSet<String>,
    #[dynamo(default)]
    pub n: u64,
    pub note: Option<String>,
}

/// An optional field in a sparse index.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Yard15, pk = "ACC#{id}", sk = "ACC",
         index(Gs1, pk = "EMAIL#{email}", sk = "ACC"))]
pub struct Account {
    #[dynamo(key_format = "unpadded")]
    pub id: u32,
    pub email: Option<String>,
}

fn ss(v: &[&str]) -> AttributeValue {
    AttributeValue::Ss(v.iter().map(|x| (*x).to_owned()).collect())
}

fn bag(id: u32, tags: &[&str]) -> Bag {
    Bag {
        id,
        tags: tags.iter().map(|t| (*t).to_owned()).collect(),
        n: 0,
        note: None,
    }
}

/// Sets attributes of a stored item as another program would (placeholders for every
/// name and value).
async fn raw_set(db: &Db<Yard15>, pk: &str, sk: &str, attrs: &[(&str, AttributeValue)]) -> Res<()> {
    let mut names = HashMap::new();
    let mut values = HashMap::new();
    let mut sets = Vec::new();
    for (i, (name, value)) in attrs.iter().enumerate() {
        names.insert(format!("#a{i}"), (*name).to_owned());
        values.insert(format!(":a{i}"), value.clone());
        sets.push(format!("#a{i} = :a{i}"));
    }
    db.client()
        .update_item()
        .table_name(db.table_name())
        .set_key(Some(raw_key(pk, sk)))
        .update_expression(format!("SET {}", sets.join(", ")))
        .set_expression_attribute_names(Some(names))
        .set_expression_attribute_values(Some(values))
        .send()
        .await?;
    Ok(())
}

async fn raw_delete(db: &Db<Yard15>, pk: &str, sk: &str) -> Res<()> {
    db.client()
        .delete_item()
        .table_name(db.table_name())
        .set_key(Some(raw_key(pk, sk)))
        .send()
        .await?;
    Ok(())
}

/// A set compared as a set (DynamoDB's sets have no order).
fn as_set(v: Option<&AttributeValue>) -> Option<BTreeSet<String>> {
    match v {
        Some(AttributeValue::Ss(x)) => Some(x.iter().cloned().collect()),
        Some(AttributeValue::Ns(x)) => Some(x.iter().cloned().collect()),
        _ => None,
    }
}

/// 150 optional fields, mostly absent in the stored items, and a field added later
/// with a default.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Yard15, pk = "WIDE#{id}", sk = "WIDE")]
pub struct Wide {
    #[dynamo(key_format = "unpadded")]
    pub id: u32,
    #[dynamo(default)]
    pub added: u32,
    pub f000: Option<String>,
    pub f001: Option<String>,
    pub f002: Option<String>,
    pub f003: Option<String>,
    pub f004: Option<String>,
    pub f005: Option<String>,
    pub f006: Option<String>,
    pub f007: Option<String>,
    pub f008: Option<String>,
    pub f009: Option<String>,
    pub f010: Option<String>,
    pub f011: Option<String>,
    pub f012: Option<String>,
    pub f013: Option<String>,
    pub f014: Option<String>,
    pub f015: Option<String>,
    pub f016: Option<String>,
    pub f017: Option<String>,
    pub f018: Option<String>,
    pub f019: Option<String>,
    pub f020: Option<String>,
    pub f021: Option<String>,
    pub f022: Option<String>,
    pub f023: Option<String>,
    pub f024: Option<String>,
    pub f025: Option<String>,
    pub f026: Option<String>,
    pub f027: Option<String>,
    pub f028: Option<String>,
    pub f029: Option<String>,
    pub f030: Option<String>,
    pub f031: Option<String>,
    pub f032: Option<String>,
    pub f033: Option<String>,
    pub f034: Option<String>,
    pub f035: Option<String>,
    pub f036: Option<String>,
    pub f037: Option<String>,
    pub f038: Option<String>,
    pub f039: Option<String>,
    pub f040: Option<String>,
    pub f041: Option<String>,
    pub f042: Option<String>,
    pub f043: Option<String>,
    pub f044: Option<String>,
    pub f045: Option<String>,
    pub f046: Option<String>,
    pub f047: Option<String>,
    pub f048: Option<String>,
    pub f049: Option<String>,
    pub f050: Option<String>,
    pub f051: Option<String>,
    pub f052: Option<String>,
    pub f053: Option<String>,
    pub f054: Option<String>,
    pub f055: Option<String>,
    pub f056: Option<String>,
    pub f057: Option<String>,
    pub f058: Option<String>,
    pub f059: Option<String>,
    pub f060: Option<String>,
    pub f061: Option<String>,
    pub f062: Option<String>,
    pub f063: Option<String>,
    pub f064: Option<String>,
    pub f065: Option<String>,
    pub f066: Option<String>,
    pub f067: Option<String>,
    pub f068: Option<String>,
    pub f069: Option<String>,
    pub f070: Option<String>,
    pub f071: Option<String>,
    pub f072: Option<String>,
    pub f073: Option<String>,
    pub f074: Option<String>,
    pub f075: Option<String>,
    pub f076: Option<String>,
    pub f077: Option<String>,
    pub f078: Option<String>,
    pub f079: Option<String>,
    pub f080: Option<String>,
    pub f081: Option<String>,
    pub f082: Option<String>,
    pub f083: Option<String>,
    pub f084: Option<String>,
    pub f085: Option<String>,
    pub f086: Option<String>,
    pub f087: Option<String>,
    pub f088: Option<String>,
    pub f089: Option<String>,
    pub f090: Option<String>,
    pub f091: Option<String>,
    pub f092: Option<String>,
    pub f093: Option<String>,
    pub f094: Option<String>,
    pub f095: Option<String>,
    pub f096: Option<String>,
    pub f097: Option<String>,
    pub f098: Option<String>,
    pub f099: Option<String>,
    pub f100: Option<String>,
    pub f101: Option<String>,
    pub f102: Option<String>,
    pub f103: Option<String>,
    pub f104: Option<String>,
    pub f105: Option<String>,
    pub f106: Option<String>,
    pub f107: Option<String>,
    pub f108: Option<String>,
    pub f109: Option<String>,
    pub f110: Option<String>,
    pub f111: Option<String>,
    pub f112: Option<String>,
    pub f113: Option<String>,
    pub f114: Option<String>,
    pub f115: Option<String>,
    pub f116: Option<String>,
    pub f117: Option<String>,
    pub f118: Option<String>,
    pub f119: Option<String>,
    pub f120: Option<String>,
    pub f121: Option<String>,
    pub f122: Option<String>,
    pub f123: Option<String>,
    pub f124: Option<String>,
    pub f125: Option<String>,
    pub f126: Option<String>,
    pub f127: Option<String>,
    pub f128: Option<String>,
    pub f129: Option<String>,
    pub f130: Option<String>,
    pub f131: Option<String>,
    pub f132: Option<String>,
    pub f133: Option<String>,
    pub f134: Option<String>,
    pub f135: Option<String>,
    pub f136: Option<String>,
    pub f137: Option<String>,
    pub f138: Option<String>,
    pub f139: Option<String>,
    pub f140: Option<String>,
    pub f141: Option<String>,
    pub f142: Option<String>,
    pub f143: Option<String>,
    pub f144: Option<String>,
    pub f145: Option<String>,
    pub f146: Option<String>,
    pub f147: Option<String>,
    pub f148: Option<String>,
    pub f149: Option<String>,
}

// ------------------------------------------------------------ expression limits

/// An entity with 150 optional fields whose items hold few of them: the condition now
/// names every declared attribute absent from the item (`attribute_not_exists`), so it
/// grows with the declaration rather than with the item. A sparse item must still
/// migrate.
#[tokio::test]
async fn a_sparse_item_of_a_wide_entity_migrates() -> TestResult {
    let db = local::fresh_table::<Yard15>().await?;
    put_raw(
        &db,
        Item::from([
            ("PK".to_owned(), s("WIDE#1")),
            ("SK".to_owned(), s("WIDE")),
            ("_type".to_owned(), s("Wide")),
            ("id".to_owned(), n(1)),
            ("f007".to_owned(), s("seven")),
        ]),
    )
    .await?;
    let report = db.migration::<Wide>("wide").rewrite().run().await?;
    assert!(
        report.failures.is_empty(),
        "a 5-attribute item was refused: {:?}",
        report.failures
    );
    assert_eq!(report.progress.changed, 1, "{:?}", report.progress);
    let item = raw_get(&db, "WIDE#1", "WIDE").await?;
    assert_eq!(item.get("added"), Some(&n(0)));
    assert_eq!(item.get("f007"), Some(&s("seven")));
    Ok(())
}

/// An item with many attributes of another program (180) beside a small entity's: the
/// condition has one comparison per attribute. Whatever DynamoDB thinks of it (its 4 KB
/// expression limit, its 300-operator limit), the migration reports that item and goes
/// on with the others; it never aborts the whole run.
#[tokio::test]
async fn an_item_with_many_foreign_attributes_never_aborts_the_run() -> TestResult {
    let db = local::fresh_table::<Yard15>().await?;
    for id in 0..3 {
        db.put(&bag(id, &["a"])).await?;
    }
    let names: Vec<String> = (0..180).map(|i| format!("x{i:03}")).collect();
    for chunk in names.chunks(60) {
        let attrs: Vec<(&str, AttributeValue)> =
            chunk.iter().map(|name| (name.as_str(), s("v"))).collect();
        raw_set(&db, "BAG#1", "BAG", &attrs).await?;
    }
    let report = db
        .migration::<Bag>("many")
        .set_default("extra", n(1))
        .run()
        .await;
    let report = match report {
        Ok(r) => r,
        Err(e) => panic!("the whole migration failed on one wide item: {e:?}"),
    };
    assert!(report.progress.changed >= 2, "{:?}", report.progress);
    assert_eq!(
        report.progress.changed + report.progress.failed,
        3,
        "{:?}",
        report.progress
    );
    for id in [0, 2] {
        let item = raw_get(&db, &format!("BAG#{id}"), "BAG").await?;
        assert_eq!(item.get("extra"), Some(&n(1)));
    }
    // Whatever happened to the wide one, none of its attributes is lost.
    let wide = raw_get(&db, "BAG#1", "BAG").await?;
    assert!(names.iter().all(|k| wide.get(k) == Some(&s("v"))));
    Ok(())
}

// ------------------------------------------------------------ values in the condition

/// A string set stored in another order than the crate encodes it (another program's
/// write, or DynamoDB's own order): the write's condition compares it as DynamoDB does
/// (as a set), and a second rewrite finds nothing left to do.
#[tokio::test]
async fn a_set_stored_in_another_order_is_rewritten_once() -> TestResult {
    let db = local::fresh_table::<Yard15>().await?;
    db.put(&bag(1, &["a"])).await?;
    raw_set(
        &db,
        "BAG#1",
        "BAG",
        &[("tags", ss(&["zulu", "alpha", "mike"]))],
    )
    .await?;
    let first = db
        .migration::<Bag>("order-1")
        .rewrite()
        .set_default("extra", n(1))
        .run()
        .await?;
    assert!(first.failures.is_empty(), "{:?}", first.failures);
    assert_eq!(first.progress.changed, 1, "{:?}", first.progress);
    let second = db.migration::<Bag>("order-2").rewrite().run().await?;
    assert!(second.failures.is_empty(), "{:?}", second.failures);
    assert_eq!(
        second.progress.changed,
        0,
        "a rewrite of an unchanged item wrote it again: {:?} (stored {:?})",
        second.progress,
        raw_get(&db, "BAG#1", "BAG").await?.get("tags")
    );
    let got = db.get(Bag::key(1u32)).await?.ok_or("bag")?;
    assert_eq!(got.tags.len(), 3);
    Ok(())
}

/// A rename onto an attribute that holds the same set in another order: the same value,
/// so the older name goes (no failure).
#[tokio::test]
async fn a_rename_onto_the_same_set_in_another_order_is_no_conflict() -> TestResult {
    let db = local::fresh_table::<Yard15>().await?;
    db.put(&bag(1, &["a"])).await?;
    raw_set(
        &db,
        "BAG#1",
        "BAG",
        &[("old", ss(&["b", "a", "c"])), ("new", ss(&["a", "b", "c"]))],
    )
    .await?;
    let stored = raw_get(&db, "BAG#1", "BAG").await?;
    let same_order = stored.get("old") == stored.get("new");
    let report = db
        .migration::<Bag>("rename-set")
        .rename_attribute("old", "new")
        .run()
        .await?;
    assert!(
        report.failures.is_empty(),
        "equal sets (stored order equal: {same_order}) reported as different: {:?}",
        report.failures
    );
    let item = raw_get(&db, "BAG#1", "BAG").await?;
    assert!(!item.contains_key("old"));
    assert_eq!(
        as_set(item.get("new")),
        Some(["a", "b", "c"].map(String::from).into())
    );
    Ok(())
}

/// Another program's attributes of every type stay in the condition and in the item:
/// null, booleans, nested lists and maps, binary, binary-, number- and string sets, empty
/// strings, numbers written with trailing zeros.
#[tokio::test]
async fn foreign_values_of_every_type_survive_and_pass_the_condition() -> TestResult {
    let db = local::fresh_table::<Yard15>().await?;
    db.put(&bag(1, &["a"])).await?;
    let map = AttributeValue::M(HashMap::from([
        ("k1".to_owned(), s("v")),
        (
            "k2".to_owned(),
            AttributeValue::L(vec![n(1), s(""), AttributeValue::Null(true)]),
        ),
        ("k3".to_owned(), AttributeValue::M(HashMap::new())),
    ]));
    let foreign: Vec<(&str, AttributeValue)> = vec![
        ("null", AttributeValue::Null(true)),
        ("yes", AttributeValue::Bool(true)),
        ("no", AttributeValue::Bool(false)),
        (
            "list",
            AttributeValue::L(vec![s("x"), map.clone(), AttributeValue::L(vec![])]),
        ),
        ("map", map),
        ("bin", AttributeValue::B(Blob::new(vec![0u8, 255, 7]))),
        (
            "binset",
            AttributeValue::Bs(vec![Blob::new(vec![2u8]), Blob::new(vec![1u8, 0])]),
        ),
        (
            "numset",
            AttributeValue::Ns(vec!["10".into(), "9".into(), "-1.5".into()]),
        ),
        ("strset", ss(&["b", "a"])),
        ("empty", s("")),
        ("num", AttributeValue::N("1.50".into())),
        (
            "big",
            AttributeValue::N("-0.000000000000000000000000000000000001".into()),
        ),
    ];
    raw_set(&db, "BAG#1", "BAG", &foreign).await?;
    let before = raw_get(&db, "BAG#1", "BAG").await?;
    let report = db
        .migration::<Bag>("types")
        .map(|mut b| {
            b.n += 1;
            Some(b)
        })
        .run()
        .await?;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert_eq!(report.progress.changed, 1, "{:?}", report.progress);
    assert_eq!(report.progress.conflicts, 0, "{:?}", report.progress);
    let after = raw_get(&db, "BAG#1", "BAG").await?;
    for (name, _) in &foreign {
        assert_eq!(after.get(*name), before.get(*name), "{name}");
    }
    assert_eq!(after.get("n"), Some(&n(1)));
    Ok(())
}

/// Attribute names that need placeholders or look like expression syntax.
#[tokio::test]
async fn awkward_attribute_names_survive_and_rename() -> TestResult {
    let db = local::fresh_table::<Yard15>().await?;
    db.put(&bag(1, &["a"])).await?;
    let names = [
        "a.b",
        "with space",
        "#hash",
        ":colon",
        "1st",
        "ünïcödé",
        "status",
        "SET",
        "attribute_not_exists",
        "a = b AND c",
        "[0]",
        "😀",
    ];
    let attrs: Vec<(&str, AttributeValue)> = names.iter().map(|k| (*k, s(k))).collect();
    raw_set(&db, "BAG#1", "BAG", &attrs).await?;
    raw_set(&db, "BAG#1", "BAG", &[("old.name #1", s("moved"))]).await?;
    let report = db
        .migration::<Bag>("names")
        .rename_attribute("old.name #1", "new name: 2")
        .set_default("size", n(3))
        .run()
        .await?;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert_eq!(report.progress.changed, 1, "{:?}", report.progress);
    let item = raw_get(&db, "BAG#1", "BAG").await?;
    for k in names {
        assert_eq!(item.get(k), Some(&s(k)), "{k}");
    }
    assert_eq!(item.get("new name: 2"), Some(&s("moved")));
    assert!(!item.contains_key("old.name #1"));
    assert_eq!(item.get("size"), Some(&n(3)));
    Ok(())
}

// ------------------------------------------------------------ races and lost responses

/// Lost responses (the write applied, its response replaced by a 500, the SDK resends it
/// and its condition fails on its own result) on items holding string sets: each item
/// is incremented once, and counted as changed (not as "already" or as a conflict).
#[tokio::test]
async fn lost_responses_on_items_with_sets_apply_once_and_count_as_changed() -> TestResult {
    let db = local::fresh_table::<Yard15>().await?;
    for id in 0..12 {
        db.put(&bag(id, &["zulu", "alpha", "mike", "bravo"]))
            .await?;
    }
    let endpoint = tokio::task::spawn_blocking(local::shared_endpoint).await??;
    let faults = Faults::new(11)
        .rate(0.5)
        .kinds([FaultKind::ServerErrorAfterApply])
        .operations(["UpdateItem"]);
    let retries = RetryConfig::standard()
        .with_max_attempts(40)
        .with_initial_backoff(Duration::from_millis(1))
        .with_max_backoff(Duration::from_millis(10));
    let client = client_with_faults(&endpoint, &faults, retries);
    let partition =
        dynamo_model::aws_sdk_dynamodb::config::retry::RetryPartition::custom("r15-lossy")
            .token_bucket(dynamo_model::aws_sdk_dynamodb::config::retry::TokenBucket::unlimited())
            .build();
    let config = client
        .config()
        .to_builder()
        .retry_partition(partition)
        .build();
    let lossy = Db::<Yard15>::new(
        dynamo_model::aws_sdk_dynamodb::Client::from_conf(config),
        db.table_name().to_owned(),
    );
    let report = lossy
        .migration::<Bag>("lossy")
        .map(|mut b| {
            b.n += 1;
            Some(b)
        })
        .run()
        .await?;
    assert!(faults.stats().server_errors_after_apply > 0, "nothing lost");
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    let bags = db.scan::<Bag>().consistent().all().await?.items;
    assert!(bags.iter().all(|b| b.n == 1), "{bags:?}");
    assert_eq!(
        (
            report.progress.changed,
            report.progress.already,
            report.progress.conflicts
        ),
        (12, 0, 0),
        "{:?}",
        report.progress
    );
    Ok(())
}

/// The item is deleted and written again (with other content) between the read and the
/// write: the write's condition fails, the change is applied to the new item.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_item_deleted_and_written_again_gets_the_change_on_its_new_content() -> TestResult {
    let db = local::fresh_table::<Yard15>().await?;
    db.put(&bag(1, &["a"])).await?;
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let inner = db.clone();
    let report = db
        .migration::<Bag>("reappear")
        .map(move |mut b| {
            if counted.fetch_add(1, Ordering::SeqCst) == 0 {
                block_on(async {
                    raw_delete(&inner, "BAG#1", "BAG").await.unwrap();
                    let mut again = bag(1, &["b"]);
                    again.note = Some("recreated".into());
                    inner.put(&again).await.unwrap();
                });
            }
            b.n += 10;
            Some(b)
        })
        .run()
        .await?;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert_eq!(report.progress.conflicts, 1, "{:?}", report.progress);
    let got = db.get(Bag::key(1u32)).await?.ok_or("bag")?;
    assert_eq!(got.note.as_deref(), Some("recreated"));
    assert_eq!(got.tags, BTreeSet::from(["b".to_owned()]));
    assert_eq!(got.n, 10);
    Ok(())
}

/// The item is written again with the very same content between the read and the
/// write, except that its note (an entity attribute absent in the read) is now set: the
/// write must not drop it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_item_rewritten_with_a_new_optional_field_mid_migration_keeps_it() -> TestResult {
    let db = local::fresh_table::<Yard15>().await?;
    db.put(&bag(1, &["a"])).await?;
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let inner = db.clone();
    let report = db
        .migration::<Bag>("note")
        .map(move |mut b| {
            if counted.fetch_add(1, Ordering::SeqCst) == 0 {
                block_on(async {
                    raw_set(&inner, "BAG#1", "BAG", &[("note", s("mid"))])
                        .await
                        .unwrap();
                });
            }
            b.n += 1;
            Some(b)
        })
        .run()
        .await?;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    let got = db.get(Bag::key(1u32)).await?.ok_or("bag")?;
    assert_eq!((got.note.as_deref(), got.n), (Some("mid"), 1));
    Ok(())
}

/// Two migrations of the same entity with different names, run at once over the same
/// items: both changes land on every item, each once, and both markers are kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_migrations_racing_over_the_same_items_both_apply_once() -> TestResult {
    let db = local::fresh_table::<Yard15>().await?;
    for id in 0..25 {
        db.put(&bag(id, &["a", "b"])).await?;
    }
    let a = db
        .migration::<Bag>("race-a")
        .map(|mut b| {
            b.n += 1;
            Some(b)
        })
        .page_size(3)
        .run();
    let b = db
        .migration::<Bag>("race-b")
        .map(|mut b| {
            b.note = Some(format!("{}+", b.note.unwrap_or_default()));
            Some(b)
        })
        .page_size(4)
        .run();
    let (a, b) = tokio::join!(a, b);
    let (a, b) = (a?, b?);
    assert!(a.failures.is_empty() && b.failures.is_empty());
    assert_eq!((a.progress.changed, b.progress.changed), (25, 25));
    for id in 0..25 {
        let item = raw_get(&db, &format!("BAG#{id}"), "BAG").await?;
        assert_eq!(item.get("n"), Some(&n(1)), "{item:?}");
        assert_eq!(item.get("note"), Some(&s("+")), "{item:?}");
        assert_eq!(
            as_set(item.get(MIGRATIONS_ATTRIBUTE)),
            Some(["race-a", "race-b"].map(String::from).into())
        );
    }
    Ok(())
}

// ------------------------------------------------------------ changes that change little

/// A map that returns the item as it is writes nothing, not even the marker.
#[tokio::test]
async fn a_map_that_changes_nothing_writes_nothing() -> TestResult {
    let db = local::fresh_table::<Yard15>().await?;
    for id in 0..3 {
        db.put(&bag(id, &["x", "a"])).await?;
    }
    let before = raw_get(&db, "BAG#1", "BAG").await?;
    let report = db.migration::<Bag>("same").map(Some).run().await?;
    assert_eq!(report.progress.changed, 0, "{:?}", report.progress);
    assert_eq!(report.progress.unchanged, 3, "{:?}", report.progress);
    assert_eq!(report.progress.write_units, 0.0);
    assert_eq!(raw_get(&db, "BAG#1", "BAG").await?, before);
    Ok(())
}

/// A rewrite writes the index key attributes an item lacks (an index added since),
/// leaving another program's attributes alone.
#[tokio::test]
async fn a_rewrite_writes_missing_index_keys() -> TestResult {
    let db = local::fresh_table::<Yard15>().await?;
    db.put(&Account {
        id: 3,
        email: Some("c@x".into()),
    })
    .await?;
    db.client()
        .update_item()
        .table_name(db.table_name())
        .set_key(Some(raw_key("ACC#3", "ACC")))
        .update_expression("REMOVE G1PK, G1SK SET extra_attr = :o")
        .expression_attribute_values(":o", s("o"))
        .send()
        .await?;
    let report = db.migration::<Account>("index").rewrite().run().await?;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert_eq!(report.progress.changed, 1, "{:?}", report.progress);
    let three = raw_get(&db, "ACC#3", "ACC").await?;
    assert_eq!(three.get("G1PK"), Some(&s("EMAIL#c@x")));
    assert_eq!(three.get("G1SK"), Some(&s("ACC")));
    assert_eq!(three.get("extra_attr"), Some(&s("o")));
    Ok(())
}

/// The module documentation: a rewrite "writes ... the attributes of an index template
/// added or changed since". An item whose index key was written by an older template
/// (here `EMAIL#stale` where the template now renders `EMAIL#a@x`), or by a template
/// whose field is now absent (a sparse index it should leave), is corrected.
#[tokio::test]
async fn a_rewrite_corrects_index_keys_of_a_changed_template() -> TestResult {
    let db = local::fresh_table::<Yard15>().await?;
    let acc = |id: u32, email: Option<&str>| Account {
        id,
        email: email.map(str::to_owned),
    };
    db.put(&acc(1, Some("a@x"))).await?;
    db.put(&acc(2, None)).await?;
    raw_set(&db, "ACC#1", "ACC", &[("G1PK", s("EMAIL#stale"))]).await?;
    raw_set(
        &db,
        "ACC#2",
        "ACC",
        &[("G1PK", s("EMAIL#gone")), ("G1SK", s("ACC"))],
    )
    .await?;
    let report = db.migration::<Account>("index").rewrite().run().await?;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert_eq!(report.progress.changed, 2, "{:?}", report.progress);
    let one = raw_get(&db, "ACC#1", "ACC").await?;
    assert_eq!(one.get("G1PK"), Some(&s("EMAIL#a@x")));
    let two = raw_get(&db, "ACC#2", "ACC").await?;
    assert!(
        !two.contains_key("G1PK") && !two.contains_key("G1SK"),
        "{two:?}"
    );
    Ok(())
}

/// Empty strings, in an entity attribute and another program's, in the condition.
#[tokio::test]
async fn empty_strings_pass_the_condition() -> TestResult {
    let db = local::fresh_table::<Yard15>().await?;
    let mut b = bag(1, &["a"]);
    b.note = Some(String::new());
    db.put(&b).await?;
    raw_set(&db, "BAG#1", "BAG", &[("blank", s(""))]).await?;
    let report = db
        .migration::<Bag>("empty")
        .map(|mut b| {
            b.n = 5;
            Some(b)
        })
        .run()
        .await?;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert_eq!(report.progress.changed, 1, "{:?}", report.progress);
    let item = raw_get(&db, "BAG#1", "BAG").await?;
    assert_eq!(item.get("note"), Some(&s("")));
    assert_eq!(item.get("blank"), Some(&s("")));
    assert_eq!(item.get("n"), Some(&n(5)));
    Ok(())
}

// ------------------------------------------------------------ tracing of streams
//
// Captured as `review14` does, with a thread-scoped subscriber on the test's
// current-thread runtime (copied from there: its types are private to that module).

// ------------------------------------------------------------------ capture

/// Captures the crate's spans on this thread until the scope drops (see `crate::spans`).
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

/// A scan stream dropped after 3 of its 6 items (`take(3)`, the ordinary way to read a
/// few): its operation span says how many items it yielded.
#[tokio::test]
async fn a_stream_dropped_midway_records_its_items() -> TestResult {
    let (cap, _guard) = capture();
    let db = local::fresh_table::<Yard15>().await?;
    for id in 0..6 {
        db.put(&bag(id, &["a"])).await?;
    }
    let got: Vec<Bag> = db
        .scan::<Bag>()
        .page_size(2)
        .stream()
        .take(3)
        .try_collect()
        .await?;
    assert_eq!(got.len(), 3);
    let spans = cap.operations("Scan");
    assert_eq!(spans.len(), 1, "{spans:?}");
    assert_eq!(field(&spans[0].1, "dynamo_model.items"), "3", "{spans:?}");
    Ok(())
}

/// A stream read to its end records its items; one that yields an error (an item that
/// does not decode) records the error's kind on its operation span.
#[tokio::test]
async fn a_stream_that_errors_records_the_error() -> TestResult {
    let (cap, _guard) = capture();
    let db = local::fresh_table::<Yard15>().await?;
    for id in 0..4 {
        db.put(&bag(id, &["a"])).await?;
    }
    let all: Vec<Bag> = db.scan::<Bag>().page_size(3).stream().try_collect().await?;
    assert_eq!(all.len(), 4);
    let spans = cap.operations("Scan");
    assert_eq!(spans.len(), 1, "{spans:?}");
    assert_eq!(field(&spans[0].1, "dynamo_model.items"), "4", "{spans:?}");
    assert_eq!(field(&spans[0].1, "error.type"), "<absent>", "{spans:?}");
    cap.clear();
    raw_set(&db, "BAG#2", "BAG", &[("n", s("not a number"))]).await?;
    let results: Vec<Result<Bag, dynamo_model::Error>> =
        db.scan::<Bag>().page_size(3).stream().collect().await;
    let errors = results.iter().filter(|r| r.is_err()).count();
    assert!(errors >= 1, "{results:?}");
    let spans = cap.operations("Scan");
    assert_eq!(spans.len(), 1, "{spans:?}");
    assert_ne!(field(&spans[0].1, "error.type"), "<absent>", "{spans:?}");
    Ok(())
}

/// A scatter-gather stream inside the application's own span: its operation span is a
/// child of that span, every request span a child of the operation span (the spawned
/// tasks carry it), and the items it yielded are recorded when it ends.
#[tokio::test]
async fn a_scatter_stream_nests_under_the_callers_span() -> TestResult {
    let (cap, _guard) = capture();
    let db = local::fresh_table::<Yard15>().await?;
    for id in 0..5 {
        db.put(&bag(id, &["a"])).await?;
    }
    cap.clear();
    let outer = tracing::info_span!(target: "dynamo_model::review15", "outer");
    let got: Vec<Bag> = {
        let _in = outer.enter();
        db.scatter_query((0..5u32).map(Bag::partition))
            .stream()
            .try_collect()
            .await?
    };
    assert_eq!(got.len(), 5);
    let spans = cap.spans();
    let (outer_id, _) = spans
        .iter()
        .find(|(_, s)| s.name == "outer")
        .ok_or("outer span")?;
    let operations = cap.operations("Query");
    assert_eq!(operations.len(), 1, "{operations:?}");
    let (op_id, op) = &operations[0];
    assert_eq!(op.parent, Some(*outer_id), "{op:?}");
    assert_eq!(field(op, "dynamo_model.items"), "5", "{op:?}");
    let requests: Vec<&Captured> = spans
        .iter()
        .map(|(_, s)| s)
        .filter(|s| s.name == "dynamodb.request")
        .collect();
    assert_eq!(requests.len(), 5, "{requests:?}");
    assert!(
        requests.iter().all(|r| r.parent == Some(*op_id)),
        "{requests:?}"
    );
    Ok(())
}
