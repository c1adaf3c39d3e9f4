//! Batch reads and writes that never drop anything.
//!
//! DynamoDB limits a `BatchGetItem` to 100 keys and a `BatchWriteItem` to 25 requests,
//! rejects duplicate keys in one call, and may process only part of a call, returning the
//! rest as `UnprocessedKeys`/`UnprocessedItems` with HTTP 200 — invisible to the SDK's
//! retries. This module chunks, de-duplicates (or refuses duplicates), runs chunks with
//! bounded concurrency, retries the unprocessed part and transient errors with backoff and
//! full jitter until a deadline, and reports whatever is still left instead of dropping it.

use crate::collection::{Includes, Target};
use crate::request::Customize;
use crate::request::page::UnknownEntity;
use crate::request::page::decode_target;
use crate::retry::{Deadline, RetryPolicy, is_retryable};
use crate::trace::Instrument;
use crate::{Db, Entity, Error, Item, Key, RawKey, Table};
use aws_sdk_dynamodb::operation::batch_get_item::BatchGetItemInput;
use aws_sdk_dynamodb::operation::batch_get_item::builders::BatchGetItemFluentBuilder;
use aws_sdk_dynamodb::operation::batch_write_item::BatchWriteItemInput;
use aws_sdk_dynamodb::operation::batch_write_item::builders::BatchWriteItemFluentBuilder;
use aws_sdk_dynamodb::types::{
    DeleteRequest, KeysAndAttributes, PutRequest, ReturnConsumedCapacity, WriteRequest,
};
use futures_util::stream::{self, StreamExt};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// DynamoDB: at most 100 keys per `BatchGetItem`.
pub const MAX_BATCH_GET: usize = 100;
/// DynamoDB: at most 25 put or delete requests per `BatchWriteItem`.
pub const MAX_BATCH_WRITE: usize = 25;

use crate::keytext::raw_key_of;

/// Capacity units of a batch response (one entry per table).
fn capacity_units(consumed: &[aws_sdk_dynamodb::types::ConsumedCapacity]) -> f64 {
    consumed.iter().filter_map(|c| c.capacity_units).sum()
}

