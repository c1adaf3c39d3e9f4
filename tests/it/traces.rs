//! Tracing spans (`dynamo_model::trace`), captured per test thread by a subscriber of
//! the tests' own: operation spans with OpenTelemetry's field names, request
//! spans inside batches (with retries), transactions and queries, the error type, and no
//! attribute value anywhere; keys only when the `Db` opts in. Also the spans of streams
//! (dropped midway, failing, scatter-gather), of a migration's requests, of cache hits
//! and misses and of history reads and writes.

use crate::cache::hot_cached;
use crate::common::mixed::{hot, Doc, Hot, Mixed};
use crate::common::spans::{capture, captured, field, id_named, number, Capture, Captured, Scope};
use crate::common::*;
use crate::migrate_update::{member_item, with_bags, Bag, Member, Shops};
use dynamo_model::local;
use dynamo_model::local::faults::{FaultKind, Faults};
use futures_util::{StreamExt, TryStreamExt};
use std::collections::BTreeSet;
use tracing::Instrument;

const MARKER: &str = "Zq7-SECRET-VALUE";

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
    let leaked = capture.containing(MARKER);
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
    let values = capture.containing("name ");
    assert!(values.is_empty(), "{values:?}");
    Ok(())
}

// ---------------------------------------------------- no value and no key on any path

const SECRET: &str = "Qx9-SECRET-IN-TRACES";

fn assert_no_secret(cap: &Capture, what: &str) {
    let leaked = cap.containing(SECRET);
    assert!(leaked.is_empty(), "{what}: recorded {leaked:?}");
}

/// What a batch get of every user of `users` reads through `db`.
async fn batch_get_all(db: &dynamo_model::Db<App>, users: &[User]) -> Res<Vec<User>> {
    let got = db
        .batch_get::<User>()
        .keys(users.iter().map(|u| User::key(u.user_id.as_str())))
        .send()
        .await?;
    Ok(got.items)
}

fn secret_user(id: &str) -> User {
    let mut user = User::sample(&format!("{id}-{SECRET}"));
    user.display_name = format!("name {SECRET}");
    user.email = Some(format!("{SECRET}@example.com"));
    user.labels = vec![SECRET.to_owned()];
    user
}

/// Secret values (and keys, without `trace_keys`) on every path: single-item reads and
/// writes with conditions that fail, updates with values, queries and scans with filters,
/// scatter-gather, batches with unprocessed items, transactions cancelled with the
/// current item returned, transact gets. Nothing of them in any span or event.
#[tokio::test]
async fn no_value_and_no_key_leaks_on_any_path() -> TestResult {
    let (cap, _guard) = capture();
    let db = local::fresh_table::<App>().await?;
    let f = User::fields();
    let users: Vec<User> = (0..30).map(|i| secret_user(&format!("u{i}"))).collect();
    for u in &users[..3] {
        db.put(u).await?;
    }
    let key = || User::key(users[0].user_id.as_str());
    assert!(db.get(key()).await?.is_some());
    assert!(db.get(key()).consistent().await?.is_some());
    // A conditional put that fails, a conditional update that fails with secret values.
    assert!(db.put(&users[0]).if_absent().await.is_err());
    let failed = db
        .update(key())
        .set(f.display_name, format!("new {SECRET}"))
        .condition(f.display_name.eq(format!("other {SECRET}")))
        .await;
    assert!(failed.is_err());
    db.update(key())
        .set(f.display_name, format!("new {SECRET}"))
        .add(f.login_count, 1)
        .await?;
    // Query and scan with filters on secret values.
    let page = db
        .query(User::partition(users[1].user_id.as_str()))
        .filter(f.display_name.eq(format!("name {SECRET}")))
        .all()
        .await?;
    assert_eq!(page.items.len(), 1);
    let page = db
        .scan::<User>()
        .filter(f.display_name.eq(format!("name {SECRET}")))
        .all()
        .await?;
    assert_eq!(page.items.len(), 2);
    // Scatter-gather over secret partitions.
    let page = db
        .scatter_query(
            users[..3]
                .iter()
                .map(|u| User::partition(u.user_id.as_str())),
        )
        .all()
        .await?;
    assert_eq!(page.items.len(), 3);
    // Batches, partly unprocessed and retried.
    let faults = Faults::new(14).rate(0.6).kinds([FaultKind::PartialBatch]);
    let flaky = faulty(&db, &faults).await?;
    let out = flaky.batch_write().puts(&users).await?;
    assert_eq!(out.written, 30);
    assert_eq!(batch_get_all(&flaky, &users).await?.len(), 30);
    // A transaction cancelled by a condition, returning the current item.
    let err = db
        .transact_write()
        .put(db.put(&users[0]).if_absent())
        .update(
            db.update(User::key(users[1].user_id.as_str()))
                .set(f.display_name, SECRET),
        )
        .await
        .err()
        .ok_or("cancelled")?;
    assert!(matches!(
        err,
        dynamo_model::Error::TransactionCanceled { .. }
    ));
    let read = db
        .transact_get::<User>()
        .key(key())
        .key(User::key(users[2].user_id.as_str()))
        .await?;
    assert_eq!(read.len(), 2);
    db.delete(key()).await?;
    assert!(!cap.operations("GetItem").is_empty());
    assert!(!cap.operations("BatchGetItem").is_empty());
    assert_no_secret(&cap, "all paths");
    Ok(())
}

