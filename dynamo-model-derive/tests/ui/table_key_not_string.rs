use dynamo_model::Table;

#[derive(Table)]
#[dynamo(pk = "PK:N", sk = "SK:B")]
struct App;

fn main() {}
