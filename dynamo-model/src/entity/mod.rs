//! The `Entity` trait: one Rust type ↔ one kind of item in a single table.

use crate::error::{DecodeError, DecodeErrorKind};
use crate::{Error, Item, Table};

/// A Rust type stored as items of a single table. Implemented by `#[derive(Entity)]`.
///
/// Every item written for an entity carries the table's entity-type attribute with
/// [`Entity::ENTITY_TYPE`]; decoding checks it, so reading an item of another entity type
/// is a [`DecodeErrorKind::WrongEntityType`] error, never garbage.
///
/// Implement it with the derive, not by hand: the derive also registers the entity's key
/// templates with the table (see [`crate::registry`]), which batch writes rely on to
/// never replace or remove an item of another entity type. A hand-written
/// implementation is unknown there: its own batch writes are refused, and other entity
/// types' batch writes cannot see its keys. Its hidden supertrait is the derive's
/// contract with the runtime, which may change in any release.
pub trait Entity: EntityInternals + Send + Sync + 'static {
    /// The table the entity lives in.
    type Table: Table;

    /// The value of the entity-type attribute on this entity's items.
    const ENTITY_TYPE: &'static str;

    /// The attributes of the entity's stored fields (what a projection of it reads).
    const ATTRIBUTES: &'static [&'static str];

    /// The attribute of the `#[dynamo(version)]` field, if the entity has one: puts,
    /// updates and deletes then check it and puts and updates increment it.
    const VERSION: Option<&'static str> = None;

    /// Whether items without the entity-type attribute are this entity's when their keys
    /// match its key templates (`#[dynamo(identify = "keys")]` on the entity or its
    /// table, for tables written by other programs). Set by `#[derive(Entity)]`.
    #[doc(hidden)]
    const __IDENTIFY_BY_KEYS: bool = <Self::Table as Table>::SCHEMA.identify_by_keys;

    /// Whether the crate's writes add the entity-type attribute to this entity's items
    /// (`write_type = false` on the entity or its table turns it off). Set by
    /// `#[derive(Entity)]`.
    #[doc(hidden)]
    const __WRITES_ENTITY_TYPE: bool = <Self::Table as Table>::SCHEMA.writes_entity_type;

    /// Whether single-item puts and updates of this entity store the write token
    /// (`write_token = false` on the entity or its table turns it off). Set by
    /// `#[derive(Entity)]`.
    #[doc(hidden)]
    const __WRITES_TOKEN: bool = <Self::Table as Table>::SCHEMA.writes_token;

    /// The value of the `#[dynamo(version)]` field (0: never written).
    fn version(&self) -> u64 {
        0
    }

    /// This entity's primary key.
    fn primary_key(&self) -> Key<Self> {
        let has_sk = <Self::Table as Table>::SCHEMA.sk.is_some();
        Key::__build(has_sk, |pk, sk| self.__render_primary_key(pk, sk))
    }

    /// Encodes the entity into a complete item: key attributes, index attributes (only
    /// those whose template fields are all present), the entity-type attribute and every
    /// field.
    fn to_item(&self) -> Result<Item, Error>;

    /// Decodes an item, checking its entity type first.
    ///
    /// The fields the key templates are built from are checked against the item's key
    /// attributes: the primary key (and every index key attribute the item carries) must
    /// be exactly what the decoded fields render, otherwise the item is refused with
    /// [`DecodeErrorKind::KeyMismatch`]. An item stored under one key whose plain
    /// attributes claim another (a forged or corrupted item) never decodes, so its
    /// [`primary_key`](Entity::primary_key) always names the item it was read from.
    fn from_item(item: Item) -> Result<Self, DecodeError>;
}

/// What `#[derive(Entity)]` generates for the runtime besides [`Entity`] itself: key
/// rendering into caller buffers and the index keys an update must recompute.
///
/// The times a write sets ([`auto`](dynamo_model::auto)): `updated` at `at`, and an unset
/// `created` too when the write may be the item's first (`first`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stamp {
    pub(crate) at: std::time::SystemTime,
    pub(crate) first: bool,
}

impl Stamp {
    /// Now, for a write that may be the item's first.
    pub(crate) fn now() -> Self {
        Stamp {
            at: std::time::SystemTime::now(),
            first: true,
        }
    }
}

/// The item a write of `value` stores: its rules checked (`validate`), its generated
/// ids set, encoded, and its times set by `stamp` (`None`: left as the value holds
/// them). Every write of a whole value (put, batch put, transaction put, history write,
/// migration write) takes its item here.
///
/// Its encrypted fields are sealed last with the current key of `keys` (see
/// [`crate::encrypt`]), bound to the item's key: the item returned is what is stored.
pub(crate) fn write_item<E: Entity>(
    value: &E,
    stamp: Option<Stamp>,
    keys: Option<&dyn crate::encrypt::KeyProvider>,
) -> Result<Item, Error> {
    value.__validate().map_err(redact::<E>)?;
    if let Some(field) = value.__unset_id() {
        return Err(crate::auto::unset_id(E::ENTITY_TYPE, field));
    }
    let mut item = value.to_item()?;
    if let Some(Stamp { at, first }) = stamp {
        // An unset creation time on what may be the item's first write is the time of
        // this write (a put keeps one an item already holds).
        let creating = first && value.__created_unset();
        if creating || E::__STAMPS.updated.is_some() {
            item.extend(E::__stamp_values(at, creating)?);
        }
    }
    seal::<E>(keys, &mut item)?;
    Ok(item)
}

