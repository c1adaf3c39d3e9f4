//! Concurrent writers on one versioned item (`db.versions().revise`): every revision is
//! written exactly once, in order, with no gap and no overwrite, and the latest copy is
//! the highest revision, with and without injected faults.
//!
//! Each writer step writes a marker of its own (`w{writer}-{step}`) into the revision and
//! appends it to a log carried from revision to revision, so the table itself tells which
//! writer got which revision and on top of which content it was computed.

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::config::retry::RetryConfig;
use dynamo_model::local;
use dynamo_model::local::faults::{FaultKind, Faults};
use dynamo_model::{Db, Entity, Error};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "RACE#{id}", sk = "RACE", history)]
pub struct RaceDoc {
    pub id: String,
    /// The marker of the writer step that wrote this revision.
    pub writer: String,
    /// Every marker written so far, oldest first (this revision's included).
    pub log: Vec<String>,
    #[dynamo(version)]
    pub version: u64,
}

const WRITERS: usize = 8;
const STEPS: usize = 5;

/// What one writer step got back: its marker, the revision number it was told it wrote
/// and the value it was told it wrote.
type Outcome = (String, u64, RaceDoc);

/// One writer: its first step creates the item or, when another writer created it first,
/// revises it; the other steps revise. Every step writes its own marker.
async fn writer(db: Db<App>, id: String, w: usize) -> Result<Vec<Outcome>, Error> {
    let versions = db.history::<RaceDoc>().retry(contention_policy());
    let mut out = Vec::with_capacity(STEPS);
    for step in 0..STEPS {
        let marker = format!("w{w:02}-{step}");
        if step == 0 {
            let fresh = RaceDoc {
                id: id.clone(),
                writer: marker.clone(),
                log: vec![marker.clone()],
                version: 0,
            };
            match versions.create(&fresh).await {
                Ok(revision) => {
                    let value = RaceDoc {
                        version: revision,
                        ..fresh
                    };
                    out.push((marker, revision, value));
                    continue;
                }
                // Another writer created it: a typed conflict from an empty slot.
                Err(Error::VersionConflict {
                    expected: 0,
                    found: Some(_),
                    ..
                }) => {}
                Err(e) => return Err(e),
            }
        }
        let m = marker.clone();
        let revised = versions
            .revise(RaceDoc::key(id.as_str()), move |doc| {
                doc.writer = m.clone();
                doc.log.push(m.clone());
            })
            .await?;
        out.push((marker, revised.revision, revised.value));
    }
    Ok(out)
}

/// Runs the race on `writers_db` (one clone per task) and checks the table through the
/// fault-free `db`.
async fn race_and_check(db: &Db<App>, writers_db: &Db<App>, id: &str) -> TestResult {
    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        tasks.push(tokio::spawn(writer(writers_db.clone(), id.to_owned(), w)));
    }
    let mut outcomes: Vec<Outcome> = Vec::new();
    for task in tasks {
        outcomes.extend(task.await??);
    }
    assert_eq!(outcomes.len(), WRITERS * STEPS);

    // Every writer step was told a distinct revision, and together they are 1..=80.
    let mut by_revision: BTreeMap<u64, &Outcome> = BTreeMap::new();
    for outcome in &outcomes {
        let previous = by_revision.insert(outcome.1, outcome);
        assert!(
            previous.is_none(),
            "revision {} reported to two writers: {:?} and {:?}",
            outcome.1,
            previous.map(|p| &p.0),
            outcome.0
        );
        assert_eq!(outcome.2.version, outcome.1);
    }
    let total = (WRITERS * STEPS) as u64;
    assert_eq!(
        by_revision.keys().copied().collect::<Vec<_>>(),
        (1..=total).collect::<Vec<_>>()
    );

    // The table holds exactly revisions 1..=80, in order, each written by the step that
    // was told it got it, each computed on top of the one before (no overwrite, no lost
    // update: the log grows by one marker per revision).
    let versions = db.history::<RaceDoc>();
    let history = versions
        .revisions(RaceDoc::key(id))
        .consistent()
        .all()
        .await?;
    let stored: Vec<u64> = history.items.iter().map(|r| r.revision).collect();
    assert_eq!(stored, (1..=total).collect::<Vec<_>>(), "no gap, no extra");
    let mut log: Vec<String> = Vec::new();
    for r in &history.items {
        let (marker, _, told) = by_revision[&r.revision];
        assert_eq!(&r.value.writer, marker, "revision {}", r.revision);
        log.push(marker.clone());
        assert_eq!(r.value.log, log, "revision {} lost an update", r.revision);
        assert_eq!(r.value.version, r.revision);
        assert_eq!(told, &r.value, "the writer was told what it wrote");
        assert!(r.revised_at.is_some());
    }
    // Every marker is in exactly one revision.
    let mut sorted = log.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), WRITERS * STEPS, "a marker written twice");

    // The latest copy is revision 80.
    let latest = versions
        .latest(RaceDoc::key(id))
        .await?
        .ok_or("no latest")?;
    let last = &history.items[history.items.len() - 1];
    assert_eq!(latest, last.value);
    assert_eq!(latest.version, total);

    // Nothing else under the partition: the latest copy and 80 revisions.
    let raw = raw_partition(db, &format!("RACE#{id}")).await?;
    assert_eq!(raw.len(), WRITERS * STEPS + 1);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_writers_add_forty_revisions_with_no_gap_and_no_overwrite() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    race_and_check(&db, &db, "plain").await
}