/// With `trace_keys` the key is recorded on single-item operations — and still never a
/// value, on a failed conditional update whose condition and new value hold the secret.
#[tokio::test]
async fn trace_keys_records_keys_but_never_values() -> TestResult {
    let (cap, _guard) = capture();
    let table = local::fresh_table::<App>().await?;
    let db = (*table).clone().trace_keys(true);
    let f = User::fields();
    let mut user = User::sample("k-1");
    user.display_name = SECRET.to_owned();
    db.put(&user).await?;
    let _ = db
        .update(User::key("k-1"))
        .set(f.display_name, format!("x{SECRET}"))
        .condition(f.display_name.eq(format!("y{SECRET}")))
        .await;
    db.delete(User::key("k-1")).await?;
    for op in ["PutItem", "UpdateItem", "DeleteItem"] {
        let spans = cap.operations(op);
        let (_, span) = spans.first().ok_or(op)?;
        assert!(
            field(span, "dynamo_model.key").contains("USER#k-1"),
            "{span:?}"
        );
    }
    assert_no_secret(&cap, "trace_keys");
    Ok(())
}

// ------------------------------------ operation and request spans of reads and writes

/// Every operation has its operation span: `query(..).one()` is a `Query` like `all()`,
/// and its request span is a child of it.
#[tokio::test]
async fn query_one_has_an_operation_span() -> TestResult {
    let (cap, _guard, db) = captured(table_with([User::sample("one-1")])).await?;
    let found = db.query(User::partition("one-1")).one().await?;
    assert!(found.is_some());
    let requests = cap.requests("Query");
    assert!(!requests.is_empty(), "a request was sent");
    let queries = cap.operations("Query");
    assert_eq!(
        queries.len(),
        1,
        "one Query operation span: {:?}",
        cap.spans()
    );
    for (_, request) in &requests {
        assert_eq!(request.parent, Some(queries[0].0), "{request:?}");
    }
    Ok(())
}

/// Streams (`query(..).stream()`, `scan().stream()`) are operations too: their requests
/// belong to an operation span.
#[tokio::test]
async fn streamed_reads_have_operation_spans() -> TestResult {
    let (cap, _guard, db) = captured(table_with([User::sample("st-1")])).await?;
    let items: Vec<User> = db
        .query(User::partition("st-1"))
        .stream()
        .try_collect()
        .await?;
    assert_eq!(items.len(), 1);
    let items: Vec<User> = db.scan::<User>().stream().try_collect().await?;
    assert_eq!(items.len(), 1);
    for op in ["Query", "Scan"] {
        let requests = cap.requests(op);
        assert!(!requests.is_empty(), "{op} requests were sent");
        let operations = cap.operations(op);
        assert!(
            !operations.is_empty(),
            "no {op} operation span; orphan requests: {requests:?}"
        );
        let ids: BTreeSet<u64> = operations.iter().map(|(id, _)| *id).collect();
        for (_, r) in &requests {
            assert!(r.parent.is_some_and(|p| ids.contains(&p)), "{r:?}");
        }
    }
    Ok(())
}

/// A fresh table holding users `sc-0` and `sc-1`, with the emails `a@x` and `b@x`.
async fn two_users_by_email() -> Res<local::TempTable<App>> {
    table_with(["a@x", "b@x"].iter().enumerate().map(|(i, email)| {
        let mut u = User::sample(&format!("sc-{i}"));
        u.email = Some((*email).to_owned());
        u
    }))
    .await
}

