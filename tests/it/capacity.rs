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
