use dynamo_model::Table;

#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "ab", pk = "GSI1PK"),
    gsi(name = "bad name", pk = "GSI2PK")
)]
struct App;

fn main() {}
