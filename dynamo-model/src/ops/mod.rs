//! Single-item operations: get, put, delete, update.
//!
//! Each is a builder ending in `.send().await` (or just `.await`, through `IntoFuture`).

mod delete;
mod get;
mod put;
pub(crate) mod query;
mod scan;
mod update;

pub use delete::{Delete, DeleteReturningOld};
pub use get::Get;
pub use put::Put;
pub use query::{
    IntoPartition, IntoSortKey, Page, PartitionValue, Query, SortCondition, UnknownEntity,
};
pub use scan::Scan;
pub use update::{Numeric, Update};

use crate::expr::{Node, Placeholders};
use crate::{Condition, Entity, Error, Item, Table};
use aws_sdk_dynamodb::types::AttributeValue;

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
}

/// Boxed future returned by the builders' `IntoFuture` implementations.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// `attribute_exists(PK)`: the item exists.
pub(crate) fn item_exists<E: Entity>() -> Node {
    Node::Function {
        function: "attribute_exists",
        path: <E::Table as Table>::SCHEMA.pk.name,
    }
}

/// `attribute_not_exists(PK)`: there is no item under the key.
pub(crate) fn item_absent<E: Entity>() -> Node {
    Node::Function {
        function: "attribute_not_exists",
        path: <E::Table as Table>::SCHEMA.pk.name,
    }
}

/// The stored item is of entity type `E`.
pub(crate) fn is_entity<E: Entity>() -> Node {
    Node::Compare {
        path: <E::Table as Table>::SCHEMA.entity_type,
        op: crate::expr::CompareOp::Eq,
        value: Ok(AttributeValue::S(E::ENTITY_TYPE.to_owned())),
    }
}

/// No item, or an item of entity type `E`: writes through a `Key<E>` never clobber an
/// item of another entity type that happens to share the key.
pub(crate) fn absent_or_entity<E: Entity>() -> Node {
    Node::Or(Box::new(item_absent::<E>()), Box::new(is_entity::<E>()))
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
    p.render_condition(node).map_err(|e| Error::Validation {
        entity,
        message: format!(
            "condition value for `{}` cannot be stored: {}",
            e.path, e.source
        ),
        source: Some(Box::new(e.source)),
    })
}

pub(crate) fn user_condition<E>(c: Option<Condition<E>>) -> Option<Node> {
    c.map(|c| c.node)
}

/// The error for a failed condition: `NotFound` when the operation needed an item and
/// there is none, `ConditionFailed` with the current item otherwise.
pub(crate) fn condition_failed<E: Entity>(
    key: String,
    current: Option<Item>,
    needs_item: bool,
) -> Error {
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

/// Implements `IntoFuture` for a builder with an `async fn send(self)`.
macro_rules! into_future {
    ($builder:ident, $output:ty) => {
        impl<'a, E: $crate::Entity> ::std::future::IntoFuture for $builder<'a, E> {
            type Output = Result<$output, $crate::Error>;
            type IntoFuture = $crate::ops::BoxFuture<'a, Self::Output>;
            fn into_future(self) -> Self::IntoFuture {
                Box::pin(self.send())
            }
        }
    };
}
pub(crate) use into_future;
