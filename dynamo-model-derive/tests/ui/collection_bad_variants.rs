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

#[derive(Collection)]
enum Details {
    Unit,
    Two(A, A),
    Named { a: A },
}

#[derive(Collection)]
enum Empty {}

#[derive(Collection)]
enum Twice {
    First(A),
    Second(A),
}

fn main() {}
