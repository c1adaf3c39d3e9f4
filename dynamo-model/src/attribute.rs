//! Nested values: what `#[derive(Attribute)]` generates calls into.
//!
//! A struct with named fields is a map attribute (`M`) of its fields; an enum is stored
//! as serde stores it by default (externally tagged), so values written earlier through
//! `#[dynamo(serde)]` (serde_dynamo) read back unchanged:
//!
//! | Rust value                 | attribute                         |
//! |----------------------------|-----------------------------------|
//! | `Unit`                     | `S "Unit"`                        |
//! | `Newtype(v)`               | `M {"Newtype": v}`                |
//! | `Tuple(a, b)`              | `M {"Tuple": L [a, b]}`           |
//! | `Struct { x, y }`          | `M {"Struct": M {"x": x, "y": y}}`|
//!
//! The one difference from serde_dynamo: a `None` member of a struct is not written
//! (serde_dynamo writes `NULL`), as for an entity's fields. Either form decodes.
//!
//! The generated code lists the fields and variants and calls the functions below, which
//! walk the map, supply defaults and put the path of a failure (`.lines[2].sku`) into the
//! error ([`DecodeErrorKind::Nested`], [`EncodeError::path`]).

use crate::codec::{AttrValue, EncodeError};
use crate::error::DecodeErrorKind;
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::HashMap;

/// The members of a map attribute.
pub type Map = HashMap<String, AttributeValue>;

// ---------------------------------------------------------------- structs

/// Writes one member unless it is absent (`None`, an empty set), as entities do.
#[inline]
pub fn put_member<T: AttrValue>(
    map: &mut Map,
    name: &'static str,
    value: &T,
) -> Result<(), EncodeError> {
    match value.to_attr_opt() {
        Ok(Some(av)) => {
            map.insert(name.to_owned(), av);
            Ok(())
        }
        Ok(None) => Ok(()),
        Err(e) => Err(e.at_member(name)),
    }
}

/// Writes a `#[dynamo(serde)]` member, encoded by serde_dynamo (numbers checked).
pub fn put_serde_member<T: serde::Serialize>(
    map: &mut Map,
    name: &'static str,
    value: &T,
) -> Result<(), EncodeError> {
    let av = crate::codec::to_checked_attribute(value).map_err(|e| e.at_member(name))?;
    map.insert(name.to_owned(), av);
    Ok(())
}

/// The members of a map attribute; any other type is a
/// [`DecodeErrorKind::WrongType`].
#[inline]
pub fn into_map(value: AttributeValue) -> Result<Map, DecodeErrorKind> {
    match value {
        AttributeValue::M(map) => Ok(map),
        other => Err(DecodeErrorKind::WrongType {
            expected: "M",
            found: crate::codec::type_name(&other),
        }),
    }
}

/// Takes one member out of the map and decodes it. A missing member takes `default`
/// when given, else the type's value for absence (`None`, an empty set) or is
/// [`DecodeErrorKind::Missing`]. Members the type does not know are left alone, as serde
/// ignores unknown fields.
#[inline]
pub fn take_member<T: AttrValue>(
    map: &mut Map,
    name: &'static str,
    default: Option<fn() -> T>,
) -> Result<T, DecodeErrorKind> {
    let decoded = match (map.remove(name), default) {
        (Some(av), _) => T::from_attr(av),
        (None, Some(default)) => Ok(default()),
        (None, None) => T::from_missing(),
    };
    decoded.map_err(|e| e.at_member(name))
}

/// Takes a `#[dynamo(serde)]` member out of the map and decodes it with serde_dynamo (a
/// missing member decodes as serde's `null`, so `Option` works).
pub fn take_serde_member<T: serde::de::DeserializeOwned>(
    map: &mut Map,
    name: &'static str,
    default: Option<fn() -> T>,
) -> Result<T, DecodeErrorKind> {
    take_serde(map, name, default).map_err(|e| e.at_member(name))
}

/// Takes a `#[dynamo(serde)]` attribute (of an item, or a member of a map) out of `map`
/// and decodes it with serde_dynamo: a missing attribute is `default()`, else decodes as
/// serde's `null` (so `Option` works).
pub(crate) fn take_serde<T: serde::de::DeserializeOwned>(
    map: &mut Map,
    name: &str,
    default: Option<fn() -> T>,
) -> Result<T, DecodeErrorKind> {
    let (av, missing) = match (map.remove(name), default) {
        (Some(av), _) => (av, false),
        (None, Some(default)) => return Ok(default()),
        (None, None) => (AttributeValue::Null(true), true),
    };
    serde_dynamo::from_attribute_value(av).map_err(|e| {
        DecodeErrorKind::Invalid(if missing {
            format!("{e} (attribute missing)")
        } else {
            e.to_string()
        })
    })
}

