use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

use dynamo_model::Db;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{order_id}")]
struct Order {
    user_id: String,
    order_id: String,
    total_cents: u64,
}

async fn move_order(db: Db<App>) -> Result<Order, dynamo_model::Error> {
    db.update(Order::key(OrderKey { user_id: "u-1", order_id: "o-1" }))
        .set(Order::fields().user_id, "u-2".to_string())
        .await
}

fn main() {
    let _ = move_order;
}
