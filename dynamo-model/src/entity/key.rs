//! [`Key`]: the primary key of one item of an entity, typed by the entity.

use crate::key::{KeyError, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES, RawKey, check_key_value};
use crate::{Entity, Error, Item, Table};
use std::any::TypeId;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

/// An entity identified by its keys reads an item without the entity-type attribute as
/// its own when its templates render the key: a key another such entity renders too is
/// refused, so neither can read, overwrite or delete the other's untyped items.
#[cold]
fn unambiguous(key: RawKey, entity: &'static str, table: TypeId) -> Result<RawKey, KeyError> {
    let owners = crate::registry::identified_by_key_in(table, &key);
    match owners.iter().find(|o| **o != entity) {
        Some(other) => Err(KeyError::AmbiguousEntity {
            entity,
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
        let rendered = render(&mut pk, &mut sk);
        let identify = if E::__IDENTIFY_BY_KEYS {
            Some((E::ENTITY_TYPE, TypeId::of::<E::Table>()))
        } else {
            None
        };
        let sk = if has_sk { Some(sk) } else { None };
        Key {
            repr: built(rendered, pk, sk, E::__HISTORY, identify),
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
        checked(&self.repr, E::ENTITY_TYPE, E::__HISTORY)
    }

    /// The rendered key values, validated as by [`Key::raw`], taken out of the key.
    pub fn into_raw(self) -> Result<RawKey, Error> {
        into_checked(self.repr, E::ENTITY_TYPE, E::__HISTORY)
    }

    /// The key as the attribute map DynamoDB expects in `Key` parameters.
    pub fn to_item(&self) -> Result<Item, Error> {
        Ok(self.raw()?.to_item(&<E::Table as Table>::SCHEMA))
    }
}

/// A rendered key: the sort key of a versioned entity names its latest copy (slot 0);
/// `identify`: the entity and table of an entity identified by its keys, whose key no
/// other such entity may render.
fn built(
    rendered: Result<(), KeyError>,
    pk: String,
    sk: Option<String>,
    history: Option<&'static crate::schema::history::HistoryLayout>,
    identify: Option<(&'static str, TypeId)>,
) -> Result<RawKey, KeyError> {
    rendered?;
    let sk = match (sk, history) {
        (Some(sk), Some(layout)) => Some(layout.latest(&sk)),
        (sk, _) => sk,
    };
    let key = RawKey { pk, sk };
    match identify {
        Some((entity, table)) => unambiguous(key, entity, table),
        None => Ok(key),
    }
}

/// [`Key::into_raw`] of entity type `entity`, whose sort keys follow `history`.
fn into_checked(
    repr: Result<RawKey, KeyError>,
    entity: &'static str,
    history: Option<&'static crate::schema::history::HistoryLayout>,
) -> Result<RawKey, Error> {
    checked(&repr, entity, history)?;
    repr.map_err(|e| Error::key(entity, e))
}

/// [`Key::raw`] of entity type `entity`, whose sort keys follow `history`.
fn checked<'k>(
    repr: &'k Result<RawKey, KeyError>,
    entity: &'static str,
    history: Option<&'static crate::schema::history::HistoryLayout>,
) -> Result<&'k RawKey, Error> {
    let raw = repr.as_ref().map_err(|e| Error::key(entity, e.clone()))?;
    check_key_value(entity, "partition", &raw.pk, MAX_PARTITION_KEY_BYTES)?;
    if let Some(sk) = &raw.sk {
        check_key_value(entity, "sort", sk, MAX_SORT_KEY_BYTES)?;
        // A key of a versioned entity names its latest copy; a revision is read
        // through the history, never as the entity (`Key::from_raw` of another slot).
        if let Some(layout) = history
            && !matches!(layout.parse(sk), Some((0, _)))
        {
            return Err(Error::invalid(
                entity,
                crate::ValidationReason::WrongKeySpace,
                format!(
                    "the sort key {} is not the latest copy of a #[dynamo(history)] item; read revisions with db.history().revision(key, k) or .revisions(key)",
                    crate::error::key_text(&format_args!("{sk:?}"))
                ),
            ));
        }
    }
    Ok(raw)
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