// ------------------------------------------------------------------ batch get

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
    /// Chunks of keys DynamoDB refused with a non-retryable error (the other chunks were
    /// still read).
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

    /// Strongly consistent reads.
    pub fn consistent(mut self) -> Self {
        self.consistent = true;
        self
    }

    /// How many `BatchGetItem` calls run at once (default 4).
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// Backoff and deadline for unprocessed keys and transient errors.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Return items in the order their keys were given (DynamoDB returns them in no order).
    pub fn keep_order(mut self) -> Self {
        self.keep_order = true;
        self
    }

    /// What to do with items of entity types outside `T` (default: skip).
    pub fn on_unknown(mut self, policy: UnknownEntity) -> Self {
        self.unknown = policy;
        self
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
        unique
            .chunks(MAX_BATCH_GET)
            .map(|chunk| {
                let request =
                    get_request(&self.db, &self.customize, chunk.iter(), self.consistent)?;
                crate::request::input("BatchGetItem", request.as_input().clone().build())
            })
            .collect()
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
        let mut read = read_keys(
            &self.db,
            &self.customize,
            unique,
            self.consistent,
            self.policy,
            self.concurrency,
        )
        .await?;
        crate::trace::record_current("dynamo_model.requests", read.requests as u64);
        crate::trace::record_current("dynamo_model.retries", read.retries as u64);
        crate::trace::record_current("aws.dynamodb.consumed_capacity", read.consumed);
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
            if let Some(t) = decode_target(item, self.unknown)? {
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

/// What reading a set of keys found, and what became of every key.
#[derive(Debug, Default)]
pub(crate) struct KeysRead {
    /// Items, with the position of their requested key (in no particular order).
    pub(crate) found: Vec<(usize, Item)>,
    /// Keys with no item, in the requested keys' order.
    pub(crate) not_found: Vec<(usize, RawKey)>,
    /// Keys not read before the deadline.
    pub(crate) unprocessed: Vec<RawKey>,
    /// Chunks refused with a non-retryable error.
    pub(crate) failed: Vec<(Vec<RawKey>, Error)>,
    pub(crate) consumed: f64,
    /// Requests sent, and how many of them were sent again (unprocessed keys, errors).
    pub(crate) requests: usize,
    pub(crate) retries: usize,
}

/// Reads distinct keys with `BatchGetItem`: chunks of 100, `concurrency` at once,
/// unprocessed keys and transient errors retried until the policy's deadline.
pub(crate) async fn read_keys<X: Table>(
    db: &Db<X>,
    customize: &Customize<BatchGetItemFluentBuilder>,
    unique: Vec<RawKey>,
    consistent: bool,
    policy: RetryPolicy,
    concurrency: usize,
) -> Result<KeysRead, Error> {
    let total = unique.len();
    let deadline = Arc::new(Deadline::after(policy.deadline));
    // Each key keeps its position among the requested keys (for `keep_order` and the
    // order of `not_found`); the keys move into their chunk, not copied.
    let mut positioned = unique.into_iter().enumerate();
    let chunks: Vec<Vec<(usize, RawKey)>> = std::iter::from_fn(|| {
        let chunk: Vec<_> = positioned.by_ref().take(MAX_BATCH_GET).collect();
        (!chunk.is_empty()).then_some(chunk)
    })
    .collect();
    let results: Vec<Result<GetChunk, Error>> = stream::iter(chunks)
        .map(|chunk| {
            let deadline = Arc::clone(&deadline);
            async move { get_chunk(db, customize, chunk, consistent, &policy, &deadline).await }
        })
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    let mut read = KeysRead {
        found: Vec::with_capacity(total),
        ..KeysRead::default()
    };
    for r in results {
        let r = r?;
        read.requests += r.attempts as usize;
        read.retries += (r.attempts as usize).saturating_sub(1);
        read.consumed += r.consumed;
        read.failed.extend(r.failed);
        read.found.extend(r.found);
        read.not_found.extend(r.not_found);
        read.unprocessed.extend(r.unprocessed);
    }
    // Chunks finish in any order: `not_found` follows the requested keys' order.
    read.not_found.sort_by_key(|(position, _)| *position);
    Ok(read)
}

/// What the requests of one chunk of keys found, and what became of each key.
#[derive(Debug, Default)]
struct GetChunk {
    /// Items returned, with the position of their requested key (`usize::MAX` for an item
    /// whose key was not asked for, e.g. changed by a `customize` hook).
    found: Vec<(usize, Item)>,
    /// Keys DynamoDB answered for without an item.
    not_found: Vec<(usize, RawKey)>,
    unprocessed: Vec<RawKey>,
    failed: Option<(Vec<RawKey>, Error)>,
    consumed: f64,
    /// Requests sent for the chunk.
    attempts: u32,
}

/// Where one response leaves the keys it answered.
#[derive(Debug, Default, PartialEq)]
struct Settled {
    found: Vec<(usize, Item)>,
    not_found: Vec<(usize, RawKey)>,
    /// To be asked again.
    unprocessed: Vec<(usize, RawKey)>,
}

/// Accounts for every key of one `BatchGetItem` response: each requested key is found
/// (an item came back under it), unprocessed (DynamoDB handed it back), or else not found
/// (DynamoDB answers every key it processed). Keys are compared borrowed from the items
/// and the requested keys: nothing is copied, each key hashed once.
fn settle(
    schema: &crate::TableSchema,
    asked: Vec<(usize, RawKey)>,
    items: Vec<Item>,
    unprocessed: &[Item],
) -> Settled {
    const NOT_FOUND: u8 = 0;
    const FOUND: u8 = 1;
    const UNPROCESSED: u8 = 2;
    let mut state = vec![NOT_FOUND; asked.len()];
    let mut found = Vec::with_capacity(items.len());
    let mut strays = Vec::new();
    {
        let index: HashMap<(&str, Option<&str>), usize> = asked
            .iter()
            .enumerate()
            .map(|(i, (_, k))| ((k.pk.as_str(), k.sk.as_deref()), i))
            .collect();
        let lookup = |item: &Item| {
            let pk = item.get(schema.pk.name)?.as_s().ok()?;
            let sk = match schema.sk {
                Some(attr) => Some(item.get(attr.name)?.as_s().ok()?.as_str()),
                None => None,
            };
            index.get(&(pk.as_str(), sk)).copied()
        };
        for item in items {
            let position = match lookup(&item) {
                Some(i) => {
                    state[i] = FOUND;
                    asked[i].0
                }
                None => usize::MAX,
            };
            found.push((position, item));
        }
        for key in unprocessed {
            match lookup(key) {
                Some(i) if state[i] == NOT_FOUND => state[i] = UNPROCESSED,
                Some(_) => {}
                // Not a key this request asked for (a `customize` hook changed the keys):
                // asked again all the same, so it is not dropped.
                None => strays.extend(raw_key_of(schema, key).map(|k| (usize::MAX, k))),
            }
        }
    }
    let mut settled = Settled {
        found,
        not_found: Vec::new(),
        unprocessed: strays,
    };
    for (key, state) in asked.into_iter().zip(state) {
        match state {
            FOUND => {}
            UNPROCESSED => settled.unprocessed.push(key),
            _ => settled.not_found.push(key),
        }
    }
    settled
}

/// One `BatchGetItem` request, rendered into the SDK's builder and customized.
fn get_request<'k, X: Table>(
    db: &Db<X>,
    customize: &Customize<BatchGetItemFluentBuilder>,
    keys: impl Iterator<Item = &'k RawKey>,
    consistent: bool,
) -> Result<BatchGetItemFluentBuilder, Error> {
    let request = KeysAndAttributes::builder()
        .set_keys(Some(keys.map(|k| k.to_item(&X::SCHEMA)).collect()))
        .consistent_read(consistent)
        .build()
        .map_err(|e| Error::request_build("BatchGetItem", e))?;
    let request = db
        .client()
        .batch_get_item()
        .request_items(db.table_name(), request)
        .return_consumed_capacity(ReturnConsumedCapacity::Total);
    Ok(customize.apply(request))
}

async fn get_chunk<X: Table>(
    db: &Db<X>,
    customize: &Customize<BatchGetItemFluentBuilder>,
    mut keys: Vec<(usize, RawKey)>,
    consistent: bool,
    policy: &RetryPolicy,
    deadline: &Deadline,
) -> Result<GetChunk, Error> {
    const OP: &str = "BatchGetItem";
    let unpositioned = |keys: Vec<(usize, RawKey)>| keys.into_iter().map(|(_, k)| k).collect();
    let mut out = GetChunk::default();
    let mut attempt = 0;
    while !keys.is_empty() {
        // A chunk that waited for its turn past the deadline is not started at all.
        let go_on = if attempt == 0 {
            !deadline.passed()
        } else {
            deadline.backoff(policy, attempt).await
        };
        if !go_on {
            out.unprocessed = unpositioned(keys);
            break;
        }
        attempt += 1;
        out.attempts = attempt;
        let span = crate::trace::request(OP, attempt);
        crate::trace::record(&span, "dynamo_model.items", keys.len() as u64);
        let request = get_request(db, customize, keys.iter().map(|(_, k)| k), consistent)?.send();
        let Ok(result) = deadline.run(request).instrument(span.clone()).await else {
            // Cut off by the deadline: these keys were not read.
            out.unprocessed = unpositioned(keys);
            break;
        };
        match result {
            Ok(resp) => {
                let consumed = capacity_units(resp.consumed_capacity());
                crate::trace::record(&span, "aws.dynamodb.consumed_capacity", consumed);
                out.consumed += consumed;
                let items = resp
                    .responses
                    .and_then(|mut r| r.remove(db.table_name()))
                    .unwrap_or_default();
                let unprocessed = resp
                    .unprocessed_keys
                    .and_then(|mut u| u.remove(db.table_name()))
                    .map(|ka| ka.keys)
                    .unwrap_or_default();
                crate::trace::record(&span, "dynamo_model.unprocessed", unprocessed.len() as u64);
                let settled = settle(&X::SCHEMA, keys, items, &unprocessed);
                out.found.extend(settled.found);
                out.not_found.extend(settled.not_found);
                keys = settled.unprocessed;
            }
            Err(e) if is_retryable(&e) => {
                // The whole chunk again.
                crate::trace::record(&span, "error.type", error_code(&e));
            }
            Err(e) => {
                crate::trace::record(&span, "error.type", error_code(&e));
                // Reported with its keys; the other chunks go on.
                out.failed = Some((unpositioned(keys), Error::service(OP, db.table_name(), e)));
                break;
            }
        }
    }
    Ok(out)
}

// ------------------------------------------------------------------ batch write

/// One put or delete of a batch write.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum WriteOp {
    /// Put this item.
    Put {
        /// Entity type of the item.
        entity: &'static str,
        /// The item's key.
        key: RawKey,
        /// The whole item.
        item: Item,
    },
    /// Delete the item under this key.
    Delete {
        /// Entity type of the key.
        entity: &'static str,
        /// The key.
        key: RawKey,
    },
}

