//! The protocols the harness kills, each in three parts: what the parent writes before the
//! child starts (`prepare`), the child's steps (`run`, announcing each step before it
//! starts), and what the parent checks after the kill, runs as the documented recovery,
//! and checks again (`check`).

use crate::migration::Writer;
use dynamo_model::{Db, Error};
use reliability::{
    Account, Blob, Bystander, Res, Rig, Row, age_chunks, bytes, named_and_present, raw_items,
};

/// A protocol of the harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// Chunked puts and a delete of one value.
    Chunked,
    /// Transfers in transactions, each with its idempotency token.
    Transaction,
    /// A batch write of puts and deletes across many requests.
    Batch,
    /// Every history operation on one document.
    History,
    /// A migration with file checkpoints beside a writer, resumed after the kill.
    Migration,
    /// Period tables created ahead and dropped.
    Period,
}

impl Protocol {
    pub const ALL: [Protocol; 6] = [
        Protocol::Chunked,
        Protocol::Transaction,
        Protocol::Batch,
        Protocol::History,
        Protocol::Migration,
        Protocol::Period,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Protocol::Chunked => "chunked",
            Protocol::Transaction => "transaction",
            Protocol::Batch => "batch",
            Protocol::History => "history",
            Protocol::Migration => "migration",
            Protocol::Period => "period",
        }
    }

    pub fn parse(name: &str) -> Option<Protocol> {
        Protocol::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The invariant, as the report states it.
    pub fn invariant(self) -> &'static str {
        match self {
            Protocol::Chunked => {
                "the value read is the one before or after the step the kill interrupted, whole; after `collect_orphans` every chunk is named by the item and every named chunk exists"
            }
            Protocol::Transaction => {
                "balances show each transfer before the interrupted one applied once; resending all three with their tokens applies each exactly once"
            }
            Protocol::Batch => {
                "after the caller resends the batch, exactly the put rows hold their payloads and the deleted rows are gone: nothing lost, nothing extra"
            }
            Protocol::History => {
                "the history is the one before or after the interrupted step: no gap, no duplicate, every revision's body the one written, the latest copy the highest revision, never a latest copy without its history (an interrupted delete_all leaves revisions only); after the prune is run again and a revision added, exactly the newest three remain; after delete_all is run again, nothing remains and the item can be created again"
            }
            Protocol::Migration => {
                "the checkpoint file is whole or absent, no counter changed twice, no add of the concurrent writer lost; run again beside the writer, the migration resumes from it and every counter is changed exactly once, with every add"
            }
            Protocol::Period => {
                "the tables are the old ones not yet dropped (the newest, each whole) and the new ones created so far (in order, each with TTL but the last); both steps run again leave exactly the new tables, each with TTL"
            }
        }
    }

    /// The names of the child's steps, in order.
    pub fn steps(self) -> &'static [&'static str] {
        match self {
            Protocol::Chunked => &["put A", "put B", "delete", "put C"],
            Protocol::Transaction => &["transfer 1", "transfer 2", "transfer 3"],
            Protocol::Batch => &["batch write"],
            Protocol::History => crate::history::STEPS,
            Protocol::Migration => crate::migration::STEPS,
            Protocol::Period => crate::period::STEPS,
        }
    }

    /// Parent, before the child starts.
    pub async fn prepare(self, db: &Db<Rig>, seed: u64) -> Res<()> {
        db.put(&Bystander::sample()).await?;
        match self {
            Protocol::Chunked => db.put(&blob(seed, 0)).await?,
            Protocol::Transaction => {
                for (id, balance) in [("x", 100), ("y", 0)] {
                    db.put(&account(id, balance, 0)).await?;
                }
            }
            Protocol::History => {}
            Protocol::Migration => crate::migration::prepare(db).await?,
            Protocol::Period => crate::period::prepare(db).await?,
            Protocol::Batch => {
                // The rows the batch deletes, and one it overwrites.
                db.batch_write()
                    .puts(&(0..DELETED).map(|n| row(n, "old")).collect::<Vec<_>>())
                    .send()
                    .await?;
            }
        }
        Ok(())
    }

    /// Child: the steps, `step(i)` announced before step `i` starts.
    pub async fn run(self, db: &Db<Rig>, seed: u64, step: &mut dyn FnMut(usize)) -> Res<()> {
        match self {
            Protocol::Chunked => {
                step(0);
                db.put(&blob(seed, 1)).await?;
                step(1);
                db.put(&blob(seed, 2)).await?;
                step(2);
                db.delete(Blob::key(BLOB)).await?;
                step(3);
                db.put(&blob(seed, 3)).await?;
            }
            Protocol::Transaction => {
                for k in 0..3 {
                    step(k);
                    transfer(db, k).await?;
                }
            }
            Protocol::Batch => {
                step(0);
                batch(db).send().await?;
            }
            Protocol::History => crate::history::run(db, step).await?,
            Protocol::Migration => crate::migration::run(db, step).await?,
            Protocol::Period => crate::period::run(db, step).await?,
        }
        Ok(())
    }

    /// Parent, once the child is started: what runs beside it (the migration's writer).
    pub fn beside(self, db: &Db<Rig>, seed: u64) -> Option<Writer> {
        (self == Protocol::Migration).then(|| Writer::start(db, seed))
    }

    /// Parent, after the kill: `last` is the last step the child announced (`None`: killed
    /// before its first, `Some(steps.len())`: it finished); `beside` what [`beside`]
    /// started. Returns the state it found.
    ///
    /// [`beside`]: Protocol::beside
    pub async fn check(
        self,
        db: &Db<Rig>,
        seed: u64,
        last: Option<usize>,
        beside: Option<Writer>,
    ) -> Res<String> {
        let found = match self {
            Protocol::Chunked => check_chunked(db, seed, last).await?,
            Protocol::Transaction => check_transaction(db, last).await?,
            Protocol::Batch => check_batch(db).await?,
            Protocol::History => crate::history::check(db, last).await?,
            Protocol::Migration => crate::migration::check(db, seed, beside).await?,
            Protocol::Period => crate::period::check(db, last).await?,
        };
        let bystander = db.get(Bystander::key()).consistent().await?;
        if bystander != Some(Bystander::sample()) {
            return Err(format!("the bystander item changed: {bystander:?}").into());
        }
        Ok(found)
    }
}

