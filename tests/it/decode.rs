//! Decoding: foreign entity types, missing and mistyped attributes, stored layout.

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::{local, Db, DecodeErrorKind, Error, Item};

async fn put_raw(db: &Db<App>, item: Item) -> TestResult {
    db.client()
        .put_item()
        .table_name(db.table_name())
        .set_item(Some(item))
        .send()
        .await?;
    Ok(())
}

async fn get_raw(
    db: &Db<App>,
    pk: &str,
    sk: &str,
) -> Result<Item, Box<dyn std::error::Error + Send + Sync>> {
    let out = db
        .client()
        .get_item()
        .table_name(db.table_name())
        .key("PK", AttributeValue::S(pk.into()))
        .key("SK", AttributeValue::S(sk.into()))
        .send()
        .await?;
    out.item.ok_or_else(|| "no item".into())
}

fn s(v: &str) -> AttributeValue {
    AttributeValue::S(v.into())
}

fn user_item() -> Item {
    Item::from([
        ("PK".into(), s("USER#u-1")),
        ("SK".into(), s("PROFILE")),
        ("_type".into(), s("User")),
        ("userId".into(), s("u-1")),
        ("displayName".into(), s("One")),
        ("loginCount".into(), AttributeValue::N("3".into())),
        ("tags".into(), AttributeValue::L(vec![])),
    ])
}

fn decode_kind(err: Error) -> (Option<String>, Option<String>, DecodeErrorKind) {
    match err {
        Error::Decode(e) => (e.key, e.attribute, e.kind),
        other => panic!("expected a decode error, got {other:?}"),
    }
}

#[tokio::test]
async fn an_item_of_another_entity_type_is_a_typed_error() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    db.put(&User::sample("u-1")).await?;
    let err = db.get(Impostor::key("u-1")).await.unwrap_err();
    let message = err.to_string();
    let (key, attribute, kind) = decode_kind(err);
    assert_eq!(key.as_deref(), Some("PK=USER#u-1, SK=PROFILE"));
    assert_eq!(attribute, None);
    assert_eq!(
        kind,
        DecodeErrorKind::WrongEntityType {
            expected: "Impostor",
            found: Some("User".into())
        }
    );
    assert!(
        message.contains("Impostor") && message.contains("USER#u-1"),
        "{message}"
    );
    Ok(())
}

#[tokio::test]
async fn an_item_without_entity_type_is_refused() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let mut item = user_item();
    item.remove("_type");
    put_raw(&db, item).await?;
    let (_, _, kind) = decode_kind(db.get(User::key("u-1")).await.unwrap_err());
    assert_eq!(
        kind,
        DecodeErrorKind::WrongEntityType {
            expected: "User",
            found: None
        }
    );
    Ok(())
}

#[tokio::test]
async fn missing_wrong_typed_and_out_of_range_attributes_name_the_attribute() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    put_raw(&db, user_item()).await?;
    assert!(db.get(User::key("u-1")).await?.is_some());

    let mut item = user_item();
    item.remove("displayName");
    put_raw(&db, item).await?;
    let (key, attribute, kind) = decode_kind(db.get(User::key("u-1")).await.unwrap_err());
    assert_eq!(key.as_deref(), Some("PK=USER#u-1, SK=PROFILE"));
    assert_eq!(attribute.as_deref(), Some("displayName"));
    assert_eq!(kind, DecodeErrorKind::Missing);

    let mut item = user_item();
    item.insert("loginCount".into(), s("three"));
    put_raw(&db, item).await?;
    let (_, attribute, kind) = decode_kind(db.get(User::key("u-1")).await.unwrap_err());
    assert_eq!(attribute.as_deref(), Some("loginCount"));
    assert_eq!(
        kind,
        DecodeErrorKind::WrongType {
            expected: "N",
            found: "S"
        }
    );

    let mut item = user_item();
    item.insert("loginCount".into(), AttributeValue::N("99999999999".into()));
    put_raw(&db, item).await?;
    let (_, attribute, kind) = decode_kind(db.get(User::key("u-1")).await.unwrap_err());
    assert_eq!(attribute.as_deref(), Some("loginCount"));
    assert!(matches!(kind, DecodeErrorKind::Invalid(_)), "{kind:?}");
    Ok(())
}

#[tokio::test]
async fn stored_layout_follows_serde_names_and_sparse_index_rules() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let mut user = User::sample("u-1");
    db.put(&user).await?;
    let item = get_raw(&db, "USER#u-1", "PROFILE").await?;
    let mut names: Vec<&str> = item.keys().map(String::as_str).collect();
    names.sort_unstable();
    // `email` is None: neither the attribute nor the GSI1 key attributes are written.
    // `_wt`: the put's write token (16 characters), to recognise its own write on a retry.
    assert_eq!(
        names,
        [
            "PK",
            "SK",
            "_type",
            "_wt",
            "displayName",
            "loginCount",
            "tags",
            "userId"
        ]
    );
    assert_eq!(item.get("_type"), Some(&s("User")));
    assert!(matches!(item.get("_wt"), Some(AttributeValue::S(t)) if t.len() == 16));

    user.email = Some("one@example.com".into());
    db.put(&user).await?;
    let item = get_raw(&db, "USER#u-1", "PROFILE").await?;
    assert_eq!(item.get("GSI1PK"), Some(&s("EMAIL#one@example.com")));
    assert_eq!(item.get("GSI1SK"), Some(&s("USER")));
    assert_eq!(item.get("email"), Some(&s("one@example.com")));
    Ok(())
}
