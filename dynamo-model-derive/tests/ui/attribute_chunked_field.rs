use dynamo_model::{Attribute, Chunked};

#[derive(Attribute)]
struct Attachment {
    name: String,
    #[dynamo(chunked)]
    data: Chunked<Vec<u8>>,
}

fn main() {}
