use dynamo_model::Table;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "ByPlace", pk = ["a", "b", "c", "d", "e"]))]
struct App;

fn main() {}
