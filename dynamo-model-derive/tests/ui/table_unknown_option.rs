use dynamo_model::Table;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", table_class = "STANDARD")]
struct App;

fn main() {}
