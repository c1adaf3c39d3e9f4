//! Batch gets: keys chunked by 100, de-duplicated, read with bounded concurrency, the unprocessed
//! keys retried until the deadline; found, missing and unread keys reported.

use super::MAX_BATCH_GET;
use crate::call::{Action, Call, Operation, Policy, Target as CallTarget};
use crate::collection::{Includes, Target};
use crate::request::Customize;
use crate::request::exec::{Attempt, Attempts};
use crate::request::exec::{Sending, exec};
use crate::request::page::UnknownEntity;
use crate::request::page::decode_target;
use crate::retry::{Deadline, RetryPolicy};
use crate::schema::raw_key_of;
use crate::{Db, Entity, Error, Item, Key, RawKey, Table};
use aws_sdk_dynamodb::operation::batch_get_item::BatchGetItemInput;
use aws_sdk_dynamodb::operation::batch_get_item::builders::BatchGetItemFluentBuilder;
use aws_sdk_dynamodb::types::KeysAndAttributes;
use futures_util::stream::{self, StreamExt};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

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
        keys.chunks(MAX_BATCH_GET)
            .map(|chunk| {
                let request = get_request(
                    &self.db,
                    &self.customize,
                    chunk.iter().copied(),
                    self.consistent,
                )?;
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
            crate::collection::single_entity::<T>(),
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
    entity: Option<&'static str>,
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
    let results: Vec<Result<GetChunk, Error>> =
        stream::iter(chunks)
            .map(|chunk| {
                let deadline = Arc::clone(&deadline);
                async move {
                    get_chunk(db, entity, customize, chunk, consistent, &policy, &deadline).await
                }
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
pub(super) struct Settled {
    pub(super) found: Vec<(usize, Item)>,
    pub(super) not_found: Vec<(usize, RawKey)>,
    /// To be asked again.
    pub(super) unprocessed: Vec<(usize, RawKey)>,
}

/// Accounts for every key of one `BatchGetItem` response: each requested key is found
/// (an item came back under it), unprocessed (DynamoDB handed it back), or else not found
/// (DynamoDB answers every key it processed). Keys are compared borrowed from the items
/// and the requested keys: nothing is copied, each key hashed once.
pub(super) fn settle(
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
    Ok(batch_request!(db, customize, batch_get_item, request))
}

/// How a `BatchGetItem` of `keys` is sent, with the record of its call (`crate::call`).
fn get_sending<X: Table>(
    db: &Db<X>,
    entity: Option<&'static str>,
    keys: &[(usize, RawKey)],
    consistent: bool,
) -> Sending {
    Sending::new(db, Operation::BatchGetItem, Policy::BATCH, || {
        let table = db.table_arc();
        let targets = keys
            .iter()
            .map(|(_, key)| CallTarget::key(table.clone(), Action::Get, entity, key));
        Call {
            targets: targets.collect(),
            keys: keys.len(),
            consistent,
            ..Call::new(Operation::BatchGetItem, table.clone())
        }
    })
}

async fn get_chunk<X: Table>(
    db: &Db<X>,
    entity: Option<&'static str>,
    customize: &Customize<BatchGetItemFluentBuilder>,
    mut keys: Vec<(usize, RawKey)>,
    consistent: bool,
    policy: &RetryPolicy,
    deadline: &Deadline,
) -> Result<GetChunk, Error> {
    let unpositioned = |keys: Vec<(usize, RawKey)>| keys.into_iter().map(|(_, k)| k).collect();
    let mut out = GetChunk::default();
    let mut attempts = Attempts::new(Operation::BatchGetItem, policy, deadline);
    while !keys.is_empty() {
        let request = || {
            let sending = get_sending(db, entity, &keys, consistent);
            let request = get_request(db, customize, keys.iter().map(|(_, k)| k), consistent)?;
            Ok(exec!(sending, request))
        };
        match attempts.next(Some(keys.len()), request).await? {
            // Not started before the deadline, or cut off by it: these keys were not read.
            Attempt::NotSent | Attempt::CutOff => {
                out.unprocessed = unpositioned(keys);
                break;
            }
            Attempt::Answered(resp, span) => {
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
            // The whole chunk again.
            Attempt::Retry(_) => {}
            // Reported with its keys; the other chunks go on.
            Attempt::Refused(e) => {
                let e = Error::service("BatchGetItem", db.table_name(), e);
                out.failed = Some((unpositioned(keys), e));
                break;
            }
        }
    }
    (out.attempts, out.consumed) = (attempts.sent(), attempts.consumed());
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
