//! Conditions: the typed comparisons and functions of paths, the tree they build, and
//! [`Condition`], which combines them.

use super::operand::{AttributeType, Comparand, Term};
use super::path::{NestedPath, Path};
use super::{AttrPath, FormattedText};
use crate::codec::AttrValue;
use aws_sdk_dynamodb::types::AttributeValue;
use std::marker::PhantomData;

/// Comparison methods of a condition builder: `$method(self, $arg)` is
/// `self.compare(CompareOp::$op, $arg)`, documented as `$left $symbol $arg`.
macro_rules! compare_methods {
    ($left:literal, $arg:ident: $t:ty; $($method:ident $op:ident $symbol:literal),*) => {$(
        #[doc = concat!("`", $left, " ", $symbol, " ", stringify!($arg), "`")]
        pub fn $method(self, $arg: $t) -> Condition<E> {
            self.compare(CompareOp::$op, $arg)
        }
    )*};
    (<$k:ident> $left:literal, $arg:ident: $t:ty; $($method:ident $op:ident $symbol:literal),*) => {$(
        #[doc = concat!("`", $left, " ", $symbol, " ", stringify!($arg), "`: a value, or another attribute of the same type")]
        pub fn $method<$k>(&self, $arg: $t) -> Condition<E> {
            self.compare(CompareOp::$op, $arg)
        }
    )*};
}

macro_rules! conditions {
    ($ty:ident) => {
        impl<E, V: AttrValue, M> $ty<E, V, M> {
            fn compare<K>(&self, op: CompareOp, value: impl Comparand<E, V, K>) -> Condition<E> {
                let path = self.attr_path();
                // An absent value (`None`, an empty set) is not stored at all, so equality
                // with it means the attribute does not exist.
                let value = match (value.__term(&path), op) {
                    (Term::Absent(_), CompareOp::Eq) => return Condition::new(Node::absent_value(path)),
                    (Term::Absent(_), CompareOp::Ne) => {
                        return Condition::new(Node::present_value(path));
                    }
                    (term, _) => term,
                };
                Condition::new(Node::Compare { left: Term::Path(path), op, right: value })
            }

            compare_methods!(<K> "path", value: impl Comparand<E, V, K>;
                eq Eq "=", ne Ne "<>", lt Lt "<", le Le "<=", gt Gt ">", ge Ge ">=");
            /// `path BETWEEN low AND high` (inclusive); each bound a value or another
            /// attribute of the same type.
            pub fn between<K, L>(&self,
                low: impl Comparand<E, V, K>,
                high: impl Comparand<E, V, L>,
            ) -> Condition<E> {
                let path = self.attr_path();
                let (low, high) = (low.__term(&path), high.__term(&path));
                Condition::new(Node::Between { subject: Term::Path(path), low, high })
            }
            /// `attribute_exists(path)`
            pub fn exists(&self) -> Condition<E> {
                Condition::function("attribute_exists", self.attr_path())
            }
            /// `attribute_not_exists(path)`
            pub fn not_exists(&self) -> Condition<E> {
                Condition::function("attribute_not_exists", self.attr_path())
            }
            /// `attribute_type(path, :type)`: the attribute is stored with this DynamoDB
            /// type (a number, a string set, a map, ...).
            pub fn is_type(&self, kind: AttributeType) -> Condition<E> {
                Condition::new(Node::AttributeType { path: self.attr_path(), kind })
            }
            /// `path IN (v1, v2, ..)`: 1 to 100 operands (DynamoDB's limit), checked when
            /// sent; each a value or another attribute of the same type.
            pub fn is_in<K, I>(&self, values: I) -> Condition<E>
            where
                I: IntoIterator,
                I::Item: Comparand<E, V, K>,
            {
                let path = self.attr_path();
                let values = values.into_iter().map(|v| v.__term(&path)).collect();
                Condition::new(Node::In { subject: Term::Path(path), values })
            }

            /// `size(path) <op> n`: the length of a string or binary, or the element count of a
            /// list, map or set.
            pub fn size(&self) -> SizeOf<E> {
                SizeOf {
                    path: self.attr_path(),
                    _entity: PhantomData,
                }
            }
        }

        impl<E, M> $ty<E, String, M> {
            /// `begins_with(path, prefix)`: the prefix a value or another string attribute.
            pub fn begins_with<K>(&self, prefix: impl Comparand<E, String, K>) -> Condition<E> {
                let path = self.attr_path();
                let value = prefix.__term(&path);
                Condition::new(Node::BeginsWith { path, value })
            }
            /// `contains(path, substring)`: the substring a value or another string attribute.
            pub fn contains<K>(&self, substring: impl Comparand<E, String, K>) -> Condition<E> {
                let path = self.attr_path();
                let value = substring.__term(&path);
                Condition::new(Node::Contains { path, value })
            }
        }

        impl<E, M> $ty<E, Option<String>, M> {
            /// `begins_with(path, prefix)`: the prefix a value or another string attribute.
            pub fn begins_with<K>(&self, prefix: impl Comparand<E, String, K>) -> Condition<E> {
                let path = self.attr_path();
                let value = prefix.__term(&path);
                Condition::new(Node::BeginsWith { path, value })
            }
        }

        impl<E, V: FormattedText, M> $ty<E, V, M> {
            /// `begins_with(path, prefix)`: a formatted string keeps its operators.
            pub fn begins_with(&self, prefix: impl Into<String>) -> Condition<E> {
                let path = self.attr_path();
                let value = Term::encoded(&path, &V::text(prefix.into()));
                Condition::new(Node::BeginsWith { path, value })
            }
            /// `contains(path, substring)`
            pub fn contains(&self, substring: impl Into<String>) -> Condition<E> {
                let path = self.attr_path();
                let value = Term::encoded(&path, &V::text(substring.into()));
                Condition::new(Node::Contains { path, value })
            }
        }

        impl<E, T: AttrValue, M> $ty<E, Vec<T>, M> {
            /// `contains(path, element)`: the list holds this element (a value or another
            /// attribute of the element's type).
            pub fn contains<K>(&self, element: impl Comparand<E, T, K>) -> Condition<E> {
                let path = self.attr_path();
                let value = element.__term(&path);
                Condition::new(Node::Contains { path, value })
            }
        }
    };
}
conditions!(Path);
conditions!(NestedPath);