/// The fault kinds of the acceptance list, each on about a quarter of the calls.
fn faults(seed: u64) -> Faults {
    Faults::new(seed).rate(0.25).kinds([
        FaultKind::Throttle,
        FaultKind::ServerError,
        FaultKind::ServerErrorAfterApply,
        FaultKind::TransactionConflict,
    ])
}

/// Faults on the transactions only, with the SDK's retries off (`faulty`): every fault,
/// the ambiguous 500 after apply included, reaches the library's own loops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_race_survives_faulted_transactions_without_sdk_retries() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let faults = faults(10_001).operations(["TransactWriteItems"]);
    let flaky = faulty(&db, &faults).await?;
    race_and_check(&db, &flaky, "tx-faults").await?;
    let stats = faults.stats();
    assert!(stats.server_errors_after_apply > 0, "{stats:?}");
    assert!(stats.transaction_conflicts > 0, "{stats:?}");
    assert!(stats.throttled > 0 && stats.server_errors > 0, "{stats:?}");
    Ok(())
}

/// Faults on every call (reads included), with the SDK's standard retries as an
/// application would configure them (their own retry quota, so other tests keep theirs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_race_survives_faults_on_every_call_with_sdk_retries() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let faults = faults(10_002);
    let retries = RetryConfig::standard()
        .with_max_attempts(10)
        .with_initial_backoff(Duration::from_millis(1))
        .with_max_backoff(Duration::from_millis(20));
    let flaky = faulty_with(&db, &faults, retries, "history-race").await?;
    race_and_check(&db, &flaky, "all-faults").await?;
    let stats = faults.stats();
    assert!(stats.server_errors_after_apply > 0, "{stats:?}");
    assert!(stats.transaction_conflicts > 0, "{stats:?}");
    Ok(())
}

/// Faults on every call with the SDK's retries off: a throttled or failed read inside
/// `revise` (it re-reads the latest copy) must be retried under the versions' retry
/// policy like its transaction, not surface to the caller.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_race_survives_faulted_reads_without_sdk_retries() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let faults = faults(10_003);
    let flaky = faulty(&db, &faults).await?;
    race_and_check(&db, &flaky, "read-faults").await
}

/// `add` (no re-read, no retry on conflict) under lost responses: every response to the
/// transaction is lost half of the time after DynamoDB applied it. Each call must report
/// its own revision, once: never a conflict with its own applied write, never a second
/// copy of it.
#[tokio::test]
async fn add_under_lost_responses_reports_its_own_revision_once() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let faults = applied_then_lost(10_004, 0.5, "TransactWriteItems");
    let flaky = faulty(&db, &faults).await?;
    let versions = flaky.history::<RaceDoc>().retry(contention_policy());
    let mut doc = RaceDoc {
        id: "lossy".into(),
        writer: "w0".into(),
        log: vec!["w0".into()],
        version: 0,
    };
    for i in 1..=20u64 {
        let written = versions.add(&doc).await?;
        assert_eq!(written, i);
        doc.version = written;
        doc.writer = format!("w{i}");
        doc.log.push(doc.writer.clone());
    }
    assert!(
        faults.stats().server_errors_after_apply >= 5,
        "{:?}",
        faults.stats()
    );
    let history = all_revisions(&db.history(), RaceDoc::key("lossy")).await?;
    assert_eq!(revision_numbers(&history), (1..=20).collect::<Vec<_>>());
    for r in &history {
        assert_eq!(r.value.writer, format!("w{}", r.revision - 1));
        assert_eq!(r.value.log.len() as u64, r.revision);
    }
    Ok(())
}
