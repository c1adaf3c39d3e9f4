//! Soak: a mixed workload under injected faults, checked against a model as it runs,
//! with the process's memory sampled every second.
//!
//! ```sh
//! scripts/soak.sh                                  # 30 minutes, release build
//! cargo run -p reliability --bin soak -- --seconds 30   # what .ci/run runs
//! ```
//!
//! Options: `--seconds N` (default 1800), `--seed S` (default 1), `--concurrency C`
//! workers (default 8). Each worker owns its own profiles (cached), chunked blobs,
//! documents with history, two accounts and a sharded partition of events, and runs
//! operations on them at random; one more task adds to shared counters while migrations
//! run round after round in the background. Every call goes through a client that
//! injects a fault into 10 % of its HTTP calls, of every `FaultKind`. Each worker keeps
//! a model of what it wrote and checks it after every operation (see the invariants in
//! each module's documentation). Prints Markdown tables; exits non-zero on the first
//! broken invariant, naming it and the seed, or when the memory grows without bound
//! (`rss`).

mod counters;
mod entities;
mod events;
mod items;
mod ledger;
mod rss;
mod tally;

use dynamo_model::Db;
use dynamo_model::aws_sdk_dynamodb::config::retry::RetryConfig;
use dynamo_model::cache::Cache;
use dynamo_model::capacity::Meter;
use dynamo_model::local::faults::{FaultKind, FaultStats, Faults, client_with_faults};
use entities::{Account, Profile, Soak};
use reliability::{BoxError, Res};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tally::Tally;

/// The share of HTTP calls that get a fault.
const FAULT_RATE: f64 = 0.10;
/// Items the cache holds: fewer than the profiles and accounts of eight workers, so it
/// evicts as well as invalidates.
pub const CACHE_ITEMS: u64 = 256;

struct Options {
    seconds: u64,
    seed: u64,
    concurrency: usize,
}

fn options(args: &[String]) -> Res<Options> {
    let mut o = Options {
        seconds: 1800,
        seed: 1,
        concurrency: 8,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} takes a value"));
        match arg.as_str() {
            "--seconds" => o.seconds = value()?.parse()?,
            "--seed" => o.seed = value()?.parse()?,
            "--concurrency" => o.concurrency = value()?.parse::<usize>()?.max(1),
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    Ok(o)
}

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = options(&args)?;
    let started = Instant::now();
    let endpoint = dynamo_model::local::shared_endpoint()?;
    let runtime = tokio::runtime::Runtime::new()?;
    let code = runtime.block_on(soak(&options, &endpoint, started))?;
    drop(runtime);
    std::process::exit(code)
}

/// Every fault kind, picked uniformly among those that apply to a call.
fn faults(seed: u64) -> Faults {
    Faults::new(seed).rate(FAULT_RATE).kinds([
        FaultKind::Throttle,
        FaultKind::ServerError,
        FaultKind::ServerErrorAfterApply,
        FaultKind::Delay(Duration::from_millis(40)),
        FaultKind::PartialBatch,
        FaultKind::TransactionConflict,
        FaultKind::Reject,
    ])
}

/// The SDK's standard retries (three attempts), with a shorter first backoff than its
/// one second so that a run makes many operations.
fn retries() -> RetryConfig {
    RetryConfig::standard().with_initial_backoff(Duration::from_millis(50))
}

