use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "A#{id}", sk = "A")]
struct TwoCreated {
    id: String,
    #[dynamo(created)]
    first: time::OffsetDateTime,
    #[dynamo(created)]
    second: time::OffsetDateTime,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "B#{id}", sk = "B")]
struct Both {
    id: String,
    #[dynamo(created, updated)]
    at: time::OffsetDateTime,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "C#{id}", sk = "C", index(GSI1, pk = "RECENT", sk = "{at}"))]
struct UpdatedInIndex {
    id: String,
    #[dynamo(updated)]
    at: time::OffsetDateTime,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "D#{id}", sk = "D")]
struct UnknownKind {
    #[dynamo(generate = "snowflake")]
    id: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "E#{id}", sk = "E")]
struct SkippedTime {
    id: String,
    #[dynamo(skip, updated)]
    at: Option<time::OffsetDateTime>,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "F#{id}", sk = "F#{at}")]
struct CreatedInKey {
    id: String,
    #[dynamo(created)]
    at: time::OffsetDateTime,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "G#{id}", sk = "G")]
struct CreatedAndChunked {
    id: String,
    #[dynamo(chunked)]
    body: String,
    #[dynamo(created)]
    at: time::OffsetDateTime,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "H#{id}", sk = "H", history)]
struct GeneratedWithHistory {
    #[dynamo(generate = "uuid_v4")]
    id: String,
    #[dynamo(version)]
    version: u64,
}

fn main() {}
