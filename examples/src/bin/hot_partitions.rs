//! Hot partitions found from the client, then flattened by write sharding.
//!
//! Telemetry from 1,000 devices whose traffic follows a Zipf law (a few devices send most
//! readings), written with one partition per device (`DEVICE#{device}`). An
//! [`Insight`] attached to the `Db` watches every call: it finds the busiest partition
//! within a second, names its entity type and key template, and says how many shards
//! would keep it under the warning level. The same workload written through an entity
//! whose partition key adds a computed shard (`{at:shard(8)}`) spreads each device over 8
//! partitions: the busiest partition's rate falls by about that factor, and so does its
//! share of the table's writes. Each run prints its busiest partitions; a table compares
//! the two.
//!
//! DynamoDB Local has no partitions and no throttling: the rates are those the client
//! sent, measured exactly as on DynamoDB. The warning level is set to 10 % of the
//! per-partition limit (100 write units a second) so that a laptop reaches it.
//!
//! Run: `cargo run -p examples --bin hot_partitions`

use dynamo_model::insight::{HotPartition, Insight};
use dynamo_model::{Db, Entity, Table};
use futures_util::{stream, StreamExt, TryStreamExt};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct Telemetry;

/// One partition per device.
#[derive(Entity, Debug, Clone)]
#[dynamo(table = Telemetry, pk = "DEVICE#{device}", sk = "{at}")]
struct Reading {
    device: String,
    at: u64,
    payload: String,
}

