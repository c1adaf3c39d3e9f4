use dynamo_model::Table;

#[derive(Table)]
#[dynamo(pk = "", sk = "SK")]
struct App;

fn main() {}
