//! Compressed attributes: `#[dynamo(compress = "zstd")]` and `#[dynamo(compress = "gzip")]`.
//!
//! DynamoDB caps an item at 400 KB and charges reads per 4 KB and writes per 1 KB of item
//! size, binary attributes counted by their raw bytes: a long text stored compressed costs
//! less to read and write and fits where the plain text would not.
//!
//! ```
//! # #[cfg(all(feature = "zstd", feature = "gzip"))] mod demo {
//! use dynamo_model::{Entity, Table};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Table)]
//! #[dynamo(pk = "PK", sk = "SK")]
//! struct App;
//!
//! #[derive(Serialize, Deserialize)]
//! struct Meta { words: u32, tags: Vec<String> }
//!
//! #[derive(Entity)]
//! #[dynamo(table = App, pk = "POST#{id}", sk = "POST")]
//! struct Post {
//!     id: String,
//!     // Values of 256 bytes or more are stored with zstd at level 3.
//!     #[dynamo(compress = "zstd")]
//!     body: String,
//!     // Every option spelled out.
//!     #[dynamo(compress(codec = "gzip", level = 9, threshold = 1024, max_size = 1048576))]
//!     attachment: Option<Vec<u8>>,
//!     // Serialised to JSON by serde_json, then compressed.
//!     #[dynamo(serde, compress = "zstd")]
//!     meta: Meta,
//! }
//! # }
//! ```
//!
//! Field options: `codec` (`"zstd"`, feature `zstd`; `"gzip"`, feature `gzip`; a field
//! naming a codec whose feature is off does not compile), `level` (zstd 1 to 22, default
//! 3; gzip 1 to 9, default 6), `threshold` (bytes, default [`DEFAULT_THRESHOLD`]: shorter
//! values are stored as they are, since compressing them saves nothing worth the CPU) and
//! `max_size` (bytes, default [`DEFAULT_MAX_SIZE`]: the most a stored value may
//! decompress to, so a hostile item cannot exhaust memory).
//!
//! Field types: `String`, `Vec<u8>`, [`Binary`], an `Option` of one of them (`None` is not
//! stored), and with `#[dynamo(serde)]` any serde type. A compressed field can be neither
//! a key nor an index key, nor the `version` or `ttl` field.
//!
//! # Stored format
//!
//! A compressed field is a binary (`B`) attribute. Other programs reading the table
//! decode it as follows; every tag is read whatever codec the field names now, so the
//! codec (or the level or threshold) can change at any time without rewriting items.
//!
//! | byte 0 (tag) | bytes 1.. (payload)                                              |
//! |--------------|------------------------------------------------------------------|
//! | `0`          | the value itself, uncompressed                                    |
//! | `1`          | a Zstandard frame (RFC 8878) holding the value, with its checksum |
//! | `2`          | a gzip member (RFC 1952) holding the value                       |
//!
//! Tag 0 is written when the value is shorter than the threshold, and when compressing
//! does not make it smaller (random bytes, already compressed data). Other tags are
//! reserved: a reader meeting one fails with [`DecompressError::UnknownTag`].
//!
//! The value is: the UTF-8 bytes of a `String`; the bytes of a `Vec<u8>` or [`Binary`];
//! the JSON text of a `#[dynamo(serde)]` value, as `serde_json` writes it (JSON has no NaN
//! or infinity: `serde_json` writes a non-finite float as `null`, which then does not read
//! back as a float, so keep such values out of compressed serde fields).
//!
//! # Values written before `compress` was added
//!
//! Adding `compress` to a field does not require rewriting its items: a `String` field
//! also reads a plain string (`S`) attribute, a `Vec<u8>` field the list of numbers (`L`)
//! the crate writes for an uncompressed `Vec<u8>`, and a serde field the attribute
//! `serde_dynamo` wrote. The next write stores the compressed form. A [`Binary`] field
//! stored before as a plain `B` attribute cannot be told apart from a compressed one (its
//! first byte would be read as a tag): rewrite those items (read them with the old
//! definition, write them with the new) before adding `compress`.
//!
//! # Errors
//!
//! Reading a damaged value never panics: an empty attribute, an unknown tag, a corrupt or
//! truncated payload, a value decompressing to more than `max_size` bytes, a codec this
//! build does not include, or bytes that are not UTF-8 for a `String` fail with
//! [`DecodeErrorKind::Decompress`] naming the
//! attribute. The compressed size is what counts against the 400 KB item limit: a value
//! still too large after compression is refused before sending with
//! [`ValidationReason::ItemTooLarge`](crate::ValidationReason::ItemTooLarge).
//!
//! # Conditions and updates
//!
//! A compressed field's typed path is a [`CompressedPath`]: stored bytes cannot be
//! compared with a value, so it offers `exists` and `not_exists` only; an update's `set`
//! and `remove` take it, and `set` compresses the new value exactly as a put does.
//!
//! [`CompressedPath`]: crate::CompressedPath

