//! Estimated capacity (`dynamo_model::capacity`) next to what DynamoDB Local reports.

use crate::common::*;
use dynamo_model::{local, Entity};

fn order(i: usize, note_bytes: usize) -> Order {
    Order {
        user_id: "cap".into(),
        order_id: uuid::Uuid::from_u128(i as u128 + 1),
        created_at: time::OffsetDateTime::UNIX_EPOCH + time::Duration::days(i as i64),
        total_cents: 100,
        status: "OPEN".into(),
        note: Some("n".repeat(note_bytes)),
    }
}

/// Queries and batch gets of existing items: the estimate from the items' sizes is what
/// DynamoDB Local charges (its known misreports concern missing items only).
#[tokio::test]
async fn estimates_match_the_reported_capacity() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    // Sizes straddling 4 KB boundaries, so rounding matters.
    let orders: Vec<Order> = (0..12).map(|i| order(i, 900 * i + 50)).collect();
    for o in &orders {
        db.put(o).await?;
    }
    for consistent in [false, true] {
        let mut query = db.query(Order::partition("cap"));
        if consistent {
            query = query.consistent();
        }
        let page = query.all().await?;
        assert_eq!(page.items.len(), orders.len());
        assert!(page.estimated_capacity > 1.0);
        assert_eq!(
            page.estimated_capacity, page.consumed_capacity,
            "query, consistent = {consistent}"
        );
    }
    let mut batch = db
        .batch_get::<Order>()
        .keys(orders.iter().map(|o| o.primary_key()));
    batch = batch.consistent();
    let out = batch.await?;
    assert_eq!(out.items.len(), orders.len());
    assert_eq!(out.estimated_capacity, out.consumed_capacity, "batch get");
    Ok(())
}

/// A metered `Db` records every call with DynamoDB's figure next to the estimate: single
/// items, batches, transactions and queries, and the several calls of one chunked put.
#[tokio::test]
async fn a_meter_records_every_call_with_its_estimate() -> TestResult {
    use dynamo_model::capacity::{Meter, Units};
    let db = local::fresh_table::<App>().await?;
    let meter = Meter::new();
    let m = db.metered(&meter);
    let big = order(1, 2500); // between 2 and 3 KB: 3 write units
    let small = order(2, 10);
    m.put(&big).await?;
    m.put(&small).await?;
    let got = m.get(big.primary_key()).consistent().await?;
    assert!(got.is_some());
    m.get(order(3, 0).primary_key()).await?; // missing: half a unit, eventually consistent
    let updated = m
        .update(small.primary_key())
        .set(Order::fields().status, "PAID".to_owned())
        .await?;
    assert_eq!(updated.status, "PAID");
    m.query(Order::partition("cap")).consistent().all().await?;
    m.batch_write()
        .put(&order(4, 5000))
        .put(&order(5, 100))
        .await?;
    m.transact_write().put(m.put(&order(6, 1500))).await?;
    m.delete(small.primary_key()).await?;
    // The delete's estimate is unknown, so the sum's is.
    assert_eq!(meter.estimated(), None);
    assert!(meter.consumed() > 0.0);
    let charges = meter.take();
    let ops: Vec<&str> = charges.iter().map(|c| c.operation).collect();
    assert_eq!(
        ops,
        [
            "PutItem",
            "PutItem",
            "GetItem",
            "GetItem",
            "UpdateItem",
            "Query",
            "BatchWriteItem",
            "TransactWriteItems",
            "DeleteItem"
        ]
    );
    for c in &charges {
        assert!(c.consumed.is_some(), "{c:?}: DynamoDB reported a figure");
        assert!(c.consumed_by_table <= c.consumed, "{c:?}");
        if let Some(estimated) = c.estimated {
            // Writes also write the indexes: the estimate is the table's part.
            // (DynamoDB Local gives no breakdown for batch writes: there the table's
            // part is at most the whole.)
            match (c.units, c.consumed_by_table) {
                (Units::Write, Some(table)) => assert_eq!(estimated, table, "{c:?}"),
                (Units::Write, None) => assert!(Some(estimated) <= c.consumed, "{c:?}"),
                (Units::Read, _) => assert_eq!(Some(estimated), c.consumed, "{c:?}"),
                (units, _) => panic!("{units:?}: units this test does not know"),
            }
        }
    }
    let estimate = |op: &str| {
        charges
            .iter()
            .find(|c| c.operation == op)
            .and_then(|c| c.estimated)
    };
    assert_eq!(charges[0].estimated, Some(3.0), "{:?}", charges[0]);
    assert_eq!(charges[0].units, Units::Write);
    assert_eq!(
        charges[2].estimated,
        Some(1.0),
        "a consistent read under 4 KB"
    );
    assert_eq!(
        charges[3].estimated,
        Some(0.5),
        "a missing item still costs"
    );
    assert_eq!(charges[2].units, Units::Read);
    // The update returns the whole new item (ALL_NEW), so its size is known.
    assert_eq!(estimate("UpdateItem"), Some(1.0));
    // 5 KB + a small item: 6 + 1 units; a transactional put costs twice.
    assert_eq!(estimate("BatchWriteItem"), Some(7.0));
    assert_eq!(estimate("TransactWriteItems"), Some(4.0));
    // A delete returns nothing by default: its cost is the item's, unknown here.
    assert_eq!(estimate("DeleteItem"), None);
    assert!(meter.charges().is_empty(), "take() left no record");
    assert_eq!(meter.estimated(), Some(0.0));

    // A transactional read, and a batch read.
    let out = m
        .transact_get::<Order>()
        .key(big.primary_key())
        .key(order(4, 0).primary_key())
        .await?;
    assert_eq!(out.len(), 2);
    m.batch_get::<Order>()
        .keys([big.primary_key(), order(4, 0).primary_key()])
        .consistent()
        .await?;
    let reads = meter.take();
    assert_eq!(reads.len(), 2, "{reads:?}");
    // 2.6 KB and 5.1 KB: 1 + 2 units, twice in a transaction.
    assert_eq!(reads[0].estimated, Some(6.0), "{:?}", reads[0]);
    assert_eq!(reads[1].estimated, Some(3.0), "{:?}", reads[1]);
    for c in &reads {
        assert_eq!(c.estimated, c.consumed, "{c:?}");
    }
    // An unmetered Db records nothing.
    db.get(big.primary_key()).await?;
    assert!(meter.charges().is_empty());
    assert_eq!(meter.calls(), 0);

    // A failed call is recorded without figures; a projected read has no estimate.
    let err = m.put(&big).if_absent().await.unwrap_err();
    assert!(
        matches!(err, dynamo_model::Error::ConditionFailed { .. }),
        "{err}"
    );
    m.query(Order::partition("cap")).keys_only().all().await?;
    let last = meter.take();
    assert_eq!(last.len(), 2, "{last:?}");
    assert!(!last[0].succeeded && last[0].estimated.is_none() && last[0].consumed.is_none());
    assert!(last[1].succeeded);
    // Totals outlive the kept records.
    let small_history = Meter::with_history(1);
    let m = db.metered(&small_history);
    m.get(big.primary_key()).await?;
    m.get(big.primary_key()).await?;
    assert_eq!(
        (small_history.calls(), small_history.charges().len()),
        (2, 1)
    );
    assert_eq!(
        small_history.consumed_units(Units::Read),
        small_history.consumed()
    );
    assert!(small_history.consumed() >= 1.0);
    Ok(())
}
