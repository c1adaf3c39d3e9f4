//! Migrations written as `UpdateItem`s conditioned attribute by attribute
//! (`Job::write_if_unchanged`): expression limits as DynamoDB counts them, values compared
//! as DynamoDB compares them (sets in another order, numbers in another notation), which
//! attributes a rewrite keeps, races with other writers and lost responses. Rows are
//! changed with the raw SDK as another program would; everything runs against DynamoDB
//! Local.

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::primitives::Blob;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::migrate::{Report, MIGRATIONS_ATTRIBUTE};
use dynamo_model::{local, Db, Entity, Item, Table};
use rust_decimal::Decimal;
use std::collections::{BTreeSet, HashMap};
use std::str::FromStr;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "Gs1", pk = "G1PK", sk = "G1SK"))]
pub struct Bags;

/// A string set, a counter and an optional note.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Bags, pk = "BAG#{id}", sk = "BAG")]
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
#[dynamo(table = Bags, pk = "ACC#{id}", sk = "ACC",
         index(Gs1, pk = "EMAIL#{email}", sk = "ACC"))]
pub struct Account {
    #[dynamo(key_format = "unpadded")]
    pub id: u32,
    pub email: Option<String>,
}

fn ss(v: &[&str]) -> AttributeValue {
    AttributeValue::Ss(v.iter().map(|x| (*x).to_owned()).collect())
}

pub fn bag(id: u32, tags: &[&str]) -> Bag {
    Bag {
        id,
        tags: tags.iter().map(|t| (*t).to_owned()).collect(),
        n: 0,
        note: None,
    }
}

/// A fresh table holding bag 1, tagged `a`, with the attributes `attrs` (if any) another
/// program set on it.
async fn with_bag_a(attrs: &[(&str, AttributeValue)]) -> Res<local::TempTable<Bags>> {
    let db = local::fresh_table::<Bags>().await?;
    db.put(&bag(1, &["a"])).await?;
    if !attrs.is_empty() {
        raw_set(&db, "BAG#1", "BAG", attrs).await?;
    }
    Ok(db)
}

/// Runs the migration `name` that adds `by` to every bag's `n`; the first time, `write`
/// (another writer's, given a client of the table) runs first, between the migration's
/// read and its write. Asserts that no item failed.
async fn add_after_a_write<F: std::future::Future<Output = ()>>(
    db: &Db<Bags>,
    name: &str,
    by: u64,
    write: impl Fn(Db<Bags>) -> F + Send + Sync + 'static,
) -> Res<Report> {
    let inner = db.clone();
    let report = db
        .migration::<Bag>(name)
        .map(interfered_once(
            |_| true,
            move || block_on(write(inner.clone())),
            move |b: &mut Bag| b.n += by,
        ))
        .run()
        .await?;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    Ok(report)
}

/// A fresh table holding bags `0..count`, each tagged `a`.
pub async fn with_bags(count: u32) -> Res<local::TempTable<Bags>> {
    table_with((0..count).map(|id| bag(id, &["a"]))).await
}

/// Runs the migration `name` that rewrites every item of `E`, and asserts that no item
/// failed.
async fn rewrite_cleanly<E: Entity>(db: &Db<E::Table>, name: &str) -> Res<Report> {
    let report = db.migration::<E>(name).rewrite().run().await?;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    Ok(report)
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
#[dynamo(table = Bags, pk = "WIDE#{id}", sk = "WIDE")]
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
    let db = with_rows::<Bags>([raw_row(
        "WIDE#1",
        "WIDE",
        &[("_type", s("Wide")), ("id", n(1)), ("f007", s("seven"))],
    )])
    .await?;
    let report = db.migration::<Wide>("wide").rewrite().run().await?;
    assert!(
        report.failures.is_empty(),
        "a 5-attribute item was refused: {:?}",
        report.failures
    );
    assert_eq!(report.progress.changed, 1, "{:?}", report.progress);
    let item = raw_get(&db, "WIDE#1", "WIDE").await?;
    assert_holds(&item, &[("added", n(0)), ("f007", s("seven"))]);
    Ok(())
}

