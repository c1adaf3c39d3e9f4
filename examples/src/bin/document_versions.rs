//! Document versions: every change of a document is kept as a revision next to its
//! latest copy (`#[dynamo(history)]`). One document is created, revised, read at its
//! latest and at an old revision, listed both ways, restored and pruned; then 16 writers
//! race to add 5 revisions each to another document, and every revision is checked to be
//! there once, in order, with the latest copy equal to the newest revision.
//!
//! Run: `cargo run -p examples --bin document_versions`

use dynamo_model::history::{Keep, Revision};
use dynamo_model::{Db, Entity, Error, RetryPolicy, Table, ValidationReason};
use futures_util::future::try_join_all;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct Docs;

/// The latest copy sits under `SK = v00000000000000000000#DOC`, revision `k` under
/// `SK = v{k, 20 digits}#DOC`, both in the document's partition. Only the latest copy
/// carries the `GSI1` keys, so the owner's index lists each document once.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Docs, pk = "DOC#{doc_id}", sk = "DOC", history,
         index(GSI1, pk = "OWNER#{owner}", sk = "DOC#{doc_id}"))]
struct Document {
    doc_id: String,
    owner: String,
    title: String,
    /// One line per change: which writer made it. A lost update would lose a line.
    log: Vec<String>,
    /// The revision number, managed by `db.history()`.
    #[dynamo(version)]
    version: u64,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Fails the example (a non-zero exit) with `message` unless `ok`.
fn check(ok: bool, message: impl FnOnce() -> String) -> Result<(), BoxError> {
    if ok {
        Ok(())
    } else {
        Err(message().into())
    }
}

fn numbers(revisions: &[Revision<Document>]) -> Vec<u64> {
    revisions.iter().map(|r| r.revision).collect()
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let db = examples::table::<Docs>("document-versions").await?;
    println!("table: {}", db.table_name());
    walkthrough(&db).await?;
    race(&db).await?;
    println!("document_versions: all checks passed");
    Ok(())
}

/// Create, revise, read, list, restore, prune: one document's life.
async fn walkthrough(db: &Db<Docs>) -> Result<(), BoxError> {
    let versions = db.history::<Document>();
    let key = || Document::key("spec");
    let draft = Document {
        doc_id: "spec".into(),
        owner: "ada".into(),
        title: "Draft".into(),
        log: vec!["created".into()],
        version: 0,
    };
    let first = versions.create(&draft).await?;
    println!("create            revision {first}: {:?}", draft.title);
    check(first == 1, || {
        format!("create wrote revision {first}, not 1")
    })?;

    for edit in 1..=5u64 {
        let written = versions
            .revise(key(), |doc| {
                doc.title = format!("Edit {edit}");
                doc.log.push(format!("edit {edit}"));
            })
            .await?;
        println!(
            "revise            revision {}: {:?}",
            written.revision, written.value.title
        );
        check(written.revision == edit + 1, || {
            format!("edit {edit} wrote revision {}", written.revision)
        })?;
    }

    let latest = versions
        .latest(key())
        .await?
        .ok_or("the document is gone")?;
    println!(
        "latest            version {}: {:?}",
        latest.version, latest.title
    );
    check(latest.version == 6 && latest.title == "Edit 5", || {
        format!("the latest copy is {latest:?}")
    })?;
    // Every other read sees the latest copy only: a plain get, and the owner's index.
    let got = db.get(key()).await?;
    check(got.as_ref() == Some(&latest), || {
        format!("db.get read {got:?}")
    })?;
    let owned = db.query(Document::gsi1_partition("ada")).all().await?.items;
    println!("index GSI1        {} item for owner ada", owned.len());
    check(owned == vec![latest.clone()], || {
        format!(
            "the index holds {} items, not the latest copy alone",
            owned.len()
        )
    })?;

    let third = versions
        .revision(key(), 3)
        .await?
        .ok_or("revision 3 is missing")?;
    println!(
        "revision 3        {:?}, written {}",
        third.value.title,
        third.revised_at.and_then(|t| t.elapsed().ok()).map_or_else(
            || "at an unknown time".to_owned(),
            |d| format!("{d:.1?} ago")
        )
    );
    check(
        third.value.title == "Edit 2" && third.value.version == 3,
        || format!("revision 3 is {:?}", third.value),
    )?;

    let oldest_first = versions.revisions(key()).all().await?;
    let newest_first = versions.revisions(key()).reverse().all().await?;
    println!(
        "history           oldest first {:?} ({:.1} RCU), newest first {:?} ({:.1} RCU)",
        numbers(&oldest_first.items),
        oldest_first.consumed_capacity,
        numbers(&newest_first.items),
        newest_first.consumed_capacity
    );
    check(
        numbers(&oldest_first.items) == (1..=6).collect::<Vec<_>>(),
        || "the history is not revisions 1 to 6, oldest first".into(),
    )?;
    check(
        numbers(&newest_first.items) == (1..=6).rev().collect::<Vec<_>>(),
        || "the history is not revisions 6 to 1, newest first".into(),
    )?;

    // Revision 2's content becomes revision 7: restoring adds to the history, it never
    // rewrites it.
    let restored = versions.restore(key(), 2).await?;
    println!(
        "restore 2         revision {}: {:?}",
        restored.revision, restored.value.title
    );
    check(
        restored.revision == 7 && restored.value.title == "Edit 1",
        || format!("restoring revision 2 wrote {restored:?}"),
    )?;
    let latest = versions
        .latest(key())
        .await?
        .ok_or("the document is gone")?;
    check(latest.version == 7 && latest.title == "Edit 1", || {
        format!("after the restore the latest copy is {latest:?}")
    })?;

    let pruned = versions.prune(key(), Keep::Newest(3)).await?;
    println!(
        "prune to 3        removed {:?}, kept {:?}",
        pruned.revisions, pruned.kept
    );
    check(
        pruned.revisions == vec![1, 2, 3, 4] && pruned.kept == vec![5, 6, 7],
        || {
            format!(
                "prune removed {:?} and kept {:?}",
                pruned.revisions, pruned.kept
            )
        },
    )?;
    let left = numbers(&versions.revisions(key()).all().await?.items);
    check(left == vec![5, 6, 7], || {
        format!("after pruning the history is {left:?}")
    })?;
    // A pruned revision is gone: restoring it is a typed "not found".
    match versions.restore(key(), 2).await {
        Err(Error::NotFound { .. }) => println!("restore 2 again   not found: it was pruned"),
        other => return Err(format!("restoring a pruned revision gave {other:?}").into()),
    }
    // Plain writes would change the latest copy without a revision: refused.
    match db.put(&latest).await {
        Err(
            e @ Error::Validation {
                reason: ValidationReason::KeepsHistory,
                ..
            },
        ) => println!("plain put         refused: {e}"),
        other => {
            return Err(format!("a plain put of an entity with history gave {other:?}").into())
        }
    }
    Ok(())
}

/// 16 writers add 5 revisions each to one document, all at once.
async fn race(db: &Db<Docs>) -> Result<(), BoxError> {
    const WRITERS: u64 = 16;
    const EACH: u64 = 5;
    // Backoff capped at 200 ms: on one hot item the race is won by whoever retries first,
    // so long sleeps only slow the whole run down.
    let versions = db
        .history::<Document>()
        .retry(RetryPolicy::default().cap(Duration::from_millis(200)));
    let key = || Document::key("hot");
    let created = versions
        .create(&Document {
            doc_id: "hot".into(),
            owner: "grace".into(),
            title: "Hot".into(),
            log: Vec::new(),
            version: 0,
        })
        .await?;
    check(created == 1, || format!("create wrote revision {created}"))?;

    // How many times the closures ran: once per revision written plus once per lost race.
    let runs = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let writers = (0..WRITERS).map(|w| {
        let versions = versions.clone();
        let runs = Arc::clone(&runs);
        tokio::spawn(async move {
            let mut written = Vec::new();
            for i in 0..EACH {
                let r = versions
                    .revise(Document::key("hot"), |doc| {
                        runs.fetch_add(1, Ordering::Relaxed);
                        doc.log.push(format!("w{w}-{i}"));
                    })
                    .await?;
                written.push(r.revision);
            }
            Ok::<_, Error>(written)
        })
    });
    let results = try_join_all(writers).await?;
    let elapsed = started.elapsed();
    let mut returned = Vec::new();
    for result in results {
        returned.extend(result?);
    }
    let total = WRITERS * EACH;
    let runs = runs.load(Ordering::Relaxed);
    println!(
        "race              {WRITERS} writers x {EACH} revisions: {} written in {elapsed:.1?} ({:.0} revisions/s), {} lost races retried",
        returned.len(),
        returned.len() as f64 / elapsed.as_secs_f64().max(f64::EPSILON),
        runs.saturating_sub(total),
    );

    // Every call returned its own revision: 2 to 81, none twice.
    returned.sort_unstable();
    let expected: Vec<u64> = (2..=total + 1).collect();
    check(returned == expected, || {
        format!("the writers were told they wrote {returned:?}")
    })?;

    // The stored history: revisions 1 to 81 with no gap, each holding the log of the one
    // before plus one line (so no revision overwrote another's change).
    let history = versions.revisions(key()).consistent().all().await?;
    let stored = numbers(&history.items);
    println!(
        "history           {} revisions, {} to {} ({:.1} RCU to read them all)",
        stored.len(),
        stored.first().copied().unwrap_or(0),
        stored.last().copied().unwrap_or(0),
        history.consumed_capacity
    );
    check(stored == (1..=total + 1).collect::<Vec<_>>(), || {
        format!(
            "the stored revisions are {stored:?}, not 1 to {} with no gap",
            total + 1
        )
    })?;
    for pair in history.items.windows(2) {
        let (before, after) = (&pair[0], &pair[1]);
        let grown = after.value.log.len() == before.value.log.len() + 1
            && after.value.log.starts_with(&before.value.log);
        check(grown && after.value.version == after.revision, || {
            format!(
                "revision {} is not revision {} plus one change",
                after.revision, before.revision
            )
        })?;
    }
    let lines: HashSet<&String> = history
        .items
        .last()
        .map(|r| r.value.log.iter().collect())
        .unwrap_or_default();
    check(lines.len() as u64 == total, || {
        format!(
            "the newest revision holds {} distinct changes, not {total}",
            lines.len()
        )
    })?;

    // The latest copy is the newest revision.
    let latest = versions
        .latest(key())
        .await?
        .ok_or("the document is gone")?;
    let newest = history.items.last().ok_or("no revision")?;
    check(latest == newest.value, || {
        format!(
            "the latest copy (version {}) differs from revision {}",
            latest.version, newest.revision
        )
    })?;
    println!(
        "latest            version {} = revision {}, {} changes, none lost",
        latest.version,
        newest.revision,
        latest.log.len()
    );
    Ok(())
}
