//! The key attributes of an item and its entity's fields: written with the item
//! (`put_key`, `put_indexes`), and checked when the item is decoded (`verify_keys`).
//! Generic only at the entry points: the work is done over an [`Owner`] and a
//! [`RenderKeys`] object, so it is compiled once, not once per entity.

use super::owner::Owner;
use super::{Entity, IndexKeyAttributes, Key};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::{Error, Item};
use aws_sdk_dynamodb::types::AttributeValue;

/// Checks that the item's key attributes are what its decoded fields render: the
/// primary key exactly, and every index key attribute the item carries. Called by
/// the generated `from_item` once the fields are decoded.
///
/// The key attributes are where DynamoDB stores, finds and deletes an item; the
/// plain attributes are only what the writer claimed. An item whose claims differ
/// from its key (written by hand, by another program, or forged) would otherwise
/// decode as another item: its `primary_key()` would name, and a delete by it would
/// remove, that other item. Index key attributes are held to the same rule (a stored
/// `GSI1PK` that the fields do not render puts the item in another index partition),
/// except that an absent one is accepted: an item written before an index template
/// existed is simply not in that index yet.
///
/// Keys are rendered into per-thread buffers, so a matching item costs no allocation.
pub fn verify_keys<E: Entity>(item: &Item, entity: &E) -> Result<(), DecodeError> {
    verify_rendered_keys(item, &Rendered::of(entity))
}

/// What an entity value renders of its keys, without its type: the key checks and
/// writes below are compiled once, not once per entity.
struct Rendered<'a> {
    owner: Owner,
    history: Option<&'static crate::schema::history::HistoryLayout>,
    indexes: &'static [IndexKeyAttributes],
    keys: &'a dyn RenderKeys,
}

/// [`EntityInternals`]' key rendering, object-safe.
trait RenderKeys {
    fn primary(&self, pk: &mut String, sk: &mut String) -> Result<(), crate::key::KeyError>;
    fn index(
        &self,
        position: usize,
        pk: &mut String,
        sk: &mut String,
    ) -> Result<bool, crate::key::KeyError>;
}

impl<E: Entity> RenderKeys for E {
    fn primary(&self, pk: &mut String, sk: &mut String) -> Result<(), crate::key::KeyError> {
        self.__render_primary_key(pk, sk)
    }
    fn index(
        &self,
        position: usize,
        pk: &mut String,
        sk: &mut String,
    ) -> Result<bool, crate::key::KeyError> {
        self.__render_index_key(position, pk, sk)
    }
}

impl Rendered<'_> {
    #[inline]
    fn of<E: Entity>(entity: &E) -> Rendered<'_> {
        Rendered {
            owner: Owner::of::<E>(),
            history: E::__HISTORY,
            indexes: E::__INDEX_KEYS,
            keys: entity,
        }
    }
}

fn verify_rendered_keys(item: &Item, entity: &Rendered<'_>) -> Result<(), DecodeError> {
    thread_local! {
        static BUFFERS: std::cell::RefCell<(String, String)> =
            const { std::cell::RefCell::new((String::new(), String::new())) };
    }
    let fresh = || verify_keys_with(item, entity, &mut String::new(), &mut String::new());
    BUFFERS
        .try_with(|cell| match cell.try_borrow_mut() {
            Ok(mut buffers) => {
                let (pk, sk) = &mut *buffers;
                let result = verify_keys_with(item, entity, pk, sk);
                // Keys are at most 2 KB; a huge forged value must not stay resident.
                for buffer in [pk, sk] {
                    if buffer.capacity() > 4096 {
                        *buffer = String::new();
                    }
                }
                result
            }
            // Re-entered from a custom `KeyPart` (or during thread teardown): render
            // into fresh buffers instead.
            Err(_) => fresh(),
        })
        .unwrap_or_else(|_| fresh())
}

fn verify_keys_with(
    item: &Item,
    entity: &Rendered<'_>,
    pk: &mut String,
    sk: &mut String,
) -> Result<(), DecodeError> {
    let owner = entity.owner;
    let schema = owner.schema;
    pk.clear();
    sk.clear();
    entity
        .keys
        .primary(pk, sk)
        .map_err(|e| unrenderable(owner, item, schema.pk.name, e))?;
    stored_key(owner, item, schema.pk.name, Some(pk), true)?;
    if let Some(attr) = schema.sk {
        if let Some(layout) = entity.history {
            // Only the latest copy decodes as the entity; a revision is read through
            // the history, which names its slot (the `history` module).
            let latest = layout.latest(sk);
            sk.clear();
            sk.push_str(&latest);
        }
        stored_key(owner, item, attr.name, Some(sk), true)?;
    }
    for (position, index) in entity.indexes.iter().enumerate() {
        pk.clear();
        sk.clear();
        let attribute = index.pk.or(index.sk).unwrap_or_default();
        let present = entity
            .keys
            .index(position, pk, sk)
            .map_err(|e| unrenderable(owner, item, attribute, e))?;
        for (attribute, rendered) in [(index.pk, &*pk), (index.sk, &*sk)] {
            if let Some(attribute) = attribute {
                stored_key(owner, item, attribute, present.then_some(rendered), false)?;
            }
        }
    }
    Ok(())
}

