use dynamo_model::{Db, Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "ORDERS#{day}#{order_id:shard(16)}", sk = "{order_id}")]
struct Order {
    day: String,
    order_id: String,
}

async fn day(db: Db<App>) {
    // Every shard must be read: a sharded partition is not one partition.
    let _ = db.query(Order::partition("2014-07-09")).all().await;
}

fn main() {}
