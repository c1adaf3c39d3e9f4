//! The migration protocol: a migration adding one to each of 100 counters, pages of 10,
//! checkpoints in a file after every page. After the kill the checkpoint file is whole
//! (or absent), and the migration run again resumes from it and leaves every counter
//! changed exactly once.

use dynamo_model::Db;
use dynamo_model::migrate::{CheckpointStore, FileCheckpoints, Migration};
use reliability::{Counter, Res, Rig};
use std::path::PathBuf;

pub const STEPS: &[&str] = &["run the migration"];

const COUNTERS: u32 = 100;
const NAME: &str = "add-one";

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

/// How many counters are changed (by one); an error for one holding anything else, or
/// for a counter gone. One consistent scan, not a read per counter.
async fn changed(db: &Db<Rig>) -> Res<usize> {
    let counters = db.scan::<Counter>().consistent().all().await?.items;
    if counters.len() != COUNTERS as usize {
        return Err(format!("{} of {COUNTERS} counters left", counters.len()).into());
    }
    let mut changed = 0;
    for c in counters {
        match c.n.checked_sub(u64::from(c.id) * 10) {
            Some(0) => {}
            Some(1) => changed += 1,
            _ => return Err(format!("counter {} holds {}", c.id, c.n).into()),
        }
    }
    Ok(changed)
}

/// After the kill: the checkpoint whole or absent, no counter changed twice; then the
/// migration run again, which must resume and change every counter exactly once.
pub async fn check(db: &Db<Rig>) -> Res<String> {
    let dir = directory(db.table_name());
    let result = check_in(db).await;
    let _ = std::fs::remove_dir_all(&dir);
    result
}

async fn check_in(db: &Db<Rig>) -> Res<String> {
    let store = FileCheckpoints::new(directory(db.table_name()));
    // A torn checkpoint is refused by `load` (not a checkpoint): the run could not resume.
    let saved = store
        .load(NAME)
        .await
        .map_err(|e| format!("the checkpoint after the kill: {e}"))?;
    let before = changed(db).await?;
    let report = migration(db).run().await?;
    let p = &report.progress;
    if report.resumed != saved.is_some() || p.changed + p.already != u64::from(COUNTERS) {
        return Err(format!("the run after the kill: {report:?}").into());
    }
    let after = changed(db).await?;
    if after != COUNTERS as usize {
        return Err(format!("{after} of {COUNTERS} counters changed after resuming").into());
    }
    Ok(match (saved, before) {
        (None, 0) => "no checkpoint, nothing changed".into(),
        (None, _) => "no checkpoint, counters changed".into(),
        (Some(_), n) if n == COUNTERS as usize => "checkpoint, all changed".into(),
        (Some(_), _) => "checkpoint, some changed".into(),
    })
}
