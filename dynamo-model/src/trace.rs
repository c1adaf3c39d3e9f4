//! Tracing spans (feature `tracing`, on by default): one span per operation (a get, put,
//! update, delete, query, scan, scatter read, batch or transaction), one child span per
//! DynamoDB request inside queries and scans (each response), scatter-gather reads, batches
//! and transactions. A migration's requests are request spans inside the caller's span;
//! table management (`create_table`, `delete_table`, period tables) and
//! `collect_orphans` are not traced.
//!
//! Span and field names follow OpenTelemetry's semantic conventions for databases and
//! for AWS DynamoDB where they fit:
//!
//! | field | value |
//! | --- | --- |
//! | `db.system.name` | `aws.dynamodb` |
//! | `db.operation.name` | the DynamoDB API call: `PutItem`, `Query`, `BatchWriteItem`, ... |
//! | `aws.dynamodb.table_names` | the table |
//! | `aws.dynamodb.index_name` | the index a query reads |
//! | `aws.dynamodb.consistent_read`, `aws.dynamodb.scan_forward` | as sent |
//! | `aws.dynamodb.limit` | the `Limit` sent: each request's on its span; on the operation's, the page size when `page_size(n)` set one |
//! | `aws.dynamodb.consumed_capacity` | capacity units DynamoDB reported (when the call asks for them) |
//! | `aws.dynamodb.count`, `aws.dynamodb.scanned_count` | a query's or scan's counts |
//! | `dynamo_model.entity` | the entity (or collection) |
//! | `dynamo_model.items` | items read or written (a get that finds nothing: 0) |
//! | `dynamo_model.limit` | the most items a read returns (its `limit`) |
//! | `dynamo_model.cache` | a get through a [cache](dynamo_model::cache): `hit` (no request sent) or `miss` (a strongly consistent read) |
//! | `dynamo_model.requests` | DynamoDB requests the operation sent |
//! | `dynamo_model.retries` | requests sent again (unprocessed items, conflicts) |
//! | `dynamo_model.unprocessed` | items DynamoDB left unprocessed (per request) |
//! | `dynamo_model.key` | the item's key, only with [`Db::trace_keys`](crate::Db::trace_keys) |
//! | `error.type` | the error: a DynamoDB error code or the crate's error kind |
//!
//! Operation spans are `INFO` spans named `dynamodb`, request spans `DEBUG` spans named
//! `dynamodb.request` (with `db.operation.name` and `dynamo_model.attempt`). A stream
//! (`stream()` of a query, a scan or a scatter read) has its operation span too: its
//! requests are children of it, and it records the items yielded when the stream ends. Attribute
//! values are never recorded; keys (which can hold personal data) only when opted in.
//! With no subscriber listening a span costs one check of a cached flag, and fields are
//! recorded only on spans that are enabled.

use crate::Error;
use futures_util::Stream;
use std::task::Poll;

#[cfg(feature = "tracing")]
pub(crate) use tracing::{Instrument, Span};

/// A hot partition's warning (see `dynamo_model::insight`), as [`hot_partition`] emits it.
// Without the `tracing` feature nothing reads the fields.
#[cfg_attr(not(feature = "tracing"), allow(dead_code))]
pub(crate) struct HotPartitionEvent<'a> {
    pub(crate) table: &'a str,
    pub(crate) index: Option<&'a str>,
    pub(crate) entity: Option<&'a str>,
    pub(crate) template: Option<&'a str>,
    pub(crate) units: &'static str,
    pub(crate) rate: f64,
    pub(crate) shards: u32,
    pub(crate) message: &'a dyn std::fmt::Display,
}

