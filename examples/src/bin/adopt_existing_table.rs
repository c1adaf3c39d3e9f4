//! Adopting a table another program wrote, then evolving it.
//!
//! 1. A device-monitoring program wrote 600 rows with the raw SDK in its own format:
//!    `DeviceID = d#12345` (unpadded), `State#Date = WARNING1#2020-04-24T14:40:00` (seconds,
//!    no `Z`), `EscalatedTo` on some, an older `reading` attribute since renamed `Reading`,
//!    and no entity-type attribute.
//! 2. The rows are read through an entity as they are: a get, a device's warnings in a
//!    time range, the existing `ByEscalation` index.
//! 3. The model gains an index (`ByDay`: every device's rows of a state, by time). A
//!    migration writes its keys and the entity type into every row; it is killed after
//!    two pages, resumed from its file checkpoint, and the new index answers.
//!
//! Run: `cargo run -p examples --bin adopt_existing_table`

use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::migrate::FileCheckpoints;
use dynamo_model::{Entity, Item, Table};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use time::macros::datetime;
use time::{Duration, OffsetDateTime};

/// The other program's table, declared as it is. `ByDay` is the index the new version
/// of the model adds (created with the table here; in production, added with
/// `UpdateTable` before the migration).
#[derive(Table)]
#[dynamo(
    pk = "DeviceID",
    sk = "State#Date",
    gsi(name = "ByEscalation", pk = "EscalatedTo", sk = "State#Date"),
    gsi(name = "ByDay", pk = "DayPK", sk = "DaySK")
)]
struct Devices;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Devices, identify = "keys", store_key_fields = false,
         pk = "d#{device_id}", sk = "{state}#{date}",
         index(ByEscalation, pk = [escalated_to]),
         index(ByDay, pk = "STATE#{state}", sk = "{date}#{device_id}"))]
struct DeviceStatus {
    #[dynamo(key_format = "unpadded")]
    device_id: u64,
    #[dynamo(key_format = "verbatim")]
    state: String,
    #[dynamo(key_format = "rfc3339(0, no_z)")]
    date: OffsetDateTime,
    #[dynamo(rename = "EscalatedTo")]
    escalated_to: Option<String>,
    #[dynamo(rename = "Reading", alias = "reading")]
    reading: Option<i64>,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const DEVICES: u64 = 60;
const ROWS_PER_DEVICE: u64 = 10;
const STATES: [&str; 3] = ["OK", "WARNING1", "CRITICAL"];

fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

/// Row `i` of device `d`, as the other program writes it.
fn raw_row(d: u64, i: u64) -> Item {
    let date = datetime!(2020-04-24 00:00:00 UTC) + Duration::minutes((i * 317 + d * 7) as i64);
    let state = STATES[((d + i) % 3) as usize];
    let text = format!(
        "{}-{:02}-{:02}T{:02}:{:02}:{:02}",
        date.year(),
        date.month() as u8,
        date.day(),
        date.hour(),
        date.minute(),
        date.second()
    );
    let mut row = Item::from([
        ("DeviceID".to_owned(), s(format!("d#{}", 10_000 + d))),
        ("State#Date".to_owned(), s(format!("{state}#{text}"))),
    ]);
    // Older rows carry `reading`, newer ones `Reading`.
    let reading = AttributeValue::N(((d * 31 + i * 17) % 200).to_string());
    row.insert(
        if i < 5 { "reading" } else { "Reading" }.to_owned(),
        reading,
    );
    if state == "CRITICAL" {
        row.insert(
            "EscalatedTo".to_owned(),
            s(if d.is_multiple_of(2) { "alice" } else { "bob" }),
        );
    }
    row
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let db = examples::table::<Devices>("adopt_existing_table").await?;
    println!("table: {}", db.table_name());

    // 1. The other program's rows.
    for d in 0..DEVICES {
        for i in 0..ROWS_PER_DEVICE {
            db.client()
                .put_item()
                .table_name(db.table_name())
                .set_item(Some(raw_row(d, i)))
                .send()
                .await?;
        }
    }
    let rows = DEVICES * ROWS_PER_DEVICE;
    println!("{rows} rows written with the raw SDK (no entity type, unpadded ids, seconds)");

    // 2. Read as they are.
    let first = raw_row(0, 0);
    let key_text = first["State#Date"].as_s().map_err(|_| "text")?.clone();
    let (state, date) = key_text.split_once('#').ok_or("state#date")?;
    let date = time::PrimitiveDateTime::parse(
        date,
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]"),
    )?
    .assume_utc();
    let got = db
        .get(DeviceStatus::key(DeviceStatusKey {
            device_id: 10_000u64,
            state,
            date,
        }))
        .await?
        .ok_or("the first row")?;
    println!("get d#10000 / {key_text}: reading {:?}", got.reading);
    assert_eq!(got.reading, Some(0));

    let warnings = db
        .query(DeviceStatus::partition(10_001u64))
        .sk(DeviceStatus::sk().state().eq("WARNING1"))
        .all()
        .await?
        .items;
    println!("device 10001: {} WARNING1 rows", warnings.len());
    assert!(!warnings.is_empty() && warnings.iter().all(|w| w.state == "WARNING1"));

