//! # dynamo-model
//!
//! A typed single-table ORM for Amazon DynamoDB.
//!
//! One table holds many entity types. You declare the table once with
//! `#[derive(Table)]` (key attribute names, indexes, TTL), bind each domain struct to it
//! with `#[derive(Entity)]` and key templates such as `pk = "USER#{user_id}"`,
//! `sk = "ORDER#{created_at}#{order_id}"`, and the crate renders keys, writes an
//! entity-type attribute on every item, converts structs to items and back, and builds
//! every expression with placeholders.
//!
//! ```
//! use dynamo_model::{Entity, Table};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Table)]
//! #[dynamo(pk = "PK", sk = "SK")]
//! struct App;
//!
//! #[derive(Entity, Serialize, Deserialize, Debug, PartialEq)]
//! #[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{placed_at}#{order_id}")]
//! struct Order {
//!     user_id: String,
//!     order_id: String,
//!     placed_at: u64,
//!     total_cents: u64,
//! }
//!
//! let order = Order { user_id: "u-1".into(), order_id: "o-7".into(), placed_at: 42, total_cents: 1999 };
//! // Typed (a Key<Order>), its fields named, in any order: none can be swapped or missed.
//! let key = Order::key(OrderKey { user_id: "u-1", placed_at: 42, order_id: "o-7" });
//! assert_eq!(key.raw().unwrap().pk, "USER#u-1");
//! assert_eq!(key.raw().unwrap().sk.as_deref(), Some("ORDER#00000000000000000042#o-7"));
//! assert_eq!(key.raw().unwrap(), order.primary_key().raw().unwrap());
//!
//! let item = order.to_item().unwrap();
//! assert_eq!(Order::from_item(item).unwrap(), order);
//! ```
//!
//! Operations go through a [`Db`], a client bound to one table name:
//! [`Db::get`], [`Db::put`], [`Db::delete`], [`Db::update`]. Every failure is a
//! [`Error`] you can match on.
//!
//! Features: `time` and `uuid` add key encodings and codecs for `time::OffsetDateTime`
//! and `uuid::Uuid`; `local` adds [`local`], which finds or starts DynamoDB Local and
//! creates throw-away tables for tests.

#![warn(missing_docs)]

extern crate self as dynamo_model;

pub mod batch;
pub mod codec;
pub mod collection;
pub mod cursor;
mod db;
pub mod entity;
pub mod error;
pub mod expr;
pub mod key;
#[cfg(feature = "local")]
pub mod local;
pub mod ops;
pub mod registry;
pub mod retry;
pub mod schema;
mod size;
pub mod transact;

pub use batch::{BatchGetOutput, BatchWriteOutput, Progress, WriteOp};
pub use codec::{AttrValue, Binary, Epoch, Serde, TtlValue, VersionValue};
pub use collection::{Collection, Target};
pub use cursor::Cursor;
pub use db::Db;
pub use entity::Entity;
pub use error::{DecodeError, DecodeErrorKind, Error, ValidationReason};
pub use expr::{AttrPath, Condition, MapPath, Path, UpdatablePath};
pub use key::sort::{
    AttributeCondition, IndexAt, KeySpace, MultiPartition, Partition, Primary, SortKeyCondition,
    SortKeyRange,
};
pub use key::{Key, KeyPart, RawKey};
pub use ops::Numeric;
pub use ops::{Page, SortCondition, UnknownEntity};
pub use retry::RetryPolicy;
pub use schema::{Table, TableSchema};
pub use size::{item_size, value_size, MAX_ITEM_BYTES};

/// `#[derive(Table)]`: declares a table's key attributes, indexes and TTL attribute.
///
/// ```
/// use dynamo_model::Table;
///
/// #[derive(Table)]
/// #[dynamo(
///     pk = "PK",
///     sk = "SK",
///     gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
///     gsi(name = "ByEmail", pk = "email", projection = keys_only),
///     lsi(name = "LSI1", sk = "LSI1SK", projection(include = ["total"])),
///     ttl = "expires_at",
///     entity_type = "_type",
///     write_token = "_wt",
/// )]
/// struct App;
/// ```
///
/// Options: `pk` (required) and `sk` name the key attributes; `gsi(name, pk, sk,
/// projection)` and `lsi(name, sk, projection)` declare indexes (projection `all` (default),
/// `keys_only`, or `projection(include = [...])`); `ttl` names the TTL attribute;
/// `entity_type` names the entity-type attribute (default `_type`); `write_token` names the
/// attribute in which single-item puts and updates store their write token (default `_wt`,
/// see [`TableSchema::write_token`]).
pub use dynamo_model_derive::Table;

