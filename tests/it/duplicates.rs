//! Two operations of one request on the same item are refused before sending (DynamoDB
//! rejects such a transaction or batch), and only those: "the same item" means equal key
//! attribute values, not equal `PK=…, SK=…` text, which two distinct keys can share.

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::{local, Db, Entity, Key, RawKey, ValidationReason};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "PAIR#{left}", sk = "{right}")]
pub struct Pair {
    pub left: String,
    pub right: String,
    pub note: u32,
}

/// Two distinct keys that both read `PK=PAIR#a, SK=b, SK=c`. Keys rendered from templates
/// escape the space, so such keys come from elsewhere (`Key::from_raw`: an index, another
/// application's items).
fn colliding() -> (Key<Pair>, Key<Pair>) {
    let raw = |pk: &str, sk: &str| {
        Key::<Pair>::from_raw(RawKey {
            pk: pk.into(),
            sk: Some(sk.into()),
        })
    };
    let (one, two) = (raw("PAIR#a, SK=b", "c"), raw("PAIR#a", "b, SK=c"));
    assert_ne!(one, two, "distinct keys");
    assert_eq!(
        one.to_string(),
        two.to_string(),
        "the test needs keys whose display strings collide"
    );
    (one, two)
}

/// Writes a `Pair`-typed item under `key` with the plain SDK client.
async fn plant(db: &Db<App>, key: &Key<Pair>) -> TestResult {
    let mut item = key.to_item()?;
    item.insert("_type".into(), AttributeValue::S("Pair".into()));
    put_raw(db, item).await?;
    Ok(())
}

async fn exists(db: &Db<App>, key: &Key<Pair>) -> Res<bool> {
    Ok(raw_find(db, key.to_item()?).await?.is_some())
}

#[tokio::test]
async fn a_transaction_accepts_distinct_keys_whose_display_strings_collide() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let (one, two) = colliding();
    plant(&db, &one).await?;
    plant(&db, &two).await?;
    let f = Pair::fields();
    // A condition check and a delete, on the two items.
    db.transact_write()
        .check(one.clone(), f.note.not_exists())
        .delete(db.delete(two.clone()))
        .await?;
    assert!(exists(&db, &one).await? && !exists(&db, &two).await?);
    db.transact_write()
        .delete(db.delete(one.clone()))
        .delete(db.delete(two.clone()))
        .await?;
    assert!(!exists(&db, &one).await? && !exists(&db, &two).await?);

    // A real duplicate is still refused, whatever the kinds of the two operations.
    plant(&db, &one).await?;
    refused(
        db.transact_write()
            .check(one.clone(), f.note.not_exists())
            .delete(db.delete(one.clone())),
        ValidationReason::DuplicateKey,
    )
    .await;
    assert!(exists(&db, &one).await?, "nothing was applied");
    Ok(())
}

#[tokio::test]
async fn batches_tell_keys_apart_by_their_raw_values() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    // Keys that cannot be rendered from `Pair`'s template never reach a batch write: it
    // cannot check what it overwrites (see `isolation.rs`).
    let (one, two) = colliding();
    for key in [one, two] {
        refused(
            db.batch_write().delete(key),
            ValidationReason::ForeignKeySpace,
        )
        .await;
    }

    // Rendered keys from the same fragments: distinct, and each read and written once.
    let pair = |left: &str, right: &str, note: u32| Pair {
        left: left.into(),
        right: right.into(),
        note,
    };
    let (one, two) = (pair("a, SK=b", "c", 1), pair("a", "b, SK=c", 2));
    let out = db.batch_write().put(&one).put(&two).await?;
    assert_eq!(out.written, 2);
    let got = db
        .batch_get::<Pair>()
        .key(one.primary_key())
        .key(two.primary_key())
        .key(one.primary_key())
        .keep_order()
        .await?;
    assert_eq!(
        got.items,
        [one.clone(), two.clone()],
        "a duplicate key is read once"
    );

    refused(
        db.batch_write()
            .delete(one.primary_key())
            .put(&two)
            .put(&one),
        ValidationReason::DuplicateKey,
    )
    .await;
    let still = db.get(one.primary_key()).consistent().await?;
    assert_eq!(still, Some(one), "nothing was written");
    Ok(())
}

/// A key value made of fragments of the display format.
fn value() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("a"),
            Just("b"),
            Just(", SK="),
            Just(", "),
            Just("="),
            Just("PK=")
        ],
        1..4,
    )
    .prop_map(|parts| parts.concat())
}

/// 2 to 5 keys drawn (with repeats) from a pool holding two distinct keys whose display
/// strings collide (`x, SK=y` / `z` and `x` / `y, SK=z`) and one more key.
fn keys() -> impl Strategy<Value = Vec<RawKey>> {
    let pool = (value(), value(), value(), value(), value()).prop_map(|(x, y, z, p, q)| {
        [
            RawKey {
                pk: format!("{x}, SK={y}"),
                sk: Some(z.clone()),
            },
            RawKey {
                pk: x,
                sk: Some(format!("{y}, SK={z}")),
            },
            RawKey { pk: p, sk: Some(q) },
        ]
    });
    (pool, proptest::collection::vec(0..3usize, 2..5))
        .prop_map(|(pool, picks)| picks.into_iter().map(|i| pool[i].clone()).collect())
}

/// Several operations on keys `keys`: refused exactly when two keys are equal, and then
/// for that reason.
#[test]
fn transactions_and_batches_refuse_exactly_the_requests_with_equal_raw_keys() -> TestResult {
    let (runtime, db) = runtime_and_table::<App>()?;
    let mut runner = TestRunner::new(Config::with_cases(32));
    runner
        .run(&keys(), |keys| {
            let duplicate = (1..keys.len()).any(|i| keys[..i].contains(&keys[i]));
            let key = |raw: &RawKey| Key::<Pair>::from_raw(raw.clone());
            runtime.block_on(async {
                let mut transaction = db.transact_write();
                let mut batch = db.batch_write();
                for raw in &keys {
                    transaction = transaction.delete(db.delete(key(raw)));
                    // A batch takes only keys its entity renders: the same values as
                    // fields (rendering is injective, so equal exactly when the raw keys are).
                    batch = batch.delete(Pair::key(PairKey {
                        left: raw.pk.as_str(),
                        right: raw.sk.as_deref().unwrap_or_default(),
                    }));
                }
                for (call, result) in [
                    ("transaction", transaction.await.map(|_| ())),
                    ("batch write", batch.await.map(|_| ())),
                ] {
                    match result {
                        Ok(()) if !duplicate => {}
                        Err(dynamo_model::Error::Validation {
                            reason: ValidationReason::DuplicateKey,
                            ..
                        }) if duplicate => {}
                        other => {
                            return Err(TestCaseError::fail(format!(
                                "{call} of {keys:?} (duplicate: {duplicate}): {other:?}"
                            )))
                        }
                    }
                }
                Ok(())
            })
        })
        .map_err(|e| e.to_string())?;
    Ok(())
}
