//! The conditions the crate adds to requests of its own (guards): the item exists or is
//! absent, is of an entity type, is not expired, holds a version or a chunk manifest; and
//! their rendering into a request's placeholders, an unencodable value becoming a
//! validation error. Reads and writes build their condition trees from these.

use crate::expr::{AttrPath, Node, Placeholders};
use crate::{Condition, Entity, Error, Item, Table};
use aws_sdk_dynamodb::types::AttributeValue;
use std::borrow::Cow;

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

/// `version = :v` on the stored item.
pub(crate) fn version_is(attr: &'static str, version: u64) -> Node {
    Node::equals(attr, AttributeValue::N(version.to_string()))
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
    AttrPath::Top(attr).child(crate::expr::Segment::Member(Cow::Borrowed("t")))
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

/// The caller's condition as a tree, if it gave one.
pub(crate) fn user_condition<E>(c: Option<Condition<E>>) -> Option<Node> {
    c.map(|c| c.node)
}