async fn soak(options: &Options, endpoint: &str, started: Instant) -> Res<i32> {
    let table = dynamo_model::local::fresh_table::<Soak>().await?;
    let faults = faults(options.seed);
    let client = client_with_faults(endpoint, &faults, retries());
    let meter = Meter::with_history(1_000);
    let cache = Cache::builder()
        .max_items(CACHE_ITEMS)
        .time_to_live(Duration::from_secs(60))
        .entity::<Profile>()
        .entity::<Account>()
        .build();
    let db = Db::<Soak>::new(client, table.table_name())
        .metered(&meter)
        .with_cache(&cache);
    let run = fastrand::u32(..);
    let tally = Arc::new(Tally::default());
    faults.set_enabled(false);
    let workers = seed_workers(&db, options.concurrency, run).await?;
    let counters = counters::model();
    for counter in counters::opening() {
        db.put(&counter).send().await?;
    }
    faults.set_enabled(true);
    let setup = started.elapsed();

    let samples = rss::Samples::default();
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = samples.start(stop.clone());
    let began = Instant::now();
    let deadline = began + Duration::from_secs(options.seconds);
    let mut tasks = tokio::task::JoinSet::new();
    for (i, worker) in workers.into_iter().enumerate() {
        let (db, tally) = (db.clone(), tally.clone());
        let seed = options.seed * 1_000 + i as u64;
        tasks.spawn(async move { worker.run(&db, &tally, seed, deadline).await.map(|()| 0) });
    }
    {
        let (db, tally, model) = (db.clone(), tally.clone(), counters.clone());
        let mut rng = fastrand::Rng::with_seed(options.seed * 1_000 + 999);
        tasks.spawn(async move {
            while Instant::now() < deadline {
                counters::hit(&db, &tally, &model, &mut rng).await?;
            }
            Ok(0)
        });
    }
    let migration_stop = Arc::new(AtomicBool::new(false));
    let migration = tokio::spawn(counters::migrations(
        db.clone(),
        tally.clone(),
        counters,
        run,
        migration_stop.clone(),
    ));
    while let Some(done) = tasks.join_next().await {
        if let Err(e) = done? {
            return Ok(failed(&e, options.seed));
        }
    }
    migration_stop.store(true, Ordering::SeqCst);
    let rounds = match migration.await? {
        Ok(rounds) => rounds,
        Err(e) => return Ok(failed(&e, options.seed)),
    };
    let took = began.elapsed();
    stop.store(true, Ordering::SeqCst);
    let _ = sampler.join();
    let verdict = samples.verdict();
    let figures = Figures {
        took,
        setup,
        rounds,
        stats: faults.stats(),
        cache: cache.stats(),
        meter_kept: meter.charges().len(),
        meter_calls: meter.calls(),
    };
    println!("{}", report(options, &tally, &figures, &verdict));
    table.drop_table().await?;
    if verdict.unbounded {
        eprintln!(
            "memory grows without bound (seed {}): {verdict:?}",
            options.seed
        );
        return Ok(2);
    }
    Ok(0)
}

fn failed(e: &BoxError, seed: u64) -> i32 {
    match e.downcast_ref::<tally::Broken>() {
        Some(broken) => eprintln!("{broken} (seed {seed})"),
        None => eprintln!("soak stopped (seed {seed}): {e}"),
    }
    1
}

/// One worker: the items, ledger and events it owns, and its model of them.
struct Worker {
    items: items::Items,
    ledger: ledger::Ledger,
    events: events::Events,
}

async fn seed_workers(db: &Db<Soak>, n: usize, run: u32) -> Res<Vec<Worker>> {
    let mut workers = Vec::new();
    for w in 0..n {
        let ledger = ledger::Ledger::new(w, run);
        for account in ledger.opening() {
            db.put(account).send().await?;
        }
        workers.push(Worker {
            items: items::Items::new(w),
            ledger,
            events: events::Events::new(w),
        });
    }
    Ok(workers)
}

impl Worker {
    async fn run(mut self, db: &Db<Soak>, tally: &Tally, seed: u64, deadline: Instant) -> Res<()> {
        let mut rng = fastrand::Rng::with_seed(seed);
        while Instant::now() < deadline {
            // Each operation's future boxed: in a debug build the crate's futures are
            // large, and one future holding every kind of operation at once overflowed a
            // runtime thread's 2 MiB stack.
            let op: std::pin::Pin<Box<dyn std::future::Future<Output = Res<()>> + Send + '_>> =
                match rng.u8(..100) {
                    0..=24 => Box::pin(self.items.profile_op(db, tally, &mut rng)),
                    25..=39 => Box::pin(self.items.profile_read(db, tally, &mut rng)),
                    40..=52 => Box::pin(self.items.blob_op(db, tally, &mut rng)),
                    53..=65 => Box::pin(self.ledger.doc_op(db, tally, &mut rng)),
                    66..=79 => Box::pin(self.ledger.transfer(db, tally, &mut rng)),
                    _ => Box::pin(self.events.batch_op(db, tally, &mut rng)),
                };
            op.await?;
        }
        Ok(())
    }
}

