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

use crate::codec::{AttrValue, Binary, EncodeError, Serde};
use crate::error::DecodeErrorKind;
use crate::expr::{AttrPath, Condition};
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue;
use std::borrow::Cow;
use std::marker::PhantomData;

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

/// Why a stored compressed value could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecompressError {
    /// The attribute holds no byte at all, not even the tag.
    #[error("the value is empty: a compressed attribute starts with a tag byte")]
    Empty,
    /// The tag is none this crate writes (written by a newer version, or not by this
    /// crate at all).
    #[error("unknown compression tag {0}")]
    UnknownTag(u8),
    /// The value was compressed with a codec this build does not include.
    #[error(
        "the value is compressed with {codec}, which this build cannot read: enable feature `{codec}` of dynamo-model"
    )]
    CodecUnavailable {
        /// `"zstd"` or `"gzip"`, also the feature's name.
        codec: &'static str,
    },
    /// The payload is not a valid stream of its codec (corrupt or truncated).
    #[error("corrupt {codec} payload: {message}")]
    Corrupt {
        /// `"zstd"` or `"gzip"`.
        codec: &'static str,
        /// What the codec reported.
        message: String,
    },
    /// The value decompresses to more than the field's `max_size`.
    #[error("the value decompresses to more than {max} bytes")]
    TooLarge {
        /// The field's bound.
        max: usize,
    },
    /// The decompressed bytes of a `String` field are not UTF-8.
    #[error("the value is not UTF-8 (invalid byte at offset {valid_up_to})")]
    NotUtf8 {
        /// How many leading bytes are valid UTF-8.
        valid_up_to: usize,
    },
}

impl From<DecompressError> for DecodeErrorKind {
    fn from(e: DecompressError) -> Self {
        DecodeErrorKind::Decompress(e)
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
fn serde_from_attr_opt<T: serde::de::DeserializeOwned>(
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

// ---------------------------------------------------------------- paths

/// The typed path of a compressed field (`Post::fields().body`): `V` is the field's type.
///
/// Stored bytes cannot be compared with a value, so conditions and filters on it are
/// [`exists`](Self::exists) and [`not_exists`](Self::not_exists); an update's
/// [`set`](crate::ops::Update::set) compresses the new value as a put does, and
/// [`remove`](crate::ops::Update::remove) clears an `Option` field.
pub struct CompressedPath<E, V> {
    name: &'static str,
    compression: Compression,
    _marker: PhantomData<fn() -> (E, V)>,
}

impl<E, V> Clone for CompressedPath<E, V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E, V> Copy for CompressedPath<E, V> {}

impl<E, V> std::fmt::Debug for CompressedPath<E, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CompressedPath({}, {:?})", self.name, self.compression)
    }
}

impl<E, V> CompressedPath<E, V> {
    #[doc(hidden)]
    pub const fn __new(name: &'static str, compression: Compression) -> Self {
        CompressedPath {
            name,
            compression,
            _marker: PhantomData,
        }
    }

    /// The attribute name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// How the field is compressed.
    pub const fn compression(&self) -> Compression {
        self.compression
    }

    /// `attribute_exists(path)`
    pub fn exists(self) -> Condition<E> {
        Condition::function("attribute_exists", AttrPath::Top(self.name))
    }

    /// `attribute_not_exists(path)`
    pub fn not_exists(self) -> Condition<E> {
        Condition::function("attribute_not_exists", AttrPath::Top(self.name))
    }
}

/// Comparisons a compressed field does not have: stored bytes are not the value, so
/// `eq`, `lt`, `begins_with`, ... on a [`CompressedPath`] are a compile error naming the
/// reason (rather than rustc's guess at another trait's method of the same name).
/// Implemented by no type.
#[diagnostic::on_unimplemented(
    message = "a #[dynamo(compress)] field cannot be compared in a condition or filter",
    label = "stored as compressed bytes",
    note = "a compressed attribute holds compressed bytes, not the value: test it with `exists()` / `not_exists()`, or keep a plain copy of what you need to compare in another field"
)]
pub trait CompressedComparison {
    #[doc(hidden)]
    fn __never(self) -> std::convert::Infallible;
}

