//! Compressed attributes (`#[dynamo(compress)]`): the stored form other programs read
//! (a `B` attribute whose first byte names the codec), round trips through put, get,
//! query and update, values written before the field was compressed, and the 400 KB
//! limit counted on the compressed bytes.

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::primitives::Blob;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::{
    local, Attribute, Binary, Db, DecodeErrorKind, Entity, Error, Item, ValidationReason,
};
use serde::{Deserialize, Serialize};

/// Tags of the stored format (`dynamo_model::compress`).
const RAW: u8 = 0;
const ZSTD: u8 = 1;
const GZIP: u8 = 2;

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Meta {
    pub words: u32,
    pub tags: Vec<String>,
}

#[derive(Attribute, Debug, Clone, PartialEq)]
pub struct Attachment {
    pub name: String,
    #[dynamo(compress(codec = "gzip", threshold = 64))]
    pub data: Vec<u8>,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "THREAD#{thread}", sk = "POST#{id}")]
pub struct Post {
    pub thread: String,
    pub id: String,
    pub title: String,
    #[dynamo(compress = "zstd")]
    pub body: String,
    #[dynamo(compress(codec = "gzip", level = 9, threshold = 32))]
    pub raw: Vec<u8>,
    #[dynamo(compress(codec = "zstd", threshold = 0))]
    pub blob: Option<Binary>,
    #[dynamo(serde, compress(codec = "gzip", threshold = 16))]
    pub meta: Meta,
    #[dynamo(compress = "gzip")]
    pub summary: Option<String>,
    pub attachment: Option<Attachment>,
    #[dynamo(version)]
    pub version: u64,
}

fn text(len: usize, seed: u64) -> String {
    let mut s = String::with_capacity(len + 64);
    let mut i = seed;
    while s.len() < len {
        s.push_str(&format!(
            "reply {i}: it works on my machine, said the fox. "
        ));
        i += 1;
    }
    s.truncate(len);
    s
}

fn post(id: &str, body: String) -> Post {
    Post {
        thread: "t".into(),
        id: id.into(),
        title: format!("post {id}"),
        body,
        raw: text(500, 1).into_bytes(),
        blob: Some(Binary(vec![1, 2, 3])),
        meta: Meta {
            words: 7,
            tags: vec!["a".into(); 20],
        },
        summary: None,
        attachment: Some(Attachment {
            name: "log.txt".into(),
            data: text(2000, 3).into_bytes(),
        }),
        version: 0,
    }
}

/// The key of [`post`] `id`.
fn post_key(id: &str) -> dynamo_model::Key<Post> {
    Post::key(PostKey { thread: "t", id })
}

async fn get_raw(db: &Db<App>, id: &str) -> Res<Item> {
    raw_get(db, "THREAD#t", &format!("POST#{id}")).await
}

/// The bytes of a binary attribute.
fn bytes<'a>(item: &'a Item, name: &str) -> &'a [u8] {
    match item.get(name) {
        Some(AttributeValue::B(b)) => b.as_ref(),
        other => panic!("`{name}` is not a binary attribute: {other:?}"),
    }
}

#[tokio::test]
async fn compressed_fields_are_tagged_binary_attributes_and_read_back() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let p = post("1", text(20_000, 0));
    db.put(&p).await?;
    let item = get_raw(&db, "1").await?;
    // What other programs read: B, the codec in byte 0, the codec's own format after it.
    let body = bytes(&item, "body");
    assert_eq!(body[0], ZSTD);
    assert!(body.len() < 20_000 / 5, "{} bytes", body.len());
    assert_eq!(bytes(&item, "raw")[0], GZIP);
    // Under the threshold (3 bytes) stays raw: tag 0 and the bytes.
    assert_eq!(bytes(&item, "blob"), &[RAW, 1, 2, 3][..]);
    assert_eq!(bytes(&item, "meta")[0], GZIP);
    assert!(!item.contains_key("summary"), "None is not stored");
    match item.get("attachment") {
        Some(AttributeValue::M(m)) => match m.get("data") {
            Some(AttributeValue::B(b)) => assert_eq!(b.as_ref()[0], GZIP),
            other => panic!("attachment.data: {other:?}"),
        },
        other => panic!("attachment: {other:?}"),
    }
    let got = db.get(post_key("1")).await?;
    assert_eq!(got, Some(Post { version: 1, ..p }));
    Ok(())
}

