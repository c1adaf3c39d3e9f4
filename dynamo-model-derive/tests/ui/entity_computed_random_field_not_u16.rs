use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "EVENTS#{slot:random(4)}", sk = "{id}")]
struct Event {
    slot: String,
    id: String,
}

fn main() {}
