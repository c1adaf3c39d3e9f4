//! Typed attribute paths and condition expressions.
//!
//! `#[derive(Entity)]` generates a [`Path`] per field (`Order::fields().total_cents`).
//! Conditions built from them are typed by entity (a `Condition<User>` cannot guard a
//! put of an `Order`) and by value (a `u64` field compares with `u64` values). Every name
//! and value is sent through `#n`/`:v` placeholders, so attributes named like DynamoDB's
//! reserved words (`status`, `name`, `ttl`, `data`, `type`, ...) just work and no value
//! can inject expression syntax.

mod build;
mod compressed;
mod encrypted;
pub(crate) mod guard;
mod opaque;
mod placeholders;
mod sets;
mod update;

pub use compressed::{CompressedComparison, CompressedPath};
pub use encrypted::{EncryptedComparison, EncryptedPath};
pub(crate) use placeholders::Placeholders;
pub(crate) use update::UpdateClauses;

use crate::codec::{AttrValue, EncodeError, Operand};
use crate::key::format::{Formatted, FormattedOption, KeyFormat};
use aws_sdk_dynamodb::types::AttributeValue;
use std::marker::PhantomData;

/// The value types of formatted string fields, `Formatted<String, F>` and
/// `FormattedOption<String, F>`: their paths keep the string operators (`begins_with`,
/// `contains`), which take the plain text and write it in the field's format. Sealed.
pub trait FormattedText: crate::sealed::FormattedText {
    /// The field's format.
    type Format: KeyFormat<String>;

    /// `text` as the field's value, to encode in its format.
    fn text(text: String) -> Formatted<String, Self::Format> {
        Formatted::new(text)
    }
}

impl<F: KeyFormat<String>> crate::sealed::FormattedText for Formatted<String, F> {}
impl<F: KeyFormat<String>> FormattedText for Formatted<String, F> {
    type Format = F;
}
impl<F: KeyFormat<String>> crate::sealed::FormattedText for FormattedOption<String, F> {}
impl<F: KeyFormat<String>> FormattedText for FormattedOption<String, F> {
    type Format = F;
}

/// Where an attribute is: a top-level attribute, or a path into maps (`a.b.c`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AttrPath {
    /// A top-level attribute.
    Top(&'static str),
    /// A nested path: the top-level attribute, then map keys.
    Nested(std::sync::Arc<[std::borrow::Cow<'static, str>]>),
}

impl AttrPath {
    /// The top-level attribute.
    pub fn top(&self) -> &str {
        match self {
            AttrPath::Top(name) => name,
            AttrPath::Nested(parts) => parts.first().map(|p| p.as_ref()).unwrap_or(""),
        }
    }

    /// Every segment, from the top-level attribute down.
    pub fn segments(&self) -> Vec<&str> {
        match self {
            AttrPath::Top(name) => vec![name],
            AttrPath::Nested(parts) => parts.iter().map(|p| p.as_ref()).collect(),
        }
    }

    /// Whether one path is the other or contains it (DynamoDB rejects such a pair in one
    /// update: "two document paths overlap").
    pub fn overlaps(&self, other: &AttrPath) -> bool {
        let (a, b) = (self.segments(), other.segments());
        a.iter().zip(&b).all(|(x, y)| x == y)
    }

    fn child(&self, key: std::borrow::Cow<'static, str>) -> AttrPath {
        let mut parts: Vec<std::borrow::Cow<'static, str>> = match self {
            AttrPath::Top(name) => vec![std::borrow::Cow::Borrowed(*name)],
            AttrPath::Nested(parts) => parts.to_vec(),
        };
        parts.push(key);
        AttrPath::Nested(parts.into())
    }
}

impl From<&'static str> for AttrPath {
    fn from(name: &'static str) -> Self {
        AttrPath::Top(name)
    }
}

impl std::fmt::Display for AttrPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.segments().join("."))
    }
}

/// Marker: a field an update may change.
#[derive(Debug, Clone, Copy)]
pub enum Mutable {}

/// Marker: a field a primary key template is built from. Such a field can appear in
/// conditions but not in updates, because changing it would move the item to another key.
#[derive(Debug, Clone, Copy)]
pub enum KeyField {}

