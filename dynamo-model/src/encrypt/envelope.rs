//! The stored form of an encrypted attribute: a canonical serialisation of the attribute
//! value, sealed with AES-256-GCM into a binary envelope, and the associated data that
//! binds it to its item, attribute and entity type.
//!
//! Envelope (format 1): `[1][id length: 1 byte][key id][nonce: 12 bytes][ciphertext and
//! 16-byte tag]`. Associated data: a domain string, the format byte, then the entity type,
//! the attribute name, the partition key value and the sort key value (absent: a marker),
//! each length-prefixed so no two places share one.

use super::{EncryptionError, KeyProvider};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::schema::TableSchema;
use crate::{Error, Item, RawKey, ValidationReason};
use aws_lc_rs::aead::{Aad, NONCE_LEN, Nonce};
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue;

/// The format byte of the envelopes this build writes (and the only one it reads).
pub const FORMAT_VERSION: u8 = 1;

/// Bytes an envelope adds besides its key id and the serialised value: the format and
/// id-length bytes, the nonce and the tag.
pub const ENVELOPE_OVERHEAD: usize = 2 + NONCE_LEN + TAG_LEN;

const TAG_LEN: usize = 16;
const DOMAIN: &[u8] = b"dynamo-model/encrypt\0";
/// Nesting deeper than DynamoDB's 32 levels is not a value this crate sealed.
const MAX_DEPTH: usize = 64;

/// Where a sealed value lives, bound into its associated data.
struct Binding<'a> {
    entity: &'a str,
    attribute: &'a str,
    pk: &'a str,
    sk: Option<&'a str>,
}

impl Binding<'_> {
    fn aad(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(DOMAIN.len() + 64);
        out.extend_from_slice(DOMAIN);
        out.push(FORMAT_VERSION);
        for part in [self.entity, self.attribute, self.pk] {
            put_bytes(&mut out, part.as_bytes());
        }
        match self.sk {
            Some(sk) => {
                out.push(1);
                put_bytes(&mut out, sk.as_bytes());
            }
            None => out.push(0),
        }
        out
    }
}

/// The binding of `attribute` of the item stored under `key`.
fn binding<'a>(entity: &'a str, attribute: &'a str, key: &'a RawKey) -> Binding<'a> {
    Binding {
        entity,
        attribute,
        pk: &key.pk,
        sk: key.sk.as_deref(),
    }
}

/// The encrypted attributes of one entity type, in the table of `schema`.
#[derive(Clone, Copy)]
pub(crate) struct Fields<'a> {
    pub(crate) schema: &'a TableSchema,
    pub(crate) entity: &'static str,
    pub(crate) attributes: &'a [&'static str],
}

/// Seals the encrypted attributes `item` holds, in place, with the provider's current
/// key; the item's own key attributes bind them. Every write of a whole entity passes
/// here.
pub(crate) fn seal_item(
    keys: Option<&dyn KeyProvider>,
    f: Fields,
    item: &mut Item,
) -> Result<(), Error> {
    let Fields {
        schema,
        entity,
        attributes,
    } = f;
    let Some(key) = crate::schema::raw_key_of(schema, item) else {
        // Never stored in plain text: an item without its key (keys are rendered
        // templates, so strings) has nothing to bind a ciphertext to.
        return match attributes.iter().find(|a| item.contains_key(**a)) {
            Some(attribute) => Err(Error::invalid(
                entity,
                ValidationReason::InvalidValue,
                format!("cannot encrypt attribute `{attribute}`: the item has no primary key"),
            )),
            None => Ok(()),
        };
    };
    for attribute in attributes {
        if let Some(value) = item.get_mut(*attribute) {
            *value = seal_value(keys, entity, attribute, &key, value)?;
        }
    }
    Ok(())
}

