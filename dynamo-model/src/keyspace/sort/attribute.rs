//! Multi-attribute index keys: a partition of one value per key attribute
//! ([`MultiPartition`]), and sort-key conditions of equality on leading attributes, then
//! at most one comparison on the next ([`AttributeCondition`]).

use super::*;

/// A comparison on one attribute of a multi-attribute index sort key.
#[derive(Debug, Clone, PartialEq)]
pub enum AttributeOp {
    /// `attr < value`
    Lt(aws_sdk_dynamodb::types::AttributeValue),
    /// `attr <= value`
    Le(aws_sdk_dynamodb::types::AttributeValue),
    /// `attr > value`
    Gt(aws_sdk_dynamodb::types::AttributeValue),
    /// `attr >= value`
    Ge(aws_sdk_dynamodb::types::AttributeValue),
    /// `attr BETWEEN low AND high`
    Between(
        aws_sdk_dynamodb::types::AttributeValue,
        aws_sdk_dynamodb::types::AttributeValue,
    ),
    /// `begins_with(attr, value)`
    BeginsWith(aws_sdk_dynamodb::types::AttributeValue),
}

/// A condition on a multi-attribute sort key: equality on leading attributes, then at most
/// one comparison on the next (DynamoDB's rule for multi-attribute keys).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AttributeRange {
    /// `attr = value` for the leading attributes, in key order.
    pub eq: Vec<(&'static str, aws_sdk_dynamodb::types::AttributeValue)>,
    /// The comparison on the next attribute.
    pub last: Option<(&'static str, AttributeOp)>,
}

impl AttributeRange {
    /// The condition as DynamoDB accepts it, or `None` when no item can match.
    ///
    /// DynamoDB refuses an empty string as a key value and a `BETWEEN` whose low bound is
    /// above its high bound, so those are turned into what they mean: `= ""`, `< ""`,
    /// `<= ""` and reversed bounds match nothing; `> ""`, `>= ""` and `begins_with("")`
    /// match every value (a key attribute is always present on an index item), and
    /// `BETWEEN "" AND h` is `<= h`.
    pub fn normalized(&self) -> Option<AttributeRange> {
        use aws_sdk_dynamodb::types::AttributeValue as Av;
        let empty = |v: &Av| matches!(v, Av::S(s) if s.is_empty());
        if self.eq.iter().any(|(_, v)| empty(v)) {
            return None;
        }
        let reversed = |low: &Av, high: &Av| match (low, high) {
            (Av::S(l), Av::S(h)) => l.as_bytes() > h.as_bytes(),
            (Av::N(l), Av::N(h)) => match (l.parse::<f64>(), h.parse::<f64>()) {
                (Ok(l), Ok(h)) => l > h,
                _ => false,
            },
            _ => false,
        };
        let last = match &self.last {
            None => None,
            Some((attribute, op)) => match op {
                AttributeOp::Lt(v) | AttributeOp::Le(v) if empty(v) => return None,
                AttributeOp::Gt(v) | AttributeOp::Ge(v) | AttributeOp::BeginsWith(v)
                    if empty(v) =>
                {
                    None
                }
                AttributeOp::Between(_, high) if empty(high) => return None,
                AttributeOp::Between(low, high) if reversed(low, high) => return None,
                AttributeOp::Between(low, high) if empty(low) => {
                    Some((*attribute, AttributeOp::Le(high.clone())))
                }
                other => Some((*attribute, other.clone())),
            },
        };
        Some(AttributeRange {
            eq: self.eq.clone(),
            last,
        })
    }
}

/// The partition of a multi-attribute index key: one value per key attribute.
pub struct MultiPartition<E, K> {
    pub(crate) values:
        Result<Vec<(&'static str, aws_sdk_dynamodb::types::AttributeValue)>, KeyError>,
    _entity: PhantomData<fn() -> (E, K)>,
}

tagged_key_traits!(MultiPartition { values } shows values);

/// Encodes a multi-attribute key value (helper for generated code).
#[doc(hidden)]
pub fn attribute_value<T: crate::AttrValue>(
    attribute: &'static str,
    value: T,
) -> Result<(&'static str, aws_sdk_dynamodb::types::AttributeValue), KeyError> {
    value
        .to_attr()
        .map(|v| (attribute, v))
        .map_err(|e| KeyError::OutOfRange {
            type_name: std::any::type_name::<T>(),
            value: attribute.to_owned(),
            reason: if e.is_number() {
                "is outside the range of a DynamoDB number"
            } else {
                "cannot be stored as a key attribute"
            },
        })
}

#[doc(hidden)]
impl<E, K> MultiPartition<E, K> {
    pub fn __build(
        values: Vec<Result<(&'static str, aws_sdk_dynamodb::types::AttributeValue), KeyError>>,
    ) -> Self {
        MultiPartition {
            values: values.into_iter().collect(),
            _entity: PhantomData,
        }
    }
}

/// A multi-attribute sort-key condition of entity `E` in key space `K`.
#[derive(Debug, Clone, PartialEq)]
pub struct AttributeCondition<E, K> {
    pub(crate) range: Result<AttributeRange, KeyError>,
    _entity: PhantomData<fn() -> (E, K)>,
}

/// A multi-attribute sort-key prefix (equality on leading attributes); the generated
/// `Type::{index}_sk()` chain wraps it.
pub struct AttributePrefix<E, K> {
    range: Result<AttributeRange, KeyError>,
    _entity: PhantomData<fn() -> (E, K)>,
}

tagged_key_traits!(AttributePrefix { range } shows range);

#[doc(hidden)]
impl<E, K> AttributePrefix<E, K> {
    pub fn __root() -> Self {
        AttributePrefix {
            range: Ok(AttributeRange::default()),
            _entity: PhantomData,
        }
    }

    /// `attr = value` on the next attribute.
    pub fn __push(
        self,
        value: Result<(&'static str, aws_sdk_dynamodb::types::AttributeValue), KeyError>,
    ) -> Self {
        let range = self.range.and_then(|mut r| {
            r.eq.push(value?);
            Ok(r)
        });
        AttributePrefix {
            range,
            _entity: PhantomData,
        }
    }

    /// Ends with a comparison on the next attribute.
    pub fn __compare(
        self,
        attribute: &'static str,
        op: impl FnOnce() -> Result<AttributeOp, KeyError>,
    ) -> AttributeCondition<E, K> {
        let range = self.range.and_then(|mut r| {
            r.last = Some((attribute, op()?));
            Ok(r)
        });
        AttributeCondition {
            range,
            _entity: PhantomData,
        }
    }

    /// The equality prefix as a condition.
    pub fn condition(self) -> AttributeCondition<E, K> {
        AttributeCondition {
            range: self.range,
            _entity: PhantomData,
        }
    }
}

/// Helper for generated code: a comparison from an encoded value.
#[doc(hidden)]
pub fn attribute_op(
    make: fn(aws_sdk_dynamodb::types::AttributeValue) -> AttributeOp,
    value: Result<(&'static str, aws_sdk_dynamodb::types::AttributeValue), KeyError>,
) -> Result<AttributeOp, KeyError> {
    value.map(|(_, v)| make(v))
}
