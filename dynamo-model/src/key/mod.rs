//! The text of keys: the order-preserving encoding of key parts, key formats, computed
//! parts, delimiters, the templates the derive declares, and raw keys with DynamoDB's limits
//! on them. Pure functions of values: no entity, no request.
//!
//! A key template such as `ORDER#{created_at}#{order_id}` is parsed at compile time by
//! `#[derive(Entity)]`; the generated constructor renders it with [`KeyPart`], whose
//! encodings sort in byte order exactly as the values sort logically (zero-padded and
//! offset integers, fixed-width RFC 3339 UTC timestamps, strings with every character up
//! to `%` written as `%XX`, so none contains the `#` delimiter or sorts below it); the
//! stored format and its rules for custom types are in [`KeyPart`]. A field may be
//! written in another form to match existing data ([`format`](mod@format)), and a part
//! may be computed from a field (a shard, a time bucket: [`computed`]). A table, entity
//! or index template may declare another delimiter (`.`, `_`, `|`, `:`) with the same
//! guarantees: see [`delimiter`]. A rendered key is a [`RawKey`], checked against
//! [`MAX_PARTITION_KEY_BYTES`] and [`MAX_SORT_KEY_BYTES`] before anything is sent.
//!
//! The typed key of an item is [`Key`](dynamo_model::Key); the partitions, sort-key
//! conditions and ranges that queries build from key templates are in
//! [`keyspace`](dynamo_model::keyspace).

pub mod computed;
pub mod delimiter;
mod encode;
pub mod format;
#[doc(hidden)]
pub mod render;
#[doc(hidden)]
pub mod template;
#[cfg(test)]
pub(crate) mod testing;

pub use delimiter::Delimiter;
pub(crate) use encode::short_type_name;
pub use encode::{
    DELIMITER, KeyArg, KeyError, KeyPart, OptionalKeyPart, escape_str, split_components,
};

use crate::Error;

/// DynamoDB limit on a partition key value, in bytes.
pub const MAX_PARTITION_KEY_BYTES: usize = 2048;
/// DynamoDB limit on a sort key value, in bytes.
pub const MAX_SORT_KEY_BYTES: usize = 1024;

/// The rendered key attribute values of an item.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RawKey {
    /// Partition key value.
    pub pk: String,
    /// Sort key value (for tables with a sort key).
    pub sk: Option<String>,
}

/// Checks a rendered index key value against DynamoDB's key limits (1 to 2048 bytes for
/// a partition key, 1 to 1024 for a sort key) before anything is sent.
pub(crate) fn check_index_key(
    entity: &'static str,
    attribute: &str,
    value: &str,
    partition: bool,
) -> Result<(), Error> {
    let (which, max) = if partition {
        ("index partition", MAX_PARTITION_KEY_BYTES)
    } else {
        ("index sort", MAX_SORT_KEY_BYTES)
    };
    // Checked before the label is formatted: a valid key (every write of an indexed
    // item) costs two comparisons, no allocation.
    if value.is_empty() || value.len() > max {
        return check_key_value(entity, &format!("{which} (`{attribute}`)"), value, max);
    }
    Ok(())
}

/// Checks one key value against DynamoDB's limits: not empty, at most `max` bytes.
pub(crate) fn check_key_value(
    entity: &'static str,
    which: &str,
    value: &str,
    max: usize,
) -> Result<(), Error> {
    if value.is_empty() {
        return Err(Error::invalid(
            entity,
            crate::ValidationReason::EmptyKeyValue,
            format!("the {which} key value is empty; DynamoDB requires at least one byte"),
        ));
    }
    let bytes = value.len();
    if bytes > max {
        return Err(Error::invalid(
            entity,
            crate::ValidationReason::KeyTooLong,
            format!("the {which} key value is {bytes} bytes; DynamoDB allows at most {max}"),
        ));
    }
    Ok(())
}
