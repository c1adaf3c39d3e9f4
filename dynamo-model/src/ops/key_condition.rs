//! The key condition of a query: partitions and sort-key conditions as the generated
//! constructors make them, and their rendering into a `KeyConditionExpression`.

use crate::Entity;
use crate::collection::Includes;
use crate::expr::Placeholders;
use crate::key::chain::SortKeyChain;
use crate::key::sort::{
    AttributeCondition, AttributeOp, AttributePrefix, AttributeRange, MultiPartition, Partition,
    SortKeyCondition, SortKeyOp, SortKeyPrefix, SortKeyRange,
};
use crate::keytext::KeyError;
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

pub(crate) fn render_attribute_op(
    p: &mut Placeholders,
    attr: &'static str,
    op: &AttributeOp,
) -> String {
    let n = p.name(attr);
    let mut v = |x: &AttributeValue| p.value(x.clone());
    match op {
        AttributeOp::Lt(x) => format!("{n} < {}", v(x)),
        AttributeOp::Le(x) => format!("{n} <= {}", v(x)),
        AttributeOp::Gt(x) => format!("{n} > {}", v(x)),
        AttributeOp::Ge(x) => format!("{n} >= {}", v(x)),
        AttributeOp::Between(a, b) => {
            let (a, b) = (v(a), v(b));
            format!("{n} BETWEEN {a} AND {b}")
        }
        AttributeOp::BeginsWith(x) => format!("begins_with({n}, {})", v(x)),
    }
}

/// Renders a sort-key condition, or `None` for [`SortKeyOp::Any`].
pub(crate) fn render_sort_key(
    p: &mut Placeholders,
    attr: &'static str,
    op: &SortKeyOp,
) -> Option<String> {
    if *op == SortKeyOp::Any {
        return None;
    }
    let n = p.name(attr);
    let mut v = |s: &String| p.value(AttributeValue::S(s.clone()));
    Some(match op {
        // Never sent: `fetch` answers without a request.
        SortKeyOp::Any | SortKeyOp::Nothing => return None,
        SortKeyOp::Eq(s) => format!("{n} = {}", v(s)),
        SortKeyOp::BeginsWith(s) => format!("begins_with({n}, {})", v(s)),
        SortKeyOp::Le(s) => format!("{n} <= {}", v(s)),
        SortKeyOp::Ge(s) => format!("{n} >= {}", v(s)),
        SortKeyOp::Between(a, b) => {
            let (a, b) = (v(a), v(b));
            format!("{n} BETWEEN {a} AND {b}")
        }
    })
}
