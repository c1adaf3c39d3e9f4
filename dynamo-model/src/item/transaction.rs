//! The write transaction: its builder and the one loop that sends every
//! `TransactWriteItems` of the crate (the user's transactions, history writes, the puts,
//! updates and deletes of entities with unique values). Public as
//! [`dynamo_model::transact::TransactWrite`].

use crate::batch::TableRef;
use crate::call::{Action, Call, Operation as CallOperation, Policy, Target as CallTarget};
use crate::error::{CancelReason, CancelledOperation};
use crate::expr::Placeholders;
use crate::item::{PreparedWrite, and, is_entity, item_exists};
use crate::request::Customize;
use crate::request::exec::{Attempt, Attempts};
use crate::request::exec::{Sending, exec};
use crate::retry::{Deadline, RetryPolicy};
use crate::{Condition, Db, Entity, Error, Key, Table};
use aws_sdk_dynamodb::operation::transact_write_items::builders::TransactWriteItemsFluentBuilder;
use aws_sdk_dynamodb::operation::transact_write_items::{
    TransactWriteItemsError, TransactWriteItemsInput,
};
use aws_sdk_dynamodb::types::{
    ConditionCheck, Delete as TxDelete, Put as TxPut, ReturnValuesOnConditionCheckFailure,
    TransactWriteItem, Update as TxUpdate,
};

/// DynamoDB: at most 100 operations per transaction.
pub const MAX_TRANSACTION_ITEMS: usize = 100;

impl CancelledOperation {
    /// Decodes the current item, when there is one. An entity with encrypted fields
    /// fails with [`EncryptionError::NoKeys`](crate::encrypt::EncryptionError::NoKeys)
    /// here: decode the item with [`Db::decode`](crate::Db::decode).
    pub fn current<E: Entity>(&self) -> Option<Result<E, Error>> {
        self.current
            .as_ref()
            .map(|item| crate::entity::decode_keyless::<E>(item.as_ref().clone()))
    }
}

pub(super) enum Kind {
    Put,
    Update,
    Delete,
    Check,
}

struct Operation {
    kind: Kind,
    prepared: PreparedWrite,
    /// The table it writes: the transaction's own, or the table of the `Db` the
    /// operation was built on.
    table: TableRef,
}

/// A `TransactWriteItems` request; see [`Db::transact_write`].
#[must_use = "a transaction does nothing until it is sent or awaited"]
pub struct TransactWrite<T: Table> {
    db: Db<T>,
    operations: Vec<Result<Operation, Error>>,
    token: Option<String>,
    policy: RetryPolicy,
    customize: Customize<TransactWriteItemsFluentBuilder>,
}

impl<T: Table> TransactWrite<T> {
    /// Adds an operation on the transaction's own table.
    fn push(self, kind: Kind, prepared: Result<PreparedWrite, Error>) -> Self {
        let table = TableRef::of(&self.db);
        self.push_to(table, kind, prepared)
    }

    /// Adds an operation built on `db`, which writes `db`'s table: refused when `db`
    /// reaches DynamoDB in another region (one transaction, one account and region).
    pub(super) fn push_on<X: Table>(
        self,
        db: &Db<X>,
        kind: Kind,
        prepared: Result<PreparedWrite, Error>,
    ) -> Self {
        let (ours, theirs) = (self.db.client().config(), db.client().config());
        let prepared = match (ours.region(), theirs.region()) {
            (a, b) if a != b => Err(Error::invalid_request(
                "TransactWriteItems",
                crate::ValidationReason::InvalidOption,
                format!(
                    "an operation on table {} reaches DynamoDB in region {}, the transaction in {}: a transaction writes in one account and region",
                    db.table_name(),
                    b.map_or("(none)", |r| r.as_ref()),
                    a.map_or("(none)", |r| r.as_ref()),
                ),
            )),
            _ => prepared,
        };
        self.push_to(TableRef::of(db), kind, prepared)
    }

    fn push_to(
        mut self,
        table: TableRef,
        kind: Kind,
        prepared: Result<PreparedWrite, Error>,
    ) -> Self {
        self.operations.push(prepared.map(|prepared| Operation {
            kind,
            prepared,
            table,
        }));
        self
    }

    /// Adds a put the crate prepared itself (a revision of a versioned entity).
    pub(crate) fn prepared_put(self, prepared: PreparedWrite) -> Self {
        self.push(Kind::Put, Ok(prepared))
    }

