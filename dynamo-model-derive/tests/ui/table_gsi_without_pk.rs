use dynamo_model::Table;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", sk = "GSI1SK"))]
struct App;

fn main() {}
