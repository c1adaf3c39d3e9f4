//! The edges of a migration's configuration and of its checkpoints: file checkpoints that
//! are corrupt, foreign, shared by two writers, or named with path separators or at
//! length; budgets of 0, NaN, a negative or infinite number; page sizes and partitions at
//! their limits; progress callbacks that panic, runs cancelled at arbitrary points and
//! resumed (exactly once, counts adding up), and a `_migrations` attribute another program
//! wrote. Everything runs against DynamoDB Local.

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::migrate::{
    Checkpoint, CheckpointStore, FileCheckpoints, MemoryCheckpoints, Migration, Progress,
    MIGRATIONS_ATTRIBUTE,
};
use dynamo_model::{local, Db, Entity, Error, Table};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
pub struct Counters;

/// A counter: a map that increments it is not idempotent.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Counters, pk = "C#{id}", sk = "COUNTER")]
pub struct Tally {
    #[dynamo(key_format = "unpadded")]
    pub id: u32,
    pub n: u64,
}

/// Another entity in the same table.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Counters, pk = "N#{id}", sk = "NOTE")]
pub struct Note {
    #[dynamo(key_format = "unpadded")]
    pub id: u32,
    pub text: String,
}

/// A fresh table holding tallies `0..count`, each at 0.
async fn with_tallies(count: u32) -> Res<local::TempTable<Counters>> {
    let db = local::fresh_table::<Counters>().await?;
    for id in 0..count {
        db.put(&Tally { id, n: 0 }).await?;
    }
    Ok(db)
}

/// A fresh table holding tallies `0..count`, and an empty in-memory checkpoint store.
async fn tallies_and_store(count: u32) -> Res<(local::TempTable<Counters>, MemoryCheckpoints)> {
    Ok((with_tallies(count).await?, MemoryCheckpoints::new()))
}

/// A fresh table holding tallies `0..count`, and a temporary directory for checkpoints.
async fn tallies_and_dir(count: u32, tag: &str) -> Res<(local::TempTable<Counters>, TempDir)> {
    Ok((with_tallies(count).await?, TempDir::new(tag)))
}

/// Every tally's `n`, by id.
async fn counts(
    db: &Db<Counters>,
) -> Result<Vec<(u32, u64)>, Box<dyn std::error::Error + Send + Sync>> {
    let mut all: Vec<(u32, u64)> = db
        .scan::<Tally>()
        .consistent()
        .all()
        .await?
        .mapped(|t| (t.id, t.n));
    all.sort_unstable();
    Ok(all)
}

/// Asserts that every tally's `n` is `n`.
async fn assert_every_count(db: &Db<Counters>, n: u64) -> TestResult {
    let counts = counts(db).await?;
    assert!(counts.iter().all(|(_, got)| *got == n), "{counts:?}");
    Ok(())
}

fn increment(mut t: Tally) -> Option<Tally> {
    t.n += 1;
    Some(t)
}

/// The migration `name` that increments every tally.
fn increments(db: &Db<Counters>, name: impl Into<String>) -> Migration<Tally> {
    db.migration::<Tally>(name).map(increment)
}

/// scanned = changed + unchanged + already + other + vanished + failed.
#[track_caller]
fn assert_counts_add_up(p: &Progress) {
    assert_eq!(
        p.scanned,
        p.changed + p.unchanged + p.already + p.other + p.vanished + p.failed,
        "{p:?}"
    );
}

/// A directory of its own under the system's temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("dm-migrate-{tag}-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("temporary directory");
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Every file under `dir`, recursively, relative to it.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path.strip_prefix(dir).unwrap_or(&path).to_path_buf());
            }
        }
    }
    found.sort();
    found
}

// ------------------------------------------------------------------------------ budgets

/// A budget of 0, NaN or a negative number of units per second is not a pace: the run
/// must refuse it or finish, not wait forever.
async fn budget_finishes(
    read: bool,
    budget: f64,
) -> Result<Option<Result<(), Error>>, Box<dyn std::error::Error + Send + Sync>> {
    let db = with_tallies(3).await?;
    let migration = increments(&db, "budget").page_size(1);
    let migration = if read {
        migration.max_read_units_per_second(budget)
    } else {
        migration.max_write_units_per_second(budget)
    };
    let outcome = tokio::time::timeout(Duration::from_secs(5), migration.run()).await;
    Ok(outcome.ok().map(|r| r.map(|_| ())))
}

