//! Support for generated code. Not a public API.
use super::*;
use crate::codec::AttrValue;
use aws_sdk_dynamodb::types::AttributeValue;

pub use super::item_keys::{finish_item, new_item, verify_keys};
pub use super::owner::Owner;
pub use super::registration::registration;
pub use crate::key::format::FormattedAttr;
pub use crate::key::{KeyArg, KeyPart, OptionalKeyPart};
pub use aws_sdk_dynamodb::types::AttributeValue as Av;
pub use std::collections::HashMap;

/// The error of one field's encoding or decoding, boxed: every field returns a
/// `Result` with it, so the success path moves one pointer's worth of error, not the
/// 100-odd bytes of [`Error`] or [`DecodeError`]. The generated code's `?` unboxes it.
#[derive(Debug)]
pub struct FieldError<E>(Box<E>);

impl<E> FieldError<E> {
    #[cold]
    pub(crate) fn new(e: E) -> Self {
        FieldError(Box::new(e))
    }
}

impl From<FieldError<Error>> for Error {
    #[cold]
    fn from(e: FieldError<Error>) -> Self {
        *e.0
    }
}

impl From<FieldError<DecodeError>> for DecodeError {
    #[cold]
    fn from(e: FieldError<DecodeError>) -> Self {
        *e.0
    }
}

/// The refusal of a field value that cannot be stored, for the reason
/// [`EncodeError`](crate::codec::EncodeError) gives.
#[cold]
pub fn field_error(entity: &'static str, name: &str, e: crate::codec::EncodeError) -> Error {
    Error::invalid(
        entity,
        e.validation_reason(),
        format!(
            "field `{name}{}` cannot be stored: {}",
            e.path(),
            e.reason()
        ),
    )
    .caused_by(e)
}

/// Inserts a field's attribute unless it is absent (`None`, empty set).
#[inline]
pub fn put_field<E: Entity, T: AttrValue>(
    item: &mut Item,
    name: &'static str,
    value: &T,
) -> Result<(), FieldError<Error>> {
    put_attribute(item, name, value.to_attr_opt(), E::ENTITY_TYPE)
}

/// Inserts an encoded attribute unless it is absent (`None`); `entity` names the error.
fn put_attribute(
    item: &mut Item,
    name: &'static str,
    encoded: Result<Option<AttributeValue>, crate::codec::EncodeError>,
    entity: &'static str,
) -> Result<(), FieldError<Error>> {
    match encoded {
        Ok(Some(av)) => {
            item.insert(name.to_owned(), av);
            Ok(())
        }
        Ok(None) => Ok(()),
        Err(e) => Err(FieldError::new(field_error(entity, name, e))),
    }
}

/// Inserts the attribute of a field with a key format, in the format's attribute form
/// (`A` is `Formatted<T, F>`, or `FormattedOption<T, F>`).
#[inline]
pub fn put_formatted_field<E: Entity, A: crate::key::format::FormattedAttr>(
    item: &mut Item,
    name: &'static str,
    value: &A::Plain,
) -> Result<(), FieldError<Error>> {
    put_attribute(item, name, A::put_plain(value), E::ENTITY_TYPE)
}

