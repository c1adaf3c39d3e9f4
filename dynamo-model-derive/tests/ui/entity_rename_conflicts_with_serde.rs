use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "PROFILE", rename_all = "camelCase")]
#[serde(rename_all = "PascalCase")]
struct User {
    user_id: String,
    #[serde(rename = "a")]
    #[dynamo(rename = "b")]
    nickname: String,
    // Both saying the same is fine.
    #[serde(rename = "c", default)]
    #[dynamo(rename = "c", default)]
    city: String,
    #[serde(default = "fallback")]
    #[dynamo(default)]
    zone: String,
}

fn fallback() -> String {
    String::new()
}

fn main() {}
