use dynamo_model::{Chunked, Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "INBOX#{owner}", sk = "MSG#{body}")]
struct Message {
    owner: String,
    #[dynamo(chunked)]
    body: Chunked<String>,
}

fn main() {}
