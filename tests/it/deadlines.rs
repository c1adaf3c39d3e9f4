//! A retry deadline bounds the whole call: its backoff sleeps (however large the policy's
//! durations) and the requests in flight when it passes. What a call could not confirm
//! before its deadline is reported, never dropped and never counted as done.

use crate::common::*;
use dynamo_model::local::faults::{FaultKind, Faults};
use dynamo_model::{local, Db, Entity, Error, RetryPolicy};
use std::collections::BTreeSet;
use std::future::IntoFuture;
use std::time::{Duration, Instant};

/// How long every delayed response is held back: far longer than the short deadlines.
const SLOW: Duration = Duration::from_secs(3);
/// The short deadline under test, and the generous bound a call must return within.
const DEADLINE: Duration = Duration::from_millis(500);
const BOUND: Duration = Duration::from_secs(2);

fn short_deadline() -> RetryPolicy {
    RetryPolicy::default().deadline(DEADLINE)
}

/// Every response of `operation` held back for [`SLOW`] (the request itself is applied).
fn slow(operation: &'static str) -> Faults {
    Faults::new(80)
        .kinds([FaultKind::Delay(SLOW)])
        .operations([operation])
}

/// Runs `call` (under the [`DEADLINE`]) and asserts that it returned within [`BOUND`].
async fn in_time<F: IntoFuture>(call: F) -> F::Output {
    let started = Instant::now();
    let out = call.await;
    let took = started.elapsed();
    assert!(
        took < BOUND,
        "a {DEADLINE:?} deadline, returned after {took:?}"
    );
    out
}

/// The transaction's token `err` hands back: it must be a `DeadlineExceeded` with one.
fn token_of(err: Error) -> String {
    match err {
        Error::DeadlineExceeded {
            client_request_token: Some(token),
            ..
        } => token,
        other => panic!("expected DeadlineExceeded with the token, got {other:?}"),
    }
}

/// Resends the transfer of 10 from `a0` to `a1` with its `token` once `faults` are off:
/// applied before or not, it is applied exactly once.
async fn resend_applies_once(
    db: &Db<App>,
    flaky: &Db<App>,
    faults: &Faults,
    token: String,
) -> TestResult {
    faults.set_enabled(false);
    transfer(flaky, "a0", "a1", 10).token(token).await?;
    assert_eq!(
        balances(db).await?,
        (90, 10),
        "resent with its token: applied once"
    );
    Ok(())
}

#[tokio::test]
async fn a_batch_write_returns_at_its_deadline_with_what_it_could_not_confirm() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let faults = slow("BatchWriteItem");
    let flaky = faulty(&db, &faults).await?;
    let users = users(40); // two requests of 25 and 15, in flight together

    let out = in_time(flaky.batch_write().puts(&users).retry(short_deadline())).await?;
    assert_eq!(faults.stats().delayed, 2);
    // Cut off in flight: nothing confirmed, everything handed back, nothing dropped.
    assert_eq!(out.written, 0);
    assert!(out.failed.is_empty(), "{:?}", out.failed);
    let returned: BTreeSet<String> = out
        .unprocessed
        .iter()
        .map(|op| op.key().pk.clone())
        .collect();
    let all: BTreeSet<String> = users
        .iter()
        .map(|u| u.primary_key().into_raw().map(|k| k.pk))
        .collect::<Result<_, _>>()?;
    assert_eq!(returned, all);

    // Resubmitting what came back is safe even though DynamoDB may have applied it.
    resubmit_all(&db, &flaky, &faults, out.unprocessed, 40).await
}

#[tokio::test]
async fn a_batch_write_with_the_default_deadline_waits_for_slow_responses() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let faults = slow("BatchWriteItem");
    let flaky = faulty(&db, &faults).await?;
    let users = users(40);

    let started = Instant::now();
    let out = flaky.batch_write().puts(&users).await?;
    assert!(started.elapsed() >= SLOW, "the responses were delayed");
    assert_eq!(out.written, 40);
    assert!(out.unprocessed.is_empty() && out.failed.is_empty());
    assert_eq!(stored_ids(&db).await?.len(), 40);
    Ok(())
}

#[tokio::test]
async fn a_batch_get_returns_at_its_deadline_with_the_keys_it_did_not_read() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let users = users(30);
    db.batch_write().puts(&users).await?;
    let faults = slow("BatchGetItem");
    let flaky = faulty(&db, &faults).await?;
    let keys = || users.iter().map(|u| u.primary_key());

    let got = in_time(
        flaky
            .batch_get::<User>()
            .keys(keys())
            .retry(short_deadline()),
    )
    .await?;
    assert!(got.items.is_empty() && got.not_found.is_empty());
    assert_eq!(got.unprocessed.len(), 30, "every key reported unread");

    let got = flaky.batch_get::<User>().keys(keys()).await?;
    assert_eq!(got.items.len(), 30, "the default deadline waits");
    Ok(())
}

