//! Hot partitions: the units each partition consumed over sliding one-second windows, in
//! bounded sketches, with the peaks seen and the warnings given.

use super::sketch::SpaceSaving;
use super::{Settings, table_bytes};
use crate::capacity::Units;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::mem::size_of;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// DynamoDB's per-partition limit of read units a second.
pub const PARTITION_READ_LIMIT: f64 = 3_000.0;
/// DynamoDB's per-partition limit of write units a second.
pub const PARTITION_WRITE_LIMIT: f64 = 1_000.0;

const WINDOW: Duration = Duration::from_secs(1);
/// Warnings kept for [`Insight::warnings`](super::Insight::warnings).
const KEPT_WARNINGS: usize = 64;
/// Template totals kept: one per table, index, entity type and template.
const KEPT_TEMPLATES: usize = 256;

/// A partition key value as reports show it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PartitionKey {
    /// The key's stable hash ([`key_hash`](super::key_hash)): keys can hold personal data.
    Hashed(u64),
    /// The key itself ([`Insight::show_keys`](super::Insight::show_keys)).
    Text(String),
}

impl fmt::Display for PartitionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PartitionKey::Hashed(h) => write!(f, "#{h:016x}"),
            PartitionKey::Text(t) => f.write_str(t),
        }
    }
}

/// A partition of a table or of a global secondary index, with what the crate knows of
/// it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct PartitionId {
    /// The table.
    pub table: Arc<str>,
    /// The index, `None` for the table itself.
    pub index: Option<Arc<str>>,
    /// The entity type of the first item or key seen in the partition (by its entity-type
    /// attribute, else by the key templates that render its key); `None` when unknown.
    pub entity_type: Option<Arc<str>>,
    /// The partition key template of that entity type on that table or index, as written.
    pub template: Option<&'static str>,
    /// The partition key value, or its hash.
    pub key: PartitionKey,
}

impl fmt::Display for PartitionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}",
            self.entity_type.as_deref().unwrap_or("unknown type")
        )?;
        if let Some(template) = self.template {
            write!(f, " `{template}`")?;
        }
        write!(f, " {} on {}", self.key, self.table)?;
        if let Some(index) = &self.index {
            write!(f, " index {index}")?;
        }
        Ok(())
    }
}

/// A partition's busiest second seen: the units it consumed in one sliding second, against
/// DynamoDB's per-partition limit.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct HotPartition {
    /// The partition.
    pub partition: PartitionId,
    /// Read or write units.
    pub units: Units,
    /// Units consumed in its busiest second.
    pub rate: f64,
    /// Its part of all the units of that kind consumed in that second (0 to 1).
    pub share: f64,
    /// DynamoDB's limit per partition: 3,000 read or 1,000 write units a second.
    pub limit: f64,
    /// Shards that would keep each below the warning level: the fewest `N` with
    /// `rate / N < warn_at × limit`; 1 when the partition needs none.
    pub shards: u32,
}

impl HotPartition {
    /// `rate / limit`.
    pub fn of_limit(&self) -> f64 {
        self.rate / self.limit
    }
}

/// A warning given when a partition crossed the warning level (also sent as a `tracing`
/// event at `WARN`, target `dynamo_model::insight`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct HotWarning {
    /// The partition and its rate when the warning was given.
    pub hot: HotPartition,
}

impl fmt::Display for HotWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let h = &self.hot;
        write!(
            f,
            "hot partition: {} consumed {:.0} {} units in one second, {:.0} % of the {} a partition serves",
            h.partition,
            h.rate,
            units_name(h.units),
            100.0 * h.of_limit(),
            match h.units {
                Units::Read => "3,000",
                Units::Write => "1,000",
            },
        )?;
        if h.shards > 1 {
            write!(
                f,
                "; shard its partition key over {n} shards (a `{{field:shard({n})}}` part in the template: see the write-sharding chapter of the guide)",
                n = h.shards
            )?;
        }
        Ok(())
    }
}

