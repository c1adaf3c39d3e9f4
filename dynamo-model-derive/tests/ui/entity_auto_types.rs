use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "POST#{id}", sk = "POST")]
struct Post {
    #[dynamo(generate = "uuid_v7")]
    id: u64,
    #[dynamo(created)]
    at: String,
}

fn main() {}
