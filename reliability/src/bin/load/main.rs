//! Load on hot items, against DynamoDB Local: many writers on one item through optimistic
//! locking, through history `revise` and through `add`; scatter reads of a partition
//! sharded 16 ways while writers add to it; a bulk load. Each scenario reports its
//! throughput, conflicts and retries, and checks that nothing was lost.
//!
//! ```sh
//! scripts/load.sh                                       # the issue's figures (release)
//! cargo run -p reliability --bin load -- --writers 16 --ops 10 --items 10000
//! ```
//!
//! Options: `--writers N` (default 64), `--ops N` per writer (default 20), `--items N`
//! for the bulk load (default 100,000), `--only NAME` (locking, revise, add, scatter,
//! bulk), `--backoff default|fast` (after a lost race: the crate's default
//! `RetryPolicy`, full jitter from 50 ms doubling to 5 s, or 1 ms doubling to 100 ms). Prints a Markdown summary and each scenario's checks; exits non-zero when a
//! check fails.
//!
//! A warm-up (a bulk load, a batch get, single reads and puts on a table of its own) runs
//! first, so that the first scenario does not pay for Local's JIT.
//!
//! DynamoDB Local has no per-partition throughput limit, no throttling and no
//! transaction conflicts: the figures measure the client and Local on this machine, not
//! DynamoDB.

mod bulk;
mod hot;
mod report;
mod scatter;

use dynamo_model::Db;
use dynamo_model::RetryPolicy;
use dynamo_model::local::fresh_table;
use reliability::{BoxError, Res, Rig, Row};
use report::Report;
use std::future::Future;
use std::time::Duration;

/// The run's settings.
pub struct Options {
    pub writers: u32,
    pub ops: u64,
    pub items: u32,
    pub only: Option<Scenario>,
    /// The backoff of a writer that lost a race: the crate's default [`RetryPolicy`]
    /// unless `--backoff fast` asks for [`fast_backoff`].
    pub backoff: RetryPolicy,
}

/// A scenario of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    Locking,
    Revise,
    Add,
    Scatter,
    Bulk,
}

impl Scenario {
    const ALL: [Scenario; 5] = [
        Scenario::Locking,
        Scenario::Revise,
        Scenario::Add,
        Scenario::Scatter,
        Scenario::Bulk,
    ];

    fn name(self) -> &'static str {
        match self {
            Scenario::Locking => "locking",
            Scenario::Revise => "revise",
            Scenario::Add => "add",
            Scenario::Scatter => "scatter",
            Scenario::Bulk => "bulk",
        }
    }

    fn parse(name: &str) -> Option<Scenario> {
        Scenario::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Runs the scenario on a fresh table of its own.
    async fn run(self, o: &Options) -> Res<Report> {
        let db = fresh_table::<Rig>().await?;
        let report = match self {
            Scenario::Locking => hot::locking(&db, o).await?,
            Scenario::Revise => hot::revise(&db, o).await?,
            Scenario::Add => hot::add(&db, o).await?,
            Scenario::Scatter => scatter::scatter(&db, o).await?,
            Scenario::Bulk => bulk::bulk(&db, o).await?,
        };
        db.drop_table().await?;
        Ok(report)
    }
}

fn options(args: &[String]) -> Res<Options> {
    let mut o = Options {
        writers: 64,
        ops: 20,
        items: 100_000,
        only: None,
        backoff: RetryPolicy::default(),
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} takes a value"));
        match arg.as_str() {
            "--writers" => o.writers = value()?.parse()?,
            "--ops" => o.ops = value()?.parse()?,
            "--items" => o.items = value()?.parse()?,
            "--backoff" => {
                o.backoff = match value()?.as_str() {
                    "fast" => fast_backoff(),
                    "default" => RetryPolicy::default(),
                    other => return Err(format!("--backoff fast or default, not {other}").into()),
                }
            }
            "--only" => {
                let name = value()?;
                o.only = Some(Scenario::parse(name).ok_or_else(|| format!("no scenario {name}"))?)
            }
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    if o.writers == 0 || o.writers > 1_000 {
        return Err("--writers takes 1 to 1000".into());
    }
    Ok(o)
}

/// The backoff `--backoff fast` gives a writer that lost a race (the locking writers and
/// `revise`): full jitter from 1 ms doubling to 100 ms, for at most ten minutes. With 64
/// writers it loses to the default: more attempts, each more likely to conflict.
pub fn fast_backoff() -> RetryPolicy {
    RetryPolicy::default()
        .base(Duration::from_millis(1))
        .cap(Duration::from_millis(100))
        .deadline(Duration::from_secs(600))
}

/// Runs every future as its own task; their outputs in order (a task that panicked
/// gives an error).
pub async fn join_all<T: Send + 'static>(
    futures: impl IntoIterator<Item = impl Future<Output = Res<T>> + Send + 'static>,
) -> Vec<Res<T>> {
    let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::with_capacity(handles.len());
    for handle in handles {
        out.push(handle.await.map_err(BoxError::from).and_then(|r| r));
    }
    out
}

/// Warms DynamoDB Local's JIT before anything is measured (the first scenario would
/// otherwise pay for it): a bulk load of 5,000 rows, a batch get of them, and 64 tasks
/// each reading and putting a row 20 times, on a table of its own.
async fn warm_up() -> Res<()> {
    let db = fresh_table::<Rig>().await?;
    let rows: Vec<Row> = (0..5_000)
        .map(|n| Row {
            n,
            payload: format!("warm-up {n}"),
        })
        .collect();
    db.bulk_load().puts(&rows).send().await?;
    db.batch_get::<Row>()
        .keys((0..5_000).map(Row::key))
        .send()
        .await?;
    let tasks = (0..64).map(|t| {
        let db: Db<Rig> = db.clone();
        async move {
            for _ in 0..20 {
                let row = db.get(Row::key(t)).consistent().await?;
                db.put(&row.ok_or("a warm-up row is missing")?).await?;
            }
            Ok(())
        }
    });
    for outcome in join_all(tasks).await {
        outcome?;
    }
    db.drop_table().await?;
    Ok(())
}

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = options(&args)?;
    let runtime = tokio::runtime::Runtime::new()?;
    println!(
        "## Load on hot items ({} writers, {} operations each, {} rows bulk-loaded)\n",
        o.writers, o.ops, o.items
    );
    runtime.block_on(warm_up())?;
    let mut reports = Vec::new();
    for scenario in Scenario::ALL
        .into_iter()
        .filter(|s| o.only.is_none_or(|only| only == *s))
    {
        let report = runtime.block_on(scenario.run(&o))?;
        eprintln!("{}", report.row());
        reports.push(report);
    }
    println!("{}", report::HEADER);
    for r in &reports {
        println!("{}", r.row());
    }
    for r in &reports {
        println!("\n{}", r.details());
    }
    let failed: Vec<&str> = reports
        .iter()
        .filter(|r| !r.held())
        .map(|r| r.name)
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("checks failed in: {}", failed.join(", ")).into())
    }
}
