use dynamo_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(pk = "USER#{user_id}", sk = "PROFILE")]
struct User {
    user_id: String,
}

fn main() {}
