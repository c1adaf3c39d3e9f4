//! Transactions: all-or-nothing writes across items and entity types, and consistent
//! multi-item reads.
//!
//! DynamoDB rules enforced before sending: at most 100 operations, no two on the same
//! item. A write transaction carries a `ClientRequestToken`; the SDK makes a new one per
//! `send()`, so this crate sets its own and reuses it whenever it retries the same
//! transaction (after a conflict, an in-flight duplicate, or an ambiguous error): DynamoDB
//! then applies it at most once. A cancelled transaction becomes
//! [`Error::TransactionCanceled`], which says, for each failed operation, its position,
//! entity, key and reason, with the current item when a condition failed.

use crate::UnknownEntity;
use crate::call::{Action, Call, Operation as CallOperation, Policy, Target as CallTarget};
use crate::collection::{Includes, Target};
use crate::expr::Placeholders;
use crate::item::{Delete, PreparedWrite, Put, Update, and, is_entity, item_exists};
use crate::request::Customize;
use crate::request::exec::{Attempt, Attempts};
use crate::request::exec::{Sending, exec};
use crate::request::page::decode_target;
use crate::retry::{Deadline, RetryPolicy};
use crate::{Condition, Db, Entity, Error, Item, Key, Table};
use aws_sdk_dynamodb::operation::transact_get_items::TransactGetItemsInput;
use aws_sdk_dynamodb::operation::transact_get_items::builders::TransactGetItemsFluentBuilder;
use aws_sdk_dynamodb::operation::transact_write_items::builders::TransactWriteItemsFluentBuilder;
use aws_sdk_dynamodb::operation::transact_write_items::{
    TransactWriteItemsError, TransactWriteItemsInput,
};
use aws_sdk_dynamodb::types::{
    ConditionCheck, Delete as TxDelete, Get, Put as TxPut, ReturnValuesOnConditionCheckFailure,
    TransactGetItem, TransactWriteItem, Update as TxUpdate,
};

pub use crate::error::{CancelReason, CancelledOperation};

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

enum Kind {
    Put,
    Update,
    Delete,
    Check,
}

struct Operation {
    kind: Kind,
    prepared: PreparedWrite,
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
    fn push(mut self, kind: Kind, prepared: Result<PreparedWrite, Error>) -> Self {
        self.operations
            .push(prepared.map(|prepared| Operation { kind, prepared }));
        self
    }

    /// Adds a put the crate prepared itself (a revision of a versioned entity).
    pub(crate) fn prepared_put(self, prepared: PreparedWrite) -> Self {
        self.push(Kind::Put, Ok(prepared))
    }

    /// Adds a delete the crate prepared itself (a revision of a versioned entity).
    pub(crate) fn prepared_delete(self, prepared: PreparedWrite) -> Self {
        self.push(Kind::Delete, Ok(prepared))
    }

    /// Adds a put, with its conditions (`if_absent`, `condition`). What the put owns for
    /// a request of its own does not apply: its [`customize`](Put::customize) hooks (made
    /// for a `PutItem`; customize the transaction with [`TransactWrite::customize`]) and its
    /// `Db` (the transaction writes to its own table).
    pub fn put<E: Entity<Table = T>>(self, put: Put<E>) -> Self {
        let prepared = put.prepare();
        self.push(Kind::Put, prepared)
    }

    /// Adds an update, with its changes and conditions: the item must exist (otherwise the
    /// operation's reason is [`CancelReason::NotFound`]) unless the update is an
    /// [`upsert`](Update::upsert), which creates it. Its `customize` hooks and its `Db` do
    /// not apply, as for [`put`](Self::put).
    pub fn update<E: Entity<Table = T>>(self, update: Update<E>) -> Self {
        let prepared = update.prepare();
        self.push(Kind::Update, prepared)
    }

    /// Adds a delete, with its conditions. Its `customize` hooks and its `Db` do not
    /// apply, as for [`put`](Self::put).
    pub fn delete<E: Entity<Table = T>>(self, delete: Delete<E>) -> Self {
        let prepared = crate::chunk::refuse(E::ENTITY_TYPE, E::__CHUNKED, "transaction")
            .and_then(|()| delete.prepare());
        self.push(Kind::Delete, prepared)
    }

