//! Batch writes: puts and deletes checked for duplicates and foreign key spaces, chunked by 25,
//! written with bounded concurrency, the unprocessed items retried until the deadline and reported.

pub(super) mod tables;

pub use tables::{TableRef, WriteOp};

use super::MAX_BATCH_WRITE;
use crate::call::{Call, Operation, Policy};
use crate::request::Customize;
use crate::request::exec::{Attempt, Attempts};
use crate::request::exec::{Sending, exec};
use crate::retry::{Deadline, RetryPolicy};
use crate::{Db, Entity, Error, Key, RawKey, Table};
use aws_sdk_dynamodb::operation::batch_write_item::BatchWriteItemInput;
use aws_sdk_dynamodb::operation::batch_write_item::builders::BatchWriteItemFluentBuilder;
use futures_util::stream::{self, StreamExt};
use std::collections::HashMap;
use std::sync::Arc;

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
    /// Operations DynamoDB refused with a non-retryable error (nothing of a refused call
    /// is written), each group of one table with that table's error: a refused call that
    /// spans tables is sent again table by table. The other operations were still written.
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

/// A `BatchWriteItem` of any number of puts and deletes across the table's entity types,
/// and other tables' ([`put_to`](Self::put_to), [`delete_from`](Self::delete_from)); see
/// [`Db::batch_write`]. Two operations on the same key of one table are refused before
/// anything is sent (DynamoDB would reject the call, and their order would be undefined).
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
    pub fn put<E: Entity<Table = T>>(self, entity: &E) -> Self {
        let db = self.db.clone();
        self.push_put(entity, db.keys(), None)
    }

    /// Adds puts.
    pub fn puts<'e, E: Entity<Table = T>>(self, entities: impl IntoIterator<Item = &'e E>) -> Self {
        entities.into_iter().fold(self, |b, e| b.put(e))
    }

    /// Adds a put of `entity` to the table of `db`, of any table type: another table, or
    /// another table of this batch's type (a [`PeriodTables::db_at`](dynamo_model::period::PeriodTables::db_at)).
    /// The call is sent with this batch's client; the item is checked as with
    /// [`put`](Self::put), against the entity types of `db`'s table type, and rendered with
    /// `db`'s encryption keys.
    pub fn put_to<E: Entity>(self, db: &Db<E::Table>, entity: &E) -> Self {
        self.push_put(entity, db.keys(), Some(TableRef::of(db)))
    }

    /// Adds puts to the table of `db` (see [`put_to`](Self::put_to)).
    pub fn puts_to<'e, E: Entity>(
        self,
        db: &Db<E::Table>,
        entities: impl IntoIterator<Item = &'e E>,
    ) -> Self {
        entities.into_iter().fold(self, |b, e| b.put_to(db, e))
    }

    fn push_put<E: Entity>(
        self,
        entity: &E,
        keys: Option<&dyn crate::encrypt::KeyProvider>,
        table: Option<TableRef>,
    ) -> Self {
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
        let item = match crate::entity::write_item(entity, Some(crate::entity::Stamp::now()), keys)
        {
            Ok(item) => item,
            Err(e) => return self.fail(e),
        };
        if let Err(e) = crate::size::check_item_size::<E>(&item) {
            return self.fail(e);
        }
        let op = entity.primary_key().raw().map(|key| WriteOp::Put {
            entity: E::ENTITY_TYPE,
            key: key.clone(),
            item,
            table,
        });
        self.push(op)
    }

    fn push(mut self, op: Result<WriteOp, Error>) -> Self {
        match op {
            Ok(op) => {
                self.ops.push(op);
                self
            }
            Err(e) => self.fail(e),
        }
    }

    /// Adds a delete. Keys of an entity with a `#[dynamo(version)]` field are refused when
    /// the batch is sent ([`ValidationReason::NotSupportedInBatch`](crate::ValidationReason)):
    /// a batch write cannot check the stored version; delete those with
    /// [`Db::delete`](crate::Db::delete) and `if_version`, or in a transaction.
    pub fn delete<E: Entity<Table = T>>(self, key: Key<E>) -> Self {
        self.push_delete(key, None)
    }

    /// Adds deletes.
    pub fn deletes<E: Entity<Table = T>>(self, keys: impl IntoIterator<Item = Key<E>>) -> Self {
        keys.into_iter().fold(self, |b, k| b.delete(k))
    }

    /// Adds a delete from the table of `db`, of any table type (see
    /// [`put_to`](Self::put_to)); checked as with [`delete`](Self::delete).
    pub fn delete_from<E: Entity>(self, db: &Db<E::Table>, key: Key<E>) -> Self {
        self.push_delete(key, Some(TableRef::of(db)))
    }

    /// Adds deletes from the table of `db` (see [`delete_from`](Self::delete_from)).
    pub fn deletes_from<E: Entity>(
        self,
        db: &Db<E::Table>,
        keys: impl IntoIterator<Item = Key<E>>,
    ) -> Self {
        keys.into_iter().fold(self, |b, k| b.delete_from(db, k))
    }

    fn push_delete<E: Entity>(self, key: Key<E>, table: Option<TableRef>) -> Self {
        // Entities with unique values are refused with every batch operation, typed or
        // raw, through their registration (`registry::check_unconditional_write`).
        if let Err(e) = crate::chunk::refuse(E::ENTITY_TYPE, E::__CHUNKED, "batch write") {
            return self.fail(e);
        }
        let op = key.raw().map(|raw| WriteOp::Delete {
            entity: E::ENTITY_TYPE,
            key: raw.clone(),
            table,
        });
        self.push(op)
    }

    /// Adds operations as returned in [`BatchWriteOutput::unprocessed`], to resubmit them:
    /// each goes to its own table ([`WriteOp::table`]; this batch's table when `None`).
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

    /// Refuses two operations on one key of one table (the same key in two tables is fine).
    fn check_duplicates(&self, own: &TableRef) -> Result<(), Error> {
        let mut seen: HashMap<(&str, &RawKey), &WriteOp> = HashMap::with_capacity(self.ops.len());
        for op in &self.ops {
            if let Some(first) = seen.insert((op.table_or(own).name(), op.key()), op) {
                return Err(Error::invalid(
                    first.entity(),
                    crate::ValidationReason::DuplicateKey,
                    format!(
                        "two operations of one batch write target the same key ({}) of table {}; DynamoDB rejects that, and their order would be undefined",
                        crate::error::key_text(&format_args!(
                            "PK={}{}",
                            op.key().pk,
                            op.key()
                                .sk
                                .as_deref()
                                .map(|s| format!(", SK={s}"))
                                .unwrap_or_default()
                        )),
                        op.table_or(own).name(),
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
        let own = TableRef::of(&self.db);
        self.check_duplicates(&own)?;
        // BatchWriteItem takes no condition, so nothing checks the stored item's type:
        // refuse keys another entity type of the op's table type can also own (see
        // `crate::registry`).
        for op in &self.ops {
            if self.chunks && crate::chunk::is_chunk_key(op.key()) {
                continue;
            }
            op.table_or(&own)
                .check(op)
                .map_err(|e| e.during("BatchWriteItem"))?;
        }
        let ops = std::mem::take(&mut self.ops);
        let ops = if self.interleave {
            Self::interleaved(ops)
        } else {
            ops
        };
        // At most 25 requests per call, whatever their tables; each item is at most
        // 400 KB (checked when added), so a call stays under DynamoDB's 16 MB.
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
    failed: Vec<(Vec<WriteOp>, Error)>,
    consumed: f64,
}

/// One `BatchWriteItem` request of `db`'s client, its requests grouped by table,
/// rendered into the SDK's builder and customized.
fn write_request<X: Table>(
    db: &Db<X>,
    customize: &Customize<BatchWriteItemFluentBuilder>,
    ops: &[WriteOp],
) -> Result<BatchWriteItemFluentBuilder, Error> {
    let request = db
        .client()
        .batch_write_item()
        .set_request_items(Some(tables::request_items(ops, &TableRef::of(db))?))
        .return_consumed_capacity(aws_sdk_dynamodb::types::ReturnConsumedCapacity::Total);
    Ok(customize.apply(request))
}

/// The record of a `BatchWriteItem` of `ops` (`crate::call`): each op in its own table.
fn write_sending<X: Table>(db: &Db<X>, ops: &[WriteOp]) -> Sending {
    Sending::new(db, Operation::BatchWriteItem, Policy::BATCH, || {
        let own = TableRef::of(db);
        Call {
            targets: ops.iter().map(|op| op.target(&own)).collect(),
            ..Call::new(Operation::BatchWriteItem, db.table_arc().clone())
        }
    })
}

async fn write_chunk<X: Table>(
    db: &Db<X>,
    customize: &Customize<BatchWriteItemFluentBuilder>,
    ops: Vec<WriteOp>,
    policy: &RetryPolicy,
    deadline: &Deadline,
) -> Result<WriteChunk, Error> {
    let mut out = WriteChunk {
        attempts: 0,
        written: 0,
        unprocessed: Vec::new(),
        failed: Vec::new(),
        consumed: 0.0,
    };
    let mut attempts = Attempts::new(Operation::BatchWriteItem, policy, deadline);
    let mut pending = vec![ops];
    while let Some(mut ops) = pending.pop() {
        write_ops(
            db,
            customize,
            &mut ops,
            &mut attempts,
            &mut out,
            &mut pending,
        )
        .await?;
    }
    (out.attempts, out.consumed) = (attempts.sent(), attempts.consumed());
    Ok(out)
}

/// Sends `ops` until each is written, handed back or refused. A call DynamoDB refuses
/// (nothing of it applied) that spans tables is split by table into `pending`, so that
/// each table's operations are refused with its own error, or written.
async fn write_ops<X: Table>(
    db: &Db<X>,
    customize: &Customize<BatchWriteItemFluentBuilder>,
    ops: &mut Vec<WriteOp>,
    attempts: &mut Attempts<'_>,
    out: &mut WriteChunk,
    pending: &mut Vec<Vec<WriteOp>>,
) -> Result<(), Error> {
    let own = TableRef::of(db);
    while !ops.is_empty() {
        let request = || {
            Ok(exec!(
                write_sending(db, ops),
                write_request(db, customize, ops)?
            ))
        };
        match attempts.next(Some(ops.len()), request).await? {
            // Not started before the deadline, or cut off by it in flight: DynamoDB may
            // have applied any of these writes, or none. Not confirmed, so not counted as
            // written; returned as unprocessed (a put or delete applied twice leaves the
            // same item, unless another writer changed it in between: see
            // `BatchWriteOutput::unprocessed`).
            Attempt::NotSent | Attempt::CutOff => {
                out.unprocessed.append(ops);
                break;
            }
            Attempt::Answered(resp, span) => {
                let left = resp.unprocessed_items.unwrap_or_default();
                out.written += tables::keep_unprocessed(ops, left, &own);
                crate::trace::record(&span, "dynamo_model.unprocessed", ops.len() as u64);
            }
            // The whole chunk again: puts and deletes are idempotent.
            Attempt::Retry(_) => {}
            // Reported with its operations, under their table; the other chunks go on.
            Attempt::Refused(e) => {
                let mut groups = tables::by_table(std::mem::take(ops), &own);
                if groups.len() > 1 {
                    pending.append(&mut groups);
                } else {
                    let table = groups
                        .first()
                        .and_then(|g| g.first())
                        .map(|op| op.table_or(&own));
                    let name = table.map_or(db.table_name(), |t| t.name());
                    let e = Error::service("BatchWriteItem", name, e);
                    out.failed.push((groups.into_iter().flatten().collect(), e));
                }
                break;
            }
        }
    }
    Ok(())
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
