//! Keys: order-preserving encoding of key parts and typed keys.
//!
//! A key template such as `ORDER#{created_at}#{order_id}` is parsed at compile time by
//! `#[derive(Entity)]`; the generated constructor renders it with [`KeyPart`], whose
//! encodings sort in byte order exactly as the values sort logically (zero-padded and
//! offset integers, fixed-width RFC 3339 UTC timestamps, strings with every character up
//! to `%` written as `%XX`, so none contains the `#` delimiter or sorts below it); the
//! stored format and its rules for custom types are in [`KeyPart`]. A table, entity or
//! index template may declare another delimiter (`.`, `_`, `|`, `:`) with the same
//! guarantees: see [`delimiter`].

pub mod chain;
pub mod sharded;
pub mod sort;

pub use crate::entity::Key;
#[doc(hidden)]
pub use crate::keytext::template;
pub use crate::keytext::{
    DELIMITER, KeyArg, KeyError, KeyPart, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES,
    OptionalKeyPart, RawKey, computed, escape_str, format, split_components,
};
pub use crate::keytext::{Delimiter, delimiter};
