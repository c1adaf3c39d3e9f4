use dynamo_model::{Attribute, Chunked, Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "A#{id}", sk = "A")]
struct Compressed {
    id: String,
    #[dynamo(compress = "gzip", encrypt)]
    notes: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "B#{id}", sk = "B")]
struct Large {
    id: String,
    #[dynamo(chunked, encrypt)]
    scan: Chunked<Vec<u8>>,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "C#{id}", sk = "C", history)]
struct WithHistory {
    id: String,
    #[dynamo(version)]
    version: u64,
    #[dynamo(encrypt)]
    ssn: String,
}

// A member of a nested attribute: encrypt the entity's field that holds it.
#[derive(Attribute)]
struct Address {
    #[dynamo(encrypt)]
    street: String,
}

fn main() {}
