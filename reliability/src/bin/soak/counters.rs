//! The background migration: round after round, a migration adds one to `n` of every
//! counter (a `map`, exactly once per item by its marker) while a worker keeps adding to
//! the counters' `hits` with single-item updates.
//!
//! Invariants: during a round every counter's `n` is the round's base or one more (a
//! migration never writes an item twice); after it, every `n` is exactly one more and
//! every `hits` what the worker's confirmed updates make it (the migration's writes lose
//! none of the application's, and the application's none of the migration's). A run that
//! fails or leaves items failed is run again under the same name: the marker keeps it
//! exactly once. Between rounds the counters are written whole again, `n` back to 0,
//! which drops the markers: the items do not grow with the number of rounds.

use crate::entities::{Counter, Soak};
use crate::tally::{Tally, read};
use dynamo_model::item::WriteToken;
use dynamo_model::migrate::{MemoryCheckpoints, Migration};
use dynamo_model::{Db, Error};
use reliability::Res;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::Mutex;

/// Counters in the partition the migration reads.
pub const COUNTERS: u32 = 24;
/// Runs of one round's migration (resumed under its name) before the run gives up.
const RUNS: u32 = 30;
/// Resends of an update whose outcome is unknown before the run gives up.
const RESENDS: u32 = 50;

/// What the model expects of the counters: each one's `hits`, and `n` before the round.
pub struct Model {
    hits: Vec<u64>,
}

pub type Shared = Arc<Mutex<Model>>;

pub fn model() -> Shared {
    Arc::new(Mutex::new(Model {
        hits: vec![0; COUNTERS as usize],
    }))
}

/// The counters to write before the run starts.
pub fn opening() -> Vec<Counter> {
    (0..COUNTERS)
        .map(|id| Counter { id, n: 0, hits: 0 })
        .collect()
}

/// One update adding to a counter's `hits`, settled; the item it returns must hold the
/// model's hits and `n` of 0 or 1.
pub async fn hit(db: &Db<Soak>, tally: &Tally, model: &Shared, rng: &mut fastrand::Rng) -> Res<()> {
    let mut model = model.lock().await;
    tally.op("counter update (during migrations)");
    let id = rng.u32(..COUNTERS);
    let f = Counter::fields();
    let mut token: Option<WriteToken> = None;
    for _ in 0..RESENDS {
        let mut update = db.update(Counter::key(id)).add(f.hits, 1);
        if let Some(t) = token.clone() {
            update = update.write_token(t);
        }
        match update.send().await {
            Ok(stored) => {
                model.hits[id as usize] += 1;
                let hits = model.hits[id as usize];
                tally.check("no lost or duplicated write (counter hits)", stored.hits == hits, || {
                    format!("counter {id}: the model holds {hits} hits, the update returned {stored:?}")
                })?;
                return tally.check("a migration writes each item once", stored.n <= 1, || {
                    format!("counter {id}: n = {} during a round from 0", stored.n)
                });
            }
            Err(Error::OutcomeUnknown { token: Some(t), .. }) => {
                tally.settled("update: outcome unknown, resent with its token");
                token = Some(t);
            }
            Err(Error::Service { .. }) if token.is_none() => {
                tally.settled("update: service error, not applied");
                return Ok(());
            }
            Err(Error::Service { .. }) => tally.settled("update: resend failed, resent again"),
            Err(e) => {
                crate::tally::ensure(false, "no conflict with the client's own write", || {
                    format!("update of counter {id}: {e}")
                })?
            }
        }
    }
    Err(format!("counter {id}: outcome still unknown after {RESENDS} resends").into())
}

/// Migration rounds until `stop`; the number of rounds completed.
pub async fn migrations(
    db: Db<Soak>,
    tally: Arc<Tally>,
    model: Shared,
    run: u32,
    stop: Arc<AtomicBool>,
) -> Res<u64> {
    let mut rounds = 0;
    while !stop.load(Ordering::SeqCst) {
        rounds += 1;
        let name = format!("bump-{run:08x}-{rounds}");
        round(&db, &tally, &name).await?;
        let model = model.lock().await;
        check_round(&db, &tally, &model, 1).await?;
        reset(&db, &tally, &model).await?;
        check_round(&db, &tally, &model, 0).await?;
    }
    Ok(rounds)
}

/// One migration, run again under its name until it reports every item done.
async fn round(db: &Db<Soak>, tally: &Tally, name: &str) -> Res<()> {
    for _ in 0..RUNS {
        tally.op("migration run");
        let report = Migration::<Counter>::new(db, name)
            .map(|mut c| {
                c.n += 1;
                Some(c)
            })
            .partition(Counter::partition())
            .page_size(5)
            // A fresh store: a run after a failed one reads every item again; the marker
            // skips those already changed.
            .checkpoints(MemoryCheckpoints::new())
            .run()
            .await;
        match report {
            Ok(report) if report.failures.is_empty() => return Ok(()),
            Ok(_) => tally.settled("migration: items failed, run again"),
            Err(_) => tally.settled("migration: run failed, run again"),
        }
    }
    Err(format!("migration {name}: not complete after {RUNS} runs").into())
}

/// Every counter's `n` is `n` and its hits the model's.
async fn check_round(db: &Db<Soak>, tally: &Tally, model: &Model, n: u64) -> Res<()> {
    let page = read(tally, "counter query failed, read again", || {
        db.query(Counter::partition()).consistent().all()
    })
    .await?;
    let mut items = page.items;
    items.sort_by_key(|c| c.id);
    let found: Vec<(u64, u64)> = items.iter().map(|c| (c.n, c.hits)).collect();
    let expected: Vec<(u64, u64)> = model.hits.iter().map(|&h| (n, h)).collect();
    tally.check(
        "a migration changes every item exactly once, losing no write",
        found == expected,
        || format!("(n, hits) expected {expected:?}, found {found:?}"),
    )
}

/// Writes every counter whole again with `n` = 0 (its marker dropped).
async fn reset(db: &Db<Soak>, tally: &Tally, model: &Model) -> Res<()> {
    for (id, &hits) in model.hits.iter().enumerate() {
        let counter = Counter {
            id: id as u32,
            n: 0,
            hits,
        };
        // A put without a condition stores the same item however often it is sent.
        for attempt in 0.. {
            tally.op("counter put (reset)");
            match db.put(&counter).send().await {
                Ok(()) => break,
                Err(_) if attempt < RESENDS => tally.settled("put: failed, resent"),
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(())
}
