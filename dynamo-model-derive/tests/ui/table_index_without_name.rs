use dynamo_model::Table;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(pk = "GSI1PK", sk = "GSI1SK"))]
struct App;

fn main() {}
