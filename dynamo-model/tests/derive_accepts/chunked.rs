//! `#[dynamo(chunked)]`, bare and with both sizes, on `Chunked<String>` and
//! `Chunked<Vec<u8>>`: small values stay in the item, the options reach the runtime.

use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::chunk::{ChunkedField, DEFAULT_CHUNK_SIZE, DEFAULT_INLINE};
use dynamo_model::{Chunked, Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "INBOX#{owner}", sk = "MSG#{msg_id}")]
struct Message {
    owner: String,
    msg_id: String,
    subject: String,
    #[dynamo(chunked)]
    body: Chunked<String>,
    #[dynamo(chunked(inline = 4096, chunk_size = 2048), rename = "att")]
    attachment: Chunked<Vec<u8>>,
}

fn message(body: &str, attachment: Vec<u8>) -> Message {
    Message {
        owner: "ann".into(),
        msg_id: "m1".into(),
        subject: "hello".into(),
        body: Chunked::new(body.to_owned()),
        attachment: attachment.into(),
    }
}

pub fn run() {
    // The options reach the runtime, in declaration order, under the stored names.
    assert_eq!(
        <Message as dynamo_model::__private::EntityInternals>::__CHUNKED,
        &[
            ChunkedField {
                attribute: "body",
                inline: DEFAULT_INLINE,
                chunk_size: DEFAULT_CHUNK_SIZE,
                compression: None,
            },
            ChunkedField {
                attribute: "att",
                inline: 4096,
                chunk_size: 2048,
                compression: None,
            },
        ]
    );

    // Values at most their inline threshold (one tag byte plus the value) stay in the
    // item as Binary and read back loaded.
    let small = message("hi", vec![7; 4095]);
    let item = small.to_item().unwrap();
    assert!(matches!(item.get("body"), Some(AttributeValue::B(b)) if b.as_ref() == b"\0hi"));
    assert!(matches!(item.get("att"), Some(AttributeValue::B(b)) if b.as_ref().len() == 4096));
    let back = Message::from_item(item).unwrap();
    assert_eq!(back, small);
    assert!(back.body.is_loaded() && back.attachment.is_loaded());

    // Over the threshold, the item holds no value: only `db.put` writes it (as chunk
    // items), and every other write refuses the mark it leaves.
    let large = message(&"x".repeat(DEFAULT_INLINE), vec![7; 4096]);
    let item = large.to_item().unwrap();
    assert_eq!(item.get("body"), Some(&AttributeValue::Null(true)));
    assert_eq!(item.get("att"), Some(&AttributeValue::Null(true)));

    // An item whose value is in chunk items reads back with the manifest, not loaded.
    let mut item = small.to_item().unwrap();
    let manifest = AttributeValue::M(
        [
            ("t", AttributeValue::S("tok".into())),
            ("n", AttributeValue::N("2".into())),
            ("len", AttributeValue::N("300000".into())),
            ("crc", AttributeValue::N("12345".into())),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect(),
    );
    item.insert("body".into(), manifest);
    let listed = Message::from_item(item).unwrap();
    assert_eq!(listed.body.get(), None);
    let m = listed.body.manifest().unwrap();
    assert_eq!((m.chunks, m.len, m.crc), (2, 300_000, 12345));
    assert!(listed.attachment.is_loaded());
}
