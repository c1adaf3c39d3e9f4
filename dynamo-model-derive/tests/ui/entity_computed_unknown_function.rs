use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "ORDERS#{order_id:hash(16)}", sk = "{order_id}")]
struct Order {
    order_id: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "EVENTS#{at:day}", sk = "{id}")]
struct Event {
    at: u64,
    id: String,
}

fn main() {}
