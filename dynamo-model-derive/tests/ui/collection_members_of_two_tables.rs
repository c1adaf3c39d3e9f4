use dynamo_model::{Collection, Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", ttl = "expires_at", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"), gsi(name = "ByCity", pk = ["city"]))]
struct App;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct Other;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "A#{id}", sk = "A")]
struct A {
    id: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = Other, pk = "B#{id}", sk = "B")]
struct B {
    id: String,
}

#[derive(Collection)]
enum Mixed {
    A(A),
    B(B),
}

fn main() {}
