//! The library under each fault the injector (`dynamo_model::local::faults`) produces:
//! what a call reports must be what DynamoDB applied. A write is counted only when
//! DynamoDB confirmed it, a key is "not found" only when DynamoDB said so, and a retried
//! transaction is the same transaction (same `ClientRequestToken`), applied once.
//!
//! The injector's own mechanics (which calls it picks, how it splits a batch, the error
//! bodies it writes) are unit-tested next to it, in `dynamo-model/src/local/faults.rs`.

use crate::common::*;
use dynamo_model::local::faults::{FaultKind, Faults};
use dynamo_model::{local, Entity, RetryPolicy};
use std::time::Duration;

/// Quick retries for a short while: long enough for several attempts.
fn brief() -> RetryPolicy {
    RetryPolicy::default()
        .base(Duration::from_millis(5))
        .cap(Duration::from_millis(20))
        .deadline(Duration::from_millis(300))
}

#[tokio::test]
async fn refused_requests_are_retried_and_then_handed_back_never_reported_done() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let users = users(30);
    for kind in [FaultKind::Throttle, FaultKind::ServerError] {
        // Every batch call refused, nothing applied: the library must see a transient
        // error (retry it), and after the deadline hand everything back as unprocessed:
        // not written, not failed for good, not missing.
        let faults = Faults::new(60).kinds([kind]);
        let flaky = faulty(&db, &faults).await?;
        let out = flaky.batch_write().puts(&users).retry(brief()).await?;
        assert_eq!(out.written, 0, "{kind:?}");
        assert_eq!(out.unprocessed.len(), 30, "{kind:?}");
        assert!(
            out.failed.is_empty(),
            "{kind:?} is transient: {:?}",
            out.failed
        );
        assert!(faults.stats().calls > 2, "{kind:?}: retried");
        assert!(
            stored_ids(&db).await?.is_empty(),
            "{kind:?}: nothing applied"
        );

        // Reads: a key that could not be read is unprocessed, never "not found".
        let got = flaky
            .batch_get::<User>()
            .keys(users.iter().map(|u| u.primary_key()))
            .retry(brief())
            .await?;
        assert!(got.items.is_empty() && got.not_found.is_empty(), "{kind:?}");
        assert_eq!(got.unprocessed.len(), 30, "{kind:?}");
        assert!(got.failed.is_empty(), "{kind:?}");
    }
    Ok(())
}

#[tokio::test]
async fn a_batch_write_applied_but_answered_with_a_500_is_not_counted_as_written() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let faults = Faults::new(61).kinds([FaultKind::ServerErrorAfterApply]);
    let flaky = faulty(&db, &faults).await?;
    let users = users(30);

    let policy = brief().deadline(Duration::from_secs(2));
    let out = flaky.batch_write().puts(&users).retry(policy).await?;
    // DynamoDB applied the attempts (all but one cut off by the deadline, if any), but
    // confirmed none.
    assert_eq!(out.written, 0);
    assert_eq!(out.unprocessed.len(), 30);
    assert!(out.failed.is_empty(), "{:?}", out.failed);
    let applied = stored_ids(&db).await?;
    assert!(!applied.is_empty(), "applied, yet not reported as written");
    assert!(applied.is_subset(&users.iter().map(|u| u.user_id.clone()).collect()));

    // Handing the unconfirmed writes back is what makes them safe to finish.
    resubmit_all(&db, &flaky, &faults, out.unprocessed, 30).await
}

#[tokio::test]
async fn a_transaction_is_retried_with_one_token_and_applied_once() -> TestResult {
    // With this seed the first three attempts are applied, then reported as a 500: every
    // retry is a replay of an applied transaction.
    let faults = applied_then_lost(96, 0.7, "TransactWriteItems").record();
    let (db, flaky) = two_accounts(&faults).await?;
    transfer(&flaky, "a0", "a1", 10).await?;
    assert!(
        faults.stats().server_errors_after_apply >= 2,
        "{:?}",
        faults.stats()
    );

    let tokens: Vec<serde_json::Value> = faults
        .calls()
        .iter()
        .filter(|c| c.operation == "TransactWriteItems")
        .map(|c| {
            serde_json::from_str::<serde_json::Value>(&c.body)
                .map(|body| body["ClientRequestToken"].clone())
        })
        .collect::<Result<_, _>>()?;
    assert_eq!(tokens.len(), 4, "three retries");
    assert!(tokens[0].is_string(), "{tokens:?}");
    assert!(
        tokens.iter().all(|t| *t == tokens[0]),
        "one token: {tokens:?}"
    );
    // Applied by every attempt, but as one transaction: exactly once.
    assert_eq!(balances(&db).await?, (90, 10));
    Ok(())
}