/// Asserts that no budget of 0, NaN or -1 (of reads if `read`, else of writes) hangs the
/// run.
async fn assert_no_budget_hangs(read: bool) -> TestResult {
    let mut hung = Vec::new();
    for budget in [0.0, f64::NAN, -1.0] {
        if budget_finishes(read, budget).await?.is_none() {
            hung.push(budget);
        }
    }
    let kind = if read { "read" } else { "write" };
    assert!(
        hung.is_empty(),
        "{kind} budgets that hung the migration for 5 s: {hung:?}"
    );
    Ok(())
}

#[tokio::test]
async fn a_read_budget_of_zero_nan_or_below_zero_does_not_hang() -> TestResult {
    assert_no_budget_hangs(true).await
}

#[tokio::test]
async fn a_write_budget_of_zero_nan_or_below_zero_does_not_hang() -> TestResult {
    assert_no_budget_hangs(false).await
}

/// An infinite budget is no limit at all.
#[tokio::test]
async fn an_infinite_budget_paces_nothing() -> TestResult {
    let db = with_tallies(5).await?;
    let run = increments(&db, "inf")
        .page_size(1)
        .max_read_units_per_second(f64::INFINITY)
        .max_write_units_per_second(f64::INFINITY)
        .run();
    let report = tokio::time::timeout(Duration::from_secs(20), run).await??;
    assert_eq!(report.progress.changed, 5, "{report:?}");
    assert_every_count(&db, 1).await?;
    Ok(())
}

// ------------------------------------------------------------------- sizes and partitions

/// page_size(0) reads one item a page and page_size(usize::MAX) 1,000: both finish with
/// every item changed once.
#[tokio::test]
async fn page_sizes_of_zero_and_usize_max_are_clamped() -> TestResult {
    let db = with_tallies(4).await?;
    let pages = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&pages);
    let report = increments(&db, "zero")
        .page_size(0)
        .on_progress(move |_| {
            seen.fetch_add(1, Ordering::SeqCst);
        })
        .run()
        .await?;
    assert_eq!(report.progress.changed, 4);
    // One item a page: 4 pages, and one more that finds the end.
    assert!(pages.load(Ordering::SeqCst) >= 4, "{pages:?}");
    let report = increments(&db, "max").page_size(usize::MAX).run().await?;
    assert_eq!(report.progress.changed, 4);
    assert_every_count(&db, 2).await?;
    Ok(())
}

/// A partition that holds nothing (or only the items of another entity) is a migration
/// of nothing, and its checkpoint is bound to that partition: the same name over the
/// whole table is refused rather than resumed as done.
#[tokio::test]
async fn an_empty_partition_migrates_nothing_and_binds_its_checkpoint() -> TestResult {
    let db = with_tallies(3).await?;
    db.put(&Note {
        id: 1,
        text: "x".into(),
    })
    .await?;
    let store = MemoryCheckpoints::new();
    // "C#99" holds nothing.
    let report = increments(&db, "empty")
        .partition(Tally::partition(99))
        .checkpoints(store.clone())
        .run()
        .await?;
    assert_eq!(report.progress, Progress::default(), "{report:?}");
    assert!(store.get("empty").is_some());
    let err = increments(&db, "empty")
        .checkpoints(store.clone())
        .run()
        .await
        .err()
        .ok_or("the partition's checkpoint was taken for the whole table's")?;
    assert!(matches!(err, Error::Cursor { .. }), "{err:?}");
    assert_every_count(&db, 0).await?;
    Ok(())
}

/// More segments than items: every item is changed once, and the counts add up (on
/// DynamoDB Local every segment reads the whole table).
#[tokio::test]
async fn more_segments_than_items_change_each_item_once() -> TestResult {
    let db = with_tallies(3).await?;
    let report = increments(&db, "many-segments")
        .segments(16)
        .page_size(2)
        .run()
        .await?;
    assert_counts_add_up(&report.progress);
    assert!(report.progress.changed >= 3, "{report:?}");
    assert_eq!(counts(&db).await?, vec![(0, 1), (1, 1), (2, 1)]);
    Ok(())
}

