use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Serialize, Deserialize)]
struct UserId(String);

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE")]
struct User {
    id: UserId,
    name: String,
}

fn main() {}
