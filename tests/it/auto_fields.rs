//! Values the crate sets (`#[dynamo(generate)]`, `#[dynamo(created)]`,
//! `#[dynamo(updated)]`): ids made once by `create`, in creation order as sort keys, under
//! lost responses too; creation and update times as each write path stores them, in the
//! fields' formats, and the values returned equal to the values stored.

use crate::common::*;
use dynamo_model::{local, Entity, Error, Table, ValidationReason};
use std::time::Duration;
use time::OffsetDateTime;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
pub struct Social;

/// A post: its id a ULID made on create (its sort key), its times in two formats.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Social, pk = "USER#{user_id}", sk = "POST#{post_id}")]
pub struct Post {
    pub user_id: String,
    #[dynamo(generate = "ulid")]
    pub post_id: ulid::Ulid,
    pub body: String,
    #[dynamo(created, key_format = "rfc3339(3)")]
    pub created_at: OffsetDateTime,
    #[dynamo(updated, key_format = "epoch_millis")]
    pub updated_at: OffsetDateTime,
}

/// A comment whose id is a UUIDv7 in a `String`, with optional times.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Social, pk = "POST#{post}", sk = "COMMENT#{comment_id}")]
pub struct Comment {
    pub post: String,
    #[dynamo(generate = "uuid_v7")]
    pub comment_id: String,
    pub text: String,
    #[dynamo(created)]
    pub created: Option<OffsetDateTime>,
    #[dynamo(updated)]
    pub updated: Option<OffsetDateTime>,
}

/// A document with history and times: revisions keep the first creation time.
#[derive(Entity, Debug, Clone, PartialEq, Default)]
#[dynamo(table = Social, pk = "DOC#{doc_id}", sk = "DOC", history)]
pub struct Doc {
    pub doc_id: String,
    pub text: String,
    #[dynamo(version)]
    pub version: u64,
    #[dynamo(created)]
    pub created: Option<OffsetDateTime>,
    #[dynamo(updated)]
    pub updated: Option<OffsetDateTime>,
}

fn post(user: &str, body: &str) -> Post {
    Post {
        user_id: user.into(),
        post_id: ulid::Ulid::nil(),
        body: body.into(),
        created_at: OffsetDateTime::UNIX_EPOCH,
        updated_at: OffsetDateTime::UNIX_EPOCH,
    }
}

/// The post stored under `key`, read consistently.
async fn stored(db: &dynamo_model::Db<Social>, key: dynamo_model::Key<Post>) -> Res<Post> {
    Ok(db.get(key).consistent().await?.ok_or("missing")?)
}

fn comment(post: &str, text: &str) -> Comment {
    Comment {
        post: post.into(),
        comment_id: String::new(),
        text: text.into(),
        created: None,
        updated: None,
    }
}

#[tokio::test]
async fn create_stores_the_value_it_leaves_and_ids_sort_in_creation_order() -> TestResult {
    let db = local::fresh_table::<Social>().await?;
    let mut made = Vec::new();
    for i in 0..30 {
        let mut p = post("ada", &format!("post {i}"));
        db.create(&mut p).await?;
        let stored = db.get(p.primary_key()).consistent().await?;
        assert_eq!(
            stored.as_ref(),
            Some(&p),
            "the value left is the value stored"
        );
        assert_eq!(p.created_at, p.updated_at);
        made.push(p);
    }
    let listed: Vec<Post> = db.query(Post::partition("ada")).all().await?.items;
    assert_eq!(listed, made, "sort-key order is creation order");

    let mut again = made[0].clone();
    match db.create(&mut again).await {
        Err(Error::ConditionFailed { .. }) => {}
        other => panic!("a second create of one id: {other:?}"),
    }
    let mut c = comment("p1", "first");
    db.create(&mut c).await?;
    assert_eq!(c.comment_id.len(), 36);
    assert!(c.created.is_some() && c.created == c.updated);
    assert_eq!(db.get(c.primary_key()).await?, Some(c));
    Ok(())
}