    /// Adds an update the crate prepared itself (an update of an entity with unique
    /// values).
    pub(crate) fn prepared_update(self, prepared: PreparedWrite) -> Self {
        self.push(Kind::Update, Ok(prepared))
    }

    /// Adds a condition check the crate prepared itself (an item's unique value, claimed
    /// by a backfill).
    pub(crate) fn prepared_check(self, prepared: PreparedWrite) -> Self {
        self.push(Kind::Check, Ok(prepared))
    }

    /// Adds a delete the crate prepared itself (a revision of a versioned entity).
    pub(crate) fn prepared_delete(self, prepared: PreparedWrite) -> Self {
        self.push(Kind::Delete, Ok(prepared))
    }

    /// Adds a condition on an item the transaction does not write: the item must exist,
    /// be of entity `E`, and satisfy `condition`.
    pub fn check<E: Entity<Table = T>>(self, key: Key<E>, condition: Condition<E>) -> Self {
        let prepared = checked_item(key, condition);
        self.push(Kind::Check, prepared)
    }

    /// [`check`](Self::check) on an item of the table of `db`: another table, or another
    /// of the period tables of this one.
    pub fn check_on<X: Table, E: Entity<Table = X>>(
        self,
        db: &Db<X>,
        key: Key<E>,
        condition: Condition<E>,
    ) -> Self {
        let prepared = checked_item(key, condition);
        self.push_on(db, Kind::Check, prepared)
    }

    /// The idempotency token (1 to 36 characters). Without one a random token is made.
    /// Sending again with the same token within 10 minutes does not apply it twice.
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Backoff and deadline for retrying conflicts and transient errors (default: the
    /// `Db`'s, [`Db::with_retry`](crate::Db::with_retry), else 10 s in all). The deadline
    /// also bounds a request in flight.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.policy = policy;
        self
    }

    fn request_items(&self, ops: &[&Operation]) -> Result<Vec<TransactWriteItem>, Error> {
        let build = |e| Error::request_build("TransactWriteItems", e);
        let fail = ReturnValuesOnConditionCheckFailure::AllOld;
        // Every kind of operation carries the same table, condition and placeholders.
        macro_rules! conditioned {
            ($builder:expr, $p:expr, $table:expr) => {
                $builder
                    .table_name($table)
                    .condition_expression(&$p.condition)
                    .set_expression_attribute_names($p.names.clone())
                    .set_expression_attribute_values($p.values.clone())
                    .return_values_on_condition_check_failure(fail.clone())
                    .build()
                    .map_err(build)?
            };
        }
        ops.iter()
            .map(|op| {
                let (p, table) = (&op.prepared, op.table.name());
                let item = TransactWriteItem::builder();
                let key = Some(p.key_item.clone());
                Ok(match op.kind {
                    Kind::Put => item.put(conditioned!(
                        TxPut::builder().set_item(p.item.clone()),
                        p,
                        table
                    )),
                    Kind::Update => item.update(conditioned!(
                        TxUpdate::builder()
                            .set_key(key)
                            .set_update_expression(p.update.clone()),
                        p,
                        table
                    )),
                    Kind::Delete => {
                        item.delete(conditioned!(TxDelete::builder().set_key(key), p, table))
                    }
                    Kind::Check => item.condition_check(conditioned!(
                        ConditionCheck::builder().set_key(key),
                        p,
                        table
                    )),
                }
                .build())
            })
            .collect()
    }

    /// The `TransactWriteItems` input this transaction would send, instead of sending it
    /// (like ElectroDB's `.params()`), with the [`token`](Self::token) given or, without
    /// one, a random token. Everything `send` refuses before sending is refused here too.
    ///
    /// ```
    /// # use dynamo_model::{Entity, Table};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct Bank;
    /// # #[derive(Entity, serde::Serialize, serde::Deserialize)]
    /// # #[dynamo(table = Bank, pk = "ACCOUNT#{id}", sk = "ACCOUNT")]
    /// # struct Account { id: String, balance: i64 }
    /// # let db = dynamo_model::Db::<Bank>::offline("bank");
    /// let f = Account::fields();
    /// let input = db
    ///     .transact_write()
    ///     .update(db.update(Account::key("a")).add(f.balance, -50).condition(f.balance.ge(50)))
    ///     .update(db.update(Account::key("b")).add(f.balance, 50))
    ///     .token("transfer-42")
    ///     .params()?;
    /// assert_eq!(input.transact_items().len(), 2);
    /// assert_eq!(input.client_request_token(), Some("transfer-42"));
    /// # Ok::<(), dynamo_model::Error>(())
    /// ```
    pub fn params(mut self) -> Result<TransactWriteItemsInput, Error> {
        let (items, token, _) = self.checked()?;
        let request = self.request(items, &token);
        crate::request::input("TransactWriteItems", request.as_input().clone().build())
    }

