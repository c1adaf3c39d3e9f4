use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, identify = "keys", pk = "{id}", sk = "{at}")]
struct NothingToTellApart {
    id: String,
    at: u64,
}

#[derive(Entity)]
#[dynamo(table = App, identify = "shape", pk = "A#{id}", sk = "A")]
struct UnknownIdentify {
    id: String,
}

#[derive(Entity)]
#[dynamo(table = App, store_key_fields = "no", pk = "B#{id}", sk = "B")]
struct NotABool {
    id: String,
}

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", identify = "keys")]
struct Untyped;

#[derive(Entity)]
#[dynamo(table = Untyped, pk = "{id}", sk = "{at}")]
struct NothingToTellApartInTheTable {
    id: String,
    at: u64,
}

fn main() {}
