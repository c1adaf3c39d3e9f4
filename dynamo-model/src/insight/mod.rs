//! Insight from the client: hot partitions found as they happen, and what each read
//! shape costs, from what the crate already knows of every key template, entity type and
//! capacity rule.
//!
//! An [`Insight`] attached to a [`Db`](dynamo_model::Db) with
//! [`Db::observed`](dynamo_model::Db::observed) sees every call that `Db` sends:
//!
//! - **Hot partitions.** The units each partition key (of the table or of a global
//!   secondary index) consumes over sliding one-second windows, in a bounded heavy-hitters
//!   sketch (weighted Space-Saving), against DynamoDB's per-partition limits of 3,000 read
//!   and 1,000 write units a second. When a partition crosses a fraction of its limit
//!   ([`warn_at`](Insight::warn_at), 0.8 by default) the insight gives a [`HotWarning`]
//!   (kept, and sent as a `tracing` event at `WARN` with target `dynamo_model::insight`)
//!   naming the entity type and its partition-key template, and the shard count that
//!   would keep each shard under that fraction (the write-sharding chapter of the guide).
//!   [`Insight::hot_partitions`] reports the busiest second of the busiest partitions;
//!   [`Insight::by_template`] the units of each entity type and template.
//! - **Read shapes.** Per query or scan shape (table, index, expressions, whatever the key
//!   values) the items read against the items returned, and per entity type the sizes of
//!   items: what `explain()` on the read builders estimates and warns from.
//!
//! Keys can hold personal data: reports show a stable hash of each partition key
//! ([`key_hash`]) unless [`show_keys`](Insight::show_keys) is on. The hash is stable so
//! that a team can find a reported key in its own data; it is not a secret: a key drawn
//! from a small set (a status, a sequential id, a known email) is found again by hashing
//! the candidates. `explain()` shows the keys of the one read it explains, as `params()`
//! does.
//!
//! **Memory is bounded** whatever the number of distinct keys: per kind of units (read,
//! write), two sketches of [`top`](Insight::top) slots (64 by default) for the current and
//! the previous second; `top` peaks and `max(4 × top, 256)` warning times; 64 warnings;
//! 256 template totals; 512 read shapes and 512 item-size records (about 105 KB at the
//! defaults). Keys are kept only as 64-bit hashes
//! (their text too with `show_keys`, one per kept slot). [`Insight::footprint`] reports the
//! bytes held.
//!
//! Units are those DynamoDB reports where the call asked for them (the crate's queries,
//! scans and batch gets do; so does a [`Db::metered`](dynamo_model::Db::metered) `Db`), and
//! otherwise the capacity rules' estimate from the sizes of the items written or read (see
//! [`crate::capacity`]): exact for a put of a new item, and for an update or a delete that
//! returns the item; one unit for one that returns nothing. [`exact_units`](Insight::exact_units)
//! asks DynamoDB for the units of every call. A write's units count on the table's
//! partition and on each global index partition the item is in. A batch or a transaction
//! reports its units per table, not per item: they are shared among its items in
//! proportion to each item's estimate. Scans read every partition and are not counted
//! against any. A single-item write refused by its condition counts its estimate (DynamoDB
//! charges it, and contention on one item is how a partition often runs hot); any other
//! failed call counts nothing; a get answered by a [cache](dynamo_model::cache) sends
//! nothing and costs nothing. A write counts its local indexes on the table's partition,
//! which they share.
//!
//! ```no_run
//! # use dynamo_model::{Db, Entity, Table, insight::Insight};
//! # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
//! # #[derive(Entity)] #[dynamo(table = App, pk = "SENSOR#{sensor}", sk = "{at}")]
//! # struct Reading { sensor: String, at: u64 }
//! # async fn demo(db: Db<App>) -> Result<(), dynamo_model::Error> {
//! let insight = Insight::new().warn_at(0.5);
//! let db = db.observed(&insight);
//! db.put(&Reading { sensor: "s-1".into(), at: 1 }).await?;
//! for hot in insight.hot_partitions() {
//!     println!("{}: {:.0} units/s, {} shards", hot.partition, hot.rate, hot.shards);
//! }
//! # Ok(()) }
//! ```

