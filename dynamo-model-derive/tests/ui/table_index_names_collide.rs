// Two index names that differ only in case and punctuation would generate the same type
// names (`AppGsi1`, `OrderGsi1Partition`).
use dynamo_model::Table;

#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
    gsi(name = "gsi-1", pk = "G1PK", sk = "G1SK")
)]
struct App;

fn main() {}
