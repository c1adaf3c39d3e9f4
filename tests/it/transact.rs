//! Transactions: all or nothing, cancellation reasons per operation, idempotent retries.

use crate::common::*;
use dynamo_model::local::faults::{FaultKind, Faults};
use dynamo_model::transact::CancelReason;
use dynamo_model::{local, Error};

#[tokio::test]
async fn a_transaction_applies_everything_or_nothing() -> TestResult {
    let db = with_accounts(&[100, 0]).await?;
    transfer(&db, "a0", "a1", 60).await?;
    assert_eq!(balances(&db).await?, (40, 60));

    // Not enough money: the condition on operation 0 fails and nothing is applied.
    let err = transfer(&db, "a0", "a1", 50).await.unwrap_err();
    let op = the_one_cancelled(&err);
    assert_eq!(
        (op.index, op.entity, op.reason.clone()),
        (0, "Account", CancelReason::ConditionalCheckFailed)
    );
    assert_eq!(op.key, "PK=ACCOUNT#a0, SK=ACCOUNT");
    let current: Account = op.current().ok_or("no current item")??;
    assert_eq!(current.balance, 40);
    assert_eq!(balances(&db).await?, (40, 60));

    // An update of a missing item fails too, its reason saying so (no item).
    let err = transfer(&db, "a0", "nobody", 10).await.unwrap_err();
    let op = &cancelled(&err)[0];
    assert_eq!(
        (op.index, op.current.is_none(), op.reason.clone()),
        (1, true, CancelReason::NotFound)
    );
    assert_eq!(balance(&db, "a0").await?, 40);
    Ok(())
}

#[tokio::test]
async fn puts_deletes_and_checks_across_entity_types() -> TestResult {
    let db = with_accounts(&[10, 0]).await?;
    let f = Account::fields();
    db.transact_write()
        .put(db.put(&User::sample("u")).if_absent())
        .check(Account::key("a0"), f.balance.gt(5))
        .delete(db.delete(Account::key("a1")))
        .await?;
    assert!(db.get(User::key("u")).await?.is_some());
    assert!(db.get(Account::key("a1")).await?.is_none());

    // A failing check cancels the writes around it.
    let err = db
        .transact_write()
        .check(Account::key("a0"), f.balance.gt(50))
        .delete(db.delete(User::key("u")))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::TransactionCanceled { operations, .. } if operations[0].index == 0),
        "{err:?}"
    );
    assert!(db.get(User::key("u")).await?.is_some());

    let err = db
        .transact_write()
        .put(db.put(&User::sample("u")).if_absent())
        .put(db.put(&User::sample("v")))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::TransactionCanceled { operations, .. } if operations[0].index == 0),
        "{err:?}"
    );
    assert!(db.get(User::key("v")).await?.is_none(), "nothing applied");
    Ok(())
}

#[tokio::test]
async fn limits_are_checked_before_sending() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let users: Vec<User> = (0..101).map(|i| User::sample(&format!("u{i}"))).collect();
    let tx = users
        .iter()
        .fold(db.transact_write(), |tx, u| tx.put(db.put(u)));
    let err = tx.await.unwrap_err();
    assert!(
        matches!(&err, Error::Validation { message, reason: dynamo_model::ValidationReason::TooManyOperations, .. } if message.contains("101")),
        "{err:?}"
    );
    assert!(
        db.scan::<User>().all().await?.items.is_empty(),
        "nothing was sent"
    );

    refused(
        db.transact_write()
            .put(db.put(&users[0]))
            .delete(db.delete(User::key("u0"))),
        dynamo_model::ValidationReason::DuplicateKey,
    )
    .await;
    refused(
        db.transact_write(),
        dynamo_model::ValidationReason::NoOperations,
    )
    .await;
    Ok(())
}

#[tokio::test]
async fn the_same_token_applies_a_transaction_once() -> TestResult {
    let db = with_accounts(&[100, 0]).await?;
    transfer(&db, "a0", "a1", 10).token("transfer-42").await?;
    // A client retrying the same request (e.g. after a timeout) with the same token.
    transfer(&db, "a0", "a1", 10).token("transfer-42").await?;
    assert_eq!(balances(&db).await?, (90, 10));
    refused(
        transfer(&db, "a0", "a1", 10).token("x".repeat(37)),
        dynamo_model::ValidationReason::InvalidOption,
    )
    .await;
    Ok(())
}

#[tokio::test]
async fn conflicts_and_ambiguous_failures_are_retried_exactly_once() -> TestResult {
    let faults = Faults::new(9)
        .rate(0.5)
        .kinds([
            FaultKind::TransactionConflict,
            FaultKind::ServerErrorAfterApply,
            FaultKind::ServerError,
        ])
        .operations(["TransactWriteItems"]);
    let db = with_accounts(&[1_000, 0]).await?;
    let flaky = faulty(&db, &faults).await?;
    for _ in 0..20 {
        transfer(&flaky, "a0", "a1", 10).await?;
    }
    let stats = faults.stats();
    assert!(
        stats.transaction_conflicts > 0 && stats.server_errors_after_apply > 0,
        "{stats:?}"
    );
    // 20 transfers, each applied exactly once even when its first attempt was applied
    // and then reported as a failure.
    assert_eq!(balances(&db).await?, (800, 200));
    let a0 = db.get(Account::key("a0")).await?.ok_or("missing")?;
    assert_eq!(a0.transfers, 20);
    Ok(())
}

#[tokio::test]
async fn transact_get_reads_several_items_at_once() -> TestResult {
    let db = with_accounts(&[5, 6]).await?;
    let got = db
        .transact_get::<Account>()
        .key(Account::key("a0"))
        .key(Account::key("missing"))
        .key(Account::key("a1"))
        .await?;
    let balances: Vec<Option<i64>> = got.iter().map(|a| a.as_ref().map(|a| a.balance)).collect();
    assert_eq!(balances, [Some(5), None, Some(6)]);
    Ok(())
}

#[tokio::test]
async fn transact_get_refuses_a_key_named_twice_before_sending() -> TestResult {
    let db = with_accounts(&[5, 6]).await?;
    let twice = || {
        db.transact_get::<Account>()
            .key(Account::key("a0"))
            .key(Account::key("a1"))
            .key(Account::key("a0"))
    };
    let err = twice().await.unwrap_err();
    crate::common::assert_refused(&err, dynamo_model::ValidationReason::DuplicateKey);
    assert!(err.to_string().contains("a0"), "the key is named: {err}");
    // Refused while building the request: `params` sees the same refusal, so nothing is sent.
    let err = twice().params().unwrap_err();
    crate::common::assert_refused(&err, dynamo_model::ValidationReason::DuplicateKey);
    // Distinct keys of one partition are fine.
    assert_eq!(
        db.transact_get::<Account>()
            .key(Account::key("a0"))
            .key(Account::key("a1"))
            .await?
            .len(),
        2
    );
    Ok(())
}