/// The path of a field a primary key template is built from, or of the version field
/// (which the crate manages): it takes conditions, not updates.
pub type KeyPath<E, V> = Path<E, V, KeyField>;

/// Variance-neutral marker: a path neither owns nor borrows an `E` or a `V`.
type PathMarker<E, V, M> = PhantomData<fn() -> (E, V, M)>;

/// The path of an attribute of entity `E` holding values of type `V`.
pub struct Path<E, V, M = Mutable> {
    name: &'static str,
    _marker: PathMarker<E, V, M>,
}

impl<E, V, M> Clone for Path<E, V, M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E, V, M> Copy for Path<E, V, M> {}

impl<E, V, M> std::fmt::Debug for Path<E, V, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Path({})", self.name)
    }
}

/// A path an update may change: every field's path except those of primary-key fields
/// and of the `#[dynamo(version)]` field. Sealed: implemented by the crate only.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is the path of a primary-key, version, compressed or encrypted field, which this update cannot change",
    label = "a key field, the #[dynamo(version)] field, or a #[dynamo(compress)] field",
    note = "changing a key field moves the item to another key: delete the old item and put the new one (atomically, in a transaction); the version is managed by the crate (use if_version / any_version); a compressed field holds compressed bytes and an encrypted field a ciphertext, which only `set` and `remove` replace"
)]
pub trait UpdatablePath<E, V>: crate::sealed::UpdatablePath {
    /// Where the attribute is.
    fn attribute(&self) -> AttrPath;
}

/// A path an update's [`set`](dynamo_model::item::Update::set) and
/// [`remove`](dynamo_model::item::Update::remove) may change: every path an [`UpdatablePath`] is,
/// and the [`CompressedPath`] of a compressed field, whose
/// new value is compressed as a put compresses it. Sealed: implemented by the crate only.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is the path of a primary-key or version field, which an update cannot set",
    label = "a key field, or the #[dynamo(version)] field",
    note = "changing a key field moves the item to another key: delete the old item and put the new one (atomically, in a transaction); the version is managed by the crate (use if_version / any_version)"
)]
pub trait SettablePath<E, V>: crate::sealed::SettablePath {
    /// Where the attribute is.
    fn attribute(&self) -> AttrPath;

    /// The attribute storing `value` at this path, or `None` when the value is absent
    /// (`None`, an empty set), which removes the attribute.
    #[doc(hidden)]
    fn __encode(&self, value: &V) -> Result<Option<AttributeValue>, EncodeError>;
}

impl<E, V> crate::sealed::SettablePath for Path<E, V, Mutable> {}
impl<E, V> crate::sealed::SettablePath for MapPath<E, V, Mutable> {}

impl<E, V: AttrValue> SettablePath<E, V> for Path<E, V, Mutable> {
    fn attribute(&self) -> AttrPath {
        AttrPath::Top(self.name)
    }
    fn __encode(&self, value: &V) -> Result<Option<AttributeValue>, EncodeError> {
        value.to_attr_opt()
    }
}

impl<E, V: AttrValue> SettablePath<E, V> for MapPath<E, V, Mutable> {
    fn attribute(&self) -> AttrPath {
        self.path.clone()
    }
    fn __encode(&self, value: &V) -> Result<Option<AttributeValue>, EncodeError> {
        value.to_attr_opt()
    }
}

impl<E, V> crate::sealed::UpdatablePath for Path<E, V, Mutable> {}
impl<E, V> crate::sealed::UpdatablePath for MapPath<E, V, Mutable> {}

impl<E, V> UpdatablePath<E, V> for Path<E, V, Mutable> {
    fn attribute(&self) -> AttrPath {
        AttrPath::Top(self.name)
    }
}

impl<E, V> UpdatablePath<E, V> for MapPath<E, V, Mutable> {
    fn attribute(&self) -> AttrPath {
        self.path.clone()
    }
}

/// A path into a map attribute (`settings.theme`, `address.city`): from
/// [`Path::at`] on map fields, or [`Path::field`] on `#[dynamo(serde)]` documents. Supports
/// the same conditions and updates as a field's [`Path`].
pub struct MapPath<E, V, M = Mutable> {
    path: AttrPath,
    _marker: PathMarker<E, V, M>,
}

