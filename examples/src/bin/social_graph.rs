//! Social graph with an adjacency list and an inverted index (seed pattern P7).
//!
//! A follow is one edge item: partition `USER#{follower}`, sort key `FOLLOWS#{followee}`.
//! The table answers "whom does A follow" (A's partition); the GSI `Inverted`, whose keys
//! are the table's keys swapped, answers "who follows A" (partition `FOLLOWS#A`). Each is
//! one typed query; mutual follows are their intersection.
//!
//! Run: `cargo run -p examples --bin social_graph`

use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "Inverted", pk = "SK", sk = "PK"))]
struct Social;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Social, pk = "USER#{user_id}", sk = "PROFILE")]
struct User {
    user_id: String,
    name: String,
}

/// An edge: `follower` follows `followee`. In the inverted index it sits in the
/// followee's partition.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Social, pk = "USER#{follower}", sk = "FOLLOWS#{followee}", index(Inverted))]
struct Follow {
    follower: String,
    followee: String,
    since: u64,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

async fn following(
    db: &dynamo_model::Db<Social>,
    user: &str,
) -> Result<BTreeSet<String>, BoxError> {
    let edges = db.query(Follow::partition(user)).all().await?.items;
    Ok(edges.into_iter().map(|f| f.followee).collect())
}

async fn followers(
    db: &dynamo_model::Db<Social>,
    user: &str,
) -> Result<BTreeSet<String>, BoxError> {
    let edges = db
        .query(Follow::inverted_partition(user))
        .all()
        .await?
        .items;
    Ok(edges.into_iter().map(|f| f.follower).collect())
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let db = examples::table::<Social>("social-graph").await?;
    for (id, name) in [
        ("ada", "Ada"),
        ("bob", "Bob"),
        ("cy", "Cy"),
        ("dee", "Dee"),
        ("ada2", "Ada Two"),
    ] {
        db.put(&User {
            user_id: id.into(),
            name: name.into(),
        })
        .await?;
    }
    let edges = [
        ("ada", "bob"),
        ("ada", "cy"),
        ("bob", "ada"),
        ("cy", "ada"),
        ("dee", "ada"),
        ("bob", "cy"),
        ("ada2", "bob"),
    ];
    for (t, (follower, followee)) in edges.iter().enumerate() {
        db.put(&Follow {
            follower: follower.to_string(),
            followee: followee.to_string(),
            since: t as u64,
        })
        .if_absent()
        .await?;
        println!("{follower} follows {followee}");
    }

    let ada_follows = following(&db, "ada").await?;
    let ada_followers = followers(&db, "ada").await?;
    let mutual: BTreeSet<String> = ada_follows.intersection(&ada_followers).cloned().collect();
    println!("ada follows:        {ada_follows:?}");
    println!("ada's followers:    {ada_followers:?}");
    println!("mutual with ada:    {mutual:?}");
    assert_eq!(ada_follows, set(&["bob", "cy"]));
    // `ada2`'s edges share a prefix with `ada`'s but never show up in ada's partitions.
    assert_eq!(ada_followers, set(&["bob", "cy", "dee"]));
    assert_eq!(mutual, set(&["bob", "cy"]));
    assert_eq!(followers(&db, "bob").await?, set(&["ada", "ada2"]));

    // Followers sorted by the inverted index's sort key (the follower's partition key),
    // narrowed with the typed chain over the table's partition-key template.
    let from_b = db
        .query(Follow::inverted_partition("ada"))
        .sk(Follow::inverted_sk().follower().ge("b"))
        .all()
        .await?
        .items;
    assert_eq!(
        from_b
            .iter()
            .map(|f| f.follower.as_str())
            .collect::<Vec<_>>(),
        ["bob", "cy", "dee"]
    );

    // Unfollow: one delete; both directions see it (the index follows the table).
    db.delete(Follow::key(FollowKey {
        follower: "cy",
        followee: "ada",
    }))
    .must_exist()
    .await?;
    println!("cy unfollows ada");
    let ada_followers = followers(&db, "ada").await?;
    let mutual: BTreeSet<String> = following(&db, "ada")
        .await?
        .intersection(&ada_followers)
        .cloned()
        .collect();
    println!("ada's followers:    {ada_followers:?}");
    println!("mutual with ada:    {mutual:?}");
    assert_eq!(ada_followers, set(&["bob", "dee"]));
    assert_eq!(mutual, set(&["bob"]));

    println!("social_graph: all assertions passed");
    Ok(())
}
