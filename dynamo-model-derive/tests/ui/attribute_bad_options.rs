use dynamo_model::Attribute;
use serde::{Deserialize, Serialize};

#[derive(Attribute, Serialize, Deserialize)]
#[serde(tag = "type")]
enum Tagged {
    A { x: u8 },
}

#[derive(Attribute)]
#[dynamo(rename_all = "camel")]
struct Address {
    #[dynamo(rename = "")]
    street: String,
    #[dynamo(version)]
    revision: u64,
    #[dynamo(rename = "city")]
    town: String,
    city: String,
}

#[derive(Attribute)]
enum Status {
    Open,
    #[dynamo(rename = "Open")]
    Reopened,
    #[dynamo(rename_all = "camelCase")]
    Closed(String),
}

#[derive(Attribute)]
struct Id(#[dynamo(rename = "x")] String);

fn main() {}
