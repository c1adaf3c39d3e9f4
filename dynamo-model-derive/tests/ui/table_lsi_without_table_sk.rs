use dynamo_model::Table;

#[derive(Table)]
#[dynamo(pk = "PK", lsi(name = "LSI1", sk = "LSI1SK"))]
struct App;

fn main() {}
