//! Writers on one hot item: optimistic locking (read, change, put at the version read),
//! history `revise`, and `add` counters.

use crate::report::{Report, Wire};
use crate::{Options, join_all};
use dynamo_model::RetryPolicy;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::{Db, Error};
use reliability::{Counter, Ledger, Res, Rig, Tally};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

const ID: &str = "hot";

/// What one locking writer did.
#[derive(Debug, Default)]
struct Counts {
    writes: u64,
    conflicts: u64,
    reads: u64,
}

/// `ops` increments of the tally: read it (strongly consistent), put it back with `n + 1`
/// at the version read; on a version conflict back off and read again.
async fn locking_writer(db: Db<Rig>, ops: u64, policy: RetryPolicy) -> Res<Counts> {
    let mut c = Counts::default();
    for _ in 0..ops {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let read = db.get(Tally::key(ID)).consistent().await?;
            c.reads += 1;
            let current = read.ok_or("the tally is gone")?;
            let next = Tally {
                n: current.n + 1,
                ..current
            };
            match db.put(&next).await {
                Ok(()) => break,
                Err(Error::VersionConflict { .. }) => {
                    c.conflicts += 1;
                    tokio::time::sleep(policy.backoff(attempt)).await;
                }
                Err(e) => return Err(e.into()),
            }
        }
        c.writes += 1;
    }
    Ok(c)
}

/// Scenario 1: `writers` × `ops` increments of one item under optimistic locking.
pub async fn locking(db: &Db<Rig>, o: &Options) -> Res<Report> {
    let mut r = Report::new("optimistic locking");
    db.put(&Tally {
        id: ID.into(),
        n: 0,
        version: 0,
    })
    .await?;
    let wire = Wire::default();
    let hot = wire.attach(db);
    let started = Instant::now();
    let outcomes =
        join_all((0..o.writers).map(|_| locking_writer(hot.clone(), o.ops, o.backoff))).await;
    r.took = started.elapsed();
    let mut total = Counts::default();
    let failed = tally_outcomes(&mut r, outcomes, |c: Counts| {
        total.writes += c.writes;
        total.conflicts += c.conflicts;
        total.reads += c.reads;
    });
    r.ops = total.writes;
    r.conflicts = total.conflicts;
    r.wire(
        &wire,
        total.reads + total.writes + total.conflicts,
        total.conflicts,
    );
    let want = u64::from(o.writers) * o.ops;
    let stored = db.get(Tally::key(ID)).consistent().await?;
    let (n, version) = stored.map_or((0, 0), |t| (t.n, t.version));
    r.check(
        format!("every writer finished its increments ({failed} failed)"),
        failed == 0,
    );
    r.check(
        format!("the value is {n}, writers × ops = {want}"),
        n == want,
    );
    r.check(
        format!(
            "the version is {version}: 1 (the first put) + {} successful writes",
            total.writes
        ),
        version == 1 + total.writes,
    );
    r.notes.push(format!(
        "{} consistent reads; {:.1} conflicts per successful write",
        total.reads,
        total.conflicts as f64 / total.writes.max(1) as f64
    ));
    Ok(r)
}

/// Adds every writer's outcome to the report through `add`; returns how many failed
/// (each failure noted).
fn tally_outcomes<T>(r: &mut Report, outcomes: Vec<Res<T>>, mut add: impl FnMut(T)) -> usize {
    let mut failed = 0;
    for outcome in outcomes {
        match outcome {
            Ok(t) => add(t),
            Err(e) => {
                failed += 1;
                if failed <= 3 {
                    r.notes.push(format!("a writer failed: {e}"));
                }
            }
        }
    }
    failed
}

/// What one `revise` writer got: per step its marker and the revision it was told it wrote;
/// the attempts `revise` made (each runs the change once).
struct Revised {
    told: Vec<(String, u64)>,
    attempts: u64,
}

