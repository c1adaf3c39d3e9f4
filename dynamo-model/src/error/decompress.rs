//! Errors reading a compressed attribute.

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
