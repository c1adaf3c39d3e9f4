//! Review 14: hostile tests of the ecosystem capability — tracing spans, schema export
//! and stream decoding.
//!
//! Tracing: spans are captured per test thread through `crate::spans`, the global
//! subscriber `traces.rs` uses too.

use crate::common::*;
use crate::spans::{Capture, Captured, Scope};
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::export::Export;
use dynamo_model::local;
use dynamo_model::local::faults::{FaultKind, Faults};
use dynamo_model::stream::{EventName, Image, StreamRecord, ViewType};
use dynamo_model::{Entity, Item, Table};
use futures_util::TryStreamExt;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

// ------------------------------------------------------------------ capture

/// Captures the crate's spans on this thread until the scope drops (see `crate::spans`).
fn capture() -> (Capture, Scope) {
    let scope = Scope::begin();
    (scope.capture.clone(), scope)
}

const SECRET: &str = "Qx9-REVIEW14-SECRET";

fn field<'a>(span: &'a Captured, name: &str) -> &'a str {
    span.fields
        .get(name)
        .map(String::as_str)
        .unwrap_or("<absent>")
}

fn assert_no_secret(cap: &Capture, what: &str) {
    let leaked: Vec<String> = cap
        .everything()
        .into_iter()
        .filter(|v| v.contains(SECRET))
        .collect();
    assert!(leaked.is_empty(), "{what}: recorded {leaked:?}");
}

fn secret_user(id: &str) -> User {
    let mut user = User::sample(&format!("{id}-{SECRET}"));
    user.display_name = format!("name {SECRET}");
    user.email = Some(format!("{SECRET}@example.com"));
    user.labels = vec![SECRET.to_owned()];
    user
}

// ------------------------------------------------------------------ tracing

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
    let got = flaky
        .batch_get::<User>()
        .keys(users.iter().map(|u| User::key(u.user_id.as_str())))
        .send()
        .await?;
    assert_eq!(got.items.len(), 30);
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

/// Every operation has its operation span: `query(..).one()` is a `Query` like `all()`,
/// and its request span is a child of it.
#[tokio::test]
async fn query_one_has_an_operation_span() -> TestResult {
    let (cap, _guard) = capture();
    let db = local::fresh_table::<App>().await?;
    db.put(&User::sample("one-1")).await?;
    cap.clear();
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
    let (cap, _guard) = capture();
    let db = local::fresh_table::<App>().await?;
    db.put(&User::sample("st-1")).await?;
    cap.clear();
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

async fn two_users_by_email(
    db: &dynamo_model::Db<App>,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    for (i, email) in ["a@x", "b@x"].iter().enumerate() {
        let mut u = User::sample(&format!("sc-{i}"));
        u.email = Some((*email).to_owned());
        db.put(&u).await?;
    }
    Ok(())
}

/// A scatter-gather read sends a request per partition, each a child of the operation
/// span (as a query's, a batch's and a transaction's requests are).
#[tokio::test]
async fn scatter_requests_are_children_of_the_operation() -> TestResult {
    let (cap, _guard) = capture();
    let db = local::fresh_table::<App>().await?;
    two_users_by_email(&db).await?;
    // Control: a query's request is a child of its operation span in this capture.
    cap.clear();
    db.query(User::partition("sc-0")).all().await?;
    let (id, _) = cap.operations("Query").pop().ok_or("a Query span")?;
    assert_eq!(cap.children(id).len(), 1);
    cap.clear();
    let page = db
        .scatter_query(["sc-0", "sc-1"].map(User::partition))
        .all()
        .await?;
    assert_eq!(page.items.len(), 2);
    let queries = cap.operations("Query");
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
    let (cap, _guard) = capture();
    let db = local::fresh_table::<App>().await?;
    two_users_by_email(&db).await?;
    cap.clear();
    // The single-partition query names the index…
    let one = db.query(User::gsi1_partition("a@x")).all().await?;
    assert_eq!(one.items.len(), 1);
    let queries = cap.operations("Query");
    assert_eq!(field(&queries[0].1, "aws.dynamodb.index_name"), "GSI1");
    assert_eq!(
        field(&queries[0].1, "aws.dynamodb.consistent_read"),
        "false"
    );
    cap.clear();
    // …and so should the scatter-gather read of several of its partitions.
    let page = db
        .scatter_query(["a@x", "b@x"].map(User::gsi1_partition))
        .all()
        .await?;
    assert_eq!(page.items.len(), 2);
    let queries = cap.operations("Query");
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
    let got = flaky
        .batch_get::<User>()
        .keys(users.iter().map(|u| User::key(u.user_id.as_str())))
        .send()
        .await?;
    assert_eq!(got.items.len(), 40);
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
    let db = local::fresh_table::<App>().await?;
    db.put(&User::sample("lim-1")).await?;
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
    let db = local::fresh_table::<App>().await?;
    db.put(&User::sample("c-1")).await?;
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

// ------------------------------------------------------------------ export

#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "ByCategory", pk = ["category"], sk = ["score:N"]),
    gsi(name = "ByType", pk = "TPK", sk = "SK", projection = keys_only),
    lsi(name = "ByRank", sk = ["rank:N"], projection(include = ["title", "body"])),
    ttl = "expires"
)]
struct Exported;

