//! Every request the crate sends for itself goes through the send path: a client with an
//! observer sees, for each internal request (a settlement read, a history get, a chunk
//! get and delete, the orphan sweep's scan and parent check, a migration's update), the
//! request span it was sent in, the record of its call and its retry and settlement
//! policy. The client talks to a scripted connector (no server): each operation is
//! answered as the test says.

use crate::call::{Call, Observer, Observing, Operation, Outcome, Policy, Retry, Settle};
use crate::{Chunked, Db, Entity, Table};
use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use aws_smithy_runtime_api::client::http::{
    HttpConnector, HttpConnectorFuture, SharedHttpConnector, http_client_fn,
};
use aws_smithy_runtime_api::client::orchestrator::HttpRequest;
use aws_smithy_runtime_api::http::{Response, StatusCode};
use aws_smithy_types::body::SdkBody;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "DOC#{id}", sk = "DOC", history)]
struct Doc {
    id: String,
    title: String,
    #[dynamo(version)]
    version: u64,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "INBOX#{owner}", sk = "MSG#{id}")]
struct Message {
    owner: String,
    id: String,
    #[dynamo(chunked(inline = 16, chunk_size = 1024))]
    body: Chunked<String>,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "USER#{id}", sk = "USER")]
struct User {
    id: String,
    #[dynamo(default)]
    plan: String,
}

fn message() -> Message {
    Message {
        owner: "ann".into(),
        id: "m1".into(),
        body: Chunked::new("x".repeat(3000)),
    }
}

// --- The spans: a subscriber that keeps each span's name and fields, and the spans
// entered on this thread.

thread_local! {
    static ENTERED: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

#[derive(Debug, Clone)]
struct SpanSeen {
    name: &'static str,
    fields: BTreeMap<&'static str, String>,
}

#[derive(Default, Clone)]
struct Spans(Arc<Mutex<HashMap<u64, SpanSeen>>>);

struct Fields<'a>(&'a mut BTreeMap<&'static str, String>);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.insert(field.name(), value.to_owned());
    }
}

impl Spans {
    /// The innermost span of the crate entered on this thread.
    fn innermost(&self) -> Option<SpanSeen> {
        let spans = self.0.lock().ok()?;
        ENTERED.with(|entered| {
            entered
                .borrow()
                .iter()
                .rev()
                .filter_map(|id| spans.get(id))
                .find(|span| span.name.starts_with("dynamodb."))
                .cloned()
        })
    }
}

impl Subscriber for Spans {
    fn enabled(&self, _metadata: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut fields = BTreeMap::new();
        span.record(&mut Fields(&mut fields));
        let mut spans = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let id = spans.len() as u64 + 1;
        let name = span.metadata().name();
        spans.insert(id, SpanSeen { name, fields });
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut spans = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(seen) = spans.get_mut(&span.into_u64()) {
            values.record(&mut Fields(&mut seen.fields));
        }
    }

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, _event: &Event<'_>) {}

    fn enter(&self, span: &Id) {
        ENTERED.with(|entered| entered.borrow_mut().push(span.into_u64()));
    }

    fn exit(&self, span: &Id) {
        ENTERED.with(|entered| {
            let mut entered = entered.borrow_mut();
            if let Some(at) = entered.iter().rposition(|id| *id == span.into_u64()) {
                entered.remove(at);
            }
        });
    }
}

// --- The observer: each request's record and the span it was sent in.

#[derive(Debug, Clone)]
struct Seen {
    call: Call,
    span: Option<SpanSeen>,
}

#[derive(Clone)]
struct Recorder {
    spans: Spans,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Recorder")
    }
}

impl Observer for Recorder {
    fn before(&self, call: &Call) {
        let span = self.spans.innermost();
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(Seen {
                call: call.clone(),
                span,
            });
        }
    }

    fn after(&self, _call: &Call, _outcome: &Outcome<'_>) {}
}

impl Recorder {
    fn take(&self) -> Vec<Seen> {
        self.seen
            .lock()
            .map(|mut s| std::mem::take(&mut *s))
            .unwrap_or_default()
    }
}

// --- The connector: answers each operation as the script says, and keeps the requests.

type Answer = Box<dyn Fn(&str, &serde_json::Value) -> (u16, serde_json::Value) + Send + Sync>;

#[derive(Clone)]
struct Script {
    answer: Arc<Answer>,
    sent: Arc<Mutex<Vec<(String, serde_json::Value)>>>,
}

impl std::fmt::Debug for Script {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Script")
    }
}

