use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

/// Not a type or a string.
#[derive(Entity)]
#[dynamo(table = App, pk = "A#{id}", sk = "A")]
struct NotAType {
    #[dynamo(key_format = 3)]
    id: u64,
}

struct NotAFormat;

/// A type that does not implement `KeyFormat` for the field's type.
#[derive(Entity)]
#[dynamo(table = App, pk = "B#{id}", sk = "B")]
struct NotImplemented {
    #[dynamo(key_format = NotAFormat)]
    id: u64,
}

fn main() {}
