//! Entities and nested values with the crate's own vocabulary and no serde derive at all.

use std::collections::BTreeMap;

use dynamo_model::aws_sdk_dynamodb::types::AttributeValue as Av;
use dynamo_model::{AttrValue, Attribute, DecodeErrorKind, Entity, Item, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Attribute, Debug, Clone, PartialEq)]
#[dynamo(rename_all = "camelCase")]
struct Address {
    street_line: String,
    #[dynamo(rename = "zip")]
    postal_code: Option<String>,
    #[dynamo(default = "default_country")]
    country: String,
    #[dynamo(skip)]
    geocoded: bool,
}

fn default_country() -> String {
    "NL".into()
}

#[derive(Attribute, Debug, Clone, PartialEq)]
struct Sku(String);

#[derive(Attribute, Debug, Clone, PartialEq)]
struct Line {
    sku: Sku,
    qty: u32,
    #[dynamo(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

#[derive(Attribute, Debug, Clone, Copy, PartialEq)]
#[dynamo(rename_all = "SCREAMING_SNAKE_CASE")]
enum Priority {
    Low,
    VeryHigh,
}

#[derive(Attribute, Debug, Clone, PartialEq)]
#[dynamo(rename_all_fields = "camelCase")]
enum Status {
    Pending,
    Paid(u64),
    Split(u32, String),
    Shipped {
        carrier_name: String,
        tracking: Option<String>,
    },
    #[dynamo(rename = "gone", rename_all = "UPPERCASE")]
    Cancelled {
        reason_code: u8,
    },
}

/// Container default: missing fields take their values in `Self::default()`, not their
/// types' defaults (as serde does).
#[derive(Attribute, Debug, Clone, PartialEq)]
#[dynamo(default)]
struct Limits {
    per_day: u32,
    per_hour: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            per_day: 100,
            per_hour: 10,
        }
    }
}

#[derive(Attribute, Debug, Clone, PartialEq)]
struct Labelled<T> {
    label: String,
    value: T,
}

/// A bound a member's type needs: the member paths keep it.
pub trait Kind {
    type Value;
}

impl Kind for u8 {
    type Value = String;
}

#[derive(Attribute)]
struct Tagged<K: Kind>
where
    K::Value: AttrValue,
{
    value: K::Value,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "ORDER#{id}", sk = "ORDER", rename_all = "camelCase")]
struct Order {
    id: String,
    ship_to: Address,
    lines: Vec<Line>,
    status: Status,
    priority: Priority,
    limits: Limits,
    by_region: BTreeMap<String, Labelled<u16>>,
    #[dynamo(rename = "prev")]
    previous_status: Option<Status>,
    #[dynamo(default)]
    retries: u8,
    #[dynamo(skip)]
    loaded: bool,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "READING#{id}", sk = "READING")]
struct Reading {
    id: String,
    samples: Vec<Labelled<f64>>,
}

/// Container `default = "path"`: missing fields come from what the function returns.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "SETTINGS#{id}", sk = "SETTINGS", default = "Settings::new")]
struct Settings {
    id: String,
    theme: String,
    #[dynamo(skip)]
    cache_size: u32,
}

impl Settings {
    fn new() -> Self {
        Settings {
            id: String::new(),
            theme: "dark".into(),
            cache_size: 64,
        }
    }
}

fn order() -> Order {
    Order {
        id: "o-1".into(),
        ship_to: Address {
            street_line: "1 Main St".into(),
            postal_code: None,
            country: "DE".into(),
            geocoded: false,
        },
        lines: vec![
            Line {
                sku: Sku("A-1".into()),
                qty: 2,
                note: None,
            },
            Line {
                sku: Sku("B-2".into()),
                qty: 1,
                note: Some("gift".into()),
            },
        ],
        status: Status::Shipped {
            carrier_name: "DHL".into(),
            tracking: None,
        },
        priority: Priority::VeryHigh,
        limits: Limits {
            per_day: 5,
            per_hour: 1,
        },
        by_region: [(
            "eu".to_string(),
            Labelled {
                label: "x".into(),
                value: 7,
            },
        )]
        .into(),
        previous_status: Some(Status::Cancelled { reason_code: 3 }),
        retries: 0,
        loaded: false,
    }
}

fn s(v: &str) -> Av {
    Av::S(v.into())
}

fn n(v: &str) -> Av {
    Av::N(v.into())
}

fn m(entries: &[(&str, Av)]) -> Av {
    Av::M(
        entries
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
    )
}

