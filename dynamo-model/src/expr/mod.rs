//! Typed attribute paths and condition expressions.
//!
//! `#[derive(Entity)]` generates a [`Path`] per field (`Order::fields().total_cents`).
//! Conditions built from them are typed by entity (a `Condition<User>` cannot guard a
//! put of an `Order`) and by value (a `u64` field compares with `u64` values). Every name
//! and value is sent through `#n`/`:v` placeholders, so attributes named like DynamoDB's
//! reserved words (`status`, `name`, `ttl`, `data`, `type`, ...) just work and no value
//! can inject expression syntax.

mod placeholders;

pub(crate) use placeholders::Placeholders;

use crate::codec::{AttrValue, EncodeError};
use aws_sdk_dynamodb::types::AttributeValue;
use std::marker::PhantomData;

/// Marker: a field an update may change.
#[derive(Debug, Clone, Copy)]
pub enum Mutable {}

/// Marker: a field a primary key template is built from. Such a field can appear in
/// conditions but not in updates, because changing it would move the item to another key.
#[derive(Debug, Clone, Copy)]
pub enum KeyField {}

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

/// A path an update may change: every field's path except those of primary-key fields.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is the path of a primary-key field, which an update cannot change",
    label = "this field is part of the item's key",
    note = "changing a key field moves the item to another key: delete the old item and put the new one (atomically, in a transaction)"
)]
pub trait UpdatablePath<E, V>: Copy {
    /// The attribute name.
    fn attribute(&self) -> &'static str;
}

impl<E, V> UpdatablePath<E, V> for Path<E, V, Mutable> {
    fn attribute(&self) -> &'static str {
        self.name
    }
}

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
}

impl<E, V: AttrValue, M> Path<E, V, M> {
    fn compare(self, op: CompareOp, value: impl Into<V>) -> Condition<E> {
        Condition::new(Node::Compare {
            path: self.name,
            op,
            value: encode(self.name, &value.into()),
        })
    }

    /// `path = value`
    pub fn eq(self, value: impl Into<V>) -> Condition<E> {
        self.compare(CompareOp::Eq, value)
    }
    /// `path <> value`
    pub fn ne(self, value: impl Into<V>) -> Condition<E> {
        self.compare(CompareOp::Ne, value)
    }
    /// `path < value`
    pub fn lt(self, value: impl Into<V>) -> Condition<E> {
        self.compare(CompareOp::Lt, value)
    }
    /// `path <= value`
    pub fn le(self, value: impl Into<V>) -> Condition<E> {
        self.compare(CompareOp::Le, value)
    }
    /// `path > value`
    pub fn gt(self, value: impl Into<V>) -> Condition<E> {
        self.compare(CompareOp::Gt, value)
    }
    /// `path >= value`
    pub fn ge(self, value: impl Into<V>) -> Condition<E> {
        self.compare(CompareOp::Ge, value)
    }
    /// `path BETWEEN low AND high` (inclusive).
    pub fn between(self, low: impl Into<V>, high: impl Into<V>) -> Condition<E> {
        Condition::new(Node::Between {
            path: self.name,
            low: encode(self.name, &low.into()),
            high: encode(self.name, &high.into()),
        })
    }
    /// `attribute_exists(path)`
    pub fn exists(self) -> Condition<E> {
        Condition::new(Node::Function {
            function: "attribute_exists",
            path: self.name,
        })
    }
    /// `attribute_not_exists(path)`
    pub fn not_exists(self) -> Condition<E> {
        Condition::new(Node::Function {
            function: "attribute_not_exists",
            path: self.name,
        })
    }
    /// `path IN (v1, v2, ..)`: at most 100 values (DynamoDB limit), checked when sent.
    pub fn is_in<I>(self, values: I) -> Condition<E>
    where
        I: IntoIterator,
        I::Item: Into<V>,
    {
        Condition::new(Node::In {
            path: self.name,
            values: values
                .into_iter()
                .map(|v| encode(self.name, &v.into()))
                .collect(),
        })
    }

    /// `size(path) <op> n`: the length of a string or binary, or the element count of a
    /// list, map or set.
    pub fn size(self) -> SizeOf<E> {
        SizeOf {
            path: self.name,
            _entity: PhantomData,
        }
    }
}

impl<E, M> Path<E, String, M> {
    /// `begins_with(path, prefix)`
    pub fn begins_with(self, prefix: impl Into<String>) -> Condition<E> {
        Condition::new(Node::BeginsWith {
            path: self.name,
            value: Ok(AttributeValue::S(prefix.into())),
        })
    }
    /// `contains(path, substring)`
    pub fn contains(self, substring: impl Into<String>) -> Condition<E> {
        Condition::new(Node::Contains {
            path: self.name,
            value: Ok(AttributeValue::S(substring.into())),
        })
    }
}

impl<E, M> Path<E, Option<String>, M> {
    /// `begins_with(path, prefix)`
    pub fn begins_with(self, prefix: impl Into<String>) -> Condition<E> {
        Condition::new(Node::BeginsWith {
            path: self.name,
            value: Ok(AttributeValue::S(prefix.into())),
        })
    }
}

impl<E, T: AttrValue, M> Path<E, Vec<T>, M> {
    /// `contains(path, element)`: the list holds this element.
    pub fn contains(self, element: impl Into<T>) -> Condition<E> {
        Condition::new(Node::Contains {
            path: self.name,
            value: encode(self.name, &element.into()),
        })
    }
}

impl<E, S, M> Path<E, std::collections::HashSet<String, S>, M> {
    /// `contains(path, element)`: the set holds this string.
    pub fn contains(self, element: impl Into<String>) -> Condition<E> {
        Condition::new(Node::Contains {
            path: self.name,
            value: Ok(AttributeValue::S(element.into())),
        })
    }
}

fn encode<V: AttrValue>(path: &'static str, value: &V) -> Result<AttributeValue, ValueError> {
    value
        .to_attr()
        .map_err(|source| ValueError { path, source })
}

/// A value that could not be encoded for a condition; reported when the request is sent.
#[derive(Debug, Clone)]
pub(crate) struct ValueError {
    pub(crate) path: &'static str,
    pub(crate) source: EncodeError,
}

/// `size(path)` in a condition.
pub struct SizeOf<E> {
    path: &'static str,
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
    /// `size(path) = n`
    pub fn eq(self, n: usize) -> Condition<E> {
        self.compare(CompareOp::Eq, n)
    }
    /// `size(path) < n`
    pub fn lt(self, n: usize) -> Condition<E> {
        self.compare(CompareOp::Lt, n)
    }
    /// `size(path) <= n`
    pub fn le(self, n: usize) -> Condition<E> {
        self.compare(CompareOp::Le, n)
    }
    /// `size(path) > n`
    pub fn gt(self, n: usize) -> Condition<E> {
        self.compare(CompareOp::Gt, n)
    }
    /// `size(path) >= n`
    pub fn ge(self, n: usize) -> Condition<E> {
        self.compare(CompareOp::Ge, n)
    }
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
        path: &'static str,
        op: CompareOp,
        value: Result<AttributeValue, ValueError>,
    },
    Between {
        path: &'static str,
        low: Result<AttributeValue, ValueError>,
        high: Result<AttributeValue, ValueError>,
    },
    Function {
        function: &'static str,
        path: &'static str,
    },
    BeginsWith {
        path: &'static str,
        value: Result<AttributeValue, ValueError>,
    },
    Contains {
        path: &'static str,
        value: Result<AttributeValue, ValueError>,
    },
    Size {
        path: &'static str,
        op: CompareOp,
        n: usize,
    },
    In {
        path: &'static str,
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
