//! Updates that create the item (`upsert`): DynamoDB's own `UpdateItem` behaviour, the
//! social network's like counter started by the first like (AWS Developer Guide, "Using
//! DynamoDB as a data store for a social network"), with the key fields, the entity-type
//! attribute and the key-only index keys written on creation, the entity-type guard kept,
//! in single-item updates and transactions, and under lost responses.

use crate::common::*;
use dynamo_model::item::Update;
use dynamo_model::transact::CancelReason;
use dynamo_model::{local, Db, Entity, Error, Table, ValidationReason};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
pub struct Social;

/// `p#12345` / `likecount`: the number of likes of a post, made by the first like. The
/// index lists every counter by post: its key is built from the key field alone.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Social, pk = "p#{post_id}", sk = "likecount",
         index(GSI1, pk = "LIKECOUNTS", sk = "p#{post_id}"))]
pub struct LikeCount {
    pub post_id: String,
    #[dynamo(rename = "like#")]
    pub likes: u64,
}

/// Shares `LikeCount`'s key on purpose: an upsert must never take it over.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Social, pk = "p#{post_id}", sk = "likecount", entity_type = "Squatter")]
pub struct Squatter {
    pub post_id: String,
}

/// A versioned counter: an upsert creates it at version 1.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Social, pk = "u#{user_id}", sk = "count")]
pub struct Counts {
    pub user_id: String,
    #[dynamo(rename = "follower#")]
    pub followers: u64,
    #[dynamo(version)]
    pub version: u64,
}

/// An entity with history: a plain update cannot write its revision, an upsert neither.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Social, pk = "d#{doc_id}", sk = "DOC", history)]
pub struct Draft {
    pub doc_id: String,
    pub body: String,
    #[dynamo(version)]
    pub version: u64,
}

/// An upsert of post `post`'s like count that adds one like.
fn like(db: &Db<Social>, post: &str) -> Update<LikeCount> {
    db.update(LikeCount::key(post))
        .upsert()
        .add(LikeCount::fields().likes, 1)
}

fn names(item: &dynamo_model::Item) -> BTreeSet<&str> {
    item.keys().map(String::as_str).collect()
}

#[tokio::test]
async fn an_upsert_creates_the_missing_item_with_its_key_fields_type_and_index_keys() -> TestResult
{
    let db = local::fresh_table::<Social>().await?;
    let f = LikeCount::fields();
    let first = like(&db, "12345").send().await?;
    assert_eq!(
        first,
        LikeCount {
            post_id: "12345".into(),
            likes: 1
        }
    );
    let mut stored = raw_get(&db, "p#12345", "likecount").await?;
    assert!(
        stored.remove("_wt").is_some(),
        "the write token: {stored:?}"
    );
    assert_eq!(
        stored,
        raw_row(
            "p#12345",
            "likecount",
            &[
                ("GSI1PK", s("LIKECOUNTS")),
                ("GSI1SK", s("p#12345")),
                ("_type", s("LikeCount")),
                ("post_id", s("12345")),
                ("like#", n(1)),
            ]
        )
    );
    // The item it made is the one a put makes.
    let put = LikeCount {
        post_id: "777".into(),
        likes: 1,
    };
    db.put(&put).await?;
    let mut put_item = raw_get(&db, "p#777", "likecount").await?;
    put_item.remove("_wt");
    assert_eq!(names(&put_item), names(&stored));

    // The next like counts on the item there, and a plain update works on it.
    let second = like(&db, "12345").send_returning_updated().await?;
    assert_eq!(second.get("like#"), Some(&n(2)));
    let third = db.update(LikeCount::key("12345")).add(f.likes, 1).await?;
    assert_eq!(third.likes, 3);
    // Read back through the index the key field alone renders.
    let listed = items_of(db.query(LikeCount::gsi1_partition())).await?;
    assert_eq!(listed.len(), 2, "{listed:?}");
    Ok(())
}

#[tokio::test]
async fn an_upsert_never_takes_over_an_item_of_another_entity_type() -> TestResult {
    let db = table_with([Squatter {
        post_id: "1".into(),
    }])
    .await?;
    let before = raw_get(&db, "p#1", "likecount").await?;
    let err = like(&db, "1").await.unwrap_err();
    match &err {
        Error::OtherEntityStored {
            stored: Some(stored),
            current: Some(current),
            ..
        } => {
            assert_eq!(stored, "Squatter");
            assert_eq!(current.get("_type"), Some(&s("Squatter")));
        }
        other => panic!("expected OtherEntityStored with the squatter, got {other:?}"),
    }
    assert_eq!(raw_get(&db, "p#1", "likecount").await?, before);

    // In a transaction too.
    let err = db
        .transact_write()
        .update(like(&db, "1"))
        .await
        .unwrap_err();
    let op = the_one_cancelled(&err);
    assert_eq!(
        op.reason,
        CancelReason::OtherEntityStored("Squatter".into())
    );
    assert!(op.current.is_some());
    assert_eq!(raw_get(&db, "p#1", "likecount").await?, before);
    Ok(())
}