use crate::codec::{AttrValue, Binary, EncodeError, Serde};
use crate::error::DecodeErrorKind;
pub use crate::error::DecompressError;
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue;
use std::borrow::Cow;

/// Values shorter than this many bytes are stored uncompressed unless the field sets its
/// own `threshold`.
pub const DEFAULT_THRESHOLD: usize = 256;

/// The most a stored value may decompress to unless the field sets its own `max_size`:
/// 64 MiB, far above anything an item (400 KB compressed) holds in practice, low enough
/// that a hostile item cannot exhaust memory.
pub const DEFAULT_MAX_SIZE: usize = 64 * 1024 * 1024;

/// Tag of a value stored as it is.
pub(crate) const TAG_RAW: u8 = 0;
/// Tag of a Zstandard frame.
pub(crate) const TAG_ZSTD: u8 = 1;
/// Tag of a gzip member.
pub(crate) const TAG_GZIP: u8 = 2;

/// Whether this build includes the zstd codec (feature `zstd`).
pub const ZSTD_AVAILABLE: bool = cfg!(feature = "zstd");
/// Whether this build includes the gzip codec (feature `gzip`).
pub const GZIP_AVAILABLE: bool = cfg!(feature = "gzip");

/// A compression codec and its level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Codec {
    /// Zstandard (feature `zstd`), level 1 (fastest) to 22 (smallest).
    Zstd {
        /// The compression level.
        level: i32,
    },
    /// gzip (feature `gzip`), level 1 (fastest) to 9 (smallest).
    Gzip {
        /// The compression level.
        level: u32,
    },
}

/// How one field is compressed: its codec, threshold and decompression bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compression {
    /// The codec new values are written with (any codec is read).
    pub codec: Codec,
    /// Values shorter than this many bytes are stored uncompressed (tag 0).
    pub threshold: usize,
    /// The most a stored value may decompress to.
    pub max_size: usize,
}

impl Compression {
    /// The codec with the default threshold and bound.
    pub const fn new(codec: Codec) -> Self {
        Compression {
            codec,
            threshold: DEFAULT_THRESHOLD,
            max_size: DEFAULT_MAX_SIZE,
        }
    }
}

// ---------------------------------------------------------------- bytes

/// The stored form of `bytes`: tag 0 and the bytes when they are shorter than
/// `threshold` or do not shrink, else the codec's tag and the compressed bytes.
///
/// Never fails: a codec error (none is expected compressing into memory) or a codec this
/// build lacks stores the bytes uncompressed, which every reader reads.
pub(crate) fn encode(codec: Codec, threshold: usize, bytes: &[u8]) -> Vec<u8> {
    if bytes.len() >= threshold
        && let Some(compressed) = compress(codec, bytes)
    {
        // Compressed output includes its tag; the raw form costs one byte more than
        // the bytes. Keep whichever is smaller.
        if compressed.len() < bytes.len() + 1 {
            return compressed;
        }
    }
    let mut out = Vec::with_capacity(bytes.len() + 1);
    out.push(TAG_RAW);
    out.extend_from_slice(bytes);
    out
}

