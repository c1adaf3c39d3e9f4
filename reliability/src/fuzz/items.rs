//! Items as DynamoDB returns them (any attribute map), decoded into entities: every field
//! kind, every key format and delimiter, chunk manifests and payloads, compressed values.

use super::entities::{
    ColonKeys, DotKeys, HashKeys, PACKED_MAX, PROFILE_NAMES, Packed, PipeKeys, Profile,
    SQUEEZED_MAX, Squeezed, UnderscoreKeys,
};
use super::input::{Input, normalized};
use dynamo_model::__private::EntityInternals;
use dynamo_model::aws_sdk_dynamodb::primitives::Blob;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::{Entity, Item};

/// Decodes an attribute map as a [`Profile`]; what decodes must encode to an item that
/// decodes to an entity encoding to the same item again.
pub fn item(data: &[u8]) {
    let item = Input::new(data).map(PROFILE_NAMES, 0);
    stable::<Profile>(item);
}

/// Decodes `item` as an `E`: when it decodes, encoding it and decoding again must give the
/// same item (sets in any order).
fn stable<E: Entity>(item: Item) -> Option<E> {
    let entity = E::from_item(item).ok()?;
    let Ok(first) = entity.to_item() else {
        return Some(entity);
    };
    let Ok(again) = E::from_item(first.clone()) else {
        // Only a chunked value too large to stay inline encodes to what no read takes:
        // the mark that a put must write its chunks first.
        assert!(
            E::__CHUNKED
                .iter()
                .any(|f| { matches!(first.get(f.attribute), Some(AttributeValue::Null(true))) })
        );
        return Some(entity);
    };
    let second = again.to_item().expect("a decoded entity encodes");
    assert_eq!(normalized(&first), normalized(&second));
    Some(again)
}

/// Decodes keys of every format and delimiter: the first byte picks the entity, the
/// rest is the partition key, a zero byte, then the sort key. A key that decodes must
/// render back to the same text (decoding accepts exactly the text a key holds).
pub fn keys(data: &[u8]) {
    let mut input = Input::new(data);
    let pick = input.byte();
    let rest = input.rest();
    let (pk, sk) = match rest.iter().position(|&b| b == 0) {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (rest, &[][..]),
    };
    let pk = String::from_utf8_lossy(pk).into_owned();
    let sk = String::from_utf8_lossy(sk).into_owned();
    match pick % 5 {
        0 => rerenders::<HashKeys>(&pk, &sk),
        1 => rerenders::<DotKeys>(&pk, &sk),
        2 => rerenders::<UnderscoreKeys>(&pk, &sk),
        3 => rerenders::<PipeKeys>(&pk, &sk),
        _ => rerenders::<ColonKeys>(&pk, &sk),
    }
}

fn rerenders<E: Entity>(pk: &str, sk: &str) {
    let item = Item::from([
        ("PK".to_owned(), AttributeValue::S(pk.to_owned())),
        ("SK".to_owned(), AttributeValue::S(sk.to_owned())),
        (
            "_type".to_owned(),
            AttributeValue::S(E::ENTITY_TYPE.to_owned()),
        ),
    ]);
    let Some(entity) = stable::<E>(item) else {
        return;
    };
    let key = entity.primary_key();
    let raw = key.raw().expect("a decoded entity's key renders");
    assert_eq!((raw.pk.as_str(), raw.sk.as_deref()), (pk, Some(sk)));
}

/// Decodes a [`Packed`] item whose chunked fields hold any value (an inline value or a
/// manifest), then fills each manifest's field with the rest of the input as if its
/// chunks held it. A compressed value never expands past its field's bound.
pub fn chunk(data: &[u8]) {
    let mut input = Input::new(data);
    let mut item = Item::from([
        ("PK".to_owned(), AttributeValue::S("PACKED#p".into())),
        ("SK".to_owned(), AttributeValue::S("PACKED".into())),
        ("_type".to_owned(), AttributeValue::S("Packed".into())),
        ("id".to_owned(), AttributeValue::S("p".into())),
    ]);
    const NAMES: &[&str] = &["t", "n", "len", "crc"];
    for field in ["text", "raw"] {
        item.insert(field.to_owned(), input.value(NAMES, 0));
    }
    let Some(mut packed) = stable::<Packed>(item) else {
        return;
    };
    let payload = input.rest();
    for (i, field) in Packed::__CHUNKED.iter().enumerate() {
        if let Some(slot) = packed.__chunk_slot_mut(i)
            && slot.manifest().is_some()
        {
            let _ = slot.fill(payload, field);
        }
    }
    if let Some(text) = packed.text.get() {
        assert!(text.len() <= PACKED_MAX.max(payload.len()));
    }
}

/// Decodes a [`Squeezed`] item whose compressed fields hold the input's bytes (a stored
/// value: a tag, then a zstd frame, a gzip member or the bytes as they are). A value
/// read never exceeds the field's bound (no bomb gets through), and it re-encodes.
pub fn compress(data: &[u8]) {
    let mut input = Input::new(data);
    let pick = input.byte();
    let stored = AttributeValue::B(Blob::new(input.rest()));
    let field = ["z", "g", "tree"][usize::from(pick % 3)];
    let mut item = Item::from([
        ("PK".to_owned(), AttributeValue::S("SQUEEZED#s".into())),
        ("SK".to_owned(), AttributeValue::S("SQUEEZED".into())),
        ("_type".to_owned(), AttributeValue::S("Squeezed".into())),
        ("id".to_owned(), AttributeValue::S("s".into())),
        ("z".to_owned(), AttributeValue::B(Blob::new([0u8]))),
        ("g".to_owned(), AttributeValue::B(Blob::new([0u8]))),
    ]);
    item.insert(field.to_owned(), stored);
    if let Some(squeezed) = stable::<Squeezed>(item) {
        assert!(squeezed.z.len() <= SQUEEZED_MAX.max(data.len()));
        assert!(squeezed.g.len() <= SQUEEZED_MAX.max(data.len()));
    }
}
