use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "Inverted", pk = "SK", sk = "PK"))]
struct App;

// An inverted index has no template of the entity: revisions carry its keys anyway.
#[derive(Entity)]
#[dynamo(table = App, pk = "DOC#{id}", sk = "DOC",
         history(revisions_in(Inverted)), index(Inverted))]
struct Doc {
    id: String,
    #[dynamo(version)]
    version: u64,
}

fn main() {}
