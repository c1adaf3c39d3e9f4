use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "POST#{id}", sk = "POST")]
struct Post {
    id: String,
    #[dynamo(compress = "lz4")]
    unknown_codec: String,
    #[dynamo(compress(codec = "zstd", threshold = "big"))]
    threshold_not_a_number: String,
    #[dynamo(compress(codec = "zstd", threshold = 1000000))]
    threshold_over_an_item: String,
    #[dynamo(compress(codec = "gzip", level = 12))]
    gzip_level_out_of_range: String,
    #[dynamo(compress(codec = "zstd", level = 0))]
    zstd_level_out_of_range: String,
    #[dynamo(compress(level = 3))]
    no_codec: String,
    #[dynamo(compress(codec = "zstd", max_size = 0))]
    no_room: String,
    #[dynamo(compress(codec = "zstd", window = 10))]
    unknown_option: String,
    #[dynamo(compress)]
    bare_word: String,
    #[dynamo(compress = "zstd", compress = "gzip")]
    twice: String,
}

fn main() {}