// ---------------------------------------------------------------- enums

/// A unit variant: its name as a string.
#[inline]
pub fn unit_variant(name: &'static str) -> AttributeValue {
    AttributeValue::S(name.to_owned())
}

/// A newtype variant: `{"Name": value}`. A `None` inside is kept as `NULL`, as serde does.
#[inline]
pub fn newtype_variant<T: AttrValue>(
    name: &'static str,
    value: &T,
) -> Result<AttributeValue, EncodeError> {
    let av = value.to_attr().map_err(|e| e.at_member(name))?;
    Ok(tagged(name, av))
}

/// A tuple variant: `{"Name": [a, b, ..]}`; `fill` pushes the elements with [`push_item`].
#[inline]
pub fn tuple_variant(
    name: &'static str,
    len: usize,
    fill: impl FnOnce(&mut Vec<AttributeValue>) -> Result<(), EncodeError>,
) -> Result<AttributeValue, EncodeError> {
    let mut items = Vec::with_capacity(len);
    fill(&mut items).map_err(|e| e.at_member(name))?;
    Ok(tagged(name, AttributeValue::L(items)))
}

/// Pushes one element of a tuple variant (`None` kept as `NULL`: positions count).
#[inline]
pub fn push_item<T: AttrValue>(
    items: &mut Vec<AttributeValue>,
    value: &T,
) -> Result<(), EncodeError> {
    let index = items.len();
    items.push(value.to_attr().map_err(|e| e.at_index(index))?);
    Ok(())
}

/// A struct variant: `{"Name": {fields}}`; `fill` writes the fields with [`put_member`].
#[inline]
pub fn struct_variant(
    name: &'static str,
    capacity: usize,
    fill: impl FnOnce(&mut Map) -> Result<(), EncodeError>,
) -> Result<AttributeValue, EncodeError> {
    let mut map = Map::with_capacity(capacity);
    fill(&mut map).map_err(|e| e.at_member(name))?;
    Ok(tagged(name, AttributeValue::M(map)))
}

fn tagged(name: &'static str, value: AttributeValue) -> AttributeValue {
    let mut map = Map::with_capacity(1);
    map.insert(name.to_owned(), value);
    AttributeValue::M(map)
}

/// The variant name of a stored enum and the value it holds: a string is a unit variant
/// (no value), a map of exactly one member a variant with data.
#[inline]
pub fn split_variant(
    value: AttributeValue,
) -> Result<(String, Option<AttributeValue>), DecodeErrorKind> {
    match value {
        AttributeValue::S(name) => Ok((name, None)),
        AttributeValue::M(map) if map.len() == 1 => {
            let mut entries = map.into_iter();
            match entries.next() {
                Some((name, value)) => Ok((name, Some(value))),
                None => Err(not_a_variant(0)),
            }
        }
        AttributeValue::M(map) => Err(not_a_variant(map.len())),
        other => Err(DecodeErrorKind::WrongType {
            expected: "S or M",
            found: crate::codec::type_name(&other),
        }),
    }
}

#[cold]
fn not_a_variant(members: usize) -> DecodeErrorKind {
    DecodeErrorKind::Invalid(format!(
        "an enum is stored as a variant name or a map of exactly one variant name to its value; this map has {members} members"
    ))
}

/// A stored variant name the enum does not have.
#[cold]
pub fn unknown_variant(found: String, expected: &'static [&'static str]) -> DecodeErrorKind {
    DecodeErrorKind::UnknownVariant { found, expected }
}

/// Checks that a unit variant was stored as its name alone.
#[inline]
pub fn unit_value(
    name: &'static str,
    value: Option<AttributeValue>,
) -> Result<(), DecodeErrorKind> {
    match value {
        None => Ok(()),
        Some(_) => Err(DecodeErrorKind::Invalid(format!(
            "variant `{name}` holds no value: it is stored as the string \"{name}\", not a map"
        ))),
    }
}

/// The value of a variant with data (an error if the variant was stored as a bare name).
fn variant_data(
    name: &'static str,
    value: Option<AttributeValue>,
) -> Result<AttributeValue, DecodeErrorKind> {
    value.ok_or_else(|| {
        DecodeErrorKind::Invalid(format!(
            "variant `{name}` holds a value: it is stored as a map {{\"{name}\": value}}, not a string"
        ))
    })
}

/// Decodes the value of a newtype variant.
#[inline]
pub fn newtype_value<T: AttrValue>(
    name: &'static str,
    value: Option<AttributeValue>,
) -> Result<T, DecodeErrorKind> {
    T::from_attr(variant_data(name, value)?).map_err(|e| e.at_member(name))
}

