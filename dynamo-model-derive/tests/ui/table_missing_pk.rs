use dynamo_model::Table;

#[derive(Table)]
#[dynamo(sk = "SK")]
struct App;

fn main() {}
