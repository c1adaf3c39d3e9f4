//! A read-through cache for hot items (feature `cache`): gets by key answered from memory,
//! bounded in size and age, and invalidated by this client's own writes.
//!
//! An item read thousands of times a second (a configuration item, a celebrity's profile,
//! a product on the front page) makes a hot partition and costs a read unit each time.
//! With a [`Cache`] attached to a [`Db`] ([`Db::with_cache`]), a get of an entity the cache
//! was told to keep ([`CacheBuilder::entity`]), or a get marked
//! [`cached`](dynamo_model::item::Get::cached), is answered from memory when the item was read
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
//! - the cache is filled by strongly consistent reads (a miss costs a full read unit per
//!   4 KB; hits cost nothing), so it never holds an item older than the last write
//!   DynamoDB had acknowledged when the read was served;
//! - a write of the key sent through a `Db` sharing the cache (put, update, delete, batch
//!   write, transaction, chunked put, history) removes the cached item before it is sent and
//!   again when it completes, and a get of that key that was under way meanwhile does not
//!   store what it read, so this client never reads back an item older than its own
//!   completed writes. A write whose future is dropped before it completes (a timeout
//!   around it, a cancelled request handler) skips the second removal: DynamoDB may still
//!   apply it, so a get racing it may keep the older item until it expires. A migration
//!   ([`dynamo_model::migrate`]) run on that `Db` counts as its writes; so does a request sent
//!   through its [`client`](crate::Db::client): a PartiQL write (`ExecuteStatement`,
//!   `BatchExecuteStatement`, `ExecuteTransaction` other than a `SELECT`), whose keys are
//!   in its text, empties the whole cache;
//! - writes by other clients (another process, another `Db` without this cache) are seen
//!   only when the cached item expires: the time to live bounds how stale a read can be.
//!   Use it for items that may be that stale;
//! - a strongly consistent get ([`consistent`](dynamo_model::item::Get::consistent)) always reads
//!   DynamoDB, and refreshes the cache; a get with a `customize` hook and a get of an
//!   entity with chunked fields (its chunks are not cached) never use it;
//! - a missing item is not cached: only items that exist;
//! - writes through other clients can be announced with [`Cache::invalidate`] (e.g. from a
//!   DynamoDB Streams consumer).
//!
//! The bound is a number of items ([`CacheBuilder::max_items`]) or of bytes
//! ([`CacheBuilder::max_bytes`], items weighed by their DynamoDB size).
//!
//! [`Db`]: crate::Db
//! [`Db::with_cache`]: crate::Db::with_cache

use crate::call::{Action, Call, Observer, Observing, Outcome};
use crate::{Entity, Item, RawKey};
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

/// Stripes of write counters: a write bumps its keys' stripes, and a get stores what it
/// read only if its key's stripe did not move meanwhile. Striped so writes to other keys
/// (almost always) leave a get free to store.
const STRIPES: usize = 1024;

struct Shared {
    items: moka::sync::Cache<Slot, Arc<Item>>,
    /// Entity types every get caches.
    entities: HashSet<&'static str>,
    hits: AtomicU64,
    misses: AtomicU64,
    invalidations: AtomicU64,
    /// This client's writes, by stripe of the keys they touch.
    writes: Box<[AtomicU64]>,
}

impl Shared {
    fn stripe(&self, slot: &Slot) -> &AtomicU64 {
        use std::hash::{BuildHasher, BuildHasherDefault};
        // A fixed hasher: stripes need no protection from chosen keys, only spread.
        let hash = BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
            .hash_one(slot);
        &self.writes[(hash as usize) % self.writes.len()]
    }
}

/// A bounded, expiring cache of items read by key, shared by the [`Db`]s it is attached
/// to ([`Db::with_cache`]). Cloning is cheap; clones share the items and counters. See
/// the [module documentation](self).
///
/// [`Db`]: crate::Db
/// [`Db::with_cache`]: crate::Db::with_cache
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
    max_bytes: Option<u64>,
    ttl: Duration,
    entities: HashSet<&'static str>,
}

impl CacheBuilder {
    crate::setters::setters! {
        /// At most this many items (default 10,000); the least recently used leave first.
        max_items(n: u64) => max_items = n;
        /// At most this many bytes of items (by DynamoDB's item size) instead of a number of
        /// items: an item of 400 KB weighs as much as 400 items of 1 KB.
        max_bytes(n: u64) => max_bytes = Some(n);
        /// How long an item stays after it was read (default 60 seconds): the most a read can
        /// lag behind another client's write.
        time_to_live(ttl: Duration) => ttl = ttl;
    }

    /// Caches every get of entity `E` (without it, only gets marked
    /// [`cached`](dynamo_model::item::Get::cached) use the cache).
    pub fn entity<E: Entity>(mut self) -> Self {
        self.entities.insert(E::ENTITY_TYPE);
        self
    }

    /// The cache.
    pub fn build(self) -> Cache {
        let items = moka::sync::Cache::builder().time_to_live(self.ttl);
        let items = match self.max_bytes {
            Some(bytes) => items
                .weigher(|_: &Slot, item: &Arc<Item>| {
                    u32::try_from(crate::item_size(item)).unwrap_or(u32::MAX)
                })
                .max_capacity(bytes)
                .build(),
            None => items.max_capacity(self.max_items).build(),
        };
        Cache {
            shared: Arc::new(Shared {
                items,
                entities: self.entities,
                hits: AtomicU64::new(0),
                misses: AtomicU64::new(0),
                invalidations: AtomicU64::new(0),
                writes: (0..STRIPES).map(|_| AtomicU64::new(0)).collect(),
            }),
        }
    }
}

