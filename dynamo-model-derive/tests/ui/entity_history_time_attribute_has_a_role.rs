use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", ttl = "expires_at", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "A#{id}", sk = "A", history(time_attribute = "SK"))]
struct Key {
    id: String,
    #[dynamo(version)]
    version: u64,
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "B#{id}", sk = "B", history(time_attribute = "_wt"))]
struct Token {
    id: String,
    #[dynamo(version)]
    version: u64,
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "C#{id}", sk = "C", history(time_attribute = "expires_at"))]
struct Ttl {
    id: String,
    #[dynamo(version)]
    version: u64,
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "D#{id}", sk = "D", history(time_attribute = "GSI1SK"))]
struct Indexed {
    id: String,
    #[dynamo(version)]
    version: u64,
}

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", write_token = "_vt")]
struct Renamed;

// The default time attribute, `_vt`, is the write token of this table.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = Renamed, pk = "E#{id}", sk = "E", history)]
struct Default {
    id: String,
    #[dynamo(version)]
    version: u64,
}

fn main() {}
