use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", ttl = "expires", gsi(name = "GSI1", pk = "author", sk = "title"))]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "POST#{id}", sk = "POST#{slug}")]
struct Post {
    #[dynamo(compress = "zstd")]
    id: String,
    slug: String,
    #[dynamo(version, compress = "zstd")]
    version: u64,
    #[dynamo(ttl, compress = "gzip")]
    expires: i64,
    #[dynamo(skip, compress = "gzip")]
    cache: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "DOC#{id}", sk = "DOC", index(GSI1, pk = [author], sk = [title]))]
struct Doc {
    id: String,
    author: String,
    #[dynamo(compress = "gzip")]
    title: String,
}

fn main() {}
