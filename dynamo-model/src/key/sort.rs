//! Typed partition values and sort-key conditions built from key templates.
//!
//! `#[derive(Entity)]` generates `Order::partition(..)` and `Order::sk()`, a chain that
//! fixes leading sort-key components one at a time and ends in a [`SortKeyCondition`]:
//!
//! - `Order::sk()`: every item of the entity (`begins_with(SK, "ORDER#")`);
//! - `.created_at(t)`: whole leading components (`begins_with(SK, "ORDER#<t>#")`), which
//!   can never match a longer value of the same component (`ORDER#1#` is not a prefix of
//!   `ORDER#10#`, because the encoding of a value never contains the delimiter);
//! - `.created_at_lt(t)`, `_le`, `_gt`, `_ge`, `_between(a, b)`: a range on the next
//!   component, whatever follows it;
//! - `.created_at_starts_with("2023-10")`: an explicit *partial* value of the next
//!   component (e.g. all timestamps of a month).
//!
//! Ranges are exact for fixed-width encodings (integers, timestamps, UUIDs, bools) and
//! for the last component of a template. For a string component followed by more
//! components, keys sort by the encoded string *followed by `#`*, so a value compares
//! below its own extensions that start with a character sorting before `#` (control
//! characters, space, `!`, `"`): `"a"` and `"a!"` may come in either order.

use super::{escape_str, KeyError, KeyPart};
use crate::schema::IndexSchema;
use crate::{Entity, Table};
use std::marker::PhantomData;

/// Which key a query reads: the table's primary key ([`Primary`]) or a secondary index
/// ([`IndexAt`]). Partitions and sort-key conditions carry it in their type, so a
/// condition built for one index cannot be used on another.
pub trait KeySpace: Send + Sync + 'static {
    /// The index of table `T`, or `None` for the table itself.
    fn index<T: Table>() -> Option<&'static IndexSchema>;
}

/// The table's primary key.
#[derive(Debug, Clone, Copy)]
pub enum Primary {}

impl KeySpace for Primary {
    fn index<T: Table>() -> Option<&'static IndexSchema> {
        None
    }
}

/// The `N`-th secondary index declared on the table (generated code names it).
#[derive(Debug, Clone, Copy)]
pub enum IndexAt<const N: usize> {}

impl<const N: usize> KeySpace for IndexAt<N> {
    fn index<T: Table>() -> Option<&'static IndexSchema> {
        T::SCHEMA.indexes.get(N)
    }
}

/// The partition key value of entity `E`'s items in key space `K` (the table, or an
/// index), for queries; with the default sort-key condition selecting `E`'s items.
pub struct Partition<E, K = Primary> {
    pub(crate) value: Result<String, KeyError>,
    pub(crate) default_range: SortKeyRange,
    _entity: PhantomData<fn() -> (E, K)>,
}

impl<E, K> Clone for Partition<E, K> {
    fn clone(&self) -> Self {
        Partition {
            value: self.value.clone(),
            default_range: self.default_range.clone(),
            _entity: PhantomData,
        }
    }
}

impl<E, K> std::fmt::Debug for Partition<E, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Partition").field(&self.value).finish()
    }
}

impl<E: Entity, K: KeySpace> Partition<E, K> {
    /// `sk_root` and `sk_fixed`: the sort-key template's leading literal and whether it
    /// has no fields; the default query selects every item of `E` in the partition.
    #[doc(hidden)]
    pub fn __build(
        sk_root: &str,
        sk_fixed: bool,
        render: impl FnOnce(&mut String) -> Result<(), KeyError>,
    ) -> Self {
        let mut value = String::new();
        let default_range = match SortKeyPrefix::<E, K>::__root(sk_root, sk_fixed)
            .condition()
            .range
        {
            Ok(range) => range,
            Err(_) => SortKeyRange::op(SortKeyOp::Any),
        };
        Partition {
            value: render(&mut value).map(|()| value),
            default_range,
            _entity: PhantomData,
        }
    }

    /// The rendered partition key value.
    pub fn value(&self) -> Result<&str, crate::Error> {
        self.value
            .as_deref()
            .map_err(|e| crate::Error::key(E::ENTITY_TYPE, e.clone()))
    }
}

/// A condition on the sort key of entity `E`'s items, built from its template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortKeyCondition<E, K = Primary> {
    pub(crate) range: Result<SortKeyRange, KeyError>,
    _entity: PhantomData<fn() -> (E, K)>,
}