    /// The request of one attempt, rendered into the SDK's builder and customized.
    /// How the transaction is sent, with the record of its call (`crate::call`).
    fn sending(&self, ops: &[&Operation]) -> Sending {
        let policy = Policy::TRANSACTION;
        Sending::new(&self.db, CallOperation::TransactWriteItems, policy, || {
            self.call(ops)
        })
    }

    /// The record of the transaction's call.
    fn call(&self, ops: &[&Operation]) -> Call {
        let target = |op: &&Operation| {
            let (p, schema, table) = (&op.prepared, op.table.schema(), op.table.arc());
            let by_key =
                |action| CallTarget::by_key(schema, table.clone(), action, Some(&p.key_item));
            let target = match (&op.kind, &p.item) {
                (Kind::Put, Some(item)) => CallTarget::put(schema, table.clone(), item),
                (Kind::Put, None) => by_key(Action::Put),
                (Kind::Update, _) => by_key(Action::Update),
                (Kind::Delete, _) => by_key(Action::Delete),
                (Kind::Check, _) => by_key(Action::Check),
            };
            target.of(p.entity)
        };
        Call {
            targets: ops.iter().map(target).collect(),
            ..Call::new(
                CallOperation::TransactWriteItems,
                self.db.table_arc().clone(),
            )
        }
    }

    fn request(
        &self,
        items: Vec<TransactWriteItem>,
        token: &str,
    ) -> TransactWriteItemsFluentBuilder {
        let request = self
            .db
            .client()
            .transact_write_items()
            .set_transact_items(Some(items))
            .client_request_token(token);
        self.customize.apply(request)
    }

    /// The transaction's items, checked (no error while adding, 1 to 100 operations, no
    /// item twice), its token, and its operations (to read cancellations).
    fn checked(&mut self) -> Result<(Vec<TransactWriteItem>, String, Vec<Operation>), Error> {
        const OP: &str = "TransactWriteItems";
        let operations = std::mem::take(&mut self.operations);
        let mut owned: Vec<Operation> = Vec::with_capacity(operations.len());
        for (index, op) in operations.into_iter().enumerate() {
            match op {
                Ok(op) => owned.push(op),
                // The operation's own error, reason and source intact, placed in the call.
                Err(e) => return Err(e.in_transaction(OP, index)),
            }
        }
        let ops: Vec<&Operation> = owned.iter().collect();
        if ops.is_empty() {
            return Err(Error::invalid_request(
                OP,
                crate::ValidationReason::NoOperations,
                "a transaction needs at least one operation",
            ));
        }
        let count = ops.len();
        if count > MAX_TRANSACTION_ITEMS {
            return Err(Error::invalid_request(
                OP,
                crate::ValidationReason::TooManyOperations,
                format!(
                    "{count} operations; DynamoDB allows at most {MAX_TRANSACTION_ITEMS} per transaction"
                ),
            ));
        }
        // DynamoDB cancels a transaction with two operations on one item. Compared on the
        // key attribute values themselves: the `PK=…, SK=…` text is for people, and two
        // distinct keys can render to the same text (a value containing ", SK=").
        // At most 100 operations, so comparing every pair costs nothing.
        // Items of two tables (or of two period tables) may share a key.
        for (i, op) in ops.iter().enumerate() {
            if ops[..i].iter().any(|earlier| {
                earlier.prepared.key_item == op.prepared.key_item
                    && earlier.table.name() == op.table.name()
            }) {
                let key = crate::error::key_text(&op.prepared.key);
                return Err(Error::invalid(
                    op.prepared.entity,
                    crate::ValidationReason::DuplicateKey,
                    format!(
                        "two operations of one transaction target {key}; DynamoDB rejects that"
                    ),
                ));
            }
        }
        check_size(&ops)?;
        let token = match &self.token {
            Some(t) if (1..=36).contains(&t.len()) => t.clone(),
            Some(t) => {
                let length = t.len();
                return Err(Error::invalid_request(
                    OP,
                    crate::ValidationReason::InvalidOption,
                    format!("a ClientRequestToken has 1 to 36 characters, not {length}"),
                ));
            }
            None => format!("{:032x}", fastrand::u128(..)),
        };
        let items = self.request_items(&ops)?;
        Ok((items, token, owned))
    }

