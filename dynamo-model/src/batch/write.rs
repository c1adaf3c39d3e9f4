//! Batch writes: puts and deletes checked for duplicates and foreign key spaces, chunked by 25,
//! written with bounded concurrency, the unprocessed items retried until the deadline and reported.

use super::MAX_BATCH_WRITE;
use crate::call::{Action, Call, Operation, Policy, Target};
use crate::request::Customize;
use crate::request::exec::{Attempt, Attempts};
use crate::request::exec::{Sending, exec};
use crate::retry::{Deadline, RetryPolicy};
use crate::schema::raw_key_of;
use crate::{Db, Entity, Error, Item, Key, RawKey, Table};
use aws_sdk_dynamodb::operation::batch_write_item::BatchWriteItemInput;
use aws_sdk_dynamodb::operation::batch_write_item::builders::BatchWriteItemFluentBuilder;
use aws_sdk_dynamodb::types::{DeleteRequest, PutRequest, WriteRequest};
use futures_util::stream::{self, StreamExt};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

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

    /// What the operation writes, for the record of its call (`crate::call`).
    fn target(&self, schema: &crate::TableSchema, table: &std::sync::Arc<str>) -> Target {
        match self {
            WriteOp::Put { entity, item, .. } => {
                Target::put(schema, table.clone(), item).of(entity)
            }
            WriteOp::Delete { entity, key } => {
                Target::key(table.clone(), Action::Delete, Some(*entity), key)
            }
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
pub struct LoadProgress {
    /// Operations confirmed so far.
    pub written: usize,
    /// Operations given up on so far.
    pub unprocessed: usize,
    /// All operations of the load.
    pub total: usize,
}

type ProgressFn = Arc<dyn Fn(LoadProgress) + Send + Sync>;

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
        // Entities with unique values are refused with every batch operation, typed or
        // raw, through their registration (`registry::check_unconditional_write`).
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
        if E::__STAMPS.created.is_some() {
            return self.fail(Error::invalid(
                E::ENTITY_TYPE,
                crate::ValidationReason::NotSupportedInBatch,
                "a batch write cannot keep the creation time an item already holds (it takes no condition); put an entity with a #[dynamo(created)] field with put, create or transact_write",
            ));
        }
        let item = match crate::entity::write_item(
            entity,
            Some(crate::entity::Stamp::now()),
            self.db.keys(),
        ) {
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
        // Entities with unique values are refused with every batch operation, typed or
        // raw, through their registration (`registry::check_unconditional_write`).
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

    crate::setters::setters! {
        /// How many `BatchWriteItem` calls run at once (default 4).
        concurrency(n: usize) => concurrency = n.max(1);
        /// Backoff and deadline for unprocessed items and transient errors.
        retry(policy: RetryPolicy) => policy = policy;
    }

    /// Called after each `BatchWriteItem` call completes.
    pub fn on_progress(mut self, f: impl Fn(LoadProgress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }

    crate::setters::setters! {
        /// Spreads consecutive writes over partition keys: each call takes at most one item of
        /// a partition while others are waiting, instead of writing one partition at a time
        /// (which concentrates a bulk upload's load on one partition).
        interleave_partitions() => interleave = true;
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
                        "two operations of one batch write target the same key ({}); DynamoDB rejects that, and their order would be undefined",
                        crate::error::key_text(&format_args!(
                            "PK={}{}",
                            op.key().pk,
                            op.key()
                                .sk
                                .as_deref()
                                .map(|s| format!(", SK={s}"))
                                .unwrap_or_default()
                        )),
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Round-robin over partitions, keeping each partition's own order.
    pub(super) fn interleaved(ops: Vec<WriteOp>) -> Vec<WriteOp> {
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
                f(LoadProgress {
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
    Ok(batch_request!(db, customize, batch_write_item, requests))
}

/// The record of a `BatchWriteItem` of `ops` (`crate::call`).
fn write_sending<X: Table>(db: &Db<X>, ops: &[WriteOp]) -> Sending {
    Sending::new(db, Operation::BatchWriteItem, Policy::BATCH, || {
        let table = db.table_arc();
        Call {
            targets: ops.iter().map(|op| op.target(&X::SCHEMA, table)).collect(),
            ..Call::new(Operation::BatchWriteItem, table.clone())
        }
    })
}

async fn write_chunk<X: Table>(
    db: &Db<X>,
    customize: &Customize<BatchWriteItemFluentBuilder>,
    mut ops: Vec<WriteOp>,
    policy: &RetryPolicy,
    deadline: &Deadline,
) -> Result<WriteChunk, Error> {
    let schema = &X::SCHEMA;
    let mut out = WriteChunk {
        attempts: 0,
        written: 0,
        unprocessed: Vec::new(),
        failed: None,
        consumed: 0.0,
    };
    let mut attempts = Attempts::new(Operation::BatchWriteItem, policy, deadline);
    while !ops.is_empty() {
        let request = || {
            Ok(exec!(
                write_sending(db, &ops),
                write_request(db, customize, &ops)?
            ))
        };
        match attempts.next(Some(ops.len()), request).await? {
            // Not started before the deadline, or cut off by it in flight: DynamoDB may
            // have applied any of these writes, or none. Not confirmed, so not counted as
            // written; returned as unprocessed (a put or delete applied twice leaves the
            // same item, unless another writer changed it in between: see
            // `BatchWriteOutput::unprocessed`).
            Attempt::NotSent | Attempt::CutOff => {
                out.unprocessed = ops;
                break;
            }
            Attempt::Answered(resp, span) => {
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
            // The whole chunk again: puts and deletes are idempotent.
            Attempt::Retry(_) => {}
            // Reported with its operations; the other chunks go on.
            Attempt::Refused(e) => {
                let e = Error::service("BatchWriteItem", db.table_name(), e);
                out.failed = Some((ops, e));
                break;
            }
        }
    }
    (out.attempts, out.consumed) = (attempts.sent(), attempts.consumed());
    Ok(out)
}

impl<T: Table> Db<T> {
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
            policy: self.retry_policy_or(RetryPolicy::default()),
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

crate::request::into_future!(impl[T: Table] BatchWrite<T>, BatchWriteOutput);

crate::request::customizable!(
    impl[T: Table] BatchWrite<T>,
    BatchWriteItemFluentBuilder,
    "of every chunk, and every retry of its unprocessed items, before it is sent",
    "A hook that changes the writes takes the batch out of the crate's guarantees (key-space checks, the accounting of what was written)."
);