// ---------------------------------------------------------------------- file checkpoints

/// Names with path separators, `..`, an absolute path or nothing but dots keep their
/// checkpoints in the store's directory, each in a file of its own, and resume from it.
#[tokio::test]
async fn file_checkpoints_stay_in_their_directory_whatever_the_name() -> TestResult {
    let (db, outer) = tallies_and_dir(2, "paths").await?;
    let dir = outer.path().join("store");
    let names = [
        "../escape",
        "a/b",
        "a_b",
        "/etc/passwd",
        "..",
        ".",
        "a\\b",
        "nul\0byte",
        "ünïcödé ✓",
    ];
    let rewrite = |name| {
        db.migration::<Tally>(name)
            .rewrite()
            .checkpoints(FileCheckpoints::new(&dir))
            .run()
    };
    for name in names {
        let report = rewrite(name).await?;
        assert!(!report.resumed, "{name:?}: {report:?}");
    }
    let files = files_under(outer.path());
    assert_eq!(files.len(), names.len(), "{files:?}");
    assert!(
        files.iter().all(|f| f.parent() == Some(Path::new("store"))),
        "{files:?}"
    );
    // Each name finds its own checkpoint again.
    for name in names {
        let report = rewrite(name).await?;
        assert!(report.resumed, "{name:?}: {report:?}");
    }
    Ok(())
}

/// A migration name is any text, a long one too: the checkpoint file's name must fit the
/// file system's limit (255 bytes on most).
#[tokio::test]
async fn file_checkpoints_take_a_long_migration_name() -> TestResult {
    let (db, dir) = tallies_and_dir(2, "long").await?;
    let name = format!("2026-11-{}", "backfill-the-tallies-".repeat(15));
    let report = increments(&db, name.as_str())
        .checkpoints(FileCheckpoints::new(dir.path()))
        .run()
        .await?;
    assert_eq!(report.progress.changed, 2);
    Ok(())
}

/// A checkpoint file that is empty, truncated, of another format or of another migration
/// is refused (no panic, nothing written) and left as it is.
#[tokio::test]
async fn corrupt_or_foreign_checkpoint_files_are_refused_and_left_alone() -> TestResult {
    let (db, dir) = tallies_and_dir(3, "corrupt").await?;
    // The checkpoints of two migrations, to find the file and a foreign checkpoint.
    for name in ["mine", "theirs"] {
        db.migration::<Tally>(name)
            .rewrite()
            .checkpoints(FileCheckpoints::new(dir.path()))
            .run()
            .await?;
    }
    let file = |name: &str| -> Result<PathBuf, String> {
        files_under(dir.path())
            .into_iter()
            .find(|f| f.to_string_lossy().starts_with(&format!("{name}-")))
            .map(|f| dir.path().join(f))
            .ok_or_else(|| format!("no checkpoint file for {name}"))
    };
    let mine = file("mine")?;
    let valid = std::fs::read_to_string(&mine)?;
    let theirs = std::fs::read_to_string(file("theirs")?)?;
    let corrupt = [
        String::new(),
        "\n".to_owned(),
        valid[..valid.len() / 2].to_owned(),
        valid.replace("v1 ", "v9 "),
        "{\"json\": true}".to_owned(),
        // Another migration's checkpoint under this name (copied over).
        theirs.clone(),
        // Counts past u64.
        {
            let mut parts: Vec<&str> = valid.split(' ').collect();
            parts[2] = "18446744073709551616";
            parts.join(" ")
        },
        // Bytes that are not UTF-8.
        String::from_utf8_lossy(&[0xff, 0xfe, 0x00]).into_owned(),
    ];
    let resume_mine = || {
        increments(&db, "mine")
            .checkpoints(FileCheckpoints::new(dir.path()))
            .run()
    };
    for text in &corrupt {
        std::fs::write(&mine, text)?;
        let outcome = resume_mine().await;
        assert!(outcome.is_err(), "{text:?} was taken: {outcome:?}");
        assert_eq!(&std::fs::read_to_string(&mine)?, text, "{text:?} replaced");
    }
    std::fs::write(&mine, [0xffu8, 0x00, 0x80])?;
    let outcome = resume_mine().await;
    assert!(outcome.is_err(), "binary bytes were taken: {outcome:?}");
    assert_every_count(&db, 0).await?;
    Ok(())
}

