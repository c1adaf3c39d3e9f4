//! [`Key`]: the primary key of one item of an entity, typed by the entity.

use crate::keytext::{
    KeyError, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES, RawKey, check_key_value,
};
use crate::{Entity, Error, Item, Table};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

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