/// An item with many attributes of another program (180) beside a small entity's: the
/// condition has one comparison per attribute. Whatever DynamoDB thinks of it (its 4 KB
/// expression limit, its 300-operator limit), the migration reports that item and goes
/// on with the others; it never aborts the whole run.
#[tokio::test]
async fn an_item_with_many_foreign_attributes_never_aborts_the_run() -> TestResult {
    let db = with_bags(3).await?;
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
    let db = with_bag_a(&[("tags", ss(&["zulu", "alpha", "mike"]))]).await?;
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
    let db = with_bag_a(&[("old", ss(&["b", "a", "c"])), ("new", ss(&["a", "b", "c"]))]).await?;
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
    let db = with_bag_a(&[]).await?;
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
        ("num", num("1.50")),
        ("big", num("-0.000000000000000000000000000000000001")),
    ];
    raw_set(&db, "BAG#1", "BAG", &foreign).await?;
    let before = raw_get(&db, "BAG#1", "BAG").await?;
    let report = db
        .migration::<Bag>("types")
        .map(each(|b: &mut Bag| b.n += 1))
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
    let db = with_bag_a(&[]).await?;
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
    let db = local::fresh_table::<Bags>().await?;
    for id in 0..12 {
        db.put(&bag(id, &["zulu", "alpha", "mike", "bravo"]))
            .await?;
    }
    let (lossy, faults) =
        lossy(&db, 11, 0.5, "UpdateItem", "migration-lost-responses-sets").await?;
    let report = lossy
        .migration::<Bag>("lossy")
        .map(each(|b: &mut Bag| b.n += 1))
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
    let db = with_bag_a(&[]).await?;
    let report = add_after_a_write(&db, "reappear", 10, |inner| async move {
        raw_delete(&inner, "BAG#1", "BAG").await.unwrap();
        let mut again = bag(1, &["b"]);
        again.note = Some("recreated".into());
        inner.put(&again).await.unwrap();
    })
    .await?;
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
    let db = with_bag_a(&[]).await?;
    add_after_a_write(&db, "note", 1, |inner| async move {
        raw_set(&inner, "BAG#1", "BAG", &[("note", s("mid"))])
            .await
            .unwrap();
    })
    .await?;
    let got = db.get(Bag::key(1u32)).await?.ok_or("bag")?;
    assert_eq!((got.note.as_deref(), got.n), (Some("mid"), 1));
    Ok(())
}

/// Two migrations of the same entity with different names, run at once over the same
/// items: both changes land on every item, each once, and both markers are kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_migrations_racing_over_the_same_items_both_apply_once() -> TestResult {
    let db = local::fresh_table::<Bags>().await?;
    for id in 0..25 {
        db.put(&bag(id, &["a", "b"])).await?;
    }
    let a = db
        .migration::<Bag>("race-a")
        .map(each(|b: &mut Bag| b.n += 1))
        .page_size(3)
        .run();
    let b = db
        .migration::<Bag>("race-b")
        .map(each(|b: &mut Bag| {
            b.note = Some(format!("{}+", b.note.take().unwrap_or_default()))
        }))
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
    let db = local::fresh_table::<Bags>().await?;
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
    let db = table_with([Account {
        id: 3,
        email: Some("c@x".into()),
    }])
    .await?;
    db.client()
        .update_item()
        .table_name(db.table_name())
        .set_key(Some(raw_key("ACC#3", "ACC")))
        .update_expression("REMOVE G1PK, G1SK SET extra_attr = :o")
        .expression_attribute_values(":o", s("o"))
        .send()
        .await?;
    let report = rewrite_cleanly::<Account>(&db, "index").await?;
    assert_eq!(report.progress.changed, 1, "{:?}", report.progress);
    let three = raw_get(&db, "ACC#3", "ACC").await?;
    assert_holds(
        &three,
        &[
            ("G1PK", s("EMAIL#c@x")),
            ("G1SK", s("ACC")),
            ("extra_attr", s("o")),
        ],
    );
    Ok(())
}

/// The module documentation: a rewrite "writes ... the attributes of an index template
/// added or changed since". An item whose index key was written by an older template
/// (here `EMAIL#stale` where the template now renders `EMAIL#a@x`), or by a template
/// whose field is now absent (a sparse index it should leave), is corrected.
#[tokio::test]
async fn a_rewrite_corrects_index_keys_of_a_changed_template() -> TestResult {
    let db = local::fresh_table::<Bags>().await?;
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
    let report = rewrite_cleanly::<Account>(&db, "index").await?;
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
async fn empty_strings_pass_a_migrations_condition() -> TestResult {
    let db = local::fresh_table::<Bags>().await?;
    let mut b = bag(1, &["a"]);
    b.note = Some(String::new());
    db.put(&b).await?;
    raw_set(&db, "BAG#1", "BAG", &[("blank", s(""))]).await?;
    let report = db
        .migration::<Bag>("empty")
        .map(each(|b: &mut Bag| b.n = 5))
        .run()
        .await?;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert_eq!(report.progress.changed, 1, "{:?}", report.progress);
    let item = raw_get(&db, "BAG#1", "BAG").await?;
    assert_holds(&item, &[("note", s("")), ("blank", s("")), ("n", n(5))]);
    Ok(())
}

// ----------------------------------------------- a table with a plain-attribute index

/// A template index and a multi-attribute index keyed by a plain attribute (`region`).
#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "Gs1", pk = "G1PK", sk = "G1SK"),
    gsi(name = "ByRegion", pk = ["region"])
)]
pub struct Shops;

