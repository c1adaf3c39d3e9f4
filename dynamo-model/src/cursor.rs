//! Opaque pagination cursors bound to the query that produced them.
//!
//! A cursor carries DynamoDB's `LastEvaluatedKey` together with a fingerprint of the query
//! (table, index, result type, key condition, direction) and a checksum over both. Using a
//! cursor with another query, or altering one, is a [`CursorError`] rather than a silent
//! jump into another part of the table. With [`Db::with_cursor_secret`](crate::Db::with_cursor_secret)
//! the checksum is keyed, so clients holding cursors cannot forge them either.
//!
//! A read merged from many partitions ([`ScatterQuery`](dynamo_model::read::ScatterQuery)) has
//! one cursor too: a position per partition under the same fingerprint and checksum,
//! in a body of its own version, so neither kind of cursor is taken for the other.

use crate::Item;
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use std::fmt;

const VERSION: u8 = 1;
/// The body of a merged read's cursor: one position per source.
const MERGED_VERSION: u8 = 2;
const FINGERPRINT_LEN: usize = 16;
const MAC_LEN: usize = 16;

pub use crate::error::CursorError;

/// An opaque position in a query's or scan's results. Print it (`to_string`) to hand it
/// to a client; parse it back with `Cursor::from(string)`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Cursor(String);

impl Cursor {
    /// The cursor as a URL-safe string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Cursor({})", self.0)
    }
}

impl From<String> for Cursor {
    fn from(s: String) -> Self {
        Cursor(s)
    }
}

impl From<&str> for Cursor {
    fn from(s: &str) -> Self {
        Cursor(s.to_owned())
    }
}

/// Identifies a query for cursor binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fingerprint([u8; FINGERPRINT_LEN]);

impl Fingerprint {
    /// The digest's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// The fingerprint's bytes, to bind a merged read to the fingerprints of its parts.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Hashes the parts that define which items a query walks through, in which order.
    pub(crate) fn of(parts: &[&[u8]]) -> Self {
        let mut h = Sha256::new();
        for part in parts {
            // Length-prefixed, so ("ab","c") and ("a","bc") differ.
            h.update((part.len() as u64).to_be_bytes());
            h.update(part);
        }
        let digest = h.finalize();
        let mut out = [0u8; FINGERPRINT_LEN];
        out.copy_from_slice(&digest[..FINGERPRINT_LEN]);
        Fingerprint(out)
    }
}

type HmacSha256 = hmac::Hmac<Sha256>;

fn keyed(secret: &[u8], body: &[u8]) -> HmacSha256 {
    use hmac::Mac;
    // HMAC accepts keys of any length, the empty one included.
    let mut mac = <HmacSha256 as Mac>::new_from_slice(secret)
        .unwrap_or_else(|_| <HmacSha256 as Mac>::new(&Default::default()));
    mac.update(body);
    mac
}

/// HMAC-SHA256 of the body, truncated to `MAC_LEN` bytes.
fn mac(secret: &[u8], body: &[u8]) -> [u8; MAC_LEN] {
    use hmac::Mac;
    let digest = keyed(secret, body).finalize().into_bytes();
    let mut out = [0u8; MAC_LEN];
    out.copy_from_slice(&digest[..MAC_LEN]);
    out
}

/// Constant-time check of a truncated tag, so timing reveals nothing about the right one.
fn verify(secret: &[u8], body: &[u8], tag: &[u8]) -> bool {
    use hmac::Mac;
    keyed(secret, body).verify_truncated_left(tag).is_ok()
}

pub(crate) fn encode(fingerprint: Fingerprint, key: &Item, secret: &[u8]) -> Cursor {
    let mut body = vec![VERSION];
    body.extend_from_slice(&fingerprint.0);
    write_key(&mut body, key);
    seal(body, secret)
}

/// Where one source of a merged read stands.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq)]
pub enum Position {
    /// Nothing read yet: the next read starts at the beginning.
    Start,
    /// The next read starts after this key (`ExclusiveStartKey`).
    After(Item),
    /// Nothing is left to read.
    Done,
}