/// Inserts a `#[dynamo(serde)]` field's attribute, encoded by `serde_dynamo`.
pub fn put_serde_field<E: Entity, T: serde::Serialize>(
    item: &mut Item,
    name: &'static str,
    value: &T,
) -> Result<(), Error> {
    match crate::codec::to_checked_attribute(value) {
        Ok(av) => {
            item.insert(name.to_owned(), av);
            Ok(())
        }
        Err(e) => Err(field_error(E::ENTITY_TYPE, name, e)),
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
) -> Result<T, FieldError<DecodeError>> {
    take_value(Owner::of::<E>(), item, name, default)
}

/// [`take_field`] of the owner's item: generic over the field's type only, so entities
/// share it.
fn take_value<T: AttrValue>(
    owner: Owner,
    item: &mut Item,
    name: &'static str,
    default: Option<fn() -> T>,
) -> Result<T, FieldError<DecodeError>> {
    let decoded = match item.remove(name) {
        Some(av) => T::from_attr(av),
        None => match default {
            Some(default) => Ok(default()),
            None => T::from_missing(),
        },
    };
    match decoded {
        Ok(value) => Ok(value),
        Err(kind) => Err(field_decode_error(owner, item, name, kind)),
    }
}

/// [`decode_error`] of field `name`, boxed for the generated code's `?`.
#[cold]
fn field_decode_error(
    owner: Owner,
    item: &Item,
    name: &'static str,
    kind: DecodeErrorKind,
) -> FieldError<DecodeError> {
    FieldError::new(owner.decode_error(item, Some(name), kind))
}

/// Where a key field is written in the primary key: the sort key (else the partition
/// key) template, its segments (`Some(literal)`, `None` for a placeholder), its
/// delimiter and the field's ordinal among the placeholders.
#[derive(Debug, Clone, Copy)]
pub struct KeySource {
    /// In the sort key (else the partition key).
    pub sort: bool,
    /// The template's segments.
    pub segments: &'static [Option<&'static str>],
    /// The template's delimiter.
    pub delimiter: crate::key::Delimiter,
    /// The field's ordinal among the template's placeholders.
    pub ordinal: usize,
}

/// Takes a key field: its plain attribute when the item has one, else its component
/// of the primary key, decoded as key part `K` (the field's type, or its
/// `key_format`). Either way `verify_keys` then checks the key is what the fields
/// render, so a plain attribute that disagrees with the key is refused.
pub fn take_key_field<E: Entity, T: AttrValue>(
    item: &mut Item,
    name: &'static str,
    aliases: &[&'static str],
    source: KeySource,
    decode: fn(&str, crate::key::Delimiter) -> Result<T, crate::key::KeyError>,
) -> Result<T, FieldError<DecodeError>> {
    let owner = Owner::of::<E>();
    rename_alias(item, name, aliases);
    if item.contains_key(name) {
        return take_value(owner, item, name, None);
    }
    let (attribute, component) = key_field_component(owner, item, &source);
    match component.and_then(|c| decode_component(decode, c, source.delimiter)) {
        Ok(value) => Ok(value),
        Err(kind) => Err(FieldError::new(owner.decode_error(item, attribute, kind))),
    }
}

/// Decodes a key field's component of a rendered key and encodes the value as the
/// field's attribute (the field's `KeyPart::__key_attribute`).
pub type KeyAttribute =
    fn(
        &str,
        crate::key::Delimiter,
    )
        -> Result<Result<Option<AttributeValue>, crate::codec::EncodeError>, crate::key::KeyError>;

/// A key field the item also stores in its own attribute: its attribute (the name of its
/// placeholder), where it is read back from in the key, and how it is encoded again.
/// The generated code lists them (`__STORED_KEY_FIELDS`), and the trait's
/// `__key_fields` writes them for an update that creates its item.
#[derive(Debug, Clone, Copy)]
pub struct StoredKeyField {
    /// The field's attribute.
    pub name: &'static str,
    /// Its component of the primary key.
    pub source: KeySource,
    /// Decodes the component as the field's key part and encodes it as `to_item` does.
    pub attribute: KeyAttribute,
}

/// Appends the attribute of `field`, decoded from the rendered key `key` (the key
/// attributes) and encoded as a write of the whole entity stores it: what an update that
/// creates its item (`upsert`) writes, having no entity to encode.
pub(super) fn put_stored_key_field(
    owner: Owner,
    out: &mut Vec<(&'static str, AttributeValue)>,
    key: &Item,
    field: &StoredKeyField,
) -> Result<(), Error> {
    let (source, name) = (field.source, field.name);
    let (attribute, component) = key_field_component(owner, key, &source);
    let encoded = component
        .and_then(|c| decode_component(field.attribute, c, source.delimiter))
        .map_err(|kind| Error::from(owner.decode_error(key, attribute, kind)))?;
    let mut item = Item::new();
    put_attribute(&mut item, name, encoded, owner.entity)?;
    out.extend(item.remove(name).map(|v| (name, v)));
    Ok(())
}

/// The key attribute holding a key field, and the field's component in it.
fn key_field_component<'i>(
    owner: Owner,
    item: &'i Item,
    source: &KeySource,
) -> (Option<&'static str>, Result<&'i str, DecodeErrorKind>) {
    let attribute = if source.sort {
        owner.schema.sk.map(|k| k.name)
    } else {
        Some(owner.schema.pk.name)
    };
    let rendered = match attribute.and_then(|a| item.get(a)) {
        Some(AttributeValue::S(s)) => Some(s.as_str()),
        _ => None,
    };
    let component = component(
        owner,
        rendered,
        source.segments,
        source.delimiter,
        source.ordinal,
    );
    (attribute, component)
}

/// The component of placeholder `ordinal` in a rendered key (see
/// [`key_component`](crate::key::template::key_component)).
fn component<'k>(
    owner: Owner,
    rendered: Option<&'k str>,
    segments: &[Option<&str>],
    delimiter: crate::key::Delimiter,
    ordinal: usize,
) -> Result<&'k str, DecodeErrorKind> {
    crate::key::template::key_component(owner.entity, rendered, segments, delimiter, ordinal)
        .map_err(|e| DecodeErrorKind::Invalid(e.to_string()))
}