impl<E, V, M> Clone for MapPath<E, V, M> {
    fn clone(&self) -> Self {
        MapPath {
            path: self.path.clone(),
            _marker: PhantomData,
        }
    }
}

impl<E, V, M> std::fmt::Debug for MapPath<E, V, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MapPath({})", self.path)
    }
}

impl<E, V, M> MapPath<E, V, M> {
    fn attr_path(&self) -> AttrPath {
        self.path.clone()
    }
}

macro_rules! navigation {
    ($ty:ident) => {
        impl<E, V, M, S> $ty<E, std::collections::HashMap<String, V, S>, M> {
            /// The entry `key` of this map attribute.
            pub fn at(&self, key: impl Into<String>) -> MapPath<E, V, M> {
                MapPath {
                    path: self.attr_path().child(std::borrow::Cow::Owned(key.into())),
                    _marker: PhantomData,
                }
            }
        }

        impl<E, V, M> $ty<E, std::collections::BTreeMap<String, V>, M> {
            /// The entry `key` of this map attribute.
            pub fn at(&self, key: impl Into<String>) -> MapPath<E, V, M> {
                MapPath {
                    path: self.attr_path().child(std::borrow::Cow::Owned(key.into())),
                    _marker: PhantomData,
                }
            }
        }

        impl<E, T: crate::codec::MapAttribute, M> $ty<E, T, M> {
            /// The member `name` of this map attribute (a `#[derive(Attribute)]` struct),
            /// holding values of type `V` (give the member's type, e.g. `String`).
            pub fn field<V>(&self, name: &'static str) -> MapPath<E, V, M> {
                MapPath {
                    path: self.attr_path().child(std::borrow::Cow::Borrowed(name)),
                    _marker: PhantomData,
                }
            }
        }

        impl<E, T, M> $ty<E, crate::codec::Serde<T>, M> {
            /// The member `name` of this document (a struct stored as a map through serde),
            /// holding values of type `V` (as serde_dynamo stores them: give the matching
            /// type, e.g. `String` for a string member).
            pub fn field<V>(&self, name: &'static str) -> MapPath<E, V, M> {
                MapPath {
                    path: self.attr_path().child(std::borrow::Cow::Borrowed(name)),
                    _marker: PhantomData,
                }
            }
        }
    };
}
navigation!(Path);
navigation!(MapPath);

impl<E, V, M> Path<E, V, M> {
    #[doc(hidden)]
    pub const fn __new(name: &'static str) -> Self {
        Path {
            name,
            _marker: PhantomData,
        }
    }

    /// The attribute name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    fn attr_path(&self) -> AttrPath {
        AttrPath::Top(self.name)
    }
}

/// Comparison methods of a condition builder: `$method(self, $arg)` is
/// `self.compare(CompareOp::$op, $arg)`, documented as `$left $symbol $arg`.
macro_rules! compare_methods {
    ($left:literal, $arg:ident: $t:ty; $($method:ident $op:ident $symbol:literal),*) => {$(
        #[doc = concat!("`", $left, " ", $symbol, " ", stringify!($arg), "`")]
        pub fn $method(self, $arg: $t) -> Condition<E> {
            self.compare(CompareOp::$op, $arg)
        }
    )*};
}

