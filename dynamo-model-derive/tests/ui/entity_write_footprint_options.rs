use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", write_type = false)]
struct TypelessWithoutIdentify;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", write_type = true)]
struct TypeOn;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", write_token = true)]
struct TokenOn;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, write_token = "tok", pk = "A#{id}", sk = "A")]
struct TokenNamedOnEntity {
    id: String,
}

#[derive(Entity)]
#[dynamo(table = App, write_type = false, pk = "B#{id}", sk = "B")]
struct TypelessOnTypedTable {
    id: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "H#{id}", sk = "H", history(time_attribute = true))]
struct HistoryTimeOn {
    id: String,
    #[dynamo(version)]
    version: u64,
}

fn main() {}