struct Figures {
    took: Duration,
    setup: Duration,
    rounds: u64,
    stats: FaultStats,
    cache: dynamo_model::cache::CacheStats,
    meter_kept: usize,
    meter_calls: u64,
}

fn rows<'a>(out: &mut String, rows: impl IntoIterator<Item = (&'a str, u64)>) -> u64 {
    let mut total = 0;
    for (name, n) in rows {
        out.push_str(&format!("| {name} | {n} |\n"));
        total += n;
    }
    total
}

fn report(o: &Options, tally: &Tally, f: &Figures, v: &rss::Verdict) -> String {
    let mut out = format!(
        "### Soak: {:.0} s, seed {}, {} workers (set-up {:.1} s)\n\n| operation | count |\n| --- | --- |\n",
        f.took.as_secs_f64(),
        o.seed,
        o.concurrency,
        f.setup.as_secs_f64()
    );
    let ops = rows(&mut out, tally.ops());
    out.push_str(&format!(
        "| **all** ({:.0} a second) | {ops} |\n",
        ops as f64 / f.took.as_secs_f64()
    ));
    out.push_str(&format!("| migration rounds completed | {} |\n", f.rounds));
    let s = &f.stats;
    out.push_str("\n| fault injected | count |\n| --- | --- |\n");
    let faults = rows(
        &mut out,
        [
            ("throttled (400, not applied)", s.throttled),
            ("server error (500, not applied)", s.server_errors),
            (
                "server error after apply (500, applied)",
                s.server_errors_after_apply,
            ),
            ("rejected (400 ValidationException)", s.rejected),
            ("delayed (40 ms)", s.delayed),
            ("partial batch", s.partial_batches),
            ("transaction conflict", s.transaction_conflicts),
        ],
    );
    out.push_str(&format!(
        "| **all**, of {} HTTP calls ({:.1} %) | {faults} |\n",
        s.calls,
        100.0 * faults as f64 / s.calls.max(1) as f64
    ));
    out.push_str("\n| invariant checked | checks (all held) |\n| --- | --- |\n");
    let checks = rows(&mut out, tally.checks());
    out.push_str(&format!(
        "| **all** | {checks} |\n\n| error met, and how it was settled | count |\n| --- | --- |\n"
    ));
    rows(&mut out, tally.settlements());
    out.push_str(&format!(
        "\n| bounded state | end of run |\n| --- | --- |\n| cache items (bound {CACHE_ITEMS}) | {} (hits {}, misses {}, invalidations {}) |\n| meter records kept (bound 1,000) | {} of {} calls |\n",
        f.cache.items, f.cache.hits, f.cache.misses, f.cache.invalidations, f.meter_kept, f.meter_calls
    ));
    out.push_str(&format!(
        "\n| memory (VmRSS) | |\n| --- | --- |\n| samples | {} (one a second; the first quarter is warm-up) |\n| start / end / peak | {:.1} / {:.1} / {:.1} MB |\n| after warm-up (median of the second quarter) | {:.1} MB |\n| slope after warm-up | {:+.1} KB/min |\n| growth the slope projects over the window / last-quarter median less baseline | {:+.0} / {:+.0} KB (allowed {:.0} KB) |\n| verdict | {} |\n",
        v.samples, v.start_kb / 1024.0, v.end_kb / 1024.0, v.peak_kb / 1024.0, v.baseline_kb / 1024.0,
        v.slope_kb_per_min, v.projected_kb, v.median_growth_kb, v.allowed_kb,
        if v.unbounded { "grows without bound" } else { "bounded" }
    ));
    out
}