    /// Sends the transaction (retrying it with the same token while it conflicts or fails
    /// transiently, until the deadline). A request still in flight when the deadline
    /// passes is cut off: [`Error::DeadlineExceeded`] then carries the token to resend the
    /// transaction with ([`token`](Self::token)), which applies it at most once.
    pub async fn send(self) -> Result<(), Error> {
        let span = crate::trace::operation("TransactWriteItems", self.db.table_name(), "*");
        crate::trace::traced(span, self.send_untraced()).await
    }

    async fn send_untraced(mut self) -> Result<(), Error> {
        const OP: &str = "TransactWriteItems";
        let (items, token, owned) = self.checked()?;
        crate::trace::record_current("dynamo_model.items", owned.len() as u64);
        let ops: Vec<&Operation> = owned.iter().collect();
        let deadline = Deadline::after(self.policy.deadline);
        // The first attempt sends the items built while checking; a retry builds them
        // again from the operations (the SDK's request owns what it sends), so a
        // transaction that succeeds at once copies each item into the request only once.
        let mut first = Some(items);
        let mut attempts =
            Attempts::new(CallOperation::TransactWriteItems, &self.policy, &deadline);
        // The error of the last attempt that failed, for when the deadline stops the next.
        let mut last = None;
        let cut_off = |token: String| Error::DeadlineExceeded {
            operation: OP,
            table: self.db.table_name().to_owned(),
            client_request_token: Some(token),
        };
        loop {
            let items = match first.take() {
                Some(items) => items,
                None => self.request_items(&ops)?,
            };
            let request = || Ok(exec!(self.sending(&ops), self.request(items, &token)));
            let attempt = attempts.next(None, request).await?;
            let sent = u64::from(attempts.sent());
            crate::trace::record_current("dynamo_model.requests", sent);
            crate::trace::record_current("dynamo_model.retries", sent.saturating_sub(1));
            let error = match attempt {
                Attempt::Answered(..) => return Ok(()),
                // Cut off in flight: applied or not, nobody knows. The token lets the
                // caller resend it safely (DynamoDB applies a token at most once within
                // 10 minutes). So does giving up after an attempt that may have been
                // applied (a 5xx, a timeout, a lost connection).
                Attempt::CutOff => return Err(cut_off(token)),
                Attempt::NotSent => match last {
                    Some(error) if !attempts.ambiguous() => return Err(error),
                    _ => return Err(cut_off(token)),
                },
                Attempt::Retry(e) => Error::service(OP, self.db.table_name(), e),
                Attempt::Refused(e) => match e.into_service_error() {
                    TransactWriteItemsError::TransactionCanceledException(cancelled) => {
                        let operations = cancellations(&ops, cancelled.cancellation_reasons());
                        let transient = !operations.is_empty()
                            && operations.iter().all(|o| o.reason.transient());
                        let error = Error::TransactionCanceled { operations };
                        if !transient {
                            return Err(error);
                        }
                        error
                    }
                    other => return Err(Error::service(OP, self.db.table_name(), other)),
                },
            };
            last = Some(error);
        }
    }
}

/// DynamoDB: at most 4 MB of items a transaction.
const MAX_TRANSACTION_BYTES: usize = 4 * 1024 * 1024;