/// `#[derive(Entity)]`: binds a struct to a table with key templates.
///
/// ```
/// # use dynamo_model::{Entity, Table};
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Table)]
/// # #[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
/// # struct App;
/// #[derive(Entity, Serialize, Deserialize)]
/// #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE",
///          index(GSI1, pk = "EMAIL#{email}", sk = "USER"), entity_type = "User")]
/// #[serde(rename_all = "camelCase")]
/// struct User {
///     id: String,
///     email: Option<String>,      // sparse: no GSI1 attributes while `None`
///     display_name: String,       // stored as `displayName`
///     #[dynamo(serde)]
///     preferences: Vec<(String, u8)>, // stored through serde_dynamo
/// }
/// ```
///
/// Container options: `table` (the `#[derive(Table)]` type), `pk` and `sk` templates
/// (literal text and `{field}` placeholders; a placeholder is followed by the end of the
/// template or by `#`), `index(NAME, pk = .., sk = ..)` templates onto a declared index,
/// `entity_type` (default: the struct name). Field option: `#[dynamo(serde)]`. Serde's
/// `rename`, `rename_all`, `skip` and `default` are respected.
///
/// Generated, next to the entity (so these names must be free in its module):
/// - `impl Entity`;
/// - `Type::key(..)`, the key constructor. A key of one field takes its value
///   (`User::key("u-1")`, `Config::key()` for a key without fields). A key of two or more
///   fields (pk and sk templates together) takes a generated struct `{Type}Key` with one
///   field per key field, named and in any order, so two fields of one type cannot be
///   swapped and a missing or unknown field is a compile error:
///   `Order::key(OrderKey { user_id: "u-1", placed_at: 42, order_id: "o-7" })`. Each field
///   takes what [`KeyArg`](key::KeyArg) accepts (`T`, `&T`, `&str` for a `String`), and
///   `OrderKey { .. }.into()` is a [`Key<Order>`](Key) too;
/// - `Type::partition(..)` and `Type::{index}_partition(..)` (`GSI1` → `gsi1_partition`),
///   the partitions to [query](Db::query), by the same rule: one field by value, two or
///   more in a struct `{Type}Partition` or `{Type}{Index}Partition` (`{Index}` in
///   PascalCase: `GSI1` → `Gsi1`, `by-region` → `ByRegion`);
/// - `Type::sk()` and `Type::{index}_sk()`: typed sort-key conditions (`{Type}Sk`,
///   `{Type}{Index}Sk`);
/// - `Type::fields()`: a `{Type}Fields` with a typed [`Path`] per field for conditions and
///   updates.
pub use dynamo_model_derive::Entity;

/// `#[derive(Collection)]`: an enum over entity types that share a partition, so one
/// query returns all of them, dispatched on the entity-type attribute. See [`Collection`].
pub use dynamo_model_derive::Collection;

#[doc(hidden)]
pub mod __private {
    pub use crate::collection::__private::*;
    pub use crate::collection::{Decoded, Includes};
    pub use crate::entity::__private::*;
    pub use crate::entity::{IndexChanges, IndexKeyAttributes, Touch};
    pub use crate::expr::{KeyField, Mutable};
    pub use crate::key::sort::{
        attribute_op, attribute_value, encode_arg, AttributeOp, AttributePrefix, Compare,
        SortKeyOp, SortKeyPrefix,
    };
    pub use crate::ops::IntoSortKey;
    pub use crate::registry::{EntityRegistration, Segment as KeySegment};
    pub use inventory;
}

/// An item as DynamoDB represents it: attribute name → value.
pub type Item = std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>;

/// Re-export of the SDK crate this crate is built on, so users can name its types
/// without a version mismatch.
pub use aws_sdk_dynamodb;

/// The README's example, compiled as a doctest so it cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
