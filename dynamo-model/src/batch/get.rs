//! Batch gets: keys chunked by 100, de-duplicated, read with bounded concurrency, the unprocessed
//! keys retried until the deadline; found, missing and unread keys reported.

use crate::collection::{Includes, Target};
use crate::request::Customize;
use crate::request::page::UnknownEntity;
use crate::request::page::decode_target;
use crate::retry::RetryPolicy;
use crate::{Db, Entity, Error, Item, Key, RawKey, Table};
use aws_sdk_dynamodb::operation::batch_get_item::BatchGetItemInput;
use aws_sdk_dynamodb::operation::batch_get_item::builders::BatchGetItemFluentBuilder;
use read::{GetTable, Reading, TablesRead};
use std::collections::HashSet;

mod read;
mod together;

#[cfg(test)]
pub(super) use read::settle;
pub use together::{BatchGets, Parts};

/// The outcome of a [`BatchGet`]: what was found, what does not exist, and what could not
/// be read before the deadline or failed.
#[derive(Debug)]
#[non_exhaustive]
pub struct BatchGetOutput<T> {
    /// The items found (in the order of the requested keys with
    /// [`keep_order`](BatchGet::keep_order), otherwise in no particular order).
    pub items: Vec<T>,
    /// Requested keys with no item.
    pub not_found: Vec<RawKey>,
    /// Read capacity units the items found and the keys not found cost by DynamoDB's
    /// rules ([`crate::capacity`]: each item rounded up to 4 KB, a missing key one unit,
    /// half each when eventually consistent), next to
    /// [`consumed_capacity`](Self::consumed_capacity), what DynamoDB reported.
    pub estimated_capacity: f64,
    /// Keys still unprocessed when the deadline passed (including those of a request it
    /// cut off in flight): neither found nor known missing.
    pub unprocessed: Vec<RawKey>,
    /// Keys DynamoDB refused with a non-retryable error, each group with its table's error
    /// (a refused call that spans tables is sent again table by table); the other keys
    /// were still read.
    pub failed: Vec<(Vec<RawKey>, Error)>,
    /// Read capacity units consumed.
    pub consumed_capacity: f64,
}

/// A `BatchGetItem` of any number of keys; see [`Db::batch_get`].
#[must_use = "a batch does nothing until it is sent or awaited"]
pub struct BatchGet<T: Target> {
    db: Db<T::Table>,
    customize: Customize<BatchGetItemFluentBuilder>,
    keys: Vec<RawKey>,
    error: Option<Error>,
    consistent: bool,
    concurrency: usize,
    policy: RetryPolicy,
    keep_order: bool,
    unknown: UnknownEntity,
}

impl<T: Target> BatchGet<T> {
    /// Adds a key (of `T`, or of any entity of collection `T`).
    pub fn key<M: Entity>(mut self, key: Key<M>) -> Self
    where
        T: Includes<M>,
    {
        // The key strings were rendered for this batch: moved in, not copied.
        match key.into_raw() {
            Ok(raw) => self.keys.push(raw),
            Err(e) => {
                self.error.get_or_insert(e.during("BatchGetItem"));
            }
        }
        self
    }

    /// Adds keys.
    pub fn keys<M: Entity>(self, keys: impl IntoIterator<Item = Key<M>>) -> Self
    where
        T: Includes<M>,
    {
        keys.into_iter().fold(self, |b, k| b.key(k))
    }

    crate::setters::setters! {
        /// Strongly consistent reads.
        consistent() => consistent = true;
        /// How many `BatchGetItem` calls run at once (default 4).
        concurrency(n: usize) => concurrency = n.max(1);
        /// Backoff and deadline for unprocessed keys and transient errors.
        retry(policy: RetryPolicy) => policy = policy;
        /// Return items in the order their keys were given (DynamoDB returns them in no order).
        keep_order() => keep_order = true;
        /// What to do with items of entity types outside `T` (default: skip).
        on_unknown(policy: UnknownEntity) => unknown = policy;
    }

