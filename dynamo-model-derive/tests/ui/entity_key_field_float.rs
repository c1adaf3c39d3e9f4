use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "SENSOR#{sensor}", sk = "TEMP#{celsius}")]
struct Reading {
    sensor: String,
    celsius: f64,
}

fn main() {}
