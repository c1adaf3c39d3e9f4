use dynamo_model::Table;

// Capacity units on an on-demand table (the default, or said).
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", capacity(read = 5, write = 5))]
struct OnDemandByDefault;

#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    billing = "on_demand",
    gsi(name = "GSI1", pk = "GSI1PK", capacity(read = 1, write = 1))
)]
struct IndexCapacityOnDemand;

fn main() {}