#[derive(Entity, serde::Serialize, serde::Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Exported, pk = "POST#{id}", sk = "POST",
         index(ByCategory, pk = [category], sk = [score]),
         index(ByRank, sk = [rank]))]
struct Post {
    id: String,
    title: String,
    body: String,
    category: String,
    score: i64,
    rank: i64,
    #[dynamo(ttl)]
    expires: i64,
}

#[derive(Table)]
#[dynamo(pk = "PK")]
struct Flat;

#[derive(Entity, serde::Serialize, serde::Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Flat, pk = "{id}")]
struct FlatThing {
    id: String,
    yes: bool,
}

fn names(value: &Value, key: &str) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v[key].as_str().map(str::to_owned))
        .collect()
}

/// CloudFormation's rules for `AWS::DynamoDB::Table`: every attribute of a key schema
/// (table or index) defined exactly once, no definition unused, an LSI on the table's
/// partition key, INCLUDE with its non-key attributes, KEYS_ONLY without.
fn check_cloudformation(props: &Value) {
    let defined = names(&props["AttributeDefinitions"], "AttributeName");
    let unique: BTreeSet<&String> = defined.iter().collect();
    assert_eq!(unique.len(), defined.len(), "defined twice: {defined:?}");
    let mut used: BTreeSet<String> = names(&props["KeySchema"], "AttributeName")
        .into_iter()
        .collect();
    for property in ["GlobalSecondaryIndexes", "LocalSecondaryIndexes"] {
        for index in props[property].as_array().into_iter().flatten() {
            used.extend(names(&index["KeySchema"], "AttributeName"));
            let projection = &index["Projection"];
            match projection["ProjectionType"].as_str() {
                Some("INCLUDE") => {
                    assert!(projection["NonKeyAttributes"]
                        .as_array()
                        .is_some_and(|a| !a.is_empty()))
                }
                Some("ALL" | "KEYS_ONLY") => {
                    assert!(projection.get("NonKeyAttributes").is_none(), "{projection}")
                }
                other => panic!("projection {other:?}"),
            }
            if property == "LocalSecondaryIndexes" {
                assert_eq!(
                    index["KeySchema"][0]["AttributeName"],
                    props["KeySchema"][0]["AttributeName"]
                );
                assert_eq!(index["KeySchema"][0]["KeyType"], "HASH");
            }
        }
    }
    let defined: BTreeSet<String> = defined.into_iter().collect();
    assert_eq!(defined, used, "definitions and key schemas differ");
}

