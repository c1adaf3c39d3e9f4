//! The record of a call: what was asked ([`Call`]) and what came back ([`Answer`]), for the
//! observers of a `Db` (the item cache, the capacity meter, the insight into hot
//! partitions and read shapes).
//!
//! An operation that knows what it sends (the entity, the key template, the keys, the
//! index, the items and their sizes) attaches its [`Call`] to the request
//! ([`Call::attach`]): the record travels in the SDK's config bag, where every observer
//! reads it. A request the crate did not build (a raw call on `Db::client()`) has no record:
//! the one interceptor that observes ([`Observing`]) writes one from its input, in
//! `call::sdk`, the only module that reads SDK inputs and outputs. Observers implement
//! [`Observer`] and never see an SDK type but DynamoDB's `ConsumedCapacity`. For an
//! observer that asks for them ([`Observer::wants_inputs`]), each attempt's HTTP request
//! carries a copy of its SDK input and its record ([`Sent`]), for the client's connector:
//! the test double's record of what was sent.

mod sdk;
pub(crate) mod shape;
#[cfg(test)]
mod tests;

use crate::{Item, RawKey, TableSchema};
use aws_sdk_dynamodb::config::interceptors::{
    BeforeSerializationInterceptorContextMut, BeforeTransmitInterceptorContextMut,
    FinalizerInterceptorContextRef,
};
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::error::BoxError;
use aws_sdk_dynamodb::types::{AttributeValue, ConsumedCapacity};
use aws_smithy_runtime_api::client::retries::RequestAttempts;
use aws_smithy_types::config_bag::{Storable, StoreReplace};
use std::any::Any;
use std::borrow::Cow;
use std::sync::Arc;

/// A DynamoDB call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Operation {
    GetItem,
    PutItem,
    UpdateItem,
    DeleteItem,
    Query,
    Scan,
    BatchGetItem,
    BatchWriteItem,
    TransactGetItems,
    TransactWriteItems,
    /// A PartiQL call (`ExecuteStatement`, `BatchExecuteStatement`, `ExecuteTransaction`):
    /// its keys are in its text.
    Statement,
}

impl Operation {
    /// The API name, e.g. `PutItem` (`ExecuteStatement` for every PartiQL call).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Operation::GetItem => "GetItem",
            Operation::PutItem => "PutItem",
            Operation::UpdateItem => "UpdateItem",
            Operation::DeleteItem => "DeleteItem",
            Operation::Query => "Query",
            Operation::Scan => "Scan",
            Operation::BatchGetItem => "BatchGetItem",
            Operation::BatchWriteItem => "BatchWriteItem",
            Operation::TransactGetItems => "TransactGetItems",
            Operation::TransactWriteItems => "TransactWriteItems",
            Operation::Statement => "ExecuteStatement",
        }
    }

    /// Whether the call is charged read units.
    pub(crate) fn reads(self) -> bool {
        matches!(
            self,
            Operation::GetItem
                | Operation::Query
                | Operation::Scan
                | Operation::BatchGetItem
                | Operation::TransactGetItems
        )
    }
}

/// What a call does to one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    Get,
    Put,
    Update,
    Delete,
    /// A transaction's condition check: read, not written.
    Check,
}

/// One item a call reads or writes.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// The table it is in.
    pub(crate) table: Arc<str>,
    pub(crate) action: Action,
    /// Its table key as text (a number key by its digits); `None` when the request's key
    /// lacks the schema's key attributes.
    pub(crate) key: Option<RawKey>,
    /// Its entity type, when the operation knows it or the item carries it.
    pub(crate) entity: Option<Arc<str>>,
    /// The size of the item a put writes ([`item_size`](crate::item_size)).
    pub(crate) size: Option<usize>,
    /// The global indexes the put item is in, each with its partition key as text
    /// (several attributes joined with ` | `).
    pub(crate) global: Vec<(&'static str, String)>,
    /// How many local indexes the put item is in (written on the table's partition).
    pub(crate) local: usize,
}

impl Target {
    /// An item addressed by its key alone (a get, an update, a delete, a check).
    pub(crate) fn by_key(
        schema: &TableSchema,
        table: Arc<str>,
        action: Action,
        key: Option<&Item>,
    ) -> Target {
        Target {
            table,
            action,
            key: key.and_then(|k| key_text(schema, k)),
            entity: None,
            size: None,
            global: Vec::new(),
            local: 0,
        }
    }

