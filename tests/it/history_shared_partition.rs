//! Several versioned entities in one partition under unpadded layouts, as another program
//! writes them (no entity-type attribute: the entities are identified by their keys). The
//! revision range of an unpadded layout (`v1` to `v:`) holds the revisions of every item
//! of the partition (`v1`, `v1GAUGE`, `v1_VALVE`, …), so the history of one item must
//! keep only its own: whole, reversed, paged through cursors with small limits (where an
//! equal slot of another item must not hide one of this item's), and what prune deletes.

use crate::common::*;
use dynamo_model::history::{Keep, Revision, Versioned};
use dynamo_model::{local, Db, Entity, Item, Key, Table};
use std::fmt::Debug;

/// A table written by another program: no entity-type attribute.
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", identify = "keys")]
pub struct Plant;

/// AWS's number-based layout: `v0`, `v1`, …, nothing after the number.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Plant, store_key_fields = false, pk = "PLANT#{id}", sk = "",
         history(width = 0, separator = "", counter_on_latest, numeric_order))]
pub struct Press {
    pub id: String,
    #[dynamo(rename = "Body")]
    pub body: String,
    #[dynamo(version, rename = "Latest")]
    pub latest: u64,
}

/// The same layout with a rest after the number: `v0GAUGE`, `v1GAUGE`, ….
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Plant, store_key_fields = false, pk = "PLANT#{id}", sk = "GAUGE",
         history(width = 0, separator = "", counter_on_latest, numeric_order))]
pub struct Gauge {
    pub id: String,
    #[dynamo(rename = "Body")]
    pub body: String,
    #[dynamo(version, rename = "Latest")]
    pub latest: u64,
}

/// The unpadded layout with `_`, read in key (text) order: `v0_VALVE`, `v1_VALVE`, ….
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Plant, store_key_fields = false, pk = "PLANT#{id}", sk = "VALVE",
         history(width = 0, separator = "_"))]
pub struct Valve {
    pub id: String,
    #[dynamo(rename = "Body")]
    pub body: String,
    #[dynamo(version, rename = "Version")]
    pub version: u64,
}

/// The same layout read in revision order: `v0_PUMP`, `v1_PUMP`, ….
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Plant, store_key_fields = false, pk = "PLANT#{id}", sk = "PUMP",
         history(width = 0, separator = "_", numeric_order))]
pub struct Pump {
    pub id: String,
    #[dynamo(rename = "Body")]
    pub body: String,
    #[dynamo(version, rename = "Version")]
    pub version: u64,
}

const PARTITION: &str = "PLANT#p";

/// The other program's rows of one item: the latest copy under `v0{sep}{rest}` and
/// revisions `1..=n`, bodies `{name}{k}`. `counter`: the number is on the latest copy
/// only (`Latest`), else on every copy (`Version`).
async fn write_item(
    db: &Db<Plant>,
    sep: &str,
    rest: &str,
    name: &str,
    count: u64,
    counter: bool,
) -> TestResult {
    for slot in 0..=count {
        let k = if slot == 0 { count } else { slot };
        let mut item = Item::from([
            ("PK".to_owned(), s(PARTITION)),
            ("SK".to_owned(), s(&format!("v{slot}{sep}{rest}"))),
            ("Body".to_owned(), s(&format!("{name}{k}"))),
        ]);
        if !counter {
            item.insert("Version".to_owned(), n(k));
        } else if slot == 0 {
            item.insert("Latest".to_owned(), n(k));
        }
        put_raw(db, item).await?;
    }
    Ok(())
}

/// The four items of the partition: `press` (12 revisions), `gauge` (11), `valve` (12),
/// `pump` (11); slots 1 to 11 are shared by all, and two-digit slots sort among
/// one-digit ones as text.
async fn plant() -> Res<local::TempTable<Plant>> {
    let db = local::fresh_table::<Plant>().await?;
    write_item(&db, "", "", "press", 12, true).await?;
    write_item(&db, "", "GAUGE", "gauge", 11, true).await?;
    write_item(&db, "_", "VALVE", "valve", 12, false).await?;
    write_item(&db, "_", "PUMP", "pump", 11, false).await?;
    Ok(db)
}

fn seen<E>(r: &Revision<E>, body: &impl Fn(&E) -> String) -> (u64, String) {
    (r.revision, body(&r.value))
}

