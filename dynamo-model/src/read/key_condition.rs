//! The key condition of a query: partitions and sort-key conditions as the generated
//! constructors make them, and their rendering into a `KeyConditionExpression`.

use crate::Entity;
use crate::collection::Includes;
use crate::expr::{CompareOp, Node};
use crate::key::KeyError;
use crate::keyspace::chain::SortKeyChain;
use crate::keyspace::sort::{
    AttributeCondition, AttributeOp, AttributePrefix, AttributeRange, MultiPartition, Partition,
    SortKeyCondition, SortKeyOp, SortKeyPrefix, SortKeyRange,
};
use aws_sdk_dynamodb::types::AttributeValue;

/// Something that can be turned into a sort-key condition for target `T`: the generated
/// `Type::sk()` chain and the [`SortKeyCondition`]s it produces, for `T` or any entity a
/// collection `T` includes.
pub trait IntoSortKey<T, K> {
    /// The condition's operator and bounds.
    #[doc(hidden)]
    fn into_sort_key(self) -> Result<SortCondition, KeyError>;
}

/// `IntoSortKey` for a condition type of entity `E` (`$condition`, whose `range` is a
/// `$variant` range) and for its prefix type (`$prefix`, made a condition first).
macro_rules! into_sort_key {
    ($condition:ident, $prefix:ident, $variant:ident) => {
        impl<E: Entity, T: Includes<E>, K> IntoSortKey<T, K> for $condition<E, K> {
            fn into_sort_key(self) -> Result<SortCondition, KeyError> {
                self.range.map(SortCondition::$variant)
            }
        }

        impl<E: Entity, T: Includes<E>, K> IntoSortKey<T, K> for $prefix<E, K> {
            fn into_sort_key(self) -> Result<SortCondition, KeyError> {
                <$condition<E, K> as IntoSortKey<T, K>>::into_sort_key(self.condition())
            }
        }
    };
}

into_sort_key!(SortKeyCondition, SortKeyPrefix, Rendered);
into_sort_key!(AttributeCondition, AttributePrefix, Attributes);

impl<C: SortKeyChain, T: Includes<C::Entity>> IntoSortKey<T, C::Space> for C {
    fn into_sort_key(self) -> Result<SortCondition, KeyError> {
        self.__into_prefix()
            .condition()
            .range
            .map(SortCondition::Rendered)
    }
}

/// The partition of a query: a rendered key template, or a multi-attribute key. Part of
/// the query planner, not of the API: built by the partition constructors only.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq)]
pub enum PartitionValue {
    /// The value of the single (string) partition key attribute.
    Rendered(String),
    /// One value per attribute of a multi-attribute partition key.
    Attributes(Vec<(&'static str, AttributeValue)>),
}

impl PartitionValue {
    /// The partition key as text: the rendered value, or each attribute's (a string,
    /// or a number's digits) joined with ` | `.
    pub(crate) fn text(&self) -> Option<String> {
        match self {
            PartitionValue::Rendered(text) => Some(text.clone()),
            PartitionValue::Attributes(values) => {
                let parts: Option<Vec<String>> = values
                    .iter()
                    .map(|(_, v)| crate::call::text(Some(v)))
                    .collect();
                Some(parts?.join(" | "))
            }
        }
    }
}

/// The sort-key part of a query's key condition. Part of the query planner, not of the
/// API: built by the sort-key chains only.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq)]
pub enum SortCondition {
    /// On a single string sort key rendered from a template.
    Rendered(SortKeyRange),
    /// On a multi-attribute sort key.
    Attributes(AttributeRange),
}

impl SortCondition {
    pub(crate) fn any() -> Self {
        SortCondition::Rendered(SortKeyRange::op(SortKeyOp::Any))
    }
}

/// A partition to query: from `Type::partition(..)`, `Type::{index}_partition(..)`.
/// Sealed: implemented by the crate only.
pub trait IntoPartition<E, K>: crate::sealed::IntoPartition {
    /// The partition and the default sort-key condition (the entity's items).
    #[doc(hidden)]
    fn into_partition(self) -> (Result<PartitionValue, KeyError>, SortCondition);
}

impl<E, K> crate::sealed::IntoPartition for Partition<E, K> {}
impl<E, K> crate::sealed::IntoPartition for MultiPartition<E, K> {}

impl<E, K> IntoPartition<E, K> for Partition<E, K> {
    fn into_partition(self) -> (Result<PartitionValue, KeyError>, SortCondition) {
        (
            self.value.map(PartitionValue::Rendered),
            SortCondition::Rendered(self.default_range),
        )
    }
}

impl<E, K> IntoPartition<E, K> for MultiPartition<E, K> {
    fn into_partition(self) -> (Result<PartitionValue, KeyError>, SortCondition) {
        (
            self.values.map(PartitionValue::Attributes),
            SortCondition::Attributes(AttributeRange::default()),
        )
    }
}

/// Whether a multi-attribute condition follows the sort key's attribute order: equality
/// on a prefix, then at most one comparison on the next attribute.
pub(crate) fn attribute_range_fits(range: &AttributeRange, attrs: &[&'static str]) -> bool {
    let eq_ok =
        range.eq.len() <= attrs.len() && range.eq.iter().zip(attrs).all(|((a, _), b)| a == b);
    let last_ok = match &range.last {
        None => true,
        Some((attr, _)) => attrs.get(range.eq.len()) == Some(attr),
    };
    eq_ok && last_ok
}

/// The clause of a multi-attribute sort-key condition on `attr`.
pub(crate) fn attribute_clause(attr: &'static str, op: &AttributeOp) -> Node {
    let compare = |op, x: &AttributeValue| Node::compare(attr, op, x.clone());
    match op {
        AttributeOp::Lt(x) => compare(CompareOp::Lt, x),
        AttributeOp::Le(x) => compare(CompareOp::Le, x),
        AttributeOp::Gt(x) => compare(CompareOp::Gt, x),
        AttributeOp::Ge(x) => compare(CompareOp::Ge, x),
        AttributeOp::Between(a, b) => Node::between(attr, a.clone(), b.clone()),
        AttributeOp::BeginsWith(x) => Node::begins_with(attr, x.clone()),
    }
}

/// The clause of a sort-key condition on `attr`, or `None` for [`SortKeyOp::Any`] (and
/// [`SortKeyOp::Nothing`], never sent: its responses are empty, without a request).
pub(crate) fn sort_key_clause(attr: &'static str, op: &SortKeyOp) -> Option<Node> {
    let text = |s: &String| AttributeValue::S(s.clone());
    Some(match op {
        SortKeyOp::Any | SortKeyOp::Nothing => return None,
        SortKeyOp::Eq(s) => Node::equals(attr, text(s)),
        SortKeyOp::BeginsWith(s) => Node::begins_with(attr, text(s)),
        SortKeyOp::Le(s) => Node::compare(attr, CompareOp::Le, text(s)),
        SortKeyOp::Ge(s) => Node::compare(attr, CompareOp::Ge, text(s)),
        SortKeyOp::Between(a, b) => Node::between(attr, text(a), text(b)),
    })
}
