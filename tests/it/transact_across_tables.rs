//! A transaction across tables: each operation writes the table of the `Db` it was built
//! on (another table type, another table of the same type, the period tables), all or
//! nothing, with each table's entity-type guard, one idempotency token through retries
//! after ambiguous failures, and the limits checked before sending.

use crate::common::*;
use dynamo_model::error::CancelReason;
use dynamo_model::local::faults::client_with_faults;
use dynamo_model::period::{Period, PeriodTables};
use dynamo_model::{local, Db, Entity, Error, Table, ValidationReason};
use serde::{Deserialize, Serialize};
use time::macros::datetime;

/// A table of another type, with its own names for the key and entity-type attributes.
#[derive(Table)]
#[dynamo(pk = "pk", sk = "sk", entity_type = "kind")]
struct Ledger;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Ledger, pk = "ENTRY#{id}", sk = "ENTRY")]
struct Entry {
    id: String,
    amount: i64,
}

/// Another entity type whose items live under an entry's key.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Ledger, pk = "ENTRY#{id}", sk = "ENTRY")]
struct Memo {
    id: String,
    text: String,
}

/// A move of 10 from account `a0` (if it holds 10) recorded as entry `id` of the ledger,
/// whose amount is added to (so a transaction applied twice shows as 20).
fn booked(
    app: &Db<App>,
    ledger: &Db<Ledger>,
    id: &str,
) -> dynamo_model::transact::TransactWrite<App> {
    let (f, e) = (Account::fields(), Entry::fields());
    app.transact_write()
        .update(
            app.update(Account::key("a0"))
                .add(f.balance, -10)
                .condition(f.balance.ge(10)),
        )
        .update(ledger.update(Entry::key(id)).upsert().add(e.amount, 10))
}

async fn amount(ledger: &Db<Ledger>, id: &str) -> Res<Option<i64>> {
    Ok(ledger
        .get(Entry::key(id))
        .consistent()
        .await?
        .map(|e| e.amount))
}

#[tokio::test]
async fn a_transaction_writes_two_tables_all_or_nothing() -> TestResult {
    let app = with_accounts(&[15, 0]).await?;
    let ledger = local::fresh_table::<Ledger>().await?;

    let input = booked(&app, &ledger, "t1").params()?;
    let tables: Vec<Option<&str>> = input
        .transact_items()
        .iter()
        .map(|item| item.update().map(|u| u.table_name()))
        .collect();
    assert_eq!(tables, [Some(app.table_name()), Some(ledger.table_name())]);
    booked(&app, &ledger, "t1").await?;
    assert_eq!(
        (balance(&app, "a0").await?, amount(&ledger, "t1").await?),
        (5, Some(10))
    );

    // The account cannot pay again: neither table changes.
    let err = booked(&app, &ledger, "t2").await.expect_err("5 < 10");
    let failed = the_one_cancelled(&err);
    assert_eq!((failed.index, failed.entity), (0, "Account"));
    assert_eq!(amount(&ledger, "t2").await?, None);
    assert_eq!(balance(&app, "a0").await?, 5);
    Ok(())
}

#[tokio::test]
async fn each_table_keeps_its_entity_type_guard() -> TestResult {
    let app = with_accounts(&[100, 0]).await?;
    let ledger = local::fresh_table::<Ledger>().await?;
    ledger
        .put(&Memo {
            id: "t1".into(),
            text: "not an entry".into(),
        })
        .await?;
    let err = booked(&app, &ledger, "t1")
        .await
        .expect_err("a memo is stored there");
    let failed = the_one_cancelled(&err);
    assert_eq!(failed.index, 1);
    assert_eq!(
        failed.reason,
        CancelReason::OtherEntityStored("Memo".into())
    );
    assert_eq!(balance(&app, "a0").await?, 100);
    // A condition check on the other table reads its own attributes.
    let e = Entry::fields();
    ledger
        .put(&Entry {
            id: "t2".into(),
            amount: 1,
        })
        .await?;
    let checked = |at_least: i64| {
        app.transact_write()
            .update(
                app.update(Account::key("a1"))
                    .add(Account::fields().balance, 1),
            )
            .check_on(&ledger, Entry::key("t2"), e.amount.ge(at_least))
    };
    checked(1).await?;
    let err = checked(2).await.expect_err("the entry holds 1");
    assert_eq!(the_one_cancelled(&err).index, 1);
    assert_eq!(balance(&app, "a1").await?, 1);
    Ok(())
}

#[tokio::test]
async fn one_key_in_two_tables_is_two_items_and_limits_hold_across_tables() -> TestResult {
    let (first, second) = (with_accounts(&[1]).await?, with_accounts(&[2]).await?);
    let f = Account::fields();
    first
        .transact_write()
        .update(first.update(Account::key("a0")).add(f.balance, 10))
        .update(second.update(Account::key("a0")).add(f.balance, 20))
        .await?;
    assert_eq!(
        (balance(&first, "a0").await?, balance(&second, "a0").await?),
        (11, 22)
    );
    refused(
        first
            .transact_write()
            .update(second.update(Account::key("a0")).add(f.balance, 1))
            .update(second.update(Account::key("a0")).add(f.transfers, 1)),
        ValidationReason::DuplicateKey,
    )
    .await;
    // 101 operations over two tables.
    let many = (0..101).fold(first.transact_write(), |tx, i| {
        let db = if i % 2 == 0 { &first } else { &second };
        tx.update(
            db.update(Account::key(format!("x{i}")))
                .upsert()
                .add(f.balance, 1),
        )
    });
    refused(many, ValidationReason::TooManyOperations).await;
    // 4 MB of items over two tables: eleven puts of 390 KB.
    let big = |i: usize| Memo {
        id: i.to_string(),
        text: "x".repeat(390 * 1024),
    };
    let ledger = local::fresh_table::<Ledger>().await?;
    let heavy = (0..11).fold(first.transact_write(), |tx, i| tx.put(ledger.put(&big(i))));
    refused(heavy, ValidationReason::RequestTooLarge).await;
    Ok(())
}

