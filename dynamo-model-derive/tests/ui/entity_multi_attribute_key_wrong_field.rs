use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "ByRegion", pk = ["tournament", "region"], sk = ["score:N"]))]
struct Arena;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = Arena, pk = "MATCH#{id}", sk = "MATCH", index(ByRegion, pk = [region, tournament], sk = [score]))]
struct Match {
    id: u32,
    tournament: String,
    region: String,
    score: u32,
}

fn main() {}
