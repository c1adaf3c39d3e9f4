use super::*;
use crate::key::testing::*;
use crate::key::testing::{integer_values, signed_values};
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
#[cfg(feature = "ulid")]
impl Subject for ulid::Ulid {}

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
    // What the query planner sends: a condition no stored item can match is no request.
    let op = if range.op.matches_nothing() {
        SortKeyOp::Nothing
    } else {
        range.op.clone()
    };
    prop_assert_eq!(dynamodb_refuses(&op), None, "{:?}", range);
    let returned: Vec<&String> = stored
        .keys()
        .filter(|k| dynamodb_matches(&op, k) && range.admits(k))
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
    u8_ranges: u8 = integer_values!(u8);
    u16_ranges: u16 = integer_values!(u16);
    u32_ranges: u32 = integer_values!(u32);
    u64_ranges: u64 = integer_values!(u64);
    u128_ranges: u128 = integer_values!(u128);
    usize_ranges: usize = integer_values!(usize);
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

#[cfg(feature = "ulid")]
range_property! {
    ulid_ranges: ulid::Ulid = ulids();
}
