//! Conditions the crate writes for itself (chunk ownership, the sweep's filters, version
//! and token guards), built as the same condition trees users build, so that one
//! renderer writes every expression.

use super::operand::Term;
use super::{AttrPath, CompareOp, Node, Placeholders};
use aws_sdk_dynamodb::types::AttributeValue;

impl Node {
    /// `path <op> value`.
    pub(crate) fn compare(path: impl Into<AttrPath>, op: CompareOp, value: AttributeValue) -> Node {
        Node::Compare {
            left: Term::Path(path.into()),
            op,
            right: value.into(),
        }
    }

    /// `path BETWEEN low AND high`.
    pub(crate) fn between(
        path: impl Into<AttrPath>,
        low: AttributeValue,
        high: AttributeValue,
    ) -> Node {
        Node::Between {
            subject: Term::Path(path.into()),
            low: low.into(),
            high: high.into(),
        }
    }

    /// `begins_with(path, prefix)`.
    pub(crate) fn begins_with(path: impl Into<AttrPath>, prefix: AttributeValue) -> Node {
        Node::BeginsWith {
            path: path.into(),
            value: prefix.into(),
        }
    }

    /// `path IN (values)`.
    pub(crate) fn one_of(path: impl Into<AttrPath>, values: Vec<AttributeValue>) -> Node {
        Node::In {
            subject: Term::Path(path.into()),
            values: values.into_iter().map(Term::from).collect(),
        }
    }

    /// `path = value`.
    pub(crate) fn equals(path: impl Into<AttrPath>, value: AttributeValue) -> Node {
        Node::compare(path, CompareOp::Eq, value)
    }

    /// `attribute_not_exists(path)`.
    pub(crate) fn absent(path: impl Into<AttrPath>) -> Node {
        Node::Function {
            function: "attribute_not_exists",
            path: path.into(),
        }
    }

    /// No value at `path`: `attribute_not_exists(path)`, and for a nested path also a
    /// `NULL` there (how a list, or a map written by another writer, stores `None`).
    pub(crate) fn absent_value(path: AttrPath) -> Node {
        match path {
            AttrPath::Top(_) => Node::absent(path),
            nested => Node::either(
                Node::absent(nested.clone()),
                Node::AttributeType {
                    path: nested,
                    kind: super::AttributeType::Null,
                },
            ),
        }
    }

    /// A value at `path`: the negation of [`absent_value`](Node::absent_value).
    pub(crate) fn present_value(path: AttrPath) -> Node {
        match path {
            AttrPath::Top(_) => Node::exists(path),
            nested => Node::And(
                Box::new(Node::exists(nested.clone())),
                Box::new(Node::Not(Box::new(Node::AttributeType {
                    path: nested,
                    kind: super::AttributeType::Null,
                }))),
            ),
        }
    }

    /// `attribute_exists(path)`.
    pub(crate) fn exists(path: impl Into<AttrPath>) -> Node {
        Node::Function {
            function: "attribute_exists",
            path: path.into(),
        }
    }

    /// `a OR b`.
    pub(crate) fn either(a: Node, b: Node) -> Node {
        Node::Or(Box::new(a), Box::new(b))
    }

    /// `first AND b AND …`, rendered without parentheses.
    /// The crate's own item of type `kind` (in the entity-type attribute `type_attr`)
    /// that names `owner` in `owner_pk` and `owner_sk` (absent for a key without a sort
    /// key), and satisfies `more`: a chunk of an item's field, a sentinel of its value.
    pub(crate) fn owned_by(
        (type_attr, kind): (&'static str, &'static str),
        (owner_pk, owner_sk): (&'static str, &'static str),
        owner: &crate::key::RawKey,
        more: impl IntoIterator<Item = Node>,
    ) -> Node {
        let text = |v: &str| AttributeValue::S(v.to_owned());
        let sk = match &owner.sk {
            Some(sk) => Node::equals(owner_sk, text(sk)),
            None => Node::absent(owner_sk),
        };
        let owned = [Node::equals(owner_pk, text(&owner.pk)), sk];
        Node::all(
            Node::equals(type_attr, text(kind)),
            owned.into_iter().chain(more),
        )
    }

    pub(crate) fn all(first: Node, rest: impl IntoIterator<Item = Node>) -> Node {
        rest.into_iter()
            .fold(first, |a, b| Node::And(Box::new(a), Box::new(b)))
    }
}

impl Placeholders {
    /// A `ProjectionExpression` of `attributes`: their placeholders, comma-separated.
    pub(crate) fn projection<'a>(
        &mut self,
        attributes: impl IntoIterator<Item = &'a str>,
    ) -> String {
        let names: Vec<String> = attributes.into_iter().map(|a| self.name(a)).collect();
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conjunction_renders_in_order_without_parentheses() {
        let s = |v: &str| AttributeValue::S(v.to_owned());
        let node = Node::all(
            Node::equals("a", s("1")),
            [Node::absent("b"), Node::compare("c", CompareOp::Le, s("3"))],
        );
        let mut p = Placeholders::default();
        let text = p.render_condition(&node).expect("plain values");
        assert_eq!(
            text,
            "#n0 = :v0 AND attribute_not_exists(#n1) AND #n2 <= :v1"
        );
    }
}