async fn revise_writer(db: Db<Rig>, w: u32, ops: u64, policy: RetryPolicy) -> Res<Revised> {
    let history = db.history::<Ledger>().retry(policy);
    let attempts = Arc::new(AtomicU64::new(0));
    let mut told = Vec::new();
    for step in 0..ops {
        let marker = format!("w{w:02}-{step}");
        let (m, a) = (marker.clone(), attempts.clone());
        let revised = history
            .revise(Ledger::key(ID), move |l| {
                a.fetch_add(1, Ordering::Relaxed);
                l.n += 1;
                l.writer = m.clone();
            })
            .await?;
        told.push((marker, revised.revision));
    }
    Ok(Revised {
        told,
        attempts: attempts.load(Ordering::Relaxed),
    })
}

/// Scenario 2: `writers` × `ops` revisions of one item with history.
pub async fn revise(db: &Db<Rig>, o: &Options) -> Res<Report> {
    let mut r = Report::new("history revise");
    let first = Ledger {
        id: ID.into(),
        n: 0,
        writer: "create".into(),
        version: 0,
    };
    db.history::<Ledger>().create(&first).await?;
    let wire = Wire::default();
    let hot = wire.attach(db);
    let started = Instant::now();
    let outcomes =
        join_all((0..o.writers).map(|w| revise_writer(hot.clone(), w, o.ops, o.backoff))).await;
    r.took = started.elapsed();
    let (mut told, mut attempts) = (BTreeMap::<u64, Vec<String>>::new(), 0);
    let failed = tally_outcomes(&mut r, outcomes, |x: Revised| {
        attempts += x.attempts;
        for (marker, revision) in x.told {
            told.entry(revision).or_default().push(marker);
        }
    });
    let successes: u64 = told.values().map(|m| m.len() as u64).sum();
    r.ops = successes;
    r.conflicts = attempts.saturating_sub(successes);
    // Each attempt: a read of the latest copy and a transaction.
    r.wire(&wire, 2 * attempts, r.conflicts);
    r.check(
        format!("every writer finished its revisions ({failed} failed)"),
        failed == 0,
    );
    check_history(db, &mut r, &told, successes).await?;
    Ok(r)
}

/// The stored history against what the writers were told: revisions 1 to `1 + successes`,
/// no gap, no duplicate; each written by the step told it got it; `n` one more each time
/// (no lost update); the latest copy the highest revision.
async fn check_history(
    db: &Db<Rig>,
    r: &mut Report,
    told: &BTreeMap<u64, Vec<String>>,
    successes: u64,
) -> Res<()> {
    let history = db.history::<Ledger>();
    let stored = history
        .revisions(Ledger::key(ID))
        .consistent()
        .all()
        .await?
        .items;
    let numbers: Vec<u64> = stored.iter().map(|rev| rev.revision).collect();
    let want: Vec<u64> = (1..=1 + successes).collect();
    r.check(
        format!(
            "{} revisions stored, contiguous from 1 (1 created + {successes} revised), no gap, no duplicate",
            numbers.len()
        ),
        numbers == want,
    );
    let twice = told.values().filter(|m| m.len() > 1).count();
    r.check(
        format!("no revision number told to two writers ({twice} were)"),
        twice == 0,
    );
    let mismatched = stored
        .iter()
        .filter(|rev| rev.revision > 1)
        .filter(|rev| {
            told.get(&rev.revision).and_then(|m| m.first()) != Some(&rev.value.writer)
                || rev.value.n != rev.revision - 1
                || rev.value.version != rev.revision
        })
        .count();
    r.check(
        format!(
            "each revision written by the step told it got it, n = revision - 1 (no lost update): {mismatched} not"
        ),
        mismatched == 0,
    );
    let latest = history.latest(Ledger::key(ID)).await?;
    let highest = stored.last().map(|rev| &rev.value);
    r.check(
        format!(
            "the latest copy is the highest revision ({:?})",
            latest.as_ref().map(|l| l.version)
        ),
        latest.is_some() && latest.as_ref() == highest,
    );
    Ok(())
}

/// What one `add` writer got back: the counter after each of its adds.
async fn add_writer(db: Db<Rig>, w: u32, ops: u64) -> Res<Vec<u64>> {
    let f = Counter::fields();
    let mut after = Vec::with_capacity(ops as usize);
    for _ in 0..ops {
        let updated = db
            .update(Counter::key(0))
            .add(f.n, amount(w))
            .send_returning_updated()
            .await?;
        let n = match updated.get("n") {
            Some(AttributeValue::N(n)) => n.parse()?,
            other => return Err(format!("the add returned {other:?}").into()),
        };
        after.push(n);
    }
    Ok(after)
}

