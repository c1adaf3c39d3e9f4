//! Review 16 (attack): migrations written as `UpdateItem`s (expression limits as DynamoDB
//! counts them, values compared as DynamoDB compares them, which attributes a rewrite
//! keeps) and the spans of a migration's requests. Rows are written with the raw SDK as
//! another program would; everything runs against DynamoDB Local.

use crate::common::*;
use crate::spans::{Capture, Captured, Scope};
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::local;
use dynamo_model::{Entity, Item, Table};
use rust_decimal::Decimal;
use std::str::FromStr;
use tracing::Instrument;

/// A template index and a multi-attribute index keyed by a plain attribute (`region`).
#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "Gs1", pk = "G1PK", sk = "G1SK"),
    gsi(name = "ByRegion", pk = ["region"])
)]
pub struct Yard16;

/// An exact decimal.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Yard16, pk = "PRICE#{id}", sk = "PRICE")]
pub struct Priced {
    #[dynamo(key_format = "unpadded")]
    pub id: u32,
    pub price: Decimal,
}

/// The entity that puts its items in `ByRegion` (its `region` field is the index key).
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Yard16, pk = "STORE#{id}", sk = "STORE", index(ByRegion, pk = [region]))]
pub struct Store {
    #[dynamo(key_format = "unpadded")]
    pub id: u32,
    pub region: String,
}

/// An entity that declares neither index, and a field added later with a default.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Yard16, pk = "MEMBER#{id}", sk = "MEMBER")]
pub struct Member {
    #[dynamo(key_format = "unpadded")]
    pub id: u32,
    pub name: String,
    #[dynamo(default)]
    pub visits: u32,
}

/// A member's item as another program writes it (no `visits`, no write token), with
/// `extra` attributes of that program.
fn member_item(id: u32, extra: usize) -> Item {
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
    let db = local::fresh_table::<Yard16>().await?;
    put_raw(&db, member_item(1, 142)).await?;
    put_raw(&db, member_item(2, 143)).await?;
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
    let db = local::fresh_table::<Yard16>().await?;
    db.put(&Priced {
        id: 1,
        price: Decimal::from_str("1.5")?,
    })
    .await?;
    let stored = raw_get(&db, "PRICE#1", "PRICE").await?;
    assert_eq!(stored.get("price"), Some(&AttributeValue::N("1.5".into())));
    let report = db
        .migration::<Priced>("two-places")
        .map(|mut p| {
            p.price.rescale(2);
            Some(p)
        })
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
    let db = local::fresh_table::<Yard16>().await?;
    let mut item = member_item(1, 0);
    item.insert("region".to_owned(), s("eu"));
    put_raw(&db, item).await?;
    let report = db.migration::<Member>("visits").rewrite().run().await?;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
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
    let db = local::fresh_table::<Yard16>().await?;
    put_raw(
        &db,
        Item::from([
            ("PK".to_owned(), s("STORE#1")),
            ("SK".to_owned(), s("STORE")),
            ("_type".to_owned(), s("Store")),
            ("id".to_owned(), n(1)),
            ("region".to_owned(), s("eu")),
            ("G1PK".to_owned(), s("STALE")),
            ("G1SK".to_owned(), s("STALE")),
        ]),
    )
    .await?;
    let report = db.migration::<Store>("stores").rewrite().run().await?;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
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
    let stores: Vec<Store> = db
        .query(Store::by_region_partition("eu"))
        .all()
        .await?
        .items;
    assert_eq!(stores.len(), 1);
    Ok(())
}

// ------------------------------------------------------------ spans of a migration

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

/// A migration run inside the application's span: its Scan and UpdateItem request spans
/// are children of that span.
#[tokio::test]
async fn a_migrations_requests_nest_under_the_callers_span() -> TestResult {
    let (cap, _guard) = capture();
    let db = local::fresh_table::<Yard16>().await?;
    put_raw(&db, member_item(1, 0)).await?;
    put_raw(&db, member_item(2, 0)).await?;
    cap.clear();
    let outer = tracing::info_span!(target: "dynamo_model::review16", "outer");
    let report = db
        .migration::<Member>("spans")
        .rewrite()
        .run()
        .instrument(outer)
        .await?;
    assert_eq!(report.progress.changed, 2, "{:?}", report.progress);
    let spans = cap.spans();
    let (outer_id, _) = spans
        .iter()
        .find(|(_, s)| s.name == "outer")
        .ok_or("outer span")?;
    let scans = cap.requests("Scan");
    let updates = cap.requests("UpdateItem");
    assert!(!scans.is_empty(), "{spans:?}");
    assert_eq!(updates.len(), 2, "{spans:?}");
    for (_, request) in scans.iter().chain(&updates) {
        assert_eq!(request.parent, Some(*outer_id), "{request:?}");
    }
    Ok(())
}

/// The request spans of a migration ask DynamoDB for the capacity consumed
/// (`ReturnConsumedCapacity::Total`) like a query's or a scan's, and a query's and a
/// scan's request spans record it with the items of the page: a migration's record
/// neither, nor the error of an UpdateItem whose condition failed.
#[tokio::test]
async fn a_migrations_request_spans_record_items_and_capacity() -> TestResult {
    let (cap, _guard) = capture();
    let db = local::fresh_table::<Yard16>().await?;
    put_raw(&db, member_item(1, 0)).await?;
    cap.clear();
    let report = db.migration::<Member>("fields").rewrite().run().await?;
    assert_eq!(report.progress.changed, 1, "{:?}", report.progress);
    let scans = cap.requests("Scan");
    assert!(!scans.is_empty());
    let first = &scans[0].1;
    assert_eq!(field(first, "dynamo_model.items"), "1", "{first:?}");
    assert_ne!(
        field(first, "aws.dynamodb.consumed_capacity"),
        "<absent>",
        "{first:?}"
    );
    let updates = cap.requests("UpdateItem");
    assert_eq!(updates.len(), 1);
    assert_ne!(
        field(&updates[0].1, "aws.dynamodb.consumed_capacity"),
        "<absent>",
        "{updates:?}"
    );
    Ok(())
}
