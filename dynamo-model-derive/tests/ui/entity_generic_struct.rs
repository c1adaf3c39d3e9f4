use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "BOX#{id}", sk = "BOX")]
struct Boxed<T> {
    id: String,
    value: T,
}

fn main() {}