#[tokio::test]
async fn a_transaction_cut_off_by_its_deadline_can_be_resent_with_its_token() -> TestResult {
    let faults = slow("TransactWriteItems");
    let (db, flaky) = two_accounts(&faults).await?;
    let err = in_time(transfer(&flaky, "a0", "a1", 10).retry(short_deadline()))
        .await
        .unwrap_err();
    resend_applies_once(&db, &flaky, &faults, token_of(err)).await
}

#[tokio::test]
async fn a_huge_backoff_still_stops_at_the_deadline() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    // Every batch is split: there is always something to retry, so the backoff decides.
    let faults = Faults::new(81).kinds([FaultKind::PartialBatch]);
    let flaky = faulty(&db, &faults).await?;
    let policy = RetryPolicy::default()
        .base(Duration::MAX)
        .cap(Duration::MAX)
        .deadline(Duration::from_millis(300));
    let users = users(25);
    let started = Instant::now();
    // Bounded here so that a regression fails instead of hanging the suite.
    let out = tokio::time::timeout(
        Duration::from_secs(20),
        flaky.batch_write().puts(&users).retry(policy),
    )
    .await
    .map_err(|_| "the batch write ignored its 300 ms deadline")??;
    let took = started.elapsed();
    assert!(took < BOUND, "a 300 ms deadline, returned after {took:?}");
    assert!(!out.unprocessed.is_empty(), "the split part is handed back");
    assert_eq!(out.written + out.unprocessed.len(), 25);
    assert_eq!(stored_ids(&db).await?.len(), out.written);
    Ok(())
}

#[tokio::test]
async fn a_transaction_out_of_time_after_server_errors_returns_its_token() -> TestResult {
    // Every attempt is applied (the first for real, the others as replays of its token)
    // and answered with a 500: the outcome stays unknown until the deadline.
    let faults = applied_then_lost(82, 1.0, "TransactWriteItems");
    let (db, flaky) = two_accounts(&faults).await?;
    let err = transfer(&flaky, "a0", "a1", 10)
        .retry(short_deadline())
        .await
        .unwrap_err();
    assert!(faults.stats().server_errors_after_apply >= 2);
    resend_applies_once(&db, &flaky, &faults, token_of(err)).await
}

#[tokio::test]
async fn chunks_waiting_past_the_deadline_are_not_sent() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let faults = slow("BatchWriteItem");
    let flaky = faulty(&db, &faults).await?;
    let users = users(100); // four requests of 25, one at a time
    let out = flaky
        .batch_write()
        .puts(&users)
        .concurrency(1)
        .retry(short_deadline())
        .await?;
    assert_eq!(out.written, 0);
    assert_eq!(out.unprocessed.len(), 100, "nothing dropped");
    assert_eq!(faults.stats().calls, 1, "only the first request was sent");
    Ok(())
}

/// The first attempt of a transfer is applied and its response lost (a 500); from then
/// on every attempt meets `then` (the plan switches once the first fault is counted) until
/// the deadline. The transfer was applied, so the call must not report an error that says
/// or suggests it was not: it returns its token to settle it with.
async fn applied_then(then: FaultKind) -> TestResult {
    let faults = applied_then_lost(83, 1.0, "TransactWriteItems");
    let (db, flaky) = two_accounts(&faults).await?;
    let switch = {
        let faults = faults.clone();
        tokio::spawn(async move {
            while faults.stats().server_errors_after_apply == 0 {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            let _ = faults.kinds([then]);
        })
    };
    let result = transfer(&flaky, "a0", "a1", 10)
        .retry(short_deadline())
        .await;
    switch.await?;
    assert_eq!(
        balances(&db).await?,
        (90, 10),
        "the first attempt was applied"
    );
    let Err(Error::DeadlineExceeded {
        client_request_token: Some(token),
        ..
    }) = result
    else {
        panic!("an applied transfer ({then:?} afterwards) reported {result:?}");
    };
    resend_applies_once(&db, &flaky, &faults, token).await
}

#[tokio::test]
async fn a_transaction_applied_then_conflicting_until_the_deadline_returns_its_token() -> TestResult
{
    applied_then(FaultKind::TransactionConflict).await
}

#[tokio::test]
async fn a_transaction_applied_then_throttled_until_the_deadline_returns_its_token() -> TestResult {
    applied_then(FaultKind::Throttle).await
}
