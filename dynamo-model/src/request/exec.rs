//! The one way the crate sends a request. Every request (a user's get or write, a page of
//! a query or a scan, a batch chunk, a transaction, and the crate's own requests: history
//! and settlement reads, chunk reads and deletes, the orphan sweep, migration updates)
//! is built into a [`Sending`] and sent with [`exec!`] through [`Attempts`]:
//! - the record of its call ([`Call`], with its [`Policy`]) travels in the config bag for
//!   the `Db`'s observers (the cache's invalidation, the meter, insight), built only when
//!   the client has one;
//! - the retries its policy says (the SDK's; the SDK's except of an attempt that may have
//!   been applied; or the crate's own attempts with backoff);
//! - each attempt is a request span (`dynamodb.request`, numbered, with its items,
//!   consumed units or error kind) under the operation's deadline, and is classified:
//!   answered, worth sending again, refused, not sent, or cut off in flight;
//! - whether an attempt may have been applied without an answer, for the caller's
//!   settlement (a write's token or read, a transaction's token, a batch's unprocessed
//!   part).

use crate::Error;
use crate::call::{Call, Operation, Policy, Retry};
use crate::retry::{Deadline, RetryPolicy};
use crate::trace::{Instrument, Span};
use aws_sdk_dynamodb::error::ProvideErrorMetadata;

pub(crate) use super::watch::Watch;

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

    /// The items the answer holds, when that is what its span reports (a read's items;
    /// a batch reports the items it asked for).
    fn items(&self) -> Option<u64> {
        None
    }
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

reported!(aws_sdk_dynamodb::operation::transact_get_items::TransactGetItemsOutput);

macro_rules! reported_single {
    ($($output:ty),*) => {$(
        impl Reported for $output {
            fn consumed_units(&self) -> f64 {
                units(self.consumed_capacity.as_slice())
            }
        }
    )*};
}

impl Reported for aws_sdk_dynamodb::operation::get_item::GetItemOutput {
    fn consumed_units(&self) -> f64 {
        units(self.consumed_capacity.as_slice())
    }

    fn items(&self) -> Option<u64> {
        Some(u64::from(
            self.item.as_ref().is_some_and(|item| !item.is_empty()),
        ))
    }
}

reported_single!(
    aws_sdk_dynamodb::operation::put_item::PutItemOutput,
    aws_sdk_dynamodb::operation::update_item::UpdateItemOutput,
    aws_sdk_dynamodb::operation::delete_item::DeleteItemOutput
);

macro_rules! reported_read {
    ($($output:ty),*) => {$(
        impl Reported for $output {
            fn consumed_units(&self) -> f64 {
                units(self.consumed_capacity.as_slice())
            }

            fn items(&self) -> Option<u64> {
                Some(self.items().len() as u64)
            }
        }
    )*};
}

reported_read!(
    aws_sdk_dynamodb::operation::query::QueryOutput,
    aws_sdk_dynamodb::operation::scan::ScanOutput
);

/// One request on its way: its operation, the interceptor that carries its record and
/// watches its attempts, and the configuration its retry policy asks of the SDK.
pub(crate) struct Sending {
    operation: Operation,
    watch: Watch,
    config: Option<aws_sdk_dynamodb::config::Builder>,
    /// A read's `Limit`, for its span.
    limit: Option<i32>,
}

impl Sending {
    /// A request of `operation` on `db`'s client, sent under `policy`; `call` builds its
    /// record, called only when the client has an observer to read it.
    pub(crate) fn new<T: crate::Table>(
        db: &crate::Db<T>,
        operation: Operation,
        policy: Policy,
        call: impl FnOnce() -> Call,
    ) -> Sending {
        let call = db.has_observers().then(|| Call { policy, ..call() });
        let config = (policy.retry == Retry::SdkUnlessApplied).then(|| {
            aws_sdk_dynamodb::Config::builder().retry_classifier(super::watch::NoAmbiguousRetry)
        });
        Sending {
            operation,
            watch: Watch::new(call),
            config,
            limit: None,
        }
    }

    /// A read's `Limit`, recorded on its span.
    pub(crate) fn limit(mut self, limit: Option<i32>) -> Sending {
        self.limit = limit;
        self
    }

    /// A put, an update or a delete of the item of entity type `entity`, sent under
    /// `policy`, its record taken from the request: `item` is the item a put writes or the
    /// key of an update or a delete, `returned` its `ReturnValues`.
    pub(crate) fn write<T: crate::Table>(
        db: &crate::Db<T>,
        operation: Operation,
        policy: Policy,
        entity: &'static str,
        item: Option<&crate::Item>,
        returned: Option<&aws_sdk_dynamodb::types::ReturnValue>,
    ) -> Sending {
        Sending::new(db, operation, policy, || {
            let table = db.table_arc().clone();
            Call::write(operation, &T::SCHEMA, table, entity, item, returned)
        })
    }

    /// Gives each send of the request (the SDK's retries included) at most `timeout`.
    pub(crate) fn timeout(mut self, timeout: std::time::Duration) -> Sending {
        let timeouts = aws_sdk_dynamodb::config::timeout::TimeoutConfig::builder()
            .operation_timeout(timeout)
            .build();
        let config = self.config.take().unwrap_or_default();
        self.config = Some(config.timeout_config(timeouts));
        self
    }

