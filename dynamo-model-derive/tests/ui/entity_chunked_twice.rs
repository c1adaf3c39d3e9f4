use dynamo_model::{Chunked, Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "INBOX#{owner}", sk = "MSG")]
struct Message {
    owner: String,
    #[dynamo(chunked)]
    #[dynamo(chunked(inline = 2048))]
    body: Chunked<String>,
    #[dynamo(chunked(chunk_size = 4096, chunk_size = 8192))]
    attachment: Chunked<Vec<u8>>,
}

fn main() {}
