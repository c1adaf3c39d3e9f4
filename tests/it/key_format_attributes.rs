//! A key part with a `key_format` that is also stored as a plain attribute keeps one
//! format in the whole item: the attribute is read and written in the key's format, so a
//! table another program wrote (the date inside the sort key and as the `Date` attribute a
//! GSI sorts by) survives a crate write byte for byte. And a format of the user's own
//! (`key_format = Type`, a `KeyFormat` implementation) as a key part and an index key.

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::key::format::{AttributeForm, Escaping, KeyFormat};
use dynamo_model::key::KeyError;
use dynamo_model::{local, Entity, Item, Table};
use std::collections::HashMap;
use time::macros::{date, datetime};
use time::{Date, OffsetDateTime};

/// The device log: the date inside `State#Date`, and as `Date`, the sort key of an index.
#[derive(Table)]
#[dynamo(
    pk = "DeviceID",
    sk = "State#Date",
    gsi(name = "ByOperator", pk = "Operator", sk = "Date")
)]
pub struct DeviceLog;

/// `DeviceID = d#12345`, `State#Date = WARNING1#2020-04-24T14:40:00`,
/// `Date = 2020-04-24T14:40:00`, `Operator = Liz`.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = DeviceLog, identify = "keys",
         pk = "d#{device_id}", sk = "{state}#{date}",
         index(ByOperator, pk = [operator], sk = [date]))]
pub struct LogEntry {
    #[dynamo(key_format = "unpadded", key_only)]
    pub device_id: u64,
    #[dynamo(key_format = "verbatim", key_only)]
    pub state: String,
    #[dynamo(key_format = "rfc3339(0, no_z)", rename = "Date")]
    pub date: OffsetDateTime,
    #[dynamo(rename = "Operator")]
    pub operator: String,
}

fn log_row(device: &str, state: &str, at: &str, operator: &str) -> Item {
    HashMap::from([
        ("DeviceID".to_owned(), s(&format!("d#{device}"))),
        ("State#Date".to_owned(), s(&format!("{state}#{at}"))),
        ("Date".to_owned(), s(at)),
        ("Operator".to_owned(), s(operator)),
    ])
}

async fn raw_log(db: &dynamo_model::Db<DeviceLog>, pk: &str, sk: &str) -> Res<Item> {
    let key = Item::from([
        ("DeviceID".to_owned(), s(pk)),
        ("State#Date".to_owned(), s(sk)),
    ]);
    Ok(raw_find(db, key).await?.ok_or("no item")?)
}

fn liz(state: &str, at: OffsetDateTime) -> LogEntry {
    LogEntry {
        device_id: 12345,
        state: state.into(),
        date: at,
        operator: "Liz".into(),
    }
}

