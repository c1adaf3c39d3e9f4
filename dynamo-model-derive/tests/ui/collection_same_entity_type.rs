use dynamo_model::{Collection, Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", ttl = "expires_at", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"), gsi(name = "ByCity", pk = ["city"]))]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "A#{id}", sk = "A")]
struct A {
    id: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "B#{id}", sk = "B", entity_type = "A")]
struct B {
    id: String,
}

#[derive(Collection)]
enum Both {
    A(A),
    B(B),
}

fn main() {}
