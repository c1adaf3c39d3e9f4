use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "PROFILE")]
#[serde(default = "User::new")]
struct User {
    user_id: String,
}

impl User {
    fn new() -> Self {
        User {
            user_id: String::new(),
        }
    }
}

fn main() {}
