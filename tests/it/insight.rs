//! Hot partitions seen from the client (`dynamo_model::insight`), against DynamoDB Local:
//! a warning under skew and none under uniform load of the same volume, on the table's
//! partitions and on an index's, through single-item writes, batches, transactions, gets
//! and queries; keys hashed unless shown; the tracing event; bounded memory.

use crate::common::spans::Scope;
use crate::common::*;
use dynamo_model::capacity::Units;
use dynamo_model::insight::{key_hash, HotWarning, Insight, PartitionKey};
use dynamo_model::{local, Db, Entity};
use futures_util::{stream, StreamExt, TryStreamExt};

/// An order of about 2.5 KB: 3 write units.
fn order(user: &str, i: u128) -> Order {
    Order {
        user_id: user.into(),
        order_id: uuid::Uuid::from_u128(i + 1),
        created_at: time::OffsetDateTime::UNIX_EPOCH + time::Duration::seconds(i as i64),
        total_cents: 100 + i as u64,
        status: format!("S{}", i % 1_000),
        note: Some("n".repeat(2_400)),
    }
}

/// A user of about 2.5 KB (no email: in no index).
fn user(id: &str) -> User {
    let mut user = User::sample(id);
    user.display_name = "d".repeat(2_400);
    user
}

/// Sends `n` operations, 8 at a time.
async fn each_of<F>(n: usize, op: impl Fn(usize) -> F) -> TestResult
where
    F: std::future::Future<Output = Result<(), dynamo_model::Error>>,
{
    stream::iter((0..n).map(op))
        .buffer_unordered(8)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}

fn about<'a>(warnings: &'a [HotWarning], index: Option<&str>) -> Option<&'a HotWarning> {
    warnings
        .iter()
        .find(|w| w.hot.partition.index.as_deref() == index)
}

/// A fresh table of `App`, and a `Db` of it observed by `insight`.
pub async fn observed_app(insight: &Insight) -> Res<(local::TempTable<App>, Db<App>)> {
    let table = local::fresh_table::<App>().await?;
    let db = table.observed(insight);
    Ok((table, db))
}

#[tokio::test]
async fn a_skewed_load_warns_and_a_uniform_one_does_not() -> TestResult {
    let scope = Scope::begin();
    // 5 % of the limits: 50 write units a second (150 read), reachable on DynamoDB Local.
    let insight = Insight::new().warn_at(0.05);
    let (_table, db) = observed_app(&insight).await?;

    // Uniform: 150 users, 450 write units over 150 partitions.
    let users: Vec<User> = (0..150).map(|i| user(&format!("u-{i}"))).collect();
    each_of(users.len(), |i| {
        let (db, u) = (db.clone(), users[i].clone());
        async move { db.put(&u).await.map(drop) }
    })
    .await?;
    assert!(insight.warnings().is_empty(), "{:?}", insight.warnings());
    assert!(scope.capture.events().is_empty());
    let busiest = insight.hot_partitions();
    assert!(busiest.iter().all(|h| h.rate <= 3.0), "{busiest:?}");
    let users_load = insight.by_template();
    assert_eq!(users_load[0].entity_type.as_deref(), Some("User"));
    assert_eq!(users_load[0].template, Some("USER#{user_id}"));
    assert_eq!(users_load[0].write_units, 450.0);

    // Skewed: 60 orders of one user, 180 write units in a second or two, also on the
    // index whose partition key is a constant (`BY_TOTAL`).
    each_of(60, |i| {
        let db = db.clone();
        async move { db.put(&order("hot", i as u128)).await.map(drop) }
    })
    .await?;
    let warnings = insight.warnings();
    let table_warning = about(&warnings, None).ok_or("a warning on the table")?;
    let hot = &table_warning.hot;
    assert_eq!(hot.units, Units::Write);
    assert_eq!(hot.partition.entity_type.as_deref(), Some("Order"));
    assert_eq!(hot.partition.template, Some("USER#{user_id}"));
    assert_eq!(
        hot.partition.key,
        PartitionKey::Hashed(key_hash("USER#hot"))
    );
    assert!(hot.rate >= 50.0 && hot.shards >= 2, "{hot:?}");
    let index_warning = about(&warnings, Some("GSI3")).ok_or("a warning on GSI3")?;
    assert_eq!(index_warning.hot.partition.template, Some("BY_TOTAL"));
    assert_eq!(
        index_warning.hot.partition.key,
        PartitionKey::Hashed(key_hash("BY_TOTAL"))
    );
    // GSI2's partitions (`STATUS#S<i>`) each took one order: no warning.
    assert!(about(&warnings, Some("GSI2")).is_none(), "{warnings:?}");
    let text = table_warning.to_string();
    assert!(text.contains("Order `USER#{user_id}`"), "{text}");
    assert!(text.contains("shard its partition key"), "{text}");
    assert!(!text.contains("USER#hot"), "keys are hashed: {text}");

    // The same warnings as tracing events, and the key never in them.
    let events = scope.capture.events();
    assert_eq!(events.len(), warnings.len(), "{events:?}");
    assert!(events
        .iter()
        .any(
            |e| e.get("dynamo_model.entity").map(String::as_str) == Some("Order")
                && e.get("dynamo_model.template").map(String::as_str) == Some("USER#{user_id}")
        ));
    assert!(events
        .iter()
        .all(|e| e.values().all(|v| !v.contains("USER#hot"))));
    let peaks = insight.hot_partitions();
    assert!(peaks[0].of_limit() >= 0.05, "{peaks:?}");
    Ok(())
}

