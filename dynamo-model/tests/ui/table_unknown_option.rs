use dynamo_model::Table;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", billing = "on_demand")]
struct App;

fn main() {}
