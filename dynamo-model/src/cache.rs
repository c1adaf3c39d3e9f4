//! A read-through cache for hot items (feature `cache`): gets by key answered from memory,
//! bounded in size and age, and invalidated by this client's own writes.
//!
//! An item read thousands of times a second (a configuration item, a celebrity's profile,
//! a product on the front page) makes a hot partition and costs a read unit each time.
//! With a [`Cache`] attached to a [`Db`] ([`Db::with_cache`]), a get of an entity the cache
//! was told to keep ([`CacheBuilder::entity`]), or a get marked
//! [`cached`](crate::ops::Get::cached), is answered from memory when the item was read
//! within the cache's time to live:
//!
//! ```no_run
//! # use dynamo_model::{Db, Entity, Table, cache::Cache};
//! # use serde::{Deserialize, Serialize};
//! # use std::time::Duration;
//! # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
//! # #[derive(Entity, Serialize, Deserialize, Clone)]
//! # #[dynamo(table = App, pk = "PRODUCT#{id}", sk = "PRODUCT")]
//! # struct Product { id: String, price: u64 }
//! # async fn demo(db: Db<App>) -> Result<(), dynamo_model::Error> {
//! let cache = Cache::builder()
//!     .max_items(10_000)
//!     .time_to_live(Duration::from_secs(30))
//!     .entity::<Product>()
//!     .build();
//! let db = db.with_cache(&cache);
//! let first = db.get(Product::key("p-1")).await?; // a GetItem
//! let again = db.get(Product::key("p-1")).await?; // from memory
//! println!("{:?}", cache.stats());
//! # Ok(()) }
//! ```
//!
//! What it guarantees, and what not:
//! - a write of the key sent through a `Db` sharing the cache (put, update, delete, batch
//!   write, transaction, chunked put, history) removes the cached item before it is sent and
//!   again when it completes, and a get that started before such a write never stores what
//!   it read, so this client never reads back an item older than its own completed writes;
//! - writes by other clients (another process, another `Db` without this cache) are seen
//!   only when the cached item expires: the time to live bounds how stale a read can be.
//!   Use it for items that may be that stale;
//! - a strongly consistent get ([`consistent`](crate::ops::Get::consistent)) always reads
//!   DynamoDB; so does a get with a `customize` hook, and a get of an entity with chunked
//!   fields (its chunks are not cached);
//! - a missing item is not cached: only items that exist.

use crate::{Db, Entity, Item, RawKey};
use aws_sdk_dynamodb::config::interceptors::{
    BeforeSerializationInterceptorContextMut, FinalizerInterceptorContextRef,
};
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::error::BoxError;
use aws_sdk_dynamodb::operation::{
    batch_write_item::BatchWriteItemInput, delete_item::DeleteItemInput, put_item::PutItemInput,
    transact_write_items::TransactWriteItemsInput, update_item::UpdateItemInput,
};
use aws_sdk_dynamodb::types::AttributeValue;
use aws_smithy_types::config_bag::{Storable, StoreReplace};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The cache's key: the table and the item's key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Slot {
    table: Arc<str>,
    key: RawKey,
}

/// Hit and miss counters of a [`Cache`] ([`Cache::stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheStats {
    /// Gets answered from memory.
    pub hits: u64,
    /// Gets that consulted the cache and read DynamoDB.
    pub misses: u64,
    /// Cached items removed by this client's writes.
    pub invalidations: u64,
    /// Items held now (approximate: expired items leave lazily).
    pub items: u64,
}

impl CacheStats {
    /// Hits over hits and misses (`0.0` before any get).
    pub fn hit_rate(&self) -> f64 {
        let total = self.hits + self.misses;
        if total == 0 {
            0.0
        } else {
            self.hits as f64 / total as f64
        }
    }
}

struct Shared {
    items: moka::sync::Cache<Slot, Arc<Item>>,
    /// Entity types every get caches.
    entities: HashSet<&'static str>,
    hits: AtomicU64,
    misses: AtomicU64,
    invalidations: AtomicU64,
    /// Counts this client's writes: a get that saw it change while it was reading does
    /// not store what it read (the write may have changed the item after the read).
    writes: AtomicU64,
}