/// The tag and compressed bytes, or `None` when the codec is unavailable or failed.
fn compress(codec: Codec, bytes: &[u8]) -> Option<Vec<u8>> {
    match codec {
        #[cfg(feature = "zstd")]
        Codec::Zstd { level } => {
            use std::io::Write;
            let mut out = Vec::with_capacity(bytes.len() / 2 + 16);
            out.push(TAG_ZSTD);
            let mut encoder = zstd::stream::write::Encoder::new(out, level).ok()?;
            // The frame records the value's size, so readers can size their buffer.
            encoder
                .set_pledged_src_size(Some(bytes.len() as u64))
                .ok()?;
            encoder.include_contentsize(true).ok()?;
            // A content checksum (4 bytes), as gzip always has: a damaged payload is a
            // decode error, never a silently different value.
            encoder.include_checksum(true).ok()?;
            encoder.write_all(bytes).ok()?;
            encoder.finish().ok()
        }
        #[cfg(feature = "gzip")]
        Codec::Gzip { level } => {
            use std::io::Write;
            let mut out = Vec::with_capacity(bytes.len() / 2 + 32);
            out.push(TAG_GZIP);
            let mut encoder =
                flate2::write::GzEncoder::new(out, flate2::Compression::new(level.min(9)));
            encoder.write_all(bytes).ok()?;
            encoder.finish().ok()
        }
        #[allow(unreachable_patterns)]
        _ => {
            let _ = bytes;
            None
        }
    }
}

/// The value stored in `stored` (tag and payload), at most `max` bytes long.
pub(crate) fn decode(stored: &[u8], max: usize) -> Result<Cow<'_, [u8]>, DecompressError> {
    let (&tag, payload) = stored.split_first().ok_or(DecompressError::Empty)?;
    match tag {
        TAG_RAW if payload.len() > max => Err(DecompressError::TooLarge { max }),
        TAG_RAW => Ok(Cow::Borrowed(payload)),
        TAG_ZSTD => zstd_decode(payload, max).map(Cow::Owned),
        TAG_GZIP => gzip_decode(payload, max).map(Cow::Owned),
        other => Err(DecompressError::UnknownTag(other)),
    }
}

/// [`decode`] taking the stored bytes: an uncompressed value is moved, not copied.
fn decode_owned(mut stored: Vec<u8>, max: usize) -> Result<Vec<u8>, DecompressError> {
    if stored.first() == Some(&TAG_RAW) {
        if stored.len() - 1 > max {
            return Err(DecompressError::TooLarge { max });
        }
        stored.remove(0);
        return Ok(stored);
    }
    decode(&stored, max).map(Cow::into_owned)
}

/// Reads all of `reader` unless it yields more than `max` bytes.
#[cfg(any(feature = "zstd", feature = "gzip"))]
fn read_bounded(
    reader: &mut impl std::io::Read,
    max: usize,
    capacity: usize,
    codec: &'static str,
) -> Result<Vec<u8>, DecompressError> {
    let mut out = Vec::with_capacity(capacity.min(max));
    // One byte past the bound tells "exactly max" from "more than max" without
    // decompressing the rest of a bomb.
    let limit = (max as u64).saturating_add(1);
    std::io::Read::read_to_end(&mut std::io::Read::take(reader, limit), &mut out).map_err(|e| {
        DecompressError::Corrupt {
            codec,
            message: e.to_string(),
        }
    })?;
    if out.len() > max {
        return Err(DecompressError::TooLarge { max });
    }
    Ok(out)
}

