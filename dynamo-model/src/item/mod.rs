//! Operations on one item, by its key: [`Get`], [`Put`], [`Update`], [`Delete`], the
//! settlement of their ambiguous outcomes and the chunk protocol of large fields.
//!
//! Each is a builder from [`Db`](crate::Db) ([`Db::get`](crate::Db::get),
//! [`Db::put`](crate::Db::put), [`Db::update`](crate::Db::update),
//! [`Db::delete`](crate::Db::delete)) ending in `.send().await` (or just `.await`,
//! through `IntoFuture`). Reads of many items are in [`read`](crate::read).
//!
//! # Ambiguous errors
//!
//! DynamoDB may apply a write and lose its response: an HTTP 500 after the write, a
//! timeout, a broken connection. The SDK retries such errors by sending the same request
//! again, and the retry of a conditional write then fails its condition against the
//! call's own write. The single-item writes recognise that case and report success:
//! - [`Put`] and [`Update`] store a token unique to the call in the table's write-token
//!   attribute ([`TableSchema::write_token`](crate::TableSchema::write_token), `_wt` by
//!   default). A failed condition returns the item as stored
//!   (`ReturnValuesOnConditionCheckFailure=ALL_OLD`); when it carries the call's token,
//!   the call wrote it. Updates are also conditioned on the token not being stored yet,
//!   so a retried `add` is not added twice.
//! - An entity or table declared with `write_token = false` stores no token: its puts and
//!   updates are not retried after an attempt that may have been applied, and fail with
//!   [`Error::OutcomeUnknown`] without a token (see
//!   [`TableSchema::writes_token`](crate::TableSchema::writes_token)).
//! - [`Delete`] leaves no item to carry a token: it reports success when its condition
//!   fails with no item under the key after one of its own attempts ended ambiguously.
//!
//! Each builder's "Ambiguous errors" section says exactly what is recognised and what
//! stays ambiguous. An error that reaches the caller after all of the SDK's attempts
//! (a `Service` error with a 500, a timeout) still leaves open whether the write was
//! applied; sending it again is a new call with a new token. Transactions are made
//! idempotent by their `ClientRequestToken` instead ([`transact`](dynamo_model::transact)).

pub(crate) mod ambiguous;
pub(crate) mod chunks;
pub(crate) mod consistent;
mod delete;
mod get;
mod put;
mod transaction;
pub(crate) mod unique;
mod update;

pub use ambiguous::WriteToken;
pub use delete::{Delete, DeleteReturningOld};
pub use get::Get;
pub use put::Put;
pub use transaction::{MAX_TRANSACTION_ITEMS, TransactWrite};
pub use update::Update;

pub(crate) use crate::expr::guard::{
    absent_or_entity, absent_or_entity_rendered, and, is_entity, is_expired, item_absent,
    item_exists, manifest_is, no_manifest, render, user_condition, version_is,
};
use crate::expr::{Node, Placeholders};
use crate::{Condition, Entity, Error, Item, Table};
use aws_sdk_dynamodb::types::AttributeValue;

/// A single-item write rendered once, for its own request or as a transaction item.
#[derive(Clone)]
pub(crate) struct PreparedWrite {
    pub(crate) entity: &'static str,
    /// The key as `PK=..., SK=...`, for errors.
    pub(crate) key: String,
    /// The key attributes (absent for a put: the item carries them).
    pub(crate) key_item: Item,
    /// The whole item, for a put.
    pub(crate) item: Option<Item>,
    /// The update expression, for an update.
    pub(crate) update: Option<String>,
    pub(crate) condition: String,
    pub(crate) names: Option<std::collections::HashMap<String, String>>,
    pub(crate) values: Option<std::collections::HashMap<String, AttributeValue>>,
    /// A failed condition with no current item means "not found" (update, must_exist delete).
    pub(crate) needs_item: bool,
    /// The version attribute and the version the write expects to find.
    pub(crate) expected_version: Option<(&'static str, u64)>,
}

impl PreparedWrite {
    /// A write of entity `E` at `key` (described, and as attributes) on condition `guard`,
    /// rendered into `p` after what `p` already holds (an update's placeholders). It has no
    /// item, no update expression, and reads a failed condition with no item as a failed
    /// condition: set those members for a put, an update, a must-exist write.
    pub(crate) fn guarded<E: Entity>(
        key: (String, Item),
        p: Placeholders,
        guard: &Node,
    ) -> Result<Self, Error> {
        Self::guarded_for(E::ENTITY_TYPE, key, p, guard)
    }