#[tokio::test]
async fn a_formatted_key_part_keeps_its_format_in_its_attribute() -> TestResult {
    let db = local::fresh_table::<DeviceLog>().await?;
    let rows = [
        log_row("12345", "WARNING1", "2020-04-24T14:40:00", "Liz"),
        log_row("12345", "OK", "2020-04-25T08:00:00", "Liz"),
        log_row("12345", "WARNING2", "2020-04-26T09:30:00", "Sue"),
    ];
    for row in &rows {
        put_raw(&db, row.clone()).await?;
    }

    // Read: the attribute holds the value in the declared format.
    let warning = liz("WARNING1", datetime!(2020-04-24 14:40:00 UTC));
    let got = db.get(warning.primary_key()).consistent().await?;
    assert_eq!(got, Some(warning.clone()));

    // The index sorted by `Date`: a range in the declared format.
    let since = items_of(
        db.query(LogEntry::by_operator_partition("Liz"))
            .sk(LogEntry::by_operator_sk()
                .date()
                .ge(datetime!(2020-04-25 00:00:00 UTC))),
    )
    .await?;
    assert_eq!(since, vec![liz("OK", datetime!(2020-04-25 08:00:00 UTC))]);

    // Written back by the crate: every attribute of the other program byte for byte.
    let entries = items_of(db.query(LogEntry::partition(12345u64))).await?;
    assert_eq!(entries.len(), rows.len());
    for entry in &entries {
        db.put(entry).await?;
    }
    for row in &rows {
        let pk = row["DeviceID"].as_s().map_err(|_| "pk")?;
        let sk = row["State#Date"].as_s().map_err(|_| "sk")?;
        same_layout(row, &raw_log(&db, pk, sk).await?);
    }

    // A new entry written by the crate has the other program's layout too.
    let new = liz("ALARM", datetime!(2020-04-27 10:11:12 UTC));
    db.put(&new).await?;
    let raw = raw_log(&db, "d#12345", "ALARM#2020-04-27T10:11:12").await?;
    same_layout(
        &log_row("12345", "ALARM", "2020-04-27T10:11:12", "Liz"),
        &raw,
    );
    assert_eq!(raw.get("Date"), Some(&s("2020-04-27T10:11:12")));

    // The index still sorts every row, old and new, by one format.
    let all = items_of(db.query(LogEntry::by_operator_partition("Liz"))).await?;
    let dates: Vec<OffsetDateTime> = all.iter().map(|e| e.date).collect();
    assert_eq!(
        dates,
        [
            datetime!(2020-04-24 14:40:00 UTC),
            datetime!(2020-04-25 08:00:00 UTC),
            datetime!(2020-04-27 10:11:12 UTC),
        ]
    );

    // A condition on the field compares in the declared format.
    db.put(&new)
        .condition(
            LogEntry::fields()
                .date
                .eq(datetime!(2020-04-27 10:11:12 UTC)),
        )
        .await?;
    Ok(())
}

#[tokio::test]
async fn an_attribute_in_the_types_own_encoding_still_reads() -> TestResult {
    let db = local::fresh_table::<DeviceLog>().await?;
    // The field type's own encoding, as another program writes it.
    let mut row = log_row("1", "OK", "2020-04-24T14:40:00", "Liz");
    row.insert("Date".into(), s("2020-04-24T14:40:00.000000000Z"));
    put_raw(&db, row).await?;
    let got = items_of(db.query(LogEntry::partition(1u64))).await?;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].date, datetime!(2020-04-24 14:40:00 UTC));
    // A date in the attribute that is not the key's is refused, whatever its format.
    let mut row = log_row("2", "OK", "2020-04-24T14:40:00", "Liz");
    row.insert("Date".into(), s("2020-04-24T14:41:00"));
    put_raw(&db, row).await?;
    let err = db
        .query(LogEntry::partition(2u64))
        .all()
        .await
        .expect_err("the attribute disagrees with the key");
    assert!(err.to_string().contains("State#Date"), "{err}");
    Ok(())
}

// ---------------------------------------------------------------- a format of one's own

/// Days the other program writes as `YYYYMMDD`, in keys and as a number attribute.
pub struct CompactDay;

impl KeyFormat<Date> for CompactDay {
    const NAME: &'static str = "compact day";
    const ESCAPING: Escaping = Escaping::Fixed;
    const ORDERED: bool = true;
    const ATTRIBUTE: AttributeForm = AttributeForm::Number;

    fn encode(value: &Date, out: &mut String) -> Result<(), KeyError> {
        let year = value.year();
        if !(1000..=9999).contains(&year) {
            return Err(KeyError::OutOfRange {
                type_name: Self::NAME,
                value: value.to_string(),
                reason: "years 1000 to 9999 only",
            });
        }
        out.push_str(&format!(
            "{year:04}{:02}{:02}",
            u8::from(value.month()),
            value.day()
        ));
        Ok(())
    }