/// A key component decoded as the field's type.
#[inline]
fn decode_component<T>(
    decode: fn(&str, crate::key::Delimiter) -> Result<T, crate::key::KeyError>,
    component: &str,
    delimiter: crate::key::Delimiter,
) -> Result<T, DecodeErrorKind> {
    decode(component, delimiter).map_err(|e| DecodeErrorKind::Invalid(e.to_string()))
}

/// Where an index key template holds a field as it is: the index's key attribute
/// (`None` where the table's own key is written, which is no source), the template's
/// segments (`Some(literal)`, `None` for a placeholder), its delimiter and the field's
/// ordinal among the placeholders.
#[derive(Debug, Clone, Copy)]
pub struct IndexKeySource {
    /// The index key attribute.
    pub attribute: Option<&'static str>,
    /// The template's segments.
    pub segments: &'static [Option<&'static str>],
    /// The template's delimiter.
    pub delimiter: crate::key::Delimiter,
    /// The field's ordinal among the template's placeholders.
    pub ordinal: usize,
}

/// Takes a field an index key template holds: its plain attribute when the item has
/// one. Without it, a `key_only` field is its component of the first of `sources`
/// the item carries, decoded by `decode`, else `default` or the type's value of a
/// missing attribute (`None` for an `Option`: an item outside a sparse index). A
/// stored field's missing attribute means what it always means (`default`, `None`);
/// only where that is no value (a required field another program did not store) is
/// the field read from the index key, so an index key added to an item the crate
/// wrote never changes a field it stored as absent. Either way `verify_keys` then
/// checks every index key the item carries against what the fields render, so a plain
/// attribute that disagrees with one is refused ([`DecodeErrorKind::KeyMismatch`]).
pub fn take_index_key_field<E: Entity, T: AttrValue>(
    item: &mut Item,
    name: &'static str,
    aliases: &[&'static str],
    key_only: bool,
    sources: &[IndexKeySource],
    decode: fn(&str, crate::key::Delimiter) -> Result<T, crate::key::KeyError>,
    default: Option<fn() -> T>,
) -> Result<T, FieldError<DecodeError>> {
    rename_alias(item, name, aliases);
    if item.contains_key(name) {
        return take_field::<E, T>(item, name, None);
    }
    if !key_only {
        let missing = match default {
            Some(default) => Ok(default()),
            None => T::from_missing(),
        };
        if let Ok(value) = missing {
            return Ok(value);
        }
    }
    for source in sources {
        let Some(attribute) = source.attribute else {
            continue;
        };
        let rendered = match item.get(attribute) {
            Some(AttributeValue::S(s)) => s.as_str(),
            // Not in this index (sparse), or not a string: `verify_keys` reports the
            // latter.
            _ => continue,
        };
        let owner = Owner::of::<E>();
        let decoded = component(
            owner,
            Some(rendered),
            source.segments,
            source.delimiter,
            source.ordinal,
        )
        .and_then(|component| decode_component(decode, component, source.delimiter));
        return decoded
            .map_err(|kind| FieldError::new(owner.decode_error(item, Some(attribute), kind)));
    }
    take_field::<E, T>(item, name, default)
}

/// [`take_index_key_field`] of a stored field with no alias and no default, decoded as
/// its type's index key part: what the derive generates for most index key fields.
#[inline]
pub fn take_indexed<E: Entity, T: AttrValue + OptionalKeyPart>(
    item: &mut Item,
    name: &'static str,
    sources: &[IndexKeySource],
) -> Result<T, FieldError<DecodeError>> {
    take_index_key_field::<E, T>(item, name, &[], false, sources, T::__decode, None)
}

/// Refuses to write an item whose `key_only` field no written key holds: the field is
/// stored nowhere else, so the item would decode without it (or not at all). Happens
/// when every index template holding the field leaves the item out of its sparse
/// index (another of its fields is absent).
#[inline]
pub fn key_only_held<E: Entity>(
    item: &Item,
    field: &'static str,
    present: bool,
    attributes: &[Option<&'static str>],
) -> Result<(), Error> {
    if !present
        || attributes
            .iter()
            .flatten()
            .any(|attribute| item.contains_key(*attribute))
    {
        return Ok(());
    }
    Err(key_only_lost::<E>(field, attributes))
}

#[cold]
fn key_only_lost<E: Entity>(field: &'static str, attributes: &[Option<&'static str>]) -> Error {
    let names: Vec<&str> = attributes.iter().flatten().copied().collect();
    Error::invalid(
        E::ENTITY_TYPE,
        crate::ValidationReason::IncompleteIndexTemplate,
        format!(
            "`key_only` field `{field}` is stored only in the index key {}, which this item does not get (another field of its template is absent): the value would be lost; give that field a value, or store `{field}` (remove `key_only`)",
            names.join(" or ")
        ),
    )
}

/// A field renamed since items were written: when the item lacks `name`, the first of
/// its older names (`#[dynamo(alias = "..")]`) it has is read as `name`. Every alias
/// is removed from the item, so none is mistaken for something else.
pub fn rename_alias(item: &mut Item, name: &'static str, aliases: &[&'static str]) {
    for alias in aliases {
        if let Some(value) = item.remove(*alias)
            && !item.contains_key(name)
        {
            item.insert(name.to_owned(), value);
        }
    }
}

