use dynamo_model::Table;

#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
    gsi(name = "GSI1", pk = "GSI2PK")
)]
struct App;

fn main() {}
