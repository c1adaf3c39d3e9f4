//! Typed partition values and sort-key conditions built from key templates.
//!
//! `#[derive(Entity)]` generates `Order::partition(..)` and `Order::sk()`, a chain that
//! reaches the template's fields in order ([`SortKeyField`](super::chain::SortKeyField))
//! and ends in a [`SortKeyCondition`]:
//!
//! - `Order::sk()`: every item of the entity (`begins_with(SK, "ORDER#")`);
//! - `.created_at().eq(t)`: whole leading components (`begins_with(SK, "ORDER#<t>#")`),
//!   which can never match a longer value of the same component (`ORDER#1#` is not a
//!   prefix of `ORDER#10#`, because the encoding of a value never contains the delimiter);
//! - `.created_at().lt(t)`, `.le`, `.gt`, `.ge`, `.between(a, b)`: a range on the next
//!   component, whatever follows it;
//! - `.created_at().starts_with("2023-10")`: an explicit *partial* value of the next
//!   component (e.g. all timestamps of a month).
//!
//! Every condition returns exactly the items whose component satisfies it, for every
//! value: the keys whose component equals `v` are exactly those in `[v#, v$]`, because no
//! encoded value contains `#` and, when one encoding extends another, the next byte sorts
//! above `#` (see [Composite keys](super::KeyPart#composite-keys)); so `v#` and `v$` bound
//! the component however many components follow it. With another
//! [`Delimiter`] `d` the bounds are `v d` and `v` followed by the
//! character after `d` (`[v., v/]` for `.`), for the same reasons. Bounds are inclusive in DynamoDB
//! (`<=`, `>=`, `BETWEEN`); a strict bound on the last component leaves the one equal key
//! out after the read.
//!
//! DynamoDB refuses an empty key value in a key condition and a `BETWEEN` whose low bound
//! exceeds its high bound. A condition that would need one says what it means instead:
//! no bound at all ([`SortKeyOp::Any`], e.g. `>= ""` or `starts_with("")` on a template
//! that starts with a field), or no item ([`SortKeyOp::Nothing`], e.g. `< ""` or
//! `between("b", "a")`), which a query answers without sending a request.

use super::{Delimiter, KeyPart};
use crate::error::KeyError;
use crate::schema::IndexSchema;
use crate::{Entity, Table};
use std::marker::PhantomData;

/// Which key a query reads: the table's primary key ([`Primary`]) or a secondary index
/// (a marker type `#[derive(Table)]` generates per index, e.g. `AppGsi1` for index
/// `GSI1` of table `App`). Partitions and sort-key conditions carry it in their type, so a
/// condition built for one index cannot be used on another.
///
/// Implemented by [`Primary`] and by `#[derive(Table)]`; implementing it by hand is not
/// supported (its hidden supertrait may change in any release).
pub trait KeySpace: crate::schema::Sealed + Send + Sync + 'static {
    /// The index's name, or `None` for the table's primary key.
    const INDEX: Option<&'static str>;

    /// The index of table `T`, or `None` for the table itself.
    fn index<T: Table>() -> Option<&'static IndexSchema> {
        let name = Self::INDEX?;
        T::SCHEMA.indexes.iter().find(|index| index.name == name)
    }
}

/// The key space of the index at `POSITION` in the table's [`TableSchema::indexes`](crate::TableSchema::indexes):
/// how `#[derive(Entity)]` names the marker type `#[derive(Table)]` generates for an index
/// it knows by name.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "table `{Self}` declares no index at position {POSITION}",
    note = "the index is not declared on the table: see the error naming it"
)]
pub trait TableIndex<const POSITION: usize>: Table {
    /// The index's marker type.
    type Space: KeySpace;
}

/// The table's primary key.
#[derive(Debug, Clone, Copy)]
pub enum Primary {}

impl crate::schema::Sealed for Primary {}

