use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{placed_at}#{order_id}")]
struct Order {
    user_id: String,
    order_id: String,
    placed_at: u64,
    total: u64,
}

fn main() {
    // `total` is a field of `Order`, but not of its key.
    let _ = Order::key(OrderKey { user_id: "u-1", placed_at: 42, total: 7 });
}