/// Reads both users of [`two_users_by_email`] by one scatter-gather query of `partitions`
/// (the capture cleared first), and returns the Query operation spans it left.
async fn scatter_both<K: dynamo_model::KeySpace, P: dynamo_model::read::IntoPartition<User, K>>(
    cap: &Capture,
    db: &dynamo_model::Db<App>,
    partitions: [P; 2],
) -> Res<Vec<(u64, Captured)>> {
    cap.clear();
    let page = db.scatter_query(partitions).all().await?;
    assert_eq!(page.items.len(), 2);
    Ok(cap.operations("Query"))
}

/// A scatter-gather read sends a request per partition, each a child of the operation
/// span (as a query's, a batch's and a transaction's requests are).
#[tokio::test]
async fn scatter_requests_are_children_of_the_operation() -> TestResult {
    let (cap, _guard, db) = captured(two_users_by_email()).await?;
    // Control: a query's request is a child of its operation span in this capture.
    db.query(User::partition("sc-0")).all().await?;
    let (id, _) = cap.operations("Query").pop().ok_or("a Query span")?;
    assert_eq!(cap.children(id).len(), 1);
    let queries = scatter_both(&cap, &db, ["sc-0", "sc-1"].map(User::partition)).await?;
    let (id, _) = queries.first().ok_or("a Query span")?;
    let requests = cap.requests("Query");
    assert_eq!(requests.len(), 2, "a request per partition");
    for (_, r) in &requests {
        assert_eq!(r.parent, Some(*id), "{r:?}");
    }
    Ok(())
}

/// A scatter-gather read over an index names the index and the read consistency, like a
/// query of one partition of it does.
#[tokio::test]
async fn scatter_over_an_index_names_it() -> TestResult {
    let (cap, _guard, db) = captured(two_users_by_email()).await?;
    // The single-partition query names the index…
    let one = db.query(User::gsi1_partition("a@x")).all().await?;
    assert_eq!(one.items.len(), 1);
    let queries = cap.operations("Query");
    assert_eq!(field(&queries[0].1, "aws.dynamodb.index_name"), "GSI1");
    assert_eq!(
        field(&queries[0].1, "aws.dynamodb.consistent_read"),
        "false"
    );
    // …and so should the scatter-gather read of several of its partitions.
    let queries = scatter_both(&cap, &db, ["a@x", "b@x"].map(User::gsi1_partition)).await?;
    let (_, span) = queries.first().ok_or("a Query span")?;
    assert_eq!(field(span, "aws.dynamodb.index_name"), "GSI1", "{span:?}");
    assert_eq!(
        field(span, "aws.dynamodb.consistent_read"),
        "false",
        "{span:?}"
    );
    Ok(())
}

/// A batch get whose keys come back partly unprocessed is retried; its operation span
/// says how many requests and retries it took and what it consumed, like a batch
/// write's does.
#[tokio::test]
async fn batch_get_records_requests_and_retries() -> TestResult {
    let (cap, _guard) = capture();
    let db = local::fresh_table::<App>().await?;
    let users: Vec<User> = (0..40).map(|i| User::sample(&format!("bg-{i}"))).collect();
    db.batch_write().puts(&users).await?;
    let faults = Faults::new(3).rate(1.0).kinds([FaultKind::PartialBatch]);
    let flaky = faulty(&db, &faults).await?;
    cap.clear();
    assert_eq!(batch_get_all(&flaky, &users).await?.len(), 40);
    assert!(faults.stats().partial_batches > 0);
    let batches = cap.operations("BatchGetItem");
    let (id, span) = batches.first().ok_or("a BatchGetItem span")?;
    let requests = cap.children(*id);
    assert!(requests.len() > 1, "retried: {requests:?}");
    assert!(requests
        .iter()
        .any(|r| field(r, "dynamo_model.attempt") == "2"));
    assert_eq!(
        field(span, "dynamo_model.requests"),
        requests.len().to_string(),
        "{span:?}"
    );
    assert_eq!(
        field(span, "dynamo_model.retries"),
        (requests.len() - 1).to_string(),
        "{span:?}"
    );
    assert_ne!(field(span, "aws.dynamodb.consumed_capacity"), "<absent>");
    Ok(())
}