#[tokio::test]
async fn an_update_of_a_missing_item_says_it_is_missing() -> TestResult {
    let db = local::fresh_table::<Social>().await?;
    let f = LikeCount::fields();
    let like_missing = || db.update(LikeCount::key("404")).add(f.likes, 1);
    let err = like_missing().await.unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err:?}");

    // In a transaction, the operation's reason says the item is missing.
    let err = db
        .transact_write()
        .update(like_missing())
        .await
        .unwrap_err();
    let op = the_one_cancelled(&err);
    assert_eq!(op.reason, CancelReason::NotFound);
    assert_eq!(op.key, "PK=p#404, SK=likecount");
    // A condition that fails on an item that is there stays a failed condition.
    db.put(&LikeCount {
        post_id: "1".into(),
        likes: 5,
    })
    .await?;
    let err = db
        .transact_write()
        .update(
            db.update(LikeCount::key("1"))
                .add(f.likes, 1)
                .condition(f.likes.lt(5u64)),
        )
        .await
        .unwrap_err();
    assert_eq!(
        cancelled(&err)[0].reason,
        CancelReason::ConditionalCheckFailed
    );
    assert!(raw_find(&db, raw_key("p#404", "likecount"))
        .await?
        .is_none());
    Ok(())
}

#[tokio::test]
async fn a_transaction_upsert_creates_the_item_with_its_key_fields_and_type() -> TestResult {
    let db = local::fresh_table::<Social>().await?;
    for expected in 1..=2u64 {
        db.transact_write().update(like(&db, "9")).await?;
        let counter = db.get(LikeCount::key("9")).consistent().await?;
        assert_eq!(
            counter,
            Some(LikeCount {
                post_id: "9".into(),
                likes: expected
            })
        );
    }
    let stored = raw_get(&db, "p#9", "likecount").await?;
    assert_holds(
        &stored,
        &[
            ("_type", s("LikeCount")),
            ("post_id", s("9")),
            ("GSI1SK", s("p#9")),
        ],
    );
    Ok(())
}

#[tokio::test]
async fn an_upsert_of_a_versioned_entity_starts_at_version_one() -> TestResult {
    let db = local::fresh_table::<Social>().await?;
    let f = Counts::fields();
    // An upsert of `user`'s counts adding a follower, at `version` (any if `None`).
    let follow = |user: &str, version: Option<u64>| {
        let upsert = db.update(Counts::key(user)).upsert();
        let upsert = match version {
            Some(v) => upsert.if_version(v),
            None => upsert.any_version(),
        };
        upsert.add(f.followers, 1)
    };
    // Any version: made at version 1, then incremented.
    let made = follow("a", None).await?;
    assert_eq!((made.followers, made.version), (1, 1));
    let again = follow("a", None).await?;
    assert_eq!((again.followers, again.version), (2, 2));

    // Version 0: only while there is no item.
    let made = follow("b", Some(0)).await?;
    assert_eq!(made.version, 1);
    let err = follow("b", Some(0)).await.unwrap_err();
    match err {
        Error::VersionConflict {
            expected: 0,
            found: Some(1),
            ..
        } => {}
        other => panic!("expected VersionConflict, got {other:?}"),
    }
    // A version above 0 needs the item at that version, as a plain update does.
    let next = follow("b", Some(1)).await?;
    assert_eq!((next.followers, next.version), (2, 2));
    let err = follow("c", Some(3)).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::VersionConflict {
                expected: 3,
                found: None,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(raw_find(&db, raw_key("u#c", "count")).await?.is_none());
    // Still a choice to make: no version check is refused.
    refused(
        db.update(Counts::key("d")).upsert().add(f.followers, 1),
        ValidationReason::VersionCheckRequired,
    )
    .await;
    Ok(())
}

#[tokio::test]
async fn an_upsert_of_an_entity_with_history_is_refused() -> TestResult {
    let db = local::fresh_table::<Social>().await?;
    let f = Draft::fields();
    let upsert = || {
        db.update(Draft::key("x"))
            .upsert()
            .any_version()
            .set(f.body, "text")
    };
    let err = upsert().await.unwrap_err();
    assert_refused(&err, ValidationReason::KeepsHistory);
    let err = db.transact_write().update(upsert()).await.unwrap_err();
    assert_refused(&err, ValidationReason::KeepsHistory);
    assert!(raw_find(&db, raw_key("d#x", "DOC")).await?.is_none());
    Ok(())
}

#[tokio::test]
async fn upserts_whose_every_response_is_lost_count_each_like_once() -> TestResult {
    let db = local::fresh_table::<Social>().await?;
    let lossy = every_response_lost(&db, 29, "UpdateItem", "upserts").await?;
    for call in 1..=12u64 {
        // The first call creates the counter; the token settles each call.
        let update = like(&lossy, "1");
        match call % 3 {
            0 => assert_eq!(update.send().await?.likes, call),
            1 => {
                let updated = update.send_returning_updated().await?;
                assert_eq!(updated.get("like#"), Some(&n(call)));
            }
            _ => update.send_returning_nothing().await?,
        }
        let stored = db.get(LikeCount::key("1")).consistent().await?;
        assert_eq!(stored.map(|c| c.likes), Some(call), "call {call}");
    }
    Ok(())
}
