//! `History::delete_all` interrupted after each of its writes (the process killed between
//! two requests: a client that sends no write after the `n`th): whatever is left, no read
//! sees a latest copy whose history is partly deleted, and running `delete_all` again
//! finishes the job; the key can then be created again.

use crate::common::intercept::intercepted;
use crate::common::*;
use crate::history::Article;
use crate::history_adopt::{app_row, Equipment, Machine};
use dynamo_model::aws_sdk_dynamodb::operation::{
    batch_write_item::BatchWriteItemInput, delete_item::DeleteItemInput, put_item::PutItemInput,
    transact_write_items::TransactWriteItemsInput, update_item::UpdateItemInput,
};
use dynamo_model::{local, Db, Table};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A `Db` on `db`'s table in a process that dies after `allowed` writes: every later
/// write request fails before it is sent (reads go on, but the protocol's writes stop).
/// The failure is the SDK's `ConstructionFailure`: nothing was sent, so the crate neither
/// retries it nor waits to settle it.
fn dies_after<T: Table>(db: &Db<T>, allowed: usize) -> Db<T> {
    let writes = AtomicUsize::new(0);
    intercepted(db, "dies after n writes", move |request| {
        let input = request.input();
        let write = input.downcast_ref::<TransactWriteItemsInput>().is_some()
            || input.downcast_ref::<DeleteItemInput>().is_some()
            || input.downcast_ref::<PutItemInput>().is_some()
            || input.downcast_ref::<UpdateItemInput>().is_some()
            || input.downcast_ref::<BatchWriteItemInput>().is_some();
        if write && writes.fetch_add(1, Ordering::SeqCst) >= allowed {
            return Err("the process died".into());
        }
        Ok(())
    })
}

fn article(id: &str, title: &str, version: u64) -> Article {
    Article {
        article_id: id.into(),
        author: "ann".into(),
        title: title.into(),
        version,
    }
}

/// Revisions 1 to `count` of article `id`, as the crate writes them: revision 1 and the
/// latest copy by `create`, the others copies of revision 1 (with their own number and
/// body) put 25 at a time, then the latest copy set to `count` (faster than a transaction each).
async fn seed(db: &Db<App>, id: &str, count: u64) -> TestResult {
    use dynamo_model::aws_sdk_dynamodb::types::{PutRequest, WriteRequest};
    let history = db.history::<Article>();
    history.create(&article(id, "r1", 0)).await?;
    let pk = format!("ARTICLE#{id}");
    let slot = |k: u64| format!("v{k:020}#ARTICLE");
    let first = raw_get(db, &pk, &slot(1)).await?;
    let copies: Vec<WriteRequest> = (2..=count)
        .map(|k| {
            let mut item = first.clone();
            item.insert("SK".into(), s(&slot(k)));
            item.insert("version".into(), n(k));
            item.insert("title".into(), s(&format!("r{k}")));
            let put = PutRequest::builder().set_item(Some(item)).build()?;
            Ok(WriteRequest::builder().put_request(put).build())
        })
        .collect::<Res<_>>()?;
    for chunk in copies.chunks(25) {
        let out = db
            .client()
            .batch_write_item()
            .request_items(db.table_name(), chunk.to_vec())
            .send()
            .await?;
        assert!(out.unprocessed_items.unwrap_or_default().is_empty());
    }
    raw_set(
        db,
        &pk,
        &slot(0),
        &[("version", n(count)), ("title", s(&format!("r{count}")))],
    )
    .await?;
    let stored = all_revisions(&history, Article::key(id)).await?;
    assert_eq!(stored.len() as u64, count);
    assert_eq!(
        history.latest(Article::key(id)).await?,
        Some(article(id, &format!("r{count}"), count))
    );
    Ok(())
}

/// Revisions 1 to `n` of an article (the latest copy at `n`), then `delete_all` run by
/// a process that dies after each possible number of writes; after each, the invariant
/// and the recovery.
#[tokio::test]
async fn an_interrupted_delete_all_never_leaves_a_latest_copy_without_its_history() -> TestResult {
    // 120 revisions: their deletion takes two transactions (at most 100 items each).
    let db = local::fresh_table::<App>().await?;
    let history = db.history::<Article>();
    for revisions in [3u64, 120] {
        let mut kills = 0;
        for allowed in 0.. {
            // An article of its own for each run (one table for all).
            let id = format!("a-{revisions}-{allowed}");
            let key = || Article::key(id.as_str());
            seed(&db, &id, revisions).await?;
            let dying = dies_after(&db, allowed).history::<Article>();
            let finished = dying.delete_all(key()).await.is_ok();

            // What every read sees: no item, or the item with its whole history.
            let latest = history.latest(key()).await?;
            let got = db.get(key()).consistent().send().await?;
            assert_eq!(latest, got);
            let queried = db
                .query(Article::partition(id.as_str()))
                .consistent()
                .all()
                .await?
                .items;
            assert_eq!(queried, latest.iter().cloned().collect::<Vec<_>>());
            let left = revision_numbers(&all_revisions(&history, key()).await?);
            match &latest {
                Some(latest) => {
                    assert!(!finished);
                    assert_eq!(latest.version, revisions);
                    assert_eq!(
                        left,
                        (1..=revisions).collect::<Vec<_>>(),
                        "killed after {allowed} writes: a latest copy without its history"
                    );
                }
                None => assert!(left.iter().all(|k| (1..=revisions).contains(k))),
            }

            // The recovery: delete_all again finishes the job, and the key is free.
            let removed = history.delete_all(key()).await?;
            assert_eq!(removed.revisions, left);
            assert_eq!(removed.latest, latest.is_some());
            assert!(raw_table(&db).await?.is_empty(), "after {allowed} writes");
            assert_eq!(history.create(&article(&id, "again", 0)).await?, 1);
            history.delete_all(key()).await?;

            kills += 1;
            if finished {
                break;
            }
        }
        // One kill before each write of the call, and one run that finishes.
        let writes = 1 + revisions.div_ceil(100) as usize;
        assert_eq!(kills, writes + 1, "{revisions} revisions");
    }
    Ok(())
}

/// The same in AWS's number-based layout, on rows its sample application wrote (no number
/// on revisions, the counter on `v0`).
#[tokio::test]
async fn an_interrupted_delete_all_of_the_aws_layout_is_finished_by_running_it_again() -> TestResult
{
    let db = local::fresh_table::<Equipment>().await?;
    put_raw(&db, app_row("1", 0, "s3", Some(3))).await?;
    for k in 1..=3 {
        put_raw(&db, app_row("1", k, &format!("s{k}"), None)).await?;
    }
    let dying = dies_after(&db, 1).history::<Machine>();
    assert!(dying.delete_all(Machine::key("1")).await.is_err());
    let history = db.history::<Machine>();
    // The item is gone for every read; its revisions are left, and nothing else.
    assert_eq!(db.get(Machine::key("1")).consistent().send().await?, None);
    assert!(db
        .scan::<Machine>()
        .consistent()
        .all()
        .await?
        .items
        .is_empty());
    let left = all_revisions(&history, Machine::key("1")).await?;
    assert_eq!(revision_numbers(&left), [1, 2, 3]);
    assert_eq!(raw_table(&db).await?.len(), 3);

    let removed = history.delete_all(Machine::key("1")).await?;
    assert_eq!((removed.revisions, removed.latest), (vec![1, 2, 3], false));
    assert!(raw_table(&db).await?.is_empty());
    Ok(())
}