    /// Adds a condition on an item the transaction does not write: the item must exist,
    /// be of entity `E`, and satisfy `condition`.
    pub fn check<E: Entity<Table = T>>(self, key: Key<E>, condition: Condition<E>) -> Self {
        let prepared = (|| {
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
        })();
        self.push(Kind::Check, prepared)
    }

    /// The idempotency token (1 to 36 characters). Without one a random token is made.
    /// Sending again with the same token within 10 minutes does not apply it twice.
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Backoff and deadline for retrying conflicts and transient errors (default: 10 s
    /// in all). The deadline also bounds a request in flight.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.policy = policy;
        self
    }

    fn request_items(&self, ops: &[&Operation]) -> Result<Vec<TransactWriteItem>, Error> {
        let table = self.db.table_name();
        let build = |e| Error::request_build("TransactWriteItems", e);
        let fail = ReturnValuesOnConditionCheckFailure::AllOld;
        // Every kind of operation carries the same table, condition and placeholders.
        macro_rules! conditioned {
            ($builder:expr, $p:expr) => {
                $builder
                    .table_name(table)
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
                let p = &op.prepared;
                let item = TransactWriteItem::builder();
                let key = Some(p.key_item.clone());
                Ok(match op.kind {
                    Kind::Put => {
                        item.put(conditioned!(TxPut::builder().set_item(p.item.clone()), p))
                    }
                    Kind::Update => item.update(conditioned!(
                        TxUpdate::builder()
                            .set_key(key)
                            .set_update_expression(p.update.clone()),
                        p
                    )),
                    Kind::Delete => item.delete(conditioned!(TxDelete::builder().set_key(key), p)),
                    Kind::Check => item
                        .condition_check(conditioned!(ConditionCheck::builder().set_key(key), p)),
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
        let (schema, table) = (&T::SCHEMA, self.db.table_arc());
        let target = |op: &&Operation| {
            let p = &op.prepared;
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
            ..Call::new(CallOperation::TransactWriteItems, table.clone())
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
        for (i, op) in ops.iter().enumerate() {
            if ops[..i]
                .iter()
                .any(|earlier| earlier.prepared.key_item == op.prepared.key_item)
            {
                let key = &op.prepared.key;
                return Err(Error::invalid(
                    op.prepared.entity,
                    crate::ValidationReason::DuplicateKey,
                    format!(
                        "two operations of one transaction target {key}; DynamoDB rejects that"
                    ),
                ));
            }
        }
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

/// A `TransactGetItems` request; see [`Db::transact_get`].
#[must_use = "a transaction does nothing until it is sent or awaited"]
pub struct TransactGet<X: Target> {
    db: Db<X::Table>,
    /// Each key's attribute values (or why it could not be built) and its text for errors.
    keys: Vec<(Result<Item, Error>, String)>,
    unknown: UnknownEntity,
    customize: Customize<TransactGetItemsFluentBuilder>,
}

impl<X: Target> TransactGet<X> {
    /// Adds a key (of `X`, or of any entity of collection `X`).
    pub fn key<M: Entity>(mut self, key: Key<M>) -> Self
    where
        X: Includes<M>,
    {
        self.keys.push((key.to_item(), key.to_string()));
        self
    }

    /// The `TransactGetItems` input this read would send, instead of sending it (like
    /// ElectroDB's `.params()`).
    pub fn params(mut self) -> Result<TransactGetItemsInput, Error> {
        let (request, _) = self.request()?;
        crate::request::input("TransactGetItems", request.as_input().clone().build())
    }

    /// Reads the items as of one point in time; `None` where there is no item.
    pub async fn send(self) -> Result<Vec<Option<X>>, Error> {
        let span = crate::trace::operation("TransactGetItems", self.db.table_name(), X::NAME);
        crate::trace::traced(span, self.send_untraced()).await
    }

    async fn send_untraced(mut self) -> Result<Vec<Option<X>>, Error> {
        const OP: &str = "TransactGetItems";
        let (request, sending) = self.request()?;
        let out = sending
            .send(exec!(sending, request))
            .await
            .map_err(|e| Error::service(OP, self.db.table_name(), e))?;
        let mut results = Vec::new();
        for response in out.responses.unwrap_or_default() {
            match response.item {
                Some(item) if !item.is_empty() => {
                    results.push(decode_target(item, self.unknown, self.db.keys())?)
                }
                _ => results.push(None),
            }
        }
        let found = results.iter().filter(|r| r.is_some()).count();
        crate::trace::record_current("dynamo_model.items", found as u64);
        Ok(results)
    }

    /// The request, checked, rendered into the SDK's builder and customized, and the record
    /// of its call (`crate::call`).
    fn request(&mut self) -> Result<(TransactGetItemsFluentBuilder, Sending), Error> {
        const OP: &str = "TransactGetItems";
        if self.keys.len() > MAX_TRANSACTION_ITEMS {
            return Err(Error::invalid_request(
                OP,
                crate::ValidationReason::TooManyOperations,
                format!(
                    "{} keys; DynamoDB allows at most {MAX_TRANSACTION_ITEMS}",
                    self.keys.len()
                ),
            ));
        }
        let mut keys: Vec<Item> = Vec::with_capacity(self.keys.len());
        for (key, text) in std::mem::take(&mut self.keys) {
            let key = key.map_err(|e| e.during(OP))?;
            // DynamoDB refuses a transaction that names one item twice with a generic
            // ValidationException; said here, before sending, with the key. Compared on the
            // attribute values (at most 100 keys, so every pair costs nothing).
            if keys.contains(&key) {
                return Err(Error::invalid_request(
                    OP,
                    crate::ValidationReason::DuplicateKey,
                    format!(
                        "{text} is read twice in one transaction; DynamoDB rejects that \
                         (read it once, or use batch_get, which returns it in both places)"
                    ),
                ));
            }
            keys.push(key);
        }
        let (schema, table) = (&<X::Table as Table>::SCHEMA, self.db.table_arc());
        let entity = crate::collection::single_entity::<X>();
        let target = |key: &Item| {
            let target = CallTarget::by_key(schema, table.clone(), Action::Get, Some(key));
            match entity {
                Some(entity) => target.of(entity),
                None => target,
            }
        };
        let sending = Sending::new(
            &self.db,
            CallOperation::TransactGetItems,
            Policy::READ,
            || Call {
                targets: keys.iter().map(target).collect(),
                keys: keys.len(),
                consistent: true,
                ..Call::new(CallOperation::TransactGetItems, table.clone())
            },
        );
        let mut items = Vec::with_capacity(keys.len());
        for key in keys {
            let get = Get::builder()
                .table_name(self.db.table_name())
                .set_key(Some(key))
                .build()
                .map_err(|e| Error::request_build(OP, e))?;
            items.push(TransactGetItem::builder().get(get).build());
        }
        let request = self
            .db
            .client()
            .transact_get_items()
            .set_transact_items(Some(items));
        Ok((self.customize.apply(request), sending))
    }
}

impl<T: Table> Db<T> {
    /// A write transaction: puts, updates, deletes and condition checks, all applied or
    /// none.
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
            policy: RetryPolicy {
                deadline: std::time::Duration::from_secs(10),
                ..RetryPolicy::default()
            },
        }
    }

    /// A read transaction of up to 100 items, of entity `X` or of a collection `X`.
    ///
    /// Each item may be named once: a key given twice is refused before sending with
    /// [`ValidationReason::DuplicateKey`](crate::ValidationReason::DuplicateKey), as
    /// DynamoDB would refuse the request ([`batch_get`](Db::batch_get) instead reads such
    /// a key once and returns the item in both places).
    pub fn transact_get<X: Target<Table = T>>(&self) -> TransactGet<X> {
        TransactGet {
            db: self.clone(),
            customize: Customize::default(),
            keys: Vec::new(),
            unknown: UnknownEntity::Skip,
        }
    }
}

crate::request::into_future!(impl[T: Table] TransactWrite<T>, ());
crate::request::into_future!(impl[X: Target] TransactGet<X>, Vec<Option<X>>);

crate::request::customizable!(
    impl[T: Table] TransactWrite<T>,
    TransactWriteItemsFluentBuilder,
    "of every attempt before it is sent",
    "A hook that changes the items or the token takes the transaction out of the crate's guarantees (entity-type checks, idempotent retries)."
);

crate::request::customizable!(
    impl[X: Target] TransactGet<X>,
    TransactGetItemsFluentBuilder,
    "before it is sent",
    "A hook that changes the keys takes the read out of the crate's typed results."
);