/// `aws.dynamodb.limit` is documented as "as sent" (OpenTelemetry: the value of the
/// `Limit` request parameter): a query with `page_size(7)` sends `Limit=7`.
#[tokio::test]
async fn the_limit_field_is_the_limit_sent() -> TestResult {
    let (cap, _guard) = capture();
    let db = table_with([User::sample("lim-1")]).await?;
    let params = db.query(User::partition("lim-1")).page_size(7).params()?;
    assert_eq!(params.limit, Some(7), "Limit sent");
    cap.clear();
    db.query(User::partition("lim-1"))
        .page_size(7)
        .all()
        .await?;
    let queries = cap.operations("Query");
    let (_, span) = queries.first().ok_or("a Query span")?;
    assert_eq!(field(span, "aws.dynamodb.limit"), "7", "{span:?}");
    Ok(())
}

/// A transaction retried after conflicts: a request span per attempt, the op span's
/// counts match.
#[tokio::test]
async fn transaction_conflicts_are_retried_request_by_request() -> TestResult {
    let (cap, _guard) = capture();
    let db = local::fresh_table::<App>().await?;
    let faults = Faults::new(5)
        .rate(0.5)
        .kinds([FaultKind::TransactionConflict]);
    let flaky = faulty(&db, &faults).await?;
    for i in 0..6 {
        flaky
            .transact_write()
            .put(flaky.put(&secret_user(&format!("tx{i}"))))
            .put(flaky.put(&secret_user(&format!("ty{i}"))))
            .await?;
    }
    assert!(faults.stats().transaction_conflicts > 0);
    let txs = cap.operations("TransactWriteItems");
    assert_eq!(txs.len(), 6);
    let mut retried = 0;
    for (id, span) in &txs {
        let children = cap.children(*id);
        let requests: u64 = field(span, "dynamo_model.requests").parse()?;
        let retries: u64 = field(span, "dynamo_model.retries").parse()?;
        assert_eq!(children.len() as u64, requests, "{span:?}");
        assert_eq!(retries + 1, requests);
        retried += retries;
        assert!(children
            .iter()
            .take(children.len() - 1)
            .all(|c| field(c, "error.type") == "TransactionCanceledException"));
    }
    assert!(retried > 0);
    assert_no_secret(&cap, "transactions");
    Ok(())
}

/// Single-item operations report the items they read or wrote, as the put does.
#[tokio::test]
async fn single_item_spans_count_items() -> TestResult {
    let (cap, _guard) = capture();
    let db = table_with([User::sample("c-1")]).await?;
    assert!(db.get(User::key("c-1")).await?.is_some());
    assert!(db.get(User::key("nobody")).await?.is_none());
    db.update(User::key("c-1"))
        .add(User::fields().login_count, 1)
        .await?;
    db.delete(User::key("c-1")).await?;
    let gets = cap.operations("GetItem");
    assert_eq!(field(&gets[0].1, "dynamo_model.items"), "1", "{gets:?}");
    assert_eq!(field(&gets[1].1, "dynamo_model.items"), "0", "{gets:?}");
    for op in ["UpdateItem", "DeleteItem"] {
        let spans = cap.operations(op);
        assert_eq!(field(&spans[0].1, "dynamo_model.items"), "1", "{spans:?}");
    }
    Ok(())
}

// ---------------------------------------------------------------------------- streams

/// The one Scan operation span `cap` holds.
#[track_caller]
fn the_one_scan(cap: &Capture) -> Captured {
    let mut spans = cap.operations("Scan");
    assert_eq!(spans.len(), 1, "{spans:?}");
    spans.remove(0).1
}

/// A scan stream dropped after 3 of its 6 items (`take(3)`, the ordinary way to read a
/// few): its operation span says how many items it yielded.
#[tokio::test]
async fn a_stream_dropped_midway_records_its_items() -> TestResult {
    let (cap, _guard) = capture();
    let db = with_bags(6).await?;
    let got: Vec<Bag> = db
        .scan::<Bag>()
        .page_size(2)
        .stream()
        .take(3)
        .try_collect()
        .await?;
    assert_eq!(got.len(), 3);
    let scan = the_one_scan(&cap);
    assert_eq!(field(&scan, "dynamo_model.items"), "3", "{scan:?}");
    Ok(())
}

