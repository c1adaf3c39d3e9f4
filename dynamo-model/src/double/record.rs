//! What a double records of each call: the SDK input and the crate's record of the call
//! (entity type, keys), with the attempt it was, as each attempt's request carries them
//! ([`Sent`]).

use super::Operation;
use crate::call::{Observer, Outcome, Sent};
use crate::{Entity, Item, RawKey, Table};
use aws_sdk_dynamodb::operation::{
    batch_write_item::BatchWriteItemInput, put_item::PutItemInput,
    transact_write_items::TransactWriteItemsInput,
};
use std::any::Any;
use std::sync::Arc;

/// One request a double answered: one attempt of it (the SDK's retries are calls of their
/// own, [`attempt`](Self::attempt) 2 and up).
#[derive(Clone)]
pub struct Call {
    operation: Operation,
    name: Arc<str>,
    attempt: u32,
    input: Arc<dyn Any + Send + Sync>,
    record: Option<Arc<crate::call::Call>>,
    table: Option<Arc<str>>,
    body: Arc<str>,
}

impl std::fmt::Debug for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Call")
            .field("operation", &self.name)
            .field("attempt", &self.attempt)
            .field("table", &self.table())
            .field("entity", &self.entity())
            .field("keys", &self.keys())
            .field("body", &self.body)
            .finish()
    }
}

impl Call {
    /// The DynamoDB operation.
    pub fn operation(&self) -> Operation {
        self.operation
    }

    /// The API name of the operation, also of one [`Operation`] does not list.
    pub fn operation_name(&self) -> &str {
        &self.name
    }

    /// Which attempt of its request this call is: 1, then 2 and up for the SDK's retries of
    /// the same request (a batch's resending of unprocessed items is a new request).
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The table: of the item, the query or the scan; of the `Db` that sent a batch or a
    /// transaction (its items name their own, see [`input`](Self::input)).
    pub fn table(&self) -> Option<&str> {
        self.table.as_deref()
    }

    /// The entity type of the call, when the crate knew one: the entity read or written by
    /// a single-item call, a query or a scan of one entity, or the entity type every item
    /// of a batch or a transaction has.
    pub fn entity(&self) -> Option<&str> {
        let record = self.record.as_deref()?;
        if let Some(entity) = record.entity {
            return Some(entity);
        }
        let mut types = record.targets.iter().map(|t| t.entity.as_deref());
        let first = types.next()??;
        types.all(|t| t == Some(first)).then_some(first)
    }

    /// The key of the item a single-item call reads or writes (as text: a number key by
    /// its digits).
    pub fn key(&self) -> Option<&RawKey> {
        match self.record.as_deref()?.targets.as_slice() {
            [one] => one.key.as_ref(),
            _ => None,
        }
    }

    /// The keys of every item the call reads or writes, in the request's order (a query's
    /// or a scan's: none).
    pub fn keys(&self) -> Vec<&RawKey> {
        let Some(record) = self.record.as_deref() else {
            return Vec::new();
        };
        record
            .targets
            .iter()
            .filter_map(|t| t.key.as_ref())
            .collect()
    }

    /// The index a query or a scan reads (`None`: the table).
    pub fn index(&self) -> Option<&str> {
        self.record.as_deref()?.index.as_deref()
    }

    /// The SDK input of the request, when it is an `I`, e.g.
    /// `call.input::<PutItemInput>()` for a `PutItem`: its expressions, their names and
    /// values, its return values. Kept for item operations and PartiQL calls (for table
    /// management, read the [`body`](Self::body)).
    pub fn input<I: Any>(&self) -> Option<&I> {
        self.input.downcast_ref::<I>()
    }

    /// The request's body, DynamoDB JSON as sent.
    pub fn body(&self) -> &str {
        &self.body
    }

    /// Every item of entity `E` the call writes whole, in the request's order: a put's
    /// item, a batch's or a transaction's puts. An item is of `E` when its entity-type
    /// attribute names `E`, or when it has none and decodes as `E`.
    ///
    /// # Panics
    ///
    /// If an item naming `E` does not decode as `E` (an item with encrypted fields is
    /// one: read it with [`input`](Self::input)).
    #[track_caller]
    pub fn items<E: Entity>(&self) -> Vec<E> {
        let type_attribute = <E::Table as Table>::SCHEMA.entity_type;
        let mut entities = Vec::new();
        for item in self.written() {
            match item.get(type_attribute).and_then(|t| t.as_s().ok()) {
                Some(named) if named == E::ENTITY_TYPE => match E::from_item(item.clone()) {
                    Ok(entity) => entities.push(entity),
                    Err(e) => panic!("{} {}: item does not decode: {e}", self.name, named),
                },
                Some(_) => {}
                None => entities.extend(E::from_item(item.clone()).ok()),
            }
        }
        entities
    }

    /// The items the request writes whole.
    fn written(&self) -> Vec<&Item> {
        if let Some(put) = self.input::<PutItemInput>() {
            return put.item.iter().collect();
        }
        if let Some(batch) = self.input::<BatchWriteItemInput>() {
            let requests = batch
                .request_items
                .iter()
                .flat_map(|m| m.values())
                .flatten();
            return requests
                .filter_map(|r| r.put_request.as_ref().map(|p| &p.item))
                .collect();
        }
        if let Some(transaction) = self.input::<TransactWriteItemsInput>() {
            let items = transaction.transact_items.iter().flatten();
            return items
                .filter_map(|t| t.put.as_ref().map(|p| &p.item))
                .collect();
        }
        Vec::new()
    }

    /// The body as JSON (`Null` if it is not).
    pub(super) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_default()
    }

    /// The call of `name`, with what the interceptor captured and the body as sent.
    pub(super) fn new(name: &str, sent: Option<&Sent>, body: &[u8]) -> Call {
        let record = sent.and_then(|s| s.call.clone());
        let body: Arc<str> = Arc::from(String::from_utf8_lossy(body));
        let table = match &record {
            Some(record) => Some(record.table.clone()),
            // A call the crate keeps no record of (table management).
            None => serde_json::from_str::<serde_json::Value>(&body)
                .ok()
                .and_then(|json| json.get("TableName")?.as_str().map(Arc::from)),
        };
        let nothing: Arc<dyn Any + Send + Sync> = Arc::new(());
        Call {
            operation: Operation::from_name(name),
            name: Arc::from(name),
            attempt: sent.map_or(1, |s| s.attempt),
            input: sent.map_or(nothing, |s| s.input.clone()),
            record,
            table,
            body,
        }
    }
}

/// The observer that makes a `Db` build the record of each call (the crate builds one
/// only for a client that has an observer), and each attempt's request carry its input
/// and record to the double's connector: it watches nothing itself.
#[derive(Debug)]
pub(super) struct Recording;

impl Observer for Recording {
    fn wants_inputs(&self) -> bool {
        true
    }

    fn after(&self, _call: &crate::call::Call, _outcome: &Outcome<'_>) {}
}
