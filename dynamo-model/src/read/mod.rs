//! Reads of many items: [`Query`] (one partition, of the table or an index),
//! [`ScatterQuery`] (many partitions merged in key order), [`Scan`] (the whole table, in
//! parallel segments), their key conditions ([`IntoPartition`], [`IntoSortKey`]), and the
//! source towards DynamoDB, pager and merge they share.
//!
//! Each is a builder from [`Db`](crate::Db) ([`Db::query`](crate::Db::query),
//! [`Db::scan`](crate::Db::scan), [`Db::scatter_query`](crate::Db::scatter_query)) that ends in
//! `all()` (every page), `page(cursor)` (one page and a [`Cursor`](crate::Cursor) for the
//! next), `stream()` (items as they arrive) or, for a query, `one()`. Reads of one item by
//! its key are in [`item`](dynamo_model::item) ([`Get`](dynamo_model::item::Get)).

pub(crate) mod dynamodb;
mod key_condition;
mod merge;
pub(crate) mod pager;
pub(crate) mod projection;
mod query;
mod scan;
mod scatter;

pub use key_condition::{IntoPartition, IntoSortKey, PartitionValue, SortCondition};
pub use query::Query;
pub use scan::Scan;
pub use scatter::{DEFAULT_SCATTER_CONCURRENCY, ScatterQuery};