/// Compares one stored key attribute with what the fields render (`None`: the fields
/// leave the item out of this sparse index).
fn stored_key(
    owner: Owner,
    item: &Item,
    attribute: &str,
    rendered: Option<&str>,
    required: bool,
) -> Result<(), DecodeError> {
    let kind = match (item.get(attribute), rendered) {
        (Some(AttributeValue::S(found)), Some(rendered)) if found == rendered => return Ok(()),
        (Some(AttributeValue::S(found)), rendered) => DecodeErrorKind::KeyMismatch {
            expected: rendered.map(str::to_owned),
            found: found.clone(),
        },
        (Some(other), _) => DecodeErrorKind::WrongType {
            expected: "S",
            found: crate::codec::type_name(other),
        },
        (None, _) if !required => return Ok(()),
        (None, _) => DecodeErrorKind::Missing,
    };
    Err(owner.decode_error(item, Some(attribute), kind))
}

#[cold]
fn unrenderable(
    owner: Owner,
    item: &Item,
    attribute: &str,
    e: crate::key::KeyError,
) -> DecodeError {
    owner.decode_error(
        item,
        Some(attribute),
        DecodeErrorKind::Invalid(format!(
            "the fields cannot render this key attribute, so it cannot have been written from them: {e}"
        )),
    )
}

/// A new item for `entity` (with room for `capacity` attributes): its primary key and
/// every index key its templates render.
pub fn new_item<E: Entity>(entity: &E, capacity: usize) -> Result<Item, Error> {
    let mut item = Item::with_capacity(capacity);
    put_key(&mut item, entity.primary_key())?;
    put_indexes(&mut item, entity)?;
    Ok(item)
}

/// Inserts the key, entity type and index attributes common to every item.
#[inline]
fn put_key<E: Entity>(item: &mut Item, key: Key<E>) -> Result<(), Error> {
    insert_key(item, key.into_raw()?, Owner::of::<E>());
    Ok(())
}

fn insert_key(item: &mut Item, raw: crate::RawKey, owner: Owner) {
    let schema = owner.schema;
    // The key strings were rendered for this item: moved in, not copied.
    item.insert(schema.pk.name.to_owned(), AttributeValue::S(raw.pk));
    if let (Some(attr), Some(sk)) = (schema.sk, raw.sk) {
        item.insert(attr.name.to_owned(), AttributeValue::S(sk));
    }
    if owner.writes_type {
        item.insert(
            schema.entity_type.to_owned(),
            AttributeValue::S(owner.entity.to_owned()),
        );
    }
}

/// Writes the key attributes of every index whose keys `entity` renders from templates
/// ([`EntityInternals::__INDEX_KEYS`](super::EntityInternals::__INDEX_KEYS)). They are written only when every field of every
/// template of the index is present (sparse index): an item is either fully in the index
/// or not in it at all.
#[inline]
fn put_indexes<E: Entity>(item: &mut Item, entity: &E) -> Result<(), Error> {
    put_rendered_indexes(item, &Rendered::of(entity))
}

fn put_rendered_indexes(item: &mut Item, entity: &Rendered<'_>) -> Result<(), Error> {
    let owner = entity.owner;
    for (position, index) in entity.indexes.iter().enumerate() {
        // Typical keys fit without reallocating (as in `Key::__build`).
        let (mut pk, mut sk) = (
            String::with_capacity(if index.pk.is_some() { 32 } else { 0 }),
            String::with_capacity(if index.sk.is_some() { 48 } else { 0 }),
        );
        let present = entity
            .keys
            .index(position, &mut pk, &mut sk)
            .map_err(|e| Error::key(owner.entity, e))?;
        if !present {
            continue;
        }
        for (attribute, value, partition) in [(index.pk, pk, true), (index.sk, sk, false)] {
            if let Some(attribute) = attribute {
                crate::key::check_index_key(owner.entity, attribute, &value, partition)?;
                item.insert(attribute.to_owned(), AttributeValue::S(value));
            }
        }
    }
    Ok(())
}

/// The end of an encoded item: refuses empty values in the attributes of the table's
/// index keys (a multi-attribute index key holds the entity's own fields).
#[inline]
pub fn finish_item<E: Entity>(item: Item) -> Result<Item, Error> {
    finish_owned_item(item, Owner::of::<E>())
}

fn finish_owned_item(item: Item, owner: Owner) -> Result<Item, Error> {
    crate::schema::check_index_attributes(owner.entity, owner.schema, |name| item.get(name))?;
    Ok(item)
}