/// The envelope of `value` stored as `attribute` of the item under `key` (also what an
/// update's `set` stores).
pub(crate) fn seal_value(
    keys: Option<&dyn KeyProvider>,
    entity: &'static str,
    attribute: &str,
    key: &RawKey,
    value: &AttributeValue,
) -> Result<AttributeValue, Error> {
    let refuse = |why: &str| {
        Error::invalid(
            entity,
            ValidationReason::EncryptionKeys,
            format!("cannot encrypt attribute `{attribute}`: {why}"),
        )
    };
    let (id, data_key) = keys
        .ok_or_else(|| refuse("the Db has no key provider (Db::with_keys)"))?
        .current()
        .ok_or_else(|| refuse("the key provider has no current key"))?;
    let id_len = u8::try_from(id.len())
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| refuse("a key id is 1 to 255 bytes"))?;
    let binding = binding(entity, attribute, key);
    let mut plain = Vec::new();
    serialise(&mut plain, value).map_err(|what| {
        Error::invalid(
            entity,
            ValidationReason::InvalidValue,
            format!("cannot encrypt attribute `{attribute}`: {what}"),
        )
    })?;
    let mut nonce = [0u8; NONCE_LEN];
    aws_lc_rs::rand::fill(&mut nonce).map_err(|_| refuse("no random nonce"))?;
    data_key
        .aead()
        .seal_in_place_append_tag(
            Nonce::assume_unique_for_key(nonce),
            Aad::from(binding.aad()),
            &mut plain,
        )
        .map_err(|_| refuse("sealing failed"))?;
    let mut out = Vec::with_capacity(ENVELOPE_OVERHEAD + id.len() + plain.len());
    out.push(FORMAT_VERSION);
    out.push(id_len);
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&plain);
    Ok(AttributeValue::B(Blob::new(out)))
}

/// Opens, in place, the encrypted attributes `item` holds: each must be an envelope that
/// authenticates for this item, attribute and entity type. What every read passes
/// through before decoding.
pub(crate) fn open_item(
    keys: Option<&dyn KeyProvider>,
    f: Fields,
    item: &mut Item,
) -> Result<(), DecodeError> {
    let (schema, entity) = (f.schema, f.entity);
    for attribute in f.attributes {
        let Some(stored) = item.get(*attribute) else {
            continue;
        };
        let key = crate::schema::raw_key_of(schema, item);
        let opened = match &key {
            Some(key) => open_value(keys, &binding(entity, attribute, key), stored),
            None => Err(EncryptionError::Malformed("the item has no primary key")),
        };
        match opened {
            Ok(value) => {
                item.insert((*attribute).to_owned(), value);
            }
            Err(e) => {
                return Err(DecodeError {
                    entity,
                    key: crate::schema::describe_item_key(schema, item),
                    attribute: Some((*attribute).to_owned()),
                    kind: DecodeErrorKind::Encryption(e),
                });
            }
        }
    }
    Ok(())
}

/// The value an envelope holds, if it authenticates for `binding`.
fn open_value(
    keys: Option<&dyn KeyProvider>,
    binding: &Binding<'_>,
    stored: &AttributeValue,
) -> Result<AttributeValue, EncryptionError> {
    let AttributeValue::B(blob) = stored else {
        return Err(EncryptionError::Malformed("not a binary attribute"));
    };
    let bytes = blob.as_ref();
    let (&format, rest) = bytes
        .split_first()
        .ok_or(EncryptionError::Malformed("empty"))?;
    if format != FORMAT_VERSION {
        return Err(EncryptionError::Malformed("unknown format version"));
    }
    let (&id_len, rest) = rest
        .split_first()
        .ok_or(EncryptionError::Malformed("truncated"))?;
    let id_len = usize::from(id_len);
    if id_len == 0 || rest.len() < id_len + NONCE_LEN + TAG_LEN {
        return Err(EncryptionError::Malformed("truncated"));
    }
    let (id, rest) = rest.split_at(id_len);
    let (nonce, sealed) = rest.split_at(NONCE_LEN);
    let id = std::str::from_utf8(id).map_err(|_| EncryptionError::Malformed("key id"))?;
    let keys = keys.ok_or(EncryptionError::NoKeys)?;
    let data_key = keys
        .key(id)
        .ok_or_else(|| EncryptionError::UnknownKey(id.to_owned()))?;
    let nonce =
        Nonce::try_assume_unique_for_key(nonce).map_err(|_| EncryptionError::Malformed("nonce"))?;
    let mut buffer = sealed.to_vec();
    let plain = data_key
        .aead()
        .open_in_place(nonce, Aad::from(binding.aad()), &mut buffer)
        .map_err(|_| EncryptionError::Rejected)?;
    let mut reader = Reader { bytes: plain };
    let value = reader.value(0).map_err(EncryptionError::Malformed)?;
    if !reader.bytes.is_empty() {
        return Err(EncryptionError::Malformed("trailing bytes"));
    }
    Ok(value)
}

/// Appends `bytes` with a 4-byte big-endian length. Items are at most 400 KB, so every
/// length fits.
fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

fn put_count(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&(n as u32).to_be_bytes());
}