/// A merged read's cursor: the position of each source, bound to `fingerprint`.
pub(crate) fn encode_positions(
    fingerprint: Fingerprint,
    positions: &[Position],
    secret: &[u8],
) -> Cursor {
    let mut body = vec![MERGED_VERSION];
    body.extend_from_slice(&fingerprint.0);
    body.extend_from_slice(&(positions.len() as u32).to_be_bytes());
    for position in positions {
        match position {
            Position::Start => body.push(0),
            Position::After(key) => {
                body.push(1);
                write_key(&mut body, key);
            }
            Position::Done => body.push(2),
        }
    }
    seal(body, secret)
}

/// The key's attributes, sorted by name, each length-prefixed.
fn write_key(body: &mut Vec<u8>, key: &Item) {
    let mut attrs: Vec<(&String, &AttributeValue)> = key.iter().collect();
    attrs.sort_by(|a, b| a.0.cmp(b.0));
    body.push(attrs.len() as u8);
    for (name, value) in attrs {
        let (tag, bytes): (u8, &[u8]) = match value {
            AttributeValue::S(s) => (0, s.as_bytes()),
            AttributeValue::N(n) => (1, n.as_bytes()),
            AttributeValue::B(b) => (2, b.as_ref()),
            // Key attributes are always S, N or B (DynamoDB rule).
            _ => (0, &[]),
        };
        body.extend_from_slice(&(name.len() as u32).to_be_bytes());
        body.extend_from_slice(name.as_bytes());
        body.push(tag);
        body.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
        body.extend_from_slice(bytes);
    }
}

/// The body with its checksum, as a URL-safe string.
fn seal(mut body: Vec<u8>, secret: &[u8]) -> Cursor {
    let tag = mac(secret, &body);
    body.extend_from_slice(&tag);
    Cursor(URL_SAFE_NO_PAD.encode(body))
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], CursorError> {
        if self.0.len() < n {
            return Err(CursorError::Malformed("truncated"));
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Ok(head)
    }
    fn u32(&mut self) -> Result<usize, CursorError> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }
}

/// The checked body of a cursor of body version `version` and fingerprint `expected`,
/// after both: a cursor of the other kind (a merged read's given to a query, or the
/// reverse) is from another query.
fn open<'a>(
    raw: &'a [u8],
    version: u8,
    expected: Fingerprint,
    secret: &[u8],
) -> Result<Reader<'a>, CursorError> {
    if raw.len() < 1 + FINGERPRINT_LEN + 1 + MAC_LEN {
        return Err(CursorError::Malformed("too short"));
    }
    let (body, tag) = raw.split_at(raw.len() - MAC_LEN);
    if !verify(secret, body, tag) {
        return Err(CursorError::Tampered);
    }
    let mut r = Reader(body);
    match r.take(1)?[0] {
        v if v == version => {}
        VERSION | MERGED_VERSION => return Err(CursorError::WrongQuery),
        _ => return Err(CursorError::Malformed("unknown version")),
    }
    if r.take(FINGERPRINT_LEN)? != expected.0 {
        return Err(CursorError::WrongQuery);
    }
    Ok(r)
}

fn base64(cursor: &Cursor) -> Result<Vec<u8>, CursorError> {
    URL_SAFE_NO_PAD
        .decode(cursor.0.as_bytes())
        .map_err(|_| CursorError::Malformed("not base64url"))
}

pub(crate) fn decode(
    cursor: &Cursor,
    expected: Fingerprint,
    secret: &[u8],
) -> Result<Item, CursorError> {
    let raw = base64(cursor)?;
    let mut r = open(&raw, VERSION, expected, secret)?;
    let key = read_key(&mut r)?;
    if !r.0.is_empty() {
        return Err(CursorError::Malformed("trailing bytes"));
    }
    Ok(key)
}

