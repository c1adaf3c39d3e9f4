use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{placed_at}")]
struct Order {
    user_id: String,
    placed_at: u64,
}

fn main() {
    let _ = Order::key("u-1", "2024-01-01");
}
