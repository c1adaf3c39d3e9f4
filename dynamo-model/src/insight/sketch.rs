//! A weighted Space-Saving sketch (Metwally, Agrawal, El Abbadi, "Efficient computation of
//! frequent and top-k elements in data streams", 2005): the heaviest keys of a stream of
//! weighted keys in `k` slots, whatever the number of distinct keys.
//!
//! Each slot holds a key, a count and an error. A key already in a slot adds its weight to
//! the count. A new key takes a free slot, or else replaces the slot of least count `m`
//! and starts from `m + weight` with error `m`. With `N` the total weight added:
//! - every key's true weight `w` lies in `count - error ≤ w ≤ count` while it holds a slot;
//! - the least count is at most `N / k`, so every key with `w > N / k` holds a slot;
//! - reporting the keys with `count ≥ φN` therefore reports every key with `w ≥ φN`, and
//!   none with `w < φN - N / k`.
//!
//! Memory is `k` slots, an index of `k` entries and an ordered set of `k` entries: the
//! bound [`SpaceSaving::footprint`] states.

use std::collections::{BTreeSet, HashMap};

/// One monitored key.
#[derive(Debug, Clone)]
pub(crate) struct Slot<L> {
    pub(crate) key: u64,
    /// An upper bound of the key's weight.
    pub(crate) count: u64,
    /// How much of `count` may belong to keys the slot held before.
    pub(crate) error: u64,
    /// What the key is (set when the key takes the slot).
    pub(crate) label: L,
}

/// The sketch: `k` slots over keys hashed to `u64`, weights in whole units (the caller
/// scales fractional weights).
#[derive(Debug, Clone)]
pub(crate) struct SpaceSaving<L> {
    k: usize,
    slots: Vec<Slot<L>>,
    /// Key to slot.
    index: HashMap<u64, usize>,
    /// `(count, slot)`, least first.
    order: BTreeSet<(u64, usize)>,
    total: u64,
    /// The index's capacity when allocated (tombstones lower what it reports later).
    allocated: usize,
}

impl<L> SpaceSaving<L> {
    /// An empty sketch of `k` slots (at least one).
    pub(crate) fn new(k: usize) -> Self {
        let k = k.max(1);
        SpaceSaving {
            k,
            slots: Vec::with_capacity(k),
            // Twice the entries it ever holds: removals leave tombstones, and a table
            // more than half full when they run out would grow; at most half full it
            // rehashes in place, so this first allocation is its last.
            index: HashMap::with_capacity(2 * k),
            order: BTreeSet::new(),
            total: 0,
            allocated: 0,
        }
        .allocated()
    }

    fn allocated(mut self) -> Self {
        self.allocated = self.index.capacity();
        self
    }

    /// Adds `weight` to `key`; `label` names a key that takes a slot.
    pub(crate) fn add(&mut self, key: u64, weight: u64, label: impl FnOnce() -> L) {
        self.total = self.total.saturating_add(weight);
        if let Some(&i) = self.index.get(&key) {
            let slot = &mut self.slots[i];
            self.order.remove(&(slot.count, i));
            slot.count = slot.count.saturating_add(weight);
            self.order.insert((slot.count, i));
            return;
        }
        if self.slots.len() < self.k {
            let i = self.slots.len();
            self.slots.push(Slot {
                key,
                count: weight,
                error: 0,
                label: label(),
            });
            self.index.insert(key, i);
            self.order.insert((weight, i));
            return;
        }
        let Some((least, i)) = self.order.pop_first() else {
            return;
        };
        let slot = &mut self.slots[i];
        self.index.remove(&slot.key);
        *slot = Slot {
            key,
            count: least.saturating_add(weight),
            error: least,
            label: label(),
        };
        self.index.insert(key, i);
        self.order.insert((slot.count, i));
    }

    /// The slot of `key`, if it holds one.
    pub(crate) fn get(&self, key: u64) -> Option<&Slot<L>> {
        self.index.get(&key).map(|&i| &self.slots[i])
    }

    /// The total weight added.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// The slots, heaviest first.
    pub(crate) fn heaviest(&self) -> impl Iterator<Item = &Slot<L>> {
        self.order.iter().rev().map(|&(_, i)| &self.slots[i])
    }

    /// The keys whose count is at least `threshold`: every key of true weight ≥ `threshold`
    /// and none below `threshold - total / k`.
    #[cfg(test)]
    pub(crate) fn above(&self, threshold: u64) -> impl Iterator<Item = &Slot<L>> {
        self.heaviest().take_while(move |s| s.count >= threshold)
    }

    /// The largest error of any count: `total / k` at most.
    #[cfg(test)]
    pub(crate) fn error_bound(&self) -> u64 {
        if self.slots.len() < self.k {
            0
        } else {
            self.total / self.k as u64
        }
    }

    /// Monitored keys (at most `k`).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Bytes held, labels' own heap excluded: slots and index at their current
    /// capacities, the ordered set at `k` entries (what it holds once full). Bounded by `k` whatever the stream: the index never holds more
    /// than `k` entries, so it never grows past its first allocation for `k`.
    pub(crate) fn footprint(&self) -> usize {
        let slot = std::mem::size_of::<Slot<L>>();
        let entry = std::mem::size_of::<(u64, usize)>();
        // A B-tree node holds up to 11 entries and two words of bookkeeping per entry at
        // most; a hash table one control byte and one entry per bucket.
        self.slots.capacity() * slot
            + super::table_bytes(self.allocated.max(self.index.capacity()), entry)
            + self.k.max(self.order.len()) * entry * 3
    }