impl WriteOp {
    /// The key the operation writes.
    pub fn key(&self) -> &RawKey {
        match self {
            WriteOp::Put { key, .. } | WriteOp::Delete { key, .. } => key,
        }
    }

    fn request(&self, schema: &crate::TableSchema) -> Result<WriteRequest, Error> {
        const OP: &str = "BatchWriteItem";
        Ok(match self {
            WriteOp::Put { item, .. } => WriteRequest::builder()
                .put_request(
                    PutRequest::builder()
                        .set_item(Some(item.clone()))
                        .build()
                        .map_err(|e| Error::request_build(OP, e))?,
                )
                .build(),
            WriteOp::Delete { key, .. } => WriteRequest::builder()
                .delete_request(
                    DeleteRequest::builder()
                        .set_key(Some(key.to_item(schema)))
                        .build()
                        .map_err(|e| Error::request_build(OP, e))?,
                )
                .build(),
        })
    }
}

/// The outcome of a [`BatchWrite`] or bulk load.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct BatchWriteOutput {
    /// Operations DynamoDB confirmed.
    pub written: usize,
    /// Operations not confirmed when the deadline passed: returned, never dropped
    /// (resubmit them with [`BatchWrite::ops`]). Those of a request the deadline cut off
    /// in flight may have been applied: resubmitting one leaves the item as that operation
    /// alone would, but it also undoes whatever another writer changed on that item in
    /// between (batch writes carry no condition), so resubmit only items nobody else
    /// writes meanwhile, or re-read them first.
    pub unprocessed: Vec<WriteOp>,
    /// Chunks DynamoDB refused with a non-retryable error, with their operations (the
    /// other chunks were still written).
    pub failed: Vec<(Vec<WriteOp>, Error)>,
    /// Write capacity units consumed.
    pub consumed_capacity: f64,
}