impl KeySpace for Primary {
    const INDEX: Option<&'static str> = None;
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
        // The default range only names the template's leading literal, whatever the
        // delimiter: `begins_with` it, or the one key of a fixed template.
        let default_range = match SortKeyPrefix::<E, K>::__root(sk_root, sk_fixed, Delimiter::HASH)
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
#[non_exhaustive]
pub enum SortKeyOp {
    /// No condition: the whole partition.
    Any,
    /// No sort key can satisfy the condition (e.g. `< ""`, or `between` with its bounds
    /// reversed): the query returns no items without sending a request, as DynamoDB would
    /// refuse the only ways to write it (an empty key value, a `BETWEEN` whose low bound
    /// exceeds its high bound).
    Nothing,
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
///
/// Part of the query planner, not of the API: inspect what a query sends with
/// [`Query::params`](dynamo_model::ops::Query::params).
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SortKeyRange {
    /// The key condition on the sort key.
    pub(crate) op: SortKeyOp,
    /// A sort key value to leave out (strict `<` or `>` on a whole key).
    pub(crate) exclude: Option<String>,
    /// A prefix every returned sort key must have.
    pub(crate) prefix: Option<String>,
    /// For the history of one versioned item: only the revisions of the item whose latest
    /// copy is over this rest (the key condition's range also holds other items'
    /// revisions, see [`HistoryLayout::revision_bounds`](dynamo_model::history::HistoryLayout::revision_bounds)).
    pub(crate) revisions_of: Option<(crate::schema::history::HistoryLayout, String)>,
}

impl SortKeyRange {
    pub(crate) fn op(op: SortKeyOp) -> Self {
        SortKeyRange {
            op,
            exclude: None,
            prefix: None,
            revisions_of: None,
        }
    }

    /// Whether a sort key read under `op` satisfies the rest of the condition.
    #[doc(hidden)]
    pub fn admits(&self, sort_key: &str) -> bool {
        self.op != SortKeyOp::Nothing
            && self.exclude.as_deref() != Some(sort_key)
            && self
                .prefix
                .as_deref()
                .is_none_or(|p| sort_key.starts_with(p))
            && self
                .revisions_of
                .as_ref()
                .is_none_or(|(layout, rest)| layout.is_revision_of(sort_key, rest))
    }
}

impl<E, K> SortKeyCondition<E, K> {
    fn new(range: Result<SortKeyRange, KeyError>) -> Self {
        SortKeyCondition {
            range,
            _entity: PhantomData,
        }
    }

    /// A condition that cannot be built: the query reports `error` before sending.
    pub(crate) fn refused(error: KeyError) -> Self {
        Self::new(Err(error))
    }

    /// The rendered condition (planner detail; see [`Query::params`](dynamo_model::ops::Query::params)
    /// for what a query sends).
    #[doc(hidden)]
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

/// `begins_with(SK, prefix)`; every key begins with the empty string, which DynamoDB
/// refuses as a key value.
fn begins_with(prefix: String) -> SortKeyOp {
    if prefix.is_empty() {
        SortKeyOp::Any
    } else {
        SortKeyOp::BeginsWith(prefix)
    }
}

/// Builds the range `[low, high]` (inclusive) confined to keys starting with `prefix`.
/// An absent bound is the prefix's own start or end.
///
/// DynamoDB refuses an empty key value and a `BETWEEN` whose low bound exceeds its high
/// bound, so neither is ever sent: no sort key is empty (DynamoDB refuses one on write),
/// hence `>= ""` is no bound and `<= ""` matches nothing, and reversed bounds match
/// nothing.
fn confined(
    prefix: &str,
    low: Option<String>,
    high: Option<String>,
    exclude: Option<String>,
) -> SortKeyRange {
    let mut guard = None;
    if high.as_deref() == Some("") {
        return SortKeyRange::op(SortKeyOp::Nothing);
    }
    let low = low
        .filter(|l| !l.is_empty())
        .or_else(|| (!prefix.is_empty()).then(|| prefix.to_owned()));
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
        // String comparison is byte-wise, as DynamoDB compares key strings.
        (Some(l), Some(h)) if l > h => SortKeyOp::Nothing,
        (Some(l), Some(h)) => SortKeyOp::Between(l, h),
        (Some(l), None) => SortKeyOp::Ge(l),
        (None, Some(h)) => SortKeyOp::Le(h),
        (None, None) => SortKeyOp::Any,
    };
    SortKeyRange {
        op,
        exclude,
        prefix: guard,
        revisions_of: None,
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

impl Compare {
    /// The operator's method name, for errors.
    pub(crate) fn operator(self) -> &'static str {
        match self {
            Compare::Lt => "lt",
            Compare::Le => "le",
            Compare::Gt => "gt",
            Compare::Ge => "ge",
        }
    }
}

/// A sort-key prefix of entity `E` made of whole leading components; the generated
/// `Type::sk()` chain wraps it. `complete` is set once every component is fixed.
pub struct SortKeyPrefix<E, K = Primary> {
    rendered: Result<String, KeyError>,
    complete: bool,
    delimiter: Delimiter,
    _entity: PhantomData<fn() -> (E, K)>,
}

impl<E, K> Clone for SortKeyPrefix<E, K> {
    fn clone(&self) -> Self {
        SortKeyPrefix {
            rendered: self.rendered.clone(),
            complete: self.complete,
            delimiter: self.delimiter,
            _entity: PhantomData,
        }
    }
}

impl<E, K> std::fmt::Debug for SortKeyPrefix<E, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SortKeyPrefix")
            .field("rendered", &self.rendered)
            .field("complete", &self.complete)
            .field("delimiter", &self.delimiter)
            .finish()
    }
}

#[doc(hidden)]
impl<E, K> SortKeyPrefix<E, K> {
    /// The template's leading literal (may be empty); `complete` if the template has no
    /// field; the delimiter between its components.
    pub fn __root(literal: &str, complete: bool, delimiter: Delimiter) -> Self {
        SortKeyPrefix {
            rendered: Ok(literal.to_owned()),
            complete,
            delimiter,
            _entity: PhantomData,
        }
    }