    /// The keys to read, once each (DynamoDB rejects a batch holding a key twice).
    fn unique_keys(&mut self) -> Result<Vec<RawKey>, Error> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let keys = std::mem::take(&mut self.keys);
        // Which keys come first, found by reference: no key is copied to be compared.
        let mut seen = HashSet::with_capacity(keys.len());
        let first: Vec<bool> = keys.iter().map(|k| seen.insert(k)).collect();
        drop(seen);
        Ok(keys
            .into_iter()
            .zip(first)
            .filter_map(|(k, first)| first.then_some(k))
            .collect())
    }

    /// The `BatchGetItem` input of each chunk of 100 keys, instead of sending them (like
    /// ElectroDB's `.params()`). Unprocessed keys are sent again in inputs of the same
    /// form.
    ///
    /// ```
    /// # use dynamo_model::{Entity, Table};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// # #[derive(Entity, serde::Serialize, serde::Deserialize)]
    /// # #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # let db = dynamo_model::Db::<App>::offline("app");
    /// let inputs = db.batch_get::<User>().keys((0..250).map(|i| User::key(format!("u-{i}")))).params()?;
    /// assert_eq!(inputs.len(), 3); // 100 + 100 + 50
    /// assert_eq!(inputs[2].request_items().unwrap()["app"].keys().len(), 50);
    /// # Ok::<(), dynamo_model::Error>(())
    /// ```
    pub fn params(mut self) -> Result<Vec<BatchGetItemInput>, Error> {
        let unique = self.unique_keys()?;
        self.inputs(&unique.iter().collect::<Vec<_>>())
    }

    /// What this batch will send and what it may cost, without sending anything (see
    /// [`Query::explain`](dynamo_model::read::Query::explain)): the inputs
    /// [`params`](BatchGet::params) returns (one per 100 distinct keys), the keys, and the
    /// read units by DynamoDB's rules (each item rounded to 4 KB on its own; from the item
    /// sizes observed of the entity types, when an [`Insight`](crate::insight::Insight) is
    /// attached to the `Db`). A key that could not be rendered is refused with its message
    /// (as a validation error: [`send`](BatchGet::send) reports the key error itself).
    pub fn explain(&self) -> Result<crate::insight::Explain, Error> {
        if let Some(e) = &self.error {
            let reason = e
                .validation_reason()
                .unwrap_or(crate::ValidationReason::InvalidOption);
            return Err(Error::invalid(T::NAME, reason, e.to_string()).during("BatchGetItem"));
        }
        let inputs = self.inputs(&self.unique())?;
        let reading = crate::insight::explain::Reading::of::<T>(None);
        let observed = crate::request::observations(&self.db);
        Ok(crate::insight::Explain::batch_get(
            reading,
            self.db.table_name(),
            inputs,
            observed,
        ))
    }

    /// The distinct keys, borrowed, in the order first given.
    fn unique(&self) -> Vec<&RawKey> {
        let mut seen = HashSet::with_capacity(self.keys.len());
        self.keys.iter().filter(|k| seen.insert(*k)).collect()
    }

    /// The input of each chunk of 100 of `keys`.
    fn inputs(&self, keys: &[&RawKey]) -> Result<Vec<BatchGetItemInput>, Error> {
        let tables = [self.table(0..keys.len())];
        let reading = self.reading(&tables, std::slice::from_ref(&self.customize));
        reading.inputs(keys.iter().map(|k| (0, *k)))
    }

    /// How this batch's client reads `tables` (this batch's, or those of the batches
    /// sent with it), under this batch's retries and concurrency.
    pub(super) fn reading<'a>(
        &'a self,
        tables: &'a [GetTable],
        customize: &'a [Customize<BatchGetItemFluentBuilder>],
    ) -> Reading<'a, T::Table> {
        Reading {
            db: &self.db,
            tables,
            customize,
            policy: self.policy,
            concurrency: self.concurrency,
        }
    }

    /// Reads every key: chunks of 100, duplicates removed, unprocessed keys retried.
    pub async fn send(self) -> Result<BatchGetOutput<T>, Error> {
        let span = crate::trace::operation("BatchGetItem", self.db.table_name(), T::NAME);
        crate::trace::record(&span, "aws.dynamodb.consistent_read", self.consistent);
        crate::trace::traced(span, self.send_untraced()).await
    }

    async fn send_untraced(mut self) -> Result<BatchGetOutput<T>, Error> {
        let unique = self.unique_keys()?;
        crate::trace::record_current("dynamo_model.items", unique.len() as u64);
        let tables = [self.table(0..unique.len())];
        let reading = self.reading(&tables, std::slice::from_ref(&self.customize));
        let read = reading.read(unique.into_iter().enumerate()).await?;
        crate::trace::record_current("dynamo_model.requests", read.requests as u64);
        crate::trace::record_current("dynamo_model.retries", read.retries as u64);
        let part = Part::from(read);
        crate::trace::record_current("aws.dynamodb.consumed_capacity", part.consumed);
        self.output(part)
    }

    /// The table this batch reads, its keys at `positions` among the keys read.
    pub(super) fn table(&self, positions: std::ops::Range<usize>) -> GetTable {
        GetTable {
            name: self.db.table_arc().clone(),
            schema: &T::Table::SCHEMA,
            entity: crate::collection::single_entity::<T>(),
            consistent: self.consistent,
            positions,
        }
    }

    /// The output of what was read of this batch's keys, items decoded.
    pub(super) fn output(&self, mut read: Part) -> Result<BatchGetOutput<T>, Error> {
        if self.keep_order {
            read.found.sort_by_key(|(position, _)| *position);
        }
        let estimated = crate::capacity::batch_get_units(
            read.found.iter().map(|(_, item)| crate::item_size(item)),
            read.not_found.len(),
            self.consistent,
        );
        let mut items = Vec::with_capacity(read.found.len());
        for (_, item) in read.found {
            if let Some(t) = decode_target(item, self.unknown, self.db.keys())? {
                items.push(t);
            }
        }
        Ok(BatchGetOutput {
            items,
            not_found: read.not_found.into_iter().map(|(_, key)| key).collect(),
            unprocessed: read.unprocessed,
            failed: read.failed,
            consumed_capacity: read.consumed,
            estimated_capacity: estimated,
        })
    }
}

