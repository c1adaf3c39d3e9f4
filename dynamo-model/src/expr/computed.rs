//! Values an update computes on the server, from the item's own attributes: `SET a = b`,
//! `SET a = b + :x`, `SET a = if_not_exists(a, :zero) - :x`, `SET l = list_append(l, m)`.
//! The grammar is DynamoDB's: one `+` or `-` per action, between operands that are values,
//! paths, `if_not_exists(path, operand)` or `list_append(operand, operand)`.

use super::operand::{PathOperand, SameValue, Term, ValueError, ValueOperand};
use super::path::{NestedPath, Path};
use super::{AttrPath, Placeholders};
use crate::codec::{AttrValue, Numeric, Operand};
use std::marker::PhantomData;

/// A computed value as rendered.
#[derive(Debug, Clone)]
#[doc(hidden)]
pub enum SetNode {
    /// A value or another attribute.
    Term(Term),
    /// `if_not_exists(path, operand)`.
    IfNotExists(AttrPath, Box<SetNode>),
    /// `list_append(operand, operand)`.
    ListAppend(Box<SetNode>, Box<SetNode>),
    /// `operand + operand`.
    Plus(Box<SetNode>, Box<SetNode>),
    /// `operand - operand`.
    Minus(Box<SetNode>, Box<SetNode>),
}

impl SetNode {
    /// Every attribute the value reads.
    pub(crate) fn reads(&self) -> Vec<&AttrPath> {
        match self {
            SetNode::Term(Term::Path(p) | Term::Size(p)) => vec![p],
            SetNode::Term(_) => Vec::new(),
            SetNode::IfNotExists(p, then) => std::iter::once(p).chain(then.reads()).collect(),
            SetNode::ListAppend(a, b) | SetNode::Plus(a, b) | SetNode::Minus(a, b) => {
                a.reads().into_iter().chain(b.reads()).collect()
            }
        }
    }
}

impl Placeholders {
    /// The text of a computed value: `#n0 + :v0`, `if_not_exists(#n0, :v1)`, ...
    pub(crate) fn set_value(&mut self, node: &SetNode) -> Result<String, ValueError> {
        Ok(match node {
            SetNode::Term(term) => self.term(term)?,
            SetNode::IfNotExists(path, then) => {
                if let SetNode::Term(term) = &**then {
                    Placeholders::distinct(&Term::Path(path.clone()), [term])?;
                }
                let n = self.path(path);
                format!("if_not_exists({n}, {})", self.set_value(then)?)
            }
            SetNode::ListAppend(a, b) => {
                let a = self.set_value(a)?;
                format!("list_append({a}, {})", self.set_value(b)?)
            }
            SetNode::Plus(a, b) => {
                let a = self.set_value(a)?;
                format!("{a} + {}", self.set_value(b)?)
            }
            SetNode::Minus(a, b) => {
                let a = self.set_value(a)?;
                format!("{a} - {}", self.set_value(b)?)
            }
        })
    }
}

/// Marker of a [`SetOperand`] that is a [`Computed`] value.
#[doc(hidden)]
#[derive(Debug)]
pub enum ComputedOperand {}

/// Marker of a [`SetValue`] that is a [`Combined`] value.
#[doc(hidden)]
#[derive(Debug)]
pub enum CombinedOperand {}

/// A `V` that DynamoDB computes when it applies an update: `if_not_exists(path, operand)`
/// ([`Path::if_not_exists`]). It is an operand of a [`Combined`] value and of other
/// computed values, and the value of
/// [`Update::set_to`](dynamo_model::item::Update::set_to).
pub struct Computed<E, V> {
    node: SetNode,
    _marker: PhantomData<fn() -> (E, V)>,
}

/// A value combined from two operands: `operand + operand`, `operand - operand` or
/// `list_append(operand, operand)`. It is the whole value of an
/// [`Update::set_to`](dynamo_model::item::Update::set_to), never an operand: DynamoDB
/// allows one `+` or `-` an action and no `list_append` inside another function.
pub struct Combined<E, V> {
    node: SetNode,
    _marker: PhantomData<fn() -> (E, V)>,
}

