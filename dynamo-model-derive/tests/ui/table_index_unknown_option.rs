use dynamo_model::Table;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", throughput = 5))]
struct App;

fn main() {}