/// A store whose directory cannot be created (a regular file stands there) fails the run
/// with an Io error on the first save, before any item is counted as migrated twice.
#[tokio::test]
async fn a_checkpoint_directory_that_is_a_file_fails_with_an_io_error() -> TestResult {
    let (db, dir) = tallies_and_dir(2, "file").await?;
    let blocked = dir.path().join("store");
    std::fs::write(&blocked, "not a directory")?;
    let err = increments(&db, "blocked")
        .checkpoints(FileCheckpoints::new(&blocked))
        .run()
        .await
        .err()
        .ok_or("ran without a checkpoint")?;
    assert!(matches!(err, Error::Io { .. }), "{err:?}");
    Ok(())
}

/// Two writers of one checkpoint (two runs of one migration at once, two processes
/// sharing the directory): every save succeeds and the file always holds a checkpoint.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_saves_of_one_file_checkpoint_all_succeed() -> TestResult {
    let (db, memory) = tallies_and_store(1).await?;
    db.migration::<Tally>("shared")
        .rewrite()
        .checkpoints(memory.clone())
        .run()
        .await?;
    let checkpoint: Checkpoint = memory.get("shared").ok_or("no checkpoint")?;
    let dir = TempDir::new("shared");
    let store = FileCheckpoints::new(dir.path());
    let writers = (0..2).map(|_| {
        let (store, checkpoint) = (store.clone(), checkpoint.clone());
        tokio::spawn(async move {
            let mut failures = Vec::new();
            for _ in 0..2_000 {
                if let Err(e) = store.save("shared", &checkpoint).await {
                    failures.push(e.to_string());
                }
                match store.load("shared").await {
                    Ok(Some(_)) => {}
                    other => failures.push(format!("load: {other:?}")),
                }
            }
            failures
        })
    });
    let mut failures = Vec::new();
    for writer in writers.collect::<Vec<_>>() {
        failures.extend(writer.await?);
    }
    let torn = failures
        .iter()
        .filter(|f| f.contains("not a migration checkpoint"))
        .count();
    assert!(
        failures.is_empty(),
        "{} of 8,000 calls failed ({torn} loads found a torn checkpoint), e.g. {:?}",
        failures.len(),
        failures.first()
    );
    Ok(())
}

/// A dry run writes no checkpoint file (and ignores an existing one); the real run after
/// it changes everything once.
#[tokio::test]
async fn a_dry_run_then_a_real_run_with_file_checkpoints() -> TestResult {
    let (db, dir) = tallies_and_dir(5, "dry").await?;
    let report = increments(&db, "dry-then-real")
        .page_size(2)
        .dry_run()
        .checkpoints(FileCheckpoints::new(dir.path()))
        .run()
        .await?;
    assert!(report.dry_run && !report.resumed);
    assert_eq!(report.progress.changed, 5);
    assert!(
        files_under(dir.path()).is_empty(),
        "{:?}",
        files_under(dir.path())
    );
    let report = increments(&db, "dry-then-real")
        .page_size(2)
        .checkpoints(FileCheckpoints::new(dir.path()))
        .run()
        .await?;
    assert!(!report.resumed, "{report:?}");
    assert_eq!(report.progress.changed, 5, "{report:?}");
    // A dry run after it plans again from the start (it reads no checkpoint), and sees
    // every item marked.
    let report = increments(&db, "dry-then-real")
        .dry_run()
        .checkpoints(FileCheckpoints::new(dir.path()))
        .run()
        .await?;
    assert_eq!(report.progress.already, 5, "{report:?}");
    assert_every_count(&db, 1).await?;
    Ok(())
}

// ------------------------------------------------------------- steps under the same name