impl HttpConnector for Script {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let operation = request
            .headers()
            .get("x-amz-target")
            .and_then(|t| t.split('.').next_back())
            .unwrap_or_default()
            .to_owned();
        let body = request
            .body()
            .bytes()
            .and_then(|b| serde_json::from_slice(b).ok())
            .unwrap_or(serde_json::Value::Null);
        let (status, answer) = (self.answer)(&operation, &body);
        if let Ok(mut sent) = self.sent.lock() {
            sent.push((operation, body));
        }
        let status = StatusCode::try_from(status).map_err(|e| {
            aws_smithy_runtime_api::client::result::ConnectorError::other(e.into(), None)
        });
        let body = SdkBody::from(answer.to_string());
        HttpConnectorFuture::ready(status.map(|status| Response::new(status, body)))
    }
}

struct Fixture {
    db: Db<App>,
    recorder: Recorder,
    script: Script,
    _guard: tracing::subscriber::DefaultGuard,
}

/// A `Db` whose requests `answer` answers (status and JSON body, by operation), observed
/// by a recorder, with one SDK attempt per request.
fn fixture(
    answer: impl Fn(&str, &serde_json::Value) -> (u16, serde_json::Value) + Send + Sync + 'static,
) -> Fixture {
    let spans = Spans::default();
    let guard = tracing::subscriber::set_default(spans.clone());
    let recorder = Recorder {
        spans,
        seen: Arc::default(),
    };
    let script = Script {
        answer: Arc::new(Box::new(answer)),
        sent: Arc::default(),
    };
    let connector = script.clone();
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("id", "secret", None, None, "test"))
        .retry_config(RetryConfig::standard().with_max_attempts(1))
        .http_client(http_client_fn(move |_, _| {
            SharedHttpConnector::new(connector.clone())
        }))
        .interceptor(Observing::new(recorder.clone(), &App::SCHEMA))
        .build();
    Fixture {
        db: Db::new(aws_sdk_dynamodb::Client::from_conf(config), "app"),
        recorder,
        script,
        _guard: guard,
    }
}

fn ok() -> (u16, serde_json::Value) {
    (200, serde_json::json!({}))
}

/// A query's or a scan's answer holding `item` alone.
fn one_item(item: &serde_json::Value) -> (u16, serde_json::Value) {
    let answer = serde_json::json!({ "Items": [item], "Count": 1, "ScannedCount": 1 });
    (200, answer)
}

/// The request of `operation` sent `nth` (from 0) among those seen, with its span checked:
/// a request span of that operation.
fn request(seen: &[Seen], operation: Operation, nth: usize) -> Seen {
    let found = seen
        .iter()
        .filter(|s| s.call.operation == operation)
        .nth(nth)
        .cloned();
    let Some(found) = found else {
        panic!("no {operation:?} #{nth} among {seen:#?}");
    };
    let span = found
        .span
        .clone()
        .unwrap_or_else(|| panic!("no span: {found:?}"));
    assert_eq!(span.name, "dynamodb.request", "{found:?}");
    assert_eq!(
        span.fields.get("db.operation.name").map(String::as_str),
        Some(operation.name())
    );
    found
}

/// The `nth` request of `operation`, sent with `policy` for an item of `entity`.
fn sent(seen: &[Seen], operation: Operation, nth: usize, policy: Policy, entity: &str) -> Seen {
    let found = request(seen, operation, nth);
    assert_eq!(found.call.policy, policy, "{operation:?} #{nth}");
    assert_eq!(entity_of(&found), Some(entity), "{operation:?} #{nth}");
    found
}

fn entity_of(seen: &Seen) -> Option<&str> {
    seen.call.targets.first().and_then(|t| t.entity.as_deref())
}

#[tokio::test]
async fn a_settlement_read_is_a_consistent_read_sent_as_a_request() {
    // Every put is answered with HTTP 500: it may have been applied, and settles.
    let f = fixture(|operation, _| match operation {
        "PutItem" => (500, serde_json::json!({"__type": "InternalServerError"})),
        _ => ok(),
    });
    let user = User {
        id: "u1".into(),
        plan: "free".into(),
    };
    let result = f.db.put(&user).await;
    assert!(
        matches!(result, Err(crate::Error::OutcomeUnknown { .. })),
        "{result:?}"
    );
    let seen = f.recorder.take();
    let put = sent(&seen, Operation::PutItem, 0, Policy::write(true), "User");
    let read = request(&seen, Operation::GetItem, 0);
    assert_eq!(read.call.policy, Policy::READ);
    assert!(read.call.consistent);
    assert_eq!(read.call.targets[0].key, put.call.targets[0].key);
}

