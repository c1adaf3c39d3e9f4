use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", ttl = "expires_at", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"), gsi(name = "ByCity", pk = ["city"]))]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "SHOP#{id}", sk = "SHOP", index(ByCity, pk = [city, id]))]
struct Shop {
    id: String,
    city: String,
}

fn main() {}