#[cfg(feature = "zstd")]
fn zstd_decode(payload: &[u8], max: usize) -> Result<Vec<u8>, DecompressError> {
    let corrupt = |e: std::io::Error| DecompressError::Corrupt {
        codec: "zstd",
        message: e.to_string(),
    };
    let mut decoder = zstd::stream::read::Decoder::with_buffer(payload).map_err(corrupt)?;
    // A frame may ask for a window up to 2 GiB (allocated up front): allow no more than
    // the bound needs, so the bound also caps the decoder's memory.
    // (A bound past the largest power of two of `usize` needs the largest window.)
    let window_log = max
        .max(1024)
        .checked_next_power_of_two()
        .map_or(31, |p| usize::BITS - p.leading_zeros() - 1);
    decoder
        .window_log_max(window_log.min(31))
        .map_err(corrupt)?;
    // The declared size is only a hint for the first allocation (it may lie).
    let hint = zstd::zstd_safe::get_frame_content_size(payload)
        .ok()
        .flatten()
        .map_or(payload.len() * 4, |n| usize::try_from(n).unwrap_or(max));
    read_bounded(
        &mut decoder,
        max,
        first_allocation(hint, payload.len()),
        "zstd",
    )
}

/// The first allocation for a payload of `compressed` bytes declaring `hint` bytes: the
/// hint, but no more than 64 times the payload plus 64 KiB, so a few hostile bytes
/// declaring a huge size cannot make a large allocation before anything is decoded (a
/// value that really is that large grows its buffer as it is read).
#[cfg(any(feature = "zstd", feature = "gzip"))]
fn first_allocation(hint: usize, compressed: usize) -> usize {
    hint.min(compressed.saturating_mul(64).saturating_add(64 * 1024))
}

#[cfg(not(feature = "zstd"))]
fn zstd_decode(_: &[u8], _: usize) -> Result<Vec<u8>, DecompressError> {
    Err(DecompressError::CodecUnavailable { codec: "zstd" })
}

#[cfg(feature = "gzip")]
fn gzip_decode(payload: &[u8], max: usize) -> Result<Vec<u8>, DecompressError> {
    let mut decoder = flate2::bufread::GzDecoder::new(payload);
    // The gzip trailer holds the size modulo 2^32: a hint for the first allocation only.
    let hint = payload
        .len()
        .checked_sub(4)
        .and_then(|at| payload.get(at..))
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map_or(0, |b| u32::from_le_bytes(b) as usize);
    let out = read_bounded(
        &mut decoder,
        max,
        first_allocation(hint, payload.len()),
        "gzip",
    )?;
    // The value is one gzip member: bytes after it mean the attribute was damaged or
    // written by something else.
    if !decoder.into_inner().is_empty() {
        return Err(DecompressError::Corrupt {
            codec: "gzip",
            message: "bytes after the end of the gzip member".into(),
        });
    }
    Ok(out)
}

#[cfg(not(feature = "gzip"))]
fn gzip_decode(_: &[u8], _: usize) -> Result<Vec<u8>, DecompressError> {
    Err(DecompressError::CodecUnavailable { codec: "gzip" })
}

// ---------------------------------------------------------------- values

/// A field type `#[dynamo(compress)]` can store: `String`, `Vec<u8>`, [`Binary`], an
/// `Option` of one of them, and [`Serde`] (what `#[dynamo(serde, compress = ..)]` uses).
/// Sealed: implemented by the crate only.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be stored compressed",
    label = "#[dynamo(compress)] field",
    note = "compress stores String, Vec<u8>, Binary or an Option of one of them; add #[dynamo(serde)] to compress any serde type as JSON"
)]
pub trait Compressible: Sized + crate::sealed::Compressible {
    /// The bytes to store, or `None` for an absent value (not stored at all).
    #[doc(hidden)]
    fn __bytes(&self) -> Result<Option<Cow<'_, [u8]>>, EncodeError>;
    /// The value from its decompressed bytes.
    #[doc(hidden)]
    fn __from_bytes(bytes: Vec<u8>) -> Result<Self, DecodeErrorKind>;
    /// The value from an attribute other than `B`: written before the field was
    /// compressed, or `NULL` for an absent option.
    #[doc(hidden)]
    fn __from_plain(value: AttributeValue) -> Result<Self, DecodeErrorKind>;
    /// The value of a missing attribute.
    #[doc(hidden)]
    fn __from_missing() -> Result<Self, DecodeErrorKind> {
        Err(DecodeErrorKind::Missing)
    }
}

