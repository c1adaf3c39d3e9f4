//! History written with nothing the published design does not have: AWS's number-based
//! version-control layout (`history(layout = "aws")`: no revision time) on an entity that
//! writes neither the entity-type attribute nor the write token. Every item the crate
//! writes equals the sample application's row byte for byte, whether the crate starts the
//! history or continues one the application started, and a history write whose response
//! is lost is still applied exactly once.

use crate::common::*;
use crate::history_adopt::app_row;
use dynamo_model::{local, Db, Entity, Item, Table};

/// The sample's table, as `history_adopt::Equipment`, for an entity of its own.
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
pub struct ExactEquipment;

/// The sample's equipment written as the sample writes it: no `_type`, no `_wt`, no `_vt`.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = ExactEquipment, identify = "keys", store_key_fields = false,
         write_type = false, write_token = false,
         pk = "Equipment#{id}", history(layout = "aws"))]
pub struct ExactMachine {
    pub id: String,
    #[dynamo(rename = "Name")]
    pub name: String,
    #[dynamo(rename = "State")]
    pub state: String,
    #[dynamo(version, rename = "Latest")]
    pub latest: u64,
}

fn machine(id: &str, state: &str) -> ExactMachine {
    ExactMachine {
        id: id.into(),
        name: "Press".into(),
        state: state.into(),
        latest: 0,
    }
}

/// The rows the sample holds for machine `id` after it wrote `states` in order: `v0` with
/// the last state and `Latest`, `v{k}` with the k-th state and nothing else.
fn sample_rows(id: &str, states: &[&str]) -> Vec<Item> {
    let last = states.len() as u64;
    let mut rows = vec![app_row(id, 0, states[states.len() - 1], Some(last))];
    for (k, state) in states.iter().enumerate() {
        rows.push(app_row(id, k as u64 + 1, state, None));
    }
    rows
}

/// Every stored row of the table, in key order.
async fn stored(db: &Db<ExactEquipment>) -> Res<Vec<Item>> {
    raw_items(db).await
}

/// `rows` in key order, as [`stored`] returns them.
fn sorted(mut rows: Vec<Item>) -> Vec<Item> {
    let key = |i: &Item| {
        ["PK", "SK"].map(|k| {
            i.get(k)
                .and_then(|v| v.as_s().ok())
                .cloned()
                .unwrap_or_default()
        })
    };
    rows.sort_by_key(key);
    rows
}

#[tokio::test]
async fn history_written_by_the_crate_equals_the_samples_rows_byte_for_byte() -> TestResult {
    let db = local::fresh_table::<ExactEquipment>().await?;
    let versions = db.history::<ExactMachine>();
    assert_eq!(versions.create(&machine("1", "s1")).await?, 1);
    for (k, state) in ["s2", "s3"].into_iter().enumerate() {
        let written = versions
            .revise(ExactMachine::key("1"), move |m| m.state = state.to_owned())
            .await?;
        assert_eq!(written.revision, k as u64 + 2);
    }
    assert_eq!(
        stored(&db).await?,
        sorted(sample_rows("1", &["s1", "s2", "s3"]))
    );

    // Read back: the history holds every revision, with no time recorded.
    let history = versions
        .revisions(ExactMachine::key("1"))
        .all()
        .await?
        .items;
    let states: Vec<(u64, &str)> = history
        .iter()
        .map(|r| (r.revision, r.value.state.as_str()))
        .collect();
    assert_eq!(states, [(1, "s1"), (2, "s2"), (3, "s3")]);
    assert!(
        history.iter().all(|r| r.revised_at.is_none()),
        "{history:?}"
    );
    Ok(())
}

#[tokio::test]
async fn history_the_sample_started_is_continued_byte_for_byte() -> TestResult {
    let db = local::fresh_table::<ExactEquipment>().await?;
    put_raw_rows(&db, sample_rows("2", &["a", "b"])).await?;
    let versions = db.history::<ExactMachine>();
    let written = versions
        .revise(ExactMachine::key("2"), |m| m.state = "c".to_owned())
        .await?;
    assert_eq!(written.revision, 3);
    assert_eq!(
        stored(&db).await?,
        sorted(sample_rows("2", &["a", "b", "c"]))
    );
    Ok(())
}

/// Without a write token a lost response of the history's transaction is still applied
/// once: its retries reuse the transaction's ClientRequestToken.
#[tokio::test]
async fn a_lost_history_write_without_token_is_applied_exactly_once() -> TestResult {
    let db = local::fresh_table::<ExactEquipment>().await?;
    let (lossy, faults) = lossy(&db, 36_005, 0.5, "TransactWriteItems", "history-no-token").await?;
    let versions = lossy.history::<ExactMachine>();
    let mut states = vec!["r1".to_owned()];
    assert_eq!(versions.create(&machine("3", "r1")).await?, 1);
    for k in 2..=12u64 {
        let state = format!("r{k}");
        states.push(state.clone());
        let written = versions
            .revise(ExactMachine::key("3"), move |m| m.state = state.clone())
            .await?;
        assert_eq!(written.revision, k);
    }
    assert!(
        faults.stats().server_errors_after_apply > 0,
        "{:?}",
        faults.stats()
    );
    let states: Vec<&str> = states.iter().map(String::as_str).collect();
    assert_eq!(stored(&db).await?, sorted(sample_rows("3", &states)));
    Ok(())
}
