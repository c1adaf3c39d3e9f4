use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "EVENTS", sk = "{id}#{slot:random(4)}")]
struct Event {
    slot: u16,
    id: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "ORDER#{order_id}", sk = "ORDER",
         index(GSI1, pk = "ORDERS", sk = "{order_id:shard(4)}"))]
struct Order {
    order_id: String,
}

fn main() {}
