//! Typed partition values and sort-key conditions built from key templates.
//!
//! `#[derive(Entity)]` generates `Order::partition(..)` and `Order::sk()`, a chain that
//! reaches the template's fields in order ([`SortKeyField`](crate::SortKeyField))
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
//! above `#` (see [Composite keys](crate::key::KeyPart#composite-keys)); so `v#` and `v$` bound
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
//!
//! A multi-attribute index key has a partition of one value per key attribute
//! ([`MultiPartition`]) and conditions of its own ([`AttributeCondition`]).

use crate::error::KeyError;
use crate::key::{Delimiter, KeyPart};
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

/// An index name as a type, eight characters a link (`'\0'` after the end), so that a
/// table's declaration of an index and an entity's use of its name meet in the trait
/// system: a name the table does not declare is a compile error at the entity's attribute.
#[doc(hidden)]
pub struct IndexName<
    const C0: char,
    const C1: char,
    const C2: char,
    const C3: char,
    const C4: char,
    const C5: char,
    const C6: char,
    const C7: char,
    Rest,
>(core::marker::PhantomData<Rest>);

/// The end of an [`IndexName`].
#[doc(hidden)]
pub struct IndexNameEnd;

/// The table declares an index named `Name` (an [`IndexName`]), at `POSITION` in its
/// [`TableSchema::indexes`](crate::TableSchema::indexes). Implemented by `#[derive(Table)]`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "table `{Self}` declares no index of this name",
    label = "not an index of `{Self}`",
    note = "an entity's `index(..)` names an index the table declares with `gsi(name = \"..\")` or `lsi(name = \"..\")`, exactly (case included); a name that is not a Rust identifier is written as a string: `index(\"GSI-1\", ..)`"
)]
pub trait DeclaresIndex<Name>: Table {
    /// The index's position in the table's declaration.
    const POSITION: usize;
}

/// Entity `Self` has a template for index `K`: its items carry that index's keys (when the
/// template's fields are present), so the index can be read for them, e.g. scanned with
/// [`Scan::index`](dynamo_model::read::Scan::index). `#[derive(Entity)]` implements it for
/// every `index(..)` of the entity; an index the entity is not in cannot be named.
///
/// ```
/// # use dynamo_model::{Entity, InIndex, Table};
/// # use serde::{Deserialize, Serialize};
/// #[derive(Table)]
/// #[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
/// struct App;
///
/// #[derive(Entity, Serialize, Deserialize)]
/// #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE", index(GSI1, pk = "EMAIL#{email}", sk = "USER"))]
/// struct User { id: String, email: Option<String> }
///
/// fn in_index<E: InIndex<K>, K: dynamo_model::KeySpace>() {}
/// in_index::<User, AppGsi1>();
/// ```
#[diagnostic::on_unimplemented(
    message = "entity `{Self}` has no template for index `{K}`",
    label = "not in this index",
    note = "declare the index on the entity (`index(NAME, pk = .., sk = ..)`) to read it for this entity"
)]
pub trait InIndex<K: KeySpace>: Entity {}

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

/// `Clone` and `Debug` for a key type tagged with its entity and key space (`_entity`),
/// whatever `E` and `K` are (a derive would ask them of both): the clone copies the
/// `$field`s, `Debug` shows `$shown`.
macro_rules! tagged_key_traits {
    ($name:ident { $($field:ident),* } shows $shown:ident) => {
        impl<E, K> Clone for $name<E, K> {
            fn clone(&self) -> Self {
                $name {
                    $($field: self.$field.clone(),)*
                    _entity: PhantomData,
                }
            }
        }

        impl<E, K> std::fmt::Debug for $name<E, K> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_tuple(stringify!($name)).field(&self.$shown).finish()
            }
        }
    };
}

tagged_key_traits!(Partition { value, default_range } shows value);

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

impl SortKeyOp {
    /// Whether no stored item can satisfy the condition: [`SortKeyOp::Nothing`], or
    /// `= ""`, the complete empty sort key (template `""`, or a field encoded empty),
    /// which DynamoDB never stores. An entity with history moves `= ""` into its latest
    /// copy's slot (`v0` under AWS's layout) before the query is planned.
    pub(crate) fn matches_nothing(&self) -> bool {
        match self {
            SortKeyOp::Nothing => true,
            SortKeyOp::Eq(value) => value.is_empty(),
            _ => false,
        }
    }
}

/// A sort-key condition as sent (`op`) plus what DynamoDB cannot express in the same
/// request: a strict bound (the one key value to leave out) and, in the degenerate case
/// where no upper bound exists, the prefix every key must keep. A key condition takes one
/// operator on the sort key and a filter cannot name key attributes (DynamoDB rules), so
/// these two are checked on the items read.
///
/// Part of the query planner, not of the API: inspect what a query sends with
/// [`Query::params`](dynamo_model::read::Query::params).
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
        !self.op.matches_nothing()
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

    /// The rendered condition (planner detail; see [`Query::params`](dynamo_model::read::Query::params)
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
                // An empty sort key cannot be stored, so no item has it (a query sends
                // nothing); but an entity with history stores it in its latest copy's
                // slot (`v0` under AWS's layout), which the query moves it to.
                (true, _) => SortKeyOp::Eq(s),
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
    arg: impl crate::key::KeyArg<T>,
    delimiter: Delimiter,
) -> impl FnOnce(&mut String) -> Result<(), KeyError> {
    move |out| arg.encode_key_arg(delimiter, out)
}

#[cfg(test)]
mod tests;

/// The property behind every sort-key condition: on composite keys, the items a
/// condition returns (as DynamoDB evaluates it, plus [`SortKeyRange::admits`]) are
/// exactly the items a reference filter over the values selects, for every operator and
/// every key type, after any number of fixed string components and followed by more
/// components or not.
#[cfg(test)]
mod range_properties;

#[cfg(test)]
mod attribute_range_tests;

mod attribute;
pub use attribute::*;