/// A checkpoint is of one migration: a run under the same name with other changes is
/// another migration, and resuming it would skip, for the new changes, every item before
/// the checkpoint.
#[tokio::test]
async fn a_checkpoint_of_other_changes_under_the_same_name_is_refused() -> TestResult {
    let (db, store) = tallies_and_store(6).await?;
    run_until_first_page(
        db.migration::<Tally>("v2")
            .set_default("colour", s("red"))
            .page_size(2)
            .checkpoints(store.clone()),
    )
    .await;
    assert!(store.get("v2").is_some());
    let outcome = db
        .migration::<Tally>("v2")
        .set_default("size", s("xl"))
        .page_size(2)
        .checkpoints(store.clone())
        .run()
        .await;
    match outcome {
        Err(Error::Cursor { .. }) => Ok(()),
        other => {
            let mut missing = Vec::new();
            for id in 0..6 {
                let item = raw_get(&db, &format!("C#{id}"), "COUNTER").await?;
                if !item.contains_key("size") {
                    missing.push(id);
                }
            }
            Err(format!(
                "resumed another migration's checkpoint: {other:?}; items without `size`: {missing:?}"
            )
            .into())
        }
    }
}

// -------------------------------------------------------------------- the marker attribute

/// `_migrations` holding something other than a string set (another program's value):
/// the migration must not replace it silently.
#[tokio::test]
async fn a_foreign_migrations_attribute_is_not_overwritten() -> TestResult {
    let db = with_tallies(1).await?;
    let legacy = AttributeValue::L(vec![s("2019-import"), s("2020-fixup")]);
    db.client()
        .update_item()
        .table_name(db.table_name())
        .set_key(Some(raw_key("C#0", "COUNTER")))
        .update_expression("SET #m = :m")
        .expression_attribute_names("#m", MIGRATIONS_ATTRIBUTE)
        .expression_attribute_values(":m", legacy.clone())
        .send()
        .await?;
    let report = increments(&db, "marked").run().await?;
    let item = raw_get(&db, "C#0", "COUNTER").await?;
    let kept = item.get(MIGRATIONS_ATTRIBUTE) == Some(&legacy);
    let reported = report.progress.failed == 1;
    assert!(
        kept || reported,
        "the other program's {legacy:?} became {:?} without a word ({report:?})",
        item.get(MIGRATIONS_ATTRIBUTE)
    );
    Ok(())
}

/// A string-set `_migrations` already holding other names keeps them, and the names of
/// migrations with characters of every kind (spaces, commas, quotes, emoji, a very long
/// one) are stored and recognised exactly.
#[tokio::test]
async fn marker_names_of_any_text_are_kept_and_recognised() -> TestResult {
    let db = with_tallies(2).await?;
    let names = [
        "a, b".to_owned(),
        "\"quoted\" 'name'".to_owned(),
        "emoji 🦀 and\ttab\nnewline".to_owned(),
        "#name :value".to_owned(),
        "x".repeat(5_000),
    ];
    for name in &names {
        let report = increments(&db, name.as_str()).run().await?;
        assert_eq!(report.progress.changed, 2, "{report:?}");
        // Run again (a fresh in-memory store): the marker stops a second increment.
        let report = increments(&db, name.as_str()).run().await?;
        assert_eq!(report.progress.already, 2, "{report:?}");
    }
    let item = raw_get(&db, "C#0", "COUNTER").await?;
    let Some(AttributeValue::Ss(stored)) = item.get(MIGRATIONS_ATTRIBUTE) else {
        return Err(format!("{item:?}").into());
    };
    let mut stored = stored.clone();
    stored.sort();
    let mut expected = names.to_vec();
    expected.sort();
    assert_eq!(stored, expected);
    assert_eq!(counts(&db).await?, vec![(0, 5), (1, 5)]);
    Ok(())
}

// ------------------------------------------------------- panics, cancellation, exactly once