#[test]
fn cloudformation_is_valid_for_odd_tables() {
    let export = Export::of::<Exported>("exported");
    let props = export.cloudformation_properties();
    check_cloudformation(&props);
    let defs: BTreeMap<String, String> = props["AttributeDefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            (
                d["AttributeName"].as_str().unwrap_or_default().to_owned(),
                d["AttributeType"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(defs["score"], "N");
    assert_eq!(defs["rank"], "N");
    assert_eq!(defs["SK"], "S");
    assert_eq!(props["TimeToLiveSpecification"]["AttributeName"], "expires");
    let flat = Export::of::<Flat>("flat");
    let props = flat.cloudformation_properties();
    check_cloudformation(&props);
    assert_eq!(props["KeySchema"].as_array().map(Vec::len), Some(1));
    assert!(props.get("TimeToLiveSpecification").is_none());
    assert!(props.get("LocalSecondaryIndexes").is_none());
    assert_eq!(flat.logical_id(), "FlatTable");
    // The Markdown has no sort key for the flat table, a row for the entity.
    let md = flat.markdown();
    assert!(md.contains("Partition key `PK`; entity"), "{md}");
    assert!(md.contains("| FlatThing | `{id}` | - |"), "{md}");
}

/// A table name YAML would read as something else (a boolean, a number, a comment, a
/// flow collection) stays a string in the YAML template; the YAML is the JSON.
#[test]
fn yaml_quotes_hostile_names() {
    for name in [
        "yes",
        "null",
        "0x10",
        "1e3",
        "# not a comment",
        "[a]",
        "a: b",
        "- x",
        "\"q\"\\",
        "tab\there",
    ] {
        let yaml = Export::of::<Exported>(name).cloudformation_yaml();
        let quoted = serde_json::to_string(name).unwrap_or_default();
        assert!(
            yaml.contains(&format!("\"TableName\": {quoted}\n")),
            "{name}: {yaml}"
        );
    }
    let yaml = Export::of::<Exported>("t").cloudformation_yaml();
    // Every line is `key: value`, `key:` or a `- ` item, indented by even spaces.
    for line in yaml.lines() {
        let trimmed = line.trim_start();
        assert_eq!((line.len() - trimmed.len()) % 2, 0, "{line}");
        assert!(
            trimmed.starts_with('"') || trimmed.starts_with("- "),
            "{line}"
        );
    }
    assert!(yaml.contains("\"NonKeyAttributes\":\n"), "{yaml}");
}

/// Workbench facets: one per entity, key aliases the templates; keys are not non-key
/// attributes; the LSI's key and the GSI's key attributes keep their types.
#[test]
fn workbench_facets_and_key_types() {
    let model = Export::of::<Exported>("exported").workbench("m");
    let table = &model["DataModel"][0];
    let facets = table["TableFacets"].as_array().cloned().unwrap_or_default();
    assert_eq!(facets.len(), 1);
    assert_eq!(facets[0]["FacetName"], "Post");
    assert_eq!(
        facets[0]["KeyAttributeAlias"]["PartitionKeyAlias"],
        "POST#{id}"
    );
    let attrs: Vec<&str> = facets[0]["NonKeyAttributes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        !attrs.contains(&"PK") && !attrs.contains(&"SK"),
        "{attrs:?}"
    );
    let gsis = table["GlobalSecondaryIndexes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let expiry = gsis
        .iter()
        .find(|g| g["IndexName"] == "ByCategory")
        .cloned()
        .unwrap_or_default();
    assert_eq!(expiry["KeyAttributes"]["SortKey"]["AttributeType"], "N");
    let cdk = Export::of::<Exported>("exported").cdk();
    let lsi = &cdk["localSecondaryIndexes"][0];
    assert_eq!(lsi["sortKey"]["type"], "NUMBER");
    assert_eq!(
        lsi["nonKeyAttributes"],
        serde_json::json!(["title", "body"])
    );
}

// ------------------------------------------------------------------ streams

fn s(v: &str) -> AttributeValue {
    AttributeValue::S(v.to_owned())
}

fn user_item(id: &str) -> Result<Item, dynamo_model::Error> {
    User::sample(id).to_item()
}

fn keys_of(item: &Item) -> Item {
    item.iter()
        .filter(|(k, _)| *k == "PK" || *k == "SK")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// An image that lacks the key attributes but whose fields are another item's: decoding
/// it under the record's key would make `Change::key` name an item other than the one
/// decoded. It must be refused (or decoded as the record's item) — never a mismatch.
#[test]
fn an_image_without_keys_is_not_decoded_under_another_key() {
    let Ok(a) = user_item("a") else {
        panic!("item")
    };
    let Ok(mut b) = user_item("b") else {
        panic!("item")
    };
    b.remove("PK");
    b.remove("SK");
    let record = StreamRecord::new(EventName::Modify, keys_of(&a))
        .with_old_image(a.clone())
        .with_new_image(b);
    match record.decode::<User>() {
        Err(_) => {}
        Ok(None) => {}
        Ok(Some(change)) => {
            let key = change.key();
            if let Ok(Some(new)) = change.new_image() {
                assert_eq!(new.primary_key(), key, "decoded {new:?} under {key:?}");
            }
        }
    }
}

/// Hostile values: key attributes of the wrong type, numbers out of range or not
/// numbers, an entity type that is not a string, a list where a string is: each a typed
/// error or `None`, never a panic, never a wrong value.
#[test]
fn hostile_images_are_errors_not_panics() {
    let Ok(good) = user_item("h") else {
        panic!("item")
    };
    let keys = keys_of(&good);
    let mut cases: Vec<(&str, Item)> = Vec::new();
    for (name, attribute, value) in [
        (
            "huge count",
            "loginCount",
            AttributeValue::N("99999999999999999999999".into()),
        ),
        (
            "negative count",
            "loginCount",
            AttributeValue::N("-1".into()),
        ),
        (
            "exponent count",
            "loginCount",
            AttributeValue::N("1e400".into()),
        ),
        (
            "fraction count",
            "loginCount",
            AttributeValue::N("1.5".into()),
        ),
        ("nan count", "loginCount", AttributeValue::N("NaN".into())),
        ("string count", "loginCount", s("3")),
        ("list name", "displayName", AttributeValue::L(vec![s("x")])),
        ("number type", "_type", AttributeValue::N("1".into())),
        ("null id", "userId", AttributeValue::Null(true)),
        ("set tags", "tags", AttributeValue::Ns(vec!["1".into()])),
    ] {
        let mut item = good.clone();
        item.insert(attribute.to_owned(), value);
        cases.push((name, item));
    }
    let mut pk_number = good.clone();
    pk_number.insert("PK".into(), AttributeValue::N("1".into()));
    cases.push(("number pk in image", pk_number));
    for (name, image) in cases {
        let record = StreamRecord::new(EventName::Insert, keys.clone())
            .with_new_image(image)
            .with_view_type(ViewType::NewImage);
        let outcome = std::panic::catch_unwind(|| record.decode::<User>());
        match outcome {
            Err(_) => panic!("{name}: panicked"),
            Ok(Err(_)) | Ok(Ok(None)) => {}
            Ok(Ok(Some(change))) => match &change.new {
                Image::Present(user) => {
                    // Only the number-typed `_type` could be accepted (by its key); the
                    // value must then be what was written.
                    assert_eq!(name, "number type", "{name}: decoded {user:?}");
                    assert_eq!(user, &User::sample("h"));
                }
                other => {
                    let _ = other;
                }
            },
        }
    }
    // Keys of the wrong type: an error, no panic.
    let mut bad_keys = keys.clone();
    bad_keys.insert("SK".into(), AttributeValue::Bool(true));
    let record = StreamRecord::new(EventName::Remove, bad_keys);
    assert!(record.decode::<User>().is_err());
}

/// A REMOVE with neither keys nor images is refused; a REMOVE with keys only (no view
/// type named) decodes to the key and an old image "not in view", never a guess.
#[test]
fn remove_without_old_image() {
    let record = StreamRecord::new(EventName::Remove, Item::new());
    assert!(record.decode::<User>().is_err());
    let Ok(item) = user_item("r") else {
        panic!("item")
    };
    let record = StreamRecord::new(EventName::Remove, keys_of(&item));
    let Ok(Some(change)) = record.decode::<User>() else {
        panic!("a user's key")
    };
    assert_eq!(change.key(), User::key("r"));
    assert!(matches!(change.old, Image::NotInView));
    assert!(matches!(change.new, Image::Absent));
    assert!(change.old_image().is_err());
    assert!(matches!(change.new_image(), Ok(None)));
    // The same record is not an order's.
    assert!(matches!(record.decode::<Order>(), Ok(None)));
}

/// An image under the record's key whose entity type says `User` but which the record's
/// `Keys` put under an order's key: refused, not decoded as either.
#[test]
fn images_and_keys_that_disagree_are_refused() {
    let Ok(user) = user_item("d") else {
        panic!("item")
    };
    let order_keys: Item = [
        ("PK".to_owned(), s("USER#d")),
        ("SK".to_owned(), s("ORDER#2024-01-01T00:00:00Z#o1")),
    ]
    .into_iter()
    .collect();
    let record = StreamRecord::new(EventName::Insert, order_keys).with_new_image(user);
    assert!(record.decode::<User>().is_err());
    assert!(!matches!(record.decode::<Order>(), Ok(Some(_))));
}

/// Lambda records of hostile shapes: unknown event names, a record of a table with other
/// key names: errors, not panics.
#[test]
fn hostile_lambda_records() {
    use aws_lambda_events::event::dynamodb::Event;
    let event = |name: &str, keys: &str| -> Event {
        let json = format!(
            r#"{{"Records": [{{"eventID": "1", "eventName": "{name}", "eventVersion": "1.1",
            "eventSource": "aws:dynamodb", "awsRegion": "us-east-1",
            "dynamodb": {{"Keys": {keys}, "SequenceNumber": "1", "SizeBytes": 1,
            "StreamViewType": "KEYS_ONLY"}}}}]}}"#
        );
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
    };
    let ok_keys = r#"{"PK": {"S": "USER#l"}, "SK": {"S": "PROFILE"}}"#;
    for bad in ["insert", "DELETE", ""] {
        let record = event(bad, ok_keys).records.remove(0);
        assert!(StreamRecord::from_lambda(record).is_err(), "{bad}");
    }
    let other = event(
        "REMOVE",
        r#"{"pk": {"S": "USER#l"}, "sk": {"S": "PROFILE"}}"#,
    );
    let record = StreamRecord::from_lambda(other.records[0].clone());
    let decoded = record.map(|r| r.decode::<User>());
    assert!(matches!(decoded, Ok(Err(_))), "{decoded:?}");
    let numbers = event("REMOVE", r#"{"PK": {"N": "1"}, "SK": {"S": "PROFILE"}}"#);
    let decoded = StreamRecord::from_lambda(numbers.records[0].clone()).map(|r| r.decode::<User>());
    assert!(matches!(decoded, Ok(Err(_))), "{decoded:?}");
    let good = event("REMOVE", ok_keys);
    let decoded = StreamRecord::from_lambda(good.records[0].clone())
        .map(|r| r.decode::<User>().map(|c| c.map(|c| c.key())));
    assert!(
        matches!(decoded, Ok(Ok(Some(ref k))) if *k == User::key("l")),
        "{decoded:?}"
    );
}
