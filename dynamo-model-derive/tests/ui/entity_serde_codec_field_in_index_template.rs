use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct App;

#[derive(Serialize, Deserialize)]
struct Region {
    code: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "STORE#{store_id}", sk = "STORE",
         index(GSI1, pk = "REGION#{region}", sk = "STORE#{store_id}"))]
struct Store {
    store_id: String,
    #[dynamo(serde)]
    region: Region,
}

fn main() {}