pub(crate) mod explain;
mod hot;
mod observe;
mod shapes;
mod sketch;

pub(crate) use crate::call::shape::{Fnv, query_shape, scan_shape};
pub use explain::{
    Estimate, Explain, Expression, FILTER_KEEPS_AT_LEAST, FREQUENT_READS_PER_MINUTE, Fanout,
    Requests, SizeBasis, Warning,
};
pub use hot::{
    HotPartition, HotWarning, PARTITION_READ_LIMIT, PARTITION_WRITE_LIMIT, PartitionId,
    PartitionKey, TemplateLoad,
};
pub(crate) use observe::Observing;
pub use shapes::{ItemSizes, ShapeStats};

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// What an [`Insight`] is set to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    pub(crate) top: usize,
    pub(crate) warn_at: f64,
    pub(crate) cooldown: Duration,
    pub(crate) show_keys: bool,
    /// Ask DynamoDB for the units of calls that did not ask.
    pub(crate) exact: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            top: 64,
            warn_at: 0.8,
            cooldown: Duration::from_secs(60),
            show_keys: false,
            exact: false,
        }
    }
}

impl Settings {
    /// The fewest shards that keep each below the warning level (1 when the partition is
    /// below it), at most 1,000 (the most a `{field:shard(N)}` part takes).
    fn shards(&self, rate: f64, limit: f64) -> u32 {
        let per_shard = self.warn_at * limit;
        if per_shard <= 0.0 || !rate.is_finite() {
            return 1;
        }
        ((rate / per_shard).floor() + 1.0).clamp(1.0, 1_000.0) as u32
    }

    fn hot(
        &self,
        partition: &PartitionId,
        units: crate::capacity::Units,
        rate: f64,
        total: f64,
    ) -> HotPartition {
        let limit = hot::limit(units);
        HotPartition {
            partition: partition.clone(),
            units,
            rate,
            share: if total > 0.0 {
                (rate / total).min(1.0)
            } else {
                0.0
            },
            limit,
            shards: self.shards(rate, limit),
        }
    }
}

/// Hot partitions and read shapes, observed from the calls of the [`Db`](dynamo_model::Db)s
/// it is attached to (see the [module](self)). Clones share their observations; one
/// insight may watch several tables.
#[derive(Debug, Clone)]
pub struct Insight {
    settings: Settings,
    state: Arc<Mutex<State>>,
}

#[derive(Debug)]
struct State {
    hot: hot::Tracker,
    shapes: shapes::Shapes,
}

impl Default for Insight {
    fn default() -> Self {
        Insight::with(Settings::default())
    }
}

impl Insight {
    /// An insight warning at 80 % of a partition's limit, keeping the 64 busiest
    /// partitions, with keys hashed.
    pub fn new() -> Self {
        Insight::default()
    }

    fn with(settings: Settings) -> Self {
        Insight {
            settings,
            state: Arc::new(Mutex::new(State {
                hot: hot::Tracker::new(settings),
                shapes: shapes::Shapes::default(),
            })),
        }
    }

    /// Warns when a partition consumes `fraction` of its per-partition limit in one second
    /// (0.8 by default; a small fraction finds partitions that will be hot at scale).
    /// Settings start a fresh insight: set them before attaching it.
    pub fn warn_at(self, fraction: f64) -> Self {
        let fraction = if fraction.is_finite() && fraction > 0.0 {
            fraction
        } else {
            0.8
        };
        Insight::with(Settings {
            warn_at: fraction,
            ..self.settings
        })
    }

    /// Keeps the `k` busiest partitions per window (64 by default; from 1 to 4,096):
    /// partitions above `1 / k` of a window's units are always among them.
    pub fn top(self, k: usize) -> Self {
        Insight::with(Settings {
            top: k.clamp(1, 4_096),
            ..self.settings
        })
    }

    /// Warns about the same partition at most once per `period` (60 s by default).
    pub fn cooldown(self, period: Duration) -> Self {
        Insight::with(Settings {
            cooldown: period,
            ..self.settings
        })
    }

