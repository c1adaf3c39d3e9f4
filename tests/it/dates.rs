//! Dates as key parts against DynamoDB Local: a range on a `time::Date` component that
//! another component follows (and on a `PrimitiveDateTime` that leads an index sort key),
//! and the same with chrono's types, return exactly the items an in-memory reference
//! selects, in key order, in both directions.

use crate::common::*;
use dynamo_model::{local, Db, Entity, Error};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::sync::atomic::{AtomicUsize, Ordering};
use time::macros::date;
use time::{Date, Duration, PrimitiveDateTime, Time};

/// A reading per sensor, day and time of day; on GSI1, sorted by the date-time first.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "READINGS#{sensor}", sk = "DAY#{day}#{at}",
         index(GSI1, pk = "READINGS_BY_TIME#{sensor}", sk = "{at}#{day}"))]
pub struct Reading {
    pub sensor: String,
    pub day: Date,
    pub at: PrimitiveDateTime,
    pub value: i64,
}

/// The same with chrono's types: a day, then an instant.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "CREADINGS#{sensor}", sk = "{day}#{at}")]
pub struct ChronoReading {
    pub sensor: String,
    pub day: chrono::NaiveDate,
    pub at: chrono::DateTime<chrono::Utc>,
}

/// Days in a window of ten around a month end and a leap day, so bounds often equal
/// stored days.
fn days() -> impl Strategy<Value = Date> {
    (0i64..10).prop_map(|d| date!(2024 - 02 - 24) + Duration::days(d))
}

fn times() -> impl Strategy<Value = Time> {
    (
        0u8..24,
        0u8..60,
        prop::sample::select(vec![0u32, 1, 999_999_999]),
    )
        .prop_map(|(h, m, nano)| Time::from_hms_nano(h, m, 0, nano).unwrap_or(Time::MIDNIGHT))
}

#[derive(Debug, Clone)]
enum Op {
    Lt(Date),
    Le(Date),
    Gt(Date),
    Ge(Date),
    Between(Date, Date),
    Is(Date),
}

impl Op {
    fn holds(&self, day: Date) -> bool {
        match *self {
            Op::Lt(b) => day < b,
            Op::Le(b) => day <= b,
            Op::Gt(b) => day > b,
            Op::Ge(b) => day >= b,
            Op::Between(a, b) => a <= day && day <= b,
            Op::Is(b) => day == b,
        }
    }

    fn on_table(&self) -> dynamo_model::SortKeyCondition<Reading> {
        let day = Reading::sk().day();
        match *self {
            Op::Lt(b) => day.lt(b),
            Op::Le(b) => day.le(b),
            Op::Gt(b) => day.gt(b),
            Op::Ge(b) => day.ge(b),
            Op::Between(a, b) => day.between(a, b),
            Op::Is(b) => day.eq(b).into(),
        }
    }
}

fn day_and_time(r: Reading) -> (Date, PrimitiveDateTime) {
    (r.day, r.at)
}

