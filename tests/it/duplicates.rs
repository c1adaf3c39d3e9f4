//! Two operations of one request on the same item are refused before sending (DynamoDB
//! rejects such a transaction or batch), and only those: "the same item" means equal key
//! attribute values, not equal `PK=…, SK=…` text, which two distinct keys can share.

use crate::common::*;
use dynamo_model::{local, Db, Entity, Key, RawKey, ValidationReason};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde::{Deserialize, Serialize};

/// A key whose values reach the rendered key unchanged (no `#` or `"` to escape), so a
/// value can contain the text `, SK=`.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "PAIR#{left}", sk = "{right}")]
pub struct Pair {
    pub left: String,
    pub right: String,
    pub note: u32,
}

/// Two distinct items whose keys both read `PK=PAIR#a, SK=b, SK=c`.
fn colliding() -> (Pair, Pair) {
    let one = Pair {
        left: "a, SK=b".into(),
        right: "c".into(),
        note: 1,
    };
    let two = Pair {
        left: "a".into(),
        right: "b, SK=c".into(),
        note: 2,
    };
    assert_ne!(one.primary_key(), two.primary_key(), "distinct keys");
    assert_eq!(
        one.primary_key().to_string(),
        two.primary_key().to_string(),
        "the test needs keys whose display strings collide"
    );
    (one, two)
}

async fn stored(db: &Db<App>, pair: &Pair) -> Result<Option<Pair>, dynamo_model::Error> {
    db.get(pair.primary_key()).consistent().await
}

#[tokio::test]
async fn a_transaction_accepts_distinct_keys_whose_display_strings_collide() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let (one, two) = colliding();
    db.transact_write()
        .put(db.put(&one))
        .put(db.put(&two))
        .await?;
    assert_eq!(stored(&db, &one).await?, Some(one.clone()));
    assert_eq!(stored(&db, &two).await?, Some(two.clone()));

    // Every kind of operation, on the same two items.
    let f = Pair::fields();
    db.transact_write()
        .update(db.update(one.primary_key()).add(f.note, 10))
        .check(two.primary_key(), f.right.eq(two.right.clone()))
        .await?;
    db.transact_write()
        .delete(db.delete(one.primary_key()))
        .delete(db.delete(two.primary_key()))
        .await?;
    assert_eq!(stored(&db, &one).await?, None);
    assert_eq!(stored(&db, &two).await?, None);

    // A real duplicate is still refused, whatever the kinds of the two operations.
    let err = db
        .transact_write()
        .put(db.put(&one))
        .delete(db.delete(one.primary_key()))
        .await
        .unwrap_err();
    assert_refused(&err, ValidationReason::DuplicateKey);
    let err = db
        .transact_write()
        .put(db.put(&two))
        .check(two.primary_key(), f.left.eq("a"))
        .await
        .unwrap_err();
    assert_refused(&err, ValidationReason::DuplicateKey);
    assert_eq!(stored(&db, &one).await?, None, "nothing was written");
    Ok(())
}

#[tokio::test]
async fn batches_tell_distinct_keys_with_colliding_display_strings_apart() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let (one, two) = colliding();
    let out = db.batch_write().put(&one).put(&two).await?;
    assert_eq!(out.written, 2);
    assert_eq!(stored(&db, &one).await?, Some(one.clone()));
    assert_eq!(stored(&db, &two).await?, Some(two.clone()));

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
    assert!(got.not_found.is_empty() && got.unprocessed.is_empty());

    let err = db
        .batch_write()
        .delete(one.primary_key())
        .put(&two)
        .put(&one)
        .await
        .unwrap_err();
    assert_refused(&err, ValidationReason::DuplicateKey);
    assert_eq!(stored(&db, &one).await?, Some(one), "nothing was written");
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
    let runtime = tokio::runtime::Runtime::new()?;
    let db = runtime.block_on(local::fresh_table::<App>())?;
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
                    batch = batch.delete(key(raw));
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