/// A progress callback that panics takes the run down after the page's checkpoint is
/// saved: the resumed run goes on from there and increments every counter once.
#[tokio::test]
async fn a_panicking_progress_callback_then_a_resume_changes_each_item_once() -> TestResult {
    let (db, store) = tallies_and_store(9).await?;
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&calls);
    let run = increments(&db, "panics")
        .page_size(2)
        .checkpoints(store.clone())
        .on_progress(move |_| {
            if seen.fetch_add(1, Ordering::SeqCst) == 1 {
                panic!("the progress callback fails");
            }
        })
        .run();
    let joined = tokio::spawn(run).await;
    assert!(joined.as_ref().is_err_and(|e| e.is_panic()), "{joined:?}");
    let saved = store.get("panics").ok_or("no checkpoint")?;
    assert_eq!(saved.progress.scanned, 4, "{saved:?}");
    let report = increments(&db, "panics")
        .page_size(2)
        .checkpoints(store.clone())
        .run()
        .await?;
    assert!(report.resumed);
    assert_counts_add_up(&report.progress);
    assert_eq!(
        report.progress.changed + report.progress.already,
        9,
        "{report:?}"
    );
    assert_eq!(counts(&db).await?.len(), 9);
    assert_every_count(&db, 1).await?;
    Ok(())
}

/// The run's future dropped at arbitrary points (timeouts of 1 to 40 ms), then resumed
/// until it finishes: a non-idempotent map lands once on every item, and the counts of
/// all the runs add up.
#[tokio::test]
async fn runs_cancelled_at_arbitrary_points_resume_exactly_once() -> TestResult {
    let db = with_tallies(24).await?;
    for id in 0..3 {
        db.put(&Note {
            id,
            text: "other".into(),
        })
        .await?;
    }
    let store = MemoryCheckpoints::new();
    let mut cancelled = 0;
    let mut report = None;
    for attempt in 0..400u64 {
        let run = increments(&db, "cancelled")
            .page_size(3)
            .segments(2)
            .checkpoints(store.clone())
            .run();
        let budget = Duration::from_millis(1 + (attempt * 7) % 40);
        match tokio::time::timeout(budget, run).await {
            Ok(done) => {
                report = Some(done?);
                break;
            }
            Err(_) => cancelled += 1,
        }
    }
    let report = report.ok_or("never finished")?;
    assert!(cancelled > 0, "never cancelled: nothing proved");
    assert_counts_add_up(&report.progress);
    let p = report.progress;
    // Each segment that reads the whole table (as older DynamoDB Local releases do)
    // counts every item once more: the same number of passes over tallies and notes.
    assert!(p.other > 0 && p.other.is_multiple_of(3), "{report:?}");
    assert_eq!(
        p.changed + p.already + p.unchanged,
        p.other / 3 * 24,
        "{report:?}"
    );
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert_every_count(&db, 1).await?;
    Ok(())
}

/// A migration that finished keeps its checkpoint: run again under the same name, it
/// does nothing (items written since are not touched) and says it resumed.
#[tokio::test]
async fn a_finished_migration_run_again_does_nothing() -> TestResult {
    let (db, store) = tallies_and_store(3).await?;
    let once = || increments(&db, "once").checkpoints(store.clone()).run();
    let first = once().await?;
    db.put(&Tally { id: 7, n: 0 }).await?;
    let again = once().await?;
    assert!(again.resumed);
    assert_eq!(again.progress, first.progress);
    assert_eq!(counts(&db).await?, vec![(0, 1), (1, 1), (2, 1), (7, 0)]);
    Ok(())
}

/// What the progress callback sees: counts that only grow and always add up, also with
/// segments saving their pages concurrently.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_snapshots_grow_and_add_up() -> TestResult {
    let db = with_tallies(10).await?;
    let seen: Arc<std::sync::Mutex<Vec<Progress>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let report = increments(&db, "snapshots")
        .segments(3)
        .page_size(1)
        .on_progress(move |p| sink.lock().expect("lock").push(*p))
        .run()
        .await?;
    let seen = seen.lock().expect("lock").clone();
    assert!(!seen.is_empty());
    for pair in seen.windows(2) {
        assert!(pair[0].scanned <= pair[1].scanned, "{pair:?}");
        assert!(pair[0].changed <= pair[1].changed, "{pair:?}");
    }
    for p in &seen {
        assert_counts_add_up(p);
    }
    assert_eq!(seen.last(), Some(&report.progress));
    assert_every_count(&db, 1).await?;
    Ok(())
}
