use super::envelope::{Reader, serialise};
use super::*;
use crate::error::{DecodeErrorKind, EncryptionError};
use crate::stream::tests::value;
use crate::{Item, RawKey};
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue;
use proptest::prelude::*;

#[derive(crate::Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

fn fields(entity: &'static str, attributes: &'static [&'static str]) -> Fields<'static> {
    Fields {
        schema: &<App as crate::Table>::SCHEMA,
        entity,
        attributes,
    }
}

fn keys() -> LocalKeys {
    LocalKeys::new("k1", DataKey::new([1; 32]))
}

fn item(pk: &str, sk: &str, secret: AttributeValue) -> Item {
    Item::from([
        ("PK".to_owned(), AttributeValue::S(pk.to_owned())),
        ("SK".to_owned(), AttributeValue::S(sk.to_owned())),
        ("ssn".to_owned(), secret),
    ])
}

fn sealed(keys: &dyn KeyProvider, pk: &str, secret: AttributeValue) -> Item {
    let mut item = item(pk, "S", secret);
    seal_item(Some(keys), fields("User", &["ssn"]), &mut item).unwrap();
    item
}

fn opened(keys: Option<&dyn KeyProvider>, mut item: Item) -> Result<Item, EncryptionError> {
    match open_item(keys, fields("User", &["ssn"]), &mut item) {
        Ok(()) => Ok(item),
        Err(e) => match e.kind {
            DecodeErrorKind::Encryption(e) => Ok(Err(e)?),
            other => panic!("unexpected {other:?}"),
        },
    }
}

proptest! {
    #[test]
    fn every_value_round_trips(v in value()) {
        let mut bytes = Vec::new();
        serialise(&mut bytes, &v).unwrap();
        let mut reader = Reader { bytes: &bytes };
        prop_assert_eq!(reader.value(0).unwrap(), v.clone());
        prop_assert!(reader.bytes.is_empty());
        let keys = keys();
        let stored = sealed(&keys, "U#1", v.clone());
        let back = opened(Some(&keys), stored).unwrap();
        prop_assert_eq!(back.get("ssn"), Some(&v));
    }

    #[test]
    fn any_changed_byte_is_refused(v in value(), at in any::<usize>(), flip in 1u8..) {
        let keys = keys();
        let mut stored = sealed(&keys, "U#1", v);
        let AttributeValue::B(blob) = &stored["ssn"] else { panic!("not sealed") };
        let mut bytes = blob.clone().into_inner();
        let at = at % bytes.len();
        bytes[at] ^= flip;
        stored.insert("ssn".to_owned(), AttributeValue::B(Blob::new(bytes)));
        prop_assert!(opened(Some(&keys), stored).is_err());
    }

    #[test]
    fn truncated_envelopes_are_refused(v in value(), len in any::<usize>()) {
        let keys = keys();
        let mut stored = sealed(&keys, "U#1", v);
        let AttributeValue::B(blob) = &stored["ssn"] else { panic!("not sealed") };
        let bytes = blob.as_ref();
        let cut = bytes[..len % bytes.len()].to_vec();
        stored.insert("ssn".to_owned(), AttributeValue::B(Blob::new(cut)));
        prop_assert!(opened(Some(&keys), stored).is_err());
    }

    #[test]
    fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = Reader { bytes: &bytes }.value(0);
        let stored = item("U#1", "S", AttributeValue::B(Blob::new(bytes)));
        prop_assert!(opened(Some(&keys()), stored).is_err());
    }
}

#[test]
fn a_ciphertext_moved_to_another_item_attribute_or_entity_is_refused() {
    let keys = keys();
    let secret = AttributeValue::S("123-45-6789".into());
    let stored = sealed(&keys, "U#1", secret.clone());
    let envelope = stored["ssn"].clone();
    // Another item.
    let moved = item("U#2", "S", envelope.clone());
    assert_eq!(opened(Some(&keys), moved), Err(EncryptionError::Rejected));
    // Another sort key.
    let moved = item("U#1", "T", envelope.clone());
    assert_eq!(opened(Some(&keys), moved), Err(EncryptionError::Rejected));
    // Another attribute.
    let mut other = item("U#1", "S", AttributeValue::Null(true));
    other.insert("pin".into(), envelope.clone());
    let mut other2 = other.clone();
    let e = open_item(Some(&keys), fields("User", &["pin"]), &mut other).unwrap_err();
    assert_eq!(e.attribute.as_deref(), Some("pin"));
    assert!(matches!(
        e.kind,
        DecodeErrorKind::Encryption(EncryptionError::Rejected)
    ));
    // Another entity type.
    let e = open_item(Some(&keys), fields("Admin", &["pin"]), &mut other2).unwrap_err();
    assert!(matches!(
        e.kind,
        DecodeErrorKind::Encryption(EncryptionError::Rejected)
    ));
    // In place, it opens.
    assert_eq!(opened(Some(&keys), stored).unwrap()["ssn"], secret);
}

#[test]
fn the_envelope_holds_no_plaintext_and_two_seals_differ() {
    let keys = keys();
    let secret = AttributeValue::S("very secret text".into());
    let a = sealed(&keys, "U#1", secret.clone());
    let b = sealed(&keys, "U#1", secret);
    let AttributeValue::B(blob) = &a["ssn"] else {
        panic!("not sealed")
    };
    let bytes = blob.as_ref();
    assert_eq!(bytes[0], FORMAT_VERSION);
    assert!(!bytes.windows(6).any(|w| w == b"secret"));
    assert_ne!(a["ssn"], b["ssn"], "a fresh nonce per value");
    assert_eq!(bytes.len(), ENVELOPE_OVERHEAD + 2 + 1 + 4 + 16);
}

#[test]
fn rotation_keeps_old_values_readable_and_seals_with_the_new_key() {
    let old = sealed(&keys(), "U#1", AttributeValue::N("7".into()));
    let rotated = keys().rotate("k2", DataKey::new([2; 32]));
    assert_eq!(
        opened(Some(&rotated), old.clone()).unwrap()["ssn"],
        AttributeValue::N("7".into())
    );
    let new = sealed(&rotated, "U#1", AttributeValue::N("8".into()));
    let AttributeValue::B(blob) = &new["ssn"] else {
        panic!("not sealed")
    };
    assert_eq!(&blob.as_ref()[1..4], b"\x02k2");
    // Without the old key, its values no longer open; with a wrong key under its id,
    // they do not authenticate.
    let only_new = LocalKeys::new("k2", DataKey::new([2; 32]));
    assert_eq!(
        opened(Some(&only_new), old.clone()),
        Err(EncryptionError::UnknownKey("k1".into()))
    );
    let wrong = LocalKeys::new("k1", DataKey::new([9; 32]));
    assert_eq!(
        opened(Some(&wrong), old.clone()),
        Err(EncryptionError::Rejected)
    );
    assert_eq!(opened(None, old), Err(EncryptionError::NoKeys));
}

#[test]
fn plain_values_where_a_ciphertext_belongs_are_refused() {
    let plain = item("U#1", "S", AttributeValue::S("123".into()));
    assert!(matches!(
        opened(Some(&keys()), plain),
        Err(EncryptionError::Malformed(_))
    ));
    // An item without the attribute opens as it is (an absent optional field).
    let mut absent = item("U#1", "S", AttributeValue::Null(true));
    absent.remove("ssn");
    assert_eq!(opened(None, absent.clone()).unwrap(), absent);
}

#[test]
fn writes_without_a_key_are_refused() {
    let mut plain = item("U#1", "S", AttributeValue::S("123".into()));
    let e = seal_item(None, fields("User", &["ssn"]), &mut plain).unwrap_err();
    assert!(e.to_string().contains("no key provider"), "{e}");
    let bad_id = LocalKeys::new("", DataKey::new([1; 32]));
    let e = seal_item(Some(&bad_id), fields("User", &["ssn"]), &mut plain).unwrap_err();
    assert!(matches!(
        e,
        crate::Error::Validation {
            reason: crate::ValidationReason::EncryptionKeys,
            ..
        }
    ));
    let key = RawKey {
        pk: "U#1".into(),
        sk: Some("S".into()),
    };
    assert!(
        seal_value(
            Some(&keys()),
            "User",
            "ssn",
            &key,
            &AttributeValue::S("x".into())
        )
        .is_ok()
    );
}

#[test]
fn keys_never_show_in_debug() {
    let keys = keys();
    assert!(!format!("{keys:?}").contains("1, 1"));
    assert!(DataKey::from_slice(&[0; 31]).is_none());
    assert!(DataKey::generate().is_some());
}

/// Stored bytes are a contract: an envelope this format wrote (key `k1` = 32 bytes of 1,
/// item `PK=U#1, SK=S`, attribute `ssn` of `User`) opens to its value in every later build.
const GOLDEN: &str = "01026b3153d1ef51fffa7d6a455e71cfbc6740d1ae08d69da8e13d6a515bed21de064ab6a62c89ec4e49347bbe2fd6bb";

#[test]
fn an_envelope_an_earlier_build_wrote_still_opens() {
    let bytes: Vec<u8> = (0..GOLDEN.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&GOLDEN[i..i + 2], 16).unwrap())
        .collect();
    let stored = item("U#1", "S", AttributeValue::B(Blob::new(bytes)));
    let back = opened(Some(&keys()), stored).unwrap();
    assert_eq!(back["ssn"], AttributeValue::S("123-45-6789".into()));
}