#[tokio::test]
async fn a_query_decodes_compressed_fields_and_conditions_test_their_presence() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let mut posts = Vec::new();
    for i in 0..5 {
        let mut p = post(&i.to_string(), text(1000 * (i + 1), i as u64));
        if i % 2 == 0 {
            p.summary = Some(text(600, 9));
        }
        db.put(&p).await?;
        p.version = 1;
        posts.push(p);
    }
    let f = Post::fields();
    let all = items_of(db.query(Post::partition("t"))).await?;
    assert_eq!(all, posts);
    let summarised = items_of(db.query(Post::partition("t")).filter(f.summary.exists())).await?;
    assert_eq!(summarised.len(), 3);
    let put_if_absent = db.put(&posts[1]).condition(f.summary.not_exists()).await;
    assert!(put_if_absent.is_ok(), "{put_if_absent:?}");
    let refused = db.put(&posts[0]).condition(f.summary.not_exists()).await;
    assert!(
        matches!(refused, Err(Error::ConditionFailed { .. })),
        "{refused:?}"
    );
    Ok(())
}

#[tokio::test]
async fn an_update_stores_what_a_put_stores() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let p = post("u", "short".into());
    db.put(&p).await?;
    let f = Post::fields();
    let long = text(50_000, 4);
    let updated = db
        .update(post_key("u"))
        .set(f.body, long.clone())
        .set(f.summary, "a summary".to_string())
        .set(f.raw, noise(3000, 5))
        .set(
            f.meta,
            Meta {
                words: 9,
                tags: vec![],
            },
        )
        .any_version()
        .await?;
    assert_eq!(updated.body, long);
    assert_eq!(updated.raw, noise(3000, 5));
    assert_eq!(updated.summary.as_deref(), Some("a summary"));
    let item = get_raw(&db, "u").await?;
    // Byte for byte what a put of the same entity writes.
    let put_item = updated.to_item()?;
    for name in ["body", "summary", "raw", "meta"] {
        assert_eq!(item.get(name), put_item.get(name), "{name}");
    }
    assert_eq!(bytes(&item, "body")[0], ZSTD);
    assert_eq!(bytes(&item, "summary")[0], RAW, "under the threshold");
    assert_eq!(bytes(&item, "raw")[0], RAW, "noise does not shrink");
    // remove clears an optional compressed field.
    let cleared = db
        .update(post_key("u"))
        .remove(f.summary)
        .any_version()
        .await?;
    assert_eq!(cleared.summary, None);
    assert!(!get_raw(&db, "u").await?.contains_key("summary"));
    Ok(())
}

#[tokio::test]
async fn values_stored_before_the_field_was_compressed_read_back() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let p = post("legacy", String::new());
    db.put(&p).await?;
    // As an uncompressed definition wrote them: S, a list of numbers, serde_dynamo's map.
    let mut item = get_raw(&db, "legacy").await?;
    item.insert("body".into(), AttributeValue::S("plain old text".into()));
    item.insert("summary".into(), AttributeValue::S("plain summary".into()));
    item.insert("raw".into(), AttributeValue::L(vec![num("1"), num("2")]));
    item.insert(
        "meta".into(),
        dynamo_model::aws_sdk_dynamodb::types::AttributeValue::M(
            [
                ("words".to_string(), num("3")),
                ("tags".to_string(), AttributeValue::L(vec![])),
            ]
            .into(),
        ),
    );
    put_raw(&db, item).await?;
    let got = db.get(post_key("legacy")).await?.ok_or("missing")?;
    assert_eq!(got.body, "plain old text");
    assert_eq!(got.summary.as_deref(), Some("plain summary"));
    assert_eq!(got.raw, vec![1, 2]);
    assert_eq!(
        got.meta,
        Meta {
            words: 3,
            tags: vec![]
        }
    );
    Ok(())
}