    /// Whether an attempt so far may have been applied without an answer (a 5xx, a
    /// timeout, a lost connection, including the SDK's own retries).
    pub(crate) fn ambiguous(&self) -> bool {
        self.watch.ambiguous()
    }

    /// The interceptor [`exec!`] adds to the request.
    pub(crate) fn watch(&self) -> Watch {
        self.watch.clone()
    }

    /// The configuration [`exec!`] overrides the client's with, if any.
    pub(crate) fn config(&self) -> Option<aws_sdk_dynamodb::config::Builder> {
        self.config.clone()
    }

    /// Sends the request once (the SDK's retries included), in its request span: for an
    /// operation with no retries of its own. `request` is the request built by [`exec!`].
    pub(crate) async fn send<O, E, F>(&self, request: F) -> Result<O, SdkError<E>>
    where
        F: std::future::Future<Output = Result<O, SdkError<E>>>,
        O: Reported,
        E: ProvideErrorMetadata,
    {
        let unbounded = Deadline::unbounded();
        let asked = Asked {
            operation: self.operation.name(),
            number: 1,
            items: None,
            limit: self.limit,
        };
        match attempt(asked, &unbounded, request).await {
            Ok((sent, _)) => sent,
            // Not reached: an unbounded deadline cuts nothing off.
            Err(_) => Err(SdkError::timeout_error("cut off by its deadline")),
        }
    }
}

/// Sends an SDK fluent builder `request` as `sending` says (its record, its watch, its
/// retry configuration): the future of the SDK's `send()`, for [`Sending::send`] or
/// [`Attempts::next`].
macro_rules! exec {
    ($sending:expr, $request:expr) => {{
        let sending: &$crate::request::exec::Sending = &$sending;
        let operation = $request.customize().interceptor(sending.watch());
        match sending.config() {
            Some(config) => operation.config_override(config).send(),
            None => operation.send(),
        }
    }};
}
pub(crate) use exec;

/// What an attempt's span says before it is sent.
struct Asked {
    operation: &'static str,
    /// The attempt's number, from 1.
    number: u32,
    /// The items it asks for (a batch's).
    items: Option<usize>,
    /// A read's `Limit`.
    limit: Option<i32>,
}

/// One attempt: `request` in its request span, cut off at `deadline`; `Err(CutOff)` when
/// it was.
async fn attempt<O, E, F>(
    asked: Asked,
    deadline: &Deadline,
    request: F,
) -> Result<(Result<O, SdkError<E>>, Span), crate::retry::CutOff>
where
    F: std::future::Future<Output = Result<O, SdkError<E>>>,
    O: Reported,
    E: ProvideErrorMetadata,
{
    let span = crate::trace::request(asked.operation, asked.number);
    if let Some(items) = asked.items {
        crate::trace::record(&span, "dynamo_model.items", items as u64);
    }
    if let Some(limit) = asked.limit {
        crate::trace::record(&span, "aws.dynamodb.limit", limit);
    }
    let result = deadline.run(request).instrument(span.clone()).await?;
    match &result {
        Ok(output) => {
            let consumed = output.consumed_units();
            crate::trace::record(&span, "aws.dynamodb.consumed_capacity", consumed);
            if let Some(found) = output.items() {
                crate::trace::record(&span, "dynamo_model.items", found);
            }
        }
        Err(e) => crate::trace::record(&span, "error.type", e.code().unwrap_or("Unknown")),
    }
    Ok((result, span))
}

/// The attempts of one request (a batch chunk, a transaction, a read), sent one after
/// another under `policy`'s backoff and `deadline`.
pub(crate) struct Attempts<'a> {
    operation: Operation,
    policy: &'a RetryPolicy,
    deadline: &'a Deadline,
    sent: u32,
    consumed: f64,
    ambiguous: bool,
}

impl<'a> Attempts<'a> {
    pub(crate) fn new(
        operation: Operation,
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

    /// The error of a read-modify-write's read that the deadline stopped: `last`, the
    /// last failure, or the deadline itself when it cut the first attempt off.
    pub(crate) fn deadline_error(&self, table: &str, last: Option<Error>) -> Error {
        last.unwrap_or_else(|| Error::DeadlineExceeded {
            operation: self.operation.name(),
            table: table.to_owned(),
            client_request_token: None,
        })
    }

    /// Sends the next attempt of `request` (built again for each attempt with [`exec!`]
    /// and a [`Sending`] of the crate's retries: the SDK's request owns what it sends, and
    /// the record says what this attempt asks), after its backoff; `items` is recorded on
    /// its span.
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
        let asked = Asked {
            operation: self.operation.name(),
            number: self.sent,
            items,
            limit: None,
        };
        let sent = attempt(asked, self.deadline, request()?).await;
        let Ok((result, span)) = sent else {
            self.ambiguous = true;
            return Ok(Attempt::CutOff);
        };
        Ok(match result {
            Ok(output) => {
                self.consumed += output.consumed_units();
                Attempt::Answered(output, span)
            }
            Err(e) if crate::retry::is_retryable(&e) => {
                self.ambiguous |= crate::retry::may_have_applied(&e);
                Attempt::Retry(e)
            }
            Err(e) => Attempt::Refused(e),
        })
    }
}

#[cfg(test)]
mod tests;