/// The units a table, index, entity type and template consumed since the insight began.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TemplateLoad {
    /// The table.
    pub table: Arc<str>,
    /// The index, `None` for the table.
    pub index: Option<Arc<str>>,
    /// The entity type, when known.
    pub entity_type: Option<Arc<str>>,
    /// The partition key template, when known.
    pub template: Option<&'static str>,
    /// Read units consumed.
    pub read_units: f64,
    /// Write units consumed.
    pub write_units: f64,
}

pub(super) fn units_name(units: Units) -> &'static str {
    match units {
        Units::Read => "read",
        Units::Write => "write",
    }
}

fn kind(units: Units) -> usize {
    match units {
        Units::Read => 0,
        Units::Write => 1,
    }
}

/// DynamoDB's per-partition limit of `units` a second.
pub(super) fn limit(units: Units) -> f64 {
    match units {
        Units::Read => PARTITION_READ_LIMIT,
        Units::Write => PARTITION_WRITE_LIMIT,
    }
}

/// The current window and the one before it, for one kind of units. Weights are half
/// units (the smallest charge, an eventually consistent read of up to 4 KB, is half a
/// unit), so sums are exact.
#[derive(Debug)]
struct Windows {
    start: Option<Instant>,
    current: SpaceSaving<Arc<PartitionId>>,
    previous: SpaceSaving<Arc<PartitionId>>,
}

impl Windows {
    fn new(k: usize) -> Self {
        Windows {
            start: None,
            current: SpaceSaving::new(k),
            previous: SpaceSaving::new(k),
        }
    }

    /// Moves the windows on to the one holding `now`; returns how far into it `now` is.
    fn roll(&mut self, now: Instant) -> f64 {
        let start = *self.start.get_or_insert(now);
        let elapsed = now.saturating_duration_since(start);
        if elapsed >= 2 * WINDOW {
            self.current.clear();
            self.previous.clear();
            self.start = Some(now);
            return 0.0;
        }
        if elapsed >= WINDOW {
            std::mem::swap(&mut self.current, &mut self.previous);
            self.current.clear();
            self.start = Some(start + WINDOW);
            return (elapsed - WINDOW).as_secs_f64();
        }
        elapsed.as_secs_f64()
    }

    /// Units a second of `key` over the sliding second ending `into` seconds into the
    /// current window: all of the current window and the rest of the previous one. Each
    /// window counts what the key surely consumed (its count less its error), so a rate
    /// is never above the truth; it is exact for a partition kept since the window began.
    fn rate(&self, key: u64, into: f64) -> f64 {
        let count = |s: &SpaceSaving<Arc<PartitionId>>| {
            s.get(key).map_or(0, |slot| slot.count - slot.error)
        };
        (count(&self.current) as f64 + count(&self.previous) as f64 * (1.0 - into)) / 2.0
    }

    fn total_rate(&self, into: f64) -> f64 {
        (self.current.total() as f64 + self.previous.total() as f64 * (1.0 - into)) / 2.0
    }

    fn footprint(&self) -> usize {
        self.current.footprint() + self.previous.footprint()
    }
}

/// The state behind an [`Insight`](super::Insight)'s hot-partition reports.
#[derive(Debug)]
pub(crate) struct Tracker {
    settings: Settings,
    windows: [Windows; 2],
    /// The busiest second of the busiest partitions, at most `top` of them.
    peaks: HashMap<(u64, usize), HotPartition>,
    /// The least peak rate kept once `peaks` is full.
    floor: f64,
    /// When each partition was last warned about.
    warned: HashMap<(u64, usize), Instant>,
    warnings: VecDeque<HotWarning>,
    templates: HashMap<TemplateKey, [f64; 2]>,
    /// The capacity `peaks` and `warned` were allocated with (removals leave tombstones,
    /// which lower the capacity they report).
    allocated: usize,
    allocated_warned: usize,
}

type TemplateKey = (
    Arc<str>,
    Option<Arc<str>>,
    Option<Arc<str>>,
    Option<&'static str>,
);

