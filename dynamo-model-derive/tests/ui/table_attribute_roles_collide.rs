use dynamo_model::Table;

#[derive(Table)]
#[dynamo(pk = "K", sk = "K", ttl = "_type")]
struct App;

fn main() {}
