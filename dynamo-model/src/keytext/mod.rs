//! The text of keys: the order-preserving encoding of key parts ([`KeyPart`]), key
//! formats, computed parts, the templates the derive declares, and raw keys with
//! DynamoDB's limits on them. Pure functions of values: no entity, no request.
//!
//! Users reach all of it through [`dynamo_model::key`], which adds the typed keys and key
//! conditions of entities.

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
