//! Game invites (seed 002, best practice 5): "pending invites of a player, newest first".
//!
//! Two designs side by side:
//! - composite sort key `INVITE#{status}#{sent_at}#{from}`: `begins_with` on the status
//!   reads only the pending invites;
//! - sort key by date only, `status` as an attribute: a filter drops the others *after*
//!   they were read, so every invite of the player is paid for.
//!
//! Run: `cargo run -p examples --bin game_invites`

use dynamo_model::{Entity, Table};
use futures_util::{stream, StreamExt, TryStreamExt};
use serde::{Deserialize, Serialize};
use time::macros::datetime;
use time::{Duration, OffsetDateTime};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct Games;

/// Composite sort key: status first, then date.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Games, pk = "PLAYER#{player}", sk = "INVITE#{status}#{sent_at}#{from}")]
struct Invite {
    player: String,
    status: String,
    sent_at: OffsetDateTime,
    from: String,
    message: String,
}

/// Date-only sort key; status filtered.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Games, pk = "PLAYER#{player}", sk = "INVITED#{sent_at}#{from}")]
struct InviteByDate {
    player: String,
    status: String,
    sent_at: OffsetDateTime,
    from: String,
    message: String,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let db = examples::table::<Games>("game-invites").await?;
    let start = datetime!(2014-10-01 00:00 UTC);
    // 400 invites to one player; every 16th is still pending.
    let invites: Vec<Invite> = (0..400)
        .map(|i| Invite {
            player: "alice".into(),
            status: match i % 16 {
                0 => "PENDING",
                1..=9 => "ACCEPTED",
                _ => "DECLINED",
            }
            .into(),
            sent_at: start + Duration::minutes(37 * i),
            from: format!("player-{i:03}"),
            message: "Join my game! ".repeat(8),
        })
        .collect();
    let by_date: Vec<InviteByDate> = invites
        .iter()
        .map(|i| InviteByDate {
            player: i.player.clone(),
            status: i.status.clone(),
            sent_at: i.sent_at,
            from: i.from.clone(),
            message: i.message.clone(),
        })
        .collect();
    stream::iter(&invites)
        .map(|i| db.put(i).send())
        .buffer_unordered(16)
        .try_collect::<Vec<()>>()
        .await?;
    stream::iter(&by_date)
        .map(|i| db.put(i).send())
        .buffer_unordered(16)
        .try_collect::<Vec<()>>()
        .await?;

    // Composite key: only the pending invites are read.
    let composite = db
        .query(Invite::partition("alice"))
        .sk(Invite::sk().status().eq("PENDING"))
        .reverse()
        .all()
        .await?;

    // Filter: all invites are read, then the filter keeps the pending ones.
    let filtered = db
        .query(InviteByDate::partition("alice"))
        .filter(InviteByDate::fields().status.eq("PENDING"))
        .reverse()
        .all()
        .await?;

    let mut expected: Vec<&Invite> = invites.iter().filter(|i| i.status == "PENDING").collect();
    expected.sort_by_key(|i| std::cmp::Reverse(i.sent_at));
    assert_eq!(composite.items.iter().collect::<Vec<_>>(), expected);
    let same: Vec<(&str, OffsetDateTime)> = filtered
        .items
        .iter()
        .map(|i| (i.from.as_str(), i.sent_at))
        .collect();
    let want: Vec<(&str, OffsetDateTime)> = expected
        .iter()
        .map(|i| (i.from.as_str(), i.sent_at))
        .collect();
    assert_eq!(same, want, "both designs return the same invites");

    println!(
        "pending invites of alice, newest first: {}",
        composite.items.len()
    );
    println!(
        "  newest: from {} at {}",
        composite.items[0].from, composite.items[0].sent_at
    );
    println!(
        "  composite sort key (begins_with INVITE#PENDING#): {:>5.1} RCU",
        composite.consumed_capacity
    );
    println!(
        "  date sort key + filter on status:               {:>5.1} RCU",
        filtered.consumed_capacity
    );
    assert!(
        composite.consumed_capacity < filtered.consumed_capacity,
        "the composite key must read less than the filter"
    );

    // The composite key also answers "pending invites since a date" with no filter at all.
    let since = start + Duration::days(5);
    let recent = db
        .query(Invite::partition("alice"))
        .sk(Invite::sk().status().eq("PENDING").sent_at().ge(since))
        .reverse()
        .all()
        .await?;
    assert_eq!(
        recent.items.len(),
        expected.iter().filter(|i| i.sent_at >= since).count()
    );
    println!(
        "  pending since {since}: {} ({:.1} RCU)",
        recent.items.len(),
        recent.consumed_capacity
    );

    println!("game_invites: all assertions passed");
    Ok(())
}