/// An exact decimal.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shops, pk = "PRICE#{id}", sk = "PRICE")]
pub struct Priced {
    #[dynamo(key_format = "unpadded")]
    pub id: u32,
    pub price: Decimal,
}

/// The entity that puts its items in `ByRegion` (its `region` field is the index key).
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shops, pk = "STORE#{id}", sk = "STORE", index(ByRegion, pk = [region]))]
pub struct Store {
    #[dynamo(key_format = "unpadded")]
    pub id: u32,
    pub region: String,
}

/// An entity that declares neither index, and a field added later with a default.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shops, pk = "MEMBER#{id}", sk = "MEMBER")]
pub struct Member {
    #[dynamo(key_format = "unpadded")]
    pub id: u32,
    pub name: String,
    #[dynamo(default)]
    pub visits: u32,
}

/// A member's item as another program writes it (no `visits`, no write token), with
/// `extra` attributes of that program.
pub fn member_item(id: u32, extra: usize) -> Item {
    let mut item = Item::from([
        ("PK".to_owned(), s(&format!("MEMBER#{id}"))),
        ("SK".to_owned(), s("MEMBER")),
        ("_type".to_owned(), s("Member")),
        ("id".to_owned(), n(u64::from(id))),
        ("name".to_owned(), s("ann")),
    ]);
    for i in 0..extra {
        item.insert(format!("x{i:03}"), s("v"));
    }
    item
}

// ------------------------------------------------------------ expression limits

/// The boundary of DynamoDB's 300 operators, as DynamoDB Local counts them (a
/// comparison, an `attribute_not_exists` and an `AND` are one each): a member item with
/// 142 attributes of another program is checked with 150 clauses (5 read + 142 + the
/// absent `visits`, write token and marker), 299 operators, and migrates; one with 143
/// is reported by the crate itself (a validation error, not DynamoDB's refusal) and left
/// whole. Neither aborts the run.
#[tokio::test]
async fn the_operator_limit_is_counted_as_dynamodb_counts_it() -> TestResult {
    let db = with_rows::<Shops>([member_item(1, 142), member_item(2, 143)]).await?;
    let report = db.migration::<Member>("limits").rewrite().run().await?;
    assert_eq!(
        (report.progress.changed, report.progress.failed),
        (1, 1),
        "{:?} {:?}",
        report.progress,
        report.failures
    );
    let fits = raw_get(&db, "MEMBER#1", "MEMBER").await?;
    assert_eq!(fits.get("visits"), Some(&n(0)));
    assert_eq!(fits.len(), 5 + 142 + 1);
    let wide = raw_get(&db, "MEMBER#2", "MEMBER").await?;
    assert_eq!(wide, member_item(2, 143), "the refused item was changed");
    let failure = format!("{:?}", report.failures);
    assert!(
        failure.contains("Validation") && !failure.contains("ValidationException"),
        "the crate sent a request DynamoDB refused instead of counting it: {failure}"
    );
    Ok(())
}

// ------------------------------------------------------------ numbers compared as DynamoDB does

