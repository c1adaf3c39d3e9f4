//! What `#[dynamo(compress)]` fields generate calls to. Not a public API.
use crate::attribute::Map;
use crate::codec::EncodeError;
use crate::compress::*;
use crate::entity::__private::{decode_error, field_error};
use crate::error::DecodeErrorKind;
use crate::{DecodeError, Entity, Error, Item};
use aws_sdk_dynamodb::types::AttributeValue;

pub use crate::compress::{Codec, Compression, GZIP_AVAILABLE, ZSTD_AVAILABLE};

/// Inserts a compressed field's attribute unless it is absent.
pub fn put_compressed_field<E: Entity, T: Compressible>(
    item: &mut Item,
    name: &'static str,
    value: &T,
    c: &Compression,
) -> Result<(), Error> {
    match to_attr(value, c) {
        Ok(Some(av)) => {
            item.insert(name.to_owned(), av);
            Ok(())
        }
        Ok(None) => Ok(()),
        Err(e) => Err(field_error(E::ENTITY_TYPE, name, e)),
    }
}

/// Inserts a `#[dynamo(serde, compress)]` field's attribute.
pub fn put_compressed_serde_field<E: Entity, T: serde::Serialize>(
    item: &mut Item,
    name: &'static str,
    value: &T,
    c: &Compression,
) -> Result<(), Error> {
    let av = serde_to_attr(value, c).map_err(|e| field_error(E::ENTITY_TYPE, name, e))?;
    item.insert(name.to_owned(), av);
    Ok(())
}

/// Takes a compressed field's attribute out of the item and decodes it.
pub fn take_compressed_field<E: Entity, T: Compressible>(
    item: &mut Item,
    name: &'static str,
    c: &Compression,
    default: Option<fn() -> T>,
) -> Result<T, DecodeError> {
    let decoded = or_default(item.remove(name), default, |value| from_attr_opt(value, c));
    decoded.map_err(|kind| decode_error::<E>(item, Some(name), kind))
}

/// Takes a `#[dynamo(serde, compress)]` field's attribute out of the item.
pub fn take_compressed_serde_field<E: Entity, T: serde::de::DeserializeOwned>(
    item: &mut Item,
    name: &'static str,
    c: &Compression,
    default: Option<fn() -> T>,
) -> Result<T, DecodeError> {
    let decoded = or_default(item.remove(name), default, |value| {
        serde_from_attr_opt(value, c)
    });
    decoded.map_err(|kind| decode_error::<E>(item, Some(name), kind))
}

/// Writes a compressed member of a `#[derive(Attribute)]` struct unless it is absent.
pub fn put_compressed_member<T: Compressible>(
    map: &mut Map,
    name: &'static str,
    value: &T,
    c: &Compression,
) -> Result<(), EncodeError> {
    if let Some(av) = to_attr(value, c).map_err(|e| e.at_member(name))? {
        map.insert(name.to_owned(), av);
    }
    Ok(())
}

/// Writes a `#[dynamo(serde, compress)]` member.
pub fn put_compressed_serde_member<T: serde::Serialize>(
    map: &mut Map,
    name: &'static str,
    value: &T,
    c: &Compression,
) -> Result<(), EncodeError> {
    let av = serde_to_attr(value, c).map_err(|e| e.at_member(name))?;
    map.insert(name.to_owned(), av);
    Ok(())
}

/// Takes a compressed member out of the map and decodes it.
pub fn take_compressed_member<T: Compressible>(
    map: &mut Map,
    name: &'static str,
    c: &Compression,
    default: Option<fn() -> T>,
) -> Result<T, DecodeErrorKind> {
    let decoded = or_default(map.remove(name), default, |value| from_attr_opt(value, c));
    decoded.map_err(|e| e.at_member(name))
}

/// Takes a `#[dynamo(serde, compress)]` member out of the map.
pub fn take_compressed_serde_member<T: serde::de::DeserializeOwned>(
    map: &mut Map,
    name: &'static str,
    c: &Compression,
    default: Option<fn() -> T>,
) -> Result<T, DecodeErrorKind> {
    let decoded = or_default(map.remove(name), default, |value| {
        serde_from_attr_opt(value, c)
    });
    decoded.map_err(|e| e.at_member(name))
}

/// `default()` for an absent attribute of a field that has a default, else `stored` decoded.
fn or_default<T>(
    stored: Option<AttributeValue>,
    default: Option<fn() -> T>,
    decode: impl FnOnce(Option<AttributeValue>) -> Result<T, DecodeErrorKind>,
) -> Result<T, DecodeErrorKind> {
    match (stored, default) {
        (None, Some(default)) => Ok(default()),
        (stored, _) => decode(stored),
    }
}
