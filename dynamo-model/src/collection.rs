//! What queries and scans return: one entity type, or a collection of entity types that
//! share a partition (`#[derive(Collection)]` on an enum).

use crate::error::DecodeError;
use crate::{Entity, Item, RawKey, Table};

/// The entity type a read of `T` reads, when `T` is one entity (not a collection).
pub(crate) fn single_entity<T: Target>() -> Option<&'static str> {
    match T::ENTITY_TYPES {
        [only] if !T::IS_COLLECTION => Some(only),
        _ => None,
    }
}

/// The result type of a query or scan: an [`Entity`], or a [`Collection`] of them.
pub trait Target: Sized + Send + 'static {
    /// The table the items live in.
    type Table: Table;

    /// Name used in errors and to bind cursors.
    const NAME: &'static str;

    /// The entity types the target is made of.
    const ENTITY_TYPES: &'static [&'static str];

    /// Whether the target is a collection (several entity types) rather than one entity.
    const IS_COLLECTION: bool;

    /// Whether the target is made of keys only (readable from a `KEYS_ONLY` index).
    const IS_KEYS: bool = false;

    /// Whether a member entity is identified by its keys (`#[dynamo(identify = "keys")]`):
    /// items without the entity-type attribute may then be the target's, so a query or
    /// scan cannot filter them out on the server and decoding tells them apart by their
    /// keys.
    #[doc(hidden)]
    const IDENTIFIED_BY_KEYS: bool = false;

    /// Whether the target reads the revisions of `#[dynamo(history)]` entities (their
    /// history); every other target skips them and sees the latest copies only.
    #[doc(hidden)]
    const READS_REVISIONS: bool = false;

    /// The history layout of a `#[dynamo(history)]` entity target (its base-table
    /// queries read the latest copies).
    #[doc(hidden)]
    const HISTORY: Option<&'static crate::schema::history::HistoryLayout> = None;

    /// The stored attributes decoding reads, per member entity (an entity is its own one
    /// member); a query on a global index with an `INCLUDE` projection is refused when the
    /// index does not project them.
    const MEMBER_ATTRIBUTES: &'static [&'static [&'static str]] = &[];

    /// The encrypted attributes of each member entity, in the order of
    /// [`Target::ENTITY_TYPES`] (see [`crate::encrypt`]).
    #[doc(hidden)]
    const ENCRYPTED_MEMBERS: &'static [&'static [&'static str]] = &[];

    /// Decodes an item, or reports that its entity type is not part of the target.
    fn decode(item: Item) -> Result<Decoded<Self>, DecodeError>;
}

/// Decrypts the encrypted attributes of `item` with `keys`, as the member entity of `T`
/// it is (by its entity type, else by its keys) stores them (see [`crate::encrypt`]).
/// Every read decrypts here before decoding; an item of no member is left as it is.
pub(crate) fn open<T: Target>(
    keys: Option<&dyn crate::encrypt::KeyProvider>,
    item: &mut Item,
) -> Result<(), DecodeError> {
    if T::ENCRYPTED_MEMBERS.iter().all(|m| m.is_empty()) {
        return Ok(());
    }
    let schema = &<T::Table as Table>::SCHEMA;
    let member = match __private::entity_type_of_table::<T::Table>(item) {
        Some(found) => T::ENTITY_TYPES.iter().position(|t| *t == found),
        None if T::ENTITY_TYPES.len() == 1 => Some(0),
        None => crate::schema::raw_key_of(schema, item).and_then(|key| {
            let owners = crate::registry::entity_types_of_key::<T::Table>(&key);
            T::ENTITY_TYPES.iter().position(|t| owners.contains(t))
        }),
    };
    let Some(i) = member else {
        return Ok(());
    };
    match (T::ENTITY_TYPES.get(i), T::ENCRYPTED_MEMBERS.get(i)) {
        (Some(entity), Some(attributes)) if !attributes.is_empty() => {
            let fields = crate::encrypt::Fields {
                schema,
                entity,
                attributes,
            };
            crate::encrypt::open_item(keys, fields, item)
        }
        _ => Ok(()),
    }
}

/// The outcome of decoding one item into a [`Target`].
#[derive(Debug)]
pub enum Decoded<T> {
    /// The item belongs to the target.
    Item(T),
    /// The item's entity type is not part of the target (the value found, if any).
    Unknown(Option<String>),
}

impl<E: Entity> Target for E {
    type Table = E::Table;
    const NAME: &'static str = E::ENTITY_TYPE;
    const ENTITY_TYPES: &'static [&'static str] = &[E::ENTITY_TYPE];
    const IS_COLLECTION: bool = false;
    const MEMBER_ATTRIBUTES: &'static [&'static [&'static str]] = &[E::ATTRIBUTES];
    const HISTORY: Option<&'static crate::schema::history::HistoryLayout> = E::__HISTORY;
    const IDENTIFIED_BY_KEYS: bool = E::__IDENTIFY_BY_KEYS;
    const ENCRYPTED_MEMBERS: &'static [&'static [&'static str]] = &[E::__ENCRYPTED];

    fn decode(item: Item) -> Result<Decoded<Self>, DecodeError> {
        // An untyped item whose keys are not this entity's (another program's item, or an
        // item of another entity identified by its keys) is not part of the target.
        if E::__IDENTIFY_BY_KEYS
            && !item.contains_key(<E::Table as Table>::SCHEMA.entity_type)
            && !__private::identified_as::<E>(&item)
        {
            return Ok(Decoded::Unknown(None));
        }
        E::from_item(item).map(Decoded::Item)
    }
}

/// Keys as query results: reading an index that projects only keys (`KEYS_ONLY`) gives
/// the typed keys of the items it holds; see [`Query::keys_only`](dynamo_model::read::Query::keys_only).
impl<E: Entity> Target for crate::Key<E> {
    type Table = E::Table;
    const NAME: &'static str = E::ENTITY_TYPE;
    const ENTITY_TYPES: &'static [&'static str] = &[E::ENTITY_TYPE];
    const IS_COLLECTION: bool = false;
    const IS_KEYS: bool = true;
    const IDENTIFIED_BY_KEYS: bool = E::__IDENTIFY_BY_KEYS;

    fn decode(item: Item) -> Result<Decoded<Self>, DecodeError> {
        let schema = &<E::Table as Table>::SCHEMA;
        match crate::schema::raw_key_of(schema, &item) {
            // The key of a revision (an index without the entity-type attribute holds
            // them too): history, not a key of the entity.
            Some(RawKey { sk: Some(sk), .. })
                if E::__HISTORY.is_some_and(|l| !matches!(l.parse(&sk), Some((0, _)))) =>
            {
                Ok(Decoded::Unknown(None))
            }
            Some(raw) => match keys_owner::<E>(&item, &raw) {
                Ok(()) => Ok(Decoded::Item(crate::Key::from_raw(raw))),
                Err(Some(kind)) => Err(DecodeError {
                    entity: E::ENTITY_TYPE,
                    key: crate::schema::describe_item_key(schema, &item),
                    attribute: None,
                    kind,
                }),
                Err(None) => Ok(Decoded::Unknown(
                    __private::entity_type_of_table::<E::Table>(&item).map(str::to_owned),
                )),
            },
            None => Err(DecodeError {
                entity: E::ENTITY_TYPE,
                key: None,
                attribute: Some(schema.pk.name.to_owned()),
                kind: crate::DecodeErrorKind::Missing,
            }),
        }
    }
}

/// Whether keys read (from the table, or from an index that may not project the entity
/// type) are `E`'s: by the entity type when the item carries it, else by the key
/// templates. A key that is not `E`'s must never become a `Key<E>`: a delete by it
/// would remove another program's item. `Err(None)`: another entity's;
/// `Err(Some(kind))`: a key several entities identified by their keys render.
fn keys_owner<E: Entity>(item: &Item, key: &RawKey) -> Result<(), Option<crate::DecodeErrorKind>> {
    if let Some(found) = __private::entity_type_of_table::<E::Table>(item) {
        return if found == E::ENTITY_TYPE {
            Ok(())
        } else {
            Err(None)
        };
    }
    let owners = if E::__IDENTIFY_BY_KEYS {
        crate::registry::identified_by_key::<E::Table>(key)
    } else {
        // The entity type is not projected: the templates are all there is to go by (an
        // entity that is not identified by its keys keeps its condition on the type for
        // writes by such a key).
        crate::registry::entity_types_of_key::<E::Table>(key)
    };
    match owners.as_slice() {
        owners if !owners.contains(&E::ENTITY_TYPE) => Err(None),
        [_] => Ok(()),
        several if E::__IDENTIFY_BY_KEYS => Err(Some(crate::DecodeErrorKind::AmbiguousEntity {
            entities: several.to_vec(),
        })),
        _ => Ok(()),
    }
}

/// `T` can hold items of entity `E`: every entity includes itself, and a collection
/// includes each of its variants' entities. Lets sort-key conditions and filters of a
/// member entity be used in a collection query.
pub trait Includes<E: Entity>: Target {}

impl<E: Entity> Includes<E> for E {}

impl<E: Entity> Includes<E> for crate::Key<E> {}

/// An enum over entity types that share a partition. Implemented by
/// `#[derive(Collection)]`.
///
/// ```
/// # use dynamo_model::{Collection, Entity, Table};
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
/// #[derive(Entity, Serialize, Deserialize)]
/// #[dynamo(table = App, pk = "ORDER#{order_id}", sk = "ORDER")]
/// struct Order { order_id: String, total: u64 }
///
/// #[derive(Entity, Serialize, Deserialize)]
/// #[dynamo(table = App, pk = "ORDER#{order_id}", sk = "ITEM#{line}")]
/// struct OrderItem { order_id: String, line: u32, sku: String }
///
/// #[derive(Collection)]
/// enum OrderDetails {
///     Order(Order),
///     Item(OrderItem),
/// }
/// // db.query(Order::partition("o-1")).collection::<OrderDetails>().all().await?
/// ```
pub trait Collection: Target {}

#[doc(hidden)]
pub mod __private {
    use super::*;

    /// Reads the entity-type attribute of an item (for the generated dispatch).
    pub fn entity_type_of<C: Collection>(item: &Item) -> Option<&str> {
        entity_type_of_table::<C::Table>(item)
    }

    /// The value of table `T`'s entity-type attribute in `item`.
    pub(crate) fn entity_type_of_table<T: Table>(item: &Item) -> Option<&str> {
        item.get(T::SCHEMA.entity_type)
            .and_then(|v| v.as_s().ok())
            .map(String::as_str)
    }

    /// Whether an item's keys are rendered by `E`'s templates (whoever else's: an item
    /// several entities identified by their keys could own is refused when decoded).
    pub fn identified_as<E: Entity>(item: &Item) -> bool {
        crate::schema::raw_key_of(&<E::Table as Table>::SCHEMA, item).is_some_and(|key| {
            crate::registry::identified_by_key::<E::Table>(&key).contains(&E::ENTITY_TYPE)
        })
    }

    /// An item whose entity type is not a variant of the collection.
    pub fn unknown<C: Collection>(item: &Item) -> Decoded<C> {
        Decoded::Unknown(entity_type_of::<C>(item).map(str::to_owned))
    }
}