/// Progress of a bulk load, reported after each `BatchWriteItem` call completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress {
    /// Operations confirmed so far.
    pub written: usize,
    /// Operations given up on so far.
    pub unprocessed: usize,
    /// All operations of the load.
    pub total: usize,
}

type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// A `BatchWriteItem` of any number of puts and deletes across the table's entity types;
/// see [`Db::batch_write`]. Two operations on the same key are refused before anything is
/// sent (DynamoDB would reject the call, and their order would be undefined).
///
/// # Keys another entity type can own
///
/// `BatchWriteItem` takes no condition expression (DynamoDB rule), so unlike
/// [`Db::put`] and [`Db::delete`] a batch cannot check that the item it replaces or
/// removes is of the operation's entity type. Instead, the whole batch is refused before
/// anything is sent, with [`ValidationReason::ForeignKeySpace`](crate::ValidationReason::ForeignKeySpace),
/// when an operation's key can also be the key of another entity type of the table (a
/// `Note` at `sk = "{note_id}"` with `note_id = "PROFILE"` has the key of a `User` at
/// `sk = "PROFILE"`), or is not a key its own entity's templates render (a
/// [`Key::from_raw`]). Write such items with [`Db::put`] / [`Db::delete`] or in a
/// transaction, whose conditions check the stored entity type.
/// [`registry::entity_types_of_key`](crate::registry::entity_types_of_key) tells which
/// entity types can own a key; the [`registry`](crate::registry) module says which
/// entity types are known (those compiled into the program, bound to the same `Table`
/// type).
#[must_use = "a batch does nothing until it is sent or awaited"]
pub struct BatchWrite<T: Table> {
    db: Db<T>,
    customize: Customize<BatchWriteItemFluentBuilder>,
    ops: Vec<WriteOp>,
    error: Option<Error>,
    concurrency: usize,
    policy: RetryPolicy,
    progress: Option<ProgressFn>,
    interleave: bool,
    /// The crate's own writes of chunk items (`crate::chunk`), in the chunk key space
    /// that no entity can own: not checked against the registry.
    chunks: bool,
}