/// A stream read to its end records its items; one that yields an error (an item that
/// does not decode) records the error's kind on its operation span.
#[tokio::test]
async fn a_stream_that_errors_records_the_error() -> TestResult {
    let (cap, _guard) = capture();
    let db = with_bags(4).await?;
    let all: Vec<Bag> = db.scan::<Bag>().page_size(3).stream().try_collect().await?;
    assert_eq!(all.len(), 4);
    let scan = the_one_scan(&cap);
    assert_eq!(field(&scan, "dynamo_model.items"), "4", "{scan:?}");
    assert_eq!(field(&scan, "error.type"), "<absent>", "{scan:?}");
    cap.clear();
    raw_set(&db, "BAG#2", "BAG", &[("n", s("not a number"))]).await?;
    let results: Vec<Result<Bag, dynamo_model::Error>> =
        db.scan::<Bag>().page_size(3).stream().collect().await;
    let errors = results.iter().filter(|r| r.is_err()).count();
    assert!(errors >= 1, "{results:?}");
    let scan = the_one_scan(&cap);
    assert_ne!(field(&scan, "error.type"), "<absent>", "{scan:?}");
    Ok(())
}

/// A scatter-gather stream inside the application's own span: its operation span is a
/// child of that span, every request span a child of the operation span (the spawned
/// tasks carry it), and the items it yielded are recorded when it ends.
#[tokio::test]
async fn a_scatter_stream_nests_under_the_callers_span() -> TestResult {
    let (cap, _guard, db) = captured(with_bags(5)).await?;
    let outer = tracing::info_span!(target: "dynamo_model::tests", "outer");
    let got: Vec<Bag> = {
        let _in = outer.enter();
        db.scatter_query((0..5u32).map(Bag::partition))
            .stream()
            .try_collect()
            .await?
    };
    assert_eq!(got.len(), 5);
    let spans = cap.spans();
    let outer_id = id_named(&spans, "outer").ok_or("outer span")?;
    let operations = cap.operations("Query");
    assert_eq!(operations.len(), 1, "{operations:?}");
    let (op_id, op) = &operations[0];
    assert_eq!(op.parent, Some(outer_id), "{op:?}");
    assert_eq!(field(op, "dynamo_model.items"), "5", "{op:?}");
    let requests: Vec<&Captured> = spans
        .iter()
        .map(|(_, s)| s)
        .filter(|s| s.name == "dynamodb.request")
        .collect();
    assert_eq!(requests.len(), 5, "{requests:?}");
    assert!(
        requests.iter().all(|r| r.parent == Some(*op_id)),
        "{requests:?}"
    );
    Ok(())
}

// ------------------------------------------------------------------------- migrations

/// A migration run inside the application's span: its Scan and UpdateItem request spans
/// are children of that span.
#[tokio::test]
async fn a_migrations_requests_nest_under_the_callers_span() -> TestResult {
    let members = [member_item(1, 0), member_item(2, 0)];
    let (cap, _guard, db) = captured(with_rows::<Shops>(members)).await?;
    let outer = tracing::info_span!(target: "dynamo_model::tests", "outer");
    let report = db
        .migration::<Member>("spans")
        .rewrite()
        .run()
        .instrument(outer)
        .await?;
    assert_eq!(report.progress.changed, 2, "{:?}", report.progress);
    let spans = cap.spans();
    let outer_id = id_named(&spans, "outer").ok_or("outer span")?;
    let scans = cap.requests("Scan");
    let updates = cap.requests("UpdateItem");
    assert!(!scans.is_empty(), "{spans:?}");
    assert_eq!(updates.len(), 2, "{spans:?}");
    for (_, request) in scans.iter().chain(&updates) {
        assert_eq!(request.parent, Some(outer_id), "{request:?}");
    }
    Ok(())
}