/// The entity type of a call's item, and that type's partition-key template.
pub(crate) type Owner = (Arc<str>, Option<&'static str>);

/// How many partitions' warning times are kept (each is warned about at most once per
/// cooldown while kept): four times `top`, at least 256.
fn warned_bound(top: usize) -> usize {
    (4 * top).max(256)
}

/// What [`Tracker::record`] tells its caller to emit.
pub(crate) type Emitted = Option<HotWarning>;

impl Tracker {
    pub(crate) fn new(settings: Settings) -> Self {
        let mut tracker = Tracker {
            windows: [Windows::new(settings.top), Windows::new(settings.top)],
            settings,
            // Twice what they hold at most, so that they never grow (see `SpaceSaving`).
            peaks: HashMap::with_capacity(2 * settings.top),
            floor: 0.0,
            warned: HashMap::with_capacity(2 * warned_bound(settings.top)),
            warnings: VecDeque::new(),
            templates: HashMap::new(),
            allocated: 0,
            allocated_warned: 0,
        };
        tracker.allocated = tracker.peaks.capacity();
        tracker.allocated_warned = tracker.warned.capacity();
        tracker
    }

    /// Adds `units` consumed at `now` by the partition hashed to `key`; `label` describes
    /// the partition when the sketch has not kept it, `own` the entity type and template of
    /// this call's item when known (a partition holds items of several types: each call's
    /// units go to its own type's totals, and a warning names the type that crossed the
    /// level). Returns the warning to emit, if the partition just crossed the level.
    pub(crate) fn record(
        &mut self,
        now: Instant,
        units: Units,
        key: u64,
        consumed: f64,
        label: impl FnOnce() -> Arc<PartitionId>,
        own: Option<Owner>,
    ) -> Emitted {
        let half_units = (consumed * 2.0).round().max(0.0) as u64;
        if half_units == 0 {
            return None;
        }
        let k = kind(units);
        let windows = &mut self.windows[k];
        let into = windows.roll(now);
        windows.current.add(key, half_units, label);
        let rate = windows.rate(key, into);
        let total = windows.total_rate(into);
        let kept = windows.current.get(key).map(|s| s.label.clone())?;
        let partition = match own {
            Some((entity, template)) if kept.entity_type.as_ref() != Some(&entity) => {
                Arc::new(PartitionId {
                    entity_type: Some(entity),
                    template,
                    ..(*kept).clone()
                })
            }
            _ => kept,
        };
        self.add_to_template(&partition, k, consumed);
        let settings = self.settings;
        let hot = || settings.hot(&partition, units, rate, total);
        self.keep_peak((key, k), rate / limit(units), &hot);
        if rate < settings.warn_at * limit(units) {
            return None;
        }
        if let Some(&at) = self.warned.get(&(key, k))
            && now.saturating_duration_since(at) < settings.cooldown
        {
            return None;
        }
        self.forget_old_warnings(now);
        self.warned.insert((key, k), now);
        let warning = HotWarning { hot: hot() };
        if self.warnings.len() == KEPT_WARNINGS {
            self.warnings.pop_front();
        }
        self.warnings.push_back(warning.clone());
        Some(warning)
    }

    /// Keeps the busiest second of the `top` partitions busiest against their limit:
    /// `level` is this second's rate over the limit.
    fn keep_peak(&mut self, at: (u64, usize), level: f64, hot: &dyn Fn() -> HotPartition) {
        if let Some(peak) = self.peaks.get_mut(&at) {
            if level > peak.of_limit() {
                *peak = hot();
            }
            return;
        }
        if self.peaks.len() < self.settings.top {
            self.peaks.insert(at, hot());
            if self.peaks.len() == self.settings.top {
                self.floor = self.least_peak().map_or(0.0, |(_, level)| level);
            }
            return;
        }
        // `floor` is at most the least peak kept: below it, nothing to look at.
        if level <= self.floor {
            return;
        }
        match self.least_peak() {
            Some((least, kept)) if level > kept => {
                self.peaks.remove(&least);
                self.peaks.insert(at, hot());
                self.floor = self.least_peak().map_or(0.0, |(_, level)| level);
            }
            Some((_, kept)) => self.floor = kept,
            None => {}
        }
    }

    /// The kept peak least busy against its limit, and that share.
    fn least_peak(&self) -> Option<((u64, usize), f64)> {
        self.peaks
            .iter()
            .map(|(key, peak)| (*key, peak.of_limit()))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// Drops warning times past the cooldown once they reach their bound; past it with
    /// every one recent, the oldest (which may then be warned about again early).
    fn forget_old_warnings(&mut self, now: Instant) {
        let bound = warned_bound(self.settings.top);
        if self.warned.len() < bound {
            return;
        }
        let cooldown = self.settings.cooldown;
        self.warned
            .retain(|_, at| now.saturating_duration_since(*at) < cooldown);
        if self.warned.len() >= bound {
            // Every one is recent: forget the oldest.
            let oldest = self
                .warned
                .iter()
                .min_by_key(|(_, at)| **at)
                .map(|(k, _)| *k);
            if let Some(oldest) = oldest {
                self.warned.remove(&oldest);
            }
        }
    }

    fn add_to_template(&mut self, partition: &PartitionId, k: usize, consumed: f64) {
        let key = (
            partition.table.clone(),
            partition.index.clone(),
            partition.entity_type.clone(),
            partition.template,
        );
        let full = self.templates.len() >= KEPT_TEMPLATES;
        match self.templates.get_mut(&key) {
            Some(sums) => sums[k] += consumed,
            None if !full => {
                let mut sums = [0.0; 2];
                sums[k] = consumed;
                self.templates.insert(key, sums);
            }
            None => {}
        }
    }

    /// The busiest partitions' busiest seconds, highest share of their limit first.
    pub(crate) fn peaks(&self) -> Vec<HotPartition> {
        let mut peaks: Vec<HotPartition> = self.peaks.values().cloned().collect();
        peaks.sort_by(|a, b| b.of_limit().total_cmp(&a.of_limit()));
        peaks
    }

    /// The partitions of the sliding second ending `now`, busiest first.
    pub(crate) fn current(&mut self, now: Instant) -> Vec<HotPartition> {
        let mut out = Vec::new();
        for (k, units) in [(0, Units::Read), (1, Units::Write)] {
            let windows = &mut self.windows[k];
            let into = windows.roll(now);
            let total = windows.total_rate(into);
            for slot in windows
                .current
                .heaviest()
                .chain(windows.previous.heaviest())
            {
                if out
                    .iter()
                    .any(|h: &(u64, HotPartition)| h.0 == slot.key && h.1.units == units)
                {
                    continue;
                }
                let rate = windows.rate(slot.key, into);
                let hot = self.settings.hot(&slot.label, units, rate, total);
                out.push((slot.key, hot));
            }
        }
        let mut out: Vec<HotPartition> = out.into_iter().map(|(_, h)| h).collect();
        out.sort_by(|a, b| b.of_limit().total_cmp(&a.of_limit()));
        out.truncate(self.settings.top);
        out
    }

    pub(crate) fn warnings(&self) -> Vec<HotWarning> {
        self.warnings.iter().cloned().collect()
    }

    pub(crate) fn templates(&self) -> Vec<TemplateLoad> {
        let mut out: Vec<TemplateLoad> = self
            .templates
            .iter()
            .map(
                |((table, index, entity_type, template), sums)| TemplateLoad {
                    table: table.clone(),
                    index: index.clone(),
                    entity_type: entity_type.clone(),
                    template: *template,
                    read_units: sums[0],
                    write_units: sums[1],
                },
            )
            .collect();
        out.sort_by(|a, b| {
            (b.read_units + b.write_units).total_cmp(&(a.read_units + a.write_units))
        });
        out
    }

    /// Bytes held by the sketches and tables, labels' own heap excluded.
    pub(crate) fn footprint(&self) -> usize {
        let peak = size_of::<((u64, usize), HotPartition)>();
        let warned = size_of::<((u64, usize), Instant)>();
        let template = size_of::<(TemplateKey, [f64; 2])>();
        self.windows.iter().map(Windows::footprint).sum::<usize>()
            + table_bytes(self.allocated.max(self.peaks.capacity()), peak)
            + table_bytes(self.allocated_warned.max(self.warned.capacity()), warned)
            + self.warnings.capacity() * size_of::<HotWarning>()
            + table_bytes(self.templates.capacity(), template)
    }
}

#[cfg(test)]
mod tests;