    /// The delimiter between the template's components: what values are encoded for.
    pub fn delimiter(&self) -> Delimiter {
        self.delimiter
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
            delimiter: self.delimiter,
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
        let (delimiter, after) = (self.delimiter.as_char(), self.delimiter.after());
        let range = self.rendered.and_then(|prefix| {
            let mut v = prefix.clone();
            encode(&mut v)?;
            if matches!(op, Compare::Lt) && v.len() == prefix.len() {
                // An empty encoding is the least: no value sorts below it (a request
                // would only read nothing).
                return Ok(SortKeyRange::op(SortKeyOp::Nothing));
            }
            Ok(if followed {
                // Keys whose component equals v are exactly those in [v#, v$] ('$' is the
                // character after the delimiter '#'; with another delimiter d, [v d, v d+1]).
                // A component c < v has a key below v: enc(c) has a smaller byte where it
                // departs from enc(v), or is a proper prefix of enc(v) and its delimiter is
                // below the next byte of enc(v), which the `KeyPart` rules put above the
                // delimiter. A component c > v has a key above v$: enc(c) has a larger byte
                // where it departs from enc(v), or extends enc(v) with a byte above the
                // delimiter, hence at least d+1, followed by more bytes (an escape is three
                // bytes; a fixed-width encoding extends no other). No key of this entity is
                // v or v$ (a delimiter follows every component), so both bounds can be used
                // inclusively.
                let (at, after) = (format!("{v}{delimiter}"), format!("{v}{after}"));
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
        let delimiter = self.delimiter;
        let range = self.rendered.and_then(|prefix| {
            let (mut lo, mut hi) = (prefix.clone(), prefix.clone());
            low(&mut lo)?;
            high(&mut hi)?;
            if followed {
                // Every key whose component is in [low, high]: see `__compare`.
                lo.push(delimiter.as_char());
                hi.push(delimiter.after());
            }
            Ok(confined(&prefix, Some(lo), Some(hi), None))
        });
        SortKeyCondition::new(range)
    }

    /// A partial value of the next component, as `escape` writes it (the field type's
    /// [`KeyPart::escape_partial_with`] under the template's delimiter).
    pub fn __starts_with(
        self,
        escape: impl FnOnce(&mut String) -> Result<(), KeyError>,
    ) -> SortKeyCondition<E, K> {
        let range = self.rendered.and_then(|mut s| {
            escape(&mut s)?;
            Ok(SortKeyRange::op(begins_with(s)))
        });
        SortKeyCondition::new(range)
    }

    /// The condition matching every key that starts with the fixed components (or the
    /// one key, once every component is fixed).
    pub fn condition(self) -> SortKeyCondition<E, K> {
        let complete = self.complete;
        SortKeyCondition::new(self.rendered.map(|s| {
            SortKeyRange::op(match (complete, s.is_empty()) {
                // An empty sort key cannot be stored, so no item has it.
                (true, true) => SortKeyOp::Nothing,
                (true, false) => SortKeyOp::Eq(s),
                (false, _) => begins_with(s),
            })
        }))
    }
}

impl<E, K> From<SortKeyPrefix<E, K>> for SortKeyCondition<E, K> {
    fn from(prefix: SortKeyPrefix<E, K>) -> Self {
        prefix.condition()
    }
}

/// Encodes a key argument under `delimiter` (helper for generated code).
#[doc(hidden)]
pub fn encode_arg<T: KeyPart>(
    arg: impl super::KeyArg<T>,
    delimiter: Delimiter,
) -> impl FnOnce(&mut String) -> Result<(), KeyError> {
    move |out| arg.encode_key_arg(delimiter, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keytext::escape_str;

    struct E;

    fn enc(v: u32) -> impl FnOnce(&mut String) -> Result<(), KeyError> {
        move |out| v.encode_key(out)
    }

    fn root() -> SortKeyPrefix<E> {
        SortKeyPrefix::__root("ORDER#", false, Delimiter::HASH)
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
        let bare = SortKeyPrefix::<E>::__root("", false, Delimiter::HASH);
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
        let c = root().__starts_with(|out| escape_str("2023-10#", out));
        assert_eq!(
            range(c).op,
            SortKeyOp::BeginsWith("ORDER#2023-10%23".into())
        );
    }

    fn string(v: &'static str) -> impl FnOnce(&mut String) -> Result<(), KeyError> {
        move |out| escape_str(v, out)
    }

    /// `sk = "N#{name}#{n}"`: the bounds of a range on `name` enclose exactly the keys of
    /// the names in range, `b!`, `b `, `b#`, `b"` and `John Smith` included.
    #[test]
    fn string_ranges_on_a_followed_component() {
        let n = SortKeyPrefix::<E>::__root("N#", false, Delimiter::HASH);
        let key = |name: &str| {
            let mut k = String::from("N#");
            escape_str(name, &mut k).unwrap();
            k + "#0000000001"
        };
        let returned = |c: SortKeyCondition<E>, name: &str| {
            let r = range(c);
            let k = key(name);
            let inside = match &r.op {
                SortKeyOp::Between(a, b) => a <= &k && &k <= b,
                other => panic!("{other:?}"),
            };
            inside && r.admits(&k)
        };
        for name in ["b!", "b ", "b#", "b\"", "b$", "b%", "ba", "c"] {
            assert!(
                !returned(n.clone().__compare(Compare::Le, string("b"), true), name),
                "{name:?} <= b"
            );
            assert!(
                returned(n.clone().__compare(Compare::Gt, string("b"), true), name),
                "{name:?} > b"
            );
        }
        for name in ["a", "b", "a!", "a#", "a\"", "", "\u{0}"] {
            assert!(
                returned(n.clone().__compare(Compare::Le, string("b"), true), name),
                "{name:?} <= b"
            );
        }
        assert!(returned(
            n.clone().__compare(Compare::Ge, string("John"), true),
            "John Smith"
        ));
        assert!(returned(
            n.clone().__compare(Compare::Gt, string("John"), true),
            "John Smith"
        ));
        assert!(!returned(
            n.clone().__compare(Compare::Lt, string("John"), true),
            "John Smith"
        ));
        for name in ["a", "a!", "a#", "a ", "ab", "b"] {
            assert!(
                returned(n.clone().__between(string("a"), string("b"), true), name),
                "{name:?}"
            );
        }
        for name in ["b!", "b#", "", "`"] {
            assert!(
                !returned(n.clone().__between(string("a"), string("b"), true), name),
                "{name:?}"
            );
        }
    }

    /// `sk = "{name}"` and `sk = "{name}#{n}"`: empty values never reach DynamoDB (which
    /// refuses an empty key value); they mean every item or none.
    #[test]
    fn empty_values_mean_everything_or_nothing() {
        let bare = || SortKeyPrefix::<E>::__root("", false, Delimiter::HASH);
        let op = |c: SortKeyCondition<E>| range(c).op;
        for followed in [false, true] {
            assert_eq!(
                op(bare().__compare(Compare::Lt, string(""), followed)),
                SortKeyOp::Nothing
            );
            assert_eq!(
                op(root().__compare(Compare::Lt, string(""), followed)),
                SortKeyOp::Nothing
            );
            assert_eq!(
                op(bare().__between(string("b"), string("a"), followed)),
                SortKeyOp::Nothing
            );
        }
        assert_eq!(op(bare().__starts_with(|_| Ok(()))), SortKeyOp::Any);
        // The last component: no sort key is empty.
        assert_eq!(
            op(bare().__compare(Compare::Le, string(""), false)),
            SortKeyOp::Nothing
        );
        assert_eq!(
            op(bare().__compare(Compare::Ge, string(""), false)),
            SortKeyOp::Any
        );
        let gt = range(bare().__compare(Compare::Gt, string(""), false));
        assert_eq!(gt.op, SortKeyOp::Any);
        assert!(gt.admits("a"));
        assert_eq!(
            op(bare().__between(string(""), string("b"), false)),
            SortKeyOp::Le("b".into())
        );
        assert_eq!(
            op(bare().__push(string(""), "", true).condition()),
            SortKeyOp::Nothing
        );
        assert!(!range(bare().__push(string(""), "", true).condition()).admits(""));
        // Followed by more components: `""` is a value like any other (keys `#...`).
        assert_eq!(
            op(bare().__compare(Compare::Le, string(""), true)),
            SortKeyOp::Le("$".into())
        );
        assert_eq!(
            op(bare().__compare(Compare::Ge, string(""), true)),
            SortKeyOp::Ge("#".into())
        );
        assert_eq!(
            op(bare().__compare(Compare::Gt, string(""), true)),
            SortKeyOp::Ge("$".into())
        );
        assert_eq!(
            op(bare().__between(string(""), string(""), true)),
            SortKeyOp::Between("#".into(), "$".into())
        );
        assert_eq!(
            op(bare().__push(string(""), "#", false).condition()),
            SortKeyOp::BeginsWith("#".into())
        );
    }
}

/// The property behind every sort-key condition: on composite keys, the items a
/// condition returns (as DynamoDB evaluates it, plus [`SortKeyRange::admits`]) are
/// exactly the items a reference filter over the values selects, for every operator and
/// every key type, after any number of fixed string components and followed by more
/// components or not.
#[cfg(test)]
mod range_properties {
    use super::*;
    use crate::keytext::testing::*;
    use crate::keytext::testing::{signed_values, unsigned_values};
    use proptest::prelude::*;
    use proptest::sample::Index;
    use std::collections::BTreeMap;
    use std::fmt::Debug;

    struct E;

    /// DynamoDB's evaluation of a sort-key condition on one stored key: key strings
    /// compare by their UTF-8 bytes, `BETWEEN` is inclusive.
    fn dynamodb_matches(op: &SortKeyOp, sk: &str) -> bool {
        let sk = sk.as_bytes();
        match op {
            SortKeyOp::Any => true,
            SortKeyOp::Nothing => false,
            SortKeyOp::Eq(v) => sk == v.as_bytes(),
            SortKeyOp::BeginsWith(p) => sk.starts_with(p.as_bytes()),
            SortKeyOp::Le(v) => sk <= v.as_bytes(),
            SortKeyOp::Ge(v) => sk >= v.as_bytes(),
            SortKeyOp::Between(a, b) => a.as_bytes() <= sk && sk <= b.as_bytes(),
        }
    }

    /// Why DynamoDB would refuse the condition: an empty key value, or a `BETWEEN`
    /// whose low bound exceeds its high bound (ValidationException).
    fn dynamodb_refuses(op: &SortKeyOp) -> Option<&'static str> {
        let values: Vec<&String> = match op {
            SortKeyOp::Any | SortKeyOp::Nothing => vec![],
            SortKeyOp::Eq(v) | SortKeyOp::BeginsWith(v) | SortKeyOp::Le(v) | SortKeyOp::Ge(v) => {
                vec![v]
            }
            SortKeyOp::Between(a, b) => {
                if a > b {
                    return Some("BETWEEN bounds reversed");
                }
                vec![a, b]
            }
        };
        values
            .iter()
            .any(|v| v.is_empty())
            .then_some("empty key value")
    }

    /// A key type under test: ordered like its values, and the text `starts_with`
    /// compares with (the raw value of a string, the `#` key encoding of anything else,
    /// whatever the delimiter: a partial value is text of that encoding).
    trait Subject: KeyPart + Ord + Clone + Debug {
        fn text(&self) -> String {
            let mut out = String::new();
            self.encode_key(&mut out).map(|()| out).unwrap_or_default()
        }
    }
    impl Subject for String {
        fn text(&self) -> String {
            self.clone()
        }
    }
    macro_rules! subjects {
        ($($t:ty),*) => { $(impl Subject for $t {})* };
    }
    subjects!(
        u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, bool
    );
    #[cfg(feature = "time")]
    subjects!(time::OffsetDateTime, time::Date, time::PrimitiveDateTime);
    #[cfg(feature = "chrono")]
    subjects!(
        chrono::NaiveDate,
        chrono::NaiveDateTime,
        chrono::DateTime<chrono::Utc>
    );
    #[cfg(feature = "uuid")]
    impl Subject for uuid::Uuid {}

    #[derive(Debug, Clone)]
    enum Op<T> {
        Lt(T),
        Le(T),
        Gt(T),
        Ge(T),
        Between(T, T),
        StartsWith(String),
        /// The whole component: `.field(v)` (`begins_with` up to the next delimiter, or
        /// `=` when it is the last component).
        Is(T),
    }

    impl<T: Subject> Op<T> {
        /// The reference filter.
        fn holds(&self, v: &T) -> bool {
            match self {
                Op::Lt(b) => v < b,
                Op::Le(b) => v <= b,
                Op::Gt(b) => v > b,
                Op::Ge(b) => v >= b,
                Op::Between(a, b) => a <= v && v <= b,
                Op::StartsWith(p) => v.text().starts_with(p.as_str()),
                Op::Is(b) => v == b,
            }
        }

        /// The condition, as the generated `sk()` chain builds it after `prefix`.
        fn condition(&self, prefix: SortKeyPrefix<E>, mid: Option<&str>) -> SortKeyCondition<E> {
            let followed = mid.is_some();
            let d = prefix.delimiter();
            let arg = |v: &T| encode_arg::<T>(v.clone(), d);
            let cmp = |op, v| prefix.clone().__compare(op, arg(v), followed);
            match self {
                Op::Lt(b) => cmp(Compare::Lt, b),
                Op::Le(b) => cmp(Compare::Le, b),
                Op::Gt(b) => cmp(Compare::Gt, b),
                Op::Ge(b) => cmp(Compare::Ge, b),
                Op::Between(a, b) => prefix.__between(arg(a), arg(b), followed),
                Op::StartsWith(p) => prefix.__starts_with(|out| T::escape_partial_with(p, d, out)),
                Op::Is(b) => prefix
                    .__push(arg(b), mid.unwrap_or(""), !followed)
                    .condition(),
            }
        }
    }

    /// A template `{root}{fixed strings…}{field}{mid}{tail}` (the field last when `mid`
    /// is `None`) whose delimiter is `delimiter`, items of it, and a condition on the
    /// field after the fixed components.
    #[derive(Debug, Clone)]
    struct Case<T> {
        delimiter: Delimiter,
        root: String,
        fixed: Vec<String>,
        mid: Option<String>,
        /// (leading components, field value, tail component)
        items: Vec<(Vec<String>, T, String)>,
        op: Op<T>,
    }

    impl<T: Subject> Case<T> {
        fn key(&self, lead: &[String], v: &T, tail: &str) -> Result<String, KeyError> {
            let d = self.delimiter;
            let mut key = self.root.clone();
            for s in lead {
                s.encode_key_with(d, &mut key)?;
                key.push(d.as_char());
            }
            v.encode_key_with(d, &mut key)?;
            if let Some(mid) = &self.mid {
                key.push_str(mid);
                tail.to_owned().encode_key_with(d, &mut key)?;
            }
            Ok(key)
        }
    }

    /// The raw material of an operator; bounds are either fresh values or the values of
    /// generated items (so that equal values and extensions of values are common).
    type OpSeed<T> = (
        u8,
        T,
        T,
        Option<Index>,
        Option<Index>,
        String,
        Option<(Index, Index)>,
    );
    /// (leading components, shares the fixed components, field value, tail component)
    type ItemSeed<T> = (Vec<String>, bool, T, String);

    fn cases<T: Subject + 'static>(values: BoxedStrategy<T>) -> impl Strategy<Value = Case<T>> {
        let delimiters = prop_oneof![
            1 => Just(Delimiter::HASH),
            2 => prop::sample::select(&Delimiter::ALL[..]),
        ];
        // `{root}` is empty or `N` and the delimiter; `mid` is none, the delimiter, or
        // the delimiter, `L` and the delimiter.
        (0usize..=2, any::<bool>(), 0u8..3, delimiters).prop_flat_map(
            move |(leads, rooted, mid, delimiter)| {
                let d = delimiter.as_char();
                let root = if rooted {
                    format!("N{d}")
                } else {
                    String::new()
                };
                let mid = match mid {
                    0 => None,
                    1 => Some(d.to_string()),
                    _ => Some(format!("{d}L{d}")),
                };
                let fixed = prop::collection::vec(colliding_strings(), leads);
                let item = (
                    prop::collection::vec(colliding_strings(), leads),
                    any::<bool>(),
                    values.clone(),
                    strings(),
                );
                let seed = (
                    0u8..7,
                    values.clone(),
                    values.clone(),
                    prop::option::of(any::<Index>()),
                    prop::option::of(any::<Index>()),
                    strings(),
                    prop::option::weighted(0.7, any::<(Index, Index)>()),
                );
                (fixed, prop::collection::vec(item, 1..24), seed).prop_map(
                    move |(fixed, items, seed): (_, Vec<ItemSeed<T>>, OpSeed<T>)| {
                        // Half of the items share the fixed components.
                        let items: Vec<(Vec<String>, T, String)> = items
                            .into_iter()
                            .map(|(lead, same, v, tail)| {
                                (if same { fixed.clone() } else { lead }, v, tail)
                            })
                            .collect();
                        let (kind, a, b, pick_a, pick_b, partial, pick_partial) = seed;
                        let pick = |fresh: T, at: Option<Index>| match at {
                            Some(at) => items[at.index(items.len())].1.clone(),
                            None => fresh,
                        };
                        let (a, b) = (pick(a, pick_a), pick(b, pick_b));
                        let op = match kind {
                            0 => Op::Lt(a),
                            1 => Op::Le(a),
                            2 => Op::Gt(a),
                            3 => Op::Ge(a),
                            4 => Op::Between(a, b),
                            5 => Op::StartsWith(match pick_partial {
                                // A prefix of an item's value, cut at a character boundary.
                                Some((at, cut)) => {
                                    let text = items[at.index(items.len())].1.text();
                                    let chars: Vec<char> = text.chars().collect();
                                    chars[..cut.index(chars.len() + 1)].iter().collect()
                                }
                                None => partial,
                            }),
                            _ => Op::Is(a),
                        };
                        Case {
                            delimiter,
                            root: root.clone(),
                            fixed,
                            mid: mid.clone(),
                            items,
                            op,
                        }
                    },
                )
            },
        )
    }

    fn check<T: Subject>(case: &Case<T>) -> Result<(), TestCaseError> {
        let fail = |e: KeyError| TestCaseError::fail(e.to_string());
        // One item per key, as in a table; DynamoDB refuses an empty sort key.
        let mut stored = BTreeMap::new();
        for (lead, v, tail) in &case.items {
            let key = case.key(lead, v, tail).map_err(fail)?;
            if !key.is_empty() {
                stored.entry(key).or_insert((lead, v));
            }
        }
        let d = case.delimiter;
        let mut prefix = SortKeyPrefix::<E>::__root(&case.root, false, d);
        let delimiter = d.to_string();
        for s in &case.fixed {
            prefix = prefix.__push(encode_arg::<String>(s.clone(), d), &delimiter, false);
        }
        let condition = case.op.condition(prefix, case.mid.as_deref());
        let range = condition.range().map_err(|e| fail(e.clone()))?;
        prop_assert_eq!(dynamodb_refuses(&range.op), None, "{:?}", range);
        let returned: Vec<&String> = stored
            .keys()
            .filter(|k| dynamodb_matches(&range.op, k) && range.admits(k))
            .collect();
        let expected: Vec<&String> = stored
            .iter()
            .filter(|(_, (lead, v))| **lead == case.fixed && case.op.holds(v))
            .map(|(k, _)| k)
            .collect();
        prop_assert_eq!(returned, expected, "{:?}", range);
        Ok(())
    }

    macro_rules! range_property {
        ($($name:ident: $t:ty = $values:expr;)*) => {
            proptest! {
                #![proptest_config(ProptestConfig::with_cases(256))]
                $(
                    #[test]
                    fn $name(case in cases::<$t>($values.boxed())) {
                        check(&case)?;
                    }
                )*
            }
        };
    }

    range_property! {
        string_ranges: String = prop_oneof![colliding_strings(), strings()];
        u8_ranges: u8 = unsigned_values!(u8);
        u16_ranges: u16 = unsigned_values!(u16);
        u32_ranges: u32 = unsigned_values!(u32);
        u64_ranges: u64 = unsigned_values!(u64);
        u128_ranges: u128 = unsigned_values!(u128);
        usize_ranges: usize = unsigned_values!(usize);
        i8_ranges: i8 = signed_values!(i8);
        i16_ranges: i16 = signed_values!(i16);
        i32_ranges: i32 = signed_values!(i32);
        i64_ranges: i64 = signed_values!(i64);
        i128_ranges: i128 = signed_values!(i128);
        isize_ranges: isize = signed_values!(isize);
        bool_ranges: bool = any::<bool>();
    }

    #[cfg(feature = "time")]
    range_property! {
        datetime_ranges: time::OffsetDateTime = datetime_values::datetimes();
        date_ranges: time::Date = time_values::dates();
        primitive_datetime_ranges: time::PrimitiveDateTime = time_values::date_times();
    }

    #[cfg(feature = "chrono")]
    range_property! {
        naive_date_ranges: chrono::NaiveDate = chrono_values::dates();
        naive_datetime_ranges: chrono::NaiveDateTime = chrono_values::date_times();
        chrono_utc_ranges: chrono::DateTime<chrono::Utc> = chrono_values::instants();
    }

    #[cfg(feature = "uuid")]
    range_property! {
        uuid_ranges: uuid::Uuid = uuids();
    }
}

#[cfg(test)]
mod attribute_range_tests {
    use super::*;
    use aws_sdk_dynamodb::types::AttributeValue as Av;

    fn range(eq: &[&str], last: Option<AttributeOp>) -> AttributeRange {
        AttributeRange {
            eq: eq.iter().map(|v| ("a", Av::S((*v).into()))).collect(),
            last: last.map(|op| ("b", op)),
        }
    }

    fn s(v: &str) -> Av {
        Av::S(v.into())
    }

    #[test]
    fn empty_values_and_reversed_bounds_mean_everything_or_nothing() {
        use AttributeOp::*;
        assert_eq!(range(&[""], None).normalized(), None);
        for nothing in [
            Lt(s("")),
            Le(s("")),
            Between(s("x"), s("")),
            Between(s("b"), s("a")),
        ] {
            assert_eq!(
                range(&["x"], Some(nothing.clone())).normalized(),
                None,
                "{nothing:?}"
            );
        }
        assert_eq!(
            range(&["x"], Some(Between(Av::N("10".into()), Av::N("9".into())))).normalized(),
            None
        );
        for everything in [Gt(s("")), Ge(s("")), BeginsWith(s(""))] {
            assert_eq!(
                range(&["x"], Some(everything)).normalized(),
                Some(range(&["x"], None))
            );
        }
        assert_eq!(
            range(&["x"], Some(Between(s(""), s("m")))).normalized(),
            Some(range(&["x"], Some(Le(s("m")))))
        );
        let kept = range(&["x"], Some(Between(s("a"), s("b"))));
        assert_eq!(kept.normalized(), Some(kept.clone()));
        assert_eq!(
            range(&[], Some(Between(Av::N("9".into()), Av::N("10".into())))).normalized(),
            Some(range(
                &[],
                Some(Between(Av::N("9".into()), Av::N("10".into())))
            ))
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
