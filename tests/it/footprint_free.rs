//! Writes that add nothing the design does not have (`write_type = false`,
//! `write_token = false`): AWS's published social-network design (Developer Guide, "Using
//! DynamoDB as a data store for a social network": `PK`/`SK`, the user's counters
//! `u#12345`/`count` with `follower#`, `following#` and `post#`, the post
//! `p#12345`/`p#12345`, a like `p#12345`/`l#u#9999`), written by the crate and read back
//! raw: the whole attribute map is the published item, no attribute more.

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::{local, Entity, Error, Item, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    identify = "keys",
    write_type = false,
    write_token = false
)]
pub struct SocialNetwork;

/// `u#12345` / `count`: the user's counters.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = SocialNetwork, pk = "u#{user_id}", sk = "count", store_key_fields = false)]
pub struct UserCounts {
    pub user_id: String,
    #[dynamo(rename = "follower#")]
    pub followers: u64,
    #[dynamo(rename = "following#")]
    pub following: u64,
    #[dynamo(rename = "post#")]
    pub posts: u64,
}

/// `p#12345` / `p#12345`: the post.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = SocialNetwork, pk = "p#{post_id}", sk = "p#{post_id}", store_key_fields = false)]
pub struct Post {
    pub post_id: String,
    pub content: String,
    #[dynamo(rename = "imageUrl")]
    pub image_url: String,
    pub timestamp: String,
}

/// `p#12345` / `l#u#9999`: a like of the post by a user.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = SocialNetwork, pk = "p#{post_id}", sk = "l#u#{user_id}", store_key_fields = false)]
pub struct Like {
    pub post_id: String,
    pub user_id: String,
    pub timestamp: String,
}

fn item(attributes: &[(&str, AttributeValue)]) -> Item {
    attributes
        .iter()
        .map(|(name, value)| ((*name).to_owned(), value.clone()))
        .collect()
}

/// The published items, as the design's application writes them.
fn published_counts(followers: u64) -> Item {
    item(&[
        ("PK", s("u#12345")),
        ("SK", s("count")),
        ("follower#", n(followers)),
        ("following#", n(2)),
        ("post#", n(5)),
    ])
}

fn published_post(content: &str) -> Item {
    item(&[
        ("PK", s("p#12345")),
        ("SK", s("p#12345")),
        ("content", s(content)),
        ("imageUrl", s("https://example.com/12345.jpg")),
        ("timestamp", s("2022-06-04T16:45:00Z")),
    ])
}

fn published_like() -> Item {
    item(&[
        ("PK", s("p#12345")),
        ("SK", s("l#u#9999")),
        ("timestamp", s("2022-06-04T17:00:00Z")),
    ])
}

fn post(content: &str) -> Post {
    Post {
        post_id: "12345".into(),
        content: content.into(),
        image_url: "https://example.com/12345.jpg".into(),
        timestamp: "2022-06-04T16:45:00Z".into(),
    }
}

#[tokio::test]
async fn footprint_free_puts_store_exactly_the_published_items() -> TestResult {
    let db = local::fresh_table::<SocialNetwork>().await?;
    let counts = UserCounts {
        user_id: "12345".into(),
        followers: 3,
        following: 2,
        posts: 5,
    };
    let like = Like {
        post_id: "12345".into(),
        user_id: "9999".into(),
        timestamp: "2022-06-04T17:00:00Z".into(),
    };
    db.put(&counts).await?;
    db.put(&post("hello")).await?;
    db.put(&like).if_absent().await?;
    assert_eq!(raw_get(&db, "u#12345", "count").await?, published_counts(3));
    assert_eq!(
        raw_get(&db, "p#12345", "p#12345").await?,
        published_post("hello")
    );
    assert_eq!(raw_get(&db, "p#12345", "l#u#9999").await?, published_like());

    // Read back as the entities, told apart by their keys alone.
    assert_eq!(db.get(UserCounts::key("12345")).await?, Some(counts));
    assert_eq!(db.get(Post::key("12345")).await?, Some(post("hello")));
    assert_eq!(
        db.get(Like::key(LikeKey {
            post_id: "12345",
            user_id: "9999"
        }))
        .await?,
        Some(like)
    );
    // A transaction's put stores the published item too.
    raw_delete(&db, "p#12345", "p#12345").await?;
    db.transact_write().put(db.put(&post("again"))).await?;
    assert_eq!(
        raw_get(&db, "p#12345", "p#12345").await?,
        published_post("again")
    );
    Ok(())
}

#[tokio::test]
async fn footprint_free_updates_and_upserts_store_exactly_the_published_items() -> TestResult {
    let db = local::fresh_table::<SocialNetwork>().await?;
    let f = UserCounts::fields();
    // The counters made by the first follow, post and so on: an upsert from no item.
    let counts = db
        .update(UserCounts::key("12345"))
        .upsert()
        .add(f.followers, 3)
        .add(f.following, 2)
        .add(f.posts, 5)
        .await?;
    assert_eq!(counts.followers, 3);
    assert_eq!(raw_get(&db, "u#12345", "count").await?, published_counts(3));
    db.update(UserCounts::key("12345"))
        .add(f.followers, 1)
        .send_returning_nothing()
        .await?;
    assert_eq!(raw_get(&db, "u#12345", "count").await?, published_counts(4));

    db.put(&post("hello")).await?;
    let p = Post::fields();
    db.update(Post::key("12345"))
        .set(p.content, "edited")
        .await?;
    assert_eq!(
        raw_get(&db, "p#12345", "p#12345").await?,
        published_post("edited")
    );
    db.transact_write()
        .update(db.update(Post::key("12345")).set(p.content, "again"))
        .await?;
    assert_eq!(
        raw_get(&db, "p#12345", "p#12345").await?,
        published_post("again")
    );
    Ok(())
}

#[tokio::test]
async fn a_footprint_free_write_whose_response_is_lost_is_sent_once_and_reported_unknown(
) -> TestResult {
    let db = local::fresh_table::<SocialNetwork>().await?;
    let lossy = every_response_lost(&db, 31, "UpdateItem", "footprint-free").await?;
    let f = UserCounts::fields();
    // Without a token nothing tells the call's own write from another's: the SDK does not
    // send it again (a second `ADD` would count the follower twice), and the outcome is
    // unknown, with the item as a read found it.
    let err = lossy
        .update(UserCounts::key("12345"))
        .upsert()
        .add(f.followers, 1)
        .await
        .unwrap_err();
    match &err {
        Error::OutcomeUnknown {
            token: None,
            current: Some(current),
            ..
        } => assert_eq!(current.get("follower#"), Some(&n(1))),
        other => panic!("expected OutcomeUnknown without a token, got {other:?}"),
    }
    let stored = raw_get(&db, "u#12345", "count").await?;
    assert_eq!(stored.get("follower#"), Some(&n(1)), "applied exactly once");
    assert!(!stored.contains_key("_wt"));

    // A put too: sent once, unknown, no token to resend it with.
    let lossy = every_response_lost(&db, 31, "PutItem", "footprint-free").await?;
    let err = lossy.put(&post("hello")).if_absent().await.unwrap_err();
    assert!(
        matches!(err, Error::OutcomeUnknown { token: None, .. }),
        "{err:?}"
    );
    assert_eq!(
        raw_get(&db, "p#12345", "p#12345").await?,
        published_post("hello")
    );
    Ok(())
}
