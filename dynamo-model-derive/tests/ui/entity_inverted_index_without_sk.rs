use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", ttl = "expires_at", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"), gsi(name = "ByCity", pk = ["city"]))]
struct App;

#[derive(Table)]
#[dynamo(pk = "PK", gsi(name = "Inverted", pk = "X"))]
struct Flat;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = Flat, pk = "USER#{id}", index(Inverted))]
struct User {
    id: String,
}

fn main() {}
