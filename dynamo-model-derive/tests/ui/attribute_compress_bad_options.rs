use dynamo_model::Attribute;

#[derive(Attribute)]
struct Attachment {
    #[dynamo(compress = "brotli")]
    data: Vec<u8>,
    #[dynamo(compress(codec = "gzip", threshold = -1))]
    name: String,
}

#[derive(Attribute)]
struct Wrapped(#[dynamo(compress = "zstd")] String);

#[derive(Attribute)]
enum Body {
    Text {
        #[dynamo(compress(codec = "zstd", level = 23))]
        text: String,
    },
}

fn main() {}