    let alices = db
        .query(DeviceStatus::by_escalation_partition("alice"))
        .all()
        .await?
        .items;
    println!("escalated to alice: {} rows (existing index)", alices.len());
    let expected_alice = (0..DEVICES)
        .flat_map(|d| (0..ROWS_PER_DEVICE).map(move |i| (d, i)))
        .filter(|(d, i)| d % 2 == 0 && (d + i) % 3 == 2)
        .count();
    assert_eq!(alices.len(), expected_alice);

    // The new index is empty: the other program never wrote its keys.
    let day = datetime!(2020-04-25 00:00:00 UTC);
    let by_day = || async {
        db.query(DeviceStatus::by_day_partition("CRITICAL"))
            .sk(DeviceStatus::by_day_sk()
                .date()
                .between(day, day + Duration::days(1) - Duration::seconds(1)))
            .all()
            .await
            .map(|p| p.items)
    };
    assert!(by_day().await?.is_empty());
    println!("CRITICAL on 2020-04-25 through the new index, before migrating: 0 rows");

    // 3. The migration: killed after two pages, resumed from its checkpoint file.
    let dir = std::env::temp_dir().join(format!("adopt-existing-table-{}", std::process::id()));
    let migration = |kill: Option<Arc<tokio::sync::Notify>>| {
        let pages = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        db.migration::<DeviceStatus>("2026-11-by-day")
            .rewrite()
            .page_size(100)
            .max_write_units_per_second(2_000.0)
            .checkpoints(FileCheckpoints::new(&dir))
            .on_progress(move |_| {
                if let (1, Some(kill)) = (pages.fetch_add(1, Ordering::SeqCst), &kill) {
                    kill.notify_one();
                }
            })
    };
    let kill = Arc::new(tokio::sync::Notify::new());
    let killed = Arc::new(AtomicBool::new(false));
    tokio::select! {
        report = migration(Some(Arc::clone(&kill))).run() => {
            return Err(format!("the first run was to be killed, it ended: {report:?}").into());
        }
        () = kill.notified() => killed.store(true, Ordering::SeqCst),
    }
    let saved = FileCheckpoints::new(&dir);
    let checkpoint = dynamo_model::migrate::CheckpointStore::load(&saved, "2026-11-by-day")
        .await?
        .ok_or("a checkpoint")?;
    println!(
        "migration killed after {} rows read, {} rewritten (checkpoint saved)",
        checkpoint.progress.scanned, checkpoint.progress.changed
    );
    let report = migration(None).run().await?;
    let p = report.progress;
    println!(
        "migration resumed: {} rows read in all, {} rewritten, {} already done, {} conflicts, {} failed, {:.0} WCU",
        p.scanned, p.changed, p.already, p.conflicts, p.failed, p.write_units
    );
    assert!(killed.load(Ordering::SeqCst) && report.resumed);
    assert_eq!(p.changed + p.unchanged, rows);
    assert_eq!((p.failed, p.other), (0, 0));
    let _ = std::fs::remove_dir_all(&dir);

    // Every row now has the entity type and the new index's keys.
    let typed = db
        .client()
        .scan()
        .table_name(db.table_name())
        .filter_expression("attribute_exists(#t) AND attribute_exists(DayPK)")
        .expression_attribute_names("#t", "_type")
        .select(dynamo_model::aws_sdk_dynamodb::types::Select::Count)
        .send()
        .await?;
    println!(
        "rows with the entity type and the ByDay keys: {}",
        typed.count
    );
    assert_eq!(typed.count as u64, rows);

    let critical = by_day().await?;
    let expected: Vec<(u64, OffsetDateTime)> = {
        let mut all: Vec<(u64, OffsetDateTime)> = (0..DEVICES)
            .flat_map(|d| (0..ROWS_PER_DEVICE).map(move |i| (d, i)))
            .filter(|(d, i)| STATES[((d + i) % 3) as usize] == "CRITICAL")
            .map(|(d, i)| {
                (
                    10_000 + d,
                    datetime!(2020-04-24 00:00:00 UTC)
                        + Duration::minutes((i * 317 + d * 7) as i64),
                )
            })
            .filter(|(_, at)| at.date() == day.date())
            .collect();
        all.sort_by_key(|a| (a.1, a.0.to_string()));
        all
    };
    println!(
        "CRITICAL on 2020-04-25 through the new index, after migrating: {} rows, the first d#{} at {:02}:{:02}",
        critical.len(),
        critical.first().map_or(0, |c| c.device_id),
        critical.first().map_or(0, |c| c.date.hour()),
        critical.first().map_or(0, |c| c.date.minute()),
    );
    assert_eq!(
        critical
            .iter()
            .map(|c| (c.device_id, c.date))
            .collect::<Vec<_>>(),
        expected
    );
    assert!(!critical.is_empty());
    // Renamed attributes moved: no row keeps `reading`.
    let old_names = db
        .client()
        .scan()
        .table_name(db.table_name())
        .filter_expression("attribute_exists(reading)")
        .select(dynamo_model::aws_sdk_dynamodb::types::Select::Count)
        .send()
        .await?;
    assert_eq!(old_names.count, 0);
    println!("adopt_existing_table: read as written, migrated once, the new index answers");
    Ok(())
}
