use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "PROFILE")]
struct User {
    user_id: String,
    #[serde(rename = "_wt")]
    token: String,
}

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", write_token = "rev")]
struct Renamed;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = Renamed, pk = "DOC#{id}", sk = "DOC")]
struct Doc {
    id: String,
    rev: u32,
    _wt: String, // no longer the token: fine
}

fn main() {}