/// The positions of a merged read's cursor, which must hold exactly `sources` of them.
pub(crate) fn decode_positions(
    cursor: &Cursor,
    expected: Fingerprint,
    sources: usize,
    secret: &[u8],
) -> Result<Vec<Position>, CursorError> {
    let raw = base64(cursor)?;
    let mut r = open(&raw, MERGED_VERSION, expected, secret)?;
    if r.u32()? != sources {
        return Err(CursorError::WrongQuery);
    }
    let mut positions = Vec::with_capacity(sources.min(1024));
    for _ in 0..sources {
        positions.push(match r.take(1)?[0] {
            0 => Position::Start,
            1 => Position::After(read_key(&mut r)?),
            2 => Position::Done,
            _ => return Err(CursorError::Malformed("unknown position")),
        });
    }
    if !r.0.is_empty() {
        return Err(CursorError::Malformed("trailing bytes"));
    }
    Ok(positions)
}

fn read_key(r: &mut Reader<'_>) -> Result<Item, CursorError> {
    let count = r.take(1)?[0];
    let mut key = Item::new();
    for _ in 0..count {
        let len = r.u32()?;
        let name = std::str::from_utf8(r.take(len)?)
            .map_err(|_| CursorError::Malformed("attribute name is not UTF-8"))?;
        let tag = r.take(1)?[0];
        let len = r.u32()?;
        let bytes = r.take(len)?;
        let value = match tag {
            0 | 1 => {
                let s = std::str::from_utf8(bytes)
                    .map_err(|_| CursorError::Malformed("value is not UTF-8"))?
                    .to_owned();
                if tag == 0 {
                    AttributeValue::S(s)
                } else {
                    AttributeValue::N(s)
                }
            }
            2 => AttributeValue::B(Blob::new(bytes.to_vec())),
            _ => return Err(CursorError::Malformed("unknown value type")),
        };
        key.insert(name.to_owned(), value);
    }
    Ok(key)
}

/// The codec of both kinds of cursor under a given fingerprint, for the fuzz targets of
/// the `reliability` crate (which must seal the bodies they decode). Not an API.
#[doc(hidden)]
pub mod codec {
    use super::*;

    /// `body` with its checksum under `secret`: a cursor whose body is `body` as it is.
    pub fn seal(body: Vec<u8>, secret: &[u8]) -> Cursor {
        super::seal(body, secret)
    }

    /// A query's cursor of `key`.
    pub fn encode(fingerprint: [u8; FINGERPRINT_LEN], key: &Item, secret: &[u8]) -> Cursor {
        super::encode(Fingerprint(fingerprint), key, secret)
    }

    /// The key of a query's cursor.
    pub fn decode(
        cursor: &Cursor,
        fingerprint: [u8; FINGERPRINT_LEN],
        secret: &[u8],
    ) -> Result<Item, CursorError> {
        super::decode(cursor, Fingerprint(fingerprint), secret)
    }

    /// A merged read's cursor of `positions`.
    pub fn encode_positions(
        fingerprint: [u8; FINGERPRINT_LEN],
        positions: &[Position],
        secret: &[u8],
    ) -> Cursor {
        super::encode_positions(Fingerprint(fingerprint), positions, secret)
    }

