//! DynamoDB as the pager's [`Source`]: a `Query` or `Scan` whose expressions are rendered
//! once, sent once per response under a request span. Every paged read of the crate sends
//! its requests through it: typed queries and scans, reads merged from many partitions,
//! migrations and the sweep of orphan chunks (the pager's other sources are the fakes of
//! its tests).

use super::pager::{Ask, Response, Source};
use crate::call::shape::ReadAsked;
use crate::call::{Call, Operation as CallOperation, Policy};
use crate::request::BoxFuture;
use crate::request::Customize;
use crate::request::exec::{Sending, exec};
use crate::{Db, Error, Table};
use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::operation::query::{QueryError, QueryOutput};
use aws_sdk_dynamodb::operation::scan::builders::ScanFluentBuilder;
use aws_sdk_dynamodb::operation::scan::{ScanError, ScanOutput};
use aws_sdk_dynamodb::types::{AttributeValue, ReturnConsumedCapacity};
use std::collections::HashMap;

/// The expressions every request of a read sends, rendered once.
#[derive(Debug, Clone, Default)]
pub(crate) struct Expressions {
    /// `KeyConditionExpression` (a query's; a scan has none).
    pub(crate) key_condition: String,
    pub(crate) filter: Option<String>,
    pub(crate) projection: Option<String>,
    pub(crate) names: Option<HashMap<String, String>>,
    pub(crate) values: Option<HashMap<String, AttributeValue>>,
}

/// `ExpressionAttributeNames` and `ExpressionAttributeValues`, as `Placeholders::finish`
/// gives them.
type Placeholders = (
    Option<HashMap<String, String>>,
    Option<HashMap<String, AttributeValue>>,
);

impl Expressions {
    /// Expressions with a filter (and its placeholders) and no projection.
    pub(crate) fn filtered(filter: Option<String>, (names, values): Placeholders) -> Self {
        Expressions {
            filter,
            names,
            values,
            ..Expressions::default()
        }
    }
}

/// A `Query` of a table or index.
#[derive(Clone)]
pub(crate) struct QueryOp {
    pub(crate) index: Option<&'static str>,
    /// `ScanIndexForward`.
    pub(crate) forward: bool,
    pub(crate) customize: Customize<QueryFluentBuilder>,
}

/// A `Scan` of a table or index.
#[derive(Clone, Default)]
pub(crate) struct ScanOp {
    pub(crate) index: Option<&'static str>,
    pub(crate) customize: Customize<ScanFluentBuilder>,
}

/// The operation a [`Request`] sends: [`QueryOp`] or [`ScanOp`].
pub(crate) trait Operation: Send + Sync + 'static {
    /// The operation's name, for spans and errors.
    const NAME: &'static str;
    /// The SDK's fluent builder of the operation.
    type Builder;
    /// What DynamoDB answers.
    type Output: Into<OutputParts> + crate::request::exec::Reported;
    /// The SDK's error of the operation.
    type Error: aws_sdk_dynamodb::error::ProvideErrorMetadata;
    /// The request of one `ask` rendered into the SDK's builder, customized.
    fn build<X: Table>(&self, request: &Request<X, Self>, ask: Ask) -> Self::Builder
    where
        Self: Sized;
    /// The operation in a call's record.
    const CALL: CallOperation;
    /// The record of one request's call, as `builder` will send it.
    fn call(builder: &Self::Builder, reads: &Reads) -> Call;
    /// Sends a built request as `sending` says (`crate::request::exec`).
    fn send(
        builder: Self::Builder,
        sending: &Sending,
    ) -> impl std::future::Future<Output = Result<Self::Output, SdkError<Self::Error, HttpResponse>>>
    + Send
    + 'static;
}

/// The members of a `QueryOutput` or `ScanOutput` a [`Response`] is made of.
pub(crate) struct OutputParts {
    items: Option<Vec<crate::Item>>,
    last_key: Option<crate::Item>,
    consumed: Option<aws_sdk_dynamodb::types::ConsumedCapacity>,
    scanned: i32,
}

/// A read prepared once and sent once per response.
pub(crate) struct Request<X: Table, O> {
    pub(crate) db: Db<X>,
    pub(crate) expressions: Expressions,
    pub(crate) consistent: bool,
    pub(crate) operation: O,
    /// What the record of each request's call says of the read (`crate::call`).
    pub(crate) reads: Reads,
}

/// What a read knows of the items it reads, for the record of its calls.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reads {
    /// The entity type read, when one entity's items are read.
    pub(crate) entity: Option<&'static str>,
    /// The partition key a query reads, as text (several attributes joined with ` | `).
    pub(crate) partition: Option<String>,
}

impl Reads {
    /// A read of entity type `entity`'s items.
    pub(crate) fn of(entity: &'static str) -> Reads {
        Reads {
            entity: Some(entity),
            partition: None,
        }
    }
}

impl<X: Table, O: Operation> Request<X, O> {
    /// The request of one `ask` as the SDK's builder (what `params()` shows).
    pub(crate) fn builder(&self, ask: Ask) -> O::Builder {
        self.operation.build(self, ask)
    }
}

