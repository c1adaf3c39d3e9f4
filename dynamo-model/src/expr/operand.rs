//! The operands of a condition: a value, another attribute, or the size of one. What a
//! comparison accepts is typed: a value or the path of an attribute of the same type.

use super::AttrPath;
use super::path::{NestedPath, Path};
use crate::codec::{AttrValue, EncodeError, Operand};
use aws_sdk_dynamodb::types::AttributeValue;

/// An operand of a comparison, as rendered: `:v`, `#n`, or `size(#n)`.
#[derive(Debug, Clone)]
#[doc(hidden)]
pub enum Term {
    /// A value (or why it could not be encoded; reported when the request is sent).
    Value(Result<AttributeValue, ValueError>),
    /// The value of another attribute of the same item.
    Path(AttrPath),
    /// `size(path)`.
    Size(AttrPath),
    /// An absent value (`None`, an empty set): no attribute is stored for it, so only
    /// equality (`attribute_not_exists`) and inequality (`attribute_exists`) can test it.
    Absent(String),
}

impl From<AttributeValue> for Term {
    fn from(value: AttributeValue) -> Self {
        Term::Value(Ok(value))
    }
}

impl Term {
    /// `value` encoded as the value of the attribute at `path` (named in the error).
    pub(crate) fn encoded<V: AttrValue>(path: &AttrPath, value: &V) -> Term {
        match value.to_attr_opt() {
            Ok(Some(value)) => Term::Value(Ok(value)),
            Ok(None) => Term::Absent(path.to_string()),
            Err(source) => Term::Value(Err(ValueError {
                path: path.to_string(),
                source,
            })),
        }
    }
}

/// A value that could not be encoded for a condition; reported when the request is sent.
#[derive(Debug, Clone)]
pub struct ValueError {
    pub(crate) path: String,
    pub(crate) source: EncodeError,
}

/// Marker of a [`Comparand`] that is a value.
#[doc(hidden)]
#[derive(Debug)]
pub enum ValueOperand {}

/// Marker of a [`Comparand`] that is another attribute.
#[doc(hidden)]
#[derive(Debug)]
pub enum PathOperand {}

/// What a path of entity `E` holding a `V` compares with: a value (anything that is an
/// [`Operand<V>`](crate::Operand): the `V`, a reference to one, a `&str` for a `String`,
/// ...) or the path of another attribute of `E` holding the same type (optional or not):
/// `f.shipped_at.ge(f.ordered_at)` is `#shipped_at >= #ordered_at`. `K` tells the two
/// apart and is inferred. Sealed: implemented by the crate only.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is neither a value nor the path of an attribute of type `{V}`",
    label = "expected a `{V}` (or a reference to one), or the path of a `{V}` field of the same entity",
    note = "a field compares with its own type, a reference to it, a `&str` for a `String`, the inner value of an `Option`, or another field of the same type; convert other types first (e.g. `u64::from(n)`)"
)]
pub trait Comparand<E, V, K>: Sized {
    /// The operand, for the attribute at `subject`.
    #[doc(hidden)]
    fn __term(self, subject: &AttrPath) -> Term;
}

impl<E, V: AttrValue, T: Operand<V>> Comparand<E, V, ValueOperand> for T {
    fn __term(self, subject: &AttrPath) -> Term {
        Term::encoded(subject, &self.into_operand())
    }
}

impl<E, V, W: SameValue<V>, M> Comparand<E, V, PathOperand> for Path<E, W, M> {
    fn __term(self, _: &AttrPath) -> Term {
        Term::Path(self.attr_path())
    }
}

impl<E, V, W: SameValue<V>, M> Comparand<E, V, PathOperand> for NestedPath<E, W, M> {
    fn __term(self, _: &AttrPath) -> Term {
        Term::Path(self.attr_path())
    }
}

impl<E, V, W: SameValue<V>, M> Comparand<E, V, PathOperand> for &NestedPath<E, W, M> {
    fn __term(self, _: &AttrPath) -> Term {
        Term::Path(self.attr_path())
    }
}

/// Attribute types that compare with each other: a type and itself, and a type and its
/// `Option`. Sealed.
pub trait SameValue<V>: crate::sealed::SameValue {}
impl<V> crate::sealed::SameValue for V {}
impl<V> SameValue<V> for V {}
impl<V> SameValue<V> for Option<V> {}
impl<V> SameValue<Option<V>> for V {}

/// The DynamoDB data types [`is_type`](crate::Path::is_type) tests for
/// (`attribute_type(path, :type)`), named as the SDK's `AttributeValue` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttributeType {
    /// A string (`S`).
    S,
    /// A string set (`SS`).
    Ss,
    /// A number (`N`).
    N,
    /// A number set (`NS`).
    Ns,
    /// A binary (`B`).
    B,
    /// A binary set (`BS`).
    Bs,
    /// A boolean (`BOOL`).
    Bool,
    /// A null (`NULL`).
    Null,
    /// A list (`L`).
    L,
    /// A map (`M`).
    M,
}

impl AttributeType {
    /// The type's name in DynamoDB's wire format (`S`, `NS`, `BOOL`, ...).
    pub fn code(self) -> &'static str {
        match self {
            AttributeType::S => "S",
            AttributeType::Ss => "SS",
            AttributeType::N => "N",
            AttributeType::Ns => "NS",
            AttributeType::B => "B",
            AttributeType::Bs => "BS",
            AttributeType::Bool => "BOOL",
            AttributeType::Null => "NULL",
            AttributeType::L => "L",
            AttributeType::M => "M",
        }
    }
}
