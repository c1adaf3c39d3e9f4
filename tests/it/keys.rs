//! Key rendering end to end: escaping, ordering as DynamoDB sorts, validation before sending.

use crate::common::*;
use dynamo_model::{local, Entity, Error};
use time::macros::datetime;
use uuid::Uuid;

#[tokio::test]
async fn a_delimiter_inside_a_value_cannot_forge_another_key() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    // Without escaping, both would render as USER#a#b.
    let mut tricky = User::sample("a#b");
    tricky.display_name = "tricky".into();
    let plain = User::sample("a");
    db.put(&tricky).await?;
    db.put(&plain).await?;
    assert_eq!(db.get(User::key("a#b")).await?, Some(tricky));
    assert_eq!(db.get(User::key("a")).await?, Some(plain));
    assert_eq!(raw_table(&db).await?.len(), 2);
    Ok(())
}

#[tokio::test]
async fn signed_integer_and_bool_parts_sort_as_numbers_in_dynamodb() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let deltas = [
        i64::MIN,
        -1_000_000,
        -10,
        -9,
        -1,
        0,
        1,
        9,
        10,
        1_000_000,
        i64::MAX,
    ];
    for &delta in deltas.iter().rev() {
        for valid in [true, false] {
            db.put(&Reading {
                sensor: "s".into(),
                delta,
                valid,
            })
            .await?;
        }
    }
    let mut expected = Vec::new();
    for &delta in &deltas {
        for valid in [false, true] {
            expected.push(
                Reading {
                    sensor: "s".into(),
                    delta,
                    valid,
                }
                .primary_key()
                .raw()?
                .sk
                .clone()
                .ok_or("no sk")?,
            );
        }
    }
    assert_eq!(raw_sort_keys(&db, "READING#s").await?, expected);
    Ok(())
}

#[tokio::test]
async fn timestamps_sort_chronologically_whatever_their_offset() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let times = [
        datetime!(1999-12-31 23:59:59.999999999 UTC),
        datetime!(2024-01-01 00:30:00 +02:00), // 2023-12-31 22:30 UTC
        datetime!(2024-01-01 00:00:00 UTC),
        datetime!(2024-01-01 00:00:00.000000001 UTC),
    ];
    for (i, &created_at) in times.iter().enumerate() {
        let order = Order {
            user_id: "u".into(),
            order_id: Uuid::from_u128(i as u128),
            created_at,
            total_cents: i as u64,
            status: "open".into(),
            note: None,
        };
        db.put(&order).await?;
        assert_eq!(
            db.get(Order::key(OrderKey {
                user_id: "u",
                created_at,
                order_id: order.order_id
            }))
            .await?,
            Some(order)
        );
    }
    let order: Vec<u64> = {
        let keys = raw_sort_keys(&db, "USER#u").await?;
        let mut out = Vec::new();
        for sk in keys {
            let i = times
                .iter()
                .enumerate()
                .position(|(i, &t)| {
                    Order::key(OrderKey {
                        user_id: "u",
                        created_at: t,
                        order_id: Uuid::from_u128(i as u128),
                    })
                    .raw()
                    .map(|r| r.sk.as_deref() == Some(sk.as_str()))
                    .unwrap_or(false)
                })
                .ok_or("unknown sort key")?;
            out.push(i as u64);
        }
        out
    };
    assert_eq!(order, [0, 1, 2, 3]);
    Ok(())
}

#[tokio::test]
async fn unencodable_keys_are_refused_before_sending() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    // DynamoDB limits a partition key to 2048 bytes.
    let err = db.put(&User::sample(&"x".repeat(3000))).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Validation {
                entity: Some("User"),
                operation: Some("PutItem"),
                reason: dynamo_model::ValidationReason::KeyTooLong,
                ..
            }
        ),
        "{err:?}"
    );
    refused(
        db.get(User::key("x".repeat(3000))),
        dynamo_model::ValidationReason::KeyTooLong,
    )
    .await;
    // Years beyond 9999 have no fixed-width RFC 3339 form, so they cannot be a key part.
    let far = datetime!(9999-12-31 23:30 -01:00); // 10000-01-01 in UTC
    refused(
        db.get(Order::key(OrderKey {
            user_id: "u",
            created_at: far,
            order_id: Uuid::nil(),
        })),
        dynamo_model::ValidationReason::KeyEncoding,
    )
    .await;
    assert_nothing_stored(&db).await
}

#[tokio::test]
async fn oversized_items_are_refused_before_sending() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let user = User::oversized("big");
    let err = db.put(&user).await.unwrap_err();
    match &err {
        Error::Validation {
            message,
            reason: dynamo_model::ValidationReason::ItemTooLarge,
            ..
        } => assert!(message.contains("409600"), "{message}"),
        other => panic!("expected Validation, got {other:?}"),
    }
    assert_nothing_stored(&db).await
}

/// The guide's recipe sizes an item to DynamoDB's limit with `Put::size`, which counts
/// what the put sends (the entity and its write token): an item of exactly 400 KB by that
/// figure is stored, one byte more is refused before sending. The entity alone
/// (`item_size(to_item)`) is the token's 19 bytes short of it.
#[tokio::test]
async fn an_item_sized_to_the_limit_by_put_size_is_stored() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let mut user = User::sample("edge");
    user.display_name = String::new();
    let base = db.put(&user).size()?;
    assert_eq!(
        base,
        dynamo_model::item_size(&user.to_item()?) + "_wt".len() + 16,
        "the write token is counted"
    );
    user.display_name = "x".repeat(dynamo_model::MAX_ITEM_BYTES - base);
    assert_eq!(db.put(&user).size()?, dynamo_model::MAX_ITEM_BYTES);
    db.put(&user).await?;
    let stored = db.get(User::key("edge")).await?.ok_or("stored")?;
    assert_eq!(
        stored.display_name.len(),
        dynamo_model::MAX_ITEM_BYTES - base
    );

    user.display_name.push('x');
    let err = db.put(&user).size().unwrap_err();
    crate::common::assert_refused(&err, dynamo_model::ValidationReason::ItemTooLarge);
    refused(db.put(&user), dynamo_model::ValidationReason::ItemTooLarge).await;
    Ok(())
}

/// Asserts that the table holds no item: what was refused was never sent.
async fn assert_nothing_stored(db: &dynamo_model::Db<App>) -> TestResult {
    assert_eq!(raw_table(db).await?.len(), 0, "nothing is stored");
    Ok(())
}
