//! Batch get / write under injected failures: nothing lost, nothing duplicated, leftovers
//! reported.

use crate::common::*;
use dynamo_model::local::faults::{FaultKind, Faults};
use dynamo_model::{local, Db, Entity, LoadProgress, RawKey, RetryPolicy};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn twenty_percent(seed: u64) -> Faults {
    failing(seed, 0.2)
}

/// Every eligible call faulted with probability `rate`, by one of the four kinds a batch
/// call meets.
fn failing(seed: u64, rate: f64) -> Faults {
    Faults::new(seed).rate(rate).kinds([
        FaultKind::PartialBatch,
        FaultKind::Throttle,
        FaultKind::ServerError,
        FaultKind::ServerErrorAfterApply,
    ])
}

fn reading(i: usize) -> Reading {
    Reading {
        sensor: format!("s{}", i % 97),
        delta: i as i64 - 5_000,
        valid: i.is_multiple_of(2),
    }
}

async fn stored_readings(db: &Db<App>) -> Result<Vec<Reading>, BoxError> {
    Ok(db.scan::<Reading>().all().await?.items)
}

/// Items of the large batch: 40 batch writes (of 25) and 11 batch gets (of 100), eight at
/// a time, so that every lane of the concurrency sends several calls and the gets come
/// back from more than one call to put in key order. Half the calls fail, so each kind of
/// fault is met some ten times, as when 5,000 items met twenty percent of failures in five
/// times the calls.
const N: usize = 1_000;

#[tokio::test]
async fn a_thousand_items_survive_half_their_calls_failing_exactly_once() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let faults = failing(7, 0.5);
    let flaky = faulty(&db, &faults).await?;
    let readings: Vec<Reading> = (0..N).map(reading).collect();
    // Quick backoff: what is checked is what the retries deliver, not how long they wait.
    let policy = contention_policy();

    let written = flaky
        .batch_write()
        .puts(&readings)
        .concurrency(8)
        .retry(policy)
        .await?;
    assert_eq!(written.written, N);
    assert!(written.unprocessed.is_empty());
    let stats = faults.stats();
    assert!(
        stats.partial_batches > 3 && stats.throttled > 3 && stats.server_errors_after_apply > 0,
        "{stats:?}"
    );

    // Checked through a client without faults: every item once, nothing else.
    let mut stored = stored_readings(&db).await?;
    assert_eq!(stored.len(), N);
    stored.sort_by_key(|r| r.delta);
    assert_eq!(stored, readings);

    // Reading them back, plus 100 keys that do not exist, under the same failure rate.
    let before = faults.stats();
    let missing = (N..N + 100).map(reading);
    let keys: Vec<_> = readings
        .iter()
        .chain(&missing.collect::<Vec<_>>())
        .map(|r| {
            Reading::key(ReadingKey {
                sensor: r.sensor.as_str(),
                delta: r.delta,
                valid: r.valid,
            })
        })
        .collect();
    let got = flaky
        .batch_get::<Reading>()
        .keys(keys)
        .keep_order()
        .concurrency(8)
        .retry(policy)
        .await?;
    assert_eq!(got.items, readings, "every item once, in key order");
    assert_eq!(got.not_found.len(), 100);
    assert!(got.unprocessed.is_empty());
    let after = faults.stats();
    assert!(after.partial_batches > before.partial_batches, "{after:?}");
    Ok(())
}

#[tokio::test]
async fn deletes_mixed_with_puts_across_entity_types() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let flaky = faulty(&db, &twenty_percent(11)).await?;
    let users: Vec<User> = (0..60).map(|i| User::sample(&format!("u{i}"))).collect();
    let readings: Vec<Reading> = (0..60).map(reading).collect();
    flaky.batch_write().puts(&users).puts(&readings).await?;
    let out = flaky
        .batch_write()
        .deletes((0..30).map(|i| User::key(format!("u{i}"))))
        .put(&Thing {
            name: "t".into(),
            status: "s".into(),
            data: None,
            ttl: None,
            r#type: "x".into(),
            size: 1,
        })
        .await?;
    assert_eq!(out.written, 31);
    let left = db.scan::<User>().all().await?.items;
    assert_eq!(
        left.iter()
            .map(|u| u.user_id.clone())
            .collect::<BTreeSet<_>>(),
        (30..60).map(|i| format!("u{i}")).collect()
    );
    assert_eq!(stored_readings(&db).await?.len(), 60);
    Ok(())
}