#[tokio::test]
async fn updates_and_puts_set_the_update_time_and_keep_the_creation_time() -> TestResult {
    let db = local::fresh_table::<Social>().await?;
    let mut p = post("bob", "draft");
    db.create(&mut p).await?;
    tokio::time::sleep(Duration::from_millis(5)).await;

    let edited = db
        .update(p.primary_key())
        .set(Post::fields().body, "edited")
        .send()
        .await?;
    assert_eq!(
        edited.created_at, p.created_at,
        "an update keeps the creation time"
    );
    assert!(edited.updated_at > p.updated_at, "and sets the update time");
    assert_eq!(
        db.get(p.primary_key()).consistent().await?,
        Some(edited.clone())
    );

    tokio::time::sleep(Duration::from_millis(5)).await;
    db.put(&edited).await?;
    let put = stored(&db, p.primary_key()).await?;
    assert_eq!(
        put.created_at, p.created_at,
        "a put writes the creation time it holds"
    );
    assert!(put.updated_at > edited.updated_at);

    // A batch write takes no condition: it could not keep the creation time.
    let batch = db.batch_write().put(&put).send().await;
    assert!(
        matches!(&batch, Err(Error::Validation { reason, .. }) if *reason == ValidationReason::NotSupportedInBatch),
        "{batch:?}"
    );

    db.transact_write()
        .update(
            db.update(p.primary_key())
                .set(Post::fields().body, "in a transaction"),
        )
        .send()
        .await?;
    let txed = stored(&db, p.primary_key()).await?;
    assert!(
        txed.updated_at > put.updated_at,
        "a transaction's update sets it"
    );

    // A put of a post whose id was never made is refused: it would store the nil id.
    match db.put(&post("bob", "no id")).await {
        Err(Error::Validation { reason, .. }) => {
            assert_eq!(reason, ValidationReason::UnsetGeneratedId)
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    Ok(())
}

#[tokio::test]
async fn an_upsert_sets_the_creation_time_once() -> TestResult {
    let db = local::fresh_table::<Social>().await?;
    let key = Comment::key(CommentKey {
        post: "p",
        comment_id: "c-1",
    });
    let first = db
        .update(key.clone())
        .upsert()
        .set(Comment::fields().text, "hi")
        .send()
        .await?;
    let created = first.created.ok_or("no creation time")?;
    assert_eq!(first.created, first.updated);
    tokio::time::sleep(Duration::from_millis(5)).await;
    let second = db
        .update(key)
        .upsert()
        .set(Comment::fields().text, "hello")
        .send()
        .await?;
    assert_eq!(second.created, Some(created), "kept by if_not_exists");
    assert!(second.updated > first.updated);
    Ok(())
}

#[tokio::test]
async fn a_create_whose_responses_are_lost_makes_one_id_and_one_item() -> TestResult {
    let db = local::fresh_table::<Social>().await?;
    let (lossy, faults) = lossy(&db, 7, 0.6, "PutItem", "auto-fields-lossy").await?;
    let mut made = Vec::new();
    for i in 0..12 {
        let mut p = post("eve", &format!("{i}"));
        lossy.create(&mut p).await?;
        made.push(p);
    }
    assert!(
        faults.stats().server_errors_after_apply > 0,
        "nothing was lost"
    );
    let stored = db.query(Post::partition("eve")).all().await?.items;
    assert_eq!(stored, made, "each create stored once, with the id it left");
    Ok(())
}

#[tokio::test]
async fn a_blind_put_keeps_the_creation_time_stored() -> TestResult {
    let db = local::fresh_table::<Social>().await?;
    let mut first = post("cy", "first");
    first.post_id = ulid::Ulid::from_parts(9, 9);
    // No item yet and no creation time in the value: the put's own time.
    db.put(&first).await?;
    let original = stored(&db, first.primary_key()).await?;
    assert!(original.created_at > OffsetDateTime::UNIX_EPOCH);

    tokio::time::sleep(Duration::from_millis(5)).await;
    for created_at in [
        OffsetDateTime::UNIX_EPOCH,
        OffsetDateTime::UNIX_EPOCH + Duration::from_secs(86_400),
        original.created_at,
    ] {
        let blind = Post {
            body: format!("overwritten, holding {created_at}"),
            created_at,
            ..first.clone()
        };
        db.put(&blind).await?;
        let after = stored(&db, first.primary_key()).await?;
        assert_eq!(after.body, blind.body, "the put is written");
        assert_eq!(
            after.created_at, original.created_at,
            "and the creation time kept"
        );
        assert!(after.updated_at > original.updated_at);
    }

    // A transaction's put cannot be sent again: it fails rather than change the time.
    let other = Post {
        created_at: OffsetDateTime::UNIX_EPOCH + Duration::from_secs(60),
        ..first.clone()
    };
    let before = stored(&db, first.primary_key()).await?;
    let tx = db.transact_write().put(db.put(&other)).send().await;
    assert!(
        matches!(tx, Err(Error::TransactionCanceled { .. })),
        "{tx:?}"
    );
    assert_eq!(stored(&db, first.primary_key()).await?, before);

    // An import: a set creation time on a key with no item is written as given.
    let mut imported = other.clone();
    imported.post_id = ulid::Ulid::from_parts(9, 10);
    db.put(&imported).await?;
    let stored_import = stored(&db, imported.primary_key()).await?;
    assert_eq!(stored_import.created_at, imported.created_at);
    Ok(())
}

#[tokio::test]
async fn revisions_keep_the_first_creation_time() -> TestResult {
    let db = local::fresh_table::<Social>().await?;
    let history = db.history::<Doc>();
    history.create(&first_draft()).await?;
    let first = db.get(Doc::key("d")).await?.ok_or("missing")?;
    let created = first.created.ok_or("no creation time")?;
    tokio::time::sleep(Duration::from_millis(5)).await;
    let revised = history
        .revise(Doc::key("d"), |d| d.text = "v2".into())
        .await?;
    assert_eq!(revised.value.created, Some(created));
    let latest = db.get(Doc::key("d")).await?.ok_or("missing")?;
    assert_eq!(latest.created, Some(created), "kept by the revision");
    assert!(latest.updated > first.updated, "which sets the update time");
    Ok(())
}

/// Document `d`'s first text: no version, no times yet.
fn first_draft() -> Doc {
    Doc {
        doc_id: "d".into(),
        text: "v1".into(),
        ..Doc::default()
    }
}