const BLOB: &str = "b";

/// State `k` of the chunked protocol's value: 0 before the child, 1 after `put A`, 2 after
/// `put B`, 3 after the delete (none), 4 after `put C`.
fn blob_state(seed: u64, k: usize) -> Option<Blob> {
    match k {
        0 => Some(blob(seed, 0)),
        1 | 2 => Some(blob(seed, k as u64)),
        3 => None,
        _ => Some(blob(seed, 3)),
    }
}

/// Version `v` of the value: a few kilobytes (several chunks), a different size each.
fn blob(seed: u64, v: u64) -> Blob {
    let size = 2_000 + ((seed * 7 + v * 1_300) % 5_000) as usize;
    Blob {
        id: BLOB.into(),
        label: format!("version {v} of seed {seed}"),
        data: bytes(size, seed * 10 + v).into(),
    }
}

async fn check_chunked(db: &Db<Rig>, seed: u64, last: Option<usize>) -> Res<String> {
    // Step i takes state i to state i + 1; states before the interrupted step are done.
    let (before, after) = match last {
        None => (0, 0),
        Some(i) => (i, (i + 1).min(4)),
    };
    let read = || async { db.get(Blob::key(BLOB)).consistent().await };
    let value = read().await?;
    let which = (before..=after)
        .find(|&k| blob_state(seed, k) == value)
        .ok_or_else(|| {
            format!(
                "states {before}..={after} expected, read {}",
                describe(&value)
            )
        })?;
    // Recovery: the sweep, once the chunks are old enough to be swept.
    age_chunks(db).await?;
    db.collect_orphans(dynamo_model::chunk::MIN_ORPHAN_AGE)
        .await?;
    let (named, present) = named_and_present(db).await?;
    if named != present {
        return Err(format!("after the sweep, named {named:?}, present {present:?}").into());
    }
    if read().await? != value {
        return Err("the sweep changed the value read".into());
    }
    // And the item takes a new value.
    db.put(&blob(seed, 9)).await?;
    if read().await? != Some(blob(seed, 9)) {
        return Err("a put after the recovery did not read back".into());
    }
    Ok(format!("state {which}"))
}