    /// The positions of a merged read's cursor of `sources` sources.
    pub fn decode_positions(
        cursor: &Cursor,
        fingerprint: [u8; FINGERPRINT_LEN],
        sources: usize,
        secret: &[u8],
    ) -> Result<Vec<Position>, CursorError> {
        super::decode_positions(cursor, Fingerprint(fingerprint), sources, secret)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key(pk: &str, sk: &str) -> Item {
        Item::from([
            ("PK".to_string(), AttributeValue::S(pk.into())),
            ("SK".to_string(), AttributeValue::S(sk.into())),
            ("N".to_string(), AttributeValue::N("42".into())),
        ])
    }

    #[test]
    fn round_trips_and_is_bound_to_its_query() {
        let fp = Fingerprint::of(&[b"table", b"USER#1"]);
        let other = Fingerprint::of(&[b"table", b"USER#2"]);
        let k = key("USER#1", "ORDER#5");
        let c = encode(fp, &k, b"");
        assert_eq!(decode(&c, fp, b""), Ok(k));
        assert_eq!(decode(&c, other, b""), Err(CursorError::WrongQuery));
        assert_eq!(decode(&c, fp, b"secret"), Err(CursorError::Tampered));
        assert!(matches!(
            decode(&Cursor::from("!!"), fp, b""),
            Err(CursorError::Malformed(_))
        ));
    }

    #[test]
    fn positions_round_trip_and_are_bound_to_their_read_and_its_size() {
        let fp = Fingerprint::of(&[b"scatter", b"4"]);
        let positions = vec![
            Position::Start,
            Position::After(key("", "ORDER#5")),
            Position::Done,
            Position::After(Item::new()),
        ];
        let c = encode_positions(fp, &positions, b"s");
        assert_eq!(decode_positions(&c, fp, 4, b"s"), Ok(positions.clone()));
        // Another number of partitions, another read, another secret.
        assert_eq!(
            decode_positions(&c, fp, 3, b"s"),
            Err(CursorError::WrongQuery)
        );
        assert_eq!(
            decode_positions(&c, fp, 5, b"s"),
            Err(CursorError::WrongQuery)
        );
        let other = Fingerprint::of(&[b"scatter", b"5"]);
        assert_eq!(
            decode_positions(&c, other, 4, b"s"),
            Err(CursorError::WrongQuery)
        );
        assert_eq!(decode_positions(&c, fp, 4, b""), Err(CursorError::Tampered));
        // A query's cursor is not a merged read's, nor the reverse, even under one
        // fingerprint.
        let single = encode(fp, &key("USER#1", "ORDER#5"), b"s");
        assert_eq!(
            decode_positions(&single, fp, 1, b"s"),
            Err(CursorError::WrongQuery)
        );
        assert_eq!(decode(&c, fp, b"s"), Err(CursorError::WrongQuery));
    }

    proptest! {
        #[test]
        fn any_single_byte_change_of_positions_is_detected(
            sks in prop::collection::vec(prop::option::of("\\PC{0,12}"), 1..6),
            at in any::<prop::sample::Index>(),
            bit in 0u8..8,
        ) {
            let fp = Fingerprint::of(&[b"t"]);
            let positions: Vec<Position> = sks
                .iter()
                .map(|sk| match sk {
                    Some(sk) => Position::After(key("", sk)),
                    None => Position::Done,
                })
                .collect();
            let c = encode_positions(fp, &positions, b"k");
            prop_assert_eq!(decode_positions(&c, fp, positions.len(), b"k"), Ok(positions.clone()));
            let mut raw = URL_SAFE_NO_PAD.decode(c.as_str()).unwrap();
            let i = at.index(raw.len());
            raw[i] ^= 1 << bit;
            let altered = Cursor(URL_SAFE_NO_PAD.encode(&raw));
            prop_assert!(decode_positions(&altered, fp, positions.len(), b"k").is_err());
        }

        #[test]
        fn decoding_arbitrary_text_as_positions_never_panics(s in "\\PC{0,200}", n in 0usize..10) {
            let _ = decode_positions(&Cursor::from(s.as_str()), Fingerprint::of(&[]), n, b"");
        }

        #[test]
        fn any_single_byte_change_is_detected(pk in "\\PC{1,20}", sk in "\\PC{0,20}", at in any::<prop::sample::Index>(), bit in 0u8..8) {
            let fp = Fingerprint::of(&[b"t"]);
            let c = encode(fp, &key(&pk, &sk), b"k");
            let mut raw = URL_SAFE_NO_PAD.decode(c.as_str()).unwrap();
            let i = at.index(raw.len());
            raw[i] ^= 1 << bit;
            let altered = Cursor(URL_SAFE_NO_PAD.encode(&raw));
            prop_assert!(decode(&altered, fp, b"k").is_err());
        }

        #[test]
        fn decoding_arbitrary_text_never_panics(s in "\\PC{0,200}") {
            let _ = decode(&Cursor::from(s.as_str()), Fingerprint::of(&[]), b"");
        }
    }
}
