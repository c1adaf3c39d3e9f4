use dynamo_model::Table;

#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "ByScore", pk = "GSI1PK", sk = "score:X")
)]
struct App;

fn main() {}
