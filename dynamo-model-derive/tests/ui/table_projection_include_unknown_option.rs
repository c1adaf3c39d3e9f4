use dynamo_model::Table;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", projection(exclude = ["secret"])))]
struct App;

fn main() {}