macro_rules! no_comparison {
    ($($name:ident($($arg:ident),*)),*) => {
        impl<E, V> CompressedPath<E, V> {
            $(
                #[doc(hidden)]
                #[allow(unreachable_code)]
                pub fn $name<T>(self, $($arg: T),*) -> Condition<E>
                where
                    Self: CompressedComparison,
                {
                    let _ = ($($arg),*);
                    match self.__never() {}
                }
            )*
        }
    };
}
no_comparison!(
    eq(value),
    ne(value),
    lt(value),
    le(value),
    gt(value),
    ge(value),
    between(low, high),
    is_in(values),
    begins_with(prefix),
    contains(value)
);

impl<E, V> crate::sealed::SettablePath for CompressedPath<E, V> {}

impl<E, V: Compressible> crate::expr::SettablePath<E, V> for CompressedPath<E, V> {
    fn attribute(&self) -> AttrPath {
        AttrPath::Top(self.name)
    }

    fn __encode(&self, value: &V) -> Result<Option<AttributeValue>, EncodeError> {
        to_attr(value, &self.compression)
    }
}

// ---------------------------------------------------------------- generated code

#[doc(hidden)]
pub mod __private {
    //! What `#[dynamo(compress)]` fields generate calls to. Not a public API.
    use super::*;
    use crate::attribute::Map;
    use crate::entity::__private::{decode_error, field_error};
    use crate::{DecodeError, Entity, Error, Item};

