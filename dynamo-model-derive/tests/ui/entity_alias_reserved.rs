use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", ttl = "expires", gsi(name = "ByOwner", pk = "GPK"))]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "A#{id}", sk = "A")]
struct AliasOfAKey {
    id: String,
    #[dynamo(alias = "SK")]
    note: Option<String>,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "B#{id}", sk = "B")]
struct AliasOfTheType {
    id: String,
    #[dynamo(alias = "_type")]
    note: Option<String>,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "C#{id}", sk = "C")]
struct AliasOfAnIndexKey {
    id: String,
    #[dynamo(alias = "GPK")]
    note: Option<String>,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "D#{id}", sk = "D")]
struct AliasOfTheTtl {
    id: String,
    #[dynamo(alias = "expires")]
    note: Option<String>,
}

fn main() {}
