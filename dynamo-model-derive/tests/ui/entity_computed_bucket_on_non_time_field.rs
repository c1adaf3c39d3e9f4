use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "ORDERS#{day:date}", sk = "{order_id}")]
struct Order {
    day: String,
    order_id: String,
}

fn main() {}
