use super::*;
use crate::schema::KeyAttribute;
use proptest::prelude::*;

fn table() -> &'static TableSchema {
    &<App as crate::Table>::SCHEMA
}

#[derive(crate::Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

const EMAIL: Constraint = Constraint {
    name: "email",
    attributes: &["email"],
};

const PAIR: Constraint = Constraint {
    name: "slot",
    attributes: &["room", "at"],
};

fn item(pairs: &[(&str, AttributeValue)]) -> Item {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

fn s(v: &str) -> AttributeValue {
    AttributeValue::S(v.to_owned())
}

#[test]
fn a_value_is_its_escaped_text_and_an_absent_part_holds_none() {
    let text = value_text("User", &EMAIL, &item(&[("email", s("a#b c"))])).unwrap();
    assert_eq!(text.as_deref(), Some("a%23b%20c"));
    assert_eq!(value_text("User", &EMAIL, &item(&[])).unwrap(), None);
    let null = item(&[("email", AttributeValue::Null(true))]);
    assert_eq!(value_text("User", &EMAIL, &null).unwrap(), None);
    let pair = item(&[("room", s("r#1")), ("at", AttributeValue::N("5".into()))]);
    assert_eq!(
        value_text("Booking", &PAIR, &pair).unwrap().as_deref(),
        Some("r%231#5E0")
    );
    let half = item(&[("room", s("r"))]);
    assert_eq!(value_text("Booking", &PAIR, &half).unwrap(), None);
    let list = item(&[("email", AttributeValue::L(vec![]))]);
    let err = value_text("User", &EMAIL, &list).unwrap_err();
    assert_eq!(err.validation_reason(), Some(ValidationReason::UniqueValue));
}

#[test]
fn a_number_has_one_text_whatever_its_spelling() {
    let text = |n: &str| {
        let item = item(&[("room", s("r")), ("at", AttributeValue::N(n.into()))]);
        value_text("Booking", &PAIR, &item).unwrap().unwrap()
    };
    assert_eq!(text("1.50"), text("1.5"));
    assert_eq!(text("15E-1"), text("1.5"));
    assert_eq!(text("-0"), text("0.0"));
    assert_ne!(text("1.5"), text("-1.5"));
    assert_ne!(text("1.5"), text("15"));
}

#[test]
fn a_sentinel_key_names_entity_constraint_and_value_and_is_within_the_limit() {
    let key = sentinel_key(table(), "User", &EMAIL, "a%40b").unwrap();
    assert_eq!(key.pk, "_UNIQUE#User#email#a%40b");
    assert_eq!(key.sk.as_deref(), Some(UNIQUE_SORT_KEY));
    assert!(is_sentinel_key(&key));
    let long = "x".repeat(crate::key::MAX_PARTITION_KEY_BYTES);
    let err = sentinel_key(table(), "User", &EMAIL, &long).unwrap_err();
    assert_eq!(err.validation_reason(), Some(ValidationReason::UniqueValue));
}

#[test]
fn a_sentinel_names_its_owner() {
    let key = sentinel_key(table(), "User", &EMAIL, "a").unwrap();
    let owner = RawKey {
        pk: "USER#1".into(),
        sk: Some("PROFILE".into()),
    };
    let item = sentinel_item(table(), &key, &owner);
    assert_eq!(item["_type"], s(UNIQUE_TYPE));
    assert_eq!(owner_of(&item), Some(owner));
}

#[test]
fn tables_with_keys_other_than_strings_are_refused() {
    let mut numeric = *table();
    numeric.pk = KeyAttribute {
        name: "id",
        ty: ScalarType::N,
    };
    assert!(check_table("User", &numeric).is_err());
    assert!(check_table("User", table()).is_ok());
}

proptest! {
    /// Two different values (of one constraint, or of a group's parts) never share a
    /// sentinel: the key is injective in the parts.
    #[test]
    fn different_values_have_different_sentinels(
        a in proptest::collection::vec(".{0,6}", 2),
        b in proptest::collection::vec(".{0,6}", 2),
    ) {
        let text = |parts: &[String]| {
            value_text("Booking", &PAIR, &item(&[("room", s(&parts[0])), ("at", s(&parts[1]))]))
                .unwrap()
                .unwrap()
        };
        let (ka, kb) = (
            sentinel_key(table(), "Booking", &PAIR, &text(&a)).unwrap(),
            sentinel_key(table(), "Booking", &PAIR, &text(&b)).unwrap(),
        );
        prop_assert_eq!(a == b, ka == kb);
    }
}