/// A bounded, expiring cache of items read by key, shared by the [`Db`]s it is attached
/// to ([`Db::with_cache`]). Cloning is cheap; clones share the items and counters. See
/// the [module documentation](self).
#[derive(Clone)]
pub struct Cache {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

/// Builds a [`Cache`]: [`Cache::builder`].
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until build() is called"]
pub struct CacheBuilder {
    max_items: u64,
    ttl: Duration,
    entities: HashSet<&'static str>,
}

impl CacheBuilder {
    /// At most this many items (default 10,000); the least recently used leave first.
    pub fn max_items(mut self, n: u64) -> Self {
        self.max_items = n;
        self
    }

    /// How long an item stays after it was read (default 60 seconds): the most a read can
    /// lag behind another client's write.
    pub fn time_to_live(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Caches every get of entity `E` (without it, only gets marked
    /// [`cached`](crate::ops::Get::cached) use the cache).
    pub fn entity<E: Entity>(mut self) -> Self {
        self.entities.insert(E::ENTITY_TYPE);
        self
    }

    /// The cache.
    pub fn build(self) -> Cache {
        Cache {
            shared: Arc::new(Shared {
                items: moka::sync::Cache::builder()
                    .max_capacity(self.max_items)
                    .time_to_live(self.ttl)
                    .build(),
                entities: self.entities,
                hits: AtomicU64::new(0),
                misses: AtomicU64::new(0),
                invalidations: AtomicU64::new(0),
                writes: AtomicU64::new(0),
            }),
        }
    }
}

impl Cache {
    /// A builder with the defaults: 10,000 items, 60 seconds, no entity cached by default.
    pub fn builder() -> CacheBuilder {
        CacheBuilder {
            max_items: 10_000,
            ttl: Duration::from_secs(60),
            entities: HashSet::new(),
        }
    }

    /// The counters so far.
    pub fn stats(&self) -> CacheStats {
        let s = &self.shared;
        CacheStats {
            hits: s.hits.load(Ordering::Relaxed),
            misses: s.misses.load(Ordering::Relaxed),
            invalidations: s.invalidations.load(Ordering::Relaxed),
            items: s.items.entry_count(),
        }
    }

    /// Removes every item.
    pub fn clear(&self) {
        self.shared.items.invalidate_all();
    }

    /// Whether gets of `entity` use the cache without being marked.
    pub(crate) fn keeps(&self, entity: &str) -> bool {
        self.shared.entities.contains(entity)
    }

    /// The cached item under `key` of `table`, counting a hit or a miss. A miss returns
    /// the write count to give [`store`](Self::store).
    pub(crate) fn lookup(&self, table: &Arc<str>, key: RawKey) -> Result<Arc<Item>, Miss> {
        let slot = Slot {
            table: table.clone(),
            key,
        };
        // Read before the lookup: a write between the two makes `store` refuse.
        let writes = self.shared.writes.load(Ordering::SeqCst);
        match self.shared.items.get(&slot) {
            Some(item) => {
                self.shared.hits.fetch_add(1, Ordering::Relaxed);
                Ok(item)
            }
            None => {
                self.shared.misses.fetch_add(1, Ordering::Relaxed);
                Err(Miss { slot, writes })
            }
        }
    }

    /// Stores what a get read after a miss, unless this client wrote since the lookup.
    pub(crate) fn store(&self, miss: Miss, item: Item) {
        if self.shared.writes.load(Ordering::SeqCst) != miss.writes {
            return;
        }
        self.shared.items.insert(miss.slot.clone(), Arc::new(item));
        // A write that began while inserting: take the item out again.
        if self.shared.writes.load(Ordering::SeqCst) != miss.writes {
            self.shared.items.invalidate(&miss.slot);
        }
    }

    /// Removes the items of `keys` in `table`, and makes gets in flight not store theirs.
    fn written(&self, table: &str, keys: &[RawKey]) {
        self.shared.writes.fetch_add(1, Ordering::SeqCst);
        for key in keys {
            let slot = Slot {
                table: Arc::from(table),
                key: key.clone(),
            };
            if self.shared.items.contains_key(&slot) {
                self.shared.invalidations.fetch_add(1, Ordering::Relaxed);
            }
            self.shared.items.invalidate(&slot);
        }
    }
}

/// A lookup that found nothing: where to store what the get reads.
pub(crate) struct Miss {
    slot: Slot,
    writes: u64,
}

impl<T: crate::Table> Db<T> {
    /// A `Db` on the same table whose gets may be answered by `cache`, and whose writes
    /// invalidate it (see [`crate::cache`]). Its client is a copy of this one's with one
    /// more interceptor: build it once, not per call.
    pub fn with_cache(&self, cache: &Cache) -> Db<T> {
        let config = self
            .client()
            .config()
            .to_builder()
            .interceptor(Invalidate {
                cache: cache.clone(),
                schema: &T::SCHEMA,
            })
            .build();
        self.with_client(aws_sdk_dynamodb::Client::from_conf(config))
            .set_cache(Some(cache.clone()))
    }
}

/// The interceptor behind [`Db::with_cache`]: every write's keys leave the cache before
/// the write is sent and again once it completed.
#[derive(Debug)]
struct Invalidate {
    cache: Cache,
    schema: &'static crate::TableSchema,
}

/// The keys a write touches, kept from its input for after it completes.
#[derive(Debug, Clone)]
struct Touched(Vec<(String, RawKey)>);

impl Storable for Touched {
    type Storer = StoreReplace<Touched>;
}

impl Invalidate {
    fn key(&self, item: &std::collections::HashMap<String, AttributeValue>) -> Option<RawKey> {
        crate::key::raw_key_of(self.schema, item)
    }

    fn touched(
        &self,
        input: &mut aws_smithy_runtime_api::client::interceptors::context::Input,
    ) -> Vec<(String, RawKey)> {
        let mut out = Vec::new();
        let mut push = |table: Option<&String>, item: Option<&Item>| {
            if let (Some(table), Some(key)) = (table, item.and_then(|i| self.key(i))) {
                out.push((table.clone(), key));
            }
        };
        if let Some(i) = input.downcast_ref::<PutItemInput>() {
            push(i.table_name.as_ref(), i.item.as_ref());
        } else if let Some(i) = input.downcast_ref::<UpdateItemInput>() {
            push(i.table_name.as_ref(), i.key.as_ref());
        } else if let Some(i) = input.downcast_ref::<DeleteItemInput>() {
            push(i.table_name.as_ref(), i.key.as_ref());
        } else if let Some(i) = input.downcast_ref::<BatchWriteItemInput>() {
            for (table, requests) in i.request_items.iter().flatten() {
                for r in requests {
                    push(Some(table), r.put_request.as_ref().map(|p| &p.item));
                    push(Some(table), r.delete_request.as_ref().map(|d| &d.key));
                }
            }
        } else if let Some(i) = input.downcast_ref::<TransactWriteItemsInput>() {
            for t in i.transact_items.iter().flatten() {
                if let Some(p) = &t.put {
                    push(Some(&p.table_name), Some(&p.item));
                }
                if let Some(u) = &t.update {
                    push(Some(&u.table_name), Some(&u.key));
                }
                if let Some(d) = &t.delete {
                    push(Some(&d.table_name), Some(&d.key));
                }
            }
        }
        out
    }

    fn invalidate(&self, touched: &[(String, RawKey)]) {
        for (table, key) in touched {
            self.cache.written(table, std::slice::from_ref(key));
        }
    }
}

impl Intercept for Invalidate {
    fn name(&self) -> &'static str {
        "dynamo_model::cache::Cache"
    }

    fn modify_before_serialization(
        &self,
        context: &mut BeforeSerializationInterceptorContextMut<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let touched = self.touched(context.input_mut());
        if !touched.is_empty() {
            self.invalidate(&touched);
            cfg.interceptor_state().store_put(Touched(touched));
        }
        Ok(())
    }

    fn read_after_execution(
        &self,
        _context: &FinalizerInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        // Again once the write completed (or failed: it may have been applied): a get that
        // read between the first invalidation and the write's effect is refused by the
        // write count, and this one removes anything stored meanwhile.
        if let Some(Touched(touched)) = cfg.load::<Touched>() {
            self.invalidate(touched);
        }
        Ok(())
    }
}
