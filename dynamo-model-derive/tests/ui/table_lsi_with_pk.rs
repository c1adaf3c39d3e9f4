use dynamo_model::Table;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", lsi(name = "LSI1", pk = "LSI1PK", sk = "LSI1SK"))]
struct App;

fn main() {}
