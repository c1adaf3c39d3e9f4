//! Single-item operations: get, put, delete, update.
//!
//! Each is a builder ending in `.send().await` (or just `.await`, through `IntoFuture`).
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
mod delete;
mod get;
mod key_condition;
mod merge;
pub(crate) mod pager;
mod put;
mod query;
mod scan;
mod scatter;
pub(crate) mod source;
mod update;

pub use crate::request::BoxFuture;
pub use crate::request::page::{Page, UnknownEntity};
pub use ambiguous::WriteToken;
pub use delete::{Delete, DeleteReturningOld};
pub use get::Get;
pub use key_condition::{IntoPartition, IntoSortKey, PartitionValue, SortCondition};
pub use put::Put;
pub(crate) use put::Sent;
pub use query::Query;
pub use scan::Scan;
pub use scatter::{DEFAULT_SCATTER_CONCURRENCY, ScatterQuery};
pub use update::{Numeric, StringSet, Update};

use crate::expr::{AttrPath, Node, Placeholders};
use crate::{Condition, Entity, Error, Item, Table};
use aws_sdk_dynamodb::types::AttributeValue;
use std::borrow::Cow;

/// A single-item write rendered once, for its own request or as a transaction item.
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
        (key, key_item): (String, Item),
        mut p: Placeholders,
        guard: &Node,
    ) -> Result<Self, Error> {
        let condition = render::<E>(&mut p, guard)?;
        let (names, values) = p.finish();
        Ok(PreparedWrite {
            entity: E::ENTITY_TYPE,
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

/// The key attributes of an encoded item of `E`.
pub(crate) fn key_of_item<E: Entity>(item: &Item) -> Result<crate::RawKey, Error> {
    crate::keytext::raw_key_of(&<E::Table as Table>::SCHEMA, item).ok_or_else(|| {
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

fn now_epoch() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// `attribute_not_exists(ttl) OR ttl > :now`: items not yet expired. DynamoDB deletes
/// expired items lazily (typically within days), so reads see them until then.
pub(crate) fn not_expired<T: crate::Table>() -> Option<Node> {
    let ttl = T::SCHEMA.ttl?;
    Some(Node::either(
        Node::absent(ttl),
        Node::compare(
            ttl,
            crate::expr::CompareOp::Gt,
            AttributeValue::N(now_epoch().to_string()),
        ),
    ))
}

/// Whether an item's TTL attribute lies in the past.
pub(crate) fn is_expired<T: crate::Table>(item: &Item) -> bool {
    let Some(ttl) = T::SCHEMA.ttl else {
        return false;
    };
    item.get(ttl)
        .and_then(|v| v.as_n().ok())
        .and_then(|n| n.parse::<f64>().ok())
        .is_some_and(|t| t <= now_epoch() as f64)
}

/// The version a write stores after `v`, refusing to wrap around.
/// Refuses a plain write of a `#[dynamo(versioned)]` entity: it would change the latest
/// copy without the revision that must go with it (see [`dynamo_model::history`]).
pub(crate) fn refuse_history<E: Entity>(operation: &str) -> Result<(), Error> {
    if E::__HISTORY.is_some() {
        return Err(Error::invalid(
            E::ENTITY_TYPE,
            crate::ValidationReason::KeepsHistory,
            format!(
                "a {operation} would change the latest copy of a #[dynamo(versioned)] entity without writing its revision; use db.versions::<{}>() (create, add, revise, restore, delete_all)",
                E::ENTITY_TYPE
            ),
        ));
    }
    Ok(())
}

pub(crate) fn next_version<E: Entity>(v: u64) -> Result<u64, Error> {
    v.checked_add(1).ok_or_else(|| {
        Error::invalid(
            E::ENTITY_TYPE,
            crate::ValidationReason::VersionOverflow,
            "the version counter is at u64::MAX and cannot be incremented",
        )
    })
}

/// `version = :v` on the stored item.
pub(crate) fn version_is(attr: &'static str, version: u64) -> Node {
    Node::Compare {
        path: attr.into(),
        op: crate::expr::CompareOp::Eq,
        value: Ok(AttributeValue::N(version.to_string())),
    }
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

/// `attribute_exists(PK)`: the item exists.
pub(crate) fn item_exists<E: Entity>() -> Node {
    Node::exists(<E::Table as Table>::SCHEMA.pk.name)
}

/// `attribute_not_exists(PK)`: there is no item under the key.
pub(crate) fn item_absent<E: Entity>() -> Node {
    Node::absent(<E::Table as Table>::SCHEMA.pk.name)
}

/// `attr.t = :token`: the stored chunked field names the chunks of write `token`
/// (`crate::chunk`).
pub(crate) fn manifest_is(attr: &'static str, token: &str) -> Node {
    Node::equals(manifest_token(attr), AttributeValue::S(token.to_owned()))
}

/// `attr.t`: where a chunked field's manifest records its write's token.
fn manifest_token(attr: &'static str) -> AttrPath {
    AttrPath::Nested(vec![Cow::Borrowed(attr), Cow::Borrowed("t")].into())
}

/// `attribute_not_exists(attr.t)`: the stored chunked field names no chunks (absent or
/// inline).
pub(crate) fn no_manifest(attr: &'static str) -> Node {
    Node::absent(manifest_token(attr))
}

/// The stored item is of entity type `E`: its entity-type attribute says so, or, for an
/// entity identified by its keys, it has none (the key, rendered by `E`'s templates and
/// no other such entity's, says so).
pub(crate) fn is_entity<E: Entity>() -> Node {
    let attribute = <E::Table as Table>::SCHEMA.entity_type;
    let typed = Node::equals(attribute, AttributeValue::S(E::ENTITY_TYPE.to_owned()));
    if !E::__IDENTIFY_BY_KEYS {
        return typed;
    }
    Node::either(typed, Node::absent(attribute))
}

/// No item, or an item of entity type `E`: writes through a `Key<E>` never clobber an
/// item of another entity type that happens to share the key.
pub(crate) fn absent_or_entity<E: Entity>() -> Node {
    Node::Or(Box::new(item_absent::<E>()), Box::new(is_entity::<E>()))
}

/// A condition expression with its placeholder names and values.
pub(crate) type RenderedCondition = (
    String,
    Option<std::collections::HashMap<String, String>>,
    Option<std::collections::HashMap<String, AttributeValue>>,
);

/// [`absent_or_entity`] as rendered on its own: the condition, names and values the
/// general renderer makes of it, written out (it is the guard of every plain put, and the
/// renderer spends about 9,000 instructions on it; a unit test holds the two equal).
pub(crate) fn absent_or_entity_rendered<E: Entity>() -> RenderedCondition {
    let schema = &<E::Table as Table>::SCHEMA;
    (
        if E::__IDENTIFY_BY_KEYS {
            "attribute_not_exists(#n0) OR (#n1 = :v0 OR attribute_not_exists(#n1))"
        } else {
            "attribute_not_exists(#n0) OR #n1 = :v0"
        }
        .to_owned(),
        Some(std::collections::HashMap::from([
            ("#n0".to_owned(), schema.pk.name.to_owned()),
            ("#n1".to_owned(), schema.entity_type.to_owned()),
        ])),
        Some(std::collections::HashMap::from([(
            ":v0".to_owned(),
            AttributeValue::S(E::ENTITY_TYPE.to_owned()),
        )])),
    )
}

pub(crate) fn and_opt(a: Option<Node>, b: Option<Node>) -> Option<Node> {
    match (a, b) {
        (Some(a), b) => Some(and(a, b)),
        (None, b) => b,
    }
}

pub(crate) fn and(a: Node, b: Option<Node>) -> Node {
    match b {
        Some(b) => Node::And(Box::new(a), Box::new(b)),
        None => a,
    }
}

/// Renders a condition into the request's placeholders, turning an unencodable value
/// into a validation error.
pub(crate) fn render<E: Entity>(p: &mut Placeholders, node: &Node) -> Result<String, Error> {
    render_for(E::ENTITY_TYPE, p, node)
}

/// [`render`] for a target named `entity` (an entity or a collection).
pub(crate) fn render_for(
    entity: &'static str,
    p: &mut Placeholders,
    node: &Node,
) -> Result<String, Error> {
    p.render_condition(node).map_err(|e| {
        Error::invalid(
            entity,
            e.source.validation_reason(),
            format!(
                "condition value for `{}` cannot be stored: {}",
                e.path, e.source
            ),
        )
        .caused_by(e.source)
    })
}

pub(crate) fn user_condition<E>(c: Option<Condition<E>>) -> Option<Node> {
    c.map(|c| c.node)
}

/// The error for a failed condition: `NotFound` when the operation needed an item and
/// there is none, `VersionConflict` when the stored version is not the expected one,
/// `ConditionFailed` with the current item otherwise.
pub(crate) fn condition_failed<E: Entity>(
    key: String,
    current: Option<Item>,
    needs_item: bool,
    expected_version: Option<(&'static str, u64)>,
) -> Error {
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