    /// [`guarded`](Self::guarded) for a write of the crate's own items named `entity`
    /// (sentinels of unique values).
    pub(crate) fn guarded_for(
        entity: &'static str,
        (key, key_item): (String, Item),
        mut p: Placeholders,
        guard: &Node,
    ) -> Result<Self, Error> {
        let condition = crate::expr::guard::render_for(entity, &mut p, guard)?;
        let (names, values) = p.finish();
        Ok(PreparedWrite {
            entity,
            key,
            key_item,
            item: None,
            update: None,
            condition,
            names,
            values,
            needs_item: false,
            expected_version: None,
        })
    }
}

/// What reading a failed conditional write needs from its request.
#[derive(Clone)]
pub(crate) struct FailureContext {
    /// The key as `PK=..., SK=...`, for errors.
    pub(crate) key: String,
    /// A failed condition with no current item means "not found".
    pub(crate) needs_item: bool,
    /// The version attribute and the version the write expected to find.
    pub(crate) expected_version: Option<(&'static str, u64)>,
}

/// How an update or delete of a versioned entity treats the version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VersionCheck {
    /// Not chosen yet: refused for versioned entities.
    Unspecified,
    /// The stored version must be this.
    Expect(u64),
    /// Any version (the update still increments it).
    Any,
}

/// How a user's put, update or delete of an `E` is sent: settled by its token or a read of
/// its item (`token`: the write stores one); see [`Sending::write`].
///
/// [`Sending::write`]: crate::request::exec::Sending::write
pub(crate) fn write_sending<E: Entity>(
    db: &crate::Db<E::Table>,
    operation: crate::call::Operation,
    token: bool,
    item: Option<&Item>,
    returned: Option<&aws_sdk_dynamodb::types::ReturnValue>,
) -> crate::request::exec::Sending {
    let policy = crate::call::Policy::write(token);
    crate::request::exec::Sending::write(db, operation, policy, E::ENTITY_TYPE, item, returned)
}

/// The key attributes of an encoded item of `E`.
pub(crate) fn key_of_item<E: Entity>(item: &Item) -> Result<crate::RawKey, Error> {
    crate::schema::raw_key_of(&<E::Table as Table>::SCHEMA, item).ok_or_else(|| {
        Error::invalid(
            E::ENTITY_TYPE,
            crate::ValidationReason::KeyEncoding,
            "the encoded item lacks its key attributes",
        )
    })
}

/// `existing AND condition`: the conditions of one write combine by AND.
fn and_condition<E>(existing: Option<Condition<E>>, condition: Condition<E>) -> Condition<E> {
    match existing {
        Some(existing) => existing.and(condition),
        None => condition,
    }
}

/// `if_version` and `any_version` of a write builder with a `version: VersionCheck`
/// field, documented by the builder.
macro_rules! version_setters {
    ($expect:literal, $any:literal) => {
        #[doc = $expect]
        pub fn if_version(mut self, version: u64) -> Self {
            self.version = super::VersionCheck::Expect(version);
            self
        }

        #[doc = $any]
        pub fn any_version(mut self) -> Self {
            self.version = super::VersionCheck::Any;
            self
        }
    };
}
use version_setters;

/// Refuses a plain write of a `#[dynamo(history)]` entity: it would change the latest
/// copy without the revision that must go with it (see [`dynamo_model::history`]).
pub(crate) fn refuse_history<E: Entity>(operation: &str) -> Result<(), Error> {
    if E::__HISTORY.is_some() {
        let entity = E::ENTITY_TYPE;
        return Err(Error::invalid(
            entity,
            crate::ValidationReason::KeepsHistory,
            format!(
                "a {operation} would change the latest copy of a #[dynamo(history)] entity without writing its revision; use db.history::<{entity}>() (create, add, revise, restore, delete_all)"
            ),
        ));
    }
    Ok(())
}

/// The version a write stores after `v`, refusing to wrap around.
pub(crate) fn next_version<E: Entity>(v: u64) -> Result<u64, Error> {
    v.checked_add(1).ok_or_else(|| {
        Error::invalid(
            E::ENTITY_TYPE,
            crate::ValidationReason::VersionOverflow,
            "the version counter is at u64::MAX and cannot be incremented",
        )
    })
}

/// The version condition of an update or delete, or the error for a versioned entity
/// whose caller did not say which version it expects.
pub(crate) fn version_guard<E: Entity>(
    check: VersionCheck,
    operation: &str,
) -> Result<Option<(&'static str, u64)>, Error> {
    match (E::VERSION, check) {
        (None, VersionCheck::Expect(_)) => Err(Error::invalid(
            E::ENTITY_TYPE,
            crate::ValidationReason::NotVersioned,
            "if_version on an entity without a #[dynamo(version)] field",
        )),
        (None, _) | (Some(_), VersionCheck::Any) => Ok(None),
        (Some(attr), VersionCheck::Expect(v)) => Ok(Some((attr, v))),
        (Some(_), VersionCheck::Unspecified) => Err(Error::invalid(
            E::ENTITY_TYPE,
            crate::ValidationReason::VersionCheckRequired,
            format!(
                "{} is versioned: {operation} with .if_version(v) (checked) or .any_version()",
                E::ENTITY_TYPE
            ),
        )),
    }
}

/// The error for a failed condition: `OtherEntityStored` when the item under the key is
/// not of entity type `E` (the entity-type guard failed), `NotFound` when the operation
/// needed an item and there is none, `VersionConflict` when the stored version is not the
/// expected one, `ConditionFailed` with the current item otherwise.
pub(crate) fn condition_failed<E: Entity>(
    key: String,
    current: Option<Item>,
    needs_item: bool,
    expected_version: Option<(&'static str, u64)>,
) -> Error {
    if let Some(item) = &current {
        let stored = crate::collection::__private::entity_type_of_table::<E::Table>(item);
        let foreign = match stored {
            Some(stored) => stored != E::ENTITY_TYPE,
            None => !E::__IDENTIFY_BY_KEYS,
        };
        if foreign {
            return Error::OtherEntityStored {
                entity: E::ENTITY_TYPE,
                key,
                stored: stored.map(str::to_owned),
                current: current.map(Box::new),
            };
        }
    }
    if let Some((attr, expected)) = expected_version {
        let found = current
            .as_ref()
            .and_then(|item| item.get(attr))
            .and_then(|v| v.as_n().ok())
            .and_then(|n| n.parse::<u64>().ok());
        // Version 0 expects no item; any other version expects that version stored.
        let mismatch = match (expected, &current) {
            (0, current) => current.is_some(),
            (_, None) => true,
            (_, Some(_)) => found != Some(expected),
        };
        if mismatch {
            return Error::VersionConflict {
                entity: E::ENTITY_TYPE,
                key,
                expected,
                found,
                current: current.map(Box::new),
            };
        }
    }
    match current {
        None if needs_item => Error::NotFound {
            entity: E::ENTITY_TYPE,
            key,
        },
        current => Error::ConditionFailed {
            entity: E::ENTITY_TYPE,
            key,
            current: current.map(Box::new),
        },
    }
}