#[tokio::test]
async fn a_transaction_over_two_tables_replayed_after_lost_answers_applies_once() -> TestResult {
    let faults = applied_then_lost(96, 0.7, "TransactWriteItems").record();
    let app = with_accounts(&[100, 0]).await?;
    let ledger = local::fresh_table::<Ledger>().await?;
    let (flaky_app, flaky_ledger) = (
        faulty(&app, &faults).await?,
        faulty(&ledger, &faults).await?,
    );

    booked(&flaky_app, &flaky_ledger, "t1")
        .retry(contention_policy())
        .await?;
    let stats = faults.stats();
    assert!(stats.server_errors_after_apply >= 2, "{stats:?}");
    let tokens: Vec<serde_json::Value> = faults
        .calls()
        .iter()
        .map(|c| {
            serde_json::from_str::<serde_json::Value>(&c.body)
                .map(|b| b["ClientRequestToken"].clone())
        })
        .collect::<Result<_, _>>()?;
    assert!(
        tokens.len() > 2 && tokens.iter().all(|t| *t == tokens[0]),
        "{tokens:?}"
    );
    // Applied by several attempts, as one transaction: once in each table.
    assert_eq!(balance(&app, "a0").await?, 90);
    assert_eq!(amount(&ledger, "t1").await?, Some(10));
    Ok(())
}

#[tokio::test]
async fn a_transaction_across_period_tables_under_faults_applies_once() -> TestResult {
    let client = local::client().await?;
    let prefix = local::unique_table_name("tx").replace('-', "_");
    let day = datetime!(2026-11-29 22:00 UTC);
    let tables = PeriodTables::new(&Db::<App>::new(client, prefix.as_str()), Period::Day)?;
    tables.create_ahead(day, 1).await?;
    let (today, tomorrow) = (
        tables.db_at(day),
        tables.db_at(datetime!(2026-11-30 01:00 UTC)),
    );
    assert_ne!(today.table_name(), tomorrow.table_name());

    let faults = applied_then_lost(7, 0.6, "TransactWriteItems");
    let endpoint = tokio::task::spawn_blocking(local::shared_endpoint).await??;
    let retries = dynamo_model::aws_sdk_dynamodb::config::retry::RetryConfig::disabled();
    let flaky = PeriodTables::new(
        &Db::<App>::new(
            client_with_faults(&endpoint, &faults, retries),
            prefix.as_str(),
        ),
        Period::Day,
    )?;
    let (flaky_today, flaky_tomorrow) = (
        flaky.db_at(day),
        flaky.db_at(datetime!(2026-11-30 01:00 UTC)),
    );
    let f = Account::fields();
    // The day's closing balance moves to the next day's table; counted on both.
    let moved = |db: &Db<App>, id: &'static str, amount: i64| {
        db.update(Account::key(id))
            .upsert()
            .add(f.balance, amount)
            .add(f.transfers, 1)
    };
    for _ in 0..3 {
        flaky_today
            .transact_write()
            .update(moved(&flaky_today, "close", -5))
            .update(moved(&flaky_tomorrow, "open", 5))
            .retry(contention_policy())
            .await?;
    }
    assert!(
        faults.stats().server_errors_after_apply >= 1,
        "{:?}",
        faults.stats()
    );
    let read = |db: &Db<App>, id: &'static str| {
        let db = db.clone();
        async move { db.get(Account::key(id)).consistent().await }
    };
    let pair = |a: Option<Account>| a.map(|a| (a.balance, a.transfers));
    assert_eq!(pair(read(&today, "close").await?), Some((-15, 3)));
    assert_eq!(pair(read(&tomorrow, "open").await?), Some((15, 3)));
    assert_eq!(read(&today, "open").await?, None);
    assert_eq!(read(&tomorrow, "close").await?, None);
    tables.drop_before(datetime!(2026-12-31 00:00 UTC)).await?;
    Ok(())
}

#[tokio::test]
async fn a_transaction_refuses_an_operation_in_another_region() -> TestResult {
    let app = with_accounts(&[100]).await?;
    let elsewhere: Db<App> = in_another_region(&app, app.table_name());
    let f = Account::fields();
    let err = app
        .transact_write()
        .update(app.update(Account::key("a0")).add(f.balance, -1))
        .update(
            elsewhere
                .update(Account::key("a1"))
                .upsert()
                .add(f.balance, 1),
        )
        .await
        .expect_err("two regions");
    assert!(matches!(err, Error::Validation { .. }), "{err:?}");
    assert!(err.to_string().contains("region"), "{err}");
    assert_eq!(balance(&app, "a0").await?, 100);
    Ok(())
}