    /// Shows partition keys in reports and warnings instead of their hash (off by
    /// default: keys can hold personal data, as with
    /// [`Db::trace_keys`](dynamo_model::Db::trace_keys)).
    pub fn show_keys(self, on: bool) -> Self {
        Insight::with(Settings {
            show_keys: on,
            ..self.settings
        })
    }

    /// Asks DynamoDB for the units of every call that did not ask for them
    /// (`ReturnConsumedCapacity=INDEXES`): a write's units then come split exactly between
    /// the table and each index, where by default they are the capacity rules' estimate
    /// from the item's size (exact for a put of a new item; an update or a delete that
    /// returns no item counts one unit). Off by default: DynamoDB Local takes several
    /// percent longer per write to report them (see BENCHMARKS.md).
    pub fn exact_units(self, on: bool) -> Self {
        Insight::with(Settings {
            exact: on,
            ..self.settings
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every update leaves the state whole: a panic elsewhere does not spoil it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn settings(&self) -> Settings {
        self.settings
    }

    /// The busiest second of each of the busiest partitions seen (at most
    /// [`top`](Self::top)), highest share of its limit first.
    pub fn hot_partitions(&self) -> Vec<HotPartition> {
        self.lock().hot.peaks()
    }

    /// The busiest partitions of the last second, as it slides, highest share of its
    /// limit first.
    pub fn current(&self) -> Vec<HotPartition> {
        self.lock().hot.current(Instant::now())
    }

    /// The latest warnings given (at most 64), oldest first.
    pub fn warnings(&self) -> Vec<HotWarning> {
        self.lock().hot.warnings()
    }

    /// The units consumed per table, index, entity type and partition-key template, most
    /// first.
    pub fn by_template(&self) -> Vec<TemplateLoad> {
        self.lock().hot.templates()
    }

    /// Bytes the insight holds (labels' text excluded): bounded whatever the keys seen.
    pub fn footprint(&self) -> usize {
        let state = self.lock();
        state.hot.footprint() + state.shapes.footprint()
    }

    /// What the observed calls of a read shape showed.
    pub(crate) fn shape(&self, shape: u64) -> Option<ShapeStats> {
        self.lock().shapes.stats(Instant::now(), shape)
    }

    /// The observed sizes of `entity_type`'s items in `table`.
    pub(crate) fn item_sizes(&self, table: &str, entity_type: &str) -> Option<ItemSizes> {
        self.lock().shapes.sizes(table, entity_type)
    }

    /// Runs `f` on the state (one lock per observed call).
    fn update<R>(&self, f: impl FnOnce(&mut hot::Tracker, &mut shapes::Shapes) -> R) -> R {
        let mut state = self.lock();
        let State { hot, shapes } = &mut *state;
        f(hot, shapes)
    }
}

/// The stable hash reports show for a partition key (without
/// [`show_keys`](Insight::show_keys)): 64-bit FNV-1a of its UTF-8 text, the same in every
/// process and release, printed as `#` and 16 hex digits.
///
/// ```
/// use dynamo_model::insight::{PartitionKey, key_hash};
/// assert_eq!(PartitionKey::Hashed(key_hash("USER#ada")).to_string().len(), 17);
/// assert_eq!(key_hash(""), 0xcbf2_9ce4_8422_2325);
/// ```
pub fn key_hash(key: &str) -> u64 {
    let mut h = Fnv::new();
    h.write(key.as_bytes());
    h.finish()
}

/// The bytes a hash table of `capacity` (as `HashMap::capacity` reports it) and entries
/// of `entry` bytes allocates: its buckets (a power of two, 7/8 of them usable) with a
/// control byte each. `capacity` falls as removals leave tombstones and rises again when
/// the table rehashes in place; the bucket count only changes when the table grows.
pub(crate) fn table_bytes(capacity: usize, entry: usize) -> usize {
    if capacity == 0 {
        return 0;
    }
    let buckets = (capacity * 8).div_ceil(7).next_power_of_two().max(4);
    buckets * (entry + 1)
}
