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
use crate::request::Customize;
use crate::request::exec::{Sending, exec};
use crate::request::page::decode_target;
use crate::{Db, Entity, Error, Item, Key, Table};
use aws_sdk_dynamodb::operation::transact_get_items::TransactGetItemsInput;
use aws_sdk_dynamodb::operation::transact_get_items::builders::TransactGetItemsFluentBuilder;
use aws_sdk_dynamodb::types::{Get, TransactGetItem};

pub use crate::error::{CancelReason, CancelledOperation};
pub use crate::item::{MAX_TRANSACTION_ITEMS, TransactWrite};

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

crate::request::into_future!(impl[X: Target] TransactGet<X>, Vec<Option<X>>);

crate::request::customizable!(
    impl[X: Target] TransactGet<X>,
    TransactGetItemsFluentBuilder,
    "before it is sent",
    "A hook that changes the keys takes the read out of the crate's typed results."
);
