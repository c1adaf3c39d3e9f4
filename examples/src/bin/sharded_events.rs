//! Sharded events (seeds 000 and 002): one hot day of events spread over 16 partitions,
//! read back as one, newest first; a sharded index for selective queries; one table per
//! month; a hot item served from a cache.
//!
//! A day as a partition key sends every write of the day to one partition, whose
//! throughput DynamoDB caps (1,000 writes a second). The seeds' fix: add a suffix
//! `1..N` computed from another attribute (`2014-07-09.1` … `.200`), and read by querying
//! every suffix. Here the suffix is computed from the event id by the crate
//! (`{event_id:shard(16)}`): nothing to store, nothing to pass to a get, and
//! `db.scatter_query(Event::partition(day))` queries the 16 partitions concurrently and
//! merges them in sort order, with one cursor for the next page. The same with an index
//! whose partition key is sharded (`TYPE#{kind}#{shard}`): all purchases of the last hour
//! without a scan and without a hot key.
//!
//! Run: `cargo run -p examples --bin sharded_events`

use dynamo_model::cache::Cache;
use dynamo_model::period::{Capacity, Period, PeriodTables, TimeRange};
use dynamo_model::{Db, Entity, Table};
use futures_util::TryStreamExt;
use time::macros::datetime;
use time::{Duration, OffsetDateTime};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct Events;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Events,
         pk = "EVENTS#{at:date}#{event_id:shard(16)}",
         sk = "{at}#{event_id}",
         index(GSI1, pk = "TYPE#{kind}#{event_id:shard(8)}", sk = "{at}#{event_id}"))]
