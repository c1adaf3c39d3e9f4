//! The one way the crate sends a request it retries itself (batches, transactions, the
//! reads inside a read-modify-write): each attempt waits its backoff, is a request span
//! (`dynamodb.request`, numbered, with its items, consumed units or error kind), runs
//! under the operation's deadline, and is classified: answered, worth sending again,
//! refused, not sent, or cut off in flight. The caller says what an answer means (the
//! unprocessed part of a batch, a transaction's cancellation reasons); the attempts
//! remember what every caller needs afterwards: how many were sent, the units DynamoDB
//! reported, and whether one may have been applied without an answer.

use crate::Error;
use crate::retry::{Deadline, RetryPolicy};
use crate::trace::{Instrument, Span};
use aws_sdk_dynamodb::error::ProvideErrorMetadata;

/// An SDK error of an operation whose error type is `E`.
pub(crate) type SdkError<E> =
    aws_sdk_dynamodb::error::SdkError<E, aws_sdk_dynamodb::config::http::HttpResponse>;

/// How one attempt ended.
pub(crate) enum Attempt<O, E> {
    /// Not sent: the deadline passed before it could start.
    NotSent,
    /// Cut off in flight by the deadline: DynamoDB may have applied it, or not.
    CutOff,
    /// DynamoDB answered: the output, and the attempt's span for what the caller records.
    Answered(O, Span),
    /// A transient failure (throttling, a 5xx, a lost connection): worth sending again.
    Retry(SdkError<E>),
    /// Any other failure: sending it again would fail again.
    Refused(SdkError<E>),
}

/// The units an answer reports (`ConsumedCapacity`), for the attempt's span and the total.
pub(crate) trait Reported {
    fn consumed_units(&self) -> f64;
}

fn units(consumed: &[aws_sdk_dynamodb::types::ConsumedCapacity]) -> f64 {
    consumed.iter().filter_map(|c| c.capacity_units).sum()
}

macro_rules! reported {
    ($($output:ty),*) => {$(
        impl Reported for $output {
            fn consumed_units(&self) -> f64 {
                units(self.consumed_capacity())
            }
        }
    )*};
}

reported!(
    aws_sdk_dynamodb::operation::batch_get_item::BatchGetItemOutput,
    aws_sdk_dynamodb::operation::batch_write_item::BatchWriteItemOutput,
    aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsOutput
);

impl Reported for aws_sdk_dynamodb::operation::get_item::GetItemOutput {
    fn consumed_units(&self) -> f64 {
        units(self.consumed_capacity.as_slice())
    }
}

/// The attempts of one request (a batch chunk, a transaction, a read), sent one after
/// another under `policy`'s backoff and `deadline`.
pub(crate) struct Attempts<'a> {
    operation: &'static str,
    policy: &'a RetryPolicy,
    deadline: &'a Deadline,
    sent: u32,
    consumed: f64,
    ambiguous: bool,
}

impl<'a> Attempts<'a> {
    pub(crate) fn new(
        operation: &'static str,
        policy: &'a RetryPolicy,
        deadline: &'a Deadline,
    ) -> Self {
        Attempts {
            operation,
            policy,
            deadline,
            sent: 0,
            consumed: 0.0,
            ambiguous: false,
        }
    }

    /// Attempts sent so far.
    pub(crate) fn sent(&self) -> u32 {
        self.sent
    }

    /// The units DynamoDB reported over the answered attempts.
    pub(crate) fn consumed(&self) -> f64 {
        self.consumed
    }

    /// Whether an attempt so far may have been applied without an answer (a 5xx, a
    /// timeout, a lost connection, a cut-off): giving up must then say the outcome is
    /// unknown. It stays set: a later attempt's throttling says nothing of an earlier one.
    pub(crate) fn ambiguous(&self) -> bool {
        self.ambiguous
    }

    /// Sends the next attempt of `request` (built again for each attempt: the SDK's
    /// request owns what it sends), after its backoff; `items` is recorded on its span.
    pub(crate) async fn next<O, E, F>(
        &mut self,
        items: Option<usize>,
        request: impl FnOnce() -> Result<F, Error>,
    ) -> Result<Attempt<O, E>, Error>
    where
        F: std::future::Future<Output = Result<O, SdkError<E>>>,
        O: Reported,
        E: ProvideErrorMetadata + std::fmt::Debug,
    {
        let go_on = if self.sent == 0 {
            !self.deadline.passed()
        } else {
            self.deadline.backoff(self.policy, self.sent).await
        };
        if !go_on {
            return Ok(Attempt::NotSent);
        }
        self.sent += 1;
        let span = crate::trace::request(self.operation, self.sent);
        if let Some(items) = items {
            crate::trace::record(&span, "dynamo_model.items", items as u64);
        }
        let request = request()?;
        let Ok(result) = self.deadline.run(request).instrument(span.clone()).await else {
            self.ambiguous = true;
            return Ok(Attempt::CutOff);
        };
        Ok(match result {
            Ok(output) => {
                let consumed = output.consumed_units();
                crate::trace::record(&span, "aws.dynamodb.consumed_capacity", consumed);
                self.consumed += consumed;
                Attempt::Answered(output, span)
            }
            Err(e) => {
                crate::trace::record(&span, "error.type", e.code().unwrap_or("Unknown"));
                if crate::retry::is_retryable(&e) {
                    self.ambiguous |= crate::retry::may_have_applied(&e);
                    Attempt::Retry(e)
                } else {
                    Attempt::Refused(e)
                }
            }
        })
    }
}