/// What was read of one table's keys.
#[derive(Debug, Default)]
pub(crate) struct Part {
    /// Items, with the position of their requested key.
    pub(crate) found: Vec<(usize, Item)>,
    /// Keys with no item, in the requested keys' order.
    pub(crate) not_found: Vec<(usize, RawKey)>,
    pub(crate) unprocessed: Vec<RawKey>,
    pub(crate) failed: Vec<(Vec<RawKey>, Error)>,
    pub(crate) consumed: f64,
}

impl From<TablesRead> for Part {
    /// Everything read, as the keys of one table.
    fn from(read: TablesRead) -> Part {
        Part {
            found: read.found,
            not_found: read.not_found,
            unprocessed: read.unprocessed.into_iter().map(|(_, k)| k).collect(),
            failed: read.failed.into_iter().map(|(_, k, e)| (k, e)).collect(),
            consumed: read.consumed.iter().sum(),
        }
    }
}

/// Reads distinct keys of `db`'s table with `BatchGetItem`: chunks of 100, `concurrency`
/// at once, unprocessed keys and transient errors retried until the policy's deadline.
pub(crate) async fn read_keys<X: Table>(
    db: &Db<X>,
    entity: Option<&'static str>,
    customize: &Customize<BatchGetItemFluentBuilder>,
    unique: Vec<RawKey>,
    consistent: bool,
    policy: RetryPolicy,
    concurrency: usize,
) -> Result<Part, Error> {
    let tables = [GetTable {
        name: db.table_arc().clone(),
        schema: &X::SCHEMA,
        entity,
        consistent,
        positions: 0..unique.len(),
    }];
    let reading = Reading {
        db,
        tables: &tables,
        customize: std::slice::from_ref(customize),
        policy,
        concurrency,
    };
    Ok(Part::from(
        reading.read(unique.into_iter().enumerate()).await?,
    ))
}

impl<T: Table> Db<T> {
    /// Reads many items by key: of entity `X`, or of any entity of collection `X`.
    ///
    /// ```no_run
    /// # use dynamo_model::{Db, Entity, Table};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: Db<App>) -> Result<(), dynamo_model::Error> {
    /// let out = db
    ///     .batch_get::<User>()
    ///     .keys((0..250).map(|i| User::key(format!("u-{i}"))))
    ///     .keep_order()
    ///     .await?;
    /// println!("{} found, {} missing, {} unread", out.items.len(), out.not_found.len(), out.unprocessed.len());
    /// # Ok(()) }
    /// ```
    pub fn batch_get<X: Target<Table = T>>(&self) -> BatchGet<X> {
        BatchGet {
            db: self.clone(),
            customize: Customize::default(),
            keys: Vec::new(),
            error: None,
            consistent: false,
            concurrency: 4,
            policy: self.retry_policy_or(RetryPolicy::default()),
            keep_order: false,
            unknown: UnknownEntity::Skip,
        }
    }
}

crate::request::into_future!(impl[X: Target] BatchGet<X>, BatchGetOutput<X>);

crate::request::customizable!(
    impl[T: Target] BatchGet<T>,
    BatchGetItemFluentBuilder,
    "of every chunk, and every retry of its unprocessed keys, before it is sent",
    "A hook that changes the keys takes the batch out of the crate's accounting of found, missing and unprocessed keys."
);