/// The same readings, each device over 8 partitions chosen by the reading's time.
#[derive(Entity, Debug, Clone)]
#[dynamo(table = Telemetry, pk = "SHARDED#{device}#{at:shard(8)}", sk = "{at}")]
struct ShardedReading {
    device: String,
    at: u64,
    payload: String,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const DEVICES: usize = 1_000;
const WRITES: usize = 2_000;
/// Zipf exponent: the busiest device sends about a sixth of all readings.
const SKEW: f64 = 1.1;

/// Device ranks drawn from a Zipf law, from a fixed seed (the same workload twice).
fn zipf_workload() -> Vec<usize> {
    let weights: Vec<f64> = (1..=DEVICES).map(|r| 1.0 / (r as f64).powf(SKEW)).collect();
    let sum: f64 = weights.iter().sum();
    let mut cumulative = Vec::with_capacity(DEVICES);
    let mut acc = 0.0;
    for w in &weights {
        acc += w / sum;
        cumulative.push(acc);
    }
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    (0..WRITES)
        .map(|_| {
            // xorshift64*: a uniform draw in [0, 1).
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            let u = (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64;
            cumulative.partition_point(|&c| c < u).min(DEVICES - 1)
        })
        .collect()
}

fn device(rank: usize) -> String {
    format!("d{:04}", rank + 1)
}

/// About 1.5 KB: two write units per reading.
fn payload() -> String {
    "x".repeat(1_500)
}

/// Writes the workload through `db`, 16 at a time; `put` writes one reading.
async fn run<F, Fut>(workload: &[usize], put: F) -> Result<std::time::Duration, BoxError>
where
    F: Fn(usize, u64) -> Fut,
    Fut: std::future::Future<Output = Result<(), dynamo_model::Error>>,
{
    let started = std::time::Instant::now();
    stream::iter(workload.iter().enumerate())
        .map(|(i, &rank)| put(rank, i as u64))
        .buffer_unordered(16)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(started.elapsed())
}

fn print_top(title: &str, insight: &Insight) {
    println!("{title}: busiest partitions (their busiest second)");
    println!(
        "  {:<28} {:>8} {:>9} {:>7} {:>7}  entity `template`",
        "partition", "WCU/s", "of limit", "share", "shards"
    );
    for h in insight.hot_partitions().iter().take(5) {
        println!(
            "  {:<28} {:>8.0} {:>8.1}% {:>6.1}% {:>7}  {} `{}`",
            h.partition.key.to_string(),
            h.rate,
            100.0 * h.of_limit(),
            100.0 * h.share,
            h.shards,
            h.partition.entity_type.as_deref().unwrap_or("?"),
            h.partition.template.unwrap_or("?"),
        );
    }
    for w in insight.warnings() {
        println!("  warning: {w}");
    }
}

fn busiest(insight: &Insight) -> Result<HotPartition, BoxError> {
    Ok(insight
        .hot_partitions()
        .into_iter()
        .next()
        .ok_or("no partition observed")?)
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let table = examples::table::<Telemetry>("hot_partitions").await?;
    let workload = zipf_workload();
    let top_device = device(0);
    let top_count = workload.iter().filter(|&&r| r == 0).count();
    println!(
        "{WRITES} readings from {DEVICES} devices (Zipf, s = {SKEW}): {top_device} sends {top_count} ({:.0} %)",
        100.0 * top_count as f64 / WRITES as f64
    );

    // Before: one partition per device. Keys are shown (this is demo data); by default
    // reports show a stable hash of each key.
    let before = Insight::new().warn_at(0.1).show_keys(true);
    let db: Db<Telemetry> = table.observed(&before);
    let took = run(&workload, |rank, at| {
        let (db, reading) = (
            db.clone(),
            Reading {
                device: device(rank),
                at,
                payload: payload(),
            },
        );
        async move { db.put(&reading).await.map(drop) }
    })
    .await?;
    println!("wrote them in {took:.1?}");
    print_top("before", &before);
    let hot = busiest(&before)?;
    assert_eq!(
        hot.partition.key.to_string(),
        format!("DEVICE#{top_device}"),
        "the hot key found"
    );
    assert_eq!(hot.partition.entity_type.as_deref(), Some("Reading"));
    assert_eq!(hot.partition.template, Some("DEVICE#{device}"));

    // After: the same workload, each device's readings over 8 computed shards.
    let after = Insight::new().warn_at(0.1).show_keys(true);
    let db: Db<Telemetry> = table.observed(&after);
    let took = run(&workload, |rank, at| {
        let reading = ShardedReading {
            device: device(rank),
            at,
            payload: payload(),
        };
        let db = db.clone();
        async move { db.put(&reading).await.map(drop) }
    })
    .await?;
    println!("wrote them in {took:.1?}");
    print_top("after", &after);
    let flat = busiest(&after)?;
    assert_eq!(
        flat.partition.entity_type.as_deref(),
        Some("ShardedReading")
    );

    println!();
    println!(
        "{:<26} {:>30} {:>34}",
        "", "before: DEVICE#{device}", "after: SHARDED#{device}#{at:shard(8)}"
    );
    let row = |label: &str, a: String, b: String| println!("{label:<26} {a:>30} {b:>40}");
    row(
        "busiest partition",
        hot.partition.key.to_string(),
        flat.partition.key.to_string(),
    );
    row(
        "its write units a second",
        format!("{:.0}", hot.rate),
        format!("{:.0}", flat.rate),
    );
    row(
        "of the 1,000 WCU limit",
        format!("{:.1} %", 100.0 * hot.of_limit()),
        format!("{:.1} %", 100.0 * flat.of_limit()),
    );
    row(
        "its share of the writes",
        format!("{:.1} %", 100.0 * hot.share),
        format!("{:.1} %", 100.0 * flat.share),
    );
    row(
        "warnings (at 10 %)",
        before.warnings().len().to_string(),
        after.warnings().len().to_string(),
    );
    row(
        "shards suggested",
        hot.shards.to_string(),
        flat.shards.to_string(),
    );
    assert!(
        flat.rate < hot.rate / 2.0 && flat.share < hot.share / 2.0,
        "sharding flattens the busiest partition: {flat:?} vs {hot:?}"
    );
    let units: f64 = after.by_template().iter().map(|l| l.write_units).sum();
    assert_eq!(
        units,
        2.0 * WRITES as f64,
        "every write counted, two units each"
    );
    Ok(())
}