/// A hot partition's warning: a `WARN` event with target `dynamo_model::insight`.
#[cfg(feature = "tracing")]
pub(crate) fn hot_partition(event: &HotPartitionEvent<'_>) {
    tracing::event!(
        target: "dynamo_model::insight",
        tracing::Level::WARN,
        aws.dynamodb.table_names = event.table,
        aws.dynamodb.index_name = event.index,
        dynamo_model.entity = event.entity,
        dynamo_model.template = event.template,
        dynamo_model.units = event.units,
        dynamo_model.rate = event.rate,
        dynamo_model.shards = event.shards,
        "{}",
        event.message
    );
}

/// A hot partition's warning: nothing without the `tracing` feature.
#[cfg(not(feature = "tracing"))]
pub(crate) fn hot_partition(_event: &HotPartitionEvent<'_>) {}

/// An operation span: `db.operation.name` `operation` on `table` for `entity`.
#[cfg(feature = "tracing")]
pub(crate) fn operation(operation: &'static str, table: &str, entity: &str) -> Span {
    tracing::info_span!(
        target: "dynamo_model",
        "dynamodb",
        otel.name = operation,
        db.system.name = "aws.dynamodb",
        db.operation.name = operation,
        aws.dynamodb.table_names = table,
        aws.dynamodb.index_name = tracing::field::Empty,
        aws.dynamodb.consistent_read = tracing::field::Empty,
        aws.dynamodb.limit = tracing::field::Empty,
        aws.dynamodb.scan_forward = tracing::field::Empty,
        aws.dynamodb.consumed_capacity = tracing::field::Empty,
        aws.dynamodb.count = tracing::field::Empty,
        aws.dynamodb.scanned_count = tracing::field::Empty,
        dynamo_model.entity = entity,
        dynamo_model.items = tracing::field::Empty,
        dynamo_model.limit = tracing::field::Empty,
        dynamo_model.cache = tracing::field::Empty,
        dynamo_model.requests = tracing::field::Empty,
        dynamo_model.retries = tracing::field::Empty,
        dynamo_model.key = tracing::field::Empty,
        error.type = tracing::field::Empty,
    )
}

/// A request span inside an operation: attempt `attempt` (from 1) of `operation`.
#[cfg(feature = "tracing")]
pub(crate) fn request(operation: &'static str, attempt: u32) -> Span {
    tracing::debug_span!(
        target: "dynamo_model",
        "dynamodb.request",
        db.operation.name = operation,
        dynamo_model.attempt = attempt,
        aws.dynamodb.limit = tracing::field::Empty,
        dynamo_model.items = tracing::field::Empty,
        dynamo_model.unprocessed = tracing::field::Empty,
        aws.dynamodb.consumed_capacity = tracing::field::Empty,
        error.type = tracing::field::Empty,
    )
}

/// Records `value` in `field` of `span` (nothing when no subscriber listens).
#[cfg(feature = "tracing")]
pub(crate) fn record(span: &Span, field: &'static str, value: impl tracing::Value) {
    if !span.is_disabled() {
        span.record(field, value);
    }
}

/// The current span, for a task spawned on its behalf.
#[cfg(feature = "tracing")]
pub(crate) fn current() -> Span {
    Span::current()
}

/// Records in the current span (the operation's, or a request's inside it).
#[cfg(feature = "tracing")]
pub(crate) fn record_current(field: &'static str, value: impl tracing::Value) {
    record(&Span::current(), field, value);
}

/// Records a read's limits in its operation span: the page size (the `Limit` its requests
/// send) and the most items it returns.
pub(crate) fn limits(span: &Span, page_size: Option<usize>, limit: Option<usize>) {
    if let Some(size) = page_size {
        record(span, "aws.dynamodb.limit", size as u64);
    }
    if let Some(limit) = limit {
        record(span, "dynamo_model.limit", limit as u64);
    }
}

/// Runs `s` inside `span` (each poll enters it, so the requests it sends are its
/// children), recording the error it yields and, when it ends or is dropped before its
/// end, the items it yielded.
pub(crate) fn stream<T, S>(span: Span, s: S) -> impl Stream<Item = Result<T, Error>> + Send
where
    S: Stream<Item = Result<T, Error>> + Send + 'static,
{
    TracedStream {
        inner: Box::pin(s),
        span,
        items: 0,
    }
}

/// See [`stream`].
struct TracedStream<S> {
    inner: std::pin::Pin<Box<S>>,
    span: Span,
    items: u64,
}

impl<T, S: Stream<Item = Result<T, Error>>> Stream for TracedStream<S> {
    type Item = Result<T, Error>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        #[cfg(feature = "tracing")]
        let _entered = this.span.enter();
        let next = this.inner.as_mut().poll_next(cx);
        match &next {
            Poll::Ready(Some(Ok(_))) => this.items += 1,
            Poll::Ready(Some(Err(e))) => record(&this.span, "error.type", &*e.kind()),
            Poll::Ready(None) | Poll::Pending => {}
        }
        next
    }
}