impl<E, V> std::fmt::Debug for Computed<E, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Computed").field(&self.node).finish()
    }
}

impl<E, V> std::fmt::Debug for Combined<E, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Combined").field(&self.node).finish()
    }
}

/// An operand of a computed value of type `V` for entity `E`: a value (anything that is an
/// [`Operand<V>`](crate::Operand)), the path of an attribute of the same type, or a
/// [`Computed`] value. `K` tells them apart and is inferred. Sealed.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a value, a path or a computed value of type `{V}`",
    label = "expected a `{V}`, the path of a `{V}` field of the same entity, or a computed `{V}`",
    note = "a sum, a difference or a list_append is not an operand: DynamoDB allows one `+` or `-` an action and no list_append inside another function"
)]
pub trait SetOperand<E, V, K> {
    /// The operand, for the attribute at `target`.
    #[doc(hidden)]
    fn __node(self, target: &AttrPath) -> SetNode;
}

/// What [`Update::set_to`](dynamo_model::item::Update::set_to) sets an attribute of type `V` to:
/// every [`SetOperand`], or a [`Combined`] value. Sealed.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a value an update can compute for an attribute of type `{V}`",
    label = "expected a `{V}`, the path of a `{V}` field of the same entity, or a computed `{V}`"
)]
pub trait SetValue<E, V, K> {
    /// The value, for the attribute at `target`.
    #[doc(hidden)]
    fn __node(self, target: &AttrPath) -> SetNode;
}

/// Implements [`SetOperand`] and [`SetValue`] alike for one kind of operand.
macro_rules! operand {
    (impl[$($g:tt)*] $ty:ty, $marker:ty, |$self:ident, $target:ident| $body:expr) => {
        impl<$($g)*> SetOperand<E, V, $marker> for $ty {
            fn __node($self, $target: &AttrPath) -> SetNode {
                $body
            }
        }
        impl<$($g)*> SetValue<E, V, $marker> for $ty {
            fn __node($self, $target: &AttrPath) -> SetNode {
                $body
            }
        }
    };
}

operand!(impl[E, V: AttrValue, T: Operand<V>] T, ValueOperand, |self, target| {
    SetNode::Term(Term::encoded(target, &self.into_operand()))
});
operand!(impl[E, V, W: SameValue<V>, M] Path<E, W, M>, PathOperand, |self, _target| {
    SetNode::Term(Term::Path(self.attr_path()))
});
operand!(impl[E, V, W: SameValue<V>, M] NestedPath<E, W, M>, PathOperand, |self, _target| {
    SetNode::Term(Term::Path(self.attr_path()))
});
operand!(impl[E, V, W: SameValue<V>, M] &NestedPath<E, W, M>, PathOperand, |self, _target| {
    SetNode::Term(Term::Path(self.attr_path()))
});
operand!(impl[E, V, W: SameValue<V>] Computed<E, W>, ComputedOperand, |self, _target| self.node);

impl<E, V, W: SameValue<V>> SetValue<E, V, CombinedOperand> for Combined<E, W> {
    fn __node(self, _: &AttrPath) -> SetNode {
        self.node
    }
}

impl<E, V> Computed<E, V> {
    fn new(node: SetNode) -> Self {
        Computed {
            node,
            _marker: PhantomData,
        }
    }
}

impl<E, V: Numeric> Computed<E, V> {
    /// `self + operand`.
    pub fn plus<K>(self, operand: impl SetOperand<E, V, K>) -> Combined<E, V> {
        sum(self.node, operand, SetNode::Plus)
    }

    /// `self - operand`.
    pub fn minus<K>(self, operand: impl SetOperand<E, V, K>) -> Combined<E, V> {
        sum(self.node, operand, SetNode::Minus)
    }
}

