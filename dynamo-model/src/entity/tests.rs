use crate::{DecodeErrorKind, Entity, Item, Table};
use aws_sdk_dynamodb::types::AttributeValue;
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct App;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "USER#{user}", sk = "ORDER#{placed}#{id}",
         index(GSI1, pk = "OPEN#{region}", sk = "{placed}#{id}"))]
struct Order {
    user: String,
    id: String,
    placed: i64,
    region: Option<String>,
    total: u64,
}

fn order() -> impl Strategy<Value = Order> {
    (
        "[a-z#\"$]{0,6}",
        "\\PC{0,6}",
        any::<i64>(),
        proptest::option::of("[A-Z#]{0,4}"),
        any::<u64>(),
    )
        .prop_map(|(user, id, placed, region, total)| Order {
            user,
            id,
            placed,
            region,
            total,
        })
}

fn kind_of(item: Item) -> (Option<String>, DecodeErrorKind) {
    match Order::from_item(item) {
        Ok(order) => panic!("decoded {order:?}"),
        Err(e) => (e.attribute, e.kind),
    }
}

proptest! {
    /// Every item the crate writes decodes back; changing any key attribute the item
    /// carries (or adding a sparse index key the fields leave out) is a key mismatch
    /// on exactly that attribute.
    #[test]
    fn key_attributes_must_be_what_the_fields_render(order in order(), other in order(), junk in "\\PC{1,8}") {
        let item = order.to_item().unwrap();
        prop_assert_eq!(Order::from_item(item.clone()).unwrap(), order.clone());
        let other_item = other.to_item().unwrap();
        for attribute in ["PK", "SK", "GSI1PK", "GSI1SK"] {
            let replacement = other_item
                .get(attribute)
                .filter(|v| Some(*v) != item.get(attribute))
                .cloned()
                .unwrap_or_else(|| AttributeValue::S(format!("{junk}#x")));
            let mut forged = item.clone();
            let present = forged.insert(attribute.to_owned(), replacement).is_some();
            let (at, kind) = kind_of(forged);
            prop_assert_eq!(at.as_deref(), Some(attribute));
            match kind {
                DecodeErrorKind::KeyMismatch { expected, .. } => {
                    prop_assert_eq!(expected.is_some(), present || attribute.starts_with(['P', 'S']));
                }
                other => prop_assert!(false, "{:?}", other),
            }
        }
    }
}

#[test]
fn key_attributes_must_be_present_and_strings() {
    let order = Order {
        user: "u".into(),
        id: "o".into(),
        placed: 1,
        region: Some("EU".into()),
        total: 3,
    };
    let item = order.to_item().unwrap();
    let mut without_sk = item.clone();
    without_sk.remove("SK");
    assert_eq!(
        kind_of(without_sk),
        (Some("SK".into()), DecodeErrorKind::Missing)
    );
    let mut numeric = item.clone();
    numeric.insert("GSI1SK".into(), AttributeValue::N("1".into()));
    assert_eq!(
        kind_of(numeric),
        (
            Some("GSI1SK".into()),
            DecodeErrorKind::WrongType {
                expected: "S",
                found: "N"
            }
        )
    );
    // Index keys may be absent: the item is then only missing from the index.
    let mut unindexed = item;
    unindexed.remove("GSI1PK");
    unindexed.remove("GSI1SK");
    assert_eq!(Order::from_item(unindexed).unwrap(), order);
}
