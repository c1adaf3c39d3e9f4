//! `#[dynamo(...)]` and the relevant `#[serde(...)]` attributes → plain structs, one module
//! per derive or concern.

mod entity;
mod field;
mod index_name;
mod naming;
mod rename;
mod table;
mod validate;

pub use entity::*;
pub use field::*;
pub use index_name::IndexName;
pub use naming::*;
pub use rename::*;
pub use table::*;
pub use validate::*;
