use dynamo_model::{Chunked, Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", ttl = "expires_at")]
struct App;

fn is_empty(_: &Chunked<String>) -> bool {
    false
}

fn empty() -> Chunked<String> {
    Chunked::new(String::new())
}

// Every option a chunked field refuses, one field each: all reported at once.
#[derive(Entity)]
#[dynamo(table = App, pk = "INBOX#{owner}", sk = "MSG")]
struct Message {
    owner: String,
    #[dynamo(chunked, serde)]
    a: Chunked<String>,
    #[dynamo(chunked, version)]
    b: Chunked<String>,
    #[dynamo(chunked, ttl)]
    expires_at: Chunked<String>,
    #[dynamo(chunked, skip)]
    c: Chunked<String>,
    #[dynamo(chunked, default = "empty")]
    d: Chunked<String>,
    #[dynamo(chunked, skip_serializing_if = "is_empty")]
    e: Chunked<String>,
}

fn main() {}
