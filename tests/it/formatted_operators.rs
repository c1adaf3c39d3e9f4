//! A `String` field with a `key_format` keeps every operator a string has and takes the
//! plain value: `begins_with` and `contains` in key conditions and filters, `&str` in `eq`,
//! `between` and updates ("logs of an operator for one day": `begins_with` on a date held
//! verbatim).

use crate::common::*;
use crate::key_format_attributes::DeviceLog;
use dynamo_model::{local, Entity};

/// `DeviceID = d#d1`, `State#Date = WARNING1#2020-04-24T14:40:00`, `Date` the same date,
/// `Operator = Liz`: the device log's layout, with the date a plain string.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = DeviceLog, pk = "d#{device_id}", sk = "{state}#{date}",
         index(ByOperator, pk = [operator], sk = [date]))]
pub struct StateLog {
    pub device_id: String,
    #[dynamo(key_format = "verbatim")]
    pub state: String,
    #[dynamo(key_format = "verbatim", rename = "Date")]
    pub date: String,
    #[dynamo(rename = "Operator")]
    pub operator: String,
    pub note: String,
}

fn log(device: &str, state: &str, date: &str, operator: &str) -> StateLog {
    StateLog {
        device_id: device.into(),
        state: state.into(),
        date: date.into(),
        operator: operator.into(),
        note: String::new(),
    }
}

fn states(logs: &[StateLog]) -> Vec<&str> {
    logs.iter().map(|l| l.state.as_str()).collect()
}

async fn device_logs() -> Res<local::TempTable<DeviceLog>> {
    let db = local::fresh_table::<DeviceLog>().await?;
    for entry in [
        log("d1", "WARNING1", "2020-04-24T14:40:00", "Liz"),
        log("d1", "OK", "2020-04-25T08:00:00", "Liz"),
        log("d2", "WARNING2", "2020-04-24T09:30:00", "Liz"),
        log("d2", "OK", "2020-04-24T10:00:00", "Sue"),
    ] {
        db.put(&entry).await?;
    }
    Ok(db)
}

#[tokio::test]
async fn a_formatted_string_key_attribute_takes_begins_with_and_plain_str_in_key_conditions(
) -> TestResult {
    let db = device_logs().await?;
    let liz = || db.query(StateLog::by_operator_partition("Liz"));
    // The logs of an operator for one day.
    let day = liz()
        .sk(StateLog::by_operator_sk().date().begins_with("2020-04-24"))
        .all()
        .await?;
    assert_eq!(states(&day.items), ["WARNING2", "WARNING1"]);
    let range = liz()
        .sk(StateLog::by_operator_sk()
            .date()
            .between("2020-04-24T10:00:00", "2020-04-25T23:00:00"))
        .all()
        .await?;
    assert_eq!(states(&range.items), ["WARNING1", "OK"]);
    let exact = liz()
        .sk(StateLog::by_operator_sk().date().eq("2020-04-25T08:00:00"))
        .all()
        .await?;
    assert_eq!(states(&exact.items), ["OK"]);
    Ok(())
}

#[tokio::test]
async fn a_formatted_string_field_takes_every_string_operator_in_filters_and_updates() -> TestResult
{
    let db = device_logs().await?;
    let f = StateLog::fields();
    let warnings_of_the_24th = db
        .query(StateLog::partition("d1"))
        .filter(
            f.date
                .begins_with("2020-04-24")
                .and(f.state.contains("WARN")),
        )
        .all()
        .await?;
    assert_eq!(states(&warnings_of_the_24th.items), ["WARNING1"]);
    let by_value = db
        .query(StateLog::partition("d1"))
        .filter(
            f.state
                .eq("OK")
                .or(f.state.between("W", "WARNING1").and(f.state.ne("OK"))),
        )
        .all()
        .await?;
    assert_eq!(states(&by_value.items), ["OK", "WARNING1"]);

    // An update's condition takes the plain value too.
    let key = log("d1", "OK", "2020-04-25T08:00:00", "Liz").primary_key();
    db.update(key.clone())
        .set(f.note, "checked")
        .condition(
            f.date
                .eq("2020-04-25T08:00:00")
                .and(f.state.begins_with("O")),
        )
        .await?;
    let updated = db.get(key).await?.ok_or("the log is there")?;
    assert_eq!(updated.note, "checked");
    Ok(())
}