#[tokio::test]
async fn hot_reads_by_get_and_query_are_read_units_against_the_read_limit() -> TestResult {
    let insight = Insight::new().warn_at(0.05).show_keys(true);
    let (table, db) = observed_app(&insight).await?;
    for i in 0..20 {
        db.put(&order("reader", i)).await?;
    }
    // 20 consistent queries of 20 items of 2.5 KB: about 13 read units each.
    each_of(20, |_| {
        let db = db.clone();
        async move {
            let page = db
                .query(Order::partition("reader"))
                .consistent()
                .all()
                .await?;
            assert_eq!(page.items.len(), 20);
            Ok(())
        }
    })
    .await?;
    let reads: Vec<HotWarning> = insight
        .warnings()
        .into_iter()
        .filter(|w| w.hot.units == Units::Read)
        .collect();
    let hot = &reads.first().ok_or("a read warning")?.hot;
    assert_eq!(hot.limit, 3_000.0);
    assert_eq!(hot.partition.key, PartitionKey::Text("USER#reader".into()));
    assert_eq!(hot.partition.entity_type.as_deref(), Some("Order"));
    // Gets of one item: one unit each, far under the level: no read warning on them.
    let quiet = Insight::new().warn_at(0.05);
    let gets = table.observed(&quiet);
    for i in 0..20 {
        gets.get(order("reader", i).primary_key()).await?;
    }
    assert!(quiet.warnings().is_empty());
    let load = quiet.by_template();
    assert_eq!(
        load[0].read_units, 10.0,
        "20 eventually consistent gets of 2.5 KB"
    );
    Ok(())
}

#[tokio::test]
async fn batches_and_transactions_count_against_each_item_partition() -> TestResult {
    let insight = Insight::new().warn_at(0.05).show_keys(true);
    let (table, db) = observed_app(&insight).await?;
    // A batch write of 50 orders of one user: 150 units on `USER#batch`.
    let orders: Vec<Order> = (0..50).map(|i| order("batch", i)).collect();
    db.batch_write().puts(&orders).await?;
    let load = insight.by_template();
    let table_load = load
        .iter()
        .find(|l| l.index.is_none())
        .ok_or("table load")?;
    // 3 units an order, and 3 more for LSI1 (all attributes) on the same partition.
    assert_eq!(table_load.write_units, 300.0);
    let warned: Vec<String> = insight
        .warnings()
        .iter()
        .map(|w| w.hot.partition.key.to_string())
        .collect();
    assert!(warned.contains(&"USER#batch".to_owned()), "{warned:?}");
    assert!(warned.contains(&"BY_TOTAL".to_owned()), "{warned:?}");

    // Transactions: twice the units, each on its own item's partition.
    let quiet = Insight::new().warn_at(0.05).show_keys(true);
    let tx = table.observed(&quiet);
    for i in 0..3 {
        let o = order(&format!("tx-{i}"), 100 + i);
        tx.transact_write().put(tx.put(&o)).await?;
    }
    let hot = quiet.hot_partitions();
    let base: Vec<&dynamo_model::insight::HotPartition> =
        hot.iter().filter(|h| h.partition.index.is_none()).collect();
    assert_eq!(base.len(), 3, "{hot:?}");
    // Twice 3 units in a transaction, with LSI1's copy on the same partition.
    assert!(base.iter().all(|h| h.rate == 12.0), "{base:?}");
    Ok(())
}

/// More distinct partitions than the insight keeps leave its memory where it was (the unit
/// tests of `insight` take a million through the tracker).
#[tokio::test]
async fn memory_stays_bounded_over_distinct_partitions() -> TestResult {
    let insight = Insight::new().top(16);
    let (_table, db) = observed_app(&insight).await?;
    let users: Vec<User> = (0..300).map(|i| User::sample(&format!("m-{i}"))).collect();
    db.batch_write().puts(&users[..100]).await?;
    let after_100 = insight.footprint();
    db.batch_write().puts(&users[100..]).await?;
    assert_eq!(insight.footprint(), after_100);
    assert!(insight.hot_partitions().len() <= 16);
    Ok(())
}
