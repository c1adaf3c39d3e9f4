//! Sharded partitions: the `N` partition values of a partition-key template with a shard
//! (`pk = "ORDERS#{created_at:date}#{order_id:shard(16)}"`).
//!
//! Items of one day are spread over 16 partitions, and which one holds an order depends
//! on its id, which a query of the day does not know. So the generated partition
//! constructor of such a template (`Order::partition(day)`) returns a
//! [`ShardedPartition`]: every shard's [`Partition`], each usable with
//! [`Db::query`](crate::Db::query) like any partition, and the input of a query over all
//! shards. It is deliberately not a partition itself: a query of one shard only would read
//! `1/N` of the items, so naming one shard is explicit ([`ShardedPartition::shard`]).

use super::sort::{KeySpace, Partition, Primary};
use crate::Entity;
use crate::error::KeyError;
use crate::key::computed::push_shard_number;
use std::fmt;

/// Every shard's partition of a sharded partition-key template, for entity `E` in key
/// space `K` (the table, or an index).
///
/// ```
/// use dynamo_model::{Entity, Table};
///
/// #[derive(Table)]
/// #[dynamo(pk = "PK", sk = "SK")]
/// struct App;
///
/// #[derive(Entity)]
/// #[dynamo(table = App, pk = "ORDERS#{day}#{order_id:shard(4)}", sk = "{order_id}")]
/// struct Order { day: String, order_id: String }
///
/// let day = Order::partition("2014-07-09");
/// assert_eq!(day.count(), 4);
/// let values: Vec<String> = day
///     .shards()
///     .map(|p| p.value().map(str::to_owned))
///     .collect::<Result<_, _>>()?;
/// assert_eq!(values, ["ORDERS#2014-07-09#0", "ORDERS#2014-07-09#1", "ORDERS#2014-07-09#2", "ORDERS#2014-07-09#3"]);
/// assert_eq!(day.shard(2).value()?, "ORDERS#2014-07-09#2");
/// # Ok::<(), dynamo_model::Error>(())
/// ```
pub struct ShardedPartition<E, K = Primary> {
    /// The partition of shard 0, whose default sort-key condition every shard shares.
    base: Partition<E, K>,
    /// The rendered text before and after the shard (or the error rendering it).
    around: Result<(String, String), KeyError>,
    count: u16,
}

impl<E: Entity, K: KeySpace> ShardedPartition<E, K> {
    /// `sk_root` and `sk_fixed` as for [`Partition::__build`]; `around` renders the
    /// template before and after its shard placeholder, which has `count` shards.
    #[doc(hidden)]
    pub fn __build(
        sk_root: &str,
        sk_fixed: bool,
        count: u16,
        around: impl FnOnce(&mut String, &mut String) -> Result<(), KeyError>,
    ) -> Self {
        let (mut head, mut tail) = (String::new(), String::new());
        let around = around(&mut head, &mut tail).map(|()| (head, tail));
        ShardedPartition {
            base: Partition::__build(sk_root, sk_fixed, |_| Ok(())),
            around,
            count,
        }
    }
}

impl<E, K> ShardedPartition<E, K> {
    /// The number of shards (the template's `N`).
    pub fn count(&self) -> u16 {
        self.count
    }

    /// The partition of shard `shard` (`0..count()`), for tooling that addresses one shard
    /// (inspecting a hot shard, repairing it). A shard out of range gives a partition whose
    /// query is refused before anything is sent.
    pub fn shard(&self, shard: u16) -> Partition<E, K> {
        let value = self.around.clone().and_then(|(mut value, tail)| {
            push_shard_number(shard, self.count, &mut value)?;
            value.push_str(&tail);
            Ok(value)
        });
        let mut partition = self.base.clone();
        partition.value = value;
        partition
    }

    /// Every shard's partition, in shard order.
    pub fn shards(&self) -> impl ExactSizeIterator<Item = Partition<E, K>> + '_ {
        (0..self.count).map(|shard| self.shard(shard))
    }

    /// Every shard's partition, in shard order.
    pub fn into_shards(self) -> Vec<Partition<E, K>> {
        self.shards().collect()
    }
}

impl<E, K> IntoIterator for ShardedPartition<E, K> {
    type Item = Partition<E, K>;
    type IntoIter = std::vec::IntoIter<Partition<E, K>>;

    fn into_iter(self) -> Self::IntoIter {
        self.into_shards().into_iter()
    }
}

impl<E, K> From<ShardedPartition<E, K>> for Vec<Partition<E, K>> {
    fn from(sharded: ShardedPartition<E, K>) -> Self {
        sharded.into_shards()
    }
}

impl<E, K> Clone for ShardedPartition<E, K> {
    fn clone(&self) -> Self {
        ShardedPartition {
            base: self.base.clone(),
            around: self.around.clone(),
            count: self.count,
        }
    }
}

impl<E, K> fmt::Debug for ShardedPartition<E, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShardedPartition")
            .field("around", &self.around)
            .field("count", &self.count)
            .finish()
    }
}

#[cfg(all(test, feature = "time"))]
mod tests;
