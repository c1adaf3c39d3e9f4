//! What a page says of the requests behind it: DynamoDB's `Count` and `ScannedCount`
//! summed, and the number of requests, on queries, scans and scatter reads.

use crate::common::*;
use dynamo_model::local;
use dynamo_model::local::faults::Faults;

fn order(i: u128, status: &str) -> Order {
    Order {
        user_id: "pc".into(),
        order_id: uuid::Uuid::from_u128(i + 1),
        created_at: time::OffsetDateTime::UNIX_EPOCH + time::Duration::hours(i as i64),
        total_cents: i as u64,
        status: status.into(),
        note: None,
    }
}

#[tokio::test]
async fn pages_report_counts_and_requests() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    // 40 orders, 1 in 10 paid.
    for i in 0..40u128 {
        db.put(&order(i, if i % 10 == 0 { "PAID" } else { "OPEN" }))
            .await?;
    }
    let (watched, faults) = recorded(&db).await?;
    let sent = |faults: &Faults| faults.calls().len();

    // A filter keeping 4 of 40, read 8 items a request.
    let page = watched
        .query(Order::partition("pc"))
        .filter(Order::fields().status.eq("PAID".to_owned()))
        .page_size(8)
        .all()
        .await?;
    assert_eq!(page.items.len(), 4);
    assert_eq!(page.count, 4, "what matched the filter");
    assert_eq!(page.scanned_count, 40, "what was read");
    assert_eq!(page.requests, sent(&faults));
    assert!(page.requests >= 5, "{}", page.requests);

    // A limit mid-page: DynamoDB returned more than the page keeps.
    let before = sent(&faults);
    let page = watched
        .query(Order::partition("pc"))
        .page_size(10)
        .limit(3)
        .page(None)
        .await?;
    assert_eq!(page.items.len(), 3);
    assert_eq!((page.count, page.scanned_count, page.requests), (10, 10, 1));
    assert_eq!(sent(&faults) - before, 1);

    // A scan.
    let before = sent(&faults);
    let page = watched.scan::<Order>().all().await?;
    assert_eq!(page.items.len(), 40);
    assert_eq!(page.requests, sent(&faults) - before);
    assert_eq!(page.scanned_count, 40);

    // A scatter read over 4 partitions: a request each.
    for user in ["a", "b", "c"] {
        db.put(&Order {
            user_id: user.into(),
            ..order(100, "OPEN")
        })
        .await?;
    }
    let before = sent(&faults);
    let page = watched
        .scatter_query(["pc", "a", "b", "c"].map(Order::partition))
        .all()
        .await?;
    assert_eq!(page.items.len(), 43);
    assert_eq!(page.count, 43);
    assert_eq!(page.requests, sent(&faults) - before);
    assert_eq!(page.requests, 4);

    // Nothing sent: all zero.
    let page = watched.query(Order::partition("pc")).limit(0).all().await?;
    assert_eq!((page.count, page.scanned_count, page.requests), (0, 0, 0));
    Ok(())
}