impl crate::sealed::Compressible for String {}
impl crate::sealed::Compressible for Vec<u8> {}
impl crate::sealed::Compressible for Binary {}
impl<T: Compressible> crate::sealed::Compressible for Option<T> {}
impl<T: serde::Serialize + serde::de::DeserializeOwned> crate::sealed::Compressible for Serde<T> {}

#[cold]
fn wrong_type(found: &AttributeValue) -> DecodeErrorKind {
    DecodeErrorKind::WrongType {
        expected: "B",
        found: crate::codec::type_name(found),
    }
}

impl Compressible for String {
    fn __bytes(&self) -> Result<Option<Cow<'_, [u8]>>, EncodeError> {
        Ok(Some(Cow::Borrowed(self.as_bytes())))
    }
    fn __from_bytes(bytes: Vec<u8>) -> Result<Self, DecodeErrorKind> {
        String::from_utf8(bytes).map_err(|e| {
            DecompressError::NotUtf8 {
                valid_up_to: e.utf8_error().valid_up_to(),
            }
            .into()
        })
    }
    fn __from_plain(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        match value {
            // Written before the field was compressed.
            AttributeValue::S(s) => Ok(s),
            other => Err(wrong_type(&other)),
        }
    }
}

impl Compressible for Vec<u8> {
    fn __bytes(&self) -> Result<Option<Cow<'_, [u8]>>, EncodeError> {
        Ok(Some(Cow::Borrowed(self)))
    }
    fn __from_bytes(bytes: Vec<u8>) -> Result<Self, DecodeErrorKind> {
        Ok(bytes)
    }
    fn __from_plain(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        match value {
            // The list of numbers an uncompressed `Vec<u8>` field is stored as.
            list @ AttributeValue::L(_) => Vec::<u8>::from_attr(list),
            other => Err(wrong_type(&other)),
        }
    }
}

impl Compressible for Binary {
    fn __bytes(&self) -> Result<Option<Cow<'_, [u8]>>, EncodeError> {
        Ok(Some(Cow::Borrowed(&self.0)))
    }
    fn __from_bytes(bytes: Vec<u8>) -> Result<Self, DecodeErrorKind> {
        Ok(Binary(bytes))
    }
    fn __from_plain(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        Err(wrong_type(&value))
    }
}

impl<T: Compressible> Compressible for Option<T> {
    fn __bytes(&self) -> Result<Option<Cow<'_, [u8]>>, EncodeError> {
        match self {
            Some(v) => v.__bytes(),
            None => Ok(None),
        }
    }
    fn __from_bytes(bytes: Vec<u8>) -> Result<Self, DecodeErrorKind> {
        T::__from_bytes(bytes).map(Some)
    }
    fn __from_plain(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        match value {
            AttributeValue::Null(_) => Ok(None),
            other => T::__from_plain(other).map(Some),
        }
    }
    fn __from_missing() -> Result<Self, DecodeErrorKind> {
        Ok(None)
    }
}

impl<T: serde::Serialize + serde::de::DeserializeOwned> Compressible for Serde<T> {
    fn __bytes(&self) -> Result<Option<Cow<'_, [u8]>>, EncodeError> {
        serde_bytes(&self.0).map(|b| Some(Cow::Owned(b)))
    }
    fn __from_bytes(bytes: Vec<u8>) -> Result<Self, DecodeErrorKind> {
        serde_from_bytes(&bytes).map(Serde)
    }
    fn __from_plain(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        // Written by serde_dynamo before the field was compressed.
        Serde::<T>::from_attr(value)
    }
    fn __from_missing() -> Result<Self, DecodeErrorKind> {
        // As for an uncompressed serde field: a missing attribute is serde's `null`, so
        // an `Option` reads as `None`.
        serde_from_bytes(b"null").map(Serde)
    }
}