pub fn run() {
    let order = order();
    let item = order.to_item().unwrap();
    // Names and shapes as documented.
    assert_eq!(
        item["shipTo"],
        m(&[("streetLine", s("1 Main St")), ("country", s("DE"))])
    );
    assert_eq!(
        item["lines"],
        Av::L(vec![
            m(&[("sku", s("A-1")), ("qty", n("2"))]),
            m(&[("sku", s("B-2")), ("qty", n("1")), ("note", s("gift"))]),
        ])
    );
    assert_eq!(
        item["status"],
        m(&[("Shipped", m(&[("carrierName", s("DHL"))]))])
    );
    assert_eq!(item["priority"], s("VERY_HIGH"));
    assert_eq!(item["prev"], m(&[("gone", m(&[("REASON_CODE", n("3"))]))]));
    assert!(!item.contains_key("loaded"));
    assert_eq!(Order::from_item(item.clone()).unwrap(), order);

    // Member paths under their stored names (renamed, camelCased; a skipped member has
    // none), through lists, maps and generic structs.
    let f = Order::fields();
    let zip = f.ship_to.fields().postal_code;
    assert_eq!(zip.path().to_string(), "shipTo.zip");
    let qty = f.lines.index(1).fields().qty;
    assert_eq!(qty.path().to_string(), "lines[1].qty");
    let labelled = f.by_region.at("eu").fields();
    assert_eq!(labelled.value.path().to_string(), "byRegion.eu.value");
    let _: dynamo_model::NestedPath<Order, u16> = labelled.value;
    let _: dynamo_model::NestedPath<Order, Option<String>> = zip;
    let tagged = dynamo_model::Path::<Order, Tagged<u8>>::__new("tagged").fields();
    let _: dynamo_model::NestedPath<Order, String> = tagged.value;

    // Every variant shape round-trips.
    for status in [
        Status::Pending,
        Status::Paid(5),
        Status::Split(1, "a".into()),
        Status::Shipped {
            carrier_name: "UPS".into(),
            tracking: Some("1Z".into()),
        },
        Status::Cancelled { reason_code: 9 },
    ] {
        assert_eq!(
            Status::from_attr(status.to_attr().unwrap()).unwrap(),
            status
        );
    }
    assert_eq!(Status::Pending.to_attr().unwrap(), s("Pending"));
    assert_eq!(
        Status::Split(1, "a".into()).to_attr().unwrap(),
        m(&[("Split", Av::L(vec![n("1"), s("a")]))])
    );

    // Missing members: field default, container default, `None`.
    let mut sparse = item.clone();
    sparse.insert("shipTo".into(), m(&[("streetLine", s("x"))]));
    sparse.insert("limits".into(), m(&[("per_hour", n("3"))]));
    sparse.remove("retries");
    sparse.remove("prev");
    let read = Order::from_item(sparse).unwrap();
    assert_eq!(read.ship_to.country, "NL");
    assert_eq!(read.ship_to.postal_code, None);
    assert_eq!(
        read.limits,
        Limits {
            per_day: 100,
            per_hour: 3
        }
    );
    assert_eq!(read.retries, 0);
    assert_eq!(read.previous_status, None);

    // An explicit NULL reads as `None`.
    let mut nulls = item.clone();
    nulls.insert(
        "shipTo".into(),
        m(&[("streetLine", s("x")), ("zip", Av::Null(true))]),
    );
    nulls.insert("prev".into(), Av::Null(true));
    let read = Order::from_item(nulls).unwrap();
    assert_eq!(read.ship_to.postal_code, None);
    assert_eq!(read.previous_status, None);

    // A wrong shape deep inside is a typed error naming the path, never a panic.
    let decode = |attribute: &str, value: Av| {
        let mut bad: Item = item.clone();
        bad.insert(attribute.into(), value);
        let err = Order::from_item(bad).unwrap_err();
        (err.attribute.unwrap_or_default(), err.kind)
    };
    assert_eq!(
        decode(
            "lines",
            Av::L(vec![
                m(&[("sku", s("A")), ("qty", n("1"))]),
                m(&[("sku", n("3")), ("qty", n("1"))])
            ])
        ),
        (
            "lines[1].sku".into(),
            DecodeErrorKind::WrongType {
                expected: "S",
                found: "N"
            }
        )
    );
    assert_eq!(
        decode("shipTo", m(&[("zip", s("1"))])),
        ("shipTo.streetLine".into(), DecodeErrorKind::Missing)
    );
    assert_eq!(
        decode(
            "status",
            m(&[("Shipped", m(&[("carrierName", Av::Bool(true))]))])
        ),
        (
            "status.Shipped.carrierName".into(),
            DecodeErrorKind::WrongType {
                expected: "S",
                found: "BOOL"
            }
        )
    );
    let (at, kind) = decode("priority", s("Medium"));
    assert_eq!(at, "priority");
    match kind {
        DecodeErrorKind::UnknownVariant {
            found, expected, ..
        } => {
            assert_eq!(found, "Medium");
            assert_eq!(expected, ["LOW", "VERY_HIGH"]);
        }
        other => panic!("{other:?}"),
    }
    let (at, kind) = decode("status", m(&[("Pending", s("x")), ("Paid", n("1"))]));
    assert_eq!(at, "status");
    assert!(matches!(kind, DecodeErrorKind::Invalid(_)), "{kind:?}");
    let (at, _) = decode("status", m(&[("Split", Av::L(vec![n("1")]))]));
    assert_eq!(at, "status.Split");
    let (at, kind) = decode("byRegion", m(&[("eu", m(&[("label", s("x"))]))]));
    assert_eq!(at, "byRegion.eu.value");
    assert_eq!(kind, DecodeErrorKind::Missing);

    // An unstorable value deep inside names its path too, and is refused before sending.
    let reading = Reading {
        id: "r".into(),
        samples: vec![
            Labelled {
                label: "a".into(),
                value: 1.5,
            },
            Labelled {
                label: "b".into(),
                value: f64::NAN,
            },
        ],
    };
    let err = reading.to_item().unwrap_err();
    assert_eq!(
        err.validation_reason(),
        Some(dynamo_model::ValidationReason::InvalidNumber)
    );
    assert!(
        err.to_string()
            .contains("field `samples[1].value` cannot be stored: NaN"),
        "{err}"
    );

    let mut item = Settings::new().to_item().unwrap();
    item.remove("theme");
    let read = Settings::from_item(item).unwrap();
    assert_eq!((read.theme.as_str(), read.cache_size), ("dark", 64));

    let paths = Order::fields();
    assert_eq!(paths.ship_to.name(), "shipTo");
    assert_eq!(paths.previous_status.name(), "prev");
}
