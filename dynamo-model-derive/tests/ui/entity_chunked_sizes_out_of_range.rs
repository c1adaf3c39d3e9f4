use dynamo_model::{Chunked, Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "INBOX#{owner}", sk = "MSG")]
struct Message {
    owner: String,
    // Over 300 KiB inline: the item itself would come close to DynamoDB's 400 KB.
    #[dynamo(chunked(inline = 307201))]
    a: Chunked<String>,
    // Under 1 KiB per chunk: a 10 MB value would take over 10,000 chunk items.
    #[dynamo(chunked(chunk_size = 1023))]
    b: Chunked<String>,
    // Over 390 KiB per chunk: the chunk item would not fit in 400 KB.
    #[dynamo(chunked(chunk_size = 399361))]
    c: Chunked<Vec<u8>>,
    // Not a number of bytes.
    #[dynamo(chunked(inline = -1))]
    d: Chunked<Vec<u8>>,
}

fn main() {}
