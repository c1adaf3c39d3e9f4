use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "DOC#{id}", sk = "DOC", history)]
struct Doc {
    id: String,
    #[dynamo(version)]
    version: u64,
    _vt: u64,
}

fn main() {}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "NOTE#{id}", sk = "NOTE", history(time_attribute = "written_at"))]
struct Note {
    id: String,
    #[dynamo(version)]
    version: u64,
    #[dynamo(rename = "written_at")]
    at: u64,
}
