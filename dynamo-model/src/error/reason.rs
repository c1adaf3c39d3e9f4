//! Why a request was refused before it was sent: the reasons of
//! [`Error::Validation`](crate::Error::Validation), for matching.

use std::fmt;

/// Why a request was refused before it was sent ([`Error::Validation`](super::Error::Validation)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ValidationReason {
    /// A key value cannot be encoded (see the [`KeyError`](super::KeyError) source).
    KeyEncoding,
    /// A key attribute value would be empty; DynamoDB requires at least one byte.
    EmptyKeyValue,
    /// A key attribute value is over DynamoDB's limit (2048 bytes for a partition key,
    /// 1024 for a sort key).
    KeyTooLong,
    /// The item is over DynamoDB's 400 KB limit.
    ItemTooLarge,
    /// A number outside DynamoDB's range (38 significant digits, magnitude between
    /// 1e-130 and 1e126) or not finite.
    InvalidNumber,
    /// A value cannot be stored (its encoding failed).
    InvalidValue,
    /// Two operations of one request target the same item.
    DuplicateKey,
    /// More operations than one request can carry.
    TooManyOperations,
    /// A request over DynamoDB's size limit for one call (4 MB of items a transaction).
    RequestTooLarge,
    /// A request with nothing to do (no operation, no update action).
    NoOperations,
    /// Two update actions change overlapping attribute paths.
    OverlappingPaths,
    /// An update changes some, but not all, fields an index key is built from, or
    /// changes them in a way whose result is unknown before the request.
    IncompleteIndexTemplate,
    /// The version counter cannot be incremented any further.
    VersionOverflow,
    /// A versioned entity's update or delete must say which version it expects.
    VersionCheckRequired,
    /// A version check on an entity without a version field.
    NotVersioned,
    /// The operation is not possible in a batch (e.g. a version check).
    NotSupportedInBatch,
    /// A write that cannot check the stored item's entity type (a batch write or bulk
    /// load: `BatchWriteItem` takes no condition) has a key that another entity type of
    /// the table can also own, or one its own entity's templates do not render, so it
    /// could replace or remove an item of another type. The message names that type; see
    /// [`dynamo_model::registry`].
    ForeignKeySpace,
    /// The index queried does not project an attribute the request needs.
    IndexProjection,
    /// A strongly consistent read of a global secondary index.
    ConsistentIndexRead,
    /// A partition or sort-key condition built for another table or index.
    WrongKeySpace,
    /// A builder option that does not apply to this call.
    InvalidOption,
    /// The SDK refused to build the request.
    RequestBuild,
    /// A plain put, update or delete of a `#[dynamo(history)]` entity, which would
    /// change its latest copy without writing a revision: write it through
    /// [`Db::history`](crate::Db::history).
    KeepsHistory,
    /// An update that reads the value of a renamed field (`#[dynamo(alias = "..")]`)
    /// it cannot find under the field's older names (appending to a list, a set
    /// operation, a nested path, `if_not_exists`): migrate the attribute first
    /// (rewrite the items) or set the whole field. Also a migration's
    /// [`rename_attribute`](dynamo_model::migrate::Migration::rename_attribute) that finds
    /// different values under both names of an item (the item is left as it is).
    RenamedField,
    /// An update changes a field with rules (`#[dynamo(validate(..))]`) in a way whose
    /// result is unknown before it is applied (`add`, `subtract`, `append`, `prepend`,
    /// a set operation, a member of it), so its rules cannot be checked: set the whole
    /// value (see [`validate`](dynamo_model::validate)).
    RuledField,
    /// A write other than [`Db::create`](crate::Db::create) of a value whose generated id
    /// (`#[dynamo(generate = "..")]`) is unset: it would store the nil id (see
    /// [`auto`](dynamo_model::auto)).
    UnsetGeneratedId,
    /// An update that sets or removes the `#[dynamo(created)]` field, the creation time
    /// the crate keeps (see [`auto`](dynamo_model::auto)).
    CreationTime,
    /// A range or `starts_with` condition on a sort-key part whose encoding does not keep
    /// the values' order (see [`KeyError::Unordered`](super::KeyError::Unordered)).
    UnorderedKeyPart,
    /// A write of an entity with encrypted fields (`#[dynamo(encrypt)]`) on a `Db`
    /// without a key provider, or whose provider has no usable current key: nothing is
    /// written (see [`encrypt`](dynamo_model::encrypt)).
    EncryptionKeys,
    /// An update that changes an encrypted field other than by setting or removing it
    /// whole (`add`, `append`, a set operation, a member of it): DynamoDB cannot compute
    /// on a ciphertext (see [`encrypt`](dynamo_model::encrypt)).
    EncryptedField,
    /// A write the unique values of an entity (`#[dynamo(unique)]`, see
    /// [`unique`](dynamo_model::unique)) cannot keep: a value with no text (a list, a map),
    /// a sentinel key over DynamoDB's limit, a change DynamoDB computes (`add`, `append`,
    /// ...), a batch write or a write inside another transaction (the crate's own puts,
    /// updates and deletes send the transaction that keeps the sentinels).
    UniqueValue,
}

impl ValidationReason {
    /// The reason in words, as its `Display` writes it.
    pub fn describe(self) -> &'static str {
        use ValidationReason::*;
        match self {
            KeyEncoding => "a key value cannot be encoded",
            EmptyKeyValue => "a key attribute would be empty",
            KeyTooLong => "a key attribute is over DynamoDB's length limit",
            ItemTooLarge => "the item is over DynamoDB's 400 KB limit",
            InvalidNumber => "a number is outside DynamoDB's range",
            InvalidValue => "a value cannot be stored",
            DuplicateKey => "two operations target the same item",
            TooManyOperations => "more operations than one request can carry",
            RequestTooLarge => "the request is over DynamoDB's size limit for one call",
            NoOperations => "the request has nothing to do",
            OverlappingPaths => "two update actions change overlapping paths",
            IncompleteIndexTemplate => "an index key would be left out of date",
            VersionOverflow => "the version cannot be incremented further",
            VersionCheckRequired => "a versioned entity's write must name the version it expects",
            NotVersioned => "a version check on an entity without a version",
            NotSupportedInBatch => "not possible in a batch",
            ForeignKeySpace => "the key can belong to another entity type",
            IndexProjection => "the index does not project an attribute the request needs",
            ConsistentIndexRead => "a global secondary index cannot be read consistently",
            WrongKeySpace => "a key condition built for another table or index",
            InvalidOption => "an option that does not apply to this call",
            RequestBuild => "the SDK refused to build the request",
            KeepsHistory => "the entity keeps a history: write it through Db::history",
            RenamedField => "a renamed field's older attribute cannot be read here",
            RuledField => "a change whose result its field's rules cannot check",
            UnsetGeneratedId => "a generated id is unset",
            CreationTime => "the creation time is the crate's to set",
            UnorderedKeyPart => "a range condition on a key part that does not keep order",
            EncryptionKeys => "no key to encrypt with",
            EncryptedField => "an encrypted field can only be set or removed whole",
            UniqueValue => "a write its unique values cannot be kept through",
        }
    }
}

impl fmt::Display for ValidationReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// The reason and message of a refusal, for tests; panics on anything else.
#[cfg(test)]
pub(crate) fn refusal<T: fmt::Debug>(
    result: Result<T, super::Error>,
) -> (ValidationReason, String) {
    match result {
        Err(super::Error::Validation {
            reason, message, ..
        }) => (reason, message),
        other => panic!("expected a refusal, got {other:?}"),
    }
}
