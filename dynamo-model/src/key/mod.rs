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
pub mod computed;
pub use crate::schema::delimiter;
mod encode;
pub mod format;
pub mod sharded;
pub mod sort;
#[doc(hidden)]
pub mod template;
#[cfg(test)]
pub(crate) mod testing;

pub use delimiter::Delimiter;
pub use encode::{
    DELIMITER, KeyArg, KeyError, KeyPart, OptionalKeyPart, escape_str, split_components,
};

use crate::{Entity, Error, Item, Table};
use aws_sdk_dynamodb::types::AttributeValue;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

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

/// An entity identified by its keys reads an item without the entity-type attribute as
/// its own when its templates render the key: a key another such entity renders too is
/// refused, so neither can read, overwrite or delete the other's untyped items.
#[cold]
fn unambiguous<E: Entity>(key: RawKey) -> Result<RawKey, KeyError> {
    let owners = crate::registry::identified_by_key::<E::Table>(&key);
    match owners.iter().find(|o| **o != E::ENTITY_TYPE) {
        Some(other) => Err(KeyError::AmbiguousEntity {
            entity: E::ENTITY_TYPE,
            other,
            key: match &key.sk {
                Some(sk) => format!("{} / {sk}", key.pk),
                None => key.pk.clone(),
            },
        }),
        None => Ok(key),
    }
}

/// The primary key of one item of entity `E`.
///
/// Built by the constructor `#[derive(Entity)]` generates (`Order::key(...)`) or by
/// [`Entity::primary_key`]. A `Key<Order>` cannot be passed where a `Key<User>` is
/// expected. A value that cannot be encoded (see [`KeyError`]) makes the operation using
/// the key fail with [`Error::Validation`] before anything is sent.
pub struct Key<E> {
    repr: Result<RawKey, KeyError>,
    _entity: PhantomData<fn() -> E>,
}

impl<E: Entity> Key<E> {
    #[doc(hidden)]
    pub fn __build(
        has_sk: bool,
        render: impl FnOnce(&mut String, &mut String) -> Result<(), KeyError>,
    ) -> Self {
        // Typical keys fit without reallocating.
        let mut pk = String::with_capacity(32);
        let mut sk = String::with_capacity(if has_sk { 48 } else { 0 });
        let mut repr = render(&mut pk, &mut sk).map(|()| RawKey {
            pk,
            sk: has_sk.then(|| match E::__HISTORY {
                // A versioned entity's key names its latest copy (slot 0).
                Some(layout) => layout.latest(&sk),
                None => sk,
            }),
        });
        if E::__IDENTIFY_BY_KEYS {
            repr = repr.and_then(unambiguous::<E>);
        }
        Key {
            repr,
            _entity: PhantomData,
        }
    }

    /// Builds a key from already rendered values (e.g. read back from an index).
    pub fn from_raw(raw: RawKey) -> Self {
        Key {
            repr: Ok(raw),
            _entity: PhantomData,
        }
    }

    /// The rendered key values, or the validation error that makes the key unusable
    /// (an unencodable part, an empty or over-long key value).
    pub fn raw(&self) -> Result<&RawKey, Error> {
        let raw = self
            .repr
            .as_ref()
            .map_err(|e| Error::key(E::ENTITY_TYPE, e.clone()))?;
        check_key_value(
            E::ENTITY_TYPE,
            "partition",
            &raw.pk,
            MAX_PARTITION_KEY_BYTES,
        )?;
        if let Some(sk) = &raw.sk {
            check_key_value(E::ENTITY_TYPE, "sort", sk, MAX_SORT_KEY_BYTES)?;
            // A key of a versioned entity names its latest copy; a revision is read
            // through the history, never as the entity (`Key::from_raw` of another slot).
            if let Some(layout) = E::__HISTORY
                && !matches!(layout.parse(sk), Some((0, _)))
            {
                return Err(Error::invalid(
                    E::ENTITY_TYPE,
                    crate::ValidationReason::WrongKeySpace,
                    format!(
                        "the sort key {sk:?} is not the latest copy of a #[dynamo(versioned)] item; read revisions with db.versions().revision(key, k) or .history(key)"
                    ),
                ));
            }
        }
        Ok(raw)
    }

    /// The rendered key values, validated as by [`Key::raw`], taken out of the key.
    pub fn into_raw(self) -> Result<RawKey, Error> {
        self.raw()?;
        self.repr.map_err(|e| Error::key(E::ENTITY_TYPE, e))
    }

    /// The key as the attribute map DynamoDB expects in `Key` parameters.
    pub fn to_item(&self) -> Result<Item, Error> {
        Ok(self.raw()?.to_item(&<E::Table as Table>::SCHEMA))
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
    if value.len() > max {
        return Err(Error::invalid(
            entity,
            crate::ValidationReason::KeyTooLong,
            format!(
                "the {which} key value is {} bytes; DynamoDB allows at most {max}",
                value.len()
            ),
        ));
    }
    Ok(())
}

impl<E: Entity> fmt::Display for Key<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let schema = &<E::Table as Table>::SCHEMA;
        match &self.repr {
            Ok(raw) => {
                write!(f, "{}={}", schema.pk.name, raw.pk)?;
                if let (Some(attr), Some(sk)) = (schema.sk, &raw.sk) {
                    write!(f, ", {}={}", attr.name, sk)?;
                }
                Ok(())
            }
            Err(e) => write!(f, "<unencodable key: {e}>"),
        }
    }
}

impl<E> fmt::Debug for Key<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Key").field("repr", &self.repr).finish()
    }
}

impl<E> Clone for Key<E> {
    fn clone(&self) -> Self {
        Key {
            repr: self.repr.clone(),
            _entity: PhantomData,
        }
    }
}

impl<E> PartialEq for Key<E> {
    fn eq(&self, other: &Self) -> bool {
        self.repr == other.repr
    }
}

impl<E> Eq for Key<E> {}

impl<E> Hash for Key<E> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match &self.repr {
            Ok(raw) => raw.hash(state),
            Err(e) => e.to_string().hash(state),
        }
    }
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
