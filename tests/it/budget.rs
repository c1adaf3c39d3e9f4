//! Capacity budgets (`dynamo_model::capacity::Budget`) on blocks run against DynamoDB
//! Local: a block within its budget returns its output; one over it fails with the limits
//! exceeded and every call it made.

use crate::common::*;
use dynamo_model::capacity::{Budget, BudgetExceeded, Limit};
use dynamo_model::{local, Entity};
use futures_util::FutureExt;

fn order(i: u128, status: &str, note_bytes: usize) -> Order {
    Order {
        user_id: "budget".into(),
        order_id: uuid::Uuid::from_u128(i + 1),
        created_at: time::OffsetDateTime::UNIX_EPOCH + time::Duration::days(i as i64),
        total_cents: 100,
        status: status.into(),
        note: Some("n".repeat(note_bytes)),
    }
}

/// The only limit `result` exceeded, and its message.
fn exceeded<R: std::fmt::Debug>(result: Result<R, BudgetExceeded>, limit: Limit) -> String {
    let err = result.expect_err("the block went over its budget");
    let limits: Vec<Limit> = err.excesses().iter().map(|e| e.limit).collect();
    assert_eq!(limits, [limit], "{err}");
    err.to_string()
}

/// Asserts that `message` has a line starting with `line`.
#[track_caller]
fn has_line(message: &str, line: &str) {
    assert!(
        message.lines().any(|l| l.starts_with(line)),
        "no line {line:?} in:\n{message}"
    );
}

#[tokio::test]
async fn a_block_within_its_budget_returns_its_output() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    for i in 0..3 {
        db.put(&order(i, "OPEN", 10)).await?;
    }
    // Three small items, eventually consistent: one request, half a unit, none wasted.
    let budget = Budget::new()
        .requests(1)
        .read_units(0.5)
        .write_units(0.0)
        .items_read(3)
        .items_discarded(0);
    let page = budget
        .check(&db, |db| async move {
            db.query(Order::partition("budget"))
                .limit(10)
                .page(None)
                .await
        })
        .await??;
    assert_eq!(page.items.len(), 3);
    let got = Budget::new()
        .requests(1)
        .read_units(0.5)
        .assert(&db, |db| async move {
            db.get(order(0, "OPEN", 10).primary_key()).await
        })
        .await?;
    assert_eq!(got, Some(order(0, "OPEN", 10)));
    Ok(())
}

#[tokio::test]
async fn each_limit_exceeded_fails_with_every_call() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let (a, b) = (order(0, "OPEN", 3000), order(1, "OPEN", 3000));

    // Requests: a put, and a second one refused by its condition (no units, still a call).
    let message = exceeded(
        Budget::new()
            .requests(1)
            .check(&db, |db| async move {
                db.put(&a).await?;
                db.put(&a).if_absent().await
            })
            .await,
        Limit::Requests,
    );
    has_line(&message, "capacity budget exceeded: requests 2 (budget 1)");
    has_line(&message, "  1. PutItem: ");
    has_line(
        &message,
        "  2. PutItem (failed): 0 write units (consumed -, estimated -)",
    );

    // Write units: a 3 KB item is 3 units on the table, more with its indexes.
    let message = exceeded(
        Budget::new()
            .write_units(2.0)
            .check(&db, |db| async move { db.put(&b).await })
            .await,
        Limit::WriteUnits,
    );
    has_line(&message, "capacity budget exceeded: write units ");
    has_line(&message, "  1. PutItem: ");
    assert_eq!(message.lines().count(), 3, "{message}");

    // Read units: two 3 KB items read consistently round to 8 KB, 2 units.
    let message = exceeded(
        Budget::new()
            .read_units(1.5)
            .check(&db, |db| async move {
                db.query(Order::partition("budget"))
                    .consistent()
                    .all()
                    .await
            })
            .await,
        Limit::ReadUnits,
    );
    has_line(
        &message,
        "capacity budget exceeded: read units 2 (budget 1.5)",
    );
    has_line(
        &message,
        "  1. Query: 2 read units (consumed 2, estimated 2), items read 2, returned 2",
    );
    Ok(())
}

/// Items read and not returned: a filter's drops and keys without an item.
#[tokio::test]
async fn items_read_in_vain_exceed_their_budget() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    for i in 0..4 {
        db.put(&order(i, if i == 2 { "PAID" } else { "OPEN" }, 10))
            .await?;
    }
    let paid = Order::fields().status.eq("PAID".to_owned());
    let message = exceeded(
        Budget::new()
            .requests(1)
            .items_discarded(0)
            .check(&db, |db| async move {
                db.query(Order::partition("budget"))
                    .filter(paid)
                    .all()
                    .await
            })
            .await,
        Limit::ItemsDiscarded,
    );
    has_line(
        &message,
        "capacity budget exceeded: items discarded 3 (budget 0)",
    );
    has_line(
        &message,
        "  1. Query: 0.5 read units (consumed 0.5, estimated 0.5), items read 4, returned 1",
    );

    // A get of a missing item, a batch get of two keys of which one has an item, and a
    // transactional read of the same: 5 keys read, 2 items returned.
    let (found, missing) = (order(0, "OPEN", 10), order(9, "OPEN", 10));
    let message = exceeded(
        Budget::new()
            .items_read(4)
            .check(&db, |db| async move {
                db.get(missing.primary_key()).await?;
                let keys = [found.primary_key(), missing.primary_key()];
                db.batch_get::<Order>().keys(keys.clone()).await?;
                let [k1, k2] = keys;
                db.transact_get::<Order>().key(k1).key(k2).await
            })
            .await,
        Limit::ItemsRead,
    );
    has_line(
        &message,
        "capacity budget exceeded: items read 5 (budget 4)",
    );
    has_line(&message, "in all: 3 requests, ");
    has_line(&message, "  1. GetItem: ");
    assert!(message.contains(", items read 1, returned 0"), "{message}");
    has_line(&message, "  2. BatchGetItem: ");
    has_line(&message, "  3. TransactGetItems: ");
    assert_eq!(
        message.matches(", items read 2, returned 1").count(),
        2,
        "{message}"
    );
    Ok(())
}

/// `assert` panics with the whole message and the line that asserted the budget.
#[tokio::test]
async fn an_asserted_budget_panics_with_every_call() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let key = order(0, "OPEN", 10).primary_key();
    let budget = Budget::new().requests(1);
    let line = line!() + 1;
    let outcome = std::panic::AssertUnwindSafe(budget.assert(&db, |db| async move {
        db.get(key.clone()).await?;
        db.get(key).await
    }))
    .catch_unwind()
    .await;
    let Err(payload) = outcome else {
        panic!("two gets went over a budget of one request");
    };
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    has_line(&message, "capacity budget exceeded: requests 2 (budget 1)");
    has_line(&message, "  1. GetItem: ");
    has_line(&message, "  2. GetItem: ");
    assert!(
        message.contains(&format!("(budget asserted at {}:{line}:", file!())),
        "{message}"
    );
    Ok(())
}