#[tokio::test]
async fn what_cannot_be_written_before_the_deadline_is_returned_not_dropped() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let faults = Faults::new(3)
        .rate(1.0)
        .kinds([FaultKind::PartialBatch, FaultKind::Throttle]);
    let flaky = faulty(&db, &faults).await?;
    let readings: Vec<Reading> = (0..200).map(reading).collect();
    let policy = RetryPolicy::default()
        .base(Duration::from_millis(5))
        .cap(Duration::from_millis(20))
        .deadline(Duration::from_millis(150));
    let out = flaky.batch_write().puts(&readings).retry(policy).await?;
    assert!(!out.unprocessed.is_empty(), "every call was faulted");
    assert_eq!(out.written + out.unprocessed.len(), 200);
    // Every confirmed write is stored. A returned one may be stored too (its request was
    // cut off by the deadline after DynamoDB applied it), and can be retried later.
    let stored: BTreeSet<RawKey> = stored_readings(&db)
        .await?
        .iter()
        .map(|r| r.primary_key().into_raw())
        .collect::<Result<_, _>>()?;
    let returned: BTreeSet<&RawKey> = out.unprocessed.iter().map(|op| op.key()).collect();
    let confirmed: Vec<RawKey> = readings
        .iter()
        .map(|r| r.primary_key().into_raw())
        .filter(|k| k.as_ref().map_or(true, |k| !returned.contains(k)))
        .collect::<Result<_, _>>()?;
    assert_eq!(confirmed.len(), out.written);
    assert!(confirmed.iter().all(|k| stored.contains(k)));
    faults.set_enabled(false);
    let left = out.unprocessed.len();
    let retry = flaky.batch_write().ops(out.unprocessed);
    assert_eq!(retry.await?.written, left);
    assert_eq!(stored_readings(&db).await?.len(), 200);

    // Reads behave the same way: unread keys are reported, not silently missing.
    faults.set_enabled(true);
    let got = flaky
        .batch_get::<Reading>()
        .keys(readings.iter().map(|r| r.primary_key()))
        .retry(policy)
        .await?;
    assert_eq!(
        got.items.len() + got.unprocessed.len() + got.not_found.len(),
        200
    );
    assert!(got.not_found.is_empty());
    assert!(!got.unprocessed.is_empty());
    Ok(())
}

#[tokio::test]
async fn duplicate_keys_are_refused_in_writes_and_merged_in_reads() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let user = User::sample("dup");
    refused(
        db.batch_write().put(&user).delete(User::key("dup")),
        dynamo_model::ValidationReason::DuplicateKey,
    )
    .await;
    assert!(
        db.get(User::key("dup")).await?.is_none(),
        "nothing was written"
    );

    db.put(&user).await?;
    let got = db
        .batch_get::<User>()
        .key(User::key("dup"))
        .key(User::key("dup"))
        .key(User::key("other"))
        .await?;
    assert_eq!(got.items, [user]);
    assert_eq!(got.not_found.len(), 1);
    Ok(())
}

#[tokio::test]
async fn collections_are_read_in_one_batch() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    db.put(&Purchase {
        purchase_id: "p".into(),
        buyer: "b".into(),
    })
    .await?;
    db.put(&Invoice {
        purchase_id: "p".into(),
        invoice_no: 1,
        amount_cents: 10,
    })
    .await?;
    let got = db
        .batch_get::<PurchaseDetails>()
        .key(Purchase::key("p"))
        .key(Invoice::key(InvoiceKey {
            purchase_id: "p",
            invoice_no: 1u32,
        }))
        .key(PurchaseItem::key(PurchaseItemKey {
            purchase_id: "p",
            n: 1u8,
        }))
        .keep_order()
        .await?;
    assert!(
        matches!(
            got.items.as_slice(),
            [PurchaseDetails::Purchase(_), PurchaseDetails::Invoice(_)]
        ),
        "{got:?}"
    );
    assert_eq!(got.not_found.len(), 1);
    Ok(())
}

#[tokio::test]
async fn bulk_load_interleaves_partitions_and_reports_progress() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let flaky = faulty(&db, &twenty_percent(5)).await?;
    // Sorted by partition, the way exports usually arrive.
    let mut readings: Vec<Reading> = (0..1_000).map(reading).collect();
    readings.sort_by(|a, b| a.sensor.cmp(&b.sensor));
    let seen: Arc<Mutex<Vec<LoadProgress>>> = Arc::default();
    let log = Arc::clone(&seen);
    let out = flaky
        .bulk_load()
        .puts(&readings)
        .on_progress(move |p| log.lock().map(|mut l| l.push(p)).unwrap_or(()))
        .await?;
    assert_eq!(out.written, 1_000);
    let progress = seen.lock().map_err(|_| "poisoned")?.clone();
    assert_eq!(progress.len(), 40, "one report per call of 25");
    assert!(progress.windows(2).all(|w| w[0].written <= w[1].written));
    assert_eq!(
        progress.last().map(|p| (p.written, p.total)),
        Some((1_000, 1_000))
    );
    assert_eq!(stored_readings(&db).await?.len(), 1_000);
    Ok(())
}
