use dynamo_model::Table;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "G", projection(include = [])))]
struct App;

fn main() {}
