//! The migration protocol: a migration adding one to each of 100 counters, pages of 10,
//! checkpoints in a file after every page, while a writer in the parent adds 1,000 to
//! counters it picks at random (the application writing during the migration, and during
//! its resumption). After the kill the checkpoint file is whole (or absent), and the
//! migration run again resumes from it and leaves every counter changed exactly once, and
//! every add of the writer in it.

use dynamo_model::Db;
use dynamo_model::migrate::{CheckpointStore, FileCheckpoints, Migration};
use reliability::{Counter, Res, Rig};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub const STEPS: &[&str] = &["run the migration"];

const COUNTERS: u32 = 100;
const NAME: &str = "add-one";
/// What the concurrent writer adds: far from the migration's one.
const ADD: u64 = 1_000;

/// The checkpoint directory of the run on `table` (unique: table names are).
fn directory(table: &str) -> PathBuf {
    std::env::temp_dir().join(format!("dynamo-model-crash-{table}"))
}

fn migration(db: &Db<Rig>) -> Migration<Counter> {
    db.migration::<Counter>(NAME)
        .map(|mut c| {
            c.n += 1;
            Some(c)
        })
        .page_size(10)
        .checkpoints(FileCheckpoints::new(directory(db.table_name())))
}

/// Parent: the counters, at `10 × id`.
pub async fn prepare(db: &Db<Rig>) -> Res<()> {
    let counters: Vec<Counter> = (0..COUNTERS)
        .map(|id| Counter {
            id,
            n: u64::from(id) * 10,
        })
        .collect();
    db.batch_write().puts(&counters).send().await?;
    Ok(())
}

/// The child's one step.
pub async fn run(db: &Db<Rig>, step: &mut dyn FnMut(usize)) -> Res<()> {
    step(0);
    migration(db).run().await?;
    Ok(())
}

/// The application writing while the migration runs: one `UpdateItem` at a time, each
/// adding [`ADD`] to a counter picked at random; counts the adds acknowledged per counter.
pub struct Writer {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<Res<Vec<u64>>>,
}

impl Writer {
    pub fn start(db: &Db<Rig>, seed: u64) -> Writer {
        let stop = Arc::new(AtomicBool::new(false));
        let (db, stopped) = (db.clone(), stop.clone());
        let task = tokio::spawn(async move {
            let mut adds = vec![0; COUNTERS as usize];
            let mut rng = fastrand::Rng::with_seed(seed);
            while !stopped.load(Ordering::Relaxed) {
                let id = rng.u32(..COUNTERS);
                db.update(Counter::key(id))
                    .add(Counter::fields().n, ADD)
                    .await?;
                adds[id as usize] += 1;
            }
            Ok(adds)
        });
        Writer { stop, task }
    }

    /// Stops the writer; the adds it made per counter.
    pub async fn stop(self) -> Res<Vec<u64>> {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await?
    }
}

/// How many counters are changed (by one), beside the `adds` of the writer; an error for
/// one holding anything else, or for a counter gone. One consistent scan, not a read per
/// counter.
async fn changed(db: &Db<Rig>, adds: &[u64]) -> Res<usize> {
    let counters = db.scan::<Counter>().consistent().all().await?.items;
    if counters.len() != COUNTERS as usize {
        return Err(format!("{} of {COUNTERS} counters left", counters.len()).into());
    }
    let mut changed = 0;
    for c in counters {
        let written = adds.get(c.id as usize).map_or(0, |a| a * ADD);
        match c.n.checked_sub(u64::from(c.id) * 10 + written) {
            Some(0) => {}
            Some(1) => changed += 1,
            _ => return Err(format!("counter {} holds {}", c.id, c.n).into()),
        }
    }
    Ok(changed)
}

/// After the kill (the writer stopped): the checkpoint whole or absent, no counter
/// changed twice, no add lost; then the migration run again beside a new writer, which
/// must resume and change every counter exactly once, losing none of either writer's adds.
pub async fn check(db: &Db<Rig>, seed: u64, writer: Option<Writer>) -> Res<String> {
    let dir = directory(db.table_name());
    let result = match writer {
        Some(writer) => check_in(db, seed, writer).await,
        None => Err("the migration runs beside a writer".into()),
    };
    let _ = std::fs::remove_dir_all(&dir);
    result
}

async fn check_in(db: &Db<Rig>, seed: u64, writer: Writer) -> Res<String> {
    let mut adds = writer.stop().await?;
    let store = FileCheckpoints::new(directory(db.table_name()));
    // A torn checkpoint is refused by `load` (not a checkpoint): the run could not resume.
    let saved = store
        .load(NAME)
        .await
        .map_err(|e| format!("the checkpoint after the kill: {e}"))?;
    let before = changed(db, &adds).await?;
    let writer = Writer::start(db, seed ^ 0x5eed);
    let report = migration(db).run().await;
    for (all, more) in adds.iter_mut().zip(writer.stop().await?) {
        *all += more;
    }
    let report = report?;
    let p = &report.progress;
    if report.resumed != saved.is_some() || p.changed + p.already != u64::from(COUNTERS) {
        return Err(format!("the run after the kill: {report:?}").into());
    }
    let after = changed(db, &adds).await?;
    if after != COUNTERS as usize {
        return Err(format!("{after} of {COUNTERS} counters changed after resuming").into());
    }
    let state = match (saved, before) {
        (None, 0) => "no checkpoint, nothing changed",
        (None, _) => "no checkpoint, counters changed",
        (Some(_), n) if n == COUNTERS as usize => "checkpoint, all changed",
        (Some(_), _) => "checkpoint, some changed",
    };
    // Conflicts: writes of the migration whose condition the writer's adds broke.
    let conflicts = if p.conflicts > 0 {
        "conflicts"
    } else {
        "no conflict"
    };
    Ok(format!("{state}; {conflicts}"))
}