async fn check_case(
    db: &Db<App>,
    sensor: &str,
    readings: &[(Date, Time)],
    ops: &[Op],
    window: (PrimitiveDateTime, PrimitiveDateTime),
) -> Result<(), TestCaseError> {
    let mut stored: Vec<(Date, PrimitiveDateTime)> = Vec::new();
    for (n, &(day, time)) in readings.iter().enumerate() {
        let at = PrimitiveDateTime::new(day, time);
        if stored.contains(&(day, at)) {
            continue;
        }
        stored.push((day, at));
        let value = i64::try_from(n).unwrap_or_default();
        db.put(&Reading {
            sensor: sensor.into(),
            day,
            at,
            value,
        })
        .await
        .map_err(fail)?;
    }
    stored.sort();
    for op in ops {
        let expected: Vec<_> = stored
            .iter()
            .copied()
            .filter(|(d, _)| op.holds(*d))
            .collect();
        for (reverse, page_size) in [(false, 3), (true, 2)] {
            let mut query = db
                .query(Reading::partition(sensor))
                .sk(op.on_table())
                .page_size(page_size);
            let mut want = expected.clone();
            if reverse {
                query = query.reverse();
                want.reverse();
            }
            let got = query.all().await.map_err(fail)?.mapped(day_and_time);
            prop_assert_eq!(&got, &want, "{:?} (reversed: {})", op, reverse);
        }
    }
    // A range on the date-time leading the index sort key.
    let (from, to) = window;
    let mut expected: Vec<_> = stored
        .iter()
        .copied()
        .filter(|(_, at)| from <= *at && *at <= to)
        .collect();
    expected.sort_by_key(|&(day, at)| (at, day));
    let on_index = db
        .query(Reading::gsi1_partition(sensor))
        .sk(Reading::gsi1_sk().at().between(from, to))
        .all()
        .await
        .map_err(fail)?;
    prop_assert_eq!(
        on_index.mapped(day_and_time),
        expected,
        "index window {:?}",
        window
    );
    Ok(())
}

#[test]
fn date_ranges_return_exactly_the_reference_items() -> TestResult {
    let (runtime, db) = runtime_and_table::<App>()?;
    let sensors = AtomicUsize::new(0);
    let readings = prop::collection::vec((days(), times()), 1..16);
    let bounds = (days(), days(), days(), times(), times());
    let mut runner = runner(16);
    let outcome = runner.run(&(readings, bounds), |(readings, (a, b, c, t1, t2))| {
        let ops = [
            Op::Lt(a),
            Op::Le(a),
            Op::Gt(a),
            Op::Ge(a),
            Op::Between(a.min(b), a.max(b)),
            Op::Between(a.max(b), a.min(b)),
            Op::Is(c),
        ];
        let ends = [PrimitiveDateTime::new(a, t1), PrimitiveDateTime::new(b, t2)];
        let window = (ends[0].min(ends[1]), ends[0].max(ends[1]));
        let sensor = format!("s{}", sensors.fetch_add(1, Ordering::Relaxed));
        runtime.block_on(check_case(&db, &sensor, &readings, &ops, window))
    });
    outcome.map_err(|e| e.to_string().into())
}

#[tokio::test]
async fn chrono_date_ranges_select_whole_days() -> TestResult {
    use chrono::NaiveDate;
    let db = local::fresh_table::<App>().await?;
    let day = |d: u32| NaiveDate::from_ymd_opt(2024, 2, d).unwrap_or_default();
    let mut written = Vec::new();
    for d in [27, 28, 29] {
        for (h, nano) in [(0, 0), (12, 5), (23, 1_999_999_999)] {
            // 23:59:59 plus a nanosecond count over one second: chrono's leap second.
            let at = day(d)
                .and_hms_nano_opt(h, 59, 59, nano)
                .unwrap_or_default()
                .and_utc();
            let reading = ChronoReading {
                sensor: "c".into(),
                day: day(d),
                at,
            };
            db.put(&reading).await?;
            written.push(reading);
        }
    }
    let query = |condition| async {
        let page = db
            .query(ChronoReading::partition("c"))
            .sk(condition)
            .all()
            .await?;
        Ok::<_, Error>(page.items)
    };
    let leap_day = query(ChronoReading::sk().day().eq(day(29)).into()).await?;
    assert_eq!(leap_day, written[6..]);
    let up_to = query(ChronoReading::sk().day().le(day(28))).await?;
    assert_eq!(up_to, written[..6]);
    let after = query(ChronoReading::sk().day().gt(day(27))).await?;
    assert_eq!(after, written[3..]);
    // Within a day, the leap second sorts last.
    let late = query(
        ChronoReading::sk().day().eq(day(28)).at().ge(day(28)
            .and_hms_opt(23, 59, 59)
            .unwrap_or_default()
            .and_utc()),
    )
    .await?;
    assert_eq!(late, written[5..6]);
    Ok(())
}