impl<T: Table> BatchWrite<T> {
    fn fail(mut self, e: Error) -> Self {
        self.error.get_or_insert(e.during("BatchWriteItem"));
        self
    }

    /// Adds a put of `entity`. Entities with a `#[dynamo(version)]` field are refused:
    /// a batch write cannot carry the version check (DynamoDB rule), so it could overwrite
    /// a newer version; put them with [`Db::put`] or in a transaction.
    pub fn put<E: Entity<Table = T>>(mut self, entity: &E) -> Self {
        if let Err(e) = crate::chunk::refuse(E::ENTITY_TYPE, E::__CHUNKED, "batch write") {
            return self.fail(e);
        }
        if E::VERSION.is_some() {
            return self.fail(Error::invalid(
                E::ENTITY_TYPE,
                crate::ValidationReason::NotSupportedInBatch,
                "a batch write cannot check the version of a #[dynamo(version)] entity; use put or transact_write",
            ));
        }
        let item = match entity.to_item() {
            Ok(item) => item,
            Err(e) => return self.fail(e),
        };
        if let Err(e) = crate::size::check_item_size::<E>(&item) {
            return self.fail(e);
        }
        match entity.primary_key().raw() {
            Ok(key) => {
                let key = key.clone();
                self.ops.push(WriteOp::Put {
                    entity: E::ENTITY_TYPE,
                    key,
                    item,
                });
                self
            }
            Err(e) => self.fail(e),
        }
    }

