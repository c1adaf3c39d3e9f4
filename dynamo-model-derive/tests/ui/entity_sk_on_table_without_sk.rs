use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK")]
struct Simple;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = Simple, pk = "USER#{user_id}", sk = "PROFILE")]
struct User {
    user_id: String,
}

fn main() {}