/// Takes a field that may be stored under an older name (`#[dynamo(alias = "..")]`).
pub fn take_aliased_field<E: Entity, T: AttrValue>(
    item: &mut Item,
    name: &'static str,
    aliases: &[&'static str],
    default: Option<fn() -> T>,
) -> Result<T, FieldError<DecodeError>> {
    rename_alias(item, name, aliases);
    take_field::<E, T>(item, name, default)
}

/// Takes a `#[dynamo(serde)]` field's attribute out of the item and decodes it with
/// `serde_dynamo` (a missing attribute decodes as serde's `null`, so `Option` works).
pub fn take_serde_field<E: Entity, T: serde::de::DeserializeOwned>(
    item: &mut Item,
    name: &'static str,
    default: Option<fn() -> T>,
) -> Result<T, DecodeError> {
    crate::attribute::take_serde(item, name, default)
        .map_err(|kind| decode_error::<E>(item, Some(name), kind))
}

/// The type of a `#[dynamo(chunked)]` field. The generated code reaches such a field
/// only through this trait, at the field type's span, so a field of another type is
/// one error naming the type and what it should be (not a mismatch inside the derive).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a #[dynamo(chunked)] field",
    label = "expected `Chunked<String>` or `Chunked<Vec<u8>>`",
    note = "a chunked field holds its value in a `dynamo_model::Chunked` (built with `Chunked::new(value)` or `value.into()`), which a listing returns without the value; declare the field as `Chunked<String>` or `Chunked<Vec<u8>>`, or remove #[dynamo(chunked)] to store it as an ordinary attribute"
)]
pub trait ChunkedFieldType: Sized {
    /// Encodes the field into `item` (see `chunk::to_attr`).
    fn put_chunked<E: Entity>(&self, item: &mut Item, field: &crate::chunk::ChunkedField);
    /// Decodes the field from `item` (see `chunk::from_attr`).
    fn take_chunked<E: Entity>(
        item: &mut Item,
        field: &crate::chunk::ChunkedField,
    ) -> Result<Self, FieldError<DecodeError>>;
    /// The field as the runtime sees it.
    fn slot(&self) -> &dyn crate::chunk::ChunkSlot;
    /// The field as the runtime sees it, to load its value.
    fn slot_mut(&mut self) -> &mut dyn crate::chunk::ChunkSlot;
}

