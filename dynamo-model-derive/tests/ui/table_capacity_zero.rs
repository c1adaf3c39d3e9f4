use dynamo_model::Table;

#[derive(Table)]
#[dynamo(pk = "PK", billing = "provisioned", capacity(read = 0, write = 5))]
struct ZeroRead;

#[derive(Table)]
#[dynamo(
    pk = "PK",
    billing = "provisioned",
    capacity(read = 5, write = 5),
    gsi(name = "GSI1", pk = "GSI1PK", capacity(read = 1, write = 0))
)]
struct ZeroIndexWrite;

fn main() {}