impl<S> Drop for TracedStream<S> {
    fn drop(&mut self) {
        record(&self.span, "dynamo_model.items", self.items);
    }
}

/// Records the key (`describe` renders it) when the caller opted in to keys in traces.
#[cfg(feature = "tracing")]
pub(crate) fn key(span: &Span, opted_in: bool, describe: impl FnOnce() -> Option<String>) {
    if opted_in
        && !span.is_disabled()
        && let Some(key) = describe()
    {
        span.record("dynamo_model.key", key.as_str());
    }
}

/// Runs `f` inside `span` and records its error kind, if it fails.
pub(crate) async fn traced<T>(
    span: Span,
    f: impl std::future::Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    let result = f.instrument(span.clone()).await;
    finish(&span, result)
}

/// [`traced`] for a write of one item: `dynamo_model.items` is 1 once it succeeded.
pub(crate) async fn traced_write<T>(
    span: Span,
    f: impl std::future::Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    let result = traced(span.clone(), f).await;
    if result.is_ok() {
        record(&span, "dynamo_model.items", 1u64);
    }
    result
}

/// Records the error kind of a failed operation and passes the result on.
#[cfg(feature = "tracing")]
pub(crate) fn finish<T>(span: &Span, result: Result<T, Error>) -> Result<T, Error> {
    if let Err(e) = &result
        && !span.is_disabled()
    {
        span.record("error.type", &*e.kind());
    }
    result
}

#[cfg(not(feature = "tracing"))]
mod off {
    /// Without the feature: a span that is nothing.
    #[derive(Debug, Clone, Default)]
    pub(crate) struct Span;

    /// Without the feature: futures run as they are.
    pub(crate) trait Instrument: Sized {
        fn instrument(self, _span: Span) -> Self {
            self
        }
    }

    impl<F: std::future::Future> Instrument for F {}

    /// A value that could be recorded.
    pub(crate) trait Value {}
    impl<T: ?Sized> Value for T {}
}

#[cfg(not(feature = "tracing"))]
pub(crate) use off::{Instrument, Span};

#[cfg(not(feature = "tracing"))]
pub(crate) fn operation(_operation: &'static str, _table: &str, _entity: &str) -> Span {
    Span
}

#[cfg(not(feature = "tracing"))]
pub(crate) fn request(_operation: &'static str, _attempt: u32) -> Span {
    Span
}

#[cfg(not(feature = "tracing"))]
pub(crate) fn current() -> Span {
    Span
}

#[cfg(not(feature = "tracing"))]
pub(crate) fn record<V: off::Value>(_span: &Span, _field: &'static str, _value: V) {}

#[cfg(not(feature = "tracing"))]
pub(crate) fn record_current<V: off::Value>(_field: &'static str, _value: V) {}

#[cfg(not(feature = "tracing"))]
pub(crate) fn key(_span: &Span, _opted_in: bool, _describe: impl FnOnce() -> Option<String>) {}

#[cfg(not(feature = "tracing"))]
pub(crate) fn finish<T>(_span: &Span, result: Result<T, Error>) -> Result<T, Error> {
    result
}