    /// An item a put writes whole: its key, size, type and index partitions.
    pub(crate) fn put(schema: &TableSchema, table: Arc<str>, item: &Item) -> Target {
        let text = |name: &str| text(item.get(name));
        let global = schema
            .indexes
            .iter()
            .filter(|i| i.kind == crate::schema::IndexKind::Global)
            .filter_map(|index| {
                let parts: Option<Vec<String>> = index.pk.iter().map(|a| text(a.name)).collect();
                Some((index.name, parts.filter(|p| !p.is_empty())?.join(" | ")))
            })
            .collect();
        let local = schema
            .indexes
            .iter()
            .filter(|i| {
                i.kind == crate::schema::IndexKind::Local
                    && i.sk.iter().all(|a| item.contains_key(a.name))
            })
            .count();
        Target {
            table,
            action: Action::Put,
            key: key_text(schema, item),
            entity: text(schema.entity_type).map(Arc::from),
            size: Some(crate::item_size(item)),
            global,
            local,
        }
    }

    /// An item addressed by its key, of entity type `entity` when the operation knows it.
    pub(crate) fn key(
        table: Arc<str>,
        action: Action,
        entity: Option<&'static str>,
        key: &RawKey,
    ) -> Target {
        Target {
            table,
            action,
            key: Some(key.clone()),
            entity: entity.map(Arc::from),
            size: None,
            global: Vec::new(),
            local: 0,
        }
    }

    /// This target, of entity type `entity` (known to the operation).
    pub(crate) fn of(mut self, entity: &'static str) -> Target {
        self.entity = Some(Arc::from(entity));
        self
    }
}

/// Whether a write returns the whole item (`ALL_NEW`, `ALL_OLD`).
pub(crate) fn returns_whole(rv: Option<&aws_sdk_dynamodb::types::ReturnValue>) -> bool {
    use aws_sdk_dynamodb::types::ReturnValue;
    matches!(rv, Some(ReturnValue::AllNew | ReturnValue::AllOld))
}

/// A key attribute's value as text: a string, or a number's digits.
pub(crate) fn text(value: Option<&AttributeValue>) -> Option<String> {
    match value? {
        AttributeValue::S(s) => Some(s.clone()),
        AttributeValue::N(n) => Some(n.clone()),
        _ => None,
    }
}

/// The table key of an item or a key map, as text.
pub(crate) fn key_text(schema: &TableSchema, item: &Item) -> Option<RawKey> {
    let pk = text(item.get(schema.pk.name))?;
    let sk = match schema.sk {
        Some(attr) => Some(text(item.get(attr.name))?),
        None => None,
    };
    Some(RawKey { pk, sk })
}

/// How the send path retries a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Retry {
    /// The SDK's retries: a read, or a write whose retry is recognised (its write token,
    /// or a condition that fails against its own write and is read again).
    Sdk,
    /// The SDK's retries, never of an attempt that may have been applied: a write that
    /// stores no token, whose retry could apply it twice.
    SdkUnlessApplied,
    /// The crate's own attempts, with backoff under the operation's deadline (batches,
    /// transactions, the reads of a read-modify-write), each with the SDK's retries.
    Crate,
}

/// What settles a request whose answer was lost (an attempt that may have been applied).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Settle {
    /// Nothing to settle: a read, which changes nothing.
    Nothing,
    /// A single-item write: its token on the item, or a strongly consistent read of it.
    ReadItem,
    /// A conditional write of the crate's own protocols (a migration's update, a chunk's
    /// delete): its condition holds only once, and a failed one is read again.
    Condition,
    /// A transaction: sent again with its `ClientRequestToken`.
    Token,
    /// A batch of idempotent writes or reads: what is unconfirmed is sent again or
    /// reported unprocessed.
    Resend,
}

/// How a request is sent: its retries and what settles a lost answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Policy {
    pub(crate) retry: Retry,
    pub(crate) settle: Settle,
}

impl Policy {
    const fn new(retry: Retry, settle: Settle) -> Policy {
        Policy { retry, settle }
    }

    /// A read: the SDK's retries, nothing to settle.
    pub(crate) const READ: Policy = Policy::new(Retry::Sdk, Settle::Nothing);

    /// A read the crate retries itself (a read-modify-write's read).
    pub(crate) const RETRIED_READ: Policy = Policy::new(Retry::Crate, Settle::Nothing);

    /// A batch chunk: the crate's attempts, the unconfirmed part sent again.
    pub(crate) const BATCH: Policy = Policy::new(Retry::Crate, Settle::Resend);

    /// A transaction: the crate's attempts, each with the same token.
    pub(crate) const TRANSACTION: Policy = Policy::new(Retry::Crate, Settle::Token);

    /// A conditional write of the crate's own protocols (a chunk's delete, a migration's
    /// update): its condition holds once, a failed one is read again.
    pub(crate) const CONDITIONAL: Policy = Policy::new(Retry::Sdk, Settle::Condition);

