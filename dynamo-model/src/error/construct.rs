//! Constructors of the errors a caller may handle, so that code reacting to them (a
//! handler that answers "already exists" on [`Error::ConditionFailed`]) can be tested
//! without a server: the variants are `#[non_exhaustive]`, so they cannot be written as
//! literals outside the crate.
//!
//! ```
//! use dynamo_model::{Error, Item};
//! use aws_sdk_dynamodb::types::AttributeValue;
//!
//! let stored = Item::from([("PK".to_owned(), AttributeValue::S("USER#u-1".into()))]);
//! let err = Error::condition_failed("User", "PK=USER#u-1, SK=PROFILE").with_current(stored);
//! assert!(matches!(err, Error::ConditionFailed { current: Some(_), .. }));
//! ```

use super::{CancelReason, CancelledOperation, DecodeError, DecodeErrorKind, Error};
use super::{RuleViolation, ValidationReason};
use crate::Item;
use crate::token::WriteToken;

impl Error {
    /// [`Error::ConditionFailed`] for `entity` at `key` (`PK=..., SK=...`), without a
    /// current item (add one with [`with_current`](Error::with_current)).
    pub fn condition_failed(entity: &'static str, key: impl Into<String>) -> Self {
        Error::ConditionFailed {
            entity,
            key: key.into(),
            current: None,
        }
    }

    /// [`Error::OtherEntityStored`]: an item of entity type `stored` (`None`: without one)
    /// under `entity`'s `key`.
    pub fn other_entity_stored(
        entity: &'static str,
        key: impl Into<String>,
        stored: Option<&str>,
    ) -> Self {
        Error::OtherEntityStored {
            entity,
            key: key.into(),
            stored: stored.map(str::to_owned),
            current: None,
        }
    }

    /// [`Error::VersionConflict`]: the write expected `expected`, the item holds `found`.
    pub fn version_conflict(
        entity: &'static str,
        key: impl Into<String>,
        expected: u64,
        found: Option<u64>,
    ) -> Self {
        Error::VersionConflict {
            entity,
            key: key.into(),
            expected,
            found,
            current: None,
        }
    }

    /// [`Error::NotFound`].
    pub fn not_found(entity: &'static str, key: impl Into<String>) -> Self {
        Error::NotFound {
            entity,
            key: key.into(),
        }
    }

    /// [`Error::NotUnique`]: a read of one item found the items at the two `keys`.
    pub fn not_unique(target: &'static str, keys: [&str; 2]) -> Self {
        let [first, second] = keys.map(str::to_owned);
        Error::NotUnique {
            target,
            first,
            second,
        }
    }

    /// [`Error::UniqueValueTaken`]: `value` of `constraint` is held by the item at `owner`.
    pub fn unique_value_taken(
        entity: &'static str,
        constraint: &'static str,
        value: impl Into<String>,
        owner: impl Into<String>,
    ) -> Self {
        Error::UniqueValueTaken {
            entity,
            constraint,
            value: value.into(),
            owner: owner.into(),
        }
    }

    /// [`Error::Validation`]: a request for `entity` refused before sending, for `reason`.
    pub fn invalid(
        entity: &'static str,
        reason: ValidationReason,
        message: impl Into<String>,
    ) -> Self {
        Error::Validation {
            entity: Some(entity),
            operation: None,
            reason,
            message: message.into(),
            cause: None,
        }
    }

    /// [`Error::Rule`]: a value breaking a rule (see [`RuleViolation::field`]).
    pub fn rule(violation: RuleViolation) -> Self {
        Error::Rule(Box::new(violation))
    }

    /// [`Error::Decode`]: an item of `entity` that does not decode, for `kind`.
    pub fn decode(entity: &'static str, kind: DecodeErrorKind) -> Self {
        Error::Decode(DecodeError {
            entity,
            key: None,
            attribute: None,
            kind,
        })
    }

    /// [`Error::Incomplete`]: `missing` items of `operation` could not be processed.
    pub fn incomplete(entity: &'static str, operation: &'static str, missing: usize) -> Self {
        Error::Incomplete {
            entity,
            operation,
            missing,
            source: None,
        }
    }

    /// [`Error::OutcomeUnknown`] of a put or update sent with `token` (`None` for a
    /// delete), whose last attempt failed with `last`.
    pub fn outcome_unknown(
        entity: &'static str,
        operation: &'static str,
        key: impl Into<String>,
        token: Option<WriteToken>,
        last: Error,
    ) -> Self {
        Error::OutcomeUnknown {
            entity,
            operation,
            key: key.into(),
            token,
            current: None,
            source: Box::new(last),
        }
    }

    /// [`Error::ReturnValuesLost`]: `operation` was applied at `key`, its return values
    /// lost.
    pub fn return_values_lost(
        entity: &'static str,
        operation: &'static str,
        key: impl Into<String>,
    ) -> Self {
        let key = key.into();
        Error::ReturnValuesLost {
            entity,
            operation,
            key,
            current: None,
        }
    }

    /// [`Error::Cursor`]: a cursor of `target` refused for `reason`.
    pub fn cursor(target: &'static str, reason: super::CursorError) -> Self {
        Error::Cursor { target, reason }
    }

    /// [`Error::TransactionCanceled`] with the failed `operations`.
    pub fn transaction_canceled(operations: Vec<CancelledOperation>) -> Self {
        Error::TransactionCanceled { operations }
    }

    /// [`Error::DeadlineExceeded`] of `operation` on `table`.
    pub fn deadline_exceeded(operation: &'static str, table: impl Into<String>) -> Self {
        Error::DeadlineExceeded {
            operation,
            table: table.into(),
            client_request_token: None,
        }
    }

    /// [`Error::Service`]: DynamoDB (or the SDK) failed `operation` on `table` with
    /// `source`, e.g. a throttling error:
    ///
    /// ```
    /// use aws_sdk_dynamodb::types::error::ProvisionedThroughputExceededException;
    /// let throttled = aws_sdk_dynamodb::Error::ProvisionedThroughputExceededException(
    ///     ProvisionedThroughputExceededException::builder().message("slow down").build(),
    /// );
    /// let err = dynamo_model::Error::service("PutItem", "app", throttled);
    /// assert!(err.is_throttling());
    /// ```
    pub fn service(
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

    /// This error with the item stored under its key, for the variants that carry one
    /// ([`Error::ConditionFailed`], [`Error::OtherEntityStored`],
    /// [`Error::VersionConflict`], [`Error::OutcomeUnknown`], [`Error::ReturnValuesLost`]);
    /// others are returned as they are.
    pub fn with_current(mut self, item: Item) -> Self {
        match &mut self {
            Error::ConditionFailed { current, .. }
            | Error::OtherEntityStored { current, .. }
            | Error::VersionConflict { current, .. }
            | Error::OutcomeUnknown { current, .. }
            | Error::ReturnValuesLost { current, .. } => *current = Some(Box::new(item)),
            _ => {}
        }
        self
    }
}

impl CancelledOperation {
    /// The operation at `index` (0-based, in the order added) of a cancelled
    /// transaction, of `entity` at `key`, failed for `reason`.
    pub fn new(
        index: usize,
        entity: &'static str,
        key: impl Into<String>,
        reason: CancelReason,
    ) -> Self {
        CancelledOperation {
            index,
            entity,
            key: key.into(),
            reason,
            message: None,
            current: None,
        }
    }

    /// With DynamoDB's message.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }

    /// With the item stored under the key.
    pub fn with_current(mut self, item: Item) -> Self {
        self.current = Some(Box::new(item));
        self
    }
}
