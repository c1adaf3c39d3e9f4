//! The table key of an item as the table's schema names it: read from an item, written
//! as a `Key` parameter, described in messages; and the attributes of index keys checked
//! before an item is written.

use super::TableSchema;
use crate::key::RawKey;
use crate::{Error, Item};
use aws_sdk_dynamodb::types::AttributeValue;

impl RawKey {
    /// The key as the attribute map DynamoDB expects in `Key` parameters, under the
    /// key attributes of `schema`.
    pub(crate) fn to_item(&self, schema: &TableSchema) -> Item {
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

    /// The item of the crate's own kind `kind` under this key (its key and entity-type
    /// attributes) that names the item under `owner` in the attributes `owner_pk` and
    /// `owner_sk`: a chunk of an item's field, a sentinel of its unique value.
    pub(crate) fn owned_item(
        &self,
        schema: &TableSchema,
        kind: &'static str,
        (owner_pk, owner_sk): (&'static str, &'static str),
        owner: &RawKey,
    ) -> Item {
        let mut item = self.to_item(schema);
        let text = |v: &str| AttributeValue::S(v.to_owned());
        item.insert(schema.entity_type.to_owned(), text(kind));
        item.insert(owner_pk.to_owned(), text(&owner.pk));
        if let Some(sk) = &owner.sk {
            item.insert(owner_sk.to_owned(), text(sk));
        }
        item
    }
}

/// Refuses an empty string or binary value in an attribute that is a key attribute of one
/// of the table's secondary indexes: DynamoDB rejects the whole request ("a value specified
/// for a secondary index key is not supported"), and in a batch write the other items of
/// its request with it. Index keys rendered from templates are checked as they are
/// rendered; this covers the attributes of multi-attribute index keys, which are the
/// entity's own fields. `value` looks an attribute up in what is about to be written.
pub(crate) fn check_index_attributes<'a>(
    entity: &'static str,
    schema: &TableSchema,
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

/// The table key of an item (its `PK`/`SK` string attributes), if it has them.
pub(crate) fn raw_key_of(schema: &TableSchema, item: &Item) -> Option<RawKey> {
    let pk = item.get(schema.pk.name)?.as_s().ok()?.clone();
    let sk = match schema.sk {
        Some(attr) => Some(item.get(attr.name)?.as_s().ok()?.clone()),
        None => None,
    };
    Some(RawKey { pk, sk })
}

/// Renders an item's key attributes as `PK=..., SK=...` for error messages.
pub(crate) fn describe_item_key(schema: &TableSchema, item: &Item) -> Option<String> {
    let pk = item.get(schema.pk.name)?.as_s().ok()?;
    let mut out = format!("{}={}", schema.pk.name, pk);
    if let Some(attr) = schema.sk
        && let Some(Ok(sk)) = item.get(attr.name).map(|v| v.as_s())
    {
        out.push_str(&format!(", {}={}", attr.name, sk));
    }
    Some(out)
}