/// Seals the encrypted fields `item` holds (see [`crate::encrypt`]).
pub(crate) fn seal<E: Entity>(
    keys: Option<&dyn crate::encrypt::KeyProvider>,
    item: &mut Item,
) -> Result<(), Error> {
    if E::__ENCRYPTED.is_empty() {
        return Ok(());
    }
    crate::encrypt::seal_item(keys, fields::<E>(), item)
}

/// The encrypted fields of `E` (see [`crate::encrypt`]).
pub(crate) fn fields<E: Entity>() -> crate::encrypt::Fields<'static> {
    crate::encrypt::Fields {
        schema: &<E::Table as Table>::SCHEMA,
        entity: E::ENTITY_TYPE,
        attributes: E::__ENCRYPTED,
    }
}

/// A broken rule of an encrypted field, without the value (which would otherwise leave
/// the process in plain text through [`RuleViolation::value`](crate::error::RuleViolation::value)).
pub(crate) fn redact<E: Entity>(error: Error) -> Error {
    match error {
        Error::Rule(violation)
            if violation
                .field_name()
                .is_some_and(|f| E::__ENCRYPTED.contains(&f)) =>
        {
            Error::Rule(violation.redacted())
        }
        other => other,
    }
}

/// A hidden supertrait of [`Entity`], so the derive's contract with the runtime is not
/// part of the visible trait and can change; implementing it (and so `Entity`) by hand is
/// not supported.
#[doc(hidden)]
pub trait EntityInternals: Sized {
    /// Where a `#[dynamo(history)]` entity's sort key holds the revision number
    /// (`None`: not versioned). Keys the entity renders name its latest copy.
    const __HISTORY: Option<&'static crate::schema::history::HistoryLayout> = None;