    pub use super::{Codec, Compression, GZIP_AVAILABLE, ZSTD_AVAILABLE};

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
            Err(e) => Err(field_error::<E>(name, e)),
        }
    }

    /// Inserts a `#[dynamo(serde, compress)]` field's attribute.
    pub fn put_compressed_serde_field<E: Entity, T: serde::Serialize>(
        item: &mut Item,
        name: &'static str,
        value: &T,
        c: &Compression,
    ) -> Result<(), Error> {
        let av = serde_to_attr(value, c).map_err(|e| field_error::<E>(name, e))?;
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
        let decoded = match (item.remove(name), default) {
            (None, Some(default)) => Ok(default()),
            (value, _) => from_attr_opt(value, c),
        };
        decoded.map_err(|kind| decode_error::<E>(item, Some(name), kind))
    }

    /// Takes a `#[dynamo(serde, compress)]` field's attribute out of the item.
    pub fn take_compressed_serde_field<E: Entity, T: serde::de::DeserializeOwned>(
        item: &mut Item,
        name: &'static str,
        c: &Compression,
        default: Option<fn() -> T>,
    ) -> Result<T, DecodeError> {
        let decoded = match (item.remove(name), default) {
            (None, Some(default)) => Ok(default()),
            (value, _) => serde_from_attr_opt(value, c),
        };
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
        let decoded = match (map.remove(name), default) {
            (None, Some(default)) => Ok(default()),
            (value, _) => from_attr_opt(value, c),
        };
        decoded.map_err(|e| e.at_member(name))
    }

    /// Takes a `#[dynamo(serde, compress)]` member out of the map.
    pub fn take_compressed_serde_member<T: serde::de::DeserializeOwned>(
        map: &mut Map,
        name: &'static str,
        c: &Compression,
        default: Option<fn() -> T>,
    ) -> Result<T, DecodeErrorKind> {
        let decoded = match (map.remove(name), default) {
            (None, Some(default)) => Ok(default()),
            (value, _) => serde_from_attr_opt(value, c),
        };
        decoded.map_err(|e| e.at_member(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ZSTD: Codec = Codec::Zstd { level: 3 };
    const GZIP: Codec = Codec::Gzip { level: 6 };

    /// Text that compresses well: a sentence repeated with a counter.
    fn text(len: usize) -> String {
        let mut s = String::with_capacity(len + 64);
        let mut i = 0u64;
        while s.len() < len {
            s.push_str(&format!(
                "line {i}: the quick brown fox jumps over the lazy dog. "
            ));
            i += 1;
        }
        s.truncate(len);
        s
    }

    /// Bytes that do not compress (xorshift noise).
    fn noise(len: usize, mut seed: u64) -> Vec<u8> {
        (0..len)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect()
    }

    fn tag_of(codec: Codec) -> u8 {
        match codec {
            Codec::Zstd { .. } => TAG_ZSTD,
            Codec::Gzip { .. } => TAG_GZIP,
        }
    }

    #[test]
    fn threshold_edges_decide_the_tag() {
        for codec in [ZSTD, GZIP] {
            let threshold = 300;
            for (len, compressed) in [
                (0, false),
                (1, false),
                (threshold - 1, false),
                (threshold, true),
                (threshold + 1, true),
            ] {
                let value = text(len);
                let stored = encode(codec, threshold, value.as_bytes());
                let expected = if compressed { tag_of(codec) } else { TAG_RAW };
                assert_eq!(stored[0], expected, "{codec:?}, {len} bytes");
                if !compressed {
                    assert_eq!(&stored[1..], value.as_bytes());
                }
                assert_eq!(decode(&stored, DEFAULT_MAX_SIZE).unwrap(), value.as_bytes());
            }
            // Threshold 0: even the empty value is tried, and stays raw (not smaller).
            assert_eq!(encode(codec, 0, b""), vec![TAG_RAW]);
        }
    }

    #[test]
    fn incompressible_values_are_stored_as_they_are() {
        for codec in [ZSTD, GZIP] {
            let value = noise(400 * 1024, 7);
            let stored = encode(codec, 0, &value);
            assert_eq!(stored[0], TAG_RAW, "{codec:?}");
            assert_eq!(stored.len(), value.len() + 1);
            assert_eq!(decode(&stored, DEFAULT_MAX_SIZE).unwrap(), &value[..]);
        }
    }

    #[test]
    fn a_compressible_400_kb_value_shrinks_and_reads_back() {
        for codec in [ZSTD, GZIP] {
            let value = text(400 * 1024);
            let stored = encode(codec, DEFAULT_THRESHOLD, value.as_bytes());
            assert_eq!(stored[0], tag_of(codec));
            assert!(
                stored.len() < value.len() / 4,
                "{codec:?}: {}",
                stored.len()
            );
            assert_eq!(decode(&stored, DEFAULT_MAX_SIZE).unwrap(), value.as_bytes());
        }
    }

    #[test]
    fn every_tag_is_read_whatever_codec_writes() {
        let value = text(10_000);
        let by_zstd = encode(ZSTD, 0, value.as_bytes());
        let by_gzip = encode(GZIP, 0, value.as_bytes());
        let c = Compression::new(ZSTD);
        // A field now on zstd reads what gzip wrote, and the other way round.
        for stored in [by_zstd, by_gzip] {
            let av = AttributeValue::B(Blob::new(stored));
            assert_eq!(from_attr::<String>(av.clone(), &c).unwrap(), value);
            let gzip = Compression::new(GZIP);
            assert_eq!(from_attr::<String>(av, &gzip).unwrap(), value);
        }
    }

    #[test]
    fn hostile_values_are_typed_errors() {
        let max = 1 << 20;
        assert_eq!(decode(&[], max), Err(DecompressError::Empty));
        assert_eq!(decode(&[3, 1, 2], max), Err(DecompressError::UnknownTag(3)));
        assert_eq!(decode(&[255], max), Err(DecompressError::UnknownTag(255)));
        for codec in [ZSTD, GZIP] {
            let stored = encode(codec, 0, text(50_000).as_bytes());
            // Truncated anywhere after the tag.
            for cut in [1, 2, stored.len() / 2, stored.len() - 1] {
                assert!(
                    matches!(
                        decode(&stored[..cut], max),
                        Err(DecompressError::Corrupt { .. })
                    ),
                    "{codec:?} cut at {cut}: {:?}",
                    decode(&stored[..cut], max).map(|v| v.len())
                );
            }
            // A flipped byte in the middle.
            let mut flipped = stored.clone();
            let mid = flipped.len() / 2;
            flipped[mid] ^= 0x55;
            assert!(decode(&flipped, max).is_err(), "{codec:?}");
            // Garbage after the payload.
            let mut trailing = stored.clone();
            trailing.extend_from_slice(b"junk");
            assert!(
                matches!(decode(&trailing, max), Err(DecompressError::Corrupt { .. })),
                "{codec:?}"
            );
        }
    }

    #[test]
    fn any_bound_is_accepted_even_the_largest() {
        // `usize::MAX` as the bound (no limit): the zstd window must not overflow.
        for codec in [Codec::Zstd { level: 3 }, Codec::Gzip { level: 6 }] {
            let stored = encode(codec, 0, &[7u8; 5000]);
            if stored[0] != TAG_RAW {
                assert_eq!(decode(&stored, usize::MAX).map(|v| v.len()), Ok(5000));
            }
        }
        assert!(decode(&[TAG_ZSTD, 1, 2, 3], usize::MAX).is_err());
        assert!(decode(&[TAG_GZIP, 1, 2, 3], usize::MAX).is_err());
    }

    #[test]
    fn a_bomb_over_the_bound_is_refused_without_inflating_it() {
        for codec in [ZSTD, GZIP] {
            // 200 MB of zeros: a few hundred KB stored.
            let zeros = vec![0u8; 200 * 1024 * 1024];
            let stored = encode(codec, 0, &zeros);
            drop(zeros);
            assert!(stored.len() < 1024 * 1024, "{codec:?}: {}", stored.len());
            assert_eq!(
                decode(&stored, DEFAULT_MAX_SIZE),
                Err(DecompressError::TooLarge {
                    max: DEFAULT_MAX_SIZE
                }),
                "{codec:?}"
            );
        }
        // The bound is exact: max bytes read, max + 1 refused, compressed or not.
        for codec in [ZSTD, GZIP] {
            let stored = encode(codec, 0, &[7u8; 4096]);
            assert_ne!(stored[0], TAG_RAW);
            assert_eq!(decode(&stored, 4096).unwrap().len(), 4096);
            assert_eq!(
                decode(&stored, 4095),
                Err(DecompressError::TooLarge { max: 4095 })
            );
        }
        let raw = encode(ZSTD, 1000, &[1, 2, 3]);
        assert_eq!(decode(&raw, 3).unwrap(), &[1, 2, 3][..]);
        assert_eq!(decode(&raw, 2), Err(DecompressError::TooLarge { max: 2 }));
        assert_eq!(
            decode_owned(raw, 2),
            Err(DecompressError::TooLarge { max: 2 })
        );
    }

    /// A value over the field's `max_size` is refused when written (reads would refuse
    /// it); one at the bound is written and reads back.
    #[test]
    fn values_over_max_size_are_refused_when_written() {
        for codec in [ZSTD, GZIP, Codec::Zstd { level: 1 }] {
            let c = Compression {
                codec,
                threshold: 0,
                max_size: 4096,
            };
            let at = "a".repeat(4096);
            let av = to_attr(&at, &c).unwrap().unwrap();
            assert_eq!(from_attr::<String>(av, &c).unwrap(), at);
            let err = to_attr(&"a".repeat(4097), &c).unwrap_err();
            assert!(err.to_string().contains("max_size"), "{err}");
            assert!(serde_to_attr(&vec![0u8; 4096], &c).is_err());
        }
    }

    /// A few bytes declaring a huge size never make a huge first allocation.
    #[test]
    fn a_declared_size_bounds_only_a_proportionate_first_allocation() {
        assert_eq!(first_allocation(10, 5), 10);
        assert_eq!(first_allocation(usize::MAX, 20), 20 * 64 + 64 * 1024);
        assert_eq!(first_allocation(usize::MAX, usize::MAX), usize::MAX);
        // 8 MiB of zeros is a few KB of zstd: decoding it still works.
        let zeros = vec![0u8; 8 * 1024 * 1024];
        let stored = encode(ZSTD, 0, &zeros);
        assert!(stored.len() < 64 * 1024, "{}", stored.len());
        assert_eq!(
            decode(&stored, DEFAULT_MAX_SIZE).unwrap().len(),
            zeros.len()
        );
    }

    #[test]
    fn a_string_field_refuses_bytes_that_are_not_utf8() {
        let c = Compression::new(GZIP);
        for threshold in [0, 1000] {
            let stored = encode(GZIP, threshold, &[b'a', 0xff, b'b']);
            let err = from_attr::<String>(AttributeValue::B(Blob::new(stored)), &c).unwrap_err();
            assert_eq!(
                err,
                DecodeErrorKind::Decompress(DecompressError::NotUtf8 { valid_up_to: 1 })
            );
        }
    }

    #[test]
    fn values_written_before_compress_read_back() {
        let c = Compression::new(ZSTD);
        let s = from_attr::<String>(AttributeValue::S("plain".into()), &c).unwrap();
        assert_eq!(s, "plain");
        let list = vec![1u8, 2, 255].to_attr().unwrap();
        assert_eq!(from_attr::<Vec<u8>>(list, &c).unwrap(), vec![1, 2, 255]);
        let none = from_attr::<Option<String>>(AttributeValue::Null(true), &c).unwrap();
        assert_eq!(none, None);
        assert_eq!(from_attr_opt::<Option<Vec<u8>>>(None, &c).unwrap(), None);
        assert_eq!(
            from_attr_opt::<String>(None, &c),
            Err(DecodeErrorKind::Missing)
        );
        // A Binary stored plain cannot be told apart: B is always the stored format.
        assert!(from_attr::<Binary>(AttributeValue::B(Blob::new(vec![9, 1])), &c).is_err());
        // Other types are refused with the type a compressed field stores.
        assert_eq!(
            from_attr::<String>(AttributeValue::N("1".into()), &c),
            Err(DecodeErrorKind::WrongType {
                expected: "B",
                found: "N"
            })
        );
        #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
        struct Doc {
            n: u32,
        }
        let old = crate::codec::to_checked_attribute(&Doc { n: 4 }).unwrap();
        assert_eq!(
            serde_from_attr_opt::<Doc>(Some(old), &c).unwrap(),
            Doc { n: 4 }
        );
        assert_eq!(serde_from_attr_opt::<Option<Doc>>(None, &c).unwrap(), None);
    }

    #[test]
    fn absent_options_are_not_stored() {
        let c = Compression::new(ZSTD);
        assert_eq!(to_attr(&None::<String>, &c).unwrap(), None);
        let stored = to_attr(&Some(text(1000)), &c).unwrap().unwrap();
        assert!(matches!(&stored, AttributeValue::B(b) if b.as_ref()[0] == TAG_ZSTD));
    }

    fn codec() -> impl Strategy<Value = Codec> {
        prop_oneof![
            (1i32..=22).prop_map(|level| Codec::Zstd { level }),
            (1u32..=9).prop_map(|level| Codec::Gzip { level }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// Any bytes, any codec and level, any threshold: the stored form reads back,
        /// and is never more than one byte longer than the value.
        #[test]
        fn bytes_round_trip(
            bytes in prop_oneof![
                proptest::collection::vec(any::<u8>(), 0..2048),
                (0usize..4096, any::<u8>()).prop_map(|(n, b)| vec![b; n]),
            ],
            codec in codec(),
            threshold in 0usize..1024,
        ) {
            let stored = encode(codec, threshold, &bytes);
            prop_assert!(stored.len() <= bytes.len() + 1);
            if bytes.len() < threshold {
                prop_assert_eq!(stored[0], TAG_RAW);
            }
            prop_assert_eq!(decode(&stored, bytes.len()).unwrap(), &bytes[..]);
            let c = Compression { codec, threshold, max_size: bytes.len() };
            let av = to_attr(&bytes, &c).unwrap().unwrap();
            prop_assert_eq!(from_attr::<Vec<u8>>(av, &c).unwrap(), bytes);
        }

        /// Any string round-trips through every codec.
        #[test]
        fn strings_round_trip(s in ".{0,600}", repeat in 1usize..8, codec in codec(), threshold in 0usize..512) {
            let s = s.repeat(repeat);
            let c = Compression { codec, threshold, max_size: DEFAULT_MAX_SIZE };
            let av = to_attr(&s, &c).unwrap().unwrap();
            prop_assert_eq!(from_attr::<String>(av, &c).unwrap(), s);
        }

        /// Arbitrary stored bytes never panic the reader: they decode or give a typed error.
        #[test]
        fn arbitrary_stored_bytes_never_panic(
            tag in 0u8..4,
            payload in proptest::collection::vec(any::<u8>(), 0..512),
        ) {
            let mut stored = vec![tag];
            stored.extend_from_slice(&payload);
            let c = Compression { codec: ZSTD, threshold: 0, max_size: 4096 };
            let _ = from_attr::<String>(AttributeValue::B(Blob::new(stored.clone())), &c);
            if let Ok(v) = decode(&stored, 4096) {
                prop_assert!(v.len() <= 4096);
            }
        }

        /// A serde value round-trips as compressed JSON.
        #[test]
        fn serde_values_round_trip(words in proptest::collection::vec(".{0,20}", 0..40), n in any::<i64>()) {
            let value = (words, n);
            let c = Compression { codec: GZIP, threshold: 64, max_size: DEFAULT_MAX_SIZE };
            let av = serde_to_attr(&value, &c).unwrap();
            prop_assert_eq!(serde_from_attr_opt::<(Vec<String>, i64)>(Some(av), &c).unwrap(), value);
        }
    }
}
