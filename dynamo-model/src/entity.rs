//! The `Entity` trait: one Rust type ↔ one kind of item in a single table.

use crate::error::{DecodeError, DecodeErrorKind};
use crate::{Error, Item, Key, Table};

/// A Rust type stored as items of a single table. Implemented by `#[derive(Entity)]`.
///
/// Every item written for an entity carries the table's entity-type attribute with
/// [`Entity::ENTITY_TYPE`]; decoding checks it, so reading an item of another entity type
/// is a [`DecodeErrorKind::WrongEntityType`] error, never garbage.
pub trait Entity: Sized + Send + Sync + 'static {
    /// The table the entity lives in.
    type Table: Table;

    /// The value of the entity-type attribute on this entity's items.
    const ENTITY_TYPE: &'static str;

    /// The attributes of the entity's stored fields (what a projection of it reads).
    const ATTRIBUTES: &'static [&'static str];

    /// The attribute of the `#[dynamo(version)]` field, if the entity has one: puts,
    /// updates and deletes then check it and puts and updates increment it.
    const VERSION: Option<&'static str> = None;

    /// The value of the `#[dynamo(version)]` field (0: never written).
    fn version(&self) -> u64 {
        0
    }

    /// This entity's primary key.
    fn primary_key(&self) -> Key<Self>;

    /// Encodes the entity into a complete item: key attributes, index attributes (only
    /// those whose template fields are all present), the entity-type attribute and every
    /// field.
    fn to_item(&self) -> Result<Item, Error>;

    /// Decodes an item, checking its entity type first.
    fn from_item(item: Item) -> Result<Self, DecodeError>;

    /// The index key attributes an update must also change so no index key goes stale:
    /// for every index whose template fields the update touches, the recomputed values
    /// (`Some`) or their removal (`None`, the item leaves a sparse index). Errors when the
    /// update touches some but not all of an index's template fields.
    #[doc(hidden)]
    fn __index_updates(
        key: &crate::RawKey,
        changes: &IndexChanges<'_>,
    ) -> Result<IndexUpdates, Error> {
        let _ = (key, changes);
        Ok(Vec::new())
    }
}

/// Index key attributes an update must also set (`Some`) or remove (`None`).
#[doc(hidden)]
pub type IndexUpdates = Vec<(
    &'static str,
    Option<aws_sdk_dynamodb::types::AttributeValue>,
)>;

/// What an update does to one attribute (for index-key recomputation).
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub enum Touch<'a> {
    /// Not changed by the update.
    Untouched,
    /// Set to this value.
    Set(&'a aws_sdk_dynamodb::types::AttributeValue),
    /// Removed.
    Removed,
    /// Incremented with `ADD`: its new value is unknown before the request.
    Added,
}

/// The changes of one update, by attribute name.
#[doc(hidden)]
pub struct IndexChanges<'a> {
    pub(crate) lookup: &'a dyn Fn(&str) -> Touch<'a>,
}

impl<'a> IndexChanges<'a> {
    /// What the update does to `attribute`.
    pub fn touch(&self, attribute: &str) -> Touch<'a> {
        (self.lookup)(attribute)
    }
}

#[doc(hidden)]
pub mod __private {
    //! Support for generated code. Not a public API.
    use super::*;
    use crate::codec::AttrValue;
    use aws_sdk_dynamodb::types::AttributeValue;

    pub use crate::key::{KeyArg, KeyPart, OptionalKeyPart};
    pub use aws_sdk_dynamodb::types::AttributeValue as Av;
    pub use std::collections::HashMap;

    /// The refusal of a field value that cannot be stored: a number out of DynamoDB's
    /// range is [`crate::ValidationReason::InvalidNumber`], anything else
    /// [`crate::ValidationReason::InvalidValue`].
    #[cold]
    pub fn field_error<E: Entity>(name: &str, e: crate::codec::EncodeError) -> Error {
        let reason = if e.is_number() {
            crate::ValidationReason::InvalidNumber
        } else {
            crate::ValidationReason::InvalidValue
        };
        Error::invalid(
            E::ENTITY_TYPE,
            reason,
            format!("field `{name}` cannot be stored: {e}"),
        )
        .caused_by(e)
    }

