use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

// Nothing between the number and a template starting with a digit: `v17` could be
// revision 1 of `7` or revision 17 of nothing.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "DOC#{id}", sk = "7", history(width = 0, separator = ""))]
struct Doc {
    id: String,
    #[dynamo(version)]
    version: u64,
}

// Nothing between the number and a template starting with a placeholder: `code = "7x"`
// renders `v17x`, which reads as revision 17 of `x`.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "ITEM#{id}", sk = "{code}", history(width = 0, separator = ""))]
struct Coded {
    id: String,
    code: String,
    #[dynamo(version)]
    version: u64,
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "PART#{id}", sk = "{n}#X", history(width = 0, separator = ""))]
struct Numbered {
    id: String,
    n: u64,
    #[dynamo(version)]
    version: u64,
}

// Padded slots already sort by number.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "NOTE#{id}", sk = "NOTE", history(width = 5, numeric_order))]
struct Note {
    id: String,
    #[dynamo(version)]
    version: u64,
}

// An empty sort-key template is for a versioned entity only.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "PLAIN#{id}", sk = "")]
struct Plain {
    id: String,
}

fn main() {}
