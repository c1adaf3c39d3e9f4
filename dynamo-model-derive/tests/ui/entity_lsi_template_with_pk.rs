use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", lsi(name = "LSI1", sk = "LSI1SK"))]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{order_id}",
         index(LSI1, pk = "USER#{user_id}", sk = "TOTAL#{total}"))]
struct Order {
    user_id: String,
    order_id: String,
    total: u64,
}

fn main() {}