#[tokio::test]
async fn a_history_get_is_a_request_of_its_operation() {
    let f = fixture(|_, _| ok());
    let history = f.db.history::<Doc>();
    assert!(
        history
            .revision(Doc::key("d1"), 1)
            .await
            .ok()
            .flatten()
            .is_none()
    );
    let seen = f.recorder.take();
    let read = request(&seen, Operation::GetItem, 0);
    assert_eq!(read.call.policy, Policy::READ);
    assert!(read.call.consistent);
    assert!(read.call.targets[0].key.is_some(), "{read:?}");
}

#[tokio::test]
async fn chunk_reads_writes_and_deletes_are_requests_with_their_policies() {
    let f = fixture(|_, _| ok());
    f.db.put(&message()).await.ok();
    let seen = f.recorder.take();
    // The manifests read first, then the chunks, then the item.
    let manifests = request(&seen, Operation::GetItem, 0);
    assert_eq!(manifests.call.policy, Policy::READ);
    assert!(manifests.call.consistent && manifests.call.projected);
    let chunks = request(&seen, Operation::BatchWriteItem, 0);
    assert_eq!(chunks.call.policy, Policy::BATCH);
    assert_eq!(chunks.call.policy.retry, Retry::Crate);
    let put = request(&seen, Operation::PutItem, 0);
    assert_eq!(entity_of(&put), Some("Message"));

    // The item as stored, returned by the delete: its chunks are deleted after it.
    let stored = f
        .script
        .sent
        .lock()
        .ok()
        .and_then(|sent| {
            sent.iter()
                .find(|(op, _)| op == "PutItem")
                .map(|(_, b)| b["Item"].clone())
        })
        .unwrap_or_default();
    let deleting = fixture(move |operation, _| match operation {
        "DeleteItem" => (200, serde_json::json!({ "Attributes": stored.clone() })),
        _ => ok(),
    });
    deleting
        .db
        .delete(Message::key(MessageKey {
            owner: "ann",
            id: "m1",
        }))
        .await
        .ok();
    let seen = deleting.recorder.take();
    sent(
        &seen,
        Operation::DeleteItem,
        0,
        Policy::write(true),
        "Message",
    );
    let chunk_type = crate::chunk::CHUNK_TYPE;
    let chunk = sent(
        &seen,
        Operation::DeleteItem,
        1,
        Policy::CONDITIONAL,
        chunk_type,
    );
    assert_eq!(chunk.call.policy.settle, Settle::Condition);
}

#[tokio::test]
async fn the_orphan_sweep_scans_and_checks_parents_as_requests() {
    // One chunk, written long ago, whose parent names nothing.
    let chunk = serde_json::json!({
        "PK": {"S": format!("{}token#000000", crate::chunk::CHUNK_PREFIX)}, "SK": {"S": "CHUNK"},
        "_type": {"S": crate::chunk::CHUNK_TYPE},
        crate::chunk::PARENT_PK: {"S": "INBOX#ann"},
        crate::chunk::PARENT_SK: {"S": "MSG#m1"},
        crate::chunk::FIELD: {"S": "body"},
        crate::chunk::CREATED: {"N": "1"},
    });
    let f = fixture(move |operation, _| match operation {
        "Scan" => one_item(&chunk),
        _ => ok(),
    });
    let swept = f.db.collect_orphans(crate::chunk::MIN_ORPHAN_AGE).await;
    assert!(swept.is_ok(), "{swept:?}");
    let seen = f.recorder.take();
    let scan = request(&seen, Operation::Scan, 0);
    assert_eq!(scan.call.policy, Policy::READ);
    let parent = request(&seen, Operation::GetItem, 0);
    assert!(parent.call.consistent && parent.call.projected);
    let delete = request(&seen, Operation::DeleteItem, 0);
    assert_eq!(delete.call.policy, Policy::CONDITIONAL);
}

#[tokio::test]
async fn a_migration_update_is_a_conditional_request() {
    let user = serde_json::json!({
        "PK": {"S": "USER#u1"}, "SK": {"S": "USER"}, "_type": {"S": "User"}, "id": {"S": "u1"},
    });
    let f = fixture(move |operation, _| match operation {
        "Scan" | "Query" => one_item(&user),
        _ => ok(),
    });
    let report =
        f.db.migration::<User>("plan")
            .set_default(
                "plan",
                aws_sdk_dynamodb::types::AttributeValue::S("free".into()),
            )
            .run()
            .await;
    assert!(report.is_ok(), "{report:?}");
    let seen = f.recorder.take();
    sent(&seen, Operation::UpdateItem, 0, Policy::CONDITIONAL, "User");
}
