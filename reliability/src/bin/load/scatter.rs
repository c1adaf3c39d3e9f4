//! Scatter reads of a partition sharded 16 ways while writers add to it: every read
//! returns everything acknowledged before it began, and nothing that was never written,
//! whether it reads all at once or a page at a time through its cursor.

use crate::report::{Report, Wire, per_second};
use crate::{Options, join_all};
use dynamo_model::Db;
use reliability::{Event, Res, Rig};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// The hot partition's `run`.
const RUN: u32 = 1;
/// Concurrent scatter readers: half read all at once, half page by page.
const READERS: usize = 4;
/// Ids of writer `w` are `w * STRIDE + step`.
const STRIDE: u64 = 1_000_000;

/// Per writer, how many puts it has started and how many were acknowledged (each writer
/// writes its events in order, so both are prefixes of its steps).
struct Progress {
    started: Vec<AtomicU64>,
    acked: Vec<AtomicU64>,
    done: AtomicBool,
}

impl Progress {
    fn new(writers: u32) -> Self {
        let zeros = || (0..writers).map(|_| AtomicU64::new(0)).collect();
        Progress {
            started: zeros(),
            acked: zeros(),
            done: AtomicBool::new(false),
        }
    }

    fn snapshot(counts: &[AtomicU64]) -> Vec<u64> {
        counts.iter().map(|c| c.load(Ordering::SeqCst)).collect()
    }
}

fn event(id: u64) -> Event {
    Event {
        run: RUN,
        id,
        payload: format!("event {id} of writer {}", id / STRIDE),
    }
}

async fn writer(db: Db<Rig>, w: u32, ops: u64, p: Arc<Progress>) -> Res<u64> {
    let slot = w as usize;
    for step in 0..ops {
        p.started[slot].store(step + 1, Ordering::SeqCst);
        db.put(&event(u64::from(w) * STRIDE + step)).await?;
        p.acked[slot].store(step + 1, Ordering::SeqCst);
    }
    Ok(ops)
}

/// One scatter read of every shard (strongly consistent): with `all()`, or `paged` a page
/// of at most [`PAGE`] events at a time through the read's cursor.
async fn read_all(db: &Db<Rig>, paged: bool) -> Res<Vec<Event>> {
    let query = || db.scatter_query(Event::partition(RUN)).consistent();
    if !paged {
        return Ok(query().all().await?.items);
    }
    let (mut items, mut cursor) = (Vec::new(), None);
    loop {
        let page = query().limit(PAGE).page(cursor.as_ref()).await?;
        items.extend(page.items);
        match page.cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(items),
        }
    }
}

/// The page size of a paged scatter read.
const PAGE: usize = 100;

/// What is wrong with `items`, read after `acked` were acknowledged and before `started`
/// were started: a duplicate, an event never started, a wrong payload, or an acknowledged
/// event missing.
fn faults_of(items: &[Event], acked: &[u64], started: &[u64]) -> Vec<String> {
    let mut faults = Vec::new();
    let mut seen = HashSet::with_capacity(items.len());
    let mut below = vec![0u64; acked.len()];
    for e in items {
        let (w, step) = ((e.id / STRIDE) as usize, e.id % STRIDE);
        if !seen.insert(e.id) {
            faults.push(format!("event {} read twice", e.id));
        }
        if started.get(w).is_none_or(|&s| step >= s) || e.run != RUN {
            faults.push(format!("event {} was never written", e.id));
        }
        if e.payload != event(e.id).payload {
            faults.push(format!("event {} has payload {:?}", e.id, e.payload));
        }
        if acked.get(w).is_some_and(|&a| step < a) {
            below[w] += 1;
        }
    }
    for (w, (&a, &found)) in acked.iter().zip(&below).enumerate() {
        if found < a {
            faults.push(format!(
                "writer {w}: {a} acknowledged, {found} of them read"
            ));
        }
    }
    faults
}

/// What the readers found: reads, events read, and faults (the first few described).
#[derive(Default)]
struct Reads {
    reads: u64,
    items: u64,
    faults: Vec<String>,
}

/// Reads until the writers are done: `paged` reads page by page, the others all at once.
async fn reader(db: Db<Rig>, p: Arc<Progress>, paged: bool) -> Res<Reads> {
    let mut r = Reads::default();
    while !p.done.load(Ordering::SeqCst) {
        let acked = Progress::snapshot(&p.acked);
        let items = read_all(&db, paged).await?;
        let started = Progress::snapshot(&p.started);
        r.reads += 1;
        r.items += items.len() as u64;
        r.faults.extend(faults_of(&items, &acked, &started));
    }
    Ok(r)
}