impl<X: Table, O: Operation> Source for Request<X, O>
where
    SdkError<O::Error, HttpResponse>: Into<aws_sdk_dynamodb::Error>,
{
    fn fetch(&self, ask: Ask) -> BoxFuture<'_, Result<Response, Error>> {
        let (operation, table, consistent) = (O::NAME, self.db.table_name(), self.consistent);
        let limit = ask.limit;
        let builder = self.builder(ask);
        let sending = Sending::new(&self.db, O::CALL, Policy::READ, || {
            O::call(&builder, &self.reads)
        })
        .limit(limit);
        let sent = O::send(builder, &sending);
        Box::pin(async move {
            let out: OutputParts = sending
                .send(sent)
                .await
                .map_err(|e| Error::service(operation, table, e))?
                .into();
            Ok(Response::from_output(
                out.items,
                out.last_key,
                out.consumed.as_ref(),
                out.scanned,
                consistent,
            ))
        })
    }
}

impl QueryOp {
    /// A query of the table itself, in ascending sort-key order, as sent.
    pub(crate) fn of_table() -> Self {
        QueryOp {
            index: None,
            forward: true,
            customize: Customize::default(),
        }
    }
}

/// The key condition of an input being built (a scan has none), for a read's shape.
trait KeyConditionOf {
    fn key_condition_of(&self) -> Option<&str>;
}

impl KeyConditionOf for aws_sdk_dynamodb::operation::query::builders::QueryInputBuilder {
    fn key_condition_of(&self) -> Option<&str> {
        self.get_key_condition_expression().as_deref()
    }
}

impl KeyConditionOf for aws_sdk_dynamodb::operation::scan::builders::ScanInputBuilder {
    fn key_condition_of(&self) -> Option<&str> {
        None
    }
}

/// Implements [`Operation`] for `$op`, sent with `client.$method()`: first what every
/// read sends (the table, the expressions, the consistency, the ask's `Limit` and start,
/// capacity reporting), then what `$extra` adds to builder `$b` for this operation (with
/// the ask's `$segment` of a parallel scan); the caller's hooks last.
macro_rules! operation {
    ($op:ty, $name:literal, $method:ident, $call_op:ident, $builder:ty, $output:ty, $error:ty,
     |$this:ident, $request:ident, $segment:ident, $b:ident| $extra:expr) => {
        impl Operation for $op {
            const NAME: &'static str = $name;
            const CALL: CallOperation = CallOperation::$call_op;
            type Builder = $builder;
            type Output = $output;
            type Error = $error;

            fn build<X: Table>(&self, request: &Request<X, Self>, ask: Ask) -> $builder {
                let e = &request.expressions;
                // The segment first: the start key moves into the builder.
                let segment = ask.segment;
                let $b = request
                    .db
                    .client()
                    .$method()
                    .table_name(request.db.table_name())
                    .set_filter_expression(e.filter.clone())
                    .set_projection_expression(e.projection.clone())
                    .set_expression_attribute_names(e.names.clone())
                    .set_expression_attribute_values(e.values.clone())
                    .consistent_read(request.consistent)
                    .set_limit(ask.limit)
                    .set_exclusive_start_key(ask.start)
                    .return_consumed_capacity(ReturnConsumedCapacity::Total);
                let ($this, $request, $segment) = (self, request, segment);
                self.customize.apply($extra)
            }

            fn call(builder: &$builder, reads: &Reads) -> Call {
                let input = builder.as_input();
                let asked = ReadAsked {
                    operation: CallOperation::$call_op,
                    table: input.get_table_name().as_deref(),
                    index: input.get_index_name().as_deref(),
                    key_condition: input.key_condition_of(),
                    filter: input.get_filter_expression().as_deref(),
                    projection: input.get_projection_expression().as_deref(),
                    attributes_to_get: input.get_attributes_to_get().is_some(),
                    select: input.get_select().as_ref(),
                    consistent: input.get_consistent_read() == &Some(true),
                };
                Call {
                    entity: reads.entity,
                    partition: reads.partition.clone(),
                    ..asked.call()
                }
            }

            fn send(
                builder: $builder,
                sending: &Sending,
            ) -> impl std::future::Future<Output = Result<$output, SdkError<$error, HttpResponse>>>
            + Send
            + 'static {
                exec!(sending, builder)
            }
        }

        impl From<$output> for OutputParts {
            fn from(out: $output) -> Self {
                OutputParts {
                    items: out.items,
                    last_key: out.last_evaluated_key,
                    consumed: out.consumed_capacity,
                    scanned: out.scanned_count,
                }
            }
        }
    };
}

operation!(
    QueryOp,
    "Query",
    query,
    Query,
    QueryFluentBuilder,
    QueryOutput,
    QueryError,
    |op, request, _segment, b| b
        .set_index_name(op.index.map(str::to_owned))
        .key_condition_expression(&request.expressions.key_condition)
        .scan_index_forward(op.forward)
);

operation!(
    ScanOp,
    "Scan",
    scan,
    Scan,
    ScanFluentBuilder,
    ScanOutput,
    ScanError,
    |op, _request, segment, b| b
        .set_index_name(op.index.map(str::to_owned))
        .set_segment(segment.map(|s| s.0 as i32))
        .set_total_segments(segment.map(|s| s.1 as i32))
);