macro_rules! conditions {
    ($ty:ident) => {
        impl<E, V: AttrValue, M> $ty<E, V, M> {
            fn compare(self, op: CompareOp, value: impl Operand<V>) -> Condition<E> {
                let path = self.attr_path();
                // An absent value (`None`, an empty set) is not stored at all, so equality
                // with it means the attribute does not exist.
                let value = match value.into_operand().to_attr_opt() {
                    Ok(Some(v)) => Ok(v),
                    Ok(None) if op == CompareOp::Eq => {
                        return Condition::new(Node::Function {
                            function: "attribute_not_exists",
                            path,
                        });
                    }
                    Ok(None) if op == CompareOp::Ne => {
                        return Condition::new(Node::Function {
                            function: "attribute_exists",
                            path,
                        });
                    }
                    Ok(None) => Err(ValueError {
                        path: path.to_string(),
                        source: EncodeError::new(
                            "an absent value (None) can only be compared with eq or ne",
                        ),
                    }),
                    Err(source) => Err(ValueError {
                        path: path.to_string(),
                        source,
                    }),
                };
                Condition::new(Node::Compare { path, op, value })
            }

            compare_methods!("path", value: impl Operand<V>;
                eq Eq "=", ne Ne "<>", lt Lt "<", le Le "<=", gt Gt ">", ge Ge ">=");
            /// `path BETWEEN low AND high` (inclusive).
            pub fn between(self, low: impl Operand<V>, high: impl Operand<V>) -> Condition<E> {
                Condition::new(Node::Between {
                    path: self.attr_path(),
                    low: encode(&self.attr_path(), &low.into_operand()),
                    high: encode(&self.attr_path(), &high.into_operand()),
                })
            }
            /// `attribute_exists(path)`
            pub fn exists(self) -> Condition<E> {
                Condition::new(Node::Function {
                    function: "attribute_exists",
                    path: self.attr_path(),
                })
            }
            /// `attribute_not_exists(path)`
            pub fn not_exists(self) -> Condition<E> {
                Condition::new(Node::Function {
                    function: "attribute_not_exists",
                    path: self.attr_path(),
                })
            }
            /// `path IN (v1, v2, ..)`: at most 100 values (DynamoDB limit), checked when sent.
            pub fn is_in<I>(self, values: I) -> Condition<E>
            where
                I: IntoIterator,
                I::Item: Operand<V>,
            {
                Condition::new(Node::In {
                    path: self.attr_path(),
                    values: values
                        .into_iter()
                        .map(|v| encode(&self.attr_path(), &v.into_operand()))
                        .collect(),
                })
            }

            /// `size(path) <op> n`: the length of a string or binary, or the element count of a
            /// list, map or set.
            pub fn size(self) -> SizeOf<E> {
                SizeOf {
                    path: self.attr_path(),
                    _entity: PhantomData,
                }
            }
        }

        impl<E, M> $ty<E, String, M> {
            /// `begins_with(path, prefix)`
            pub fn begins_with(self, prefix: impl Into<String>) -> Condition<E> {
                Condition::new(Node::BeginsWith {
                    path: self.attr_path(),
                    value: Ok(AttributeValue::S(prefix.into())),
                })
            }
            /// `contains(path, substring)`
            pub fn contains(self, substring: impl Into<String>) -> Condition<E> {
                Condition::new(Node::Contains {
                    path: self.attr_path(),
                    value: Ok(AttributeValue::S(substring.into())),
                })
            }
        }

        impl<E, M> $ty<E, Option<String>, M> {
            /// `begins_with(path, prefix)`
            pub fn begins_with(self, prefix: impl Into<String>) -> Condition<E> {
                Condition::new(Node::BeginsWith {
                    path: self.attr_path(),
                    value: Ok(AttributeValue::S(prefix.into())),
                })
            }
        }

        impl<E, V: FormattedText, M> $ty<E, V, M> {
            /// `begins_with(path, prefix)`: a formatted string keeps its operators.
            pub fn begins_with(self, prefix: impl Into<String>) -> Condition<E> {
                let value = encode(&self.attr_path(), &V::text(prefix.into()));
                Condition::new(Node::BeginsWith { path: self.attr_path(), value })
            }
            /// `contains(path, substring)`
            pub fn contains(self, substring: impl Into<String>) -> Condition<E> {
                let value = encode(&self.attr_path(), &V::text(substring.into()));
                Condition::new(Node::Contains { path: self.attr_path(), value })
            }
        }

        impl<E, T: AttrValue, M> $ty<E, Vec<T>, M> {
            /// `contains(path, element)`: the list holds this element.
            pub fn contains(self, element: impl Operand<T>) -> Condition<E> {
                Condition::new(Node::Contains {
                    path: self.attr_path(),
                    value: encode(&self.attr_path(), &element.into_operand()),
                })
            }
        }
    };
}
conditions!(Path);
conditions!(MapPath);

fn encode<V: AttrValue>(path: &AttrPath, value: &V) -> Result<AttributeValue, ValueError> {
    value.to_attr().map_err(|source| ValueError {
        path: path.to_string(),
        source,
    })
}