    /// The most [`footprint`](Self::footprint) reaches for `k` slots: the slots, a hash
    /// index of at most `k` entries (at most 4k buckets, tombstones included) and the
    /// ordered set.
    #[cfg(test)]
    pub(crate) fn bound(k: usize) -> usize {
        let entry = std::mem::size_of::<(u64, usize)>();
        k * std::mem::size_of::<Slot<L>>() + super::table_bytes(2 * k, entry) + k * entry * 3
    }

    /// Forgets every key.
    pub(crate) fn clear(&mut self) {
        self.slots.clear();
        self.index.clear();
        self.order.clear();
        self.total = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// A skewed stream: key `i` drawn with probability ∝ 1 / (i + 1)^s, weights 1 to 8.
    fn skewed() -> impl Strategy<Value = Vec<(u64, u64)>> {
        (1usize..400, 0.5f64..2.0, 100usize..4_000).prop_flat_map(|(keys, s, len)| {
            let weights: Vec<f64> = (0..keys).map(|i| 1.0 / ((i + 1) as f64).powf(s)).collect();
            let sum: f64 = weights.iter().sum();
            let cumulative: Vec<f64> = weights
                .iter()
                .scan(0.0, |acc, w| {
                    *acc += w / sum;
                    Some(*acc)
                })
                .collect();
            proptest::collection::vec((0.0f64..1.0, 1u64..=8), len).prop_map(move |draws| {
                draws
                    .into_iter()
                    .map(|(u, w)| {
                        let i = cumulative.partition_point(|&c| c < u).min(keys - 1);
                        // Spread the keys over the hash space as real hashes would.
                        ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15), w)
                    })
                    .collect()
            })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Space-Saving's guarantees on random skewed streams: every monitored count brackets
        /// the true weight; a reported key (count ≥ φN) is never below φN − N/k; every key at
        /// or above φN is reported.
        #[test]
        fn reports_every_heavy_key_and_none_far_below(
            stream in skewed(),
            k in 1usize..64,
            phi in 0.01f64..0.5,
        ) {
            let mut sketch = SpaceSaving::new(k);
            let mut truth: HashMap<u64, u64> = HashMap::new();
            for &(key, w) in &stream {
                sketch.add(key, w, || ());
                *truth.entry(key).or_default() += w;
            }
            let n = sketch.total();
            prop_assert_eq!(n, truth.values().sum::<u64>());
            prop_assert!(sketch.len() <= k);
            let bound = n / k as u64;
            prop_assert!(sketch.error_bound() <= bound);
            for slot in sketch.heaviest() {
                let w = truth[&slot.key];
                prop_assert!(slot.count >= w, "count {} below true {}", slot.count, w);
                prop_assert!(slot.count - slot.error <= w);
                prop_assert!(slot.error <= bound);
            }
            let threshold = (phi * n as f64).ceil() as u64;
            let reported: Vec<u64> = sketch.above(threshold).map(|s| s.key).collect();
            for (&key, &w) in &truth {
                // A key at or above the threshold and above the error bound N/k holds a
                // slot, so it is reported; below N/k a key may have lost its slot.
                if w >= threshold && w > bound {
                    prop_assert!(reported.contains(&key), "heavy key {key} ({w} of {n}) missed");
                }
                if w + bound < threshold {
                    prop_assert!(!reported.contains(&key), "light key {key} ({w} of {n}) reported");
                }
                if w > bound {
                    prop_assert!(sketch.get(key).is_some(), "key above N/k not monitored");
                }
            }
        }
    }

    /// A million distinct keys leave the sketch at its first allocation.
    #[test]
    fn a_million_distinct_keys_stay_in_k_slots() {
        let mut sketch = SpaceSaving::new(64);
        let mut after = Vec::new();
        for key in 0..1_000_000u64 {
            sketch.add(key.wrapping_mul(0x9E37_79B9_7F4A_7C15), 1 + key % 3, || ());
            if [1_000, 10_000, 100_000, 999_999].contains(&key) {
                after.push(sketch.footprint());
            }
        }
        assert_eq!(sketch.len(), 64);
        assert!(after.iter().all(|&f| f == after[0]), "grew: {after:?}");
        assert!(after[0] <= SpaceSaving::<()>::bound(64), "{after:?}");
    }

    #[test]
    fn a_heavy_key_is_counted_exactly_while_it_holds_its_slot() {
        let mut sketch = SpaceSaving::new(4);
        for i in 0..1_000u64 {
            sketch.add(7, 10, || "hot");
            sketch.add(1_000 + i, 1, || "cold");
        }
        let hot = sketch.get(7).map(|s| (s.count, s.error, s.label));
        assert_eq!(hot, Some((10_000, 0, "hot")));
        assert_eq!(sketch.heaviest().next().map(|s| s.key), Some(7));
        sketch.clear();
        assert_eq!((sketch.len(), sketch.total()), (0, 0));
    }
}
