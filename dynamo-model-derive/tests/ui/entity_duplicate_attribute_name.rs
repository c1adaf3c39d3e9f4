use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "PROFILE")]
#[serde(rename_all = "camelCase")]
struct User {
    user_id: String,
    display_name: String,
    #[serde(rename = "displayName")]
    nickname: String,
}

fn main() {}
