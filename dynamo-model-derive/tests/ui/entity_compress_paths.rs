use dynamo_model::{Db, Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "POST#{id}", sk = "POST")]
struct Post {
    id: String,
    #[dynamo(compress = "zstd")]
    body: String,
    #[dynamo(compress = "gzip")]
    raw: Vec<u8>,
    #[dynamo(compress = "gzip")]
    views: u64,
}

async fn demo(db: Db<App>) {
    let f = Post::fields();
    // Compressed bytes cannot be compared with a value.
    let _ = f.body.eq("text".to_string());
    let _ = f.body.begins_with("te");
    // Only set and remove reach a compressed field.
    let _ = db.update(Post::key("1")).append(f.raw, vec![1u8]);
}

fn main() {}
