//! One table per period (`dynamo_model::period`): routing, creation ahead of time, listing,
//! capacity changes, dropping old periods, and reads across periods newest first.

use crate::common::*;
use dynamo_model::local;
use dynamo_model::period::{Capacity, Period, PeriodTables, TimeRange};
use futures_util::{StreamExt, TryStreamExt};
use time::macros::datetime;
use time::OffsetDateTime;

fn order_at(i: u128, at: OffsetDateTime) -> Order {
    Order {
        user_id: "u".into(),
        order_id: uuid::Uuid::from_u128(i + 1),
        created_at: at,
        total_cents: i as u64,
        status: "OPEN".into(),
        note: None,
    }
}

/// The orders of user `u` from `from` to `to` in every period table, newest first.
async fn newest_first(
    tables: &PeriodTables<App>,
    from: OffsetDateTime,
    to: OffsetDateTime,
) -> Result<Vec<Order>, dynamo_model::Error> {
    tables
        .query_newest_first(TimeRange { from, to }, |db, range| {
            db.query(Order::partition("u"))
                .sk(Order::sk().created_at().between(range.from, range.to))
                .reverse()
                .stream()
        })
        .try_collect()
        .await
}

#[tokio::test]
async fn monthly_tables_route_list_read_across_and_drop() -> TestResult {
    let client = local::client().await?;
    let prefix = local::unique_table_name("ev").replace('-', "_");
    let tables = PeriodTables::new(
        &dynamo_model::Db::<App>::new(client, prefix.as_str()),
        Period::Month,
    )?;

    let created = tables
        .create_ahead(datetime!(2026-09-15 10:00 UTC), 2)
        .await?;
    let names: Vec<String> = created.iter().map(|t| t.name.clone()).collect();
    assert_eq!(
        names,
        [
            format!("{prefix}_2026_09"),
            format!("{prefix}_2026_10"),
            format!("{prefix}_2026_11")
        ]
    );
    // Again: nothing new; one period later: only the new month.
    assert!(tables
        .create_ahead(datetime!(2026-09-30 23:59 UTC), 2)
        .await?
        .is_empty());
    let next = tables
        .create_ahead(datetime!(2026-10-02 00:00 UTC), 2)
        .await?;
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].name, format!("{prefix}_2026_12"));
    let listed = tables.list().await?;
    assert_eq!(listed.len(), 4);
    assert!(
        listed.windows(2).all(|w| w[0].end == w[1].start),
        "oldest first, contiguous"
    );

    // Writes go to the table of their timestamp.
    let mut orders = Vec::new();
    for (i, day) in (0u128..).zip([3i64, 10, 20, 29, 35, 44, 58, 63, 70, 80]) {
        let at = datetime!(2026-09-01 12:00 UTC) + time::Duration::days(day);
        let order = order_at(i, at);
        tables.db_at(at).put(&order).await?;
        orders.push(order);
    }
    let october = tables.db_at(datetime!(2026-10-10 00:00 UTC));
    let in_october: Vec<Order> = items_of(october.query(Order::partition("u"))).await?;
    assert!(!in_october.is_empty());
    assert!(in_october
        .iter()
        .all(|o| o.created_at.month() == time::Month::October));

    // A range across three months, newest first, equals the reference.
    let (from, to) = (
        datetime!(2026-09-20 00:00 UTC),
        datetime!(2026-11-10 00:00 UTC),
    );
    let read = newest_first(&tables, from, to).await?;
    let mut expected: Vec<Order> = orders
        .iter()
        .filter(|o| o.created_at >= from && o.created_at < to)
        .cloned()
        .collect();
    expected.sort_by_key(|o| std::cmp::Reverse(o.created_at));
    assert_eq!(read, expected);
    assert!(read.len() >= 4);
    // The first two only: a stream stopped early.
    let first: Vec<Order> = tables
        .query_newest_first(TimeRange { from, to }, |db, _| {
            db.query(Order::partition("u")).reverse().stream()
        })
        .take(2)
        .try_collect()
        .await?;
    assert_eq!(first.len(), 2);
    assert!(first[0].created_at > first[1].created_at);

    // An old month: provisioned, cheap.
    let september = &listed[0];
    tables
        .set_capacity(september, Capacity::Provisioned { read: 1, write: 1 })
        .await?;
    let described = describe(&tables.db(september)).await?;
    let throughput = described.provisioned_throughput().ok_or("throughput")?;
    assert_eq!(throughput.read_capacity_units(), Some(1));

    // Periods ending by October 1 are dropped; reads skip them.
    let dropped = tables.drop_before(datetime!(2026-10-01 00:00 UTC)).await?;
    assert_eq!(dropped.len(), 1);
    assert_eq!(dropped[0].name, september.name);
    assert_eq!(tables.list().await?.len(), 3);
    let after_drop = newest_first(&tables, from, to).await?;
    assert!(after_drop
        .iter()
        .all(|o| o.created_at >= datetime!(2026-10-01 00:00 UTC)));
    assert_eq!(
        after_drop.len(),
        expected
            .iter()
            .filter(|o| o.created_at.month() != time::Month::September)
            .count()
    );

    tables.drop_before(datetime!(2100-01-01 00:00 UTC)).await?;
    assert!(tables.list().await?.is_empty());
    Ok(())
}
