use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct App;

/// A key-only field only an index key holds: revisions do not carry every index key.
#[derive(Entity)]
#[dynamo(table = App, pk = "DOC#{id}", sk = "DOC", history,
         index(GSI1, pk = "OWNER#{owner}", sk = "DOC#{id}"))]
struct Doc {
    id: String,
    #[dynamo(key_only)]
    owner: String,
    #[dynamo(version)]
    version: u64,
}

/// Held by a computed part only (a shard of it), which cannot be read back.
#[derive(Entity)]
#[dynamo(table = App, pk = "B#{id}", sk = "B",
         index(GSI1, pk = "SHARD#{owner:shard(4)}", sk = "B#{id}"))]
struct Sharded {
    id: String,
    #[dynamo(key_only)]
    owner: String,
}

fn main() {}
