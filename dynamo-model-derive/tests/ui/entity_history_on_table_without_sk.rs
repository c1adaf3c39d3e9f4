use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK")]
struct Simple;

// No `sk` template: the entity is refused for its missing sort key.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = Simple, pk = "DOC#{id}", history)]
struct Doc {
    id: String,
    #[dynamo(version)]
    version: u64,
}

// An `sk` template, on a table that has no sort key.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = Simple, pk = "NOTE#{id}", sk = "NOTE", history)]
struct Note {
    id: String,
    #[dynamo(version)]
    version: u64,
}

fn main() {}
