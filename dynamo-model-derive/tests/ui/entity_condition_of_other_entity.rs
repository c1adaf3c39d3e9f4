use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

use dynamo_model::Db;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "PROFILE")]
struct User {
    user_id: String,
    status: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{order_id}")]
struct Order {
    user_id: String,
    order_id: String,
    status: String,
}

async fn place(db: Db<App>, order: Order) -> Result<(), dynamo_model::Error> {
    db.put(&order)
        .condition(User::fields().status.eq("active".to_string()))
        .await
}

fn main() {
    let _ = place;
}