fn describe(value: &Option<Blob>) -> String {
    match value {
        None => "no item".into(),
        Some(b) => format!("{:?} ({} bytes)", b.label, b.data.get().map_or(0, Vec::len)),
    }
}

fn account(id: &str, balance: i64, transfers: u32) -> Account {
    Account {
        id: id.into(),
        balance,
        transfers,
    }
}

/// Transfer `k`: 10 from `x` to `y`, with its own token (unique to the table: a token
/// sent again with other parameters within 10 minutes is refused).
async fn transfer(db: &Db<Rig>, k: usize) -> Result<(), Error> {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    db.table_name().hash(&mut hasher);
    let f = Account::fields();
    db.transact_write()
        .update(
            db.update(Account::key("x"))
                .add(f.balance, -10)
                .add(f.transfers, 1)
                .condition(f.balance.ge(10)),
        )
        .update(
            db.update(Account::key("y"))
                .add(f.balance, 10)
                .add(f.transfers, 1),
        )
        .token(format!("crash-{:016x}-{k}", hasher.finish()))
        .await
        .map(drop)
}

async fn accounts(db: &Db<Rig>) -> Res<(Account, Account)> {
    let get = |id: &'static str| async move {
        db.get(Account::key(id))
            .consistent()
            .await?
            .ok_or_else(|| reliability::BoxError::from(format!("account {id} is gone")))
    };
    Ok((get("x").await?, get("y").await?))
}

async fn check_transaction(db: &Db<Rig>, last: Option<usize>) -> Res<String> {
    let (done, at_most) = match last {
        None => (0, 0),
        Some(i) => (i as i64, (i as i64 + 1).min(3)),
    };
    let (x, y) = accounts(db).await?;
    let applied = y.balance / 10;
    let consistent = x.balance + y.balance == 100
        && (done..=at_most).contains(&applied)
        && i64::from(x.transfers) == applied
        && i64::from(y.transfers) == applied;
    if !consistent {
        return Err(format!("after {done} to {at_most} transfers: {x:?}, {y:?}").into());
    }
    // Recovery: the caller resends every transfer with its token.
    for k in 0..3 {
        transfer(db, k).await?;
    }
    let (x, y) = accounts(db).await?;
    if x != account("x", 70, 3) || y != account("y", 30, 3) {
        return Err(format!("after resending: {x:?}, {y:?}").into());
    }
    Ok(format!("{applied} applied"))
}

/// Rows `0..DELETED` exist before the batch, which deletes all but the last and puts
/// rows `DELETED - 1..ROWS` (overwriting that last one).
const DELETED: u32 = 40;
const ROWS: u32 = 240;

fn row(n: u32, payload: &str) -> Row {
    Row {
        n,
        payload: format!("{payload} {n}"),
    }
}

fn batch(db: &Db<Rig>) -> dynamo_model::batch::BatchWrite<Rig> {
    let puts: Vec<Row> = (DELETED - 1..ROWS).map(|n| row(n, "new")).collect();
    db.batch_write()
        .deletes((0..DELETED - 1).map(Row::key))
        .puts(&puts)
}

async fn check_batch(db: &Db<Rig>) -> Res<String> {
    let rows = || async {
        let mut rows: Vec<String> = raw_items(db)
            .await?
            .iter()
            .filter_map(|i| reliability::text(i, "payload").map(str::to_owned))
            .collect();
        rows.sort();
        Ok::<_, reliability::BoxError>(rows)
    };
    let before = rows().await?;
    let written = before.iter().filter(|r| r.starts_with("new")).count();
    // Recovery: the caller resends the whole batch.
    let out = batch(db).send().await?;
    if !out.unprocessed.is_empty() || !out.failed.is_empty() {
        return Err(format!("the resent batch left {out:?}").into());
    }
    let mut want: Vec<String> = (DELETED - 1..ROWS).map(|n| row(n, "new").payload).collect();
    want.sort();
    let after = rows().await?;
    if after != want {
        return Err(format!(
            "after resending: {} rows, {} expected",
            after.len(),
            want.len()
        )
        .into());
    }
    let puts = (ROWS - DELETED + 1) as usize;
    Ok(match written {
        0 => "none of the puts applied".into(),
        n if n == puts => "every put applied".into(),
        n if n * 2 < puts => "under half of the puts applied".into(),
        _ => "half or more of the puts applied".into(),
    })
}