/// What writer `w` adds each time: 1 to 7, so a lost or doubled add shows in the sum.
fn amount(w: u32) -> u64 {
    u64::from(w % 7) + 1
}

/// Scenario 3: `writers` × `ops` `add`s to one counter.
pub async fn add(db: &Db<Rig>, o: &Options) -> Res<Report> {
    let mut r = Report::new("add counter");
    db.put(&Counter { id: 0, n: 0 }).await?;
    let wire = Wire::default();
    let hot = wire.attach(db);
    let started = Instant::now();
    let outcomes = join_all((0..o.writers).map(|w| add_writer(hot.clone(), w, o.ops))).await;
    r.took = started.elapsed();
    let mut seen = Vec::new();
    let failed = tally_outcomes(&mut r, outcomes, |after: Vec<u64>| seen.extend(after));
    r.ops = seen.len() as u64;
    r.wire(&wire, r.ops, 0);
    let want: u64 = (0..o.writers).map(|w| amount(w) * o.ops).sum();
    let stored = db.get(Counter::key(0)).consistent().await?.map(|c| c.n);
    r.check(
        format!("every writer finished its adds ({failed} failed)"),
        failed == 0,
    );
    r.check(
        format!("the counter is {stored:?}, the sum of the adds {want}"),
        stored == Some(want),
    );
    seen.sort_unstable();
    let distinct = seen.windows(2).all(|p| p[0] != p[1]);
    r.check(
        "every add saw its own counter value (the values returned are distinct: each add applied alone)",
        distinct,
    );
    r.check(
        "the largest value an add returned is the final counter",
        seen.last().copied() == stored,
    );
    add_any_version(db, o, &mut r).await?;
    Ok(r)
}

/// What one writer saw after each of its adds to the versioned tally: (version, n).
async fn add_versioned_writer(db: Db<Rig>, w: u32, ops: u64) -> Res<Vec<(u64, u64)>> {
    let f = Tally::fields();
    let mut after = Vec::with_capacity(ops as usize);
    for _ in 0..ops {
        let t = db
            .update(Tally::key(ID))
            .add(f.n, amount(w))
            .any_version()
            .send()
            .await?;
        after.push((t.version, t.n));
    }
    Ok(after)
}

/// The same adds to a versioned item (`any_version()`: no version check, the version
/// still counted): the sum, and one version per add.
async fn add_any_version(db: &Db<Rig>, o: &Options, r: &mut Report) -> Res<()> {
    db.put(&Tally {
        id: ID.into(),
        n: 0,
        version: 0,
    })
    .await?;
    let started = Instant::now();
    let outcomes =
        join_all((0..o.writers).map(|w| add_versioned_writer(db.clone(), w, o.ops))).await;
    let took = started.elapsed();
    let mut seen = Vec::new();
    let failed = tally_outcomes(r, outcomes, |after: Vec<(u64, u64)>| seen.extend(after));
    let adds = seen.len() as u64;
    r.notes.push(format!(
        "the same adds to a versioned item with `any_version()`: {adds} in {:.2} s ({:.0}/s)",
        took.as_secs_f64(),
        crate::report::per_second(adds, took)
    ));
    let want: u64 = (0..o.writers).map(|w| amount(w) * o.ops).sum();
    let stored = db.get(Tally::key(ID)).consistent().await?;
    let (n, version) = stored.map_or((0, 0), |t| (t.n, t.version));
    seen.sort_unstable();
    let distinct = seen
        .windows(2)
        .all(|p| p[0].0 != p[1].0 && p[0].1 != p[1].1);
    r.check(
        format!(
            "versioned, `any_version()`: {failed} writers failed; n is {n}, the sum {want}; the version is {version}, 1 + {adds} adds; each add saw its own version and value"
        ),
        failed == 0 && n == want && version == 1 + adds && distinct,
    );
    Ok(())
}