fn sum<E, V, K>(
    left: SetNode,
    right: impl SetOperand<E, V, K>,
    op: fn(Box<SetNode>, Box<SetNode>) -> SetNode,
) -> Combined<E, V> {
    // A value on the right is encoded as the left side's type; the path names it in an
    // error.
    let at = left.reads().first().map(|p| (*p).clone());
    let right = right.__node(&at.unwrap_or(AttrPath::Top("")));
    Combined {
        node: op(Box::new(left), Box::new(right)),
        _marker: PhantomData,
    }
}

/// `list_append(first, second)`: the elements of `first`, then those of `second`; each a
/// list value, the path of a list attribute, or `if_not_exists(..)` of one.
pub fn list_append<E, T, K, L>(
    first: impl SetOperand<E, Vec<T>, K>,
    second: impl SetOperand<E, Vec<T>, L>,
) -> Combined<E, Vec<T>> {
    let here = AttrPath::Top("list_append");
    Combined {
        node: SetNode::ListAppend(
            Box::new(first.__node(&here)),
            Box::new(second.__node(&here)),
        ),
        _marker: PhantomData,
    }
}

macro_rules! computed_methods {
    ($ty:ident) => {
        impl<E, V, M> $ty<E, V, M> {
            /// `if_not_exists(path, operand)`: the attribute's value, or `operand` when it
            /// is absent (a value, another attribute, or a computed value).
            pub fn if_not_exists<K>(&self, operand: impl SetOperand<E, V, K>) -> Computed<E, V> {
                let path = self.attr_path();
                let otherwise = operand.__node(&path);
                Computed::new(SetNode::IfNotExists(path, Box::new(otherwise)))
            }
        }

        impl<E, V: Numeric, M> $ty<E, V, M> {
            /// `path + operand`, computed by DynamoDB: `SET total = subtotal + tax`.
            pub fn plus<K>(&self, operand: impl SetOperand<E, V, K>) -> Combined<E, V> {
                sum(
                    SetNode::Term(Term::Path(self.attr_path())),
                    operand,
                    SetNode::Plus,
                )
            }

            /// `path - operand`, computed by DynamoDB.
            pub fn minus<K>(&self, operand: impl SetOperand<E, V, K>) -> Combined<E, V> {
                sum(
                    SetNode::Term(Term::Path(self.attr_path())),
                    operand,
                    SetNode::Minus,
                )
            }
        }
    };
}
computed_methods!(Path);
computed_methods!(NestedPath);

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_dynamodb::types::AttributeValue;

    fn path(name: &'static str) -> Box<SetNode> {
        Box::new(SetNode::Term(Term::Path(AttrPath::Top(name))))
    }

    fn number(n: &str) -> Box<SetNode> {
        Box::new(SetNode::Term(AttributeValue::N(n.into()).into()))
    }

    #[test]
    fn computed_values_render_as_dynamodb_reads_them_and_list_what_they_read() {
        let total = SetNode::Plus(
            path("subtotal"),
            Box::new(SetNode::IfNotExists(AttrPath::Top("shipping"), number("0"))),
        );
        let appended = SetNode::ListAppend(path("log"), path("more"));
        let less = SetNode::Minus(path("a"), number("1"));
        let mut p = Placeholders::default();
        assert_eq!(
            p.set_value(&total).unwrap(),
            "#n0 + if_not_exists(#n1, :v0)"
        );
        assert_eq!(p.set_value(&appended).unwrap(), "list_append(#n2, #n3)");
        assert_eq!(p.set_value(&less).unwrap(), "#n4 - :v1");
        let reads: Vec<String> = total.reads().iter().map(|p| p.to_string()).collect();
        assert_eq!(reads, ["subtotal", "shipping"]);
        let absent = SetNode::Term(Term::Absent("credit".into()));
        let err = p.set_value(&absent).unwrap_err();
        assert_eq!(err.path, "credit");
    }
}
