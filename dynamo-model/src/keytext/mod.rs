//! The text of keys: the order-preserving encoding of key parts ([`KeyPart`]), key
//! formats, computed parts, the templates the derive declares, and raw keys with
//! DynamoDB's limits on them. Pure functions of values: no entity, no request.
//!
//! Users reach all of it through [`dynamo_model::key`], which adds the typed keys and key
//! conditions of entities.

pub mod computed;
mod encode;
pub mod format;
#[doc(hidden)]
pub mod render;
#[doc(hidden)]
pub mod template;
#[cfg(test)]
pub(crate) mod testing;

pub(crate) use crate::schema::{Delimiter, delimiter};
pub(crate) use encode::short_type_name;
pub use encode::{
    DELIMITER, KeyArg, KeyError, KeyPart, OptionalKeyPart, escape_str, split_components,
};

use crate::{Error, Item};
use aws_sdk_dynamodb::types::AttributeValue;

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

impl RawKey {
    /// The key as the attribute map DynamoDB expects in `Key` parameters, under the
    /// key attributes of `schema`.
    pub(crate) fn to_item(&self, schema: &crate::TableSchema) -> Item {
        let mut item = Item::with_capacity(2);
        item.insert(
            schema.pk.name.to_owned(),
            AttributeValue::S(self.pk.clone()),
        );
        if let (Some(attr), Some(sk)) = (schema.sk, &self.sk) {
            item.insert(attr.name.to_owned(), AttributeValue::S(sk.clone()));
        }
        item
    }
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

/// Refuses an empty string or binary value in an attribute that is a key attribute of one
/// of the table's secondary indexes: DynamoDB rejects the whole request ("a value specified
/// for a secondary index key is not supported"), and in a batch write the other items of
/// its request with it. Index keys rendered from templates are checked as they are
/// rendered; this covers the attributes of multi-attribute index keys, which are the
/// entity's own fields. `value` looks an attribute up in what is about to be written.
pub(crate) fn check_index_attributes<'a>(
    entity: &'static str,
    schema: &crate::TableSchema,
    value: impl Fn(&str) -> Option<&'a AttributeValue>,
) -> Result<(), Error> {
    for index in schema.indexes {
        let attributes = index.pk.iter().map(|a| (a, "partition"));
        for (attribute, which) in attributes.chain(index.sk.iter().map(|a| (a, "sort"))) {
            let empty = match value(attribute.name) {
                Some(AttributeValue::S(s)) => s.is_empty(),
                Some(AttributeValue::B(b)) => b.as_ref().is_empty(),
                _ => false,
            };
            if empty {
                return Err(Error::invalid(
                    entity,
                    crate::ValidationReason::EmptyKeyValue,
                    format!(
                        "`{}` is empty but is a {which} key attribute of index {}; \
                         DynamoDB requires at least one byte (leave it unset to keep the \
                         item out of the index)",
                        attribute.name, index.name
                    ),
                ));
            }
        }
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

/// The table key of an item (its `PK`/`SK` string attributes), if it has them.
pub(crate) fn raw_key_of(schema: &crate::TableSchema, item: &Item) -> Option<RawKey> {
    let pk = item.get(schema.pk.name)?.as_s().ok()?.clone();
    let sk = match schema.sk {
        Some(attr) => Some(item.get(attr.name)?.as_s().ok()?.clone()),
        None => None,
    };
    Some(RawKey { pk, sk })
}

/// Renders an item's key attributes as `PK=..., SK=...` for error messages.
pub(crate) fn describe_item_key(schema: &crate::TableSchema, item: &Item) -> Option<String> {
    let pk = item.get(schema.pk.name)?.as_s().ok()?;
    let mut out = format!("{}={}", schema.pk.name, pk);
    if let Some(attr) = schema.sk
        && let Some(Ok(sk)) = item.get(attr.name).map(|v| v.as_s())
    {
        out.push_str(&format!(", {}={}", attr.name, sk));
    }
    Some(out)
}
