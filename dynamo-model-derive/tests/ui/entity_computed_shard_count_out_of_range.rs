use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "ORDERS#{order_id:shard(0)}", sk = "{order_id}")]
struct Order {
    order_id: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "EVENTS#{slot:random(1001)}", sk = "{id}")]
struct Event {
    slot: u16,
    id: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "LOGS#{id:shard}", sk = "{id}")]
struct Log {
    id: String,
}

fn main() {}
