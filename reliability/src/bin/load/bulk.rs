//! A bulk load (`db.bulk_load()`), then every row read back twice: a scan counts them and
//! a batch get of every key reads each one.

use crate::Options;
use crate::report::{Report, Wire, per_second};
use dynamo_model::Db;
use futures_util::TryStreamExt;
use reliability::{Res, Rig, Row};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// `BatchWriteItem` takes at most 25 writes.
const BATCH: u64 = 25;

/// Row `n`'s payload: about 100 bytes, its own.
fn row(n: u32) -> Row {
    Row {
        n,
        payload: format!("row {n:06} {}", "x".repeat(80 + (n % 16) as usize)),
    }
}

/// Rows that are not `0..items` exactly once with their payloads: (missing, extra or
/// repeated, wrong payload).
fn faults_of(rows: &[Row], items: u32) -> (usize, usize, usize) {
    let mut seen = HashSet::with_capacity(rows.len());
    let (mut extra, mut wrong) = (0, 0);
    for r in rows {
        if r.n >= items || !seen.insert(r.n) {
            extra += 1;
        } else if *r != row(r.n) {
            wrong += 1;
        }
    }
    (items as usize - seen.len(), extra, wrong)
}

/// Scenario 5: `items` rows through the bulk loader, each then read back.
pub async fn bulk(db: &Db<Rig>, o: &Options) -> Res<Report> {
    let mut r = Report::new("bulk load");
    let rows: Vec<Row> = (0..o.items).map(row).collect();
    let wire = Wire::default();
    let loader = wire.attach(db);
    let progress_calls = Arc::new(AtomicUsize::new(0));
    let calls = progress_calls.clone();
    let started = Instant::now();
    let out = loader
        .bulk_load()
        .puts(&rows)
        .on_progress(move |_| {
            calls.fetch_add(1, Ordering::Relaxed);
        })
        .send()
        .await?;
    r.took = started.elapsed();
    r.ops = out.written as u64;
    r.wire(&wire, u64::from(o.items).div_ceil(BATCH), 0);
    r.check(
        format!(
            "the loader confirmed {} of {} ({} unprocessed, {} chunks failed)",
            out.written,
            o.items,
            out.unprocessed.len(),
            out.failed.len()
        ),
        out.written == rows.len() && out.unprocessed.is_empty() && out.failed.is_empty(),
    );
    r.notes.push(format!(
        "{} progress reports; {:.0} write units consumed",
        progress_calls.load(Ordering::Relaxed),
        out.consumed_capacity
    ));
    drop(rows);
    scan_back(db, o.items, &mut r).await?;
    get_back(db, o.items, &mut r).await?;
    Ok(r)
}

/// A strongly consistent scan in four segments: every row exactly once, with its payload.
async fn scan_back(db: &Db<Rig>, items: u32, r: &mut Report) -> Res<()> {
    let started = Instant::now();
    let rows: Vec<Row> = db
        .scan::<Row>()
        .segments(4)
        .consistent()
        .stream()
        .try_collect()
        .await?;
    let took = started.elapsed();
    let (missing, extra, wrong) = faults_of(&rows, items);
    r.check(
        format!(
            "a scan read {} rows in {:.1} s: {missing} missing, {extra} extra or repeated, {wrong} with another payload",
            rows.len(),
            took.as_secs_f64()
        ),
        (missing, extra, wrong) == (0, 0, 0),
    );
    Ok(())
}

/// A strongly consistent batch get of every key: every row found, with its payload.
async fn get_back(db: &Db<Rig>, items: u32, r: &mut Report) -> Res<()> {
    let started = Instant::now();
    let out = db
        .batch_get::<Row>()
        .keys((0..items).map(Row::key))
        .consistent()
        .send()
        .await?;
    let took = started.elapsed();
    let (missing, extra, wrong) = faults_of(&out.items, items);
    r.check(
        format!(
            "a batch get of every key read {} rows in {:.1} s ({:.0} rows/s): {missing} missing ({} not found, {} unprocessed), {extra} extra, {wrong} with another payload",
            out.items.len(),
            took.as_secs_f64(),
            per_second(out.items.len() as u64, took),
            out.not_found.len(),
            out.unprocessed.len()
        ),
        (missing, extra, wrong) == (0, 0, 0) && out.failed.is_empty(),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_once_with_its_payload_is_no_fault() {
        let rows: Vec<Row> = (0..10).rev().map(row).collect();
        assert_eq!(faults_of(&rows, 10), (0, 0, 0));
    }

    #[test]
    fn missing_repeated_foreign_and_altered_rows_are_counted() {
        let mut rows: Vec<Row> = (0..8).map(row).collect();
        rows.push(row(3));
        rows.push(row(42));
        rows[0].payload = "other".into();
        assert_eq!(faults_of(&rows, 10), (2, 2, 1));
    }
}
