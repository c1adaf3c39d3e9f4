//! Tracing spans (`dynamo_model::trace`), captured per test thread by a subscriber of
//! the tests' own: operation spans with OpenTelemetry's field names, request
//! spans inside batches (with retries), transactions and queries, the error type, and no
//! attribute value anywhere; keys only when the `Db` opts in.

use crate::common::*;
use crate::spans::{Captured, Scope};
use dynamo_model::local;
use dynamo_model::local::faults::{FaultKind, Faults};

const MARKER: &str = "Zq7-SECRET-VALUE";

fn field<'a>(span: &'a Captured, name: &str) -> &'a str {
    span.fields
        .get(name)
        .map(String::as_str)
        .unwrap_or("<absent>")
}

fn number(span: &Captured, name: &str) -> u64 {
    span.fields
        .get(name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{name} in {span:?}"))
}

#[tokio::test]
async fn operations_and_requests_have_spans_with_no_values() -> TestResult {
    let scope = Scope::begin();
    let capture = &scope.capture;
    let db = local::fresh_table::<App>().await?;
    let table = db.table_name().to_owned();

    // A put whose key and field both hold the marker.
    let mut user = User::sample(&format!("u-{MARKER}"));
    user.display_name = MARKER.to_owned();
    db.put(&user).await?;
    let puts = capture.operations("PutItem");
    let (_, put) = puts.first().ok_or("a PutItem span")?;
    assert_eq!(field(put, "db.system.name"), "aws.dynamodb");
    assert_eq!(field(put, "aws.dynamodb.table_names"), table);
    assert_eq!(field(put, "dynamo_model.entity"), "User");
    assert_eq!(field(put, "dynamo_model.items"), "1");
    assert_eq!(
        field(put, "dynamo_model.key"),
        "<absent>",
        "keys only when opted in"
    );

    // A failed conditional put: the error type.
    let err = db.put(&user).if_absent().await.err().ok_or("exists")?;
    assert!(matches!(err, dynamo_model::Error::ConditionFailed { .. }));
    let puts = capture.operations("PutItem");
    assert_eq!(field(&puts[1].1, "error.type"), "ConditionFailed");

    // A query: counts, capacity, its request span.
    for i in 0..3 {
        db.put(&User::sample(&format!("q-{i}"))).await?;
    }
    let page = db.query(User::partition("q-1")).limit(5).all().await?;
    assert_eq!(page.items.len(), 1);
    let queries = capture.operations("Query");
    let (query_id, query) = queries.first().ok_or("a Query span")?;
    assert_eq!(field(query, "aws.dynamodb.count"), "1");
    assert_eq!(field(query, "aws.dynamodb.scanned_count"), "1");
    assert_eq!(field(query, "dynamo_model.limit"), "5");
    assert_eq!(field(query, "aws.dynamodb.scan_forward"), "true");
    assert_eq!(field(query, "aws.dynamodb.consistent_read"), "false");
    assert!(field(query, "aws.dynamodb.consumed_capacity").parse::<f64>()? > 0.0);
    let requests = capture.children(*query_id);
    assert_eq!(
        requests.len(),
        number(query, "dynamo_model.requests") as usize
    );
    assert!(requests
        .iter()
        .all(|r| r.name == "dynamodb.request" && field(r, "db.operation.name") == "Query"));
    // Each request records the `Limit` it sent.
    let sent = db.query(User::partition("q-1")).limit(5).params()?.limit;
    let recorded = requests[0]
        .fields
        .get("aws.dynamodb.limit")
        .and_then(|v| v.parse::<i32>().ok());
    assert_eq!(recorded, sent, "{:?}", requests[0]);

    // A batch write whose requests come back partly unprocessed: retried, each request
    // its own span.
    let faults = Faults::new(11).rate(0.5).kinds([FaultKind::PartialBatch]);
    let flaky = faulty(&db, &faults).await?;
    let users: Vec<User> = (0..60)
        .map(|i| {
            let mut u = User::sample(&format!("b-{i}"));
            u.display_name = MARKER.to_owned();
            u
        })
        .collect();
    let out = flaky.batch_write().puts(&users).await?;
    assert_eq!(out.written, 60);
    assert!(
        faults.stats().partial_batches > 0,
        "nothing was left unprocessed"
    );
    let batches = capture.operations("BatchWriteItem");
    let (batch_id, batch) = batches.first().ok_or("a BatchWriteItem span")?;
    assert_eq!(field(batch, "dynamo_model.items"), "60");
    let retries = number(batch, "dynamo_model.retries");
    assert!(retries > 0, "{batch:?}");
    let requests = capture.children(*batch_id);
    assert_eq!(
        requests.len() as u64,
        number(batch, "dynamo_model.requests")
    );
    assert_eq!(
        requests.len() as u64,
        3 + retries,
        "three chunks of 25 and the retries"
    );
    assert!(requests
        .iter()
        .any(|r| number(r, "dynamo_model.unprocessed") > 0));
    assert!(requests
        .iter()
        .any(|r| field(r, "dynamo_model.attempt") == "2"));

    // A transaction: one request.
    db.transact_write()
        .put(db.put(&User::sample("t-1")))
        .delete(db.delete(User::key("q-0")))
        .await?;
    let transactions = capture.operations("TransactWriteItems");
    let (tx_id, tx) = transactions.first().ok_or("a TransactWriteItems span")?;
    assert_eq!(field(tx, "dynamo_model.items"), "2");
    assert_eq!(field(tx, "dynamo_model.retries"), "0");
    assert_eq!(capture.children(*tx_id).len(), 1);

    // No attribute value and no key anywhere.
    let leaked: Vec<String> = capture
        .everything()
        .into_iter()
        .filter(|v| v.contains(MARKER))
        .collect();
    assert!(leaked.is_empty(), "recorded: {leaked:?}");
    Ok(())
}

#[tokio::test]
async fn keys_are_recorded_only_when_opted_in() -> TestResult {
    let scope = Scope::begin();
    let capture = &scope.capture;
    let table = local::fresh_table::<App>().await?;
    let db = (*table).clone().trace_keys(true);
    let mut user = User::sample(&format!("u-{MARKER}"));
    user.display_name = format!("name {MARKER}");
    db.put(&user).await?;
    db.get(User::key(user.user_id.as_str())).await?;
    let puts = capture.operations("PutItem");
    let gets = capture.operations("GetItem");
    for span in [&puts[0].1, &gets[0].1] {
        let key = field(span, "dynamo_model.key");
        assert!(key.contains(MARKER) && key.contains("USER#"), "{span:?}");
    }
    // The key, never the attribute values.
    let values: Vec<String> = capture
        .everything()
        .into_iter()
        .filter(|v| v.contains("name "))
        .collect();
    assert!(values.is_empty(), "{values:?}");
    Ok(())
}