    /// A single-item write of a user: settled by its token or a read of the item.
    /// `token`: the write stores a token, so the SDK may retry an ambiguous attempt.
    pub(crate) fn write(token: bool) -> Policy {
        let retry = if token {
            Retry::Sdk
        } else {
            Retry::SdkUnlessApplied
        };
        Policy::new(retry, Settle::ReadItem)
    }
}

/// What a call asked, as the operation that sent it knew it.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub(crate) operation: Operation,
    /// How it is sent (set by the send path of the request layer): what a reader of
    /// the record learns of its retries and settlement.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) policy: Policy,
    /// The table of a single-item call, a query or a scan; the `Db`'s table for a batch or
    /// a transaction (its items name their own, in [`targets`](Self::targets)).
    pub(crate) table: Arc<str>,
    /// The index a query or a scan reads (`None`: the table).
    pub(crate) index: Option<Cow<'static, str>>,
    /// The entity type a query or a scan reads, when one entity's partition is read.
    pub(crate) entity: Option<&'static str>,
    /// The partition key a query reads, as text (several attributes joined with ` | `).
    pub(crate) partition: Option<String>,
    /// The read's shape (its expressions with the values left out), for `explain()`.
    pub(crate) shape: Option<u64>,
    /// A strongly consistent read.
    pub(crate) consistent: bool,
    /// A read charged by whole items the client does not see: a projection,
    /// `AttributesToGet`, a `Select` of `COUNT` or `SPECIFIC_ATTRIBUTES`.
    pub(crate) projected: bool,
    /// A read whose items come back whole (no projection, no `Select`): their sizes are
    /// the entity's.
    pub(crate) whole_items: bool,
    /// A write returning the whole item (`ALL_NEW`, `ALL_OLD`).
    pub(crate) returns_item: bool,
    /// The items read or written, by key.
    pub(crate) targets: Vec<Target>,
    /// Keys asked for by a `BatchGetItem` or a `TransactGetItems` (also in `targets`
    /// when they are of a table whose schema is known).
    pub(crate) keys: usize,
    /// A write whose keys are not known (a PartiQL statement that is not a `SELECT`).
    #[cfg_attr(not(feature = "cache"), allow(dead_code))]
    pub(crate) writes_unknown_keys: bool,
}

impl Call {
    /// A call of `operation` on `table`, with nothing else known yet.
    pub(crate) fn new(operation: Operation, table: Arc<str>) -> Call {
        Call {
            operation,
            policy: Policy::READ,
            table,
            index: None,
            entity: None,
            partition: None,
            shape: None,
            consistent: false,
            projected: false,
            whole_items: true,
            returns_item: false,
            targets: Vec::new(),
            keys: 0,
            writes_unknown_keys: false,
        }
    }

    /// A call on one item.
    pub(crate) fn single(operation: Operation, target: Target) -> Call {
        let table = target.table.clone();
        Call {
            targets: vec![target],
            ..Call::new(operation, table)
        }
    }

    /// A put, an update or a delete of an item of entity type `entity`, as the request
    /// holds it: the item a put writes, the key of an update or a delete.
    pub(crate) fn write(
        operation: Operation,
        schema: &TableSchema,
        table: Arc<str>,
        entity: &'static str,
        item: Option<&Item>,
        returned: Option<&aws_sdk_dynamodb::types::ReturnValue>,
    ) -> Call {
        let target = match (operation, item) {
            (Operation::PutItem, Some(item)) => Target::put(schema, table, item),
            (Operation::PutItem, None) => Target::by_key(schema, table, Action::Put, None),
            (Operation::DeleteItem, key) => Target::by_key(schema, table, Action::Delete, key),
            (_, key) => Target::by_key(schema, table, Action::Update, key),
        };
        Call {
            returns_item: returns_whole(returned),
            ..Call::single(operation, target.of(entity))
        }
    }
}

/// The record in the config bag.
#[derive(Debug, Clone)]
pub(crate) struct Recorded(pub(crate) Arc<Call>);

impl Storable for Recorded {
    type Storer = StoreReplace<Recorded>;
}

/// One attempt of a call as sent, on its HTTP request (for an observer that
/// [wants the inputs](Observer::wants_inputs)).
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "double"), allow(dead_code))]
pub(crate) struct Sent {
    /// The record of the call (`None` for calls no observer watches: table management).
    pub(crate) call: Option<Arc<Call>>,
    /// A copy of the SDK input (`()` for a call that is not an item operation or PartiQL).
    pub(crate) input: Arc<dyn Any + Send + Sync>,
    /// Which attempt of the request (1, then the SDK's retries).
    pub(crate) attempt: u32,
}

impl Storable for Sent {
    type Storer = StoreReplace<Sent>;
}

/// What DynamoDB answered.
#[derive(Debug)]
pub(crate) struct Answer<'a> {
    /// `ConsumedCapacity` as reported (`None`: not reported).
    pub(crate) consumed: Option<&'a [ConsumedCapacity]>,
    pub(crate) returned: Returned<'a>,
}

