use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "A#{id}", sk = "A")]
struct UnknownFormat {
    #[dynamo(key_format = "hex")]
    id: u64,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "B#{id}", sk = "B")]
struct BadWidth {
    #[dynamo(key_format = "padded(0)")]
    id: u64,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "C#{id}", sk = "C")]
struct BadDigits {
    #[dynamo(key_format = "rfc3339(2)")]
    id: u64,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "E#{id:shard(4)}", sk = "{id}")]
struct OnAShard {
    #[dynamo(key_format = "unpadded")]
    id: u64,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "F#{id}", sk = "F")]
struct KeyOnlyNotInKey {
    id: u64,
    #[dynamo(key_only)]
    name: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "G#{id}", sk = "G")]
struct AliasOfAField {
    id: u64,
    #[dynamo(alias = "id")]
    name: String,
}

fn main() {}
