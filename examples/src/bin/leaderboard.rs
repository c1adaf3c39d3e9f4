//! Leaderboard (seed 004): the top 10 of 1,000 players by score, highest first, in one
//! query page. Scores are zero-padded in the GSI sort key, so their string order is their
//! numeric order, and `reverse()` reads from the top.
//!
//! Run: `cargo run -p examples --bin leaderboard`

use dynamo_model::{Entity, Table};
use futures_util::{stream, StreamExt, TryStreamExt};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct Arcade;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Arcade, pk = "PLAYER#{player_id}", sk = "GAME#{game}",
         index(GSI1, pk = "LEADERBOARD#{game}", sk = "{score}#{player_id}"))]
struct Score {
    player_id: String,
    game: String,
    score: u32,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let db = examples::table::<Arcade>("leaderboard").await?;
    // Scores with many ties and a wide range (9 vs 10 vs 100 must sort numerically).
    let mut seed: u64 = 42;
    let scores: Vec<Score> = (0..1000)
        .map(|i| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            Score {
                player_id: format!("p{i:04}"),
                game: "tetris".into(),
                score: ((seed >> 40) % 100_000) as u32 / if i % 3 == 0 { 1000 } else { 1 },
            }
        })
        .collect();
    stream::iter(&scores)
        .map(|s| db.put(s).send())
        .buffer_unordered(16)
        .try_collect::<Vec<()>>()
        .await?;
    // Another game's board shares the index but not the partition.
    db.put(&Score {
        player_id: "p0000".into(),
        game: "snake".into(),
        score: u32::MAX,
    })
    .await?;

    let top = db
        .query(Score::gsi1_partition("tetris"))
        .reverse()
        .limit(10)
        .page(None)
        .await?;

    let mut expected: Vec<&Score> = scores.iter().collect();
    expected.sort_by(|a, b| (b.score, &b.player_id).cmp(&(a.score, &a.player_id)));
    assert_eq!(top.items.iter().collect::<Vec<_>>(), expected[..10]);
    assert!(top.cursor.is_some(), "more players follow");
    println!(
        "top 10 of {} players ({:.1} RCU, one request):",
        scores.len(),
        top.consumed_capacity
    );
    for (rank, s) in top.items.iter().enumerate() {
        println!("{:>3}. {} {:>6}", rank + 1, s.player_id, s.score);
    }

    // The next ten continue from the cursor.
    let next = db
        .query(Score::gsi1_partition("tetris"))
        .reverse()
        .limit(10)
        .page(top.cursor.as_ref())
        .await?;
    assert_eq!(next.items.iter().collect::<Vec<_>>(), expected[10..20]);
    println!(
        "ranks 11-20 start with {} ({})",
        next.items[0].player_id, next.items[0].score
    );

    println!("leaderboard: all assertions passed");
    Ok(())
}
