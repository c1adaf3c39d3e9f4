//! Errors reading stored items: an item that is not the entity asked for, or an attribute
//! that does not decode.

use std::fmt;

/// An item that could not be decoded into an entity.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct DecodeError {
    /// The entity type being decoded.
    pub entity: &'static str,
    /// The item's key, rendered as `PK=..., SK=...`, when the item has one.
    pub key: Option<String>,
    /// The attribute at fault, when one is.
    pub attribute: Option<String>,
    /// What is wrong with it.
    pub kind: DecodeErrorKind,
}

/// What is wrong with an item or attribute that could not be decoded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The item belongs to another entity type (or has none).
    #[error("item is of entity type {}, expected {expected}", found.as_deref().unwrap_or("<none>"))]
    WrongEntityType {
        /// The entity type this crate expected.
        expected: &'static str,
        /// The value of the entity-type attribute, if any.
        found: Option<String>,
    },
    /// The item has no entity-type attribute and its keys match the key templates of
    /// several entities identified by their keys (`#[dynamo(identify = "keys")]`).
    #[error("item has no entity type, and its keys match the templates of {}", entities.join(" and "))]
    AmbiguousEntity {
        /// The entity types whose templates render the item's keys.
        entities: Vec<&'static str>,
    },
    /// A required attribute is absent.
    #[error("attribute is missing")]
    Missing,
    /// The attribute has another DynamoDB type than the field needs.
    #[error("expected a {expected} attribute, found {found}")]
    WrongType {
        /// DynamoDB type the field needs (`S`, `N`, `BOOL`, `L`, `M`, ...).
        expected: &'static str,
        /// DynamoDB type found.
        found: &'static str,
    },
    /// The attribute has the right type but an unusable value (e.g. a number out of range).
    #[error("invalid value: {0}")]
    Invalid(String),
    /// A key attribute (of the table, or of an index the item carries) is not what the
    /// item's fields render: the item is not stored under its own key (a forged or
    /// corrupted item), so it is refused rather than decoded as the item its fields
    /// describe. [`DecodeError::attribute`] names the key attribute.
    #[error("{}", describe_key_mismatch(expected.as_deref(), found))]
    #[non_exhaustive]
    KeyMismatch {
        /// What the fields render (`None`: the fields leave the item out of this sparse
        /// index, so the attribute should be absent).
        expected: Option<String>,
        /// The stored value.
        found: String,
    },
    /// A value inside an attribute (a member of a map, an element of a list, the value of
    /// an enum variant) could not be decoded: `path` says where, e.g. `.address.city` or
    /// `[2].sku`, and `error` what is wrong there. Decoding an entity moves the path into
    /// [`DecodeError::attribute`] (`lines[2].sku`), leaving `kind` the innermost error.
    #[error("at {path}: {error}")]
    #[non_exhaustive]
    Nested {
        /// Where in the attribute: `.member` and `[index]` steps.
        path: String,
        /// What is wrong at that place (never itself `Nested`).
        error: Box<DecodeErrorKind>,
    },
    /// A compressed attribute (`#[dynamo(compress)]`) could not be read: an unknown tag,
    /// a corrupt or truncated payload, a value over the field's `max_size`, a codec this
    /// build lacks, or a `String` that is not UTF-8. See [`dynamo_model::compress`].
    #[error("compressed value: {0}")]
    Decompress(super::DecompressError),
    /// An enum stored under a variant name the type does not have (renamed or removed
    /// since the item was written, or written by another program).
    #[error("unknown variant `{found}`, expected one of: {}", expected.join(", "))]
    #[non_exhaustive]
    UnknownVariant {
        /// The stored variant name.
        found: String,
        /// The variant names the type reads.
        expected: &'static [&'static str],
    },
    /// An encrypted attribute (`#[dynamo(encrypt)]`) could not be decrypted: no key
    /// provider, an unknown key, a ciphertext that does not authenticate (moved from
    /// another item or attribute, or altered) or a value that is not a ciphertext. See
    /// [`dynamo_model::encrypt`].
    #[error("encrypted value: {0}")]
    Encryption(super::EncryptionError),
}

impl From<super::DecompressError> for DecodeErrorKind {
    fn from(e: super::DecompressError) -> Self {
        DecodeErrorKind::Decompress(e)
    }
}

impl DecodeErrorKind {
    /// This error, one step further down: `step` is `.member` or `[index]`, prepended to
    /// the path of an error already nested, so the path reads from the outside in.
    #[cold]
    pub fn at(self, step: impl std::fmt::Display) -> Self {
        match self {
            DecodeErrorKind::Nested { path, error } => DecodeErrorKind::Nested {
                path: format!("{step}{path}"),
                error,
            },
            other => DecodeErrorKind::Nested {
                path: step.to_string(),
                error: Box::new(other),
            },
        }
    }

    crate::error::path_steps!();

    /// Splits off the path of a nested error: `("", self)` when it is not nested.
    pub(crate) fn into_path(self) -> (String, DecodeErrorKind) {
        match self {
            DecodeErrorKind::Nested { path, error } => (path, *error),
            other => (String::new(), other),
        }
    }
}

fn describe_key_mismatch(expected: Option<&str>, found: &str) -> String {
    if !super::Error::shows_keys() {
        return match expected {
            Some(_) => "the key attribute does not hold what the item's fields render: the item is not stored under its own key",
            None => "the key attribute is set but the item's fields leave it out of this sparse index",
        }
        .to_owned();
    }
    match expected {
        Some(expected) => format!(
            "the key attribute holds {found:?} but the item's fields render {expected:?}: the item is not stored under its own key"
        ),
        None => format!(
            "the key attribute holds {found:?} but the item's fields leave it out of this sparse index"
        ),
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot decode {}", self.entity)?;
        if let Some(key) = &self.key {
            write!(f, "{}", super::shown::suffix(" ", key))?;
        }
        if let Some(attribute) = &self.attribute {
            write!(f, ", attribute `{attribute}`")?;
        }
        write!(f, ": {}", self.kind)
    }
}

/// `kind` is part of the message, so it is not the error's `source()`.
impl std::error::Error for DecodeError {}