/// A value that could not be encoded for a condition; reported when the request is sent.
#[derive(Debug, Clone)]
pub(crate) struct ValueError {
    pub(crate) path: String,
    pub(crate) source: EncodeError,
}

/// `size(path)` in a condition.
pub struct SizeOf<E> {
    path: AttrPath,
    _entity: PhantomData<fn() -> E>,
}

impl<E> SizeOf<E> {
    fn compare(self, op: CompareOp, n: usize) -> Condition<E> {
        Condition::new(Node::Size {
            path: self.path,
            op,
            n,
        })
    }
    compare_methods!("size(path)", n: usize;
        eq Eq "=", lt Lt "<", le Le "<=", gt Gt ">", ge Ge ">=");
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CompareOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CompareOp {
    fn symbol(self) -> &'static str {
        match self {
            CompareOp::Eq => "=",
            CompareOp::Ne => "<>",
            CompareOp::Lt => "<",
            CompareOp::Le => "<=",
            CompareOp::Gt => ">",
            CompareOp::Ge => ">=",
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) enum Node {
    Compare {
        path: AttrPath,
        op: CompareOp,
        value: Result<AttributeValue, ValueError>,
    },
    Between {
        path: AttrPath,
        low: Result<AttributeValue, ValueError>,
        high: Result<AttributeValue, ValueError>,
    },
    Function {
        function: &'static str,
        path: AttrPath,
    },
    BeginsWith {
        path: AttrPath,
        value: Result<AttributeValue, ValueError>,
    },
    Contains {
        path: AttrPath,
        value: Result<AttributeValue, ValueError>,
    },
    Size {
        path: AttrPath,
        op: CompareOp,
        n: usize,
    },
    In {
        path: AttrPath,
        values: Vec<Result<AttributeValue, ValueError>>,
    },
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Not(Box<Node>),
}

/// A condition on the attributes of an item of entity `E`, for conditional writes (and,
/// later, filters). Combine with [`and`](Condition::and), [`or`](Condition::or) and
/// [`not`](Condition::not) (or `!`).
///
/// ```
/// # use dynamo_model::{Entity, Table};
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
/// #[derive(Entity, Serialize, Deserialize)]
/// #[dynamo(table = App, pk = "ACCOUNT#{id}", sk = "ACCOUNT")]
/// struct Account { id: String, status: String, balance: i64 }
///
/// let f = Account::fields();
/// let ok = f.balance.ge(100).and(f.status.eq("open")).and(!f.status.eq("frozen"));
/// # let _ = ok;
/// ```
pub struct Condition<E> {
    pub(crate) node: Node,
    _entity: PhantomData<fn() -> E>,
}

impl<E> Clone for Condition<E> {
    fn clone(&self) -> Self {
        Condition::new(self.node.clone())
    }
}

impl<E> std::fmt::Debug for Condition<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut p = Placeholders::default();
        match p.render_condition(&self.node) {
            Ok(expr) => write!(f, "Condition({expr})"),
            Err(e) => write!(f, "Condition(<invalid value for {}: {}>)", e.path, e.source),
        }
    }
}

impl<E> Condition<E> {
    pub(crate) fn new(node: Node) -> Self {
        Condition {
            node,
            _entity: PhantomData,
        }
    }

    /// `function(path)`: `attribute_exists` or `attribute_not_exists`.
    pub(crate) fn function(function: &'static str, path: AttrPath) -> Self {
        Condition::new(Node::Function { function, path })
    }

    /// Both conditions hold.
    pub fn and(self, other: Condition<E>) -> Condition<E> {
        Condition::new(Node::And(Box::new(self.node), Box::new(other.node)))
    }

    /// At least one of the conditions holds.
    pub fn or(self, other: Condition<E>) -> Condition<E> {
        Condition::new(Node::Or(Box::new(self.node), Box::new(other.node)))
    }

    /// The condition does not hold.
    #[allow(clippy::should_implement_trait)]
    pub fn not(self) -> Condition<E> {
        Condition::new(Node::Not(Box::new(self.node)))
    }
}

impl<E> std::ops::Not for Condition<E> {
    type Output = Condition<E>;
    fn not(self) -> Condition<E> {
        Condition::not(self)
    }
}