    /// Adds puts.
    pub fn puts<'e, E: Entity<Table = T>>(self, entities: impl IntoIterator<Item = &'e E>) -> Self {
        entities.into_iter().fold(self, |b, e| b.put(e))
    }

    /// Adds a delete. Keys of an entity with a `#[dynamo(version)]` field are refused when
    /// the batch is sent ([`ValidationReason::NotSupportedInBatch`](crate::ValidationReason)):
    /// a batch write cannot check the stored version; delete those with
    /// [`Db::delete`](crate::Db::delete) and `if_version`, or in a transaction.
    pub fn delete<E: Entity<Table = T>>(mut self, key: Key<E>) -> Self {
        if let Err(e) = crate::chunk::refuse(E::ENTITY_TYPE, E::__CHUNKED, "batch write") {
            return self.fail(e);
        }
        match key.raw() {
            Ok(raw) => {
                let key = raw.clone();
                self.ops.push(WriteOp::Delete {
                    entity: E::ENTITY_TYPE,
                    key,
                });
                self
            }
            Err(e) => self.fail(e),
        }
    }

    /// Adds deletes.
    pub fn deletes<E: Entity<Table = T>>(self, keys: impl IntoIterator<Item = Key<E>>) -> Self {
        keys.into_iter().fold(self, |b, k| b.delete(k))
    }

    /// Adds operations as returned in [`BatchWriteOutput::unprocessed`], to resubmit them.
    /// They are checked like the others when the batch is sent: a put's item must be of
    /// its entity type and under its key, and the key one that no other entity type can
    /// own ([`ValidationReason::ForeignKeySpace`](crate::ValidationReason::ForeignKeySpace)).
    pub fn ops(mut self, ops: impl IntoIterator<Item = WriteOp>) -> Self {
        self.ops.extend(ops);
        self
    }

    /// How many `BatchWriteItem` calls run at once (default 4).
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// Backoff and deadline for unprocessed items and transient errors.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Called after each `BatchWriteItem` call completes.
    pub fn on_progress(mut self, f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }

    /// Spreads consecutive writes over partition keys: each call takes at most one item of
    /// a partition while others are waiting, instead of writing one partition at a time
    /// (which concentrates a bulk upload's load on one partition).
    pub fn interleave_partitions(mut self) -> Self {
        self.interleave = true;
        self
    }

    fn check_duplicates(&self) -> Result<(), Error> {
        let mut seen: HashMap<&RawKey, &WriteOp> = HashMap::with_capacity(self.ops.len());
        for op in &self.ops {
            if let Some(first) = seen.insert(op.key(), op) {
                let entity = match first {
                    WriteOp::Put { entity, .. } | WriteOp::Delete { entity, .. } => *entity,
                };
                return Err(Error::invalid(
                    entity,
                    crate::ValidationReason::DuplicateKey,
                    format!(
                        "two operations of one batch write target the same key (PK={}{}); DynamoDB rejects that, and their order would be undefined",
                        op.key().pk,
                        op.key()
                            .sk
                            .as_deref()
                            .map(|s| format!(", SK={s}"))
                            .unwrap_or_default()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Round-robin over partitions, keeping each partition's own order.
    fn interleaved(ops: Vec<WriteOp>) -> Vec<WriteOp> {
        let mut order: Vec<String> = Vec::new();
        let mut queues: HashMap<String, std::collections::VecDeque<WriteOp>> = HashMap::new();
        for op in ops {
            let pk = op.key().pk.clone();
            queues
                .entry(pk.clone())
                .or_insert_with(|| {
                    order.push(pk);
                    Default::default()
                })
                .push_back(op);
        }
        let mut out = Vec::new();
        while !order.is_empty() {
            order.retain(|pk| match queues.get_mut(pk).and_then(|q| q.pop_front()) {
                Some(op) => {
                    out.push(op);
                    true
                }
                None => false,
            });
        }
        out
    }

    /// The operations, checked (no error while adding, no key twice, no key another
    /// entity type can own) and in sending order, in chunks of 25.
    fn checked_chunks(&mut self) -> Result<Vec<Vec<WriteOp>>, Error> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.check_duplicates()?;
        // BatchWriteItem takes no condition, so nothing checks the stored item's type:
        // refuse keys another entity type can also own (see `crate::registry`).
        for op in &self.ops {
            let (entity, key, item) = match op {
                WriteOp::Put { entity, key, item } => (*entity, key, Some(item)),
                WriteOp::Delete { entity, key } => (*entity, key, None),
            };
            if self.chunks && crate::chunk::is_chunk_key(key) {
                continue;
            }
            crate::registry::check_unconditional_write::<T>(entity, key, item)
                .map_err(|e| e.during("BatchWriteItem"))?;
        }
        let ops = std::mem::take(&mut self.ops);
        let ops = if self.interleave {
            Self::interleaved(ops)
        } else {
            ops
        };
        Ok(ops
            .chunks(MAX_BATCH_WRITE)
            .map(<[WriteOp]>::to_vec)
            .collect())
    }

    /// The `BatchWriteItem` input of each chunk of 25 writes, in sending order, instead
    /// of sending them (like ElectroDB's `.params()`). Everything `send` refuses before
    /// sending is refused here too. Unprocessed items are sent again in inputs of the
    /// same form.
    ///
    /// ```
    /// # use dynamo_model::{Entity, Table};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// # #[derive(Entity, serde::Serialize, serde::Deserialize)]
    /// # #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # let db = dynamo_model::Db::<App>::offline("app");
    /// let users: Vec<User> = (0..30).map(|i| User { id: format!("u-{i}") }).collect();
    /// let inputs = db.batch_write().puts(&users).params()?;
    /// assert_eq!(inputs.len(), 2); // 25 + 5
    /// # Ok::<(), dynamo_model::Error>(())
    /// ```
    pub fn params(mut self) -> Result<Vec<BatchWriteItemInput>, Error> {
        self.checked_chunks()?
            .iter()
            .map(|chunk| {
                let request = write_request(&self.db, &self.customize, chunk)?;
                crate::request::input("BatchWriteItem", request.as_input().clone().build())
            })
            .collect()
    }

    /// Writes everything: chunks of 25, unprocessed items retried; what is left after the
    /// deadline is returned in [`BatchWriteOutput::unprocessed`].
    pub async fn send(self) -> Result<BatchWriteOutput, Error> {
        let span = crate::trace::operation("BatchWriteItem", self.db.table_name(), "*");
        crate::trace::record(&span, "dynamo_model.items", self.ops.len() as u64);
        crate::trace::traced(span, self.send_untraced()).await
    }

    async fn send_untraced(mut self) -> Result<BatchWriteOutput, Error> {
        let total = self.ops.len();
        let chunks = self.checked_chunks()?;
        let chunk_count = chunks.len();
        let deadline = Arc::new(Deadline::after(self.policy.deadline));
        let (db, customize) = (&self.db, &self.customize);
        let policy = self.policy;
        let progress = self.progress.take();
        let mut output = BatchWriteOutput::default();
        let mut results = stream::iter(chunks)
            .map(|chunk| {
                let deadline = Arc::clone(&deadline);
                async move { write_chunk(db, customize, chunk, &policy, &deadline).await }
            })
            .buffer_unordered(self.concurrency);
        let mut requests: usize = 0;
        while let Some(result) = results.next().await {
            let chunk = result?;
            requests += chunk.attempts as usize;
            output.written += chunk.written;
            output.consumed_capacity += chunk.consumed;
            output.unprocessed.extend(chunk.unprocessed);
            output.failed.extend(chunk.failed);
            if let Some(f) = &progress {
                let failed: usize = output.failed.iter().map(|(ops, _)| ops.len()).sum();
                f(Progress {
                    written: output.written,
                    unprocessed: output.unprocessed.len() + failed,
                    total,
                });
            }
        }
        crate::trace::record_current("dynamo_model.requests", requests as u64);
        crate::trace::record_current(
            "dynamo_model.retries",
            requests.saturating_sub(chunk_count) as u64,
        );
        crate::trace::record_current("aws.dynamodb.consumed_capacity", output.consumed_capacity);
        Ok(output)
    }
}

struct WriteChunk {
    /// Requests sent for the chunk.
    attempts: u32,
    written: usize,
    unprocessed: Vec<WriteOp>,
    failed: Option<(Vec<WriteOp>, Error)>,
    consumed: f64,
}

/// One `BatchWriteItem` request, rendered into the SDK's builder and customized.
fn write_request<X: Table>(
    db: &Db<X>,
    customize: &Customize<BatchWriteItemFluentBuilder>,
    ops: &[WriteOp],
) -> Result<BatchWriteItemFluentBuilder, Error> {
    let requests = ops
        .iter()
        .map(|op| op.request(&X::SCHEMA))
        .collect::<Result<Vec<_>, _>>()?;
    let request = db
        .client()
        .batch_write_item()
        .request_items(db.table_name(), requests)
        .return_consumed_capacity(ReturnConsumedCapacity::Total);
    Ok(customize.apply(request))
}

/// The DynamoDB error code of a failed request, for traces.
#[cfg_attr(not(feature = "tracing"), allow(dead_code))]
fn error_code<E: aws_sdk_dynamodb::error::ProvideErrorMetadata>(e: &E) -> String {
    e.code().unwrap_or("Unknown").to_owned()
}

async fn write_chunk<X: Table>(
    db: &Db<X>,
    customize: &Customize<BatchWriteItemFluentBuilder>,
    mut ops: Vec<WriteOp>,
    policy: &RetryPolicy,
    deadline: &Deadline,
) -> Result<WriteChunk, Error> {
    const OP: &str = "BatchWriteItem";
    let schema = &X::SCHEMA;
    let mut out = WriteChunk {
        attempts: 0,
        written: 0,
        unprocessed: Vec::new(),
        failed: None,
        consumed: 0.0,
    };
    let mut attempt = 0;
    while !ops.is_empty() {
        // A chunk that waited for its turn past the deadline is not started at all.
        let go_on = if attempt == 0 {
            !deadline.passed()
        } else {
            deadline.backoff(policy, attempt).await
        };
        if !go_on {
            out.unprocessed = ops;
            break;
        }
        attempt += 1;
        out.attempts = attempt;
        let span = crate::trace::request(OP, attempt);
        crate::trace::record(&span, "dynamo_model.items", ops.len() as u64);
        let request = write_request(db, customize, &ops)?.send();
        let Ok(result) = deadline.run(request).instrument(span.clone()).await else {
            // Cut off by the deadline in flight: DynamoDB may have applied any of these
            // writes, or none. Not confirmed, so not counted as written; returned as
            // unprocessed (a put or delete applied twice leaves the same item, unless
            // another writer changed it in between: see `BatchWriteOutput::unprocessed`).
            out.unprocessed = ops;
            break;
        };
        match result {
            Ok(resp) => {
                let consumed = capacity_units(resp.consumed_capacity());
                crate::trace::record(&span, "aws.dynamodb.consumed_capacity", consumed);
                out.consumed += consumed;
                let left: HashSet<RawKey> = resp
                    .unprocessed_items
                    .and_then(|mut u| u.remove(db.table_name()))
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|w| {
                        let item = match (&w.put_request, &w.delete_request) {
                            (Some(p), _) => &p.item,
                            (None, Some(d)) => &d.key,
                            (None, None) => return None,
                        };
                        raw_key_of(schema, item)
                    })
                    .collect();
                let before = ops.len();
                ops.retain(|op| left.contains(op.key()));
                crate::trace::record(&span, "dynamo_model.unprocessed", ops.len() as u64);
                out.written += before - ops.len();
            }
            Err(e) if is_retryable(&e) => {
                // The whole chunk again: puts and deletes are idempotent.
                crate::trace::record(&span, "error.type", error_code(&e));
            }
            Err(e) => {
                crate::trace::record(&span, "error.type", error_code(&e));
                // Reported with its operations; the other chunks go on.
                out.failed = Some((ops, Error::service(OP, db.table_name(), e)));
                break;
            }
        }
    }
    Ok(out)
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
            policy: RetryPolicy::default(),
            keep_order: false,
            unknown: UnknownEntity::Skip,
        }
    }

    /// Puts and deletes many items, of any entity types of the table.
    ///
    /// An operation whose key another entity type of the table can also own is refused
    /// before anything is sent ([`ValidationReason::ForeignKeySpace`](crate::ValidationReason::ForeignKeySpace)):
    /// a batch cannot check the stored item's type; see [`BatchWrite`].
    ///
    /// ```no_run
    /// # use dynamo_model::{Db, Entity, Table};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: Db<App>, users: Vec<User>) -> Result<(), dynamo_model::Error> {
    /// let out = db.batch_write().puts(&users).delete(User::key("gone")).await?;
    /// assert!(out.unprocessed.is_empty(), "{} writes left after the deadline", out.unprocessed.len());
    /// # Ok(()) }
    /// ```
    pub fn batch_write(&self) -> BatchWrite<T> {
        BatchWrite {
            db: self.clone(),
            customize: Customize::default(),
            ops: Vec::new(),
            error: None,
            concurrency: 4,
            policy: RetryPolicy::default(),
            progress: None,
            interleave: false,
            chunks: false,
        }
    }

    /// The crate's own batch write of chunk items (see [`crate::chunk`]).
    pub(crate) fn chunk_write(&self) -> BatchWrite<T> {
        BatchWrite {
            chunks: true,
            ..self.batch_write()
        }
    }

    /// A batch write set up for bulk uploads: writes interleaved across partition keys,
    /// eight concurrent calls. Add items with `puts` and follow progress with
    /// `on_progress`. Keys another entity type can own are refused, as in every
    /// [`BatchWrite`].
    pub fn bulk_load(&self) -> BatchWrite<T> {
        self.batch_write().interleave_partitions().concurrency(8)
    }
}

impl<X: Target> std::future::IntoFuture for BatchGet<X> {
    type Output = Result<BatchGetOutput<X>, Error>;
    type IntoFuture = crate::request::BoxFuture<'static, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}

impl<T: Table> std::future::IntoFuture for BatchWrite<T> {
    type Output = Result<BatchWriteOutput, Error>;
    type IntoFuture = crate::request::BoxFuture<'static, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}

crate::request::customizable!(
    impl[T: Target] BatchGet<T>,
    BatchGetItemFluentBuilder,
    "BatchGetItemFluentBuilder",
    "of every chunk, and every retry of its unprocessed keys, before it is sent",
    "A hook that changes the keys takes the batch out of the crate's accounting of found, missing and unprocessed keys."
);

crate::request::customizable!(
    impl[T: Table] BatchWrite<T>,
    BatchWriteItemFluentBuilder,
    "BatchWriteItemFluentBuilder",
    "of every chunk, and every retry of its unprocessed items, before it is sent",
    "A hook that changes the writes takes the batch out of the crate's guarantees (key-space checks, the accounting of what was written)."
);

#[cfg(test)]
mod tests;