/// The operators DynamoDB allows on a sort key in a key condition.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SortKeyOp {
    /// No condition: the whole partition.
    Any,
    /// `SK = value`
    Eq(String),
    /// `begins_with(SK, value)`
    BeginsWith(String),
    /// `SK <= value`
    Le(String),
    /// `SK >= value`
    Ge(String),
    /// `SK BETWEEN low AND high` (inclusive)
    Between(String, String),
}

/// A sort-key condition as sent (`op`) plus what DynamoDB cannot express in the same
/// request: a strict bound (the one key value to leave out) and, in the degenerate case
/// where no upper bound exists, the prefix every key must keep. A key condition takes one
/// operator on the sort key and a filter cannot name key attributes (DynamoDB rules), so
/// these two are checked on the items read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SortKeyRange {
    /// The key condition on the sort key.
    pub op: SortKeyOp,
    /// A sort key value to leave out (strict `<` or `>` on a whole key).
    pub exclude: Option<String>,
    /// A prefix every returned sort key must have.
    pub prefix: Option<String>,
}

impl SortKeyRange {
    pub(crate) fn op(op: SortKeyOp) -> Self {
        SortKeyRange {
            op,
            exclude: None,
            prefix: None,
        }
    }

    /// Whether a sort key read under `op` satisfies the rest of the condition.
    pub fn admits(&self, sort_key: &str) -> bool {
        self.exclude.as_deref() != Some(sort_key)
            && self
                .prefix
                .as_deref()
                .is_none_or(|p| sort_key.starts_with(p))
    }
}

impl<E, K> SortKeyCondition<E, K> {
    fn new(range: Result<SortKeyRange, KeyError>) -> Self {
        SortKeyCondition {
            range,
            _entity: PhantomData,
        }
    }

    /// The rendered condition.
    pub fn range(&self) -> Result<&SortKeyRange, &KeyError> {
        self.range.as_ref()
    }
}

/// The smallest string greater than every string starting with `prefix`, if one exists:
/// the prefix with its last character incremented.
fn prefix_end(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = (u32::from(last) + 1..=u32::from(char::MAX)).find_map(char::from_u32);
        if let Some(next) = next {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// Builds the range `[low, high]` (inclusive) confined to keys starting with `prefix`.
/// An absent bound is the prefix's own start or end.
fn confined(
    prefix: &str,
    low: Option<String>,
    high: Option<String>,
    exclude: Option<String>,
) -> SortKeyRange {
    let mut guard = None;
    let low = low.or_else(|| (!prefix.is_empty()).then(|| prefix.to_owned()));
    let high = high.or_else(|| {
        if prefix.is_empty() {
            return None;
        }
        // Inclusive use of the end is safe: no key of this entity equals it (its
        // components end at a delimiter), and other entities' items are filtered out.
        let end = prefix_end(prefix);
        if end.is_none() {
            guard = Some(prefix.to_owned());
        }
        end
    });
    let op = match (low, high) {
        (Some(l), Some(h)) => SortKeyOp::Between(l, h),
        (Some(l), None) => SortKeyOp::Ge(l),
        (None, Some(h)) => SortKeyOp::Le(h),
        (None, None) => SortKeyOp::Any,
    };
    SortKeyRange {
        op,
        exclude,
        prefix: guard,
    }
}

/// Comparison on one sort-key component.
#[derive(Debug, Clone, Copy)]
#[doc(hidden)]
pub enum Compare {
    Lt,
    Le,
    Gt,
    Ge,
}

/// A sort-key prefix of entity `E` made of whole leading components; the generated
/// `Type::sk()` chain wraps it. `complete` is set once every component is fixed.
pub struct SortKeyPrefix<E, K = Primary> {
    rendered: Result<String, KeyError>,
    complete: bool,
    _entity: PhantomData<fn() -> (E, K)>,
}

impl<E, K> Clone for SortKeyPrefix<E, K> {
    fn clone(&self) -> Self {
        SortKeyPrefix {
            rendered: self.rendered.clone(),
            complete: self.complete,
            _entity: PhantomData,
        }
    }
}

impl<E, K> std::fmt::Debug for SortKeyPrefix<E, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SortKeyPrefix")
            .field("rendered", &self.rendered)
            .field("complete", &self.complete)
            .finish()
    }
}

