//! E-commerce orders (seeds 000, 004): a user's orders in a date range, newest first, from
//! the table; every user's recent orders (last 24 h / 7 days / month) from a GSI whose
//! partition key is a fixed value and whose sort key is the order timestamp; and a sparse
//! GSI of open orders that an order enters when placed and leaves when shipped.
//!
//! Run: `cargo run -p examples --bin ecommerce_orders`

use dynamo_model::{Entity, Table};
use futures_util::{stream, StreamExt, TryStreamExt};
use serde::{Deserialize, Serialize};
use time::macros::datetime;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
    gsi(name = "GSI2", pk = "GSI2PK", sk = "GSI2SK")
)]
struct Shop;

/// In the user's partition, sorted by time; also in GSI1 under the one partition
/// `ORDERS`, sorted by time across all users. (A single GSI partition takes up to 1,000
/// writes per second; beyond that, shard it.) In GSI2 only while open: `open_since` is
/// `Some` (sparse index).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, pk = "USER#{user_id}", sk = "ORDER#{created_at}#{order_id}",
         index(GSI1, pk = "ORDERS", sk = "{created_at}#{order_id}"),
         index(GSI2, pk = "OPEN_ORDERS", sk = "{open_since}#{order_id}"))]
struct Order {
    user_id: String,
    order_id: Uuid,
    created_at: OffsetDateTime,
    total_cents: u64,
    open_since: Option<OffsetDateTime>,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Deterministic pseudo-random numbers (no randomness needed to be realistic here).
fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *seed >> 33
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let db = examples::table::<Shop>("ecommerce-orders").await?;
    let now = datetime!(2024-06-30 12:00 UTC);

    // 8 users × 50 orders over the last 60 days.
    let mut seed = 7;
    let mut orders = Vec::new();
    for u in 0..8 {
        for _ in 0..50 {
            let minutes = (lcg(&mut seed) % (60 * 24 * 60)) as i64;
            let created_at = now - Duration::minutes(minutes);
            orders.push(Order {
                user_id: format!("user-{u}"),
                order_id: Uuid::from_u128(u128::from(lcg(&mut seed))),
                created_at,
                total_cents: 500 + lcg(&mut seed) % 20_000,
                // Orders of the last 3 days are still open.
                open_since: (now - created_at < Duration::days(3)).then_some(created_at),
            });
        }
    }
    stream::iter(&orders)
        .map(|o| db.put(o).if_absent().send())
        .buffer_unordered(16)
        .try_collect::<Vec<()>>()
        .await?;
    println!("wrote {} orders of 8 users", orders.len());

    // 1. One user's orders in June 1–15, newest first (table query, sort-key range).
    let (from, to) = (
        datetime!(2024-06-01 00:00 UTC),
        datetime!(2024-06-15 23:59:59.999999999 UTC),
    );
    let page = db
        .query(Order::partition("user-3"))
        .sk(Order::sk().created_at().between(from, to))
        .reverse()
        .all()
        .await?;
    let mut expected: Vec<&Order> = orders
        .iter()
        .filter(|o| o.user_id == "user-3" && o.created_at >= from && o.created_at <= to)
        .collect();
    expected.sort_by_key(|o| std::cmp::Reverse((o.created_at, o.order_id)));
    assert_eq!(page.items.iter().collect::<Vec<_>>(), expected);
    println!(
        "user-3, June 1-15, newest first: {} orders ({:.1} RCU), first {} at {}",
        page.items.len(),
        page.consumed_capacity,
        page.items
            .first()
            .map(|o| o.order_id.to_string())
            .unwrap_or_default(),
        page.items
            .first()
            .map(|o| o.created_at.to_string())
            .unwrap_or_default(),
    );

    // 2. Every user's orders of the last 24 hours / 7 days / month (GSI1, fixed partition).
    for (label, window) in [
        ("24 hours", Duration::hours(24)),
        ("7 days", Duration::days(7)),
        ("month", Duration::days(30)),
    ] {
        let since = now - window;
        let page = db
            .query(Order::gsi1_partition())
            .sk(Order::gsi1_sk().created_at().ge(since))
            .reverse()
            .all()
            .await?;
        let expected = orders.iter().filter(|o| o.created_at >= since).count();
        assert_eq!(page.items.len(), expected, "orders of the last {label}");
        assert!(
            page.items
                .windows(2)
                .all(|w| w[0].created_at >= w[1].created_at),
            "newest first"
        );
        assert!(page.items.iter().all(|o| o.created_at >= since));
        println!(
            "all users, last {label}: {} orders ({:.1} RCU), users: {}",
            page.items.len(),
            page.consumed_capacity,
            page.items
                .iter()
                .map(|o| o.user_id.as_str())
                .collect::<std::collections::BTreeSet<_>>()
                .len()
        );
    }

    // 3. The ten most recent orders overall: one page, no over-reading.
    let latest = db
        .query(Order::gsi1_partition())
        .reverse()
        .limit(10)
        .page(None)
        .await?;
    let mut all_sorted: Vec<&Order> = orders.iter().collect();
    all_sorted.sort_by_key(|o| std::cmp::Reverse((o.created_at, o.order_id)));
    assert_eq!(latest.items.iter().collect::<Vec<_>>(), all_sorted[..10]);
    println!("latest 10 orders: newest at {}", latest.items[0].created_at);

    // 4. Open orders (sparse GSI2): oldest first, the ones to ship next.
    let open = db.query(Order::gsi2_partition()).all().await?;
    let expected_open = orders.iter().filter(|o| o.open_since.is_some()).count();
    assert_eq!(open.items.len(), expected_open);
    assert!(
        open.items
            .windows(2)
            .all(|w| w[0].open_since <= w[1].open_since),
        "oldest first"
    );
    println!(
        "open orders: {} ({:.1} RCU; the index holds only open orders)",
        open.items.len(),
        open.consumed_capacity
    );

    // Shipping the three oldest: clearing `open_since` removes their GSI2 key attributes
    // in the same update, so they leave the index.
    let f = Order::fields();
    for o in &open.items[..3] {
        db.update(Order::key(OrderKey {
            user_id: o.user_id.as_str(),
            created_at: o.created_at,
            order_id: o.order_id,
        }))
        .set(f.open_since, None)
        .await?;
        println!("shipped {} (open since {})", o.order_id, o.created_at);
    }
    let still_open = db.query(Order::gsi2_partition()).all().await?.items;
    assert_eq!(still_open.len(), expected_open - 3);
    assert!(open.items[..3]
        .iter()
        .all(|shipped| !still_open.iter().any(|o| o.order_id == shipped.order_id)));
    let oldest = db
        .query(Order::gsi2_partition())
        .limit(1)
        .all()
        .await?
        .items;
    assert_eq!(
        oldest.first().map(|o| o.order_id),
        open.items.get(3).map(|o| o.order_id)
    );
    println!("open orders after shipping 3: {}", still_open.len());

    println!("ecommerce_orders: all assertions passed");
    Ok(())
}