struct Event {
    event_id: String,
    at: OffsetDateTime,
    kind: String,
    user: String,
    value: u64,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const EVENTS: usize = 10_000;
const KINDS: [&str; 4] = ["view", "click", "purchase", "signup"];

/// The newest first, ties broken as DynamoDB's order would (by the rest of the key).
fn newest_first(events: &mut [Event]) {
    events.sort_by(|a, b| (b.at, &b.event_id).cmp(&(a.at, &a.event_id)));
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let db = examples::table::<Events>("sharded_events").await?;
    let day = datetime!(2026-11-23 00:00 UTC);

    // 1. One hot day: 10,000 events (one every 8.64 s), written with the bulk loader.
    let events: Vec<Event> = (0..EVENTS)
        .map(|i| Event {
            event_id: format!("e{i:05}"),
            at: day + Duration::milliseconds(8_640 * i as i64),
            kind: KINDS[i % KINDS.len()].to_owned(),
            user: format!("u{}", i % 97),
            value: (i as u64 * 37) % 1000,
        })
        .collect();
    let started = std::time::Instant::now();
    let out = db.bulk_load().puts(&events).send().await?;
    assert!(out.unprocessed.is_empty() && out.failed.is_empty());
    println!(
        "wrote {EVENTS} events of {} over 16 shards in {:.1?}",
        day.date(),
        started.elapsed()
    );
    let mut per_shard = Vec::new();
    for shard in Event::partition(day).shards() {
        per_shard.push(db.query(shard).keys_only().all().await?.items.len());
    }
    println!("events per shard: {per_shard:?}");
    assert_eq!(per_shard.iter().sum::<usize>(), EVENTS);
    assert!(per_shard.iter().all(|&n| n > EVENTS / 16 / 2), "spread");

    // 2. The last hour across all shards, newest first: 50, then the next 50 by cursor.
    let hour_ago = day + Duration::hours(23);
    let mut reference: Vec<Event> = events
        .iter()
        .filter(|e| e.at >= hour_ago)
        .cloned()
        .collect();
    newest_first(&mut reference);
    let last_hour = || {
        db.scatter_query(Event::partition(day))
            .sk(Event::sk().at().ge(hour_ago))
            .reverse()
            .limit(50)
    };
    let first = last_hour().page(None).await?;
    assert_eq!(first.items, reference[..50]);
    let cursor = first.cursor.clone().ok_or("a second page")?;
    let second = last_hour().page(Some(&cursor)).await?;
    assert_eq!(second.items, reference[50..100]);
    println!(
        "last hour: {} events in all; page 1 newest {} ({:.1} RCU), page 2 from its cursor ({:.1} RCU)",
        reference.len(),
        first.items[0].at.time(),
        first.consumed_capacity,
        second.consumed_capacity
    );

    // 3. The same through the sharded index: the last hour's purchases, newest first.
    let mut purchases: Vec<Event> = reference
        .iter()
        .filter(|e| e.kind == "purchase")
        .cloned()
        .collect();
    newest_first(&mut purchases);
    let by_kind = db
        .scatter_query(Event::gsi1_partition("purchase"))
        .sk(Event::gsi1_sk().at().ge(hour_ago))
        .reverse()
        .limit(20)
        .all()
        .await?;
    assert_eq!(by_kind.items, purchases[..20]);
    println!(
        "last hour's purchases through GSI1 over 8 shards: {} of {}, {:.1} RCU",
        by_kind.items.len(),
        purchases.len(),
        by_kind.consumed_capacity
    );

    // 4. One table per month: this month's and next month's created ahead, an old month
    // read across and then dropped.
    let months = PeriodTables::new(&db, Period::Month)?;
    months.create_ahead(day, 1).await?;
    months
        .create_ahead(datetime!(2026-09-10 00:00 UTC), 0)
        .await?;
    for (i, at) in [
        datetime!(2026-09-12 08:00 UTC),
        datetime!(2026-11-02 09:30 UTC),
        datetime!(2026-11-20 17:15 UTC),
    ]
    .into_iter()
    .enumerate()
    {
        let event = Event {
            event_id: format!("m{i}"),
            at,
            kind: "signup".into(),
            user: "u1".into(),
            value: 1,
        };
        months.db_at(at).put(&event).await?;
    }
    let tables: Vec<String> = months.list().await?.into_iter().map(|t| t.name).collect();
    println!("monthly tables: {tables:?}");
    assert_eq!(tables.len(), 3);
    let range = TimeRange {
        from: datetime!(2026-09-01 00:00 UTC),
        to: datetime!(2026-12-01 00:00 UTC),
    };
    let signups: Vec<Event> = months
        .query_newest_first(range, |db, r| {
            db.scatter_query(Event::gsi1_partition("signup"))
                .sk(Event::gsi1_sk().at().between(r.from, r.to))
                .reverse()
                .stream()
        })
        .try_collect()
        .await?;
    assert_eq!(signups.len(), 3);
    assert!(signups.windows(2).all(|w| w[0].at > w[1].at));
    let september = months.list().await?.into_iter().next().ok_or("september")?;
    months
        .set_capacity(&september, Capacity::Provisioned { read: 1, write: 1 })
        .await?;
    let dropped = months.drop_before(datetime!(2026-10-01 00:00 UTC)).await?;
    println!(
        "{} switched to 1 RCU / 1 WCU, then dropped; {} monthly tables left",
        dropped[0].name,
        months.list().await?.len()
    );

    // 5. A hot item through the cache: read 1,000 times, one read reaches DynamoDB.
    let cache = Cache::builder()
        .entity::<Event>()
        .time_to_live(std::time::Duration::from_secs(60))
        .build();
    let cached: Db<Events> = db.with_cache(&cache);
    let hot = &events[42];
    for _ in 0..1_000 {
        let got = cached.get(hot.primary_key()).await?.ok_or("hot item")?;
        assert_eq!(&got, hot);
    }
    let stats = cache.stats();
    println!(
        "hot item read 1,000 times: {} hits, {} miss, hit rate {:.1} %",
        stats.hits,
        stats.misses,
        100.0 * stats.hit_rate()
    );
    assert_eq!(stats.misses, 1);

    months
        .drop_before(OffsetDateTime::now_utc() + Duration::days(3650))
        .await?;
    Ok(())
}
