//! Capacity units as DynamoDB charges them, computed from item sizes ([`item_size`]).
//!
//! Rules (DynamoDB developer guide, "Read/write capacity mode" and "Item sizes"):
//! - a read unit is one strongly consistent read of up to 4 KB (4,096 bytes); an
//!   eventually consistent read costs half, a transactional read twice;
//! - `GetItem` rounds the item up to 4 KB; a missing item still costs one unit (half
//!   eventually consistent);
//! - `BatchGetItem` rounds each item separately, then sums;
//! - `Query` sums the items it returns and rounds once; `Scan` does the same over the
//!   items it *evaluates*, which a filter may then drop;
//! - a write unit is one write of up to 1 KB (1,024 bytes), rounded up per item; a
//!   transactional write costs twice.
//!
//! The crate reports these estimates next to what DynamoDB reported
//! ([`Page::estimated_capacity`](crate::Page::estimated_capacity),
//! [`BatchGetOutput::estimated_capacity`](crate::BatchGetOutput::estimated_capacity)):
//! an estimate is what the items seen cost, so a read whose filter dropped items (and a
//! scan) costs at least that much. DynamoDB Local reports some operations wrongly (a
//! batch get of a missing item as 0); the estimate follows the service's rules.
//!
//! ```
//! use dynamo_model::capacity;
//!
//! // A 400 KB item: 100 read units strongly consistent, 50 eventually, 400 write units.
//! assert_eq!(capacity::read_units(400 * 1024, true), 100.0);
//! assert_eq!(capacity::read_units(400 * 1024, false), 50.0);
//! assert_eq!(capacity::write_units(400 * 1024), 400.0);
//! ```
//!
//! [`item_size`]: crate::item_size

mod budget;
mod meter;
pub use budget::{Budget, BudgetExceeded, Excess, Limit, Usage};
pub(crate) use meter::Metering;
pub use meter::{Charge, Meter, Units};

/// Bytes per read unit.
pub const READ_UNIT_BYTES: usize = 4 * 1024;
/// Bytes per write unit.
pub const WRITE_UNIT_BYTES: usize = 1024;

/// The read units of reading `bytes` in one request (an item by `GetItem`, or the items
/// a `Query` returns, summed): rounded up to 4 KB, at least one unit; half when eventually
/// consistent.
pub fn read_units(bytes: usize, consistent: bool) -> f64 {
    let units = bytes.div_ceil(READ_UNIT_BYTES).max(1) as f64;
    if consistent { units } else { units / 2.0 }
}

/// The read units of a `BatchGetItem` returning items of these sizes (each rounded
/// separately) and `missing` keys without an item (one unit each).
pub fn batch_get_units(
    sizes: impl IntoIterator<Item = usize>,
    missing: usize,
    consistent: bool,
) -> f64 {
    let found: f64 = sizes.into_iter().map(|b| read_units(b, consistent)).sum();
    found + missing as f64 * read_units(0, consistent)
}

/// The write units of writing an item of `bytes` (the larger of the item before and
/// after, for a put or update): rounded up to 1 KB, at least one unit.
pub fn write_units(bytes: usize) -> f64 {
    bytes.div_ceil(WRITE_UNIT_BYTES).max(1) as f64
}

/// The units of the same work in a transaction: twice (prepare and commit).
pub fn transactional(units: f64) -> f64 {
    units * 2.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The worked examples of the developer guide and the reference notes.
    #[test]
    fn the_documented_examples() {
        // BatchGetItem: 1.5 KB + 6.5 KB round to 4 KB + 8 KB = 3 units.
        assert_eq!(batch_get_units([1536, 6656], 0, true), 3.0);
        // Query: 10 items totalling 40.8 KB round once to 44 KB = 11 units.
        assert_eq!(read_units(41_779, true), 11.0);
        // A missing item still costs a unit (half eventually consistent).
        assert_eq!(read_units(0, true), 1.0);
        assert_eq!(batch_get_units([], 2, false), 1.0);
        // 3 items of 500 B in a TransactWriteItems: 6 write units.
        assert_eq!(transactional(3.0 * write_units(500)), 6.0);
        // A 1 KB item is one write unit; one byte more is two.
        assert_eq!(write_units(1024), 1.0);
        assert_eq!(write_units(1025), 2.0);
    }

    proptest! {
        /// Units never decrease with size, and a unit covers exactly its bytes.
        #[test]
        fn units_are_monotonic_and_exact(a in 0usize..2_000_000, b in 0usize..2_000_000) {
            let (small, large) = (a.min(b), a.max(b));
            prop_assert!(read_units(small, true) <= read_units(large, true));
            prop_assert!(write_units(small) <= write_units(large));
            let units = read_units(large, true) as usize;
            prop_assert!(units * READ_UNIT_BYTES >= large);
            prop_assert!(large == 0 || (units - 1) * READ_UNIT_BYTES < large);
            prop_assert_eq!(read_units(large, false) * 2.0, read_units(large, true));
        }
    }
}
