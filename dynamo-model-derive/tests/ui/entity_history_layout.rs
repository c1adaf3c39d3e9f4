use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "A#{id}", history(layout = "aws", width = 3))]
struct LayoutAndWidth {
    id: String,
    #[dynamo(version)]
    version: u64,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "B#{id}", history(layout = "padded"))]
struct UnknownLayout {
    id: String,
    #[dynamo(version)]
    version: u64,
}

fn main() {}