impl Cache {
    /// A builder with the defaults: 10,000 items, 60 seconds, no entity cached by default.
    pub fn builder() -> CacheBuilder {
        CacheBuilder {
            max_items: 10_000,
            max_bytes: None,
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

    /// Removes the item of `key` of entity `E` in the table `table_name`, and makes gets
    /// of it under way not store what they read: for writes this client did not send
    /// through a `Db` sharing the cache (another service's, seen in a DynamoDB Streams
    /// consumer).
    pub fn invalidate<E: Entity>(
        &self,
        table_name: &str,
        key: &crate::Key<E>,
    ) -> Result<(), crate::Error> {
        self.written(table_name, std::slice::from_ref(key.raw()?));
        Ok(())
    }

    /// The cached item under `key` of `table` when `answer` (counting a hit or a miss);
    /// otherwise, or when it is not there, what [`store`](Self::store) needs.
    pub(crate) fn lookup(
        &self,
        table: &Arc<str>,
        key: RawKey,
        answer: bool,
    ) -> Result<Arc<Item>, Miss> {
        let slot = Slot {
            table: table.clone(),
            key,
        };
        // Read before the lookup: a write of the key between the two makes `store` refuse.
        let writes = self.shared.stripe(&slot).load(Ordering::SeqCst);
        if answer {
            if let Some(item) = self.shared.items.get(&slot) {
                self.shared.hits.fetch_add(1, Ordering::Relaxed);
                return Ok(item);
            }
            self.shared.misses.fetch_add(1, Ordering::Relaxed);
        }
        Err(Miss { slot, writes })
    }

    /// Stores what a get read after a miss, unless this client wrote the key (or one of
    /// its stripe) since the lookup.
    pub(crate) fn store(&self, miss: Miss, item: Item) {
        let stripe = self.shared.stripe(&miss.slot);
        if stripe.load(Ordering::SeqCst) != miss.writes {
            return;
        }
        self.shared.items.insert(miss.slot.clone(), Arc::new(item));
        // A write that began while inserting: take the item out again.
        if stripe.load(Ordering::SeqCst) != miss.writes {
            self.shared.items.invalidate(&miss.slot);
        }
    }

    /// Removes the items of `keys` in `table`, and makes gets of them under way not store
    /// theirs.
    fn written(&self, table: &str, keys: &[RawKey]) {
        let table: Arc<str> = Arc::from(table);
        for key in keys {
            let slot = Slot {
                table: table.clone(),
                key: key.clone(),
            };
            self.shared.stripe(&slot).fetch_add(1, Ordering::SeqCst);
            if self.shared.items.contains_key(&slot) {
                self.shared.invalidations.fetch_add(1, Ordering::Relaxed);
            }
            self.shared.items.invalidate(&slot);
        }
    }
}

impl Cache {
    /// Removes every item, and makes every get under way not store what it read: for a
    /// write whose keys are not known (a PartiQL statement).
    fn written_anything(&self) {
        for stripe in self.shared.writes.iter() {
            stripe.fetch_add(1, Ordering::SeqCst);
        }
        let items = self.shared.items.entry_count();
        self.shared
            .invalidations
            .fetch_add(items, Ordering::Relaxed);
        self.shared.items.invalidate_all();
    }
}

/// A lookup that found nothing: where to store what the get reads.
pub(crate) struct Miss {
    slot: Slot,
    writes: u64,
}

/// `client` with one more interceptor, which takes the keys of every write out of `cache`
/// (see [`Db::with_cache`]).
///
/// [`Db::with_cache`]: crate::Db::with_cache
pub(crate) fn invalidating(
    client: &aws_sdk_dynamodb::Client,
    cache: &Cache,
    schema: &'static crate::TableSchema,
) -> aws_sdk_dynamodb::Client {
    let invalidate = Invalidate {
        cache: cache.clone(),
    };
    let config = client
        .config()
        .to_builder()
        .interceptor(Observing::new(invalidate, schema))
        .build();
    aws_sdk_dynamodb::Client::from_conf(config)
}

/// The observer behind [`Db::with_cache`]: every write's keys leave the cache before the
/// write is sent and again once it completed.
///
/// [`Db::with_cache`]: crate::Db::with_cache
#[derive(Debug)]
struct Invalidate {
    cache: Cache,
}

impl Invalidate {
    fn invalidate(&self, call: &Call) {
        if call.writes_unknown_keys {
            self.cache.written_anything();
            return;
        }
        let written = call
            .targets
            .iter()
            .filter(|t| matches!(t.action, Action::Put | Action::Update | Action::Delete));
        for target in written {
            if let Some(key) = &target.key {
                self.cache.written(&target.table, std::slice::from_ref(key));
            }
        }
    }
}

impl Observer for Invalidate {
    fn before(&self, call: &Call) {
        self.invalidate(call);
    }

    fn after(&self, call: &Call, _outcome: &Outcome<'_>) {
        // Again once the write completed (or failed: it may have been applied): a get that
        // read between the first invalidation and the write's effect is refused by the
        // write count, and this one removes anything stored meanwhile.
        self.invalidate(call);
    }
}
