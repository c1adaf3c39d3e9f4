use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "A#{id}", sk = "A")]
struct Serialised {
    id: String,
    #[dynamo(unique, serde)]
    tags: Vec<String>,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "B#{id}", sk = "B")]
struct Versioned {
    id: String,
    #[dynamo(unique, version)]
    version: u64,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "C#{id}", sk = "C")]
struct Formatted {
    id: String,
    #[dynamo(unique, key_format = "padded(8)")]
    rank: u32,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "D#{id}", sk = "D", history)]
struct WithHistory {
    id: String,
    #[dynamo(version)]
    version: u64,
    #[dynamo(unique)]
    email: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "E#{id}", sk = "E")]
struct WithChunks {
    id: String,
    #[dynamo(unique)]
    email: String,
    #[dynamo(chunked)]
    body: dynamo_model::Chunked<String>,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "F#{id}", sk = "F")]
struct Unnamed {
    id: String,
    #[dynamo(unique = "")]
    email: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "G#{id}", sk = "G")]
struct Twice {
    id: String,
    #[dynamo(unique, unique = "email")]
    email: String,
}


#[derive(Entity)]
#[dynamo(table = App, pk = "H#{id}", sk = "H")]
struct Aliased {
    id: String,
    #[dynamo(unique, alias = "mail")]
    email: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "I#{id}", sk = "I")]
struct Expiring {
    id: String,
    #[dynamo(unique)]
    email: String,
    #[dynamo(ttl)]
    expires: u64,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "J#{id}", sk = "J")]
struct GroupNamedLikeAField {
    id: String,
    #[dynamo(unique)]
    email: String,
    #[dynamo(unique = "email")]
    backup: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "K#{id}", sk = "K")]
struct GroupNotSnake {
    id: String,
    #[dynamo(unique = "userEmail")]
    email: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "L#{id}", sk = "L")]
struct Encrypted {
    id: String,
    #[dynamo(unique, encrypt)]
    email: String,
}

fn main() {}
