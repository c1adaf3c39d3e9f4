//! Batch reads and writes that never drop anything.
//!
//! DynamoDB limits a `BatchGetItem` to 100 keys and a `BatchWriteItem` to 25 requests,
//! rejects duplicate keys in one call, and may process only part of a call, returning the
//! rest as `UnprocessedKeys`/`UnprocessedItems` with HTTP 200 — invisible to the SDK's
//! retries. This module chunks, de-duplicates (or refuses duplicates), runs chunks with
//! bounded concurrency, retries the unprocessed part and transient errors with backoff and
//! full jitter until a deadline, and reports whatever is still left instead of dropping it.

/// DynamoDB: at most 100 keys per `BatchGetItem`.
pub const MAX_BATCH_GET: usize = 100;
/// DynamoDB: at most 25 put or delete requests per `BatchWriteItem`.
pub const MAX_BATCH_WRITE: usize = 25;

/// Capacity units of a batch response (one entry per table).
fn capacity_units(consumed: &[aws_sdk_dynamodb::types::ConsumedCapacity]) -> f64 {
    consumed.iter().filter_map(|c| c.capacity_units).sum()
}

/// The DynamoDB error code of a failed request, for traces.
#[cfg_attr(not(feature = "tracing"), allow(dead_code))]
fn error_code<E: aws_sdk_dynamodb::error::ProvideErrorMetadata>(e: &E) -> String {
    e.code().unwrap_or("Unknown").to_owned()
}

/// What one attempt of a batch chunk came to.
enum Attempt<O> {
    /// The deadline passed, before the attempt started (its backoff would reach it) or
    /// while its request was in flight: the chunk's requests are left unprocessed.
    Stopped,
    /// DynamoDB answered (its consumed capacity counted already), under the attempt's span.
    Answered(O, crate::trace::Span),
    /// A transient error: the whole chunk again.
    Retry,
    /// An error no retry helps: the chunk fails with it; the other chunks go on.
    Failed(crate::Error),
}

/// A `BatchGetItem` or `BatchWriteItem` answer: what it consumed.
trait BatchOutput {
    fn consumed(&self) -> &[aws_sdk_dynamodb::types::ConsumedCapacity];
}

impl BatchOutput for aws_sdk_dynamodb::operation::batch_get_item::BatchGetItemOutput {
    fn consumed(&self) -> &[aws_sdk_dynamodb::types::ConsumedCapacity] {
        self.consumed_capacity()
    }
}

impl BatchOutput for aws_sdk_dynamodb::operation::batch_write_item::BatchWriteItemOutput {
    fn consumed(&self) -> &[aws_sdk_dynamodb::types::ConsumedCapacity] {
        self.consumed_capacity()
    }
}

/// The attempts of one batch chunk, retried until its requests are settled or the
/// deadline passes: what they share and what they add up to.
struct Attempts<'a> {
    operation: &'static str,
    table: &'a str,
    policy: &'a crate::retry::RetryPolicy,
    deadline: &'a crate::retry::Deadline,
    /// Requests sent for the chunk.
    sent: u32,
    /// Capacity units DynamoDB reported consuming.
    consumed: f64,
}

impl<'a> Attempts<'a> {
    fn new(
        operation: &'static str,
        table: &'a str,
        policy: &'a crate::retry::RetryPolicy,
        deadline: &'a crate::retry::Deadline,
    ) -> Self {
        Attempts {
            operation,
            table,
            policy,
            deadline,
            sent: 0,
            consumed: 0.0,
        }
    }

    /// The next attempt, for a chunk of `items` requests: waits its turn (the first only
    /// checks the deadline: a chunk that waited for its turn past it is not started at all;
    /// a retry sleeps the policy's backoff), then sends what `request` builds under a
    /// request span, cut off by the deadline.
    async fn next<O, E, F>(
        &mut self,
        items: usize,
        request: impl FnOnce() -> Result<F, crate::Error>,
    ) -> Result<Attempt<O>, crate::Error>
    where
        F: std::future::Future<Output = Result<O, SdkError<E>>>,
        O: BatchOutput,
        E: aws_sdk_dynamodb::error::ProvideErrorMetadata + std::fmt::Debug,
        SdkError<E>: Into<aws_sdk_dynamodb::Error>,
    {
        use crate::trace::Instrument;
        let go_on = if self.sent == 0 {
            !self.deadline.passed()
        } else {
            self.deadline.backoff(self.policy, self.sent).await
        };
        if !go_on {
            return Ok(Attempt::Stopped);
        }
        self.sent += 1;
        let span = crate::trace::request(self.operation, self.sent);
        crate::trace::record(&span, "dynamo_model.items", items as u64);
        let request = request()?;
        let Ok(result) = self.deadline.run(request).instrument(span.clone()).await else {
            return Ok(Attempt::Stopped);
        };
        Ok(match result {
            Ok(output) => {
                let consumed = capacity_units(output.consumed());
                crate::trace::record(&span, "aws.dynamodb.consumed_capacity", consumed);
                self.consumed += consumed;
                Attempt::Answered(output, span)
            }
            Err(e) => {
                crate::trace::record(&span, "error.type", error_code(&e));
                if crate::retry::is_retryable(&e) {
                    Attempt::Retry
                } else {
                    Attempt::Failed(crate::Error::service(self.operation, self.table, e))
                }
            }
        })
    }
}

/// `$items` for the table in a batch request of `$db`'s client made with `$method`,
/// consumed capacity asked for, `$customize`'s hooks applied: the SDK's batch builders
/// share no trait.
macro_rules! batch_request {
    ($db:expr, $customize:expr, $method:ident, $items:expr) => {{
        let request = $db
            .client()
            .$method()
            .request_items($db.table_name(), $items)
            .return_consumed_capacity(aws_sdk_dynamodb::types::ReturnConsumedCapacity::Total);
        $customize.apply(request)
    }};
}

/// The SDK's error of a batch request.
type SdkError<E> =
    aws_sdk_dynamodb::error::SdkError<E, aws_sdk_dynamodb::config::http::HttpResponse>;

mod get;
mod write;

pub(crate) use get::read_keys;
pub use get::{BatchGet, BatchGetOutput};
#[allow(deprecated)]
pub use write::Progress;
pub use write::{BatchWrite, BatchWriteOutput, LoadProgress, WriteOp};

#[cfg(test)]
mod tests;