/// DynamoDB compares numbers by value (a condition `price = 1.50` holds on a stored
/// `1.5`) and a `PutItem` stores them in one canonical form (`1.50` reads back as `1.5`,
/// `1e2` as `100`, `007` as `7`; real DynamoDB does so on every write, DynamoDB Local
/// keeps an `UpdateItem`'s `1.50` as sent). A map that only changes a `Decimal`'s
/// scale (1.5 to 1.50) leaves the number as it is, so the item is unchanged and not
/// written. `same_value` compares the number strings as text: the item is written and
/// counted as changed, and on DynamoDB (which stores 1.5 again) on every later run of a
/// map without a marker; a lost response of such a write is miscounted as a conflict
/// followed by "already migrated" (not shown here: DynamoDB Local keeps `1.50`).
#[tokio::test]
async fn a_number_in_another_notation_is_no_change() -> TestResult {
    let db = local::fresh_table::<Shops>().await?;
    db.put(&Priced {
        id: 1,
        price: Decimal::from_str("1.5")?,
    })
    .await?;
    let stored = raw_get(&db, "PRICE#1", "PRICE").await?;
    assert_eq!(stored.get("price"), Some(&num("1.5")));
    let report = db
        .migration::<Priced>("two-places")
        .map(each(|p: &mut Priced| p.price.rescale(2)))
        .without_marker()
        .run()
        .await?;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert_eq!(
        (report.progress.changed, report.progress.unchanged),
        (0, 1),
        "the same number written again: {:?} (stored now {:?})",
        report.progress,
        raw_get(&db, "PRICE#1", "PRICE").await?.get("price")
    );
    Ok(())
}

// ------------------------------------------------------------ what a rewrite keeps

/// `region` is the key of a multi-attribute index that `Store` declares with a field of
/// its own; `Member` declares no such field and no such index. Another program tags a
/// member with a region (to list it in `ByRegion`): to `Member` that is an attribute it
/// does not declare, which a migration keeps ("attributes the entity does not declare
/// stay as they are"). The rewrite removes it, because every index key attribute of the
/// table counts as declared.
#[tokio::test]
async fn a_rewrite_keeps_another_entitys_plain_index_attribute() -> TestResult {
    let mut item = member_item(1, 0);
    item.insert("region".to_owned(), s("eu"));
    let db = with_rows::<Shops>([item]).await?;
    let report = rewrite_cleanly::<Member>(&db, "visits").await?;
    assert_eq!(report.progress.changed, 1, "{:?}", report.progress);
    let stored = raw_get(&db, "MEMBER#1", "MEMBER").await?;
    assert_eq!(stored.get("visits"), Some(&n(0)));
    assert_eq!(
        stored.get("region"),
        Some(&s("eu")),
        "another program's attribute was removed: {stored:?}"
    );
    Ok(())
}

/// The entity that declares the multi-attribute index keeps its key through a rewrite,
/// with the attribute both an index key and one of its fields (not stripped before the
/// decode); keys of an index `Store` does not render (`G1PK`) are kept by a rewrite, as
/// every attribute it does not declare, and go with `remove_attribute`.
#[tokio::test]
async fn a_rewrite_keeps_the_entitys_own_multi_attribute_key() -> TestResult {
    let store = [
        ("_type", s("Store")),
        ("id", n(1)),
        ("region", s("eu")),
        ("G1PK", s("STALE")),
        ("G1SK", s("STALE")),
    ];
    let db = with_rows::<Shops>([raw_row("STORE#1", "STORE", &store)]).await?;
    let report = rewrite_cleanly::<Store>(&db, "stores").await?;
    // Nothing of the entity's to change: the stale keys are not the entity's.
    assert_eq!(report.progress.unchanged, 1, "{:?}", report.progress);
    let stored = raw_get(&db, "STORE#1", "STORE").await?;
    assert_eq!(stored.get("region"), Some(&s("eu")));
    assert_eq!(stored.get("G1PK"), Some(&s("STALE")), "{stored:?}");
    let report = db
        .migration::<Store>("stale-keys")
        .remove_attribute("G1PK")
        .remove_attribute("G1SK")
        .run()
        .await?;
    assert_eq!(report.progress.changed, 1, "{:?}", report.progress);
    let stored = raw_get(&db, "STORE#1", "STORE").await?;
    assert!(
        !stored.contains_key("G1PK") && !stored.contains_key("G1SK"),
        "{stored:?}"
    );
    assert_eq!(stored.get("region"), Some(&s("eu")));
    // A field, the table's key, the type attribute: refused before anything is read.
    for attribute in ["region", "PK", "_type", "_wt", ""] {
        let err = db
            .migration::<Store>("refused")
            .remove_attribute(attribute)
            .run()
            .await
            .err()
            .ok_or("refused")?;
        assert!(
            matches!(
                err,
                dynamo_model::Error::Validation {
                    reason: dynamo_model::ValidationReason::InvalidOption,
                    ..
                }
            ),
            "{attribute}: {err:?}"
        );
    }
    let stores: Vec<Store> = items_of(db.query(Store::by_region_partition("eu"))).await?;
    assert_eq!(stores.len(), 1);
    Ok(())
}
