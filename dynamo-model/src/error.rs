//! The one error type of the crate, with the entity, key and attribute involved.

use crate::key::KeyError;
use crate::Item;
use std::fmt;

/// Everything that can go wrong in a `dynamo-model` call.
///
/// Match on the variants to react to what happened:
///
/// ```
/// # async fn demo(err: dynamo_model::Error) {
/// match err {
///     dynamo_model::Error::ConditionFailed { entity, key, .. } => println!("{entity} {key} changed meanwhile"),
///     dynamo_model::Error::NotFound { .. } => println!("nothing there"),
///     other => eprintln!("{other}"),
/// }
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A condition expression (including `if_absent` and the existence check of
    /// updates) was false. `current` holds the item as it is now, when DynamoDB returned
    /// it (the crate always asks for it: `ReturnValuesOnConditionCheckFailure=ALL_OLD`,
    /// which consumes no read capacity). Decode it with [`Error::current`].
    #[error("condition failed for {entity} {key}")]
    ConditionFailed {
        /// Entity type the request was for.
        entity: &'static str,
        /// The item's key, rendered as `PK=..., SK=...`.
        key: String,
        /// The item as stored when the condition was evaluated (absent if there was none).
        current: Option<Box<Item>>,
    },

    /// Optimistic locking: the stored item's version is not the one the write expected
    /// (someone else wrote it meanwhile). `current` is the item as stored now.
    #[error("version conflict on {entity} {key}: expected version {expected}, found {found:?}")]
    VersionConflict {
        /// Entity type the request was for.
        entity: &'static str,
        /// The item's key, rendered as `PK=..., SK=...`.
        key: String,
        /// The version the write expected.
        expected: u64,
        /// The stored version (`None`: no item, or no version attribute).
        found: Option<u64>,
        /// The item as stored, if there is one.
        current: Option<Box<Item>>,
    },

    /// The operation needs an existing item (an update, or a delete with
    /// `must_exist`) and there is none under that key.
    #[error("{entity} {key} not found")]
    NotFound {
        /// Entity type the request was for.
        entity: &'static str,
        /// The item's key, rendered as `PK=..., SK=...`.
        key: String,
    },

    /// An item read from DynamoDB could not be turned into the entity.
    #[error(transparent)]
    Decode(#[from] DecodeError),

    /// The request was refused before anything was sent.
    #[error("invalid request for {entity}: {message}")]
    Validation {
        /// Entity type the request was for.
        entity: &'static str,
        /// What is wrong, in words.
        message: String,
        /// The underlying cause, when there is one (e.g. a [`KeyError`]).
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },

    /// A transaction was cancelled: nothing was applied. Lists each failed operation
    /// with its position, entity, key and reason (and the current item when a condition
    /// failed).
    #[error("transaction cancelled: {}", describe_cancellations(operations))]
    TransactionCanceled {
        /// The operations that failed (those that would have succeeded are not listed).
        operations: Vec<crate::transact::CancelledOperation>,
    },

    /// A pagination cursor was refused: altered, malformed, or from another query.
    #[error("invalid cursor for {target}: {source}")]
    Cursor {
        /// The entity or collection queried.
        target: &'static str,
        /// Why the cursor was refused.
        #[source]
        source: crate::cursor::CursorError,
    },

    /// DynamoDB (or the transport to it) answered with an error.
    #[error("{operation} on table {table} failed: {source}")]
    Service {
        /// The DynamoDB API call, e.g. `PutItem`.
        operation: &'static str,
        /// The table name.
        table: String,
        /// The SDK error, with its own source chain.
        #[source]
        source: Box<aws_sdk_dynamodb::Error>,
    },
}

impl Error {
    /// Decodes the current item carried by a [`Error::ConditionFailed`] or
    /// [`Error::VersionConflict`], if there is one.
    ///
    /// Returns `None` for other variants or when no item exists under the key.
    pub fn current<E: crate::Entity>(&self) -> Option<Result<E, Error>> {
        match self {
            Error::ConditionFailed {
                current: Some(item),
                ..
            }
            | Error::VersionConflict {
                current: Some(item),
                ..
            } => Some(E::from_item(item.as_ref().clone()).map_err(Error::from)),
            _ => None,
        }
    }

    pub(crate) fn validation(entity: &'static str, message: impl Into<String>) -> Self {
        Error::Validation {
            entity,
            message: message.into(),
            source: None,
        }
    }

    pub(crate) fn key(entity: &'static str, source: KeyError) -> Self {
        Error::Validation {
            entity,
            message: format!("key cannot be encoded: {source}"),
            source: Some(Box::new(source)),
        }
    }

    pub(crate) fn service(
        operation: &'static str,
        table: &str,
        source: impl Into<aws_sdk_dynamodb::Error>,
    ) -> Self {
        Error::Service {
            operation,
            table: table.to_owned(),
            source: Box::new(source.into()),
        }
    }
}

fn describe_cancellations(ops: &[crate::transact::CancelledOperation]) -> String {
    let parts: Vec<String> = ops
        .iter()
        .map(|o| format!("#{} {} {}: {:?}", o.index, o.entity, o.key, o.reason))
        .collect();
    if parts.is_empty() {
        "no reason given".to_owned()
    } else {
        parts.join("; ")
    }
}

/// An item that could not be decoded into an entity.
#[derive(Debug, Clone, PartialEq)]
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
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot decode {}", self.entity)?;
        if let Some(key) = &self.key {
            write!(f, " {key}")?;
        }
        if let Some(attribute) = &self.attribute {
            write!(f, ", attribute `{attribute}`")?;
        }
        write!(f, ": {}", self.kind)
    }
}

impl std::error::Error for DecodeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.kind)
    }
}
