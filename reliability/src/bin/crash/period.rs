//! The period-tables protocol: monthly tables of [`Series`] named after the run's table.
//! Before the child, the tables of September and October 2026 exist with five readings
//! each. The child creates November's table and the two after it (`create_ahead`: each
//! table, then its TTL), then drops the periods that ended by November (`drop_before`,
//! oldest first). After the kill the tables form a consistent set: the old ones not yet
//! dropped (the newest of them, each whole) and a prefix of the new ones, each with TTL
//! on except the last created when the kill interrupted `create_ahead` (its TTL is the
//! next request). The recovery runs both steps again: then exactly the three new tables
//! exist, each with TTL on.

use dynamo_model::Db;
use dynamo_model::aws_sdk_dynamodb::types::{TableStatus, TimeToLiveStatus};
use dynamo_model::period::{Period, PeriodTable, PeriodTables};
use reliability::{Reading, Res, Rig, Series};
use time::OffsetDateTime;
use time::macros::datetime;

pub const STEPS: &[&str] = &["create ahead", "drop old"];

/// The child's clock: the middle of November 2026.
const NOW: OffsetDateTime = datetime!(2026-11-15 12:00 UTC);
/// The periods ended by then are dropped.
const CUTOFF: OffsetDateTime = datetime!(2026-11-01 00:00 UTC);
/// The tables before the child (oldest first), and the ones it creates, by suffix.
const OLD: [&str; 2] = ["2026_09", "2026_10"];
const NEW: [&str; 3] = ["2026_11", "2026_12", "2027_01"];
const READINGS: u32 = 5;

fn tables(db: &Db<Rig>) -> Res<PeriodTables<Series>> {
    let prefix = Db::<Series>::new(db.client().clone(), db.table_name());
    Ok(PeriodTables::new(&prefix, Period::Month)?)
}

/// The readings of old table `k`.
fn readings(k: usize) -> Vec<Reading> {
    (0..READINGS)
        .map(|n| Reading {
            n,
            value: k as u64 * 100 + u64::from(n),
        })
        .collect()
}

/// Parent: the two old tables and their readings.
pub async fn prepare(db: &Db<Rig>) -> Res<()> {
    let tables = tables(db)?;
    let created = tables
        .create_ahead(datetime!(2026-09-15 12:00 UTC), 1)
        .await?;
    for (k, table) in created.iter().enumerate() {
        tables
            .db(table)
            .batch_write()
            .puts(&readings(k))
            .send()
            .await?;
    }
    Ok(())
}

/// The child's steps.
pub async fn run(db: &Db<Rig>, step: &mut dyn FnMut(usize)) -> Res<()> {
    let tables = tables(db)?;
    step(0);
    tables.create_ahead(NOW, 2).await?;
    step(1);
    tables.drop_before(CUTOFF).await?;
    Ok(())
}

/// After the kill: the invariant, the recovery, the invariant again; then every period
/// table of the run is deleted (they are not the run's temporary table).
pub async fn check(db: &Db<Rig>, last: Option<usize>) -> Res<String> {
    let tables = tables(db)?;
    let result = check_in(&tables, last).await;
    for table in tables.list().await? {
        tables.db(&table).delete_table().await?;
    }
    result
}

async fn check_in(tables: &PeriodTables<Series>, last: Option<usize>) -> Res<String> {
    let (old, new) = existing(tables).await?;
    // The old tables left are the newest `old.len()`; the new ones the first `new.len()`.
    let (dropped, created) = (OLD.len() - old.len(), new.len());
    let consistent = old
        .iter()
        .map(suffix)
        .eq(OLD[dropped..].iter().map(|s| s.to_string()))
        && new
            .iter()
            .map(suffix)
            .eq(NEW[..created].iter().map(|s| s.to_string()));
    let allowed = match last {
        None => dropped == 0 && created == 0,
        Some(0) => dropped == 0,
        Some(1) => created == NEW.len(),
        _ => dropped == OLD.len() && created == NEW.len(),
    };
    if !consistent || !allowed {
        return Err(format!("after step {last:?}: old {old:?}, new {new:?}").into());
    }
    for (k, table) in old.iter().enumerate() {
        let mut found = tables
            .db(table)
            .scan::<Reading>()
            .consistent()
            .all()
            .await?
            .items;
        found.sort_by_key(|r| r.n);
        if found != readings(dropped + k) {
            return Err(format!("{}: a table kept lost readings: {found:?}", table.name).into());
        }
    }
    // The last table `create_ahead` created may lack its TTL when the kill interrupted it.
    let mut without_ttl = 0;
    for (k, table) in new.iter().enumerate() {
        if !active_with_ttl(tables, table).await? {
            without_ttl += 1;
            if last != Some(0) || k + 1 != created {
                return Err(format!("{}: not active with TTL on", table.name).into());
            }
        }
    }
    recover(tables).await?;
    Ok(format!(
        "{} old kept, {created} new{}",
        old.len(),
        if without_ttl > 0 {
            " (the last without TTL)"
        } else {
            ""
        }
    ))
}

/// The recovery: both steps again; then exactly the new tables, active, with TTL on.
async fn recover(tables: &PeriodTables<Series>) -> Res<()> {
    tables.create_ahead(NOW, 2).await?;
    tables.drop_before(CUTOFF).await?;
    let (old, new) = existing(tables).await?;
    if !old.is_empty() || new.len() != NEW.len() {
        return Err(format!("after the recovery: old {old:?}, new {new:?}").into());
    }
    for table in &new {
        if !active_with_ttl(tables, table).await? {
            return Err(format!("after the recovery, {} has no TTL", table.name).into());
        }
    }
    Ok(())
}

/// The period tables that exist, old and new; an error for any other.
async fn existing(tables: &PeriodTables<Series>) -> Res<(Vec<PeriodTable>, Vec<PeriodTable>)> {
    let (mut old, mut new) = (Vec::new(), Vec::new());
    for table in tables.list().await? {
        match suffix(&table) {
            s if OLD.contains(&s.as_str()) => old.push(table),
            s if NEW.contains(&s.as_str()) => new.push(table),
            _ => return Err(format!("a table no step creates: {}", table.name).into()),
        }
    }
    Ok((old, new))
}

/// A table's suffix (`2026_11`), from its period's start.
fn suffix(table: &PeriodTable) -> String {
    format!(
        "{}_{:02}",
        table.start.year(),
        u8::from(table.start.month())
    )
}

async fn active_with_ttl(tables: &PeriodTables<Series>, table: &PeriodTable) -> Res<bool> {
    let client = tables.db(table).client().clone();
    let described = client
        .describe_table()
        .table_name(&table.name)
        .send()
        .await?;
    let active = described.table.and_then(|t| t.table_status) == Some(TableStatus::Active);
    let ttl = client
        .describe_time_to_live()
        .table_name(&table.name)
        .send()
        .await?;
    let on = ttl
        .time_to_live_description
        .and_then(|d| d.time_to_live_status)
        == Some(TimeToLiveStatus::Enabled);
    Ok(active && on)
}