/// `size(path)` in a condition.
pub struct SizeOf<E> {
    path: AttrPath,
    _entity: PhantomData<fn() -> E>,
}

impl<E> SizeOf<E> {
    fn compare(self, op: CompareOp, n: usize) -> Condition<E> {
        Condition::new(Node::Compare {
            left: Term::Size(self.path),
            op,
            right: number(n),
        })
    }
    compare_methods!("size(path)", n: usize;
        eq Eq "=", ne Ne "<>", lt Lt "<", le Le "<=", gt Gt ">", ge Ge ">=");

    /// `size(path) BETWEEN low AND high` (inclusive).
    pub fn between(self, low: usize, high: usize) -> Condition<E> {
        Condition::new(Node::Between {
            subject: Term::Size(self.path),
            low: number(low),
            high: number(high),
        })
    }
}

fn number(n: usize) -> Term {
    AttributeValue::N(n.to_string()).into()
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
    pub(crate) fn symbol(self) -> &'static str {
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

/// A condition tree: what DynamoDB's condition grammar can say.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    Compare {
        left: Term,
        op: CompareOp,
        right: Term,
    },
    Between {
        subject: Term,
        low: Term,
        high: Term,
    },
    In {
        subject: Term,
        values: Vec<Term>,
    },
    /// `attribute_exists` or `attribute_not_exists`.
    Function {
        function: &'static str,
        path: AttrPath,
    },
    AttributeType {
        path: AttrPath,
        kind: AttributeType,
    },
    BeginsWith {
        path: AttrPath,
        value: Term,
    },
    Contains {
        path: AttrPath,
        value: Term,
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