/// Scenario 4: `writers` × `ops` puts into a partition of 16 shards, read by scatter
/// queries meanwhile.
pub async fn scatter(db: &Db<Rig>, o: &Options) -> Res<Report> {
    let mut r = Report::new("scatter reads, 16 shards");
    let p = Arc::new(Progress::new(o.writers));
    let wire = Wire::default();
    let hot = wire.attach(db);
    let started = Instant::now();
    let readers: Vec<_> = (0..READERS)
        .map(|i| tokio::spawn(reader(hot.clone(), p.clone(), i % 2 == 1)))
        .collect();
    let written = join_all((0..o.writers).map(|w| writer(hot.clone(), w, o.ops, p.clone()))).await;
    let writes_took = started.elapsed();
    p.done.store(true, Ordering::SeqCst);
    let mut reads = Reads::default();
    let mut failed = 0;
    for outcome in join_all(readers.into_iter().map(|h| async move { h.await? })).await {
        match outcome {
            Ok(x) => {
                reads.reads += x.reads;
                reads.items += x.items;
                reads.faults.extend(x.faults);
            }
            Err(e) => {
                failed += 1;
                r.notes.push(format!("a reader failed: {e}"));
            }
        }
    }
    r.took = started.elapsed();
    let writes: u64 = written.iter().filter_map(|w| w.as_ref().ok()).sum();
    let failed_writers = written.iter().filter(|w| w.is_err()).count();
    r.ops = writes + reads.reads;
    // The crate resends neither a put nor a query of a scatter read (the SDK would, on a
    // throttle or a 500): every call counts as needed.
    r.wire(&wire, wire.calls(), 0);
    r.notes.push(format!(
        "{writes} puts in {:.2} s ({:.0} writes/s) while {READERS} readers (half of them {PAGE} events a page) made {} scatter reads ({:.1} reads/s, {:.0} events read/s, {:.0} events a read on average)",
        writes_took.as_secs_f64(),
        per_second(writes, writes_took),
        reads.reads,
        per_second(reads.reads, r.took),
        per_second(reads.items, r.took),
        reads.items as f64 / reads.reads.max(1) as f64,
    ));
    r.check(
        format!(
            "every writer and reader finished ({failed_writers} writers, {failed} readers failed)"
        ),
        failed_writers == 0 && failed == 0,
    );
    r.check(
        format!(
            "every scatter read held everything acknowledged before it began, nothing never written, no duplicate ({} faults{})",
            reads.faults.len(),
            reads.faults.first().map(|f| format!(", first: {f}")).unwrap_or_default()
        ),
        reads.faults.is_empty(),
    );
    let all = u64::from(o.writers) * o.ops;
    let last = read_all(db, true).await?;
    let full: Vec<u64> = vec![o.ops; o.writers as usize];
    let faults = faults_of(&last, &full, &full);
    r.check(
        format!(
            "a read after the writers: {} events, {all} written ({} faults)",
            last.len(),
            faults.len()
        ),
        faults.is_empty() && last.len() as u64 == all,
    );
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Events `0..n` of writer `w`.
    fn written(w: u64, n: u64) -> Vec<Event> {
        (0..n).map(|step| event(w * STRIDE + step)).collect()
    }

    #[test]
    fn a_read_holding_what_was_acknowledged_and_started_is_sound() {
        let mut items = written(0, 3);
        items.extend(written(1, 2));
        // Writer 0's third put was in flight when the read began: it may appear.
        assert!(faults_of(&items, &[2, 2], &[3, 2]).is_empty());
    }

    #[test]
    fn a_missing_duplicate_unwritten_or_altered_event_is_a_fault() {
        let items = written(0, 2);
        assert_eq!(
            faults_of(&items, &[3], &[3]).len(),
            1,
            "one acknowledged missing"
        );
        let twice = [written(0, 2), written(0, 1)].concat();
        assert_eq!(faults_of(&twice, &[2], &[2]).len(), 1, "one read twice");
        assert_eq!(
            faults_of(&written(0, 3), &[2], &[2]).len(),
            1,
            "never started"
        );
        let mut altered = written(0, 2);
        altered[1].payload = "other".into();
        assert_eq!(faults_of(&altered, &[2], &[2]).len(), 1, "another payload");
    }
}