    /// The older attribute names of renamed fields (`#[dynamo(alias = "..")]`), by the
    /// field's attribute: an update that sets or clears the field removes them, so the
    /// value read back is the one written.
    const __ALIASES: &'static [(&'static str, &'static [&'static str])] = &[];

    /// The key attributes of the indexes whose keys are rendered from templates, in the
    /// order [`EntityInternals::__render_index_key`] numbers them.
    const __INDEX_KEYS: &'static [IndexKeyAttributes] = &[];

    /// Appends the rendered primary key to `pk` and `sk` (what [`Entity::primary_key`]
    /// holds), without allocating when the buffers are large enough.
    fn __render_primary_key(
        &self,
        pk: &mut String,
        sk: &mut String,
    ) -> Result<(), crate::key::KeyError>;

    /// Appends the rendered key of template index `index` (a position in
    /// [`EntityInternals::__INDEX_KEYS`]) to `pk` and `sk`; `Ok(false)` when a template
    /// field is absent, so the item is not in that (sparse) index.
    fn __render_index_key(
        &self,
        index: usize,
        pk: &mut String,
        sk: &mut String,
    ) -> Result<bool, crate::key::KeyError> {
        let _ = (index, pk, sk);
        Ok(false)
    }

    /// The entity's `#[dynamo(chunked)]` fields (see [`crate::chunk`]), in the order
    /// [`EntityInternals::__chunk_slot`] numbers them.
    const __CHUNKED: &'static [crate::chunk::ChunkedField] = &[];

    /// Chunked field `i`.
    fn __chunk_slot(&self, i: usize) -> Option<&dyn crate::chunk::ChunkSlot> {
        let _ = i;
        None
    }

    /// Chunked field `i`, to load it.
    fn __chunk_slot_mut(&mut self, i: usize) -> Option<&mut dyn crate::chunk::ChunkSlot> {
        let _ = i;
        None
    }

    /// The attributes of the encrypted fields (`#[dynamo(encrypt)]`, see
    /// [`crate::encrypt`]): sealed after encoding, opened before decoding.
    const __ENCRYPTED: &'static [&'static str] = &[];

    /// The entity's unique constraints (`#[dynamo(unique)]`, see
    /// [`unique`](dynamo_model::unique)): its puts, updates and deletes keep their
    /// sentinel items.
    const __UNIQUE: &'static [crate::unique::Constraint] = &[];

    /// The attributes of the fields with rules (`#[dynamo(validate(..))]`).
    const __RULED: &'static [&'static str] = &[];

    /// Checks the rules of the field stored as `attribute` on `value` (the field's value;
    /// another attribute passes), before a write that sets it.
    fn __validate_attribute(attribute: &str, value: &dyn std::any::Any) -> Result<(), Error> {
        let _ = (attribute, value);
        Ok(())
    }

    /// Checks every rule of the value (its fields' and the entity's own), before a write
    /// of the whole value.
    fn __validate(&self) -> Result<(), Error> {
        Ok(())
    }

    /// The attributes of the `#[dynamo(created)]` and `#[dynamo(updated)]` fields.
    const __STAMPS: crate::auto::Stamps = crate::auto::Stamps {
        created: None,
        updated: None,
    };

    /// Sets the times (`created` only when `creating`) to `at`, and, when `creating`,
    /// fills the unset generated ids.
    fn __stamp(&mut self, at: std::time::SystemTime, creating: bool) {
        let _ = (at, creating);
    }

    /// The attributes of the times at `at`, encoded as the fields are: `updated`, and
    /// `created` too when `creating`.
    fn __stamp_values(at: std::time::SystemTime, creating: bool) -> Result<Item, Error> {
        let _ = (at, creating);
        Ok(Item::new())
    }

    /// Whether the `#[dynamo(created)]` field holds no time yet (`false` without one).
    fn __created_unset(&self) -> bool {
        false
    }

    /// The first generated field (`#[dynamo(generate = "..")]`) that is unset.
    fn __unset_id(&self) -> Option<&'static str> {
        None
    }

    /// Sets the `#[dynamo(version)]` field (entities without one ignore it): what a
    /// history write returns carries the revision it wrote.
    fn __set_version(&mut self, version: u64) {
        let _ = version;
    }

    /// The attributes of the key fields the entity stores, decoded from the key
    /// attributes `key` and encoded as [`Entity::to_item`] stores them: what an update
    /// that creates its item (`upsert`) writes besides its own actions.
    fn __key_fields(
        key: &Item,
    ) -> Result<Vec<(&'static str, aws_sdk_dynamodb::types::AttributeValue)>, Error>
    where
        Self: Entity,
    {
        let owner = owner::Owner::of::<Self>();
        let mut out = Vec::with_capacity(Self::__STORED_KEY_FIELDS.len());
        for field in Self::__STORED_KEY_FIELDS {
            __private::put_stored_key_field(owner, &mut out, key, field)?;
        }
        Ok(out)
    }

    /// The key fields the entity also stores in attributes of their own, each read back
    /// from the key by [`EntityInternals::__key_fields`].
    const __STORED_KEY_FIELDS: &'static [__private::StoredKeyField] = &[];

    /// The index templates an update must keep current (see
    /// [`index_updates`](dynamo_model::key::template::index_updates)).
    const __INDEX_TEMPLATES: &'static [crate::key::template::IndexTemplate] = &[];

    /// The index key attributes an update must also change so no index key goes stale:
    /// for every index whose template fields the update touches, the recomputed values
    /// (`Some`) or their removal (`None`, the item leaves a sparse index). Errors when the
    /// update touches some but not all of an index's template fields.
    fn __index_updates(
        key: &crate::RawKey,
        changes: &IndexChanges<'_>,
    ) -> Result<IndexUpdates, Error>
    where
        Self: Entity,
    {
        crate::key::template::index_updates(
            Self::ENTITY_TYPE,
            key,
            changes,
            Self::__INDEX_TEMPLATES,
        )
    }
}

pub use crate::key::template::{IndexChanges, IndexKeyAttributes, IndexUpdates, Touch};

/// Reading the item a failed write found: needs [`Entity`], so it lives here, above
/// `error` in the layering.
impl Error {
    /// Decodes the current item carried by a [`Error::ConditionFailed`],
    /// [`Error::VersionConflict`], [`Error::ReturnValuesLost`] or
    /// [`Error::OutcomeUnknown`], if there is one. An entity with encrypted fields fails
    /// with [`EncryptionError::NoKeys`](crate::error::EncryptionError::NoKeys) here:
    /// decode the item with [`Db::decode`](crate::Db::decode).
    ///
    /// Returns `None` for other variants or when no item exists under the key.
    pub fn current<E: crate::Entity>(&self) -> Option<Result<E, Error>> {
        match self {
            Error::ConditionFailed {
                current: Some(item),
                ..
            }
            | Error::VersionConflict {
                current: Some(item),
                ..
            }
            | Error::ReturnValuesLost {
                current: Some(item),
                ..
            }
            | Error::OutcomeUnknown {
                current: Some(item),
                ..
            } => Some(decode_keyless::<E>(item.as_ref().clone())),
            _ => None,
        }
    }
}

/// `item` decoded where no keys are at hand: an encrypted field it holds is
/// [`EncryptionError::NoKeys`](crate::error::EncryptionError::NoKeys), never a value
/// misread as plain.
pub(crate) fn decode_keyless<E: Entity>(mut item: Item) -> Result<E, Error> {
    crate::encrypt::open_item(None, fields::<E>(), &mut item)?;
    Ok(E::from_item(item)?)
}

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
#[doc(hidden)]
pub mod compressed;
mod item_keys;
mod key;
mod owner;
mod registration;

pub use key::Key;

#[cfg(test)]
mod tests;
