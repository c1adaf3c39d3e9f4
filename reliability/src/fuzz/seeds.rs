//! Seed inputs of every target, made from real encodings: cursors, items and keys the
//! crate writes, chunk manifests and compressed values of each codec (with bombs and
//! truncated frames), stream records of both shapes, checkpoint files.

use super::entities::{
    Address, ColonKeys, DotKeys, Geo, HashKeys, PROFILE_NAMES, Packed, PipeKeys, Profile, Squeezed,
    Status, Tree, UnderscoreKeys,
};
use super::input::{map_input, text_input, value_input};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use dynamo_model::__private::cursor_codec as codec;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::cursor::Position;
use dynamo_model::{Binary, Chunked, Entity, Item};
use std::collections::{BTreeMap, HashMap};

/// A seed: its target, a file name, its bytes.
pub type Seed = (&'static str, String, Vec<u8>);

/// Every target's seeds.
pub fn all() -> Vec<Seed> {
    let mut out = Vec::new();
    out.extend(cursors());
    out.extend(items());
    out.extend(keys());
    out.extend(chunks());
    out.extend(compressed());
    out.extend(streams());
    out.extend(checkpoints());
    out
}

fn seed(target: &'static str, name: impl Into<String>, bytes: Vec<u8>) -> Seed {
    (target, name.into(), bytes)
}

fn s(v: &str) -> AttributeValue {
    AttributeValue::S(v.to_owned())
}

fn key(pk: &str, sk: &str) -> Item {
    Item::from([("PK".to_owned(), s(pk)), ("SK".to_owned(), s(sk))])
}

const FINGERPRINT: [u8; 16] = *b"fuzz-fingerprint";
const SECRET: &[u8] = b"fuzz";

fn cursors() -> Vec<Seed> {
    let single = codec::encode(FINGERPRINT, &key("USER#u-1", "ORDER#0042"), SECRET);
    let positions = [
        Position::Start,
        Position::After(key("P#1", "S#9")),
        Position::Done,
    ];
    let merged = codec::encode_positions(FINGERPRINT, &positions, SECRET);
    let mut out = Vec::new();
    for (name, cursor, sources) in [("query", &single, 0u8), ("merged", &merged, 3)] {
        let raw = URL_SAFE_NO_PAD.decode(cursor.as_str()).unwrap_or_default();
        // The body after version and fingerprint, before the checksum.
        let body = raw
            .get(17..raw.len().saturating_sub(16))
            .unwrap_or_default();
        out.push(seed(
            "cursor",
            format!("{name}-body"),
            [&[sources], body].concat(),
        ));
        let text = cursor.as_str().as_bytes();
        out.push(seed(
            "cursor",
            format!("{name}-text"),
            [&[sources], text].concat(),
        ));
    }
    out
}

/// A profile of every field set, nested and deep.
pub fn profile() -> Profile {
    let mut tree = Tree::Number(-7);
    for depth in 0..30u32 {
        tree = if depth.is_multiple_of(2) {
            Tree::List(vec![tree, Tree::Flag(true)])
        } else {
            Tree::Map(BTreeMap::from([
                ("k".to_owned(), tree),
                ("t".to_owned(), Tree::Text("x".into())),
            ]))
        };
    }
    let address = Address {
        street: "1 Main St".into(),
        zip: Some(12345),
        lines: vec!["flat 2".into(), "".into()],
        geo: Some(Geo {
            lat: 51.5,
            lon: -0.12,
        }),
    };
    Profile {
        id: "p-1".into(),
        name: "Ada".into(),
        age: 36,
        balance: i64::MIN,
        total: u64::MAX,
        big: 12_345_678_901_234_567_890_123_456_789_012_345_678,
        score: 1.5e125,
        active: Some(true),
        tags: ["a", "b", "c"].map(String::from).into(),
        ordered: ["x", "y"].map(String::from).into(),
        counts: HashMap::from([("n".to_owned(), -1), ("m".to_owned(), 9)]),
        nested: BTreeMap::from([("k".to_owned(), vec![Some(1), None, Some(u32::MAX)])]),
        address: Some(address.clone()),
        previous: vec![address],
        status: Status::Suspended {
            reason: "late".into(),
            until: Some(99),
        },
        tree: Some(tree),
        photo: Binary(vec![0, 1, 2, 255]),
        seen: Some(time::macros::datetime!(2024-02-29 23:59:59.999999999 UTC)),
        born: Some(time::macros::date!(1815 - 12 - 10)),
        version: 3,
    }
}

fn items() -> Vec<Seed> {
    let full = profile();
    let mut small = full.clone();
    small.tree = None;
    small.address = None;
    small.previous.clear();
    small.status = Status::Active;
    [("full", full), ("small", small)]
        .into_iter()
        .filter_map(|(name, p)| {
            Some(seed(
                "item",
                name,
                map_input(&p.to_item().ok()?, PROFILE_NAMES),
            ))
        })
        .collect()
}

fn key_seed(pick: u8, item: Option<Item>) -> Option<Vec<u8>> {
    let item = item?;
    let pk = item.get("PK")?.as_s().ok()?;
    let sk = item.get("SK")?.as_s().ok()?;
    Some([&[pick], pk.as_bytes(), &[0], sk.as_bytes()].concat())
}

fn keys() -> Vec<Seed> {
    let at = time::macros::datetime!(2020-04-24 14:40:00.250 UTC);
    let whole = time::macros::datetime!(2020-04-24 14:40:00 UTC);
    let seeds = [
        key_seed(
            0,
            HashKeys {
                id: "a#b\\c".into(),
                n: 42,
                at: -5,
                small: -128,
            }
            .to_item()
            .ok(),
        ),
        key_seed(
            1,
            DotKeys {
                device: -12345,
                seq: 7,
                state: "WARNING1".into(),
            }
            .to_item()
            .ok(),
        ),
        key_seed(
            2,
            UnderscoreKeys {
                day: at.date(),
                at: whole,
                at_ms: at,
                local: time::PrimitiveDateTime::new(whole.date(), whole.time()),
            }
            .to_item()
            .ok(),
        ),
        key_seed(
            3,
            PipeKeys {
                secs: whole,
                millis: at,
                plain: at,
            }
            .to_item()
            .ok(),
        ),
        key_seed(
            4,
            ColonKeys {
                id: uuid::Uuid::from_u128(0x1234),
                name: "x:y".into(),
                rank: 5,
                when: at,
            }
            .to_item()
            .ok(),
        ),
    ];
    seeds
        .into_iter()
        .enumerate()
        .filter_map(|(i, s)| Some(seed("keys", format!("format-{i}"), s?)))
        .collect()
}

fn manifest(token: &str, n: u32, len: u64, crc: u32) -> AttributeValue {
    AttributeValue::M(Item::from([
        ("t".to_owned(), s(token)),
        ("n".to_owned(), AttributeValue::N(n.to_string())),
        ("len".to_owned(), AttributeValue::N(len.to_string())),
        ("crc".to_owned(), AttributeValue::N(crc.to_string())),
    ]))
}

fn chunks() -> Vec<Seed> {
    const NAMES: &[&str] = &["t", "n", "len", "crc"];
    let small = Packed {
        id: "p".into(),
        text: Chunked::new("hi".into()),
        raw: Chunked::new(vec![1, 2]),
    };
    let inline = small.to_item().ok().unwrap_or_default();
    let value = |name: &str| {
        inline
            .get(name)
            .cloned()
            .unwrap_or(AttributeValue::Null(true))
    };
    let payload = zstd_value(&"chunked text ".repeat(200));
    let m = manifest("01HZX", 2, payload.len() as u64, crc32fast::hash(&payload));
    vec![
        seed(
            "chunk",
            "inline",
            [
                value_input(&value("text"), NAMES),
                value_input(&value("raw"), NAMES),
            ]
            .concat(),
        ),
        seed(
            "chunk",
            "manifests",
            [
                value_input(&m, NAMES),
                value_input(&manifest("tok", 1, 3, 0), NAMES),
                payload,
            ]
            .concat(),
        ),
    ]
}

/// The stored bytes of `text` in [`Squeezed`]'s zstd field.
fn zstd_value(text: &str) -> Vec<u8> {
    stored(
        &Squeezed {
            id: "s".into(),
            z: text.as_bytes().to_vec(),
            g: String::new(),
            tree: None,
        },
        "z",
    )
}

fn stored(entity: &Squeezed, field: &str) -> Vec<u8> {
    entity
        .to_item()
        .ok()
        .and_then(|item| item.get(field)?.as_b().ok().map(|b| b.as_ref().to_vec()))
        .unwrap_or_default()
}

fn compressed() -> Vec<Seed> {
    let text = "a value that compresses well ".repeat(40);
    let bomb = "\0".repeat(1 << 20);
    let value = |z: &str, g: &str, tree: Option<Tree>| Squeezed {
        id: "s".into(),
        z: z.as_bytes().to_vec(),
        g: g.into(),
        tree,
    };
    let tree = Some(Tree::List(vec![Tree::Text(text.clone()), Tree::Number(1)]));
    let mut out = Vec::new();
    for (name, entity) in [
        ("text", value(&text, &text, tree)),
        ("short", value("ab", "ab", None)),
    ] {
        for (i, field) in ["z", "g", "tree"].into_iter().enumerate() {
            out.push(seed(
                "compress",
                format!("{name}-{field}"),
                [&[i as u8][..], &stored(&entity, field)].concat(),
            ));
        }
    }
    // Bombs: a megabyte of zeros in a few hundred bytes (the fields' bound is 4 KiB), and
    // the same frames cut short.
    let bombs = dynamo_model_bombs(&bomb);
    for (i, (name, bytes)) in bombs.into_iter().enumerate() {
        let pick = if name.starts_with('z') { 0 } else { 1 };
        let cut = bytes[..bytes.len() / 2].to_vec();
        out.push(seed(
            "compress",
            format!("bomb-{name}"),
            [&[pick], &bytes[..]].concat(),
        ));
        out.push(seed(
            "compress",
            format!("truncated-{i}"),
            [&[pick], &cut[..]].concat(),
        ));
    }
    out
}

/// Stored values of `value` compressed by each codec (tag and frame), written by a field
/// whose bound holds it.
fn dynamo_model_bombs(value: &str) -> Vec<(&'static str, Vec<u8>)> {
    #[derive(Entity)]
    #[dynamo(table = crate::Rig, pk = "BOMB", sk = "BOMB")]
    struct Bomb {
        #[dynamo(compress(codec = "zstd", threshold = 0, max_size = 2097152))]
        z: String,
        #[dynamo(compress(codec = "gzip", threshold = 0, max_size = 2097152))]
        g: String,
    }
    let item = Bomb {
        z: value.into(),
        g: value.into(),
    }
    .to_item()
    .ok()
    .unwrap_or_default();
    ["z", "g"]
        .into_iter()
        .filter_map(|f| Some((f, item.get(f)?.as_b().ok()?.as_ref().to_vec())))
        .collect()
}

/// DynamoDB's JSON of a value, as Lambda delivers images.
fn json(value: &AttributeValue) -> serde_json::Value {
    use serde_json::json;
    let b64 = |b: &[u8]| json!(STANDARD.encode(b));
    match value {
        AttributeValue::S(v) => json!({ "S": v }),
        AttributeValue::N(v) => json!({ "N": v }),
        AttributeValue::B(v) => json!({ "B": b64(v.as_ref()) }),
        AttributeValue::Bool(v) => json!({ "BOOL": v }),
        AttributeValue::Ss(v) => json!({ "SS": v }),
        AttributeValue::Ns(v) => json!({ "NS": v }),
        AttributeValue::Bs(v) => {
            json!({ "BS": v.iter().map(|b| b64(b.as_ref())).collect::<Vec<_>>() })
        }
        AttributeValue::L(v) => json!({ "L": v.iter().map(json).collect::<Vec<_>>() }),
        AttributeValue::M(v) => json!({ "M": json_item(v) }),
        _ => json!({ "NULL": true }),
    }
}

fn json_item(item: &Item) -> serde_json::Value {
    serde_json::Value::Object(item.iter().map(|(k, v)| (k.clone(), json(v))).collect())
}

fn streams() -> Vec<Seed> {
    let mut p = profile();
    p.tree = None;
    let new = p.to_item().ok().unwrap_or_default();
    let keys = key("PROFILE#p-1", "PROFILE");
    let lambda = serde_json::json!({
        "eventID": "1", "eventName": "MODIFY", "eventVersion": "1.1",
        "eventSource": "aws:dynamodb", "awsRegion": "us-east-1",
        "dynamodb": {
            "ApproximateCreationDateTime": 1_700_000_000,
            "Keys": json_item(&keys), "NewImage": json_item(&new), "OldImage": json_item(&new),
            "SequenceNumber": "111", "SizeBytes": 26, "StreamViewType": "NEW_AND_OLD_IMAGES"
        }
    });
    let ttl = serde_json::json!({
        "eventID": "2", "eventName": "REMOVE", "eventVersion": "1.1",
        "eventSource": "aws:dynamodb", "awsRegion": "us-east-1",
        "userIdentity": { "type": "Service", "principalId": "dynamodb.amazonaws.com" },
        "dynamodb": { "Keys": json_item(&keys), "SequenceNumber": "222", "SizeBytes": 26, "StreamViewType": "KEYS_ONLY" }
    });
    let mut sdk = vec![1u8, 1, 3];
    for image in [&keys, &new, &new] {
        sdk.extend(map_input(image, PROFILE_NAMES));
    }
    text_input(&mut sdk, b"111");
    text_input(&mut sdk, b"id-1");
    vec![
        seed(
            "stream",
            "lambda-modify",
            [&[0u8][..], lambda.to_string().as_bytes()].concat(),
        ),
        seed(
            "stream",
            "lambda-ttl",
            [&[0u8][..], ttl.to_string().as_bytes()].concat(),
        ),
        seed("stream", "sdk-modify", sdk),
    ]
}

fn checkpoints() -> Vec<Seed> {
    let positions = [
        Position::After(key("CTR#1", "CTR")),
        Position::Done,
        Position::Start,
    ];
    let cursor = codec::encode_positions(FINGERPRINT, &positions, SECRET);
    let text = format!("v1 {cursor} 100 40 50 10 0 0 0 0 12.5 40\n");
    vec![
        seed("checkpoint", "saved", text.into_bytes()),
        seed("checkpoint", "fresh", b"v1 AA 0 0 0 0 0 0 0 0 0 0".to_vec()),
    ]
}
