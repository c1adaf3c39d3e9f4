use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct App;

// `GSI2` is not one of the entity's indexes; `GSI1` is named twice.
#[derive(Entity)]
#[dynamo(table = App, pk = "DOC#{id}", sk = "DOC",
         history(revisions_in(GSI2, GSI1, GSI1)),
         index(GSI1, pk = "OWNER#{owner}", sk = "DOC#{id}"))]
struct Doc {
    id: String,
    owner: String,
    #[dynamo(version)]
    version: u64,
}

fn main() {}
