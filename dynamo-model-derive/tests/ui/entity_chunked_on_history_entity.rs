use dynamo_model::{Chunked, Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "DOC#{id}", sk = "DOC", history)]
struct Doc {
    id: String,
    #[dynamo(version)]
    version: u64,
    #[dynamo(chunked)]
    body: Chunked<String>,
}

fn main() {}
