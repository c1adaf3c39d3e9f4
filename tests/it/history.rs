//! Version-prefix history (`#[dynamo(history)]`): the latest copy and its revisions.

use crate::common::*;
use dynamo_model::history::Keep;
use dynamo_model::{local, Entity, Error, ValidationReason};

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "ARTICLE#{article_id}", sk = "ARTICLE", history,
         index(GSI1, pk = "AUTHOR#{author}", sk = "ARTICLE#{article_id}"))]
pub struct Article {
    pub article_id: String,
    pub author: String,
    pub title: String,
    #[dynamo(version)]
    pub version: u64,
}

fn article(id: &str, title: &str) -> Article {
    Article {
        article_id: id.into(),
        author: "ann".into(),
        title: title.into(),
        version: 0,
    }
}

/// Creates article `id` titled `t1` and revises it to `t2`: two revisions, the latest
/// copy at version 2.
pub async fn article_revised_once(db: &dynamo_model::Db<App>, id: &str) -> TestResult {
    let versions = db.history::<Article>();
    versions.create(&article(id, "t1")).await?;
    versions
        .revise(Article::key(id), |a| a.title = "t2".into())
        .await?;
    Ok(())
}

#[tokio::test]
async fn create_revise_read_and_list() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let versions = db.history::<Article>();
    assert_eq!(versions.create(&article("a", "t1")).await?, 1);
    for i in 2..=5u64 {
        let r = versions
            .revise(Article::key("a"), |a| a.title = format!("t{i}"))
            .await?;
        assert_eq!(r.revision, i);
        assert_eq!(r.value.version, i);
    }
    let latest = db.get(Article::key("a")).await?.ok_or("missing")?;
    assert_eq!((latest.title.as_str(), latest.version), ("t5", 5));
    let third = versions
        .revision(Article::key("a"), 3)
        .await?
        .ok_or("no r3")?;
    assert_eq!((third.value.title.as_str(), third.revision), ("t3", 3));
    assert!(third.revised_at.is_some());
    let oldest_first: Vec<u64> = versions
        .revisions(Article::key("a"))
        .all()
        .await?
        .mapped(|r| r.revision);
    assert_eq!(oldest_first, vec![1, 2, 3, 4, 5]);
    let newest: Vec<u64> = versions
        .revisions(Article::key("a"))
        .reverse()
        .limit(2)
        .all()
        .await?
        .mapped(|r| r.revision);
    assert_eq!(newest, vec![5, 4]);

    // Reads other than the history see the latest copy only.
    let in_partition = items_of(db.query(Article::partition("a"))).await?;
    assert_eq!(in_partition, vec![latest.clone()]);
    let by_author = items_of(db.query(Article::gsi1_partition("ann"))).await?;
    assert_eq!(by_author.len(), 1);

    // A lost race is a typed conflict.
    let stale = Article {
        version: 3,
        ..latest.clone()
    };
    match versions.add(&stale).await {
        Err(Error::VersionConflict {
            expected: 3,
            found: Some(5),
            ..
        }) => {}
        other => panic!("expected a conflict, got {other:?}"),
    }
    // Creating it again too.
    match versions.create(&article("a", "again")).await {
        Err(Error::VersionConflict {
            expected: 0,
            found: Some(5),
            ..
        }) => {}
        other => panic!("expected a conflict, got {other:?}"),
    }
    // Plain writes are refused.
    refused(db.put(&latest), ValidationReason::KeepsHistory).await;

    let restored = versions.restore(Article::key("a"), 2).await?;
    assert_eq!(
        (restored.revision, restored.value.title.as_str()),
        (6, "t2")
    );
    let pruned = versions.prune(Article::key("a"), Keep::Newest(3)).await?;
    assert_eq!(pruned.revisions, vec![1, 2, 3]);
    assert_eq!(pruned.kept, vec![4, 5, 6]);
    let removed = versions.delete_all(Article::key("a")).await?;
    assert_eq!(removed.revisions, vec![4, 5, 6]);
    assert!(removed.latest);
    assert!(db.get(Article::key("a")).await?.is_none());
    Ok(())
}

/// Revisions let into GSI1 (`revisions_in`): the index holds them, typed reads of the
/// entity still see the latest copies, and `.revisions()` reads the revisions.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "NOTE#{note_id}", sk = "NOTE", history(revisions_in(GSI1)),
         index(GSI1, pk = "OWNER#{owner}", sk = "NOTE#{note_id}"))]
pub struct Note {
    pub note_id: String,
    pub owner: String,
    pub text: String,
    #[dynamo(version)]
    pub version: u64,
}

#[tokio::test]
async fn revisions_enter_only_the_indexes_named() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let notes = db.history::<Note>();
    let note = Note {
        note_id: "n".into(),
        owner: "olga".into(),
        text: "one".into(),
        version: 0,
    };
    notes.create(&note).await?;
    notes
        .revise(Note::key("n"), |n| n.text = "two".into())
        .await?;
    let latest = items_of(db.query(Note::gsi1_partition("olga"))).await?;
    assert_eq!(latest.len(), 1);
    assert_eq!((latest[0].text.as_str(), latest[0].version), ("two", 2));
    let revisions = items_of(db.query(Note::gsi1_partition("olga")).revisions()).await?;
    let mut seen: Vec<(u64, String)> = revisions
        .into_iter()
        .map(|r| (r.revision, r.value.text))
        .collect();
    seen.sort();
    assert_eq!(seen, vec![(1, "one".to_owned()), (2, "two".to_owned())]);

    // Article keeps its revisions out of GSI1: nothing to read there.
    let articles = db.history::<Article>();
    articles.create(&article("b", "x")).await?;
    articles
        .revise(Article::key("b"), |a| a.title = "y".into())
        .await?;
    let in_index = items_of(db.query(Article::gsi1_partition("ann")).revisions()).await?;
    assert!(in_index.is_empty(), "{in_index:?}");
    Ok(())
}