impl<T: crate::chunk::ChunkValue> ChunkedFieldType for crate::Chunked<T> {
    fn put_chunked<E: Entity>(&self, item: &mut Item, field: &crate::chunk::ChunkedField) {
        item.insert(
            field.attribute.to_owned(),
            crate::chunk::to_attr(field, self),
        );
    }
    fn take_chunked<E: Entity>(
        item: &mut Item,
        field: &crate::chunk::ChunkedField,
    ) -> Result<Self, FieldError<DecodeError>> {
        let stored = item.remove(field.attribute);
        crate::chunk::from_attr(stored, field)
            .map_err(|kind| FieldError::new(decode_error::<E>(item, Some(field.attribute), kind)))
    }
    fn slot(&self) -> &dyn crate::chunk::ChunkSlot {
        self
    }
    fn slot_mut(&mut self) -> &mut dyn crate::chunk::ChunkSlot {
        self
    }
}

/// Checks the entity-type attribute.
#[inline]
pub fn check_entity_type<E: Entity>(item: &Item) -> Result<(), DecodeError> {
    let identify = E::__IDENTIFY_BY_KEYS.then(std::any::TypeId::of::<E::Table>);
    check_owned_type(item, Owner::of::<E>(), identify)
}

/// [`check_entity_type`]; `identify`: the table whose registered entities are asked when
/// the item has no entity-type attribute (`#[dynamo(identify = "keys")]`).
fn check_owned_type(
    item: &Item,
    owner: Owner,
    identify: Option<std::any::TypeId>,
) -> Result<(), DecodeError> {
    match (item.get(owner.schema.entity_type), identify) {
        (Some(AttributeValue::S(found)), _) if found == owner.entity => Ok(()),
        (None, Some(table)) => identify_by_keys(item, owner, table),
        (other, _) => {
            let found = other.map(|v| match v {
                AttributeValue::S(s) => s.clone(),
                v => format!("<{} attribute>", crate::codec::type_name(v)),
            });
            Err(owner.decode_error(
                item,
                None,
                DecodeErrorKind::WrongEntityType {
                    expected: owner.entity,
                    found,
                },
            ))
        }
    }
}

/// An item without the entity-type attribute is the owner's when its keys match the
/// owner's templates and no other entity identified by its keys.
#[cold]
fn identify_by_keys(item: &Item, owner: Owner, table: std::any::TypeId) -> Result<(), DecodeError> {
    let owners = match crate::schema::raw_key_of(owner.schema, item) {
        Some(key) => crate::registry::identified_by_key_in(table, &key),
        None => Vec::new(),
    };
    let kind = match owners.as_slice() {
        [only] if *only == owner.entity => return Ok(()),
        several if several.contains(&owner.entity) => DecodeErrorKind::AmbiguousEntity {
            entities: owners.clone(),
        },
        _ => DecodeErrorKind::WrongEntityType {
            expected: owner.entity,
            found: None,
        },
    };
    Err(owner.decode_error(item, None, kind))
}

/// A decode error with the item's key for context.
#[inline]
pub fn decode_error<E: Entity>(
    item: &Item,
    attribute: Option<&str>,
    kind: DecodeErrorKind,
) -> DecodeError {
    Owner::of::<E>().decode_error(item, attribute, kind)
}

impl Owner {
    /// A decode error of an item of this owner, with the item's key for context.
    #[cold]
    pub fn decode_error(
        self,
        item: &Item,
        attribute: Option<&str>,
        kind: DecodeErrorKind,
    ) -> DecodeError {
        // A nested error names its place in the attribute: `address.city`, `lines[2]`.
        let (path, kind) = kind.into_path();
        DecodeError {
            entity: self.entity,
            key: crate::schema::describe_item_key(self.schema, item),
            attribute: match attribute {
                Some(a) => Some(format!("{a}{path}")),
                None => (!path.is_empty()).then_some(path),
            },
            kind,
        }
    }
}
