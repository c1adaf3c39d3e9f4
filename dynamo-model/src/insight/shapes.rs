//! What observed reads showed, per read shape (a query's or scan's table, index and
//! expressions, whatever the key values) and per entity type (item sizes).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Read shapes kept; the least recently seen is forgotten first.
const KEPT_SHAPES: usize = 512;
/// Entity types (per table) whose sizes are kept.
const KEPT_SIZES: usize = 512;
/// Entity types counted per shape.
const KEPT_TYPES: usize = 16;
const MINUTE: Duration = Duration::from_secs(60);

/// What the observed calls of one read shape (a query's or a scan's table, index, key
/// condition, filter and projection, whatever the values) showed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ShapeStats {
    /// Calls observed.
    pub calls: u64,
    /// Calls over the last sliding minute.
    pub calls_per_minute: f64,
    /// Items DynamoDB read (`ScannedCount`), which a filter may then drop.
    pub items_read: u64,
    /// Items returned (`Count`).
    pub items_returned: u64,
    /// Read units consumed.
    pub read_units: f64,
    /// The entity types of the items returned, with their counts (the 16 first seen).
    pub returned_by_type: Vec<(String, u64)>,
}

/// The sizes of an entity type's items as observed in responses (whole items only: a
/// projected read is not counted).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ItemSizes {
    /// Mean size in bytes, as DynamoDB counts them.
    pub mean: f64,
    /// Largest size seen.
    pub max: usize,
    /// Items measured.
    pub samples: u64,
}

#[derive(Debug)]
struct Shape {
    stats: ShapeStats,
    minute_start: Instant,
    this_minute: u64,
    last_minute: u64,
    last_seen: Instant,
}

impl Shape {
    fn new(now: Instant) -> Self {
        Shape {
            stats: ShapeStats {
                calls: 0,
                calls_per_minute: 0.0,
                items_read: 0,
                items_returned: 0,
                read_units: 0.0,
                returned_by_type: Vec::new(),
            },
            minute_start: now,
            this_minute: 0,
            last_minute: 0,
            last_seen: now,
        }
    }

    /// Moves the minute windows on to `now`; how far into the current one it is (0 to 1).
    fn roll(&mut self, now: Instant) -> f64 {
        let elapsed = now.saturating_duration_since(self.minute_start);
        if elapsed >= 2 * MINUTE {
            self.last_minute = 0;
            self.this_minute = 0;
            self.minute_start = now;
            return 0.0;
        }
        if elapsed >= MINUTE {
            self.last_minute = self.this_minute;
            self.this_minute = 0;
            self.minute_start += MINUTE;
            return (elapsed - MINUTE).as_secs_f64() / MINUTE.as_secs_f64();
        }
        elapsed.as_secs_f64() / MINUTE.as_secs_f64()
    }

    fn rate(&self, into: f64) -> f64 {
        self.this_minute as f64 + self.last_minute as f64 * (1.0 - into)
    }
}

/// One observed call of a read shape.
#[derive(Debug, Default)]
pub(crate) struct ShapeCall {
    pub(crate) read: u64,
    pub(crate) returned: u64,
    pub(crate) units: f64,
    /// Entity types of the items returned, one entry per item.
    pub(crate) types: Vec<Arc<str>>,
}

/// Items measured, their bytes in all, and the largest.
type SizeSums = (u64, u64, usize);

#[derive(Debug, Default)]
pub(crate) struct Shapes {
    shapes: HashMap<u64, Shape>,
    /// Per table and entity type.
    sizes: HashMap<(Arc<str>, Arc<str>), SizeSums>,
    /// The most capacity `shapes` reported (removals leave tombstones, which lower it).
    allocated: usize,
}

impl Shapes {
    pub(crate) fn record(&mut self, now: Instant, shape: u64, call: ShapeCall) {
        if !self.shapes.contains_key(&shape) && self.shapes.len() >= KEPT_SHAPES {
            let stale = self
                .shapes
                .iter()
                .min_by_key(|(_, s)| s.last_seen)
                .map(|(k, _)| *k);
            if let Some(stale) = stale {
                self.shapes.remove(&stale);
            }
        }
        self.allocated = self.allocated.max(self.shapes.capacity());
        let s = self.shapes.entry(shape).or_insert_with(|| Shape::new(now));
        s.roll(now);
        s.this_minute += 1;
        s.last_seen = now;
        let stats = &mut s.stats;
        stats.calls += 1;
        stats.items_read += call.read;
        stats.items_returned += call.returned;
        stats.read_units += call.units;
        for t in call.types {
            let types = &mut stats.returned_by_type;
            if let Some((_, count)) = types.iter_mut().find(|(n, _)| **n == *t) {
                *count += 1;
            } else if types.len() < KEPT_TYPES {
                types.push((t.to_string(), 1));
            }
        }
    }

    pub(crate) fn stats(&mut self, now: Instant, shape: u64) -> Option<ShapeStats> {
        let s = self.shapes.get_mut(&shape)?;
        let into = s.roll(now);
        let mut stats = s.stats.clone();
        stats.calls_per_minute = s.rate(into);
        Some(stats)
    }

    /// Counts an item of `entity_type` of `bytes` read from `table`.
    pub(crate) fn size(&mut self, table: &Arc<str>, entity_type: &Arc<str>, bytes: usize) {
        let key = (table.clone(), entity_type.clone());
        if !self.sizes.contains_key(&key) && self.sizes.len() >= KEPT_SIZES {
            return;
        }
        let (samples, total, max) = self.sizes.entry(key).or_default();
        *samples += 1;
        *total += bytes as u64;
        *max = (*max).max(bytes);
    }

    pub(crate) fn sizes(&self, table: &str, entity_type: &str) -> Option<ItemSizes> {
        let key = (Arc::from(table), Arc::from(entity_type));
        self.sizes
            .get(&key)
            .map(|&(samples, total, max)| ItemSizes {
                mean: total as f64 / samples.max(1) as f64,
                max,
                samples,
            })
    }

    pub(crate) fn footprint(&self) -> usize {
        use super::table_bytes;
        let entry = std::mem::size_of::<(u64, Shape)>() + KEPT_TYPES * 40;
        table_bytes(self.allocated.max(self.shapes.capacity()), entry)
            + table_bytes(
                self.sizes.capacity(),
                std::mem::size_of::<((Arc<str>, Arc<str>), SizeSums)>(),
            )
    }
}
