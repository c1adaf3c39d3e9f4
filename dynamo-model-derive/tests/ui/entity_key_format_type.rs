use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "A#{name}", sk = "A")]
struct UnpaddedString {
    #[dynamo(key_format = "unpadded")]
    name: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "B#{id}", sk = "B")]
struct TimestampOfANumber {
    #[dynamo(key_format = "rfc3339(3)")]
    id: u64,
}

fn main() {}