/// The history of the item of `E` is revisions `1..=n` with bodies `{name}{k}`: whole
/// (in revision order when `numeric`), reversed, and through cursors with small limits.
/// The reads are independent, so they run at once (a history in revision order rereads
/// the whole range on every page: paged one row a request, it is hundreds of requests).
async fn own_history<E>(
    db: &Db<Plant>,
    key: Key<E>,
    body: impl Fn(&E) -> String,
    name: &str,
    n: u64,
    numeric: bool,
) -> TestResult
where
    E: Versioned<Table = Plant> + Debug + Clone + PartialEq,
{
    let versions = db.history::<E>();
    let want: Vec<(u64, String)> = (1..=n).map(|k| (k, format!("{name}{k}"))).collect();
    let history = || versions.revisions(key.clone()).consistent();
    // Pages of one revision (forward in the next config), of a page size under and over
    // the limit, in both directions. A history in revision order rereads the whole range
    // (46 rows) on every page: its walk of one-revision pages reads pages of four rows,
    // not one (600 requests); its rows one a page are read whole both ways below, and at
    // every cursor of the limit-2 walk.
    let one_revision_pages = if numeric { Some(4) } else { Some(1) };
    let configs = [
        (1, one_revision_pages, true),
        (2, Some(1), false),
        (3, None, true),
        (5, Some(2), false),
    ];
    // Whole, one row a DynamoDB page: every page boundary falls on every row, another
    // item's or this one's.
    let (whole, reversed, paged) = tokio::try_join!(
        Box::pin(history().page_size(1).all()),
        Box::pin(history().page_size(1).reverse().all()),
        futures_util::future::try_join_all(configs.map(|(limit, page_size, reverse)| {
            Box::pin(all_pages(history, limit, page_size, reverse))
        })),
    )?;
    let whole = whole.mapped(|r| seen(&r, &body));
    let mut sorted = whole.clone();
    sorted.sort();
    assert_eq!(sorted, want, "history of {name}");
    if numeric {
        assert_eq!(whole, want, "history of {name} in revision order");
    }
    let mut whole_reversed = whole.clone();
    whole_reversed.reverse();
    let reversed = reversed.mapped(|r| seen(&r, &body));
    assert_eq!(reversed, whole_reversed, "reversed history of {name}");
    for ((limit, page_size, reverse), paged) in configs.into_iter().zip(paged) {
        let paged: Vec<_> = paged.iter().map(|r| seen(r, &body)).collect();
        let expected = if reverse { &whole_reversed } else { &whole };
        assert_eq!(
            &paged, expected,
            "paged history of {name}, limit {limit}, page size {page_size:?}, reverse {reverse}"
        );
    }
    Ok(())
}

/// Every item's history, as written, the items read at once.
async fn every_history(db: &Db<Plant>) -> TestResult {
    let press = own_history(db, Press::key("p"), |v| v.body.clone(), "press", 12, true);
    let gauge = own_history(db, Gauge::key("p"), |v| v.body.clone(), "gauge", 11, true);
    let valve = own_history(db, Valve::key("p"), |v| v.body.clone(), "valve", 12, false);
    let pump = own_history(db, Pump::key("p"), |v| v.body.clone(), "pump", 11, true);
    tokio::try_join!(
        Box::pin(press),
        Box::pin(gauge),
        Box::pin(valve),
        Box::pin(pump)
    )?;
    Ok(())
}

#[tokio::test]
async fn the_history_of_one_item_under_an_unpadded_layout_holds_only_its_own_revisions(
) -> TestResult {
    let db = plant().await?;
    every_history(&db).await?;
    // A cursor of one item's history does not continue another's.
    let page = db
        .history::<Valve>()
        .revisions(Valve::key("p"))
        .limit(2)
        .page(None)
        .await?;
    let cursor = page.cursor.ok_or("valve has more than two revisions")?;
    assert!(db
        .history::<Pump>()
        .revisions(Pump::key("p"))
        .limit(2)
        .page(Some(&cursor))
        .await
        .is_err());
    Ok(())
}

#[tokio::test]
async fn pruning_one_item_under_an_unpadded_layout_deletes_only_its_revisions() -> TestResult {
    let db = plant().await?;
    let before = raw_table(&db).await?;
    let removed = db
        .history::<Press>()
        .prune(Press::key("p"), Keep::Newest(2))
        .await?;
    let (mut doomed, mut kept) = (removed.revisions.clone(), removed.kept.clone());
    doomed.sort();
    kept.sort();
    assert_eq!(doomed, (1..=10).collect::<Vec<u64>>());
    assert_eq!(kept, [11, 12]);
    let removed = db
        .history::<Valve>()
        .prune(Valve::key("p"), Keep::Newest(1))
        .await?;
    let mut doomed = removed.revisions.clone();
    doomed.sort();
    assert_eq!(doomed, (1..=11).collect::<Vec<u64>>());
    assert_eq!(removed.kept, [12]);
    // Exactly the pruned rows are gone.
    let after = raw_table(&db).await?;
    let gone: Vec<&str> = before
        .keys()
        .filter(|k| !after.contains_key(*k))
        .map(|(_, sk)| sk.as_str())
        .collect();
    let mut want_gone: Vec<String> = (1..=10)
        .map(|k| format!("v{k}"))
        .chain((1..=11).map(|k| format!("v{k}_VALVE")))
        .collect();
    want_gone.sort();
    assert_eq!(gone, want_gone);
    assert_eq!(after.len(), before.len() - want_gone.len());
    tokio::try_join!(
        Box::pin(own_history(
            &db,
            Gauge::key("p"),
            |v| v.body.clone(),
            "gauge",
            11,
            true
        )),
        Box::pin(own_history(
            &db,
            Pump::key("p"),
            |v| v.body.clone(),
            "pump",
            11,
            true
        )),
    )?;
    Ok(())
}