    /// Inserts a field's attribute unless it is absent (`None`, empty set).
    #[inline]
    pub fn put_field<E: Entity, T: AttrValue>(
        item: &mut Item,
        name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        match value.to_attr_opt() {
            Ok(Some(av)) => {
                item.insert(name.to_owned(), av);
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(e) => Err(field_error::<E>(name, e)),
        }
    }

    /// Inserts a `#[dynamo(serde)]` field's attribute, encoded by `serde_dynamo`.
    pub fn put_serde_field<E: Entity, T: serde::Serialize>(
        item: &mut Item,
        name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        match serde_dynamo::to_attribute_value::<_, AttributeValue>(value) {
            Ok(av) => {
                item.insert(name.to_owned(), av);
                Ok(())
            }
            Err(e) => Err(field_error::<E>(
                name,
                crate::codec::EncodeError::new(e.to_string()),
            )),
        }
    }

    /// Decodes a `#[dynamo(ttl)]` field from its stored epoch seconds.
    pub fn ttl_field<E: Entity, T: crate::codec::TtlValue>(
        item: &Item,
        name: &'static str,
        stored: T::Stored,
    ) -> Result<T, DecodeError> {
        T::from_stored(stored).map_err(|kind| decode_error::<E>(item, Some(name), kind))
    }

    /// Takes a field's attribute out of the item and decodes it; `default` supplies the
    /// value of a missing attribute (`#[serde(default)]`).
    #[inline]
    pub fn take_field<E: Entity, T: AttrValue>(
        item: &mut Item,
        name: &'static str,
        default: Option<fn() -> T>,
    ) -> Result<T, DecodeError> {
        let decoded = match (item.remove(name), default) {
            (Some(av), _) => T::from_attr(av),
            (None, Some(default)) => Ok(default()),
            (None, None) => T::from_missing(),
        };
        decoded.map_err(|kind| decode_error::<E>(item, Some(name), kind))
    }

    /// Takes a `#[dynamo(serde)]` field's attribute out of the item and decodes it with
    /// `serde_dynamo` (a missing attribute decodes as serde's `null`, so `Option` works).
    pub fn take_serde_field<E: Entity, T: serde::de::DeserializeOwned>(
        item: &mut Item,
        name: &'static str,
        default: Option<fn() -> T>,
    ) -> Result<T, DecodeError> {
        let av = match (item.remove(name), default) {
            (Some(av), _) => av,
            (None, Some(default)) => return Ok(default()),
            (None, None) => AttributeValue::Null(true),
        };
        serde_dynamo::from_attribute_value(av).map_err(|e| {
            let kind = if item.contains_key(name) {
                DecodeErrorKind::Invalid(e.to_string())
            } else {
                DecodeErrorKind::Invalid(format!("{e} (attribute missing or unreadable)"))
            };
            decode_error::<E>(item, Some(name), kind)
        })
    }

    /// Checks the entity-type attribute.
    #[inline]
    pub fn check_entity_type<E: Entity>(item: &Item) -> Result<(), DecodeError> {
        let attr = <E::Table as Table>::SCHEMA.entity_type;
        match item.get(attr) {
            Some(AttributeValue::S(found)) if found == E::ENTITY_TYPE => Ok(()),
            other => {
                let found = other.map(|v| match v {
                    AttributeValue::S(s) => s.clone(),
                    v => format!("<{} attribute>", crate::codec::type_name(v)),
                });
                Err(decode_error::<E>(
                    item,
                    None,
                    DecodeErrorKind::WrongEntityType {
                        expected: E::ENTITY_TYPE,
                        found,
                    },
                ))
            }
        }
    }

    /// Inserts the key, entity type and index attributes common to every item.
    #[inline]
    pub fn put_key<E: Entity>(item: &mut Item, key: Key<E>) -> Result<(), Error> {
        let schema = &<E::Table as Table>::SCHEMA;
        // The key strings were rendered for this item: moved in, not copied.
        let raw = key.into_raw()?;
        item.insert(schema.pk.name.to_owned(), AttributeValue::S(raw.pk));
        if let (Some(attr), Some(sk)) = (schema.sk, raw.sk) {
            item.insert(attr.name.to_owned(), AttributeValue::S(sk));
        }
        item.insert(
            schema.entity_type.to_owned(),
            AttributeValue::S(E::ENTITY_TYPE.to_owned()),
        );
        Ok(())
    }

    /// Renders an index's key attributes from its templates. They are written only when
    /// every field of every template is present (sparse index): an item is either fully in
    /// the index or not in it at all.
    #[inline]
    pub fn put_index<E: Entity>(
        item: &mut Item,
        pk_attribute: Option<&'static str>,
        sk_attribute: Option<&'static str>,
        render: impl FnOnce(&mut String, &mut String) -> Result<bool, crate::key::KeyError>,
    ) -> Result<(), Error> {
        let (mut pk, mut sk) = (String::new(), String::new());
        match render(&mut pk, &mut sk) {
            Ok(true) => {
                if let Some(attribute) = pk_attribute {
                    item.insert(attribute.to_owned(), index_value::<E>(attribute, pk, true)?);
                }
                if let Some(attribute) = sk_attribute {
                    item.insert(
                        attribute.to_owned(),
                        index_value::<E>(attribute, sk, false)?,
                    );
                }
                Ok(())
            }
            Ok(false) => Ok(()),
            Err(e) => Err(Error::key(E::ENTITY_TYPE, e)),
        }
    }

    /// A rendered index key value, checked against DynamoDB's key limits.
    pub fn index_value<E: Entity>(
        attribute: &str,
        value: String,
        partition: bool,
    ) -> Result<AttributeValue, Error> {
        crate::key::check_index_key(E::ENTITY_TYPE, attribute, &value, partition)?;
        Ok(AttributeValue::S(value))
    }

    /// The value an update gives a template field, decoded into the field's type.
    pub fn decode_touch<E: Entity, T: AttrValue>(
        attribute: &'static str,
        touch: Touch<'_>,
    ) -> Result<T, Error> {
        let decoded = match touch {
            Touch::Set(av) => T::from_attr(av.clone()),
            Touch::Removed => T::from_missing(),
            Touch::Untouched | Touch::Added => Err(DecodeErrorKind::Missing),
        };
        decoded.map_err(|kind| {
            Error::invalid(
                E::ENTITY_TYPE,
                crate::ValidationReason::IncompleteIndexTemplate,
                format!("the update's value for `{attribute}` is unusable in an index key: {kind}"),
            )
            .caused_by(kind)
        })
    }

    /// One field's value read back from a rendered key: `segments` describe the template
    /// (`Some(literal)` or `None` for a field) and `field` is the field's ordinal among the
    /// template's fields. Encoded values never contain `#` and a field is always followed
    /// by the end or by a literal starting with `#`, so the split is exact.
    pub fn key_component<E: Entity, T: crate::KeyPart>(
        rendered: Option<&str>,
        segments: &[Option<&str>],
        field: usize,
    ) -> Result<T, Error> {
        let fail = |why: &str| {
            Error::invalid(
                E::ENTITY_TYPE,
                crate::ValidationReason::KeyEncoding,
                format!("cannot read a key field back from the key {rendered:?}: {why}"),
            )
        };
        let rendered = rendered.ok_or_else(|| fail("no sort key"))?;
        let mut rest = rendered;
        let mut ordinal = 0;
        for segment in segments {
            match segment {
                Some(literal) => {
                    rest = rest
                        .strip_prefix(literal)
                        .ok_or_else(|| fail("literal mismatch"))?;
                }
                None => {
                    let end = rest.find('#').unwrap_or(rest.len());
                    let (value, tail) = rest.split_at(end);
                    if ordinal == field {
                        return T::decode_key(value).map_err(|e| Error::key(E::ENTITY_TYPE, e));
                    }
                    ordinal += 1;
                    rest = tail;
                }
            }
        }
        Err(fail("field not in template"))
    }

    /// Turns a key-encoding failure into the entity's validation error.
    pub fn key_result<E: Entity, T>(result: Result<T, crate::key::KeyError>) -> Result<T, Error> {
        result.map_err(|e| Error::key(E::ENTITY_TYPE, e))
    }

    /// Refuses an update that would leave index `index` stale.
    pub fn stale_index<E: Entity>(index: &str, touched: &[(&str, Touch<'_>)]) -> Error {
        let changed: Vec<&str> = touched
            .iter()
            .filter(|(_, t)| !matches!(t, Touch::Untouched))
            .map(|(a, _)| *a)
            .collect();
        let missing: Vec<&str> = touched
            .iter()
            .filter(|(_, t)| matches!(t, Touch::Untouched))
            .map(|(a, _)| *a)
            .collect();
        let added: Vec<&str> = touched
            .iter()
            .filter(|(_, t)| matches!(t, Touch::Added))
            .map(|(a, _)| *a)
            .collect();
        let message = if !added.is_empty() {
            format!(
                "`{}` feeds the key of index `{index}`: its new value is computed by DynamoDB (add, subtract, append, set_if_absent, set operations), so the index key cannot be recomputed; set it instead, or put the whole entity",
                added.join("`, `")
            )
        } else {
            format!(
                "the update changes `{}`, which feed the key of index `{index}`, without `{}`: the index key would go stale; set those too (or put the whole entity)",
                changed.join("`, `"),
                missing.join("`, `")
            )
        };
        Error::invalid(
            E::ENTITY_TYPE,
            crate::ValidationReason::IncompleteIndexTemplate,
            message,
        )
    }

    /// A decode error with the item's key for context.
    pub fn decode_error<E: Entity>(
        item: &Item,
        attribute: Option<&str>,
        kind: DecodeErrorKind,
    ) -> DecodeError {
        DecodeError {
            entity: E::ENTITY_TYPE,
            key: crate::key::describe_item_key(&<E::Table as Table>::SCHEMA, item),
            attribute: attribute.map(str::to_owned),
            kind,
        }
    }
}