/// The items an answer carries.
#[derive(Debug)]
pub(crate) enum Returned<'a> {
    /// A `GetItem`'s item; the attributes a put, an update or a delete returned.
    One(Option<&'a Item>),
    /// A `Query`'s or a `Scan`'s response: its items, what it evaluated and what matched.
    Items {
        items: &'a [Item],
        scanned: u64,
        count: u64,
    },
    /// A `BatchGetItem`: the items found, by table, and the keys left unprocessed.
    Found {
        items: Vec<(&'a str, &'a Item)>,
        unprocessed: usize,
    },
    /// A `TransactGetItems`: each get's item, in order.
    Each(Vec<Option<&'a Item>>),
    /// A `BatchWriteItem`: the requests left unprocessed (a put's item, `None` for a
    /// delete).
    Unprocessed(Vec<Option<&'a Item>>),
    /// Nothing (a transaction of writes, a statement).
    Nothing,
}

/// How a call ended.
#[derive(Debug)]
pub(crate) enum Outcome<'a> {
    Answered(Answer<'a>),
    /// A single-item write refused by its condition (it consumed write units).
    Refused,
    /// Any other failure (no figures).
    Failed,
}

/// Something that watches the calls of a `Db`: reads its [`Call`] records.
pub(crate) trait Observer: std::fmt::Debug + Send + Sync + 'static {
    /// Whether the observer needs DynamoDB's `ConsumedCapacity` with its per-index
    /// breakdown (asked for on calls that did not choose a level).
    fn wants_capacity(&self) -> bool {
        false
    }

    /// Whether each attempt's HTTP request must carry a copy of its SDK input and its
    /// record ([`Sent`]), for the client's connector to read.
    fn wants_inputs(&self) -> bool {
        false
    }

    /// Before the request is sent.
    fn before(&self, _call: &Call) {}

    /// Once the call completed or failed (after the SDK's own retries).
    fn after(&self, call: &Call, outcome: &Outcome<'_>);
}

/// The interceptor of one observer, on a `Db`'s client.
#[derive(Debug)]
pub(crate) struct Observing<O> {
    observer: O,
    schema: &'static TableSchema,
}

impl<O: Observer> Observing<O> {
    /// `observer` on a client whose calls are of tables of `schema`.
    pub(crate) fn new(observer: O, schema: &'static TableSchema) -> Self {
        Observing { observer, schema }
    }
}

/// The name of every [`Observing`] interceptor.
const OBSERVING: &str = "dynamo_model::call::Observing";

/// Whether `client` has an observer of calls: a `Db` on it builds their records.
pub(crate) fn observed(client: &aws_sdk_dynamodb::Client) -> bool {
    client
        .config()
        .interceptors()
        .any(|i| i.name() == OBSERVING)
}

impl<O: Observer> Intercept for Observing<O> {
    fn name(&self) -> &'static str {
        OBSERVING
    }

    fn modify_before_serialization(
        &self,
        context: &mut BeforeSerializationInterceptorContextMut<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if self.observer.wants_capacity() {
            sdk::ask_capacity(context.input_mut());
        }
        if self.observer.wants_inputs() {
            // Copied now: the SDK serializes the input away before the attempts.
            let input = sdk::copy_input(context.input_mut());
            let sent = Sent {
                call: None,
                input,
                attempt: 1,
            };
            cfg.interceptor_state().store_put(sent);
        }
        let call = match cfg.load::<Recorded>() {
            Some(recorded) => recorded.0.clone(),
            None => {
                // A request the crate did not build: its record, written once for every
                // observer.
                let Some(call) = sdk::call(self.schema, context.input_mut()) else {
                    return Ok(());
                };
                let call = Arc::new(call);
                cfg.interceptor_state().store_put(Recorded(call.clone()));
                call
            }
        };
        self.observer.before(&call);
        Ok(())
    }

    fn modify_before_transmit(
        &self,
        context: &mut BeforeTransmitInterceptorContextMut<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if let Some(sent) = cfg.load::<Sent>() {
            let sent = Sent {
                call: cfg.load::<Recorded>().map(|r| r.0.clone()),
                attempt: cfg.load::<RequestAttempts>().map_or(1, |a| a.attempts()),
                input: sent.input.clone(),
            };
            context.request_mut().add_extension(sent);
        }
        Ok(())
    }

    fn read_after_execution(
        &self,
        context: &FinalizerInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let Some(Recorded(call)) = cfg.load::<Recorded>() else {
            return Ok(());
        };
        let outcome = sdk::outcome(context.output_or_error());
        self.observer.after(call, &outcome);
        Ok(())
    }
}