/// The request spans of a migration ask DynamoDB for the capacity consumed
/// (`ReturnConsumedCapacity::Total`) like a query's or a scan's, and a query's and a
/// scan's request spans record it with the items of the page: a migration's record
/// neither, nor the error of an UpdateItem whose condition failed.
#[tokio::test]
async fn a_migrations_request_spans_record_items_and_capacity() -> TestResult {
    let (cap, _guard, db) = captured(with_rows::<Shops>([member_item(1, 0)])).await?;
    let report = db.migration::<Member>("fields").rewrite().run().await?;
    assert_eq!(report.progress.changed, 1, "{:?}", report.progress);
    let scans = cap.requests("Scan");
    assert!(!scans.is_empty());
    let first = &scans[0].1;
    assert_eq!(field(first, "dynamo_model.items"), "1", "{first:?}");
    assert_ne!(
        field(first, "aws.dynamodb.consumed_capacity"),
        "<absent>",
        "{first:?}"
    );
    let updates = cap.requests("UpdateItem");
    assert_eq!(updates.len(), 1);
    assert_ne!(
        field(&updates[0].1, "aws.dynamodb.consumed_capacity"),
        "<absent>",
        "{updates:?}"
    );
    Ok(())
}

// ------------------------------------------------------------------ cache and history

/// A fresh table, a cache and a client through it (see [`hot_cached`]), holding
/// `hot(id, "v")` put through that client.
async fn hot_cached_with(
    id: &str,
) -> Res<(
    local::TempTable<Mixed>,
    dynamo_model::cache::Cache,
    dynamo_model::Db<Mixed>,
)> {
    let (db, cache, cached) = hot_cached().await?;
    cached.put(&hot(id, "v")).await?;
    Ok((db, cache, cached))
}

/// A cache hit is still an operation with its span, counting the item, and records the
/// key only with `trace_keys`; it sends no request.
#[tokio::test]
async fn a_cache_hit_has_a_span_and_records_keys_only_when_asked() -> TestResult {
    let (cap, _guard, (_db, cache, cached)) = captured(hot_cached_with("tr-SECRETKEY")).await?;
    cached.get(Hot::key("tr-SECRETKEY")).await?;
    cached.get(Hot::key("tr-SECRETKEY")).await?;
    assert_eq!(cache.stats().hits, 1);
    let ops = cap.operations("GetItem");
    assert_eq!(ops.len(), 2, "{:?}", cap.spans());
    for (_, span) in &ops {
        assert_eq!(field(span, "dynamo_model.items"), "1", "{span:?}");
        assert_eq!(field(span, "dynamo_model.key"), "<absent>", "{span:?}");
    }
    assert!(
        !cap.everything().iter().any(|v| v.contains("SECRETKEY")),
        "a key leaked without trace_keys"
    );
    cap.clear();
    let keyed = cached.clone().trace_keys(true);
    keyed.get(Hot::key("tr-SECRETKEY")).await?;
    let ops = cap.operations("GetItem");
    let (_, span) = ops.first().ok_or("no span")?;
    assert!(
        field(span, "dynamo_model.key").contains("HOT#tr-SECRETKEY"),
        "{span:?}"
    );
    assert_eq!(cache.stats().hits, 2, "a hit again");
    Ok(())
}

/// A cache miss reads strongly consistently (to fill the cache): its span must not claim
/// an eventually consistent read, or capacity in traces looks doubled for no reason.
#[tokio::test]
async fn a_cache_miss_span_reports_the_consistent_read_it_sent() -> TestResult {
    let (cap, _guard, (_db, cache, cached)) = captured(hot_cached_with("cm")).await?;
    cached.get(Hot::key("cm")).await?;
    let ops = cap.operations("GetItem");
    let (_, span) = ops.first().ok_or("no span")?;
    assert_eq!(cache.stats().misses, 1);
    assert_eq!(
        field(span, "aws.dynamodb.consistent_read"),
        "true",
        "the miss sent ConsistentRead=true: {span:?}"
    );
    Ok(())
}

/// History operations have spans that never record keys or values without trace_keys.
#[tokio::test]
async fn history_spans_record_no_keys_without_trace_keys() -> TestResult {
    let (cap, _guard, db) = captured(local::fresh_table::<Mixed>()).await?;
    let versions = db.history::<Doc>();
    versions
        .create(&Doc {
            id: "SECRETDOC".into(),
            title: "SECRETTITLE".into(),
            version: 0,
        })
        .await?;
    versions
        .revise(Doc::key("SECRETDOC"), |d| d.title = "SECRETTITLE2".into())
        .await?;
    let _ = versions.revision(Doc::key("SECRETDOC"), 1).await?;
    versions.delete_all(Doc::key("SECRETDOC")).await?;
    assert!(!cap.spans().is_empty(), "history writes are traced");
    let leaked = cap.containing("SECRET");
    assert!(leaked.is_empty(), "{leaked:?}");
    Ok(())
}
