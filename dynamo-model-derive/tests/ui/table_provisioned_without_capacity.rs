use dynamo_model::Table;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", billing = "provisioned")]
struct App;

fn main() {}
