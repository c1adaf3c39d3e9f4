use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{user_id", sk = "PROFILE")]
struct User {
    user_id: String,
}

fn main() {}