#[tokio::test]
async fn a_damaged_compressed_attribute_is_a_typed_decode_error() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    db.put(&post("bad", text(5000, 1))).await?;
    let item = get_raw(&db, "bad").await?;
    let good = bytes(&item, "body").to_vec();
    let truncated = good[..good.len() / 2].to_vec();
    for (stored, check) in [
        (
            vec![9u8, 1, 2],
            DecodeErrorKind::Decompress(dynamo_model::compress::DecompressError::UnknownTag(9)),
        ),
        (
            vec![RAW, 0xff, 0xfe],
            DecodeErrorKind::Decompress(dynamo_model::compress::DecompressError::NotUtf8 {
                valid_up_to: 0,
            }),
        ),
    ] {
        let mut item = item.clone();
        item.insert("body".into(), AttributeValue::B(Blob::new(stored)));
        let (attribute, kind) = decode(&db, item).await?;
        assert_eq!(attribute.as_deref(), Some("body"));
        assert_eq!(kind, check);
    }
    let mut damaged = item.clone();
    damaged.insert("body".into(), AttributeValue::B(Blob::new(truncated)));
    let (attribute, kind) = decode(&db, damaged).await?;
    assert_eq!(attribute.as_deref(), Some("body"));
    assert!(
        matches!(
            kind,
            DecodeErrorKind::Decompress(dynamo_model::compress::DecompressError::Corrupt { .. })
        ),
        "{kind:?}"
    );
    Ok(())
}

/// Writes `item` raw, reads it through the entity, returns the decode error's attribute
/// and kind.
async fn decode(
    db: &Db<App>,
    item: Item,
) -> Result<(Option<String>, DecodeErrorKind), Box<dyn std::error::Error + Send + Sync>> {
    put_raw(db, item).await?;
    match db.get(post_key("bad")).await {
        Err(Error::Decode(e)) => Ok((e.attribute, e.kind)),
        other => Err(format!("expected a decode error, got {other:?}").into()),
    }
}

#[tokio::test]
async fn the_400_kb_limit_counts_compressed_bytes() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    // 1 MB of text fits once compressed.
    let big = post("big", text(1024 * 1024, 2));
    db.put(&big).await?;
    let got = db.get(post_key("big")).await?.ok_or("missing")?;
    assert_eq!(got.body.len(), 1024 * 1024);
    // 500 KB that does not compress is refused before sending, by put and by update.
    let mut p = post("noise", String::new());
    p.raw = noise(500 * 1024, 11);
    refused(db.put(&p), ValidationReason::ItemTooLarge).await;
    refused(
        db.update(post_key("big"))
            .set(Post::fields().raw, noise(500 * 1024, 12))
            .any_version(),
        ValidationReason::ItemTooLarge,
    )
    .await;
    // Nothing was written by either.
    assert!(db.get(post_key("noise")).await?.is_none());
    Ok(())
}

/// Any text and bytes, of lengths around every threshold (0, 16, 32, 256 bytes), round-trip
/// through a put and a get, and through an update.
#[test]
fn any_value_round_trips() {
    use proptest::prelude::*;

    let (runtime, db) = runtime_and_table::<App>().expect("a runtime and a fresh table");
    let mut runner = runner(32);
    let values = (
        prop_oneof![".{0,300}", "[a-c]{0,3000}"],
        prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..100),
            (0usize..5000).prop_map(|n| vec![b'x'; n]),
        ],
        proptest::option::of(".{0,400}"),
    );
    let case = std::cell::Cell::new(0u32);
    let result = runner.run(&values, |(body, raw, summary)| {
        case.set(case.get() + 1);
        let id = format!("p{}", case.get());
        runtime.block_on(async {
            let mut p = post(&id, body.clone());
            p.raw = raw.clone();
            p.summary = summary.clone();
            db.put(&p).await.map_err(fail)?;
            let key = || post_key(&id);
            let got = db.get(key()).await.map_err(fail)?;
            prop_assert_eq!(
                got,
                Some(Post {
                    version: 1,
                    ..p.clone()
                })
            );
            let f = Post::fields();
            let updated = db
                .update(key())
                .set(f.body, summary.clone().unwrap_or_default())
                .set(f.raw, body.clone().into_bytes())
                .any_version()
                .await
                .map_err(fail)?;
            let read = db.get(key()).await.map_err(fail)?;
            prop_assert_eq!(read.as_ref(), Some(&updated));
            prop_assert_eq!(updated.body, summary.unwrap_or_default());
            prop_assert_eq!(updated.raw, body.into_bytes());
            Ok(())
        })
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