/// Decodes a tuple variant: its value must be a list of exactly `len` elements, which
/// `build` takes in order with [`next_item`].
#[inline]
pub fn tuple_value<V>(
    name: &'static str,
    value: Option<AttributeValue>,
    len: usize,
    build: impl FnOnce(&mut std::vec::IntoIter<AttributeValue>) -> Result<V, DecodeErrorKind>,
) -> Result<V, DecodeErrorKind> {
    let decoded = match variant_data(name, value)? {
        AttributeValue::L(items) if items.len() == len => build(&mut items.into_iter()),
        AttributeValue::L(items) => Err(DecodeErrorKind::Invalid(format!(
            "variant `{name}` holds {len} values, the list has {}",
            items.len()
        ))),
        other => Err(DecodeErrorKind::WrongType {
            expected: "L",
            found: crate::codec::type_name(&other),
        }),
    };
    decoded.map_err(|e| e.at_member(name))
}

/// Decodes the next element of a tuple variant (`index` is its position, for errors).
#[inline]
pub fn next_item<T: AttrValue>(
    items: &mut std::vec::IntoIter<AttributeValue>,
    index: usize,
) -> Result<T, DecodeErrorKind> {
    match items.next() {
        Some(av) => T::from_attr(av).map_err(|e| e.at_index(index)),
        None => Err(DecodeErrorKind::Missing.at_index(index)),
    }
}

