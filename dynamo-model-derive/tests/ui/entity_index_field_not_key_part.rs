use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "STORE#{store_id}", sk = "STORE",
         index(GSI1, pk = "STORES", sk = "RATING#{rating}"))]
struct Store {
    store_id: String,
    rating: Option<f64>,
}

fn main() {}
