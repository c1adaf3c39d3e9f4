//! Capturing the crate's tracing spans in tests: one global subscriber (installed once)
//! hands each span and event of the crate to the [`Capture`] of the test thread it
//! happens on. Every test that looks at spans goes through it: a subscriber scoped to one
//! test (`set_default`) races with the others' callsite registrations and can miss spans.

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
pub(crate) struct Captured {
    pub(crate) name: &'static str,
    pub(crate) metadata: &'static Metadata<'static>,
    pub(crate) parent: Option<u64>,
    pub(crate) fields: BTreeMap<String, String>,
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
pub(crate) struct Capture(Arc<Mutex<State>>);

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

    /// The events recorded (their fields, the message as `message`), in order.
    pub(crate) fn events(&self) -> Vec<BTreeMap<String, String>> {
        self.state().events.clone()
    }

    pub(crate) fn spans(&self) -> Vec<(u64, Captured)> {
        self.state()
            .spans
            .iter()
            .map(|(id, s)| (*id, s.clone()))
            .collect()
    }

    /// The operation spans of `operation`.
    pub(crate) fn operations(&self, operation: &str) -> Vec<(u64, Captured)> {
        self.named("dynamodb", operation)
    }

    /// The request spans of `operation`.
    pub(crate) fn requests(&self, operation: &str) -> Vec<(u64, Captured)> {
        self.named("dynamodb.request", operation)
    }

    /// The spans called `name` of `operation`.
    fn named(&self, name: &str, operation: &str) -> Vec<(u64, Captured)> {
        self.spans()
            .into_iter()
            .filter(|(_, s)| {
                s.name == name
                    && s.fields.get("db.operation.name").map(String::as_str) == Some(operation)
            })
            .collect()
    }

    /// Forgets what was captured so far.
    pub(crate) fn clear(&self) {
        let mut state = self.state();
        state.spans.clear();
        state.events.clear();
    }

    pub(crate) fn children(&self, parent: u64) -> Vec<Captured> {
        self.spans()
            .into_iter()
            .filter(|(_, s)| s.parent == Some(parent))
            .map(|(_, s)| s)
            .collect()
    }

    /// Every recorded value, of spans and events.
    pub(crate) fn everything(&self) -> Vec<String> {
        let state = self.state();
        state
            .spans
            .values()
            .flat_map(|s| s.fields.values().cloned())
            .chain(state.events.iter().flat_map(|e| e.values().cloned()))
            .collect()
    }

    /// Every recorded value, of spans and events, that contains `needle`.
    pub(crate) fn containing(&self, needle: &str) -> Vec<String> {
        self.everything()
            .into_iter()
            .filter(|v| v.contains(needle))
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
pub(crate) struct Scope {
    pub(crate) capture: Capture,
}

impl Scope {
    pub(crate) fn begin() -> Scope {
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

/// Captures the crate's spans on this thread until the returned scope drops.
pub(crate) fn capture() -> (Capture, Scope) {
    let scope = Scope::begin();
    (scope.capture.clone(), scope)
}

/// Captures the crate's spans on this thread (see [`capture`]) from before `setup` runs,
/// and forgets what `setup` did; with what it made.
pub(crate) async fn captured<T>(
    setup: impl std::future::Future<Output = crate::common::Res<T>>,
) -> crate::common::Res<(Capture, Scope, T)> {
    let (cap, scope) = capture();
    let made = setup.await?;
    cap.clear();
    Ok((cap, scope, made))
}

/// The id of the span named `name` among `spans`.
pub(crate) fn id_named(spans: &[(u64, Captured)], name: &str) -> Option<u64> {
    spans
        .iter()
        .find(|(_, s)| s.name == name)
        .map(|(id, _)| *id)
}

/// The value `span` recorded for `name`, or `<absent>`.
pub(crate) fn field<'a>(span: &'a Captured, name: &str) -> &'a str {
    span.fields
        .get(name)
        .map(String::as_str)
        .unwrap_or("<absent>")
}

/// The number `span` recorded for `name`.
#[track_caller]
pub(crate) fn number(span: &Captured, name: &str) -> u64 {
    span.fields
        .get(name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{name} in {span:?}"))
}

impl Drop for Scope {
    fn drop(&mut self) {
        if let Some(router) = ROUTER.get() {
            lock(&router.0.by_thread).remove(&std::thread::current().id());
        }
    }
}