#[doc(hidden)]
impl<E, K> SortKeyPrefix<E, K> {
    /// The template's leading literal (may be empty); `complete` if the template has no field.
    pub fn __root(literal: &str, complete: bool) -> Self {
        SortKeyPrefix {
            rendered: Ok(literal.to_owned()),
            complete,
            _entity: PhantomData,
        }
    }

    /// Fixes the next component and appends the literal that follows it.
    pub fn __push(
        self,
        encode: impl FnOnce(&mut String) -> Result<(), KeyError>,
        following: &str,
        complete: bool,
    ) -> Self {
        let rendered = self.rendered.and_then(|mut s| {
            encode(&mut s)?;
            s.push_str(following);
            Ok(s)
        });
        SortKeyPrefix {
            rendered,
            complete,
            _entity: PhantomData,
        }
    }

    /// A range on the next component. `followed` says whether a delimiter (and more of
    /// the template) follows the component, or the template ends with it.
    pub fn __compare(
        self,
        op: Compare,
        encode: impl FnOnce(&mut String) -> Result<(), KeyError>,
        followed: bool,
    ) -> SortKeyCondition<E, K> {
        let range = self.rendered.and_then(|prefix| {
            let mut v = prefix.clone();
            encode(&mut v)?;
            Ok(if followed {
                // Keys whose component equals v lie in [v#, v$]: '$' is the character
                // after the delimiter '#', and no encoded value contains '#'. No key ends
                // right after v, so v and v$ are never keys themselves.
                let (at, after) = (format!("{v}#"), format!("{v}$"));
                match op {
                    Compare::Lt => confined(&prefix, None, Some(v), None),
                    Compare::Le => confined(&prefix, None, Some(after), None),
                    Compare::Gt => confined(&prefix, Some(after), None, None),
                    Compare::Ge => confined(&prefix, Some(at), None, None),
                }
            } else {
                match op {
                    Compare::Lt => confined(&prefix, None, Some(v.clone()), Some(v)),
                    Compare::Le => confined(&prefix, None, Some(v), None),
                    Compare::Gt => confined(&prefix, Some(v.clone()), None, Some(v)),
                    Compare::Ge => confined(&prefix, Some(v), None, None),
                }
            })
        });
        SortKeyCondition::new(range)
    }

    /// An inclusive range `[low, high]` on the next component.
    pub fn __between(
        self,
        low: impl FnOnce(&mut String) -> Result<(), KeyError>,
        high: impl FnOnce(&mut String) -> Result<(), KeyError>,
        followed: bool,
    ) -> SortKeyCondition<E, K> {
        let range = self.rendered.and_then(|prefix| {
            let (mut lo, mut hi) = (prefix.clone(), prefix.clone());
            low(&mut lo)?;
            high(&mut hi)?;
            if followed {
                lo.push('#');
                hi.push('$');
            }
            Ok(confined(&prefix, Some(lo), Some(hi), None))
        });
        SortKeyCondition::new(range)
    }

    /// A partial raw value of the next component (escaped like a string value).
    pub fn __starts_with(self, partial: &str) -> SortKeyCondition<E, K> {
        let range = self.rendered.and_then(|mut s| {
            escape_str(partial, &mut s)?;
            Ok(SortKeyRange::op(SortKeyOp::BeginsWith(s)))
        });
        SortKeyCondition::new(range)
    }

    /// The condition matching every key that starts with the fixed components (or the
    /// one key, once every component is fixed).
    pub fn condition(self) -> SortKeyCondition<E, K> {
        let complete = self.complete;
        SortKeyCondition::new(self.rendered.map(|s| {
            SortKeyRange::op(if s.is_empty() {
                SortKeyOp::Any
            } else if complete {
                SortKeyOp::Eq(s)
            } else {
                SortKeyOp::BeginsWith(s)
            })
        }))
    }
}

impl<E, K> From<SortKeyPrefix<E, K>> for SortKeyCondition<E, K> {
    fn from(prefix: SortKeyPrefix<E, K>) -> Self {
        prefix.condition()
    }
}

