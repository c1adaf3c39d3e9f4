//! What application code names, in one import:
//!
//! ```
//! use dynamo_model::prelude::*;
//!
//! #[derive(Table)]
//! #[dynamo(pk = "PK", sk = "SK")]
//! struct App;
//!
//! #[derive(Entity)]
//! #[dynamo(table = App, pk = "USER#{user_id}", sk = "PROFILE")]
//! struct User {
//!     user_id: String,
//!     name: String,
//! }
//!
//! // Builders named in signatures: a query built in one place, sent in another.
//! fn profiles(db: &Db<App>, user: &str) -> Query<User> {
//!     db.query(User::partition(user))
//! }
//!
//! async fn rename(db: &Db<App>, key: Key<User>, name: &str) -> Result<User, Error> {
//!     db.update(key).set(User::fields().name, name).await
//! }
//! ```
//!
//! It holds the derives and their traits ([`Table`], [`Entity`], [`Attribute`],
//! [`Collection`]), the table handle [`Db`], typed keys ([`Key`]), conditions
//! ([`Condition`]), pages and cursors ([`Page`], [`Cursor`]), the error ([`Error`]), and
//! the builder each `Db` operation returns: [`Get`], [`Put`], [`Update`], [`Delete`]
//! (`db.get/put/update/delete`), [`Query`], [`ScatterQuery`], [`Scan`]
//! (`db.query/scatter_query/scan`), [`BatchGet`], [`BatchWrite`] and [`WriteOp`]
//! (`db.batch_get/batch_write`), [`TransactGet`] and [`TransactWrite`]
//! (`db.transact_get/transact_write`). Everything else stays at its own path.

pub use crate::batch::{BatchGet, BatchWrite, WriteOp};
pub use crate::item::{Delete, Get, Put, Update};
pub use crate::read::{Query, Scan, ScatterQuery};
pub use crate::transact::{TransactGet, TransactWrite};
pub use crate::{Attribute, Collection, Condition, Cursor, Db, Entity, Error, Key, Page, Table};
