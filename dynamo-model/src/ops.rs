//! The former home of the request builders, now split by what they do: operations on one
//! item in [`item`](crate::item), reads of many items in [`read`](crate::read).
//!
//! Every name here still compiles, as an alias of its new path: the types and the constant
//! are `#[deprecated]` (the compiler names the new path), the traits are plain re-exports
//! (a re-export cannot carry a deprecation) and will be removed with this module.

/// The old path of [`item::Get`](crate::item::Get).
#[deprecated(note = "moved: `dynamo_model::item::Get` (or `dynamo_model::prelude::*`)")]
pub type Get<E> = crate::item::Get<E>;
/// The old path of [`item::Put`](crate::item::Put).
#[deprecated(note = "moved: `dynamo_model::item::Put` (or `dynamo_model::prelude::*`)")]
pub type Put<E> = crate::item::Put<E>;
/// The old path of [`item::Update`](crate::item::Update).
#[deprecated(note = "moved: `dynamo_model::item::Update` (or `dynamo_model::prelude::*`)")]
pub type Update<E> = crate::item::Update<E>;
/// The old path of [`item::Delete`](crate::item::Delete).
#[deprecated(note = "moved: `dynamo_model::item::Delete` (or `dynamo_model::prelude::*`)")]
pub type Delete<E> = crate::item::Delete<E>;
/// The old path of [`item::DeleteReturningOld`](crate::item::DeleteReturningOld).
#[deprecated(note = "moved: `dynamo_model::item::DeleteReturningOld`")]
pub type DeleteReturningOld<E> = crate::item::DeleteReturningOld<E>;
/// The old path of [`item::WriteToken`](crate::item::WriteToken).
#[deprecated(note = "moved: `dynamo_model::item::WriteToken`")]
pub type WriteToken = crate::item::WriteToken;
/// The old path of [`read::Query`](crate::read::Query).
#[deprecated(note = "moved: `dynamo_model::read::Query` (or `dynamo_model::prelude::*`)")]
pub type Query<T, K = crate::Primary> = crate::read::Query<T, K>;
/// The old path of [`read::Scan`](crate::read::Scan).
#[deprecated(note = "moved: `dynamo_model::read::Scan` (or `dynamo_model::prelude::*`)")]
pub type Scan<T> = crate::read::Scan<T>;
/// The old path of [`read::ScatterQuery`](crate::read::ScatterQuery).
#[deprecated(note = "moved: `dynamo_model::read::ScatterQuery` (or `dynamo_model::prelude::*`)")]
pub type ScatterQuery<T, K = crate::Primary> = crate::read::ScatterQuery<T, K>;
/// The old path of [`read::DEFAULT_SCATTER_CONCURRENCY`](crate::read::DEFAULT_SCATTER_CONCURRENCY).
#[deprecated(note = "moved: `dynamo_model::read::DEFAULT_SCATTER_CONCURRENCY`")]
pub const DEFAULT_SCATTER_CONCURRENCY: usize = crate::read::DEFAULT_SCATTER_CONCURRENCY;
/// The old path of [`read::PartitionValue`](crate::read::PartitionValue).
#[deprecated(note = "moved: `dynamo_model::read::PartitionValue`")]
pub type PartitionValue = crate::read::PartitionValue;
/// The old path of [`read::SortCondition`](crate::read::SortCondition).
#[deprecated(note = "moved: `dynamo_model::read::SortCondition`")]
pub type SortCondition = crate::read::SortCondition;
/// The old path of [`Page`](crate::Page).
#[deprecated(note = "moved: `dynamo_model::Page` (or `dynamo_model::prelude::*`)")]
pub type Page<T> = crate::Page<T>;
/// The old path of [`UnknownEntity`](crate::UnknownEntity).
#[deprecated(note = "moved: `dynamo_model::UnknownEntity`")]
pub type UnknownEntity = crate::UnknownEntity;
/// The old path of [`BoxFuture`](crate::BoxFuture).
#[deprecated(note = "moved: `dynamo_model::BoxFuture`")]
pub type BoxFuture<'a, T> = crate::BoxFuture<'a, T>;

pub use crate::item::{Numeric, StringSet};
pub use crate::read::{IntoPartition, IntoSortKey};
