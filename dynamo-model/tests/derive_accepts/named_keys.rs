//! Key and partition constructors: one field by value, two or more named in a generated
//! struct, in any order.

use dynamo_model::{Entity, Key, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
    gsi(name = "ByRegion", pk = ["RegionTournament", "RegionName"], sk = ["RegionScore:N"]),
)]
struct App;

/// Three key fields, two of them `String`s: exactly what positional arguments could swap.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{placed_at}#{order_id}",
         index(GSI1, pk = "TENANT#{tenant}#{status}", sk = "{placed_at}"))]
struct Order {
    user_id: String,
    order_id: String,
    placed_at: u64,
    tenant: String,
    status: String,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "PROFILE")]
struct User {
    user_id: String,
}

/// A multi-attribute index partition of two attributes.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "MATCH#{id}", sk = "MATCH",
         index(ByRegion, pk = [tournament, region], sk = [score]))]
struct Match {
    id: String,
    #[serde(rename = "RegionTournament")]
    tournament: String,
    #[serde(rename = "RegionName")]
    region: String,
    #[serde(rename = "RegionScore")]
    score: u32,
}

/// A key field type named like the type parameter its field would get (`kind` → `Kind`),
/// and a field named like the entity (`shelf` on `Shelf`): the generated parameters must
/// shadow neither type (a `&str` argument would not be a `KeyArg<&str>`).
type Kind = String;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "SHELF#{shelf}", sk = "{kind}")]
struct Shelf {
    shelf: String,
    kind: Kind,
}

/// The application already has a `LineKey`: the derive names its struct `LineId` instead.
#[allow(dead_code)]
struct LineKey;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "ORDER#{order_id}", sk = "LINE#{line}", key_struct = LineId)]
struct Line {
    order_id: String,
    line: u32,
}

pub fn run() {
    // `key_struct` renames the generated key struct; the user's `LineKey` is untouched.
    let line = Line {
        order_id: "o-1".into(),
        line: 3,
    };
    let _unrelated = LineKey;
    assert_eq!(
        Line::key(LineId {
            line: 3u32,
            order_id: "o-1"
        }),
        line.primary_key()
    );

    let order = Order {
        user_id: "u-1".into(),
        order_id: "o-7".into(),
        placed_at: 42,
        tenant: "acme".into(),
        status: "open".into(),
    };
    let expected = order.primary_key().into_raw().unwrap();

    // Fields in another order than the templates: the same key.
    let key = Order::key(OrderKey {
        order_id: "o-7",
        placed_at: 42,
        user_id: "u-1",
    });
    assert_eq!(key.into_raw().unwrap(), expected);
    // Owned values, references, and the struct turned into a key with `into`.
    let (user, id) = (String::from("u-1"), String::from("o-7"));
    let key: Key<Order> = OrderKey {
        user_id: &user,
        order_id: id.clone(),
        placed_at: &42u64,
    }
    .into();
    assert_eq!(key.into_raw().unwrap(), expected);
    // The names decide: the same values under swapped names are another key.
    let swapped = Order::key(OrderKey {
        user_id: "o-7",
        placed_at: 42,
        order_id: "u-1",
    });
    assert_ne!(swapped.into_raw().unwrap(), expected);

    // One field: by value.
    let user = User {
        user_id: "u-1".into(),
    };
    assert_eq!(
        User::key("u-1").into_raw().unwrap(),
        user.primary_key().into_raw().unwrap()
    );

    // Partitions: one field by value; two named, in any order.
    assert_eq!(Order::partition("u-1").value().unwrap(), "USER#u-1");
    let gsi1 = Order::gsi1_partition(OrderGsi1Partition {
        status: "open",
        tenant: "acme",
    });
    assert_eq!(gsi1.value().unwrap(), "TENANT#acme#open");
    let rendered = order.to_item().unwrap();
    assert_eq!(
        rendered.get("GSI1PK").and_then(|v| v.as_s().ok()),
        Some(&"TENANT#acme#open".to_string())
    );
    let region = Match::by_region_partition(MatchByRegionPartition {
        region: "EU",
        tournament: "worlds",
    });
    let in_order = Match::by_region_partition(MatchByRegionPartition {
        tournament: String::from("worlds"),
        region: String::from("EU"),
    });
    assert_eq!(format!("{region:?}"), format!("{in_order:?}"));
    assert!(format!("{region:?}").contains("RegionTournament"));

    // Type parameters named after fields do not shadow the entity or a field's type.
    let shelf = Shelf {
        shelf: "s-1".into(),
        kind: "film".into(),
    };
    let key = Shelf::key(ShelfKey {
        kind: "film",
        shelf: "s-1",
    });
    assert_eq!(key.raw().unwrap(), &shelf.primary_key().into_raw().unwrap());
    let key: Key<Shelf> = ShelfKey {
        shelf: &shelf.shelf,
        kind: &shelf.kind,
    }
    .into();
    assert_eq!(key.into_raw().unwrap().sk.as_deref(), Some("film"));
}