/// The canonical serialisation of a value: a type tag, then its content, lengths and
/// counts first (map entries ordered by name, so equal values serialise alike).
pub(super) fn serialise(out: &mut Vec<u8>, value: &AttributeValue) -> Result<(), &'static str> {
    match value {
        AttributeValue::S(s) => tagged(out, 1, s.as_bytes()),
        AttributeValue::N(n) => tagged(out, 2, n.as_bytes()),
        AttributeValue::B(b) => tagged(out, 3, b.as_ref()),
        AttributeValue::Bool(b) => out.extend_from_slice(&[4, u8::from(*b)]),
        AttributeValue::Null(b) => out.extend_from_slice(&[5, u8::from(*b)]),
        AttributeValue::L(list) => {
            out.push(6);
            put_count(out, list.len());
            for v in list {
                serialise(out, v)?;
            }
        }
        AttributeValue::M(map) => {
            out.push(7);
            put_count(out, map.len());
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            for (k, v) in entries {
                put_bytes(out, k.as_bytes());
                serialise(out, v)?;
            }
        }
        AttributeValue::Ss(set) => strings(out, 8, set.iter().map(|s| s.as_bytes())),
        AttributeValue::Ns(set) => strings(out, 9, set.iter().map(|s| s.as_bytes())),
        AttributeValue::Bs(set) => strings(out, 10, set.iter().map(|b| b.as_ref())),
        _ => return Err("an attribute type this build does not know"),
    }
    Ok(())
}

fn tagged(out: &mut Vec<u8>, tag: u8, bytes: &[u8]) {
    out.push(tag);
    put_bytes(out, bytes);
}

fn strings<'a>(out: &mut Vec<u8>, tag: u8, items: impl ExactSizeIterator<Item = &'a [u8]>) {
    out.push(tag);
    put_count(out, items.len());
    for item in items {
        put_bytes(out, item);
    }
}

/// Reads what [`serialise`] wrote; any other input is an error, never a panic.
pub(super) struct Reader<'a> {
    pub(super) bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], &'static str> {
        if self.bytes.len() < n {
            return Err("truncated value");
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn byte(&mut self) -> Result<u8, &'static str> {
        Ok(self.take(1)?[0])
    }

    fn count(&mut self) -> Result<usize, &'static str> {
        let b = self.take(4)?;
        let n = u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize;
        // Every element takes a byte at least: a larger count is not a value.
        if n > self.bytes.len() {
            return Err("truncated value");
        }
        Ok(n)
    }

    fn bytes(&mut self) -> Result<&'a [u8], &'static str> {
        let n = self.count()?;
        self.take(n)
    }

    fn text(&mut self) -> Result<String, &'static str> {
        std::str::from_utf8(self.bytes()?)
            .map(str::to_owned)
            .map_err(|_| "text that is not UTF-8")
    }

    fn flag(&mut self) -> Result<bool, &'static str> {
        match self.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err("a flag other than 0 or 1"),
        }
    }

    pub(super) fn value(&mut self, depth: usize) -> Result<AttributeValue, &'static str> {
        if depth > MAX_DEPTH {
            return Err("nested too deep");
        }
        Ok(match self.byte()? {
            1 => AttributeValue::S(self.text()?),
            2 => AttributeValue::N(self.text()?),
            3 => AttributeValue::B(Blob::new(self.bytes()?)),
            4 => AttributeValue::Bool(self.flag()?),
            5 => AttributeValue::Null(self.flag()?),
            6 => {
                let n = self.count()?;
                let mut list = Vec::with_capacity(n);
                for _ in 0..n {
                    list.push(self.value(depth + 1)?);
                }
                AttributeValue::L(list)
            }
            7 => {
                let n = self.count()?;
                let mut map = std::collections::HashMap::with_capacity(n);
                for _ in 0..n {
                    let k = self.text()?;
                    map.insert(k, self.value(depth + 1)?);
                }
                AttributeValue::M(map)
            }
            8 => AttributeValue::Ss(self.list(Self::text)?),
            9 => AttributeValue::Ns(self.list(Self::text)?),
            10 => AttributeValue::Bs(self.list(|r| r.bytes().map(Blob::new))?),
            _ => return Err("unknown type tag"),
        })
    }

    fn list<T>(
        &mut self,
        mut item: impl FnMut(&mut Self) -> Result<T, &'static str>,
    ) -> Result<Vec<T>, &'static str> {
        let n = self.count()?;
        (0..n).map(|_| item(self)).collect()
    }
}
