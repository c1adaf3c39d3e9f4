//! The member paths of a `#[derive(Attribute)]` struct (`path.fields()`) are `Clone` and
//! `Debug` whatever the entity and the struct's own type parameters are: a path holds
//! neither.

use dynamo_model::{Attribute, Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Attribute)]
struct Geo {
    lat: i64,
    r#type: String,
}

/// Generic over a parameter that is neither `Clone` nor `Debug`.
#[derive(Attribute)]
struct Tagged<T: dynamo_model::AttrValue> {
    tag: T,
    geo: Geo,
}

/// Neither `Clone` nor `Debug`.
#[derive(Attribute)]
struct Opaque(String);

/// An entity that is neither `Clone` nor `Debug`.
#[derive(Entity)]
#[dynamo(table = App, pk = "PLACE#{id}", sk = "PLACE")]
struct Place {
    id: String,
    spot: Tagged<Opaque>,
}

pub fn run() {
    let spot = Place::fields().spot.fields();
    let copy = spot.clone();
    let shown = format!("{copy:?}");
    assert!(shown.starts_with("TaggedAttributeFields {"), "{shown}");
    assert!(shown.contains("tag: NestedPath(spot.tag)"), "{shown}");
    let geo = format!("{:?}", spot.geo.fields().clone());
    assert!(geo.contains("lat: NestedPath(spot.geo.lat)"), "{geo}");
    assert!(geo.contains("type: NestedPath(spot.geo.type)"), "{geo}");
}