/// Refuses a transaction whose items are over DynamoDB's 4 MB: the puts' items, the keys
/// of the other operations and the values an update sets (the size an update leaves is
/// known only once it is applied: DynamoDB refuses what this cannot foresee).
fn check_size(ops: &[&Operation]) -> Result<(), Error> {
    let bytes: usize = ops
        .iter()
        .map(|op| {
            let p = &op.prepared;
            let values = p.values.iter().flatten().map(|(_, v)| crate::value_size(v));
            match &p.item {
                Some(item) => crate::item_size(item),
                None => crate::item_size(&p.key_item) + values.sum::<usize>(),
            }
        })
        .sum();
    if bytes > MAX_TRANSACTION_BYTES {
        return Err(Error::invalid_request(
            "TransactWriteItems",
            crate::ValidationReason::RequestTooLarge,
            format!(
                "the transaction's items hold {bytes} bytes; DynamoDB allows at most {MAX_TRANSACTION_BYTES} a transaction"
            ),
        ));
    }
    Ok(())
}

/// A condition check of the item at `key`: it exists, is an `E`, and meets `condition`.
fn checked_item<E: Entity>(key: Key<E>, condition: Condition<E>) -> Result<PreparedWrite, Error> {
    let node = and(
        and(item_exists::<E>(), Some(is_entity::<E>())),
        Some(condition.node),
    );
    Ok(PreparedWrite {
        needs_item: true,
        ..PreparedWrite::guarded::<E>(
            (key.to_string(), key.to_item()?),
            Placeholders::default(),
            &node,
        )?
    })
}

/// The failed operations of a cancelled transaction; each operation's table's entity-type
/// attribute tells an item of another type stored under its key.
fn cancellations(
    ops: &[&Operation],
    reasons: &[aws_sdk_dynamodb::types::CancellationReason],
) -> Vec<CancelledOperation> {
    reasons
        .iter()
        .enumerate()
        .filter_map(|(index, r)| {
            let code = r.code()?;
            if code == "None" {
                return None;
            }
            let op = ops.get(index)?;
            let current = r.item.clone().filter(|i| !i.is_empty()).map(Box::new);
            let reason = match CancelReason::from_code(code) {
                // The operation's guard needs an item: none is there.
                CancelReason::ConditionalCheckFailed
                    if current.is_none() && op.prepared.needs_item =>
                {
                    CancelReason::NotFound
                }
                // The entity-type guard failed on another type's item.
                CancelReason::ConditionalCheckFailed => {
                    let type_attribute = op.table.schema().entity_type;
                    match current.as_ref().and_then(|item| item.get(type_attribute)) {
                        Some(aws_sdk_dynamodb::types::AttributeValue::S(stored))
                            if stored != op.prepared.entity =>
                        {
                            CancelReason::OtherEntityStored(stored.clone())
                        }
                        _ => CancelReason::ConditionalCheckFailed,
                    }
                }
                reason => reason,
            };
            Some(CancelledOperation {
                index,
                entity: op.prepared.entity,
                key: op.prepared.key.clone(),
                reason,
                message: r.message().map(str::to_owned),
                current,
            })
        })
        .collect()
}

impl<T: Table> Db<T> {
    /// A write transaction: puts, updates, deletes and condition checks, all applied or
    /// none. Each operation writes the table of the `Db` it was built on, so one
    /// transaction may span several tables and period tables (up to 100 operations and
    /// 4 MB of items, in one account and region); each keeps its entity-type guard.
    ///
    /// ```no_run
    /// # use dynamo_model::{Db, Entity, Table};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct Bank;
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[dynamo(table = Bank, pk = "ACCOUNT#{id}", sk = "ACCOUNT")]
    /// struct Account { id: String, balance: i64 }
    ///
    /// # async fn demo(db: Db<Bank>) -> Result<(), dynamo_model::Error> {
    /// let f = Account::fields();
    /// db.transact_write()
    ///     .update(db.update(Account::key("a")).add(f.balance, -50).condition(f.balance.ge(50)))
    ///     .update(db.update(Account::key("b")).add(f.balance, 50))
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn transact_write(&self) -> TransactWrite<T> {
        TransactWrite {
            db: self.clone(),
            customize: Customize::default(),
            operations: Vec::new(),
            token: None,
            policy: self.retry_policy_or(RetryPolicy {
                deadline: std::time::Duration::from_secs(10),
                ..RetryPolicy::default()
            }),
        }
    }
}

crate::request::into_future!(impl[T: Table] TransactWrite<T>, ());

crate::request::customizable!(
    impl[T: Table] TransactWrite<T>,
    TransactWriteItemsFluentBuilder,
    "of every attempt before it is sent",
    "A hook that changes the items or the token takes the transaction out of the crate's guarantees (entity-type checks, idempotent retries)."
);
