//! Every read of AWS's number-based history layout (`sk = ""`, the latest copy under `v0`
//! holding `Latest`, revision `k` under `v{k}` without a number) on rows another program
//! wrote with the SDK exactly as AWS's sample application writes them: queries, scans,
//! gets and the history reads see the latest copy and only it; the history sees the
//! revisions and only them.

use crate::common::*;
use crate::history_adopt::{app_row, machine, pk, Equipment, Machine};
use dynamo_model::local;

/// Machine `1` at revision 12 (`v10`, `v11`, `v12` sort before `v2` as text) and machine
/// `2` at revision 1, as the application wrote them.
async fn app_rows(db: &dynamo_model::Db<Equipment>) -> TestResult {
    put_raw(db, app_row("1", 0, "s12", Some(12))).await?;
    for k in 1..=12 {
        put_raw(db, app_row("1", k, &format!("s{k}"), None)).await?;
    }
    put_raw(db, app_row("2", 0, "t1", Some(1))).await?;
    put_raw(db, app_row("2", 1, "t1", None)).await?;
    Ok(())
}

#[tokio::test]
async fn a_partition_query_of_the_aws_layout_reads_the_latest_copy() -> TestResult {
    let db = local::fresh_table::<Equipment>().await?;
    app_rows(&db).await?;

    // The request names the latest copy: `SK = v0`, not "no item can match".
    let params = db.query(Machine::partition("1")).params()?;
    let values = params
        .expression_attribute_values()
        .cloned()
        .unwrap_or_default();
    let sent: Vec<String> = values
        .values()
        .filter_map(|v| v.as_s().ok().cloned())
        .collect();
    assert!(sent.contains(&"v0".to_owned()), "{params:?}");
    assert!(sent.contains(&pk("1")), "{params:?}");

    for consistent in [false, true] {
        let mut query = db.query(Machine::partition("1"));
        if consistent {
            query = query.consistent();
        }
        assert_eq!(query.all().await?.items, [machine("1", "s12", 12)]);
    }
    assert_eq!(
        db.query(Machine::partition("2"))
            .reverse()
            .all()
            .await?
            .items,
        [machine("2", "t1", 1)]
    );
    assert_eq!(
        db.query(Machine::partition("1")).one().await?,
        Some(machine("1", "s12", 12))
    );
    assert!(db
        .query(Machine::partition("3"))
        .all()
        .await?
        .items
        .is_empty());
    Ok(())
}

#[tokio::test]
async fn scans_gets_and_history_reads_of_the_aws_layout_tell_the_latest_copy_from_revisions(
) -> TestResult {
    let db = local::fresh_table::<Equipment>().await?;
    app_rows(&db).await?;

    // A scan meets every revision and keeps only the latest copies.
    let mut scanned = db.scan::<Machine>().consistent().all().await?.items;
    scanned.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(scanned, [machine("1", "s12", 12), machine("2", "t1", 1)]);

    // Gets, one and in a batch.
    assert_eq!(
        db.get(Machine::key("1")).consistent().send().await?,
        Some(machine("1", "s12", 12))
    );
    assert_eq!(db.get(Machine::key("3")).send().await?, None);
    let mut batch = db
        .batch_get::<Machine>()
        .keys([Machine::key("1"), Machine::key("2"), Machine::key("3")])
        .consistent()
        .send()
        .await?
        .items;
    batch.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(batch, [machine("1", "s12", 12), machine("2", "t1", 1)]);

    // The history: the latest copy, each revision with its key's number, all of them in
    // revision order.
    let history = db.history::<Machine>();
    assert_eq!(
        history.latest(Machine::key("2")).await?,
        Some(machine("2", "t1", 1))
    );
    let seven = history
        .revision(Machine::key("1"), 7)
        .await?
        .ok_or("revision 7")?;
    assert_eq!((seven.revision, seven.value), (7, machine("1", "s7", 7)));
    assert!(history.revision(Machine::key("2"), 2).await?.is_none());
    let all = all_revisions(&history, Machine::key("1")).await?;
    assert_eq!(revision_numbers(&all), (1..=12).collect::<Vec<_>>());
    let two = history.revisions(Machine::key("2")).all().await?.items;
    assert_eq!(two.len(), 1);
    assert_eq!(two[0].value, machine("2", "t1", 1));
    Ok(())
}
