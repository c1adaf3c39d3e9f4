//! Tracing spans (`dynamo_model::trace`), captured per test thread by a subscriber of
//! the tests' own: operation spans with OpenTelemetry's field names, request
//! spans inside batches (with retries), transactions and queries, the error type, and no
//! attribute value anywhere; keys only when the `Db` opts in.

use crate::common::*;
use dynamo_model::local;
use dynamo_model::local::faults::{FaultKind, Faults};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::ThreadId;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber};
use tracing_core::span::Current as CurrentSpan;

/// One captured span.
#[derive(Debug, Clone)]
struct Captured {
    name: &'static str,
    metadata: &'static Metadata<'static>,
    parent: Option<u64>,
    fields: BTreeMap<String, String>,
}

#[derive(Default)]
struct State {
    spans: BTreeMap<u64, Captured>,
    /// Spans entered on this thread, innermost last (the contextual parent).
    stack: Vec<u64>,
    events: Vec<BTreeMap<String, String>>,
}

/// Records the crate's spans and events (target `dynamo_model`).
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<State>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl Capture {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn spans(&self) -> Vec<(u64, Captured)> {
        self.state()
            .spans
            .iter()
            .map(|(id, s)| (*id, s.clone()))
            .collect()
    }

    /// The operation spans of `operation`.
    fn operations(&self, operation: &str) -> Vec<(u64, Captured)> {
        self.spans()
            .into_iter()
            .filter(|(_, s)| {
                s.name == "dynamodb"
                    && s.fields.get("db.operation.name").map(String::as_str) == Some(operation)
            })
            .collect()
    }

    fn children(&self, parent: u64) -> Vec<Captured> {
        self.spans()
            .into_iter()
            .filter(|(_, s)| s.parent == Some(parent))
            .map(|(_, s)| s)
            .collect()
    }

    /// Every recorded value, of spans and events.
    fn everything(&self) -> Vec<String> {
        let state = self.state();
        state
            .spans
            .values()
            .flat_map(|s| s.fields.values().cloned())
            .chain(state.events.iter().flat_map(|e| e.values().cloned()))
            .collect()
    }
}

impl Capture {
    fn new_span(&self, id: u64, span: &Attributes<'_>) {
        let mut state = self.state();
        let parent = match span.parent() {
            Some(parent) => Some(parent.into_u64()),
            None if span.is_contextual() => state.stack.last().copied(),
            None => None,
        };
        let mut fields = BTreeMap::new();
        span.record(&mut Fields(&mut fields));
        state.spans.insert(
            id,
            Captured {
                name: span.metadata().name(),
                metadata: span.metadata(),
                parent,
                fields,
            },
        );
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut state = self.state();
        if let Some(s) = state.spans.get_mut(&span.into_u64()) {
            values.record(&mut Fields(&mut s.fields));
        }
    }

    fn event(&self, event: &Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        self.state().events.push(fields);
    }

    fn current_span(&self) -> CurrentSpan {
        let state = self.state();
        match state
            .stack
            .last()
            .and_then(|id| state.spans.get(id).map(|s| (*id, s.metadata)))
        {
            Some((id, metadata)) => CurrentSpan::new(Id::from_u64(id), metadata),
            None => CurrentSpan::none(),
        }
    }

    fn enter(&self, span: &Id) {
        self.state().stack.push(span.into_u64());
    }

    fn exit(&self, span: &Id) {
        let mut state = self.state();
        if let Some(at) = state.stack.iter().rposition(|id| *id == span.into_u64()) {
            state.stack.remove(at);
        }
    }
}

/// The process's subscriber, installed once: it hands each span and event of the crate
/// to the [`Capture`] of the thread it happens on (a test's, on its current-thread
/// runtime), and drops the others. One global subscriber rather than one scoped to each
/// test: callsites registered by other tests' threads while a scoped subscriber is being
/// installed could keep a stale interest and go unrecorded.
#[derive(Clone, Default)]
struct Router(Arc<RouterState>);

#[derive(Default)]
struct RouterState {
    next: AtomicU64,
    by_thread: Mutex<HashMap<ThreadId, Capture>>,
    by_span: Mutex<HashMap<u64, Capture>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Router {
    fn of_thread(&self) -> Option<Capture> {
        lock(&self.0.by_thread)
            .get(&std::thread::current().id())
            .cloned()
    }

    fn of_span(&self, span: &Id) -> Option<Capture> {
        lock(&self.0.by_span).get(&span.into_u64()).cloned()
    }
}

fn ours(metadata: &Metadata<'_>) -> bool {
    metadata.target().starts_with("dynamo_model")
}

impl Subscriber for Router {
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        if ours(metadata) {
            Interest::sometimes()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        ours(metadata) && self.of_thread().is_some()
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let id = self.0.next.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(capture) = self.of_thread() {
            capture.new_span(id, span);
            lock(&self.0.by_span).insert(id, capture);
        }
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        if let Some(capture) = self.of_span(span) {
            capture.record(span, values);
        }
    }

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        if let Some(capture) = self.of_thread() {
            capture.event(event);
        }
    }

    fn current_span(&self) -> CurrentSpan {
        self.of_thread()
            .map_or_else(CurrentSpan::none, |c| c.current_span())
    }

    fn enter(&self, span: &Id) {
        if let Some(capture) = self.of_span(span) {
            capture.enter(span);
        }
    }

    fn exit(&self, span: &Id) {
        if let Some(capture) = self.of_span(span) {
            capture.exit(span);
        }
    }

    // Spans stay in `by_span` after they close (a test's few hundred): their handles are
    // cloned and dropped independently, and a record may follow a drop of one of them.
}

static ROUTER: OnceLock<Router> = OnceLock::new();

/// Captures the crate's spans and events on this thread until the guard drops.
struct Scope {
    capture: Capture,
}

impl Scope {
    fn begin() -> Scope {
        let router = ROUTER.get_or_init(|| {
            let router = Router::default();
            // Another test binary's subscriber cannot be here: this is the only one.
            let _ = tracing::subscriber::set_global_default(router.clone());
            router
        });
        let capture = Capture::default();
        lock(&router.0.by_thread).insert(std::thread::current().id(), capture.clone());
        Scope { capture }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        if let Some(router) = ROUTER.get() {
            lock(&router.0.by_thread).remove(&std::thread::current().id());
        }
    }
}

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
