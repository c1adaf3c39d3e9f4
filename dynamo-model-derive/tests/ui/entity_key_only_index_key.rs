use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "ByOwner", pk = ["owner"]))]
struct App;

/// A multi-attribute index key is the field's own attribute: it must be stored.
#[derive(Entity)]
#[dynamo(table = App, store_key_fields = false, pk = "A#{owner}#{id}", sk = "A",
         index(ByOwner, pk = [owner]))]
struct IndexKeyNotStored {
    owner: String,
    id: u64,
}

fn main() {}
