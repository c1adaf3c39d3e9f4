//! The one error type of the crate, with the entity, key and attribute involved.

/// `at_member` and `at_index` for an error type whose `at(step)` prepends a step to the
/// path of the value it refused.
macro_rules! path_steps {
    () => {
        /// The error at a member of a map (`.name`).
        #[cold]
        pub fn at_member(self, name: &str) -> Self {
            self.at(format_args!(".{name}"))
        }

        /// The error at an element of a list (`[index]`).
        #[cold]
        pub fn at_index(self, index: usize) -> Self {
            self.at(format_args!("[{index}]"))
        }
    };
}
pub(crate) use path_steps;

mod cancel;
mod construct;
mod decode;
mod decompress;
mod encrypt;
mod key;
mod reason;
mod rule;
mod service;
mod shown;
mod stream;

use crate::token::WriteToken;
use cancel::describe_cancellations;
pub use cancel::{CancelReason, CancelledOperation};
pub use decode::{DecodeError, DecodeErrorKind};
pub use decompress::DecompressError;
pub use encrypt::EncryptionError;
pub use key::KeyError;
pub use reason::ValidationReason;
#[cfg(test)]
pub(crate) use reason::refusal;
pub use rule::{Rule, RuleViolation};
pub(crate) use shown::key_text;
pub use stream::StreamError;
// The names `StreamError` speaks of, at the path they have always had here: defined in
// `stream_names` (below `error`), at home in `dynamo_model::stream`.
#[doc(no_inline)]
pub use crate::stream_names::{EventName, ImageKind, ViewType};

