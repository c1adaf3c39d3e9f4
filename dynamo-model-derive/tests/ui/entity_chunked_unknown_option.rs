use dynamo_model::{Chunked, Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "INBOX#{owner}", sk = "MSG")]
struct Message {
    owner: String,
    #[dynamo(chunked(threshold = 4096))]
    body: Chunked<String>,
}

fn main() {}