/// The JSON text of a serde value.
fn serde_bytes<T: serde::Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, EncodeError> {
    #[cfg(any(feature = "zstd", feature = "gzip"))]
    {
        serde_json::to_vec(value).map_err(|e| EncodeError::new(e.to_string()))
    }
    #[cfg(not(any(feature = "zstd", feature = "gzip")))]
    {
        let _ = value;
        Err(EncodeError::new(
            "compressed serde fields need feature `zstd` or `gzip` of dynamo-model",
        ))
    }
}

fn serde_from_bytes<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, DecodeErrorKind> {
    #[cfg(any(feature = "zstd", feature = "gzip"))]
    {
        serde_json::from_slice(bytes).map_err(|e| DecodeErrorKind::Invalid(e.to_string()))
    }
    #[cfg(not(any(feature = "zstd", feature = "gzip")))]
    {
        let _ = bytes;
        Err(DecodeErrorKind::Invalid(
            "compressed serde fields need feature `zstd` or `gzip` of dynamo-model".into(),
        ))
    }
}

/// The `B` attribute of some bytes; refused when they are over the field's `max_size`,
/// which every read of the field would refuse (a value is never written that cannot be
/// read back).
fn binary(bytes: &[u8], c: &Compression) -> Result<AttributeValue, EncodeError> {
    if bytes.len() > c.max_size {
        return Err(EncodeError::new(format!(
            "the value is {} bytes, over the field's max_size of {} bytes (reads refuse larger values); raise `max_size` in #[dynamo(compress(..))]",
            bytes.len(),
            c.max_size
        )));
    }
    Ok(AttributeValue::B(Blob::new(encode(
        c.codec,
        c.threshold,
        bytes,
    ))))
}

/// The attribute storing `value` compressed, or `None` when it is absent.
pub(crate) fn to_attr<T: Compressible>(
    value: &T,
    c: &Compression,
) -> Result<Option<AttributeValue>, EncodeError> {
    value.__bytes()?.map(|bytes| binary(&bytes, c)).transpose()
}

/// A serde value from its stored attribute: compressed JSON (`B`), what serde_dynamo
/// wrote before the field was compressed, or serde's `null` when missing.
pub(crate) fn serde_from_attr_opt<T: serde::de::DeserializeOwned>(
    value: Option<AttributeValue>,
    c: &Compression,
) -> Result<T, DecodeErrorKind> {
    match value {
        Some(AttributeValue::B(blob)) => {
            serde_from_bytes(&decode_owned(blob.into_inner(), c.max_size)?)
        }
        Some(other) => serde_dynamo::from_attribute_value(other)
            .map_err(|e| DecodeErrorKind::Invalid(e.to_string())),
        None => serde_from_bytes(b"null"),
    }
}

/// The attribute storing a serde value as compressed JSON.
pub(crate) fn serde_to_attr<T: serde::Serialize + ?Sized>(
    value: &T,
    c: &Compression,
) -> Result<AttributeValue, EncodeError> {
    binary(&serde_bytes(value)?, c)
}

/// The value of a stored attribute: `B` in the stored format, or what the field stored
/// before it was compressed.
pub(crate) fn from_attr<T: Compressible>(
    value: AttributeValue,
    c: &Compression,
) -> Result<T, DecodeErrorKind> {
    match value {
        AttributeValue::B(blob) => T::__from_bytes(decode_owned(blob.into_inner(), c.max_size)?),
        other => T::__from_plain(other),
    }
}

/// The value of an attribute that may be missing.
pub(crate) fn from_attr_opt<T: Compressible>(
    value: Option<AttributeValue>,
    c: &Compression,
) -> Result<T, DecodeErrorKind> {
    match value {
        Some(value) => from_attr(value, c),
        None => T::__from_missing(),
    }
}

#[cfg(test)]
mod tests;