/// Encodes a key argument (helper for generated code).
#[doc(hidden)]
pub fn encode_arg<T: KeyPart>(
    arg: impl super::KeyArg<T>,
) -> impl FnOnce(&mut String) -> Result<(), KeyError> {
    move |out| arg.encode_key_arg(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct E;

    fn enc(v: u32) -> impl FnOnce(&mut String) -> Result<(), KeyError> {
        move |out| v.encode_key(out)
    }

    fn root() -> SortKeyPrefix<E> {
        SortKeyPrefix::__root("ORDER#", false)
    }

    fn fixed() -> SortKeyPrefix<E> {
        root().__push(enc(1), "#", false)
    }

    fn range(c: SortKeyCondition<E>) -> SortKeyRange {
        c.range.unwrap()
    }

    const P: &str = "ORDER#0000000001#";

    #[test]
    fn whole_components_end_at_the_delimiter() {
        assert_eq!(
            range(fixed().condition()).op,
            SortKeyOp::BeginsWith(P.into())
        );
        assert_eq!(
            range(root().condition()).op,
            SortKeyOp::BeginsWith("ORDER#".into())
        );
        let full = fixed().__push(enc(2), "", true).condition();
        assert_eq!(range(full).op, SortKeyOp::Eq(format!("{P}0000000002")));
    }

    #[test]
    fn ranges_stay_inside_the_fixed_prefix() {
        let end = "ORDER#0000000001$".to_string();
        let v = format!("{P}0000000005");
        let r = |c| range(fixed().__compare(c, enc(5), true));
        assert_eq!(r(Compare::Lt).op, SortKeyOp::Between(P.into(), v.clone()));
        assert_eq!(
            r(Compare::Le).op,
            SortKeyOp::Between(P.into(), format!("{v}$"))
        );
        assert_eq!(
            r(Compare::Gt).op,
            SortKeyOp::Between(format!("{v}$"), end.clone())
        );
        assert_eq!(r(Compare::Ge).op, SortKeyOp::Between(format!("{v}#"), end));
        assert!(r(Compare::Lt).exclude.is_none());
    }

    #[test]
    fn strict_bounds_on_the_last_component_exclude_the_bound() {
        let v = format!("{P}0000000005");
        let lt = range(fixed().__compare(Compare::Lt, enc(5), false));
        assert_eq!(lt.op, SortKeyOp::Between(P.into(), v.clone()));
        assert_eq!(lt.exclude.as_deref(), Some(v.as_str()));
        assert!(!lt.admits(&v) && lt.admits(&format!("{P}0000000004")));
        let ge = range(fixed().__compare(Compare::Ge, enc(5), false));
        assert_eq!(ge.exclude, None);
    }

    #[test]
    fn without_a_prefix_ranges_are_one_sided() {
        let bare = SortKeyPrefix::<E>::__root("", false);
        let r = range(bare.__compare(Compare::Gt, enc(5), false));
        assert_eq!(r.op, SortKeyOp::Ge("0000000005".into()));
        assert_eq!(r.exclude.as_deref(), Some("0000000005"));
    }

    #[test]
    fn prefix_end_increments_the_last_character() {
        assert_eq!(prefix_end("ab#").as_deref(), Some("ab$"));
        assert_eq!(prefix_end("a\u{D7FF}").as_deref(), Some("a\u{E000}"));
        assert_eq!(prefix_end("a\u{10FFFF}").as_deref(), Some("b"));
        assert_eq!(prefix_end("\u{10FFFF}"), None);
    }

    #[test]
    fn partial_values_are_escaped() {
        let c = root().__starts_with("2023-10#");
        assert_eq!(
            range(c).op,
            SortKeyOp::BeginsWith("ORDER#2023-10\"$".into())
        );
    }
}

// ------------------------------------------------------------ multi-attribute keys

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

/// The partition of a multi-attribute index key: one value per key attribute.
pub struct MultiPartition<E, K> {
    pub(crate) values:
        Result<Vec<(&'static str, aws_sdk_dynamodb::types::AttributeValue)>, KeyError>,
    _entity: PhantomData<fn() -> (E, K)>,
}

impl<E, K> Clone for MultiPartition<E, K> {
    fn clone(&self) -> Self {
        MultiPartition {
            values: self.values.clone(),
            _entity: PhantomData,
        }
    }
}

impl<E, K> std::fmt::Debug for MultiPartition<E, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("MultiPartition").field(&self.values).finish()
    }
}

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

impl<E, K> Clone for AttributePrefix<E, K> {
    fn clone(&self) -> Self {
        AttributePrefix {
            range: self.range.clone(),
            _entity: PhantomData,
        }
    }
}

impl<E, K> std::fmt::Debug for AttributePrefix<E, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("AttributePrefix").field(&self.range).finish()
    }
}

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
