//! Decoding: foreign entity types, missing and mistyped attributes, stored layout.

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::{local, DecodeError, DecodeErrorKind, Entity, Error, Item};

fn user_item() -> Item {
    Item::from([
        ("PK".into(), s("USER#u-1")),
        ("SK".into(), s("PROFILE")),
        ("_type".into(), s("User")),
        ("userId".into(), s("u-1")),
        ("displayName".into(), s("One")),
        ("loginCount".into(), num("3")),
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
    let err = twin(&db).get(Impostor::key("u-1")).await.unwrap_err();
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
        message.contains("Impostor") && !message.contains("USER#u-1"),
        "names the entity, not the key: {message}"
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
    item.insert("loginCount".into(), num("99999999999"));
    put_raw(&db, item).await?;
    let (_, attribute, kind) = decode_kind(db.get(User::key("u-1")).await.unwrap_err());
    assert_eq!(attribute.as_deref(), Some("loginCount"));
    assert!(matches!(kind, DecodeErrorKind::Invalid(_)), "{kind:?}");
    Ok(())
}

#[tokio::test]
async fn stored_layout_follows_serde_names_and_sparse_index_rules() -> TestResult {
    let (db, mut user) = with_user("u-1").await?;
    let item = raw_get(&db, "USER#u-1", "PROFILE").await?;
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
    let item = raw_get(&db, "USER#u-1", "PROFILE").await?;
    assert_eq!(item.get("GSI1PK"), Some(&s("EMAIL#one@example.com")));
    assert_eq!(item.get("GSI1SK"), Some(&s("USER")));
    assert_eq!(item.get("email"), Some(&s("one@example.com")));
    Ok(())
}

// ---------------------------------------------------------------- forged items (issue 8.3)

fn victim_order() -> Order {
    Order {
        user_id: "victim".into(),
        order_id: uuid::Uuid::from_u128(7),
        created_at: time::macros::datetime!(2024-05-06 07:08:09 UTC),
        total_cents: 1999,
        status: "PENDING".into(),
        note: None,
    }
}

/// The victim's order, stored under the attacker's partition: the key attributes say
/// `USER#attacker`, the plain attributes say `userId = victim`.
fn forged_order_item() -> Result<Item, dynamo_model::Error> {
    let mut item = victim_order().to_item()?;
    item.insert("PK".into(), s("USER#attacker"));
    Ok(item)
}

/// A fresh table holding the victim's order.
async fn with_victim() -> Res<(local::TempTable<App>, Order)> {
    let victim = victim_order();
    Ok((table_with([victim.clone()]).await?, victim))
}

/// A fresh table holding the victim's order and, under the attacker's key, the forged
/// copy ([`forged_order_item`]).
async fn with_victim_and_forgery() -> Res<(local::TempTable<App>, Order)> {
    let (db, victim) = with_victim().await?;
    put_raw(&db, forged_order_item()?).await?;
    Ok((db, victim))
}

/// The key the forged item is really stored under.
fn forged_key() -> dynamo_model::Key<Order> {
    let order = victim_order();
    Order::key(OrderKey {
        user_id: "attacker",
        created_at: order.created_at,
        order_id: order.order_id,
    })
}

#[track_caller]
fn assert_key_mismatch(err: Error, attribute: &str) {
    let (_, attr, kind) = decode_kind(err);
    assert_eq!(attr.as_deref(), Some(attribute));
    assert!(
        matches!(kind, DecodeErrorKind::KeyMismatch { .. }),
        "expected a key mismatch, got {kind:?}"
    );
}

#[tokio::test]
async fn an_item_whose_fields_claim_another_key_is_refused_on_every_read() -> TestResult {
    let (db, victim) = with_victim_and_forgery().await?;

    // get
    let err = db.get(forged_key()).await.unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("not stored under its own key") && !message.contains("USER#"),
        "says what is wrong without the keys: {message}"
    );
    match &err {
        Error::Decode(DecodeError {
            kind: DecodeErrorKind::KeyMismatch {
                expected, found, ..
            },
            ..
        }) => assert!(
            found.contains("USER#attacker")
                && expected
                    .as_deref()
                    .is_some_and(|e| e.contains("USER#victim")),
            "the fields keep the stored and the claimed key: {found} / {expected:?}"
        ),
        other => panic!("expected a key mismatch, got {other:?}"),
    }
    assert_key_mismatch(err, "PK");
    // query, whole items and a partial view
    let err = db
        .query(Order::partition("attacker"))
        .all()
        .await
        .unwrap_err();
    assert_key_mismatch(err, "PK");
    let err = db
        .query(Order::partition("attacker"))
        .project::<OrderTotal>()
        .all()
        .await
        .unwrap_err();
    assert_key_mismatch(err, "PK");
    // scan
    let err = db.scan::<Order>().all().await.unwrap_err();
    assert_key_mismatch(err, "PK");
    // batch get
    let err = db.batch_get::<Order>().key(forged_key()).await.unwrap_err();
    assert_key_mismatch(err, "PK");
    // transact get
    let err = db
        .transact_get::<Order>()
        .key(forged_key())
        .await
        .unwrap_err();
    assert_key_mismatch(err, "PK");
    // keys from a KEYS_ONLY index are the stored keys; hydrating them decodes the items
    let err = db
        .query(Order::gsi2_partition("PENDING"))
        .keys_only()
        .hydrate(None)
        .await
        .unwrap_err();
    assert_key_mismatch(err, "PK");

    // The victim's own order still reads back.
    assert_eq!(db.get(victim.primary_key()).await?, Some(victim));
    Ok(())
}

#[tokio::test]
async fn deleting_through_a_forged_item_cannot_reach_the_victims_item() -> TestResult {
    let (db, victim) = with_victim_and_forgery().await?;

    // What an application does with an order it read from the attacker's partition:
    // delete it by its own key. The forged item must never name the victim's key.
    match db.get(forged_key()).await {
        Ok(Some(read)) => db.delete(read.primary_key()).await?,
        Ok(None) => panic!("the forged item is stored under the attacker's key"),
        Err(err) => assert_key_mismatch(err, "PK"),
    }
    match db.query(Order::partition("attacker")).all().await {
        Ok(page) => {
            for read in page.items {
                db.delete(read.primary_key()).await?;
            }
        }
        Err(err) => assert_key_mismatch(err, "PK"),
    }
    assert_eq!(
        db.get(victim.primary_key()).consistent().await?,
        Some(victim),
        "the victim's order survives"
    );
    Ok(())
}

#[tokio::test]
async fn forged_index_keys_are_refused_and_absent_ones_accepted() -> TestResult {
    let (db, order) = with_victim().await?;
    let stored = raw_get(
        &db,
        "USER#victim",
        &order.primary_key().raw()?.sk.clone().unwrap_or_default(),
    )
    .await?;

    // A GSI2 partition the fields do not render (`status` is PENDING).
    let mut item = stored.clone();
    item.insert("GSI2PK".into(), s("STATUS#SHIPPED"));
    put_raw(&db, item).await?;
    assert_key_mismatch(db.get(order.primary_key()).await.unwrap_err(), "GSI2PK");

    // An index sort key the fields do not render.
    let mut item = stored.clone();
    item.insert("GSI3SK".into(), s("00000000000000000001#x"));
    put_raw(&db, item).await?;
    assert_key_mismatch(db.get(order.primary_key()).await.unwrap_err(), "GSI3SK");

    // A sparse index attribute present while the fields keep the item out of the index
    // (`email` is None, so the user is in no GSI1 partition).
    db.put(&User::sample("u-1")).await?;
    let mut item = raw_get(&db, "USER#u-1", "PROFILE").await?;
    item.insert("GSI1PK".into(), s("EMAIL#victim@example.com"));
    item.insert("GSI1SK".into(), s("USER"));
    put_raw(&db, item).await?;
    let (_, attribute, kind) = decode_kind(db.get(User::key("u-1")).await.unwrap_err());
    assert_eq!(attribute.as_deref(), Some("GSI1PK"));
    assert!(
        matches!(&kind, DecodeErrorKind::KeyMismatch { expected: None, found, .. } if found == "EMAIL#victim@example.com"),
        "{kind:?}"
    );

    // A primary sort key the fields do not render: the order id claims another order.
    let mut item = stored.clone();
    item.insert("orderId".into(), s(&uuid::Uuid::from_u128(8).to_string()));
    put_raw(&db, item).await?;
    assert_key_mismatch(db.get(order.primary_key()).await.unwrap_err(), "SK");

    // An item without its index attributes (written before the index template existed)
    // still decodes: it is only absent from the index.
    let mut item = stored;
    for attribute in ["GSI2PK", "GSI2SK", "GSI3PK", "GSI3SK", "LSI1SK"] {
        item.remove(attribute);
    }
    put_raw(&db, item).await?;
    assert_eq!(db.get(order.primary_key()).await?, Some(order));
    Ok(())
}