    fn decode(component: &str) -> Result<Date, KeyError> {
        let malformed = |reason| KeyError::Malformed {
            type_name: Self::NAME,
            input: component.to_owned(),
            reason,
        };
        if component.len() != 8 || !component.bytes().all(|b| b.is_ascii_digit()) {
            return Err(malformed("expected eight digits"));
        }
        let number = |range: std::ops::Range<usize>| {
            component
                .get(range)
                .and_then(|t| t.parse::<i32>().ok())
                .ok_or(malformed("expected digits"))
        };
        let month = u8::try_from(number(4..6)?)
            .ok()
            .and_then(|m| time::Month::try_from(m).ok())
            .ok_or(malformed("no such month"))?;
        let day = u8::try_from(number(6..8)?).map_err(|_| malformed("no such day"))?;
        Date::from_calendar_date(number(0..4)?, month, day).map_err(|_| malformed("no such day"))
    }
}

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
pub struct Meters;

/// `PK = m#7`, `SK = 20200424`, `GSI1PK = DAY#20200424`, `GSI1SK = m#7`, `Day = 20200424`.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Meters, identify = "keys", pk = "m#{meter}", sk = "{day}",
         index(GSI1, pk = "DAY#{day}", sk = "m#{meter}"))]
pub struct MeterDay {
    #[dynamo(key_format = "unpadded", key_only)]
    pub meter: u32,
    #[dynamo(key_format = CompactDay, rename = "Day")]
    pub day: Date,
    #[dynamo(rename = "Kwh")]
    pub kwh: u32,
}

#[tokio::test]
async fn a_users_own_format_as_a_key_part_and_an_index_key() -> TestResult {
    let db = local::fresh_table::<Meters>().await?;
    let raw = |meter: u32, day: &str, kwh: u64| -> Item {
        HashMap::from([
            ("PK".to_owned(), s(&format!("m#{meter}"))),
            ("SK".to_owned(), s(day)),
            ("GSI1PK".to_owned(), s(&format!("DAY#{day}"))),
            ("GSI1SK".to_owned(), s(&format!("m#{meter}"))),
            ("Day".to_owned(), AttributeValue::N(day.to_owned())),
            ("Kwh".to_owned(), n(kwh)),
        ])
    };
    let rows = [
        raw(7, "20200424", 12),
        raw(7, "20200425", 13),
        raw(8, "20200424", 4),
    ];
    for row in &rows {
        put_raw(&db, row.clone()).await?;
    }
    let day = |meter, day, kwh| MeterDay { meter, day, kwh };

    // A key part: get, and a range over the sort key in the format's order.
    let got = db
        .get(MeterDay::key(MeterDayKey {
            meter: 7u32,
            day: date!(2020 - 04 - 24),
        }))
        .await?;
    assert_eq!(got, Some(day(7, date!(2020 - 04 - 24), 12)));
    let later = items_of(
        db.query(MeterDay::partition(7u32))
            .sk(MeterDay::sk().day().gt(date!(2020 - 04 - 24))),
    )
    .await?;
    assert_eq!(later, vec![day(7, date!(2020 - 04 - 25), 13)]);

    // An index key: every meter of a day.
    let of_day = items_of(db.query(MeterDay::gsi1_partition(date!(2020 - 04 - 24)))).await?;
    assert_eq!(
        of_day,
        vec![
            day(7, date!(2020 - 04 - 24), 12),
            day(8, date!(2020 - 04 - 24), 4)
        ]
    );

    // Written back and written new: the other program's layout, the day a number.
    for entry in of_day {
        db.put(&entry).await?;
    }
    let now = raw_table(&db).await?;
    for row in &rows {
        let key = (
            row["PK"].as_s().map_err(|_| "pk")?.clone(),
            row["SK"].as_s().map_err(|_| "sk")?.clone(),
        );
        same_layout(row, now.get(&key).ok_or("row gone")?);
    }
    db.put(&day(9, date!(2021 - 12 - 31), 1)).await?;
    let now = raw_table(&db).await?;
    same_layout(
        &raw(9, "20211231", 1),
        now.get(&("m#9".to_owned(), "20211231".to_owned()))
            .ok_or("not written")?,
    );

    // What the format cannot hold is refused before sending.
    let err = db
        .put(&day(9, date!(0999 - 01 - 01), 1))
        .await
        .expect_err("year out of the format's range");
    assert_refused(&err, dynamo_model::ValidationReason::KeyEncoding);
    Ok(())
}
