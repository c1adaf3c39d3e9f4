use dynamo_model::Table;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", lsi(name = "LSI1"))]
struct App;

fn main() {}