/// Decodes a struct variant: its value must be a map, whose members `build` takes with
/// [`take_member`].
#[inline]
pub fn struct_value<V>(
    name: &'static str,
    value: Option<AttributeValue>,
    build: impl FnOnce(&mut Map) -> Result<V, DecodeErrorKind>,
) -> Result<V, DecodeErrorKind> {
    variant_data(name, value)
        .and_then(into_map)
        .and_then(|mut map| build(&mut map))
        .map_err(|e| e.at_member(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> AttributeValue {
        AttributeValue::S(v.to_owned())
    }

    fn m(entries: &[(&str, AttributeValue)]) -> AttributeValue {
        AttributeValue::M(
            entries
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
        )
    }

    fn nested(path: &str, kind: DecodeErrorKind) -> DecodeErrorKind {
        DecodeErrorKind::Nested {
            path: path.to_owned(),
            error: Box::new(kind),
        }
    }

    #[test]
    fn members_are_written_unless_absent() {
        let mut map = Map::new();
        put_member(&mut map, "a", &1u8).unwrap();
        put_member(&mut map, "b", &None::<u8>).unwrap();
        put_member(&mut map, "c", &std::collections::BTreeSet::<String>::new()).unwrap();
        assert_eq!(
            AttributeValue::M(map),
            m(&[("a", AttributeValue::N("1".into()))])
        );
    }

    #[test]
    fn an_unstorable_member_names_its_path() {
        let mut map = Map::new();
        let err = put_member(&mut map, "prices", &vec![1.0, f64::NAN]).unwrap_err();
        assert_eq!(err.path(), ".prices[1]");
        assert!(err.is_number());
        let err = struct_variant("Priced", 1, |map| put_member(map, "price", &f64::INFINITY))
            .unwrap_err();
        assert_eq!(err.path(), ".Priced.price");
        let err = tuple_variant("Pair", 2, |items| {
            push_item(items, &1.0)?;
            push_item(items, &f64::NAN)
        })
        .unwrap_err();
        assert_eq!(err.path(), ".Pair[1]");
        assert_eq!(
            err.to_string(),
            "at .Pair[1]: NaN is not a number DynamoDB can store"
        );
    }

    #[test]
    fn missing_members_take_defaults_or_absence_or_fail() {
        let mut map = Map::new();
        assert_eq!(take_member::<Option<u8>>(&mut map, "a", None), Ok(None));
        assert_eq!(take_member::<u8>(&mut map, "a", Some(|| 7)), Ok(7));
        assert_eq!(
            take_member::<u8>(&mut map, "a", None),
            Err(nested(".a", DecodeErrorKind::Missing))
        );
    }

    #[test]
    fn null_members_are_none_for_options_only() {
        let mut map = into_map(m(&[("a", AttributeValue::Null(true))])).unwrap();
        assert_eq!(
            take_member::<u8>(&mut map.clone(), "a", None),
            Err(nested(
                ".a",
                DecodeErrorKind::WrongType {
                    expected: "N",
                    found: "NULL"
                }
            ))
        );
        assert_eq!(take_member::<Option<u8>>(&mut map, "a", None), Ok(None));
    }

    #[test]
    fn a_present_member_wins_over_its_default_and_is_taken_out() {
        let mut map = into_map(m(&[("a", AttributeValue::N("3".into()))])).unwrap();
        assert_eq!(take_member::<u8>(&mut map, "a", Some(|| 7)), Ok(3));
        assert!(map.is_empty());
    }

    #[test]
    fn paths_read_from_the_outside_in() {
        // A list of maps inside a struct variant: `.Order.lines[1].qty`.
        let line = |qty: AttributeValue| m(&[("qty", qty)]);
        let value = m(&[(
            "Order",
            m(&[(
                "lines",
                AttributeValue::L(vec![line(AttributeValue::N("1".into())), line(s("x"))]),
            )]),
        )]);
        let (name, data) = split_variant(value).unwrap();
        assert_eq!(name, "Order");
        let err = struct_value("Order", data, |map| {
            take_member::<Vec<HashMap<String, u32>>>(map, "lines", None)
        })
        .unwrap_err();
        assert_eq!(
            err,
            nested(
                ".Order.lines[1].qty",
                DecodeErrorKind::WrongType {
                    expected: "N",
                    found: "S"
                }
            )
        );
    }

    #[test]
    fn variants_are_a_name_or_a_single_member_map() {
        assert_eq!(split_variant(s("A")), Ok(("A".into(), None)));
        assert_eq!(
            split_variant(m(&[("B", s("x"))])),
            Ok(("B".into(), Some(s("x"))))
        );
        for bad in [m(&[]), m(&[("A", s("x")), ("B", s("y"))])] {
            assert!(matches!(
                split_variant(bad),
                Err(DecodeErrorKind::Invalid(_))
            ));
        }
        assert_eq!(
            split_variant(AttributeValue::N("1".into())),
            Err(DecodeErrorKind::WrongType {
                expected: "S or M",
                found: "N"
            })
        );
    }

    #[test]
    fn a_variant_stored_in_the_other_shape_is_refused() {
        assert!(unit_value("A", Some(s("x"))).is_err());
        assert!(unit_value("A", None).is_ok());
        assert!(matches!(
            newtype_value::<String>("B", None),
            Err(DecodeErrorKind::Invalid(_))
        ));
        assert_eq!(newtype_value::<String>("B", Some(s("x"))), Ok("x".into()));
        assert_eq!(
            newtype_value::<u8>("B", Some(s("x"))),
            Err(nested(
                ".B",
                DecodeErrorKind::WrongType {
                    expected: "N",
                    found: "S"
                }
            ))
        );
    }

    #[test]
    fn tuple_variants_need_exactly_their_elements() {
        let pair = |items: Vec<AttributeValue>| Some(AttributeValue::L(items));
        let build = |items: &mut std::vec::IntoIter<AttributeValue>| {
            Ok((next_item::<u8>(items, 0)?, next_item::<String>(items, 1)?))
        };
        assert_eq!(
            tuple_value(
                "P",
                pair(vec![AttributeValue::N("1".into()), s("a")]),
                2,
                build
            ),
            Ok((1, "a".into()))
        );
        assert!(matches!(
            tuple_value("P", pair(vec![s("a")]), 2, build),
            Err(DecodeErrorKind::Nested { ref path, .. }) if path == ".P"
        ));
        assert_eq!(
            tuple_value("P", pair(vec![s("a"), s("b")]), 2, build),
            Err(nested(
                ".P[0]",
                DecodeErrorKind::WrongType {
                    expected: "N",
                    found: "S"
                }
            ))
        );
        assert_eq!(
            tuple_value("P", Some(s("a")), 2, build),
            Err(nested(
                ".P",
                DecodeErrorKind::WrongType {
                    expected: "L",
                    found: "S"
                }
            ))
        );
    }

    #[test]
    fn struct_variants_hold_a_map() {
        let build = |map: &mut Map| take_member::<u8>(map, "x", None);
        assert_eq!(
            struct_value("S", Some(m(&[("x", AttributeValue::N("4".into()))])), build),
            Ok(4)
        );
        assert_eq!(
            struct_value("S", Some(s("x")), build),
            Err(nested(
                ".S",
                DecodeErrorKind::WrongType {
                    expected: "M",
                    found: "S"
                }
            ))
        );
        assert_eq!(
            struct_value("S", Some(m(&[])), build),
            Err(nested(".S.x", DecodeErrorKind::Missing))
        );
    }

    #[test]
    fn nesting_never_nests_twice() {
        let e = DecodeErrorKind::Missing
            .at_member("b")
            .at_index(3)
            .at_member("a");
        assert_eq!(e, nested(".a[3].b", DecodeErrorKind::Missing));
        assert_eq!(e.to_string(), "at .a[3].b: attribute is missing");
    }
}
