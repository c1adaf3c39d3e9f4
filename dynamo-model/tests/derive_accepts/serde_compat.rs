//! `#[derive(Attribute)]` reads what `#[dynamo(serde)]` (serde_dynamo, serde's default
//! representation) wrote, and writes what it reads: data stored before a type moved from
//! `#[dynamo(serde)]` to the derive stays readable, in both directions.

use dynamo_model::aws_sdk_dynamodb::types::AttributeValue as Av;
use dynamo_model::{AttrValue, Attribute};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Attribute, Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Point {
    x: i64,
    y: i64,
}

#[derive(Attribute, Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Sku(String);

#[derive(Attribute, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Address {
    street_line: String,
    zip: Option<String>,
    floor: Option<i32>,
    tags: Vec<String>,
    scores: Vec<Option<u8>>,
    #[serde(rename = "geo")]
    point: Point,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    skus: Vec<Sku>,
}

#[derive(Attribute, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)] // a test value, not a hot path
pub enum Event {
    Created,
    Renamed(String),
    Moved {
        from: Address,
        to: Option<Address>,
    },
    Split(u8, Sku),
    #[serde(rename = "gone")]
    Deleted,
    Located(Point),
}

fn point() -> impl Strategy<Value = Point> {
    (any::<i64>(), any::<i64>()).prop_map(|(x, y)| Point { x, y })
}

fn sku() -> impl Strategy<Value = Sku> {
    "\\PC{0,8}".prop_map(Sku)
}

fn address() -> impl Strategy<Value = Address> {
    (
        "\\PC{0,12}",
        proptest::option::of("[0-9]{4}"),
        proptest::option::of(any::<i32>()),
        proptest::collection::vec("[a-z]{0,4}", 0..3),
        proptest::collection::vec(proptest::option::of(any::<u8>()), 0..4),
        point(),
        proptest::collection::vec(sku(), 0..3),
    )
        .prop_map(
            |(street_line, zip, floor, tags, scores, point, skus)| Address {
                street_line,
                zip,
                floor,
                tags,
                scores,
                point,
                skus,
            },
        )
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        Just(Event::Created),
        Just(Event::Deleted),
        "\\PC{0,8}".prop_map(Event::Renamed),
        (address(), proptest::option::of(address()))
            .prop_map(|(from, to)| Event::Moved { from, to }),
        (any::<u8>(), sku()).prop_map(|(n, s)| Event::Split(n, s)),
        point().prop_map(Event::Located),
    ]
}

/// serde_dynamo's form with the one documented difference applied: a `NULL` member of a
/// map (a `None` field) is left out. `NULL` elements of lists stay: positions count.
fn without_null_members(av: Av) -> Av {
    match av {
        Av::M(map) => Av::M(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, without_null_members(v)))
                .collect(),
        ),
        Av::L(list) => Av::L(list.into_iter().map(without_null_members).collect()),
        other => other,
    }
}

fn both_ways<T>(value: &T) -> Result<(), TestCaseError>
where
    T: AttrValue + Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let by_serde = serde_dynamo::to_attribute_value::<_, Av>(value)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let derived = value
        .to_attr()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    // What serde wrote, the derive reads.
    prop_assert_eq!(
        &T::from_attr(by_serde.clone()).map_err(|e| TestCaseError::fail(e.to_string()))?,
        value
    );
    // What the derive writes, serde reads.
    let back: T = serde_dynamo::from_attribute_value(derived.clone())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&back, value);
    // And the two forms differ only by the `None` members.
    prop_assert_eq!(derived, without_null_members(by_serde));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn derived_structs_read_and_write_serde_dynamo_form(address in address()) {
        both_ways(&address)?;
    }

    #[test]
    fn derived_enums_read_and_write_serde_dynamo_form(event in event()) {
        both_ways(&event)?;
        both_ways(&vec![event])?;
    }
}