use crate::Item;

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
    #[error("condition failed for {entity}{}", shown::suffix(" ", key))]
    #[non_exhaustive]
    ConditionFailed {
        /// Entity type the request was for.
        entity: &'static str,
        /// The item's key, rendered as `PK=..., SK=...`.
        key: String,
        /// The item as stored when the condition was evaluated (absent if there was none).
        current: Option<Box<Item>>,
    },

    /// A write through a key of `entity` found an item of another entity type stored
    /// under that key (or an item without an entity type, where the type is what tells
    /// items apart): the crate's entity-type guard refused the write, and nothing was
    /// written. `stored` names the type found; `current` is that item. Reported in place
    /// of [`Error::ConditionFailed`] and [`Error::VersionConflict`] whenever the item
    /// found is of another type (an `if_absent` put or a version-0 write that finds one
    /// included).
    #[error("{entity}{}: the key holds {}, which this write may not replace or change", shown::suffix(" ", key), shown::stored(stored.as_deref()))]
    #[non_exhaustive]
    OtherEntityStored {
        /// Entity type the request was for.
        entity: &'static str,
        /// The item's key, rendered as `PK=..., SK=...`.
        key: String,
        /// The entity type of the stored item (`None`: it has no entity-type attribute).
        stored: Option<String>,
        /// The item as stored.
        current: Option<Box<Item>>,
    },

    /// Optimistic locking: the stored item's version is not the one the write expected
    /// (someone else wrote it meanwhile). `current` is the item as stored now.
    #[error("version conflict on {entity}{}: expected version {expected}, found {}", shown::suffix(" ", key), shown::version(*found))]
    #[non_exhaustive]
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
    #[error("{entity}{} not found", shown::suffix(" ", key))]
    #[non_exhaustive]
    NotFound {
        /// Entity type the request was for.
        entity: &'static str,
        /// The item's key, rendered as `PK=..., SK=...`.
        key: String,
    },

    /// A put of an entity whose chunked field was read without its value (by a query, a
    /// scan or a batch get: [`Chunked::is_loaded`](crate::Chunked::is_loaded) is false),
    /// under a key where no item is stored: such a put keeps the stored item's chunks,
    /// and there is none to keep. Typically the entity was listed under one key and put
    /// under another. Nothing was written. Load the value first
    /// ([`Db::load_chunks`](crate::Db::load_chunks), or [`Db::get`](crate::Db::get)) or
    /// set it: the put then writes chunks of the new item's own.
    ///
    /// (When an item is stored under the key but names other chunks, the value was
    /// replaced since the entity was read: that is a [`Error::ConditionFailed`].)
    #[error(
        "cannot put {entity}{}: the value of chunked field `{attribute}` was not loaded (the entity was read by a query, scan or batch get) and no item stored under this key holds it; load it (db.load_chunks) or set it first",
        shown::suffix(" ", key)
    )]
    #[non_exhaustive]
    ChunksNotLoaded {
        /// Entity type the request was for.
        entity: &'static str,
        /// The key the put was for, rendered as `PK=..., SK=...`.
        key: String,
        /// The chunked field's attribute.
        attribute: &'static str,
    },

    /// A read of one item ([`Query::one`](dynamo_model::read::Query::one), e.g. a user by a
    /// unique email through an index) found more than one: the data breaks the
    /// uniqueness the read relies on.
    #[error(
        "{target}: more than one item matches a read of one{}",
        shown::suffix(" (keys ", format_args!("{first} and {second})"))
    )]
    #[non_exhaustive]
    NotUnique {
        /// The entity or view read.
        target: &'static str,
        /// The key of the first item found, rendered as `PK=..., SK=...` (the table's keys).
        first: String,
        /// The key of the second.
        second: String,
    },

    /// A write would give an item a unique value (`#[dynamo(unique)]`, see
    /// [`unique`](dynamo_model::unique)) that another item holds: nothing was written.
    /// Its message names neither the value nor the holder (an email, an account's key):
    /// read them from the fields.
    #[error("{entity}: the value of unique `{constraint}` is held by another item")]
    #[non_exhaustive]
    UniqueValueTaken {
        /// The entity written.
        entity: &'static str,
        /// The unique constraint: the field's attribute, or the name of a group of fields.
        constraint: &'static str,
        /// The value as its sentinel's key holds it (parts escaped as key parts).
        value: String,
        /// The key of the item holding it, rendered as `PK=..., SK=...`.
        owner: String,
    },

    /// An item read from DynamoDB could not be turned into the entity.
    #[error(transparent)]
    Decode(#[from] DecodeError),

    /// A value breaks a rule its entity declares (`#[dynamo(validate(..))]`), found
    /// before anything was sent: nothing is written. The violation names the entity,
    /// field, rule and value.
    ///
    /// ```
    /// # fn demo(err: dynamo_model::Error) {
    /// if let dynamo_model::Error::Rule(violation) = &err {
    ///     println!("{} is not valid: {}", violation.field_name().unwrap_or("the value"), violation.rule());
    /// }
    /// # }
    /// ```
    #[error(transparent)]
    Rule(Box<RuleViolation>),

    /// A DynamoDB Streams record that cannot be used (an unknown event name, no keys, an
    /// attribute type this build does not know), or an image asked of a record whose
    /// stream's view type leaves it out. See [`dynamo_model::stream`].
    #[error(transparent)]
    Stream(#[from] StreamError),

    /// The request was refused before anything was sent: nothing was written or read.
    ///
    /// Match on [`reason`](Error::Validation::reason) to react to a particular refusal;
    /// `message` says the same in words, with the values involved.
    ///
    /// ```
    /// # fn demo(err: dynamo_model::Error) {
    /// use dynamo_model::{Error, ValidationReason};
    /// match err {
    ///     Error::Validation { reason: ValidationReason::ItemTooLarge, .. } => println!("split the item"),
    ///     other => eprintln!("{other}"),
    /// }
    /// # }
    /// ```
    #[error("invalid {} request{}: {message}", operation.unwrap_or("DynamoDB"), entity.map(|e| format!(" for {e}")).unwrap_or_default())]
    #[non_exhaustive]
    Validation {
        /// Entity type (or collection) the request was for, when it concerns one.
        entity: Option<&'static str>,
        /// The DynamoDB API call that was refused (e.g. `PutItem`), when known.
        operation: Option<&'static str>,
        /// Why the request was refused, for matching.
        reason: ValidationReason,
        /// What is wrong, in words (the cause's own words included).
        message: String,
        /// The error that caused the refusal, when there is one (e.g. a [`KeyError`]),
        /// to match on; `message` already says what it says, so it is not the error's
        /// `source()`.
        cause: Option<Box<dyn std::error::Error + Send + Sync>>,
    },

    /// A call made of several requests (a batch get behind `hydrate`, for example) could
    /// not read or write everything: `missing` items are not in the result. Nothing is
    /// silently dropped: this error replaces a short result.
    #[error("{operation} for {entity}: {missing} item(s) could not be processed")]
    #[non_exhaustive]
    Incomplete {
        /// Entity type (or collection) the call was for.
        entity: &'static str,
        /// The DynamoDB API call that could not complete (e.g. `BatchGetItem`).
        operation: &'static str,
        /// How many items are missing from the result.
        missing: usize,
        /// The error that stopped the last request, if one did (none: the retry deadline
        /// passed with items still unprocessed).
        #[source]
        source: Option<Box<Error>>,
    },

    /// DynamoDB answered with something the request cannot have produced (e.g. no
    /// attributes for `ReturnValues=ALL_NEW`). The request was sent and may have been
    /// applied.
    #[error("unexpected {operation} response for {entity}: {message}")]
    #[non_exhaustive]
    UnexpectedResponse {
        /// Entity type the request was for.
        entity: &'static str,
        /// The DynamoDB API call.
        operation: &'static str,
        /// What was unexpected.
        message: String,
    },

    /// The write was applied by this call, but the values it was asked to return were
    /// lost with its response: DynamoDB applied the request, the response was lost (an
    /// HTTP 500 or a timeout after the write), and the SDK's retry of the same request
    /// found the call's own write where the values from before it had been.
    ///
    /// Returned by [`Update::send_returning_old`](dynamo_model::item::Update::send_returning_old)
    /// (the stored item carries the call's write token) and by
    /// [`DeleteReturningOld`](dynamo_model::item::DeleteReturningOld) (the item is gone after an
    /// ambiguous attempt; see [`Delete`](dynamo_model::item::Delete) for what that proves). The
    /// write is done: sending it again would apply it twice. `current` is the item as
    /// stored now (none after a delete).
    #[error(
        "{operation} for {entity}{} was applied, but the values it was to return were lost with its response",
        shown::suffix(" ", key)
    )]
    #[non_exhaustive]
    ReturnValuesLost {
        /// Entity type the request was for.
        entity: &'static str,
        /// The DynamoDB API call (`UpdateItem` or `DeleteItem`).
        operation: &'static str,
        /// The item's key, rendered as `PK=..., SK=...`.
        key: String,
        /// The item as stored now, if there is one.
        current: Option<Box<Item>>,
    },

    /// A single-item write (put, update or delete) whose every attempt ended without a
    /// definite answer (an HTTP 5xx, a timeout, a dropped connection), and whose outcome
    /// the crate could not settle: DynamoDB may or may not have applied it.
    ///
    /// When the SDK gives up on a write after such an attempt, the crate reads the item
    /// (strongly consistent) before answering. A put or update whose
    /// [`WriteToken`] is stored there was applied and reports
    /// success, as does a delete that finds the key empty; this error is what remains: the
    /// item does not carry the call's token (the write was not applied, or another write
    /// replaced it since), the item of a delete is still there, or the read failed too.
    ///
    /// **Resending.** Send the same write again with `token`
    /// ([`Put::write_token`](dynamo_model::item::Put::write_token),
    /// [`Update::write_token`](dynamo_model::item::Update::write_token)) and the same version or
    /// condition: if the first call was applied, the resent one finds its token and reports
    /// success without applying the write again (an `add` is counted once); if not, it is
    /// applied now. Resend only the same write: a token sent with other values would report
    /// the first write's success. A delete stores no token (`token` is `None`): `current` is
    /// the item it found still there; resent, a delete removes the item if it is there, and
    /// a versioned or must-exist delete that finds the key empty reports
    /// [`Error::VersionConflict`] / [`Error::NotFound`] (the item is gone either way).
    ///
    /// ```no_run
    /// # use dynamo_model::{Db, Entity, Error, Table};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// # #[derive(Entity, serde::Serialize, serde::Deserialize)]
    /// # #[dynamo(table = App, pk = "C#{id}", sk = "C")]
    /// # struct Counter { id: String, hits: u64, #[dynamo(version)] version: u64 }
    /// # async fn demo(db: Db<App>) -> Result<(), Error> {
    /// let f = Counter::fields();
    /// let update = || db.update(Counter::key("c")).add(f.hits, 1).if_version(7);
    /// let counter = match update().await {
    ///     Err(Error::OutcomeUnknown { token: Some(token), .. }) => {
    ///         // Applied once at most, whatever the first call did.
    ///         update().write_token(token).await?
    ///     }
    ///     other => other?,
    /// };
    /// # drop(counter);
    /// # Ok(()) }
    /// ```
    #[error(
        "{operation} for {entity}{}: every attempt ended without an answer, and the write may or may not have been applied",
        shown::suffix(" ", key)
    )]
    #[non_exhaustive]
    OutcomeUnknown {
        /// Entity type the request was for.
        entity: &'static str,
        /// The DynamoDB API call (`PutItem`, `UpdateItem` or `DeleteItem`).
        operation: &'static str,
        /// The item's key, rendered as `PK=..., SK=...`.
        key: String,
        /// The call's write token, to resend it with (`None` for a delete, which stores
        /// none).
        token: Option<WriteToken>,
        /// The item as the settling read found it (`None`: no item, or the read failed).
        current: Option<Box<Item>>,
        /// The error of the write's last attempt.
        #[source]
        source: Box<Error>,
    },

    /// A transaction was cancelled: nothing was applied. Lists each failed operation
    /// with its position, entity, key, reason and DynamoDB's message (and the current
    /// item when a condition failed). The message names keys only when
    /// [`Error::show_keys`] allows it.
    #[error("transaction cancelled: {}", describe_cancellations(operations))]
    #[non_exhaustive]
    TransactionCanceled {
        /// The operations that failed (those that would have succeeded are not listed).
        operations: Vec<CancelledOperation>,
    },

    /// A pagination cursor was refused: altered, malformed, or from another query.
    #[error("invalid cursor for {target}: {reason}")]
    #[non_exhaustive]
    Cursor {
        /// The entity or collection queried.
        target: &'static str,
        /// Why the cursor was refused.
        reason: CursorError,
    },

    /// The call's retry deadline ([`RetryPolicy::deadline`](crate::RetryPolicy)) passed
    /// while the outcome of its last request was unknown: the request was cut off in
    /// flight, or its last attempt ended in a server error or timeout, and DynamoDB may or
    /// may not have applied it. Batch calls never return this: they report the work of
    /// such a request as unprocessed.
    ///
    /// A write transaction cut off can be resent safely with the same
    /// `client_request_token` ([`TransactWrite::token`](dynamo_model::transact::TransactWrite::token))
    /// within 10 minutes: DynamoDB applies one token at most once.
    #[error(
        "{operation} on table {table}: the deadline passed with the outcome of the last request unknown; it may have been applied"
    )]
    #[non_exhaustive]
    DeadlineExceeded {
        /// The DynamoDB API call, e.g. `TransactWriteItems`.
        operation: &'static str,
        /// The table name.
        table: String,
        /// The idempotency token of the request cut off, for the calls that have one.
        client_request_token: Option<String>,
    },

    /// A file the crate reads or writes for the caller (a migration's checkpoint, see
    /// [`dynamo_model::migrate::FileCheckpoints`]) could not be read or written.
    #[error("{context}: {error}")]
    #[non_exhaustive]
    Io {
        /// What was being read or written.
        context: String,
        /// The I/O error (its kind to match on; the message says what it says).
        error: std::io::Error,
    },

    /// A migration stopped because DynamoDB refused its writes of `refusals` items in a
    /// row for one same reason (`last`, e.g. a `ValidationException` every item's write
    /// meets): going on would only report every remaining item as failed. The checkpoint
    /// saved holds the items of every request finished before the stop, so a run after the
    /// cause is fixed resumes there (the items of the unfinished request are read again;
    /// those already changed are left as they are). See
    /// [`Migration::stop_after_refusals`](dynamo_model::migrate::Migration::stop_after_refusals).
    #[error("migration {migration} stopped after {refusals} items in a row were refused")]
    #[non_exhaustive]
    MigrationStopped {
        /// The migration's name.
        migration: String,
        /// How many writes in a row were refused for the same reason.
        refusals: u32,
        /// The last refusal.
        #[source]
        last: Box<Error>,
    },

    /// DynamoDB answered with an error, or the SDK could not send the request or read
    /// its answer (a timeout, a refused connection, no credentials, no region). The
    /// message names which, in words; `source` is the SDK's error, with its own chain.
    #[error("{operation} on table {table} failed: {}", service::describe(source))]
    #[non_exhaustive]
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
    /// A short name of the error for traces: the DynamoDB error code of a service error,
    /// else the variant's name.
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    pub(crate) fn kind(&self) -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed(match self {
            Error::ConditionFailed { .. } => "ConditionFailed",
            Error::OtherEntityStored { .. } => "OtherEntityStored",
            Error::VersionConflict { .. } => "VersionConflict",
            Error::NotFound { .. } => "NotFound",
            Error::ChunksNotLoaded { .. } => "ChunksNotLoaded",
            Error::NotUnique { .. } => "NotUnique",
            Error::UniqueValueTaken { .. } => "UniqueValueTaken",
            Error::Decode(_) => "Decode",
            Error::Rule(_) => "Rule",
            Error::Stream(_) => "Stream",
            Error::Validation { .. } => "Validation",
            Error::Incomplete { .. } => "Incomplete",
            Error::UnexpectedResponse { .. } => "UnexpectedResponse",
            Error::ReturnValuesLost { .. } => "ReturnValuesLost",
            Error::OutcomeUnknown { .. } => "OutcomeUnknown",
            Error::TransactionCanceled { .. } => "TransactionCanceled",
            Error::Cursor { .. } => "Cursor",
            Error::DeadlineExceeded { .. } => "DeadlineExceeded",
            Error::Io { .. } => "Io",
            Error::MigrationStopped { .. } => "MigrationStopped",
            Error::Service { source, .. } => {
                return std::borrow::Cow::Owned(
                    service::code(source).unwrap_or_else(|| "Service".to_owned()),
                );
            }
        })
    }

    /// The SDK refused to build `operation`'s request (a required member missing).
    pub(crate) fn request_build(
        operation: &'static str,
        e: aws_sdk_dynamodb::error::BuildError,
    ) -> Self {
        Error::invalid_request(
            operation,
            ValidationReason::RequestBuild,
            format!("cannot build request: {e}"),
        )
        .caused_by(e)
    }

    /// A refusal that concerns a whole request rather than one entity (a transaction, a
    /// batch), for `operation`.
    pub(crate) fn invalid_request(
        operation: &'static str,
        reason: ValidationReason,
        message: impl Into<String>,
    ) -> Self {
        Error::Validation {
            entity: None,
            operation: Some(operation),
            reason,
            message: message.into(),
            cause: None,
        }
    }

    /// Attaches the cause of a refusal, whose words the message already says.
    pub(crate) fn caused_by(
        mut self,
        error: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        if let Error::Validation { cause, .. } = &mut self {
            *cause = Some(Box::new(error));
        }
        self
    }

    /// Names the DynamoDB call a refusal was for, unless it already names one.
    pub(crate) fn during(mut self, call: &'static str) -> Self {
        if let Error::Validation { operation, .. } = &mut self {
            operation.get_or_insert(call);
        }
        self
    }

    /// A refused operation of a transaction or batch: the call is `call`, and the message
    /// says which operation (0-based, in the order added) was refused.
    pub(crate) fn in_transaction(mut self, call: &'static str, index: usize) -> Self {
        if let Error::Validation {
            operation, message, ..
        } = &mut self
        {
            *operation = Some(call);
            *message = format!("operation {index}: {message}");
        }
        self
    }

    /// Whether DynamoDB throttled the request: a service error of provisioned throughput,
    /// request limits or throttling, or a transaction every failed operation of which was
    /// throttled.
    pub fn is_throttling(&self) -> bool {
        match self {
            Error::Service { source, .. } => matches!(
                service::code(source).as_deref(),
                Some(
                    "ProvisionedThroughputExceededException"
                        | "ThrottlingException"
                        | "RequestLimitExceeded"
                )
            ),
            Error::TransactionCanceled { operations } => {
                !operations.is_empty()
                    && operations.iter().all(|o| {
                        matches!(
                            o.reason,
                            CancelReason::ProvisionedThroughputExceeded
                                | CancelReason::ThrottlingError
                        )
                    })
            }
            _ => false,
        }
    }

    /// The reason of a [`Error::Validation`], if this is one.
    pub fn validation_reason(&self) -> Option<ValidationReason> {
        match self {
            Error::Validation { reason, .. } => Some(*reason),
            _ => None,
        }
    }

    pub(crate) fn key(entity: &'static str, source: KeyError) -> Self {
        let reason = match source {
            KeyError::Unordered { .. } => ValidationReason::UnorderedKeyPart,
            _ => ValidationReason::KeyEncoding,
        };
        Error::invalid(
            entity,
            reason,
            match reason {
                ValidationReason::UnorderedKeyPart => {
                    format!("sort-key condition refused: {source}")
                }
                _ => format!("key cannot be encoded: {source}"),
            },
        )
        .caused_by(source)
    }
}

/// Why a cursor was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CursorError {
    /// Not a cursor this crate produced (bad encoding or structure).
    #[error("malformed cursor: {0}")]
    Malformed(&'static str),
    /// The checksum does not match: the cursor was altered.
    #[error("the cursor was altered (checksum mismatch)")]
    Tampered,
    /// A valid cursor, but from another query (table, index, entity, key condition or
    /// direction; for a scatter query also the partitions, their number and order, and the
    /// filter).
    #[error("the cursor belongs to another query")]
    WrongQuery,
}

#[cfg(test)]
mod tests;
