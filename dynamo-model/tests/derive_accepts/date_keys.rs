//! `time::Date`, `time::PrimitiveDateTime` and chrono's date types as key fields (table
//! and index templates, key constructors, sort-key chains) and as plain attributes.

use dynamo_model::{Entity, Table};
use time::macros::{date, datetime};
use time::{Date, PrimitiveDateTime};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct App;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "DAY#{day}", sk = "AT#{at}#{n}",
         index(GSI1, pk = "DUE#{due}", sk = "{day}"))]
struct Reading {
    day: Date,
    at: PrimitiveDateTime,
    n: u32,
    due: Option<Date>,
    noted: Option<PrimitiveDateTime>,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "CDAY#{day}", sk = "AT#{at}#{instant}")]
struct ChronoReading {
    day: chrono::NaiveDate,
    at: chrono::NaiveDateTime,
    instant: chrono::DateTime<chrono::Utc>,
    noted: Option<chrono::NaiveDate>,
}

pub fn run() {
    let reading = Reading {
        day: date!(2014 - 07 - 09),
        at: datetime!(2014-07-09 10:11:12.5),
        n: 3,
        due: Some(date!(2014 - 10 - 03)),
        noted: Some(datetime!(2014-07-10 0:00)),
    };
    let key = Reading::key(ReadingKey {
        day: reading.day,
        at: reading.at,
        n: 3u32,
    });
    let raw = key.raw().unwrap();
    assert_eq!(raw, reading.primary_key().raw().unwrap());
    assert_eq!(raw.pk, "DAY#2014-07-09");
    assert_eq!(
        raw.sk.as_deref(),
        Some("AT#2014-07-09T10:11:12.500000000#0000000003")
    );
    let item = reading.to_item().unwrap();
    assert_eq!(item["GSI1PK"].as_s().unwrap(), "DUE#2014-10-03");
    assert_eq!(item["GSI1SK"].as_s().unwrap(), "2014-07-09");
    assert_eq!(
        item["noted"].as_s().unwrap(),
        "2014-07-10T00:00:00.000000000"
    );
    assert_eq!(Reading::from_item(item).unwrap(), reading);
    // A range on the date-time component, with a component after it.
    let range = Reading::sk().at().between(
        datetime!(2014-07-09 0:00),
        datetime!(2014-07-09 23:59:59.999_999_999),
    );
    assert!(format!("{range:?}").contains("AT#2014-07-09T00:00:00.000000000#"));
    let _ = Reading::gsi1_sk().day().ge(date!(2014 - 01 - 01));

    let day = chrono::NaiveDate::from_ymd_opt(2014, 7, 9).unwrap();
    let at = day.and_hms_nano_opt(23, 59, 59, 1_250_000_000).unwrap(); // a leap second
    let chrono_reading = ChronoReading {
        day,
        at,
        instant: at.and_utc(),
        noted: None,
    };
    let raw = chrono_reading.primary_key().into_raw().unwrap();
    assert_eq!(raw.pk, "CDAY#2014-07-09");
    assert_eq!(
        raw.sk.as_deref(),
        Some("AT#2014-07-09T23:59:60.250000000#2014-07-09T23:59:60.250000000Z")
    );
    let item = chrono_reading.to_item().unwrap();
    assert_eq!(ChronoReading::from_item(item).unwrap(), chrono_reading);
}
