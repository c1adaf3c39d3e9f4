//! Ambiguous errors on single-item writes: DynamoDB applies a write and its response is
//! lost (HTTP 500 after the write), and the SDK sends the same request again. A
//! conditional write must recognise its own applied write and report success, once; a
//! genuine conflict with another writer must still be reported.
//!
//! The fault connector loses the responses of one operation only, and the SDK retries (up
//! to 40 attempts, millisecond backoff), so every call gets an answer in the end.

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::config::retry::RetryConfig;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::item::WriteToken;
use dynamo_model::local::faults::{FaultKind, Faults};
use dynamo_model::local::{self, BoxError};
use dynamo_model::{Db, Entity, Error, Table};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::collections::BTreeSet;
use std::fmt::Debug;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Cases per property: each runs a handful of calls against DynamoDB Local.
const CASES: u32 = 16;

/// The retry quota the lossy clients of these tests share.
const QUOTA: &str = "ambiguous-writes";

/// Checks `case` on generated inputs against one fresh table (each case on its own keys,
/// numbered by the first argument), on a runtime of its own. `case` returns how many
/// responses it lost; over all cases some must have been lost, or nothing was proved.
fn property<S, F, Fut>(strategy: S, case: F)
where
    S: Strategy,
    S::Value: Debug,
    F: Fn(Db<App>, u64, S::Value) -> Fut,
    Fut: Future<Output = Result<u64, BoxError>>,
{
    let (runtime, db) = runtime_and_table::<App>().expect("a runtime and a fresh table");
    let mut runner = runner(CASES);
    let (next, lost) = (Cell::new(0u64), Cell::new(0u64));
    let result = runner.run(&strategy, |input| {
        next.set(next.get() + 1);
        let n = runtime
            .block_on(case(db.clone(), next.get(), input))
            .map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        lost.set(lost.get() + n);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(lost.get() > 0, "no response was lost: nothing was proved");
}

fn lost(faults: &Faults) -> u64 {
    faults.stats().server_errors_after_apply
}

fn line(shop: &str, n: u16, status: &str) -> Line {
    Line {
        shop: shop.into(),
        order_no: "o-1".into(),
        line: n,
        qty: 1,
        status: status.into(),
    }
}

fn keys(item: &dynamo_model::Item) -> BTreeSet<&str> {
    item.keys().map(String::as_str).collect()
}

fn number(item: &dynamo_model::Item, attribute: &str) -> Option<u64> {
    match item.get(attribute) {
        Some(AttributeValue::N(n)) => n.parse().ok(),
        _ => None,
    }
}

#[test]
fn versioned_updates_under_lost_responses_apply_exactly_once() {
    let inputs = (any::<u64>(), 3u64..12, 0.2f64..0.7);
    property(inputs, |db, case, (seed, n, rate)| async move {
        let id = format!("d{case}");
        db.put(&doc(&id, "v1", 0)).await?;
        let (lossy, faults) = lossy(&db, seed, rate, "UpdateItem", QUOTA).await?;
        let f = Doc::fields();
        for i in 0..n {
            let (expected, body) = (1 + i, format!("body {i}"));
            let update = lossy
                .update(Doc::key(DocKey { id: &id, rev: 1u32 }))
                .set(f.body, body.clone())
                .if_version(expected);
            // Every way of sending reports success, once.
            match i % 3 {
                0 => {
                    let stored = update.await?;
                    assert_eq!((stored.version, stored.body), (expected + 1, body));
                }
                1 => {
                    let updated = update.send_returning_updated().await?;
                    assert_eq!(keys(&updated), BTreeSet::from(["body", "version"]));
                    assert_eq!(number(&updated, "version"), Some(expected + 1));
                }
                _ => update.send_returning_nothing().await?,
            }
        }
        let stored = db
            .get(Doc::key(DocKey { id: &id, rev: 1u32 }))
            .consistent()
            .await?
            .ok_or("gone")?;
        assert_eq!(stored.version, 1 + n, "{n} updates from version 1");
        Ok(lost(&faults))
    });
}

#[test]
fn a_caller_retrying_on_conflict_applies_each_change_once() {
    // The caller's loop most code has: read, update at that version, start over on a
    // conflict. A conflict reported for the call's own write made it apply twice.
    let inputs = (any::<u64>(), 3u64..10, 0.2f64..0.7);
    property(inputs, |db, case, (seed, n, rate)| async move {
        let id = format!("d{case}");
        db.put(&doc(&id, "", 0)).await?;
        let (lossy, faults) = lossy(&db, seed, rate, "UpdateItem", QUOTA).await?;
        let f = Doc::fields();
        let mut conflicts = 0;
        for i in 0..n {
            loop {
                let current = lossy
                    .get(Doc::key(DocKey { id: &id, rev: 1u32 }))
                    .consistent()
                    .await?
                    .ok_or("gone")?;
                let result = lossy
                    .update(Doc::key(DocKey { id: &id, rev: 1u32 }))
                    .set(f.body, format!("{}{i}", current.body))
                    .if_version(current.version)
                    .await;
                match result {
                    Ok(_) => break,
                    Err(Error::VersionConflict { .. }) => conflicts += 1,
                    Err(other) => return Err(other.into()),
                }
            }
        }
        let stored = db
            .get(Doc::key(DocKey { id: &id, rev: 1u32 }))
            .consistent()
            .await?
            .ok_or("gone")?;
        let expected: String = (0..n).map(|i| i.to_string()).collect();
        assert_eq!((stored.version, stored.body), (1 + n, expected));
        assert_eq!(conflicts, 0, "a lone writer has nobody to conflict with");
        Ok(lost(&faults))
    });
}

#[test]
fn add_counters_under_lost_responses_count_each_call_once() {
    let inputs = (any::<u64>(), 3u32..12, 0.2f64..0.7);
    property(inputs, |db, case, (seed, n, rate)| async move {
        let id = format!("a{case}");
        db.put(&Account {
            id: id.clone(),
            balance: 0,
            transfers: 0,
        })
        .await?;
        let (lossy, faults) = lossy(&db, seed, rate, "UpdateItem", QUOTA).await?;
        let f = Account::fields();
        for i in 1..=n {
            // No condition of the caller's: only the write token stops a second ADD.
            let update = lossy
                .update(Account::key(&id))
                .add(f.transfers, 1)
                .add(f.balance, 10);
            match i % 3 {
                0 => {
                    let account = update.await?;
                    assert_eq!((account.transfers, account.balance), (i, 10 * i as i64));
                }
                1 => {
                    let updated = update.send_returning_updated().await?;
                    assert_eq!(keys(&updated), BTreeSet::from(["balance", "transfers"]));
                    assert_eq!(number(&updated, "transfers"), Some(u64::from(i)));
                }
                _ => update.send_returning_nothing().await?,
            }
        }
        let stored = db
            .get(Account::key(&id))
            .consistent()
            .await?
            .ok_or("gone")?;
        assert_eq!((stored.transfers, stored.balance), (n, 10 * n as i64));
        Ok(lost(&faults))
    });
}

#[test]
fn if_absent_puts_report_their_own_item_and_still_refuse_an_existing_one() {
    let inputs = (any::<u64>(), 2usize..8, 0.2f64..0.7);
    property(inputs, |db, case, (seed, n, rate)| async move {
        let (lossy, faults) = lossy(&db, seed, rate, "PutItem", QUOTA).await?;
        let users: Vec<User> = (0..n)
            .map(|i| User::sample(&format!("u{case}-{i}")))
            .collect();
        for user in &users {
            lossy.put(user).if_absent().await?;
        }
        for user in &users {
            let stored = db.get(user.primary_key()).consistent().await?;
            assert_eq!(stored.as_ref(), Some(user));
            // A second writer of the same key: a genuine conflict, lost responses or not.
            let rival = User {
                display_name: "rival".into(),
                ..user.clone()
            };
            match lossy.put(&rival).if_absent().await {
                Err(err @ Error::ConditionFailed { .. }) => {
                    let current: User = err.current().ok_or("no current item")??;
                    assert_eq!(&current, user);
                }
                other => panic!("expected ConditionFailed, got {other:?}"),
            }
            let stored = db.get(user.primary_key()).consistent().await?;
            assert_eq!(stored.as_ref(), Some(user));
        }
        Ok(lost(&faults))
    });
}

#[test]
fn versioned_puts_report_their_own_item_and_still_refuse_a_stale_one() {
    let inputs = (any::<u64>(), 2u64..10, 0.2f64..0.7);
    property(inputs, |db, case, (seed, n, rate)| async move {
        let id = format!("d{case}");
        let (lossy, faults) = lossy(&db, seed, rate, "PutItem", QUOTA).await?;
        for v in 0..n {
            lossy.put(&doc(&id, &format!("v{}", v + 1), v)).await?;
        }
        let stored = db
            .get(Doc::key(DocKey { id: &id, rev: 1u32 }))
            .consistent()
            .await?
            .ok_or("gone")?;
        assert_eq!((stored.version, stored.body), (n, format!("v{n}")));

        // A writer holding an older version loses.
        let stale = n - 1;
        match lossy.put(&doc(&id, "stale", stale)).await {
            Err(Error::VersionConflict {
                expected, found, ..
            }) => assert_eq!((expected, found), (stale, Some(n))),
            other => panic!("expected VersionConflict, got {other:?}"),
        }
        let after = db
            .get(Doc::key(DocKey { id: &id, rev: 1u32 }))
            .consistent()
            .await?;
        assert_eq!(after.map(|d| d.version), Some(n));
        Ok(lost(&faults))
    });
}

#[test]
fn conditional_updates_report_their_own_write_and_still_refuse_a_false_condition() {
    let inputs = (any::<u64>(), 2u16..8, 0.2f64..0.7);
    property(inputs, |db, case, (seed, n, rate)| async move {
        let shop = format!("s{case}");
        for i in 0..n {
            db.put(&line(&shop, i, "PENDING")).await?;
        }
        let (lossy, faults) = lossy(&db, seed, rate, "UpdateItem", QUOTA).await?;
        let f = Line::fields();
        let ship = |i: u16| {
            lossy
                .update(Line::key(LineKey {
                    shop: &shop,
                    order_no: "o-1",
                    line: i,
                }))
                .set(f.status, "SHIPPED")
                .condition(f.status.eq("PENDING"))
        };
        for i in 0..n {
            let shipped = ship(i).await?;
            assert_eq!(shipped, line(&shop, i, "SHIPPED"));
        }
        for i in 0..n {
            // Shipping again: the condition is false now, for real.
            match ship(i).await {
                Err(err @ Error::ConditionFailed { .. }) => {
                    let current: Line = err.current().ok_or("no current item")??;
                    assert_eq!(current.status, "SHIPPED");
                }
                other => panic!("expected ConditionFailed, got {other:?}"),
            }
        }
        Ok(lost(&faults))
    });
}

#[test]
fn conditional_versioned_and_must_exist_deletes_report_their_own_delete() {
    let inputs = (any::<u64>(), 2u16..6, 0.2f64..0.7);
    property(inputs, |db, case, (seed, n, rate)| async move {
        let shop = format!("s{case}");
        for i in 0..n {
            db.put(&line(&shop, i, "CANCELLED")).await?;
            db.put(&doc(&format!("{shop}-{i}"), "body", 0)).await?;
        }
        let (lossy, faults) = lossy(&db, seed, rate, "DeleteItem", QUOTA).await?;
        let f = Line::fields();
        for i in 0..n {
            let key = Line::key(LineKey {
                shop: &shop,
                order_no: "o-1",
                line: i,
            });
            if i % 2 == 0 {
                lossy.delete(key.clone()).must_exist().await?;
            } else {
                lossy
                    .delete(key.clone())
                    .condition(f.status.eq("CANCELLED"))
                    .await?;
            }
            assert_eq!(db.get(key).consistent().await?, None);
            let doc_key = Doc::key(DocKey {
                id: format!("{shop}-{i}"),
                rev: 1u32,
            });
            lossy.delete(doc_key.clone()).if_version(1).await?;
            assert_eq!(db.get(doc_key).consistent().await?, None);
        }
        Ok(lost(&faults))
    });
}

#[test]
fn deletes_still_report_a_condition_that_fails_on_an_item_still_there() {
    let inputs = (any::<u64>(), 2u16..6, 0.3f64..0.7);
    property(inputs, |db, case, (seed, n, rate)| async move {
        let shop = format!("s{case}");
        let (lossy, faults) = lossy(&db, seed, rate, "DeleteItem", QUOTA).await?;
        let f = Line::fields();
        for i in 0..n {
            let kept = line(&shop, i, "SHIPPED");
            db.put(&kept).await?;
            match lossy
                .delete(kept.primary_key())
                .condition(f.status.eq("CANCELLED"))
                .await
            {
                Err(Error::ConditionFailed {
                    current: Some(_), ..
                }) => {}
                other => panic!("expected ConditionFailed, got {other:?}"),
            }
            let id = format!("{shop}-{i}");
            db.put(&doc(&id, "body", 0)).await?;
            match lossy
                .delete(Doc::key(DocKey { id: &id, rev: 1u32 }))
                .if_version(7)
                .await
            {
                Err(Error::VersionConflict {
                    expected, found, ..
                }) => assert_eq!((expected, found), (7, Some(1))),
                other => panic!("expected VersionConflict, got {other:?}"),
            }
            assert_eq!(db.get(kept.primary_key()).consistent().await?, Some(kept));
            assert!(db
                .get(Doc::key(DocKey { id: &id, rev: 1u32 }))
                .consistent()
                .await?
                .is_some());
        }
        Ok(lost(&faults))
    });
}

#[tokio::test]
async fn must_exist_deletes_without_a_lost_response_still_report_not_found() -> TestResult {
    // Lost responses of another operation only: no attempt of the delete is ambiguous.
    let db = local::fresh_table::<App>().await?;
    let (lossy, faults) = lossy(&db, 3, 1.0, "PutItem", QUOTA).await?;
    let err = lossy
        .delete(Line::key(LineKey {
            shop: "s",
            order_no: "o-1",
            line: 1,
        }))
        .must_exist()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err:?}");
    let err = lossy
        .delete(Doc::key(DocKey { id: "d", rev: 1u32 }))
        .if_version(1)
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::VersionConflict { found: None, .. }),
        "{err:?}"
    );
    assert_eq!(lost(&faults), 0);
    Ok(())
}

#[tokio::test]
async fn a_conflict_with_another_writer_is_still_a_conflict() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let f = Doc::fields();
    for seed in 0..8 {
        let id = format!("d{seed}");
        db.put(&doc(&id, "v1", 0)).await?;
        let (lossy, _) = lossy(&db, seed, 0.5, "UpdateItem", QUOTA).await?;
        let (rival, _) = lossy_rival(&db, seed).await?;
        // Another writer (through the crate, with its own token) moves the doc on.
        let theirs = rival
            .update(Doc::key(DocKey { id: &id, rev: 1u32 }))
            .set(f.body, "theirs")
            .if_version(1)
            .await?;
        assert_eq!(theirs.version, 2);
        // Ours still expects version 1: a conflict, not a success.
        let err = lossy
            .update(Doc::key(DocKey { id: &id, rev: 1u32 }))
            .set(f.body, "ours")
            .if_version(1)
            .await
            .unwrap_err();
        match err {
            Error::VersionConflict {
                expected, found, ..
            } => assert_eq!((expected, found), (1, Some(2))),
            other => panic!("expected VersionConflict, got {other:?}"),
        }
        let stored = db
            .get(Doc::key(DocKey { id: &id, rev: 1u32 }))
            .consistent()
            .await?;
        assert_eq!(
            stored.map(|d| (d.version, d.body)),
            Some((2, "theirs".into()))
        );
    }
    Ok(())
}

/// The rival writer of [`a_conflict_with_another_writer_is_still_a_conflict`] loses its
/// responses too.
async fn lossy_rival(db: &Db<App>, seed: u64) -> Result<(Db<App>, Faults), BoxError> {
    lossy(db, seed ^ 0xdead_beef, 0.5, "UpdateItem", QUOTA).await
}

#[tokio::test]
async fn returning_old_values_after_a_lost_response_says_the_write_was_applied() -> TestResult {
    // Every first attempt loses its response (rate 1.0 would lose all of them: the SDK
    // would give up), so both outcomes occur over a few calls.
    let db = local::fresh_table::<App>().await?;
    let (updates, update_faults) = lossy(&db, 11, 0.6, "UpdateItem", QUOTA).await?;
    let (deletes, delete_faults) = lossy(&db, 12, 0.6, "DeleteItem", QUOTA).await?;
    let f = Line::fields();
    let (mut lost_updates, mut lost_deletes) = (0, [0, 0]);
    for i in 0..16 {
        db.put(&line("s", i, "PENDING")).await?;
        let key = Line::key(LineKey {
            shop: "s",
            order_no: "o-1",
            line: i,
        });
        match updates
            .update(key.clone())
            .set(f.status, "SHIPPED")
            .condition(f.status.eq("PENDING"))
            .send_returning_old()
            .await
        {
            Ok(old) => assert_eq!(old.status, "PENDING"),
            Err(err @ Error::ReturnValuesLost { .. }) => {
                let current: Line = err.current().ok_or("no current item")??;
                assert_eq!(current.status, "SHIPPED");
                lost_updates += 1;
            }
            Err(other) => return Err(other.into()),
        }
        // With must_exist the retry fails its condition; without, it deletes nothing.
        let delete = deletes.delete(key.clone());
        let delete = if i % 2 == 0 {
            delete.must_exist()
        } else {
            delete
        };
        match delete.return_old().await {
            Ok(old) => assert_eq!(old.map(|l| l.status), Some("SHIPPED".into())),
            Err(Error::ReturnValuesLost { current: None, .. }) => lost_deletes[i as usize % 2] += 1,
            Err(other) => return Err(other.into()),
        }
        assert_eq!(db.get(key).consistent().await?, None);
    }
    // Both kinds of delete met a lost response.
    assert!(
        lost_updates > 0 && lost_deletes.iter().all(|n| *n > 0),
        "{lost_updates} {lost_deletes:?}"
    );
    assert!(lost(&update_faults) > 0 && lost(&delete_faults) > 0);
    Ok(())
}

#[tokio::test]
async fn the_write_token_is_stored_ignored_by_decoding_and_named_by_the_table() -> TestResult {
    let (db, user) = with_user("u").await?;
    let primary = user.primary_key();
    let key = primary.raw()?;
    let sk = key.sk.clone().unwrap_or_default();
    let item = raw_get(&db, &key.pk, &sk).await?;
    let first = match item.get("_wt") {
        Some(AttributeValue::S(token)) => token.clone(),
        other => panic!("no write token: {other:?}"),
    };
    assert_eq!(first.len(), 16);
    assert_eq!(User::from_item(item.clone())?, user);

    // Every put and update stores its own token.
    let f = User::fields();
    db.update(user.primary_key()).add(f.login_count, 1).await?;
    let second = raw_get(&db, &key.pk, &sk).await?.get("_wt").cloned();
    assert!(matches!(&second, Some(AttributeValue::S(t)) if *t != first && t.len() == 16));
    assert_eq!(App::SCHEMA.write_token, "_wt");
    Ok(())
}

/// A versioned counter: every write of it is checked by its version.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "TALLY#{id}", sk = "TALLY")]
struct Tally {
    id: String,
    hits: u64,
    #[dynamo(version)]
    version: u64,
}

/// The tally `id` as stored (strongly consistent, through a client without faults).
async fn tally(db: &Db<App>, id: &str) -> Result<Option<Tally>, BoxError> {
    Ok(db.get(Tally::key(id)).consistent().await?)
}

#[tokio::test]
async fn versioned_updates_whose_every_response_is_lost_report_what_they_applied() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    db.put(&Tally {
        id: "t".into(),
        hits: 0,
        version: 0,
    })
    .await?;
    let lossy = every_response_lost(&db, 23, "UpdateItem", "ambiguous-writes").await?;
    let f = Tally::fields();
    let mut reported_applied = 0;
    for call in 0..30u64 {
        let before = tally(&db, "t").await?.ok_or("gone")?;
        let update = lossy
            .update(Tally::key("t"))
            .add(f.hits, 1)
            .if_version(before.version);
        // Each way of sending, in turn.
        let result = match call % 3 {
            0 => update
                .send()
                .await
                .map(|t| assert_eq!(t.hits, before.hits + 1)),
            1 => update.send_returning_updated().await.map(|updated| {
                assert_eq!(number(&updated, "hits"), Some(before.hits + 1));
            }),
            _ => update.send_returning_nothing().await,
        };
        let after = tally(&db, "t").await?.ok_or("gone")?;
        let applied = after.version == before.version + 1;
        assert_eq!(after.hits, before.hits + u64::from(applied));
        match result {
            Ok(()) => {
                assert!(applied, "call {call}: reported applied, but it was not");
                reported_applied += 1;
            }
            Err(e @ Error::Service { .. }) if applied => {
                panic!("call {call}: a plain service error, although its write was applied: {e}")
            }
            Err(_) => {}
        }
    }
    let stored = tally(&db, "t").await?.ok_or("gone")?;
    assert_eq!(
        stored.hits, reported_applied,
        "the counter is the calls reported applied"
    );
    // The write token shows each applied call its own write: all 30 were settled.
    assert_eq!(reported_applied, 30);
    Ok(())
}

#[tokio::test]
async fn puts_and_deletes_whose_every_response_is_lost_report_what_they_applied() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let puts = every_response_lost(&db, 23, "PutItem", "ambiguous-writes").await?;
    let deletes = every_response_lost(&db, 23, "DeleteItem", "ambiguous-writes").await?;
    for round in 0..6u64 {
        let id = format!("t{round}");
        // Versioned puts: 0 (create), 1, 2.
        for version in 0..3 {
            let value = Tally {
                id: id.clone(),
                hits: version * 10,
                version,
            };
            puts.put(&value).await?;
            assert_eq!(
                tally(&db, &id).await?.map(|t| (t.hits, t.version)),
                Some((version * 10, version + 1))
            );
        }
        // A plain put (no condition of its own) and an if_absent put.
        puts.put(&User::sample(&id)).await?;
        puts.put(&User::sample(&format!("{id}-new")))
            .if_absent()
            .await?;
        // Versioned, must-exist and plain deletes.
        deletes.delete(Tally::key(&id)).if_version(3).await?;
        assert_eq!(tally(&db, &id).await?, None);
        deletes
            .delete(User::sample(&id).primary_key())
            .must_exist()
            .await?;
        deletes
            .delete(User::sample(&format!("{id}-new")).primary_key())
            .await?;
        assert_eq!(
            db.get(User::sample(&id).primary_key()).consistent().await?,
            None
        );
    }
    Ok(())
}

/// One call of [`writes_under_lost_responses_report_exactly_what_they_applied`], on the
/// tally `id` of the case. `stale` sends a version the stored item is not at (a genuine
/// conflict); `resend` resends the call with its token when its outcome is unknown.
#[derive(Debug, Clone)]
enum TallyCall {
    Put {
        id: usize,
        hits: u64,
        stale: bool,
        resend: bool,
    },
    Update {
        id: usize,
        stale: bool,
        resend: bool,
    },
    Delete {
        id: usize,
        stale: bool,
    },
}

fn tally_call() -> impl Strategy<Value = TallyCall> {
    let id = 0usize..2;
    // Mostly calls that apply, some conflicts.
    let stale = prop::bool::weighted(0.15);
    prop_oneof![
        3 => (id.clone(), 0u64..1000, stale, any::<bool>())
            .prop_map(|(id, hits, stale, resend)| TallyCall::Put { id, hits, stale, resend }),
        4 => (id.clone(), stale, any::<bool>())
            .prop_map(|(id, stale, resend)| TallyCall::Update { id, stale, resend }),
        2 => (id, stale).prop_map(|(id, stale)| TallyCall::Delete { id, stale }),
    ]
}

/// The faults of one case: which responses are lost, and whether the read that settles a
/// write can fail too.
#[derive(Debug, Clone)]
struct LossPlan {
    seed: u64,
    rate: f64,
    /// Some responses lost before the write is applied, as well as after.
    before_apply_too: bool,
    /// The settling reads (GetItem) fail now and then.
    reads_fail: bool,
    /// SDK attempts a call.
    attempts: u32,
}

fn loss_plan() -> impl Strategy<Value = LossPlan> {
    (
        any::<u64>(),
        prop_oneof![Just(1.0), 0.3f64..1.0],
        any::<bool>(),
        prop::bool::weighted(0.3),
        1u32..=3,
    )
        .prop_map(
            |(seed, rate, before_apply_too, reads_fail, attempts)| LossPlan {
                seed,
                rate,
                before_apply_too,
                reads_fail,
                attempts,
            },
        )
}

/// (hits, version) of a stored tally.
type TallyState = Option<(u64, u64)>;

/// Calls of the property answered with an unknown outcome, and of those, calls resent.
static UNKNOWN: AtomicU64 = AtomicU64::new(0);
static RESENT: AtomicU64 = AtomicU64::new(0);

#[test]
fn writes_under_lost_responses_report_exactly_what_they_applied() {
    let inputs = (loss_plan(), prop::collection::vec(tally_call(), 3..10));
    property(inputs, |db, case, (plan, calls)| async move {
        let mut operations = vec!["PutItem", "UpdateItem", "DeleteItem"];
        if plan.reads_fail {
            operations.push("GetItem");
        }
        let mut kinds = vec![FaultKind::ServerErrorAfterApply];
        if plan.before_apply_too {
            kinds.push(FaultKind::ServerError);
        }
        let faults = Faults::new(plan.seed)
            .rate(plan.rate)
            .kinds(kinds)
            .operations(operations);
        let retries = RetryConfig::standard()
            .with_max_attempts(plan.attempts)
            .with_initial_backoff(Duration::from_millis(1))
            .with_max_backoff(Duration::from_millis(2));
        let lossy = faulty_with(&db, &faults, retries, "ambiguous-writes").await?;
        let f = Tally::fields();
        let name = |id: usize| format!("p{case}-{id}");
        let state = |t: Option<Tally>| t.map(|t| (t.hits, t.version));
        let mut model: [TallyState; 2] = [None, None];
        for (n, call) in calls.iter().enumerate() {
            let id = match call {
                TallyCall::Put { id, .. }
                | TallyCall::Update { id, .. }
                | TallyCall::Delete { id, .. } => *id,
            };
            let before = model[id];
            let version = before.map_or(0, |(_, v)| v);
            // What the call leaves when it is applied, and whether it can be (its
            // version matches the stored one).
            let (applied, valid, sent_version) = match *call {
                TallyCall::Put { hits, stale, .. } => {
                    let sent = version + u64::from(stale);
                    (Some((hits, sent + 1)), !stale, sent)
                }
                TallyCall::Update { stale, .. } => {
                    let sent = version.max(1) + u64::from(stale);
                    (
                        before.map(|(h, v)| (h + 1, v + 1)),
                        before.is_some() && !stale,
                        sent,
                    )
                }
                TallyCall::Delete { stale, .. } => {
                    let sent = version.max(1) + u64::from(stale);
                    (None, before.is_some() && !stale, sent)
                }
            };
            let key = || Tally::key(name(id));
            let send = |token: Option<WriteToken>| {
                let lossy = lossy.clone();
                let call = call.clone();
                let name = name(id);
                async move {
                    match call {
                        TallyCall::Put { hits, .. } => {
                            let put = lossy.put(&Tally {
                                id: name,
                                hits,
                                version: sent_version,
                            });
                            let put = match token {
                                Some(t) => put.write_token(t),
                                None => put,
                            };
                            put.await.map(|()| None)
                        }
                        TallyCall::Update { .. } => {
                            let update = lossy
                                .update(Tally::key(name))
                                .add(f.hits, 1)
                                .if_version(sent_version);
                            let update = match token {
                                Some(t) => update.write_token(t),
                                None => update,
                            };
                            update.await.map(Some)
                        }
                        TallyCall::Delete { .. } => lossy
                            .delete(Tally::key(name))
                            .if_version(sent_version)
                            .await
                            .map(|()| None),
                    }
                }
            };
            let mut result = send(None).await;
            let mut actual = state(db.get(key()).consistent().await?);
            let context =
                format!("call {n} {call:?} from {before:?}: {result:?}, stored {actual:?}");
            // What each answer allows.
            let check = |result: &Result<Option<Tally>, Error>,
                         actual: TallyState|
             -> Result<(), String> {
                match result {
                    Ok(returned) => {
                        // Applied, exactly once; a delete of an empty key after an
                        // ambiguous attempt also reports success (the key is empty).
                        let allowed =
                            valid || matches!(call, TallyCall::Delete { .. }) && before.is_none();
                        if !allowed || actual != applied {
                            return Err("reported applied".into());
                        }
                        if let Some(t) = returned {
                            if Some((t.hits, t.version)) != actual {
                                return Err("returned another tally than stored".into());
                            }
                        }
                    }
                    Err(Error::OutcomeUnknown { .. }) => {
                        if actual != before && !(valid && actual == applied) {
                            return Err("outcome unknown, but neither before nor applied".into());
                        }
                    }
                    Err(_) => {
                        if actual != before {
                            return Err("an error, yet the write was applied".into());
                        }
                    }
                }
                Ok(())
            };
            check(&result, actual).map_err(|e| format!("{e}: {context}"))?;
            if matches!(result, Err(Error::OutcomeUnknown { .. })) {
                UNKNOWN.fetch_add(1, Ordering::Relaxed);
            }
            // All responses lost after the write was applied, and settling reads that
            // succeed: the crate knows every valid call's outcome.
            if !plan.before_apply_too && !plan.reads_fail && valid {
                assert!(result.is_ok(), "outcome not settled: {context}");
            }
            // Resending with the token: applied once, whatever the first call did.
            if let Err(Error::OutcomeUnknown {
                token: Some(token), ..
            }) = &result
            {
                let resend = matches!(
                    call,
                    TallyCall::Put { resend: true, .. } | TallyCall::Update { resend: true, .. }
                );
                if resend {
                    RESENT.fetch_add(1, Ordering::Relaxed);
                    result = send(Some(token.clone())).await;
                    actual = state(db.get(key()).consistent().await?);
                    check(&result, actual).map_err(|e| {
                        format!("{e} (resent): {context}; then {result:?}, stored {actual:?}")
                    })?;
                }
            }
            // The model follows the answers, not the table: applied where the call said
            // so, unchanged where it refused; an unknown outcome may be either.
            model[id] = match &result {
                Ok(_) => applied,
                Err(Error::OutcomeUnknown { .. }) => actual,
                Err(_) => before,
            };
        }
        // Every tally as the answers say, nothing else.
        for (id, expected) in model.iter().enumerate() {
            assert_eq!(
                state(db.get(Tally::key(name(id))).consistent().await?),
                *expected
            );
        }
        let stats = faults.stats();
        Ok(stats.server_errors_after_apply + stats.server_errors)
    });
    // The unknown outcomes and their resending were met, not only settled calls.
    let (unknown, resent) = (
        UNKNOWN.load(Ordering::Relaxed),
        RESENT.load(Ordering::Relaxed),
    );
    assert!(
        unknown > 0 && resent > 0,
        "{unknown} unknown outcomes, {resent} resent"
    );
}

/// A chunked put (`if_absent`, or a condition on the stored item) applied with its
/// answer lost: its outcome is settled or unknown. Resent with its token, it reports
/// success and leaves the value the first call stored whole: it deletes the chunks it
/// wrote itself (the stored item does not name them), never those the item names.
#[tokio::test]
async fn chunked_puts_resent_with_their_token_keep_the_chunks_the_item_names() -> TestResult {
    use crate::chunk::{bytes, message, message_key, named_and_present, sweep_aged, Message};
    let db = local::fresh_table::<App>().await?;
    // Per kind of put (`if_absent`, conditioned): outcomes unknown, and settled.
    let (mut unknown, mut settled) = ([0; 2], [0; 2]);
    // Seeds 0 to 13 meet both outcomes for both kinds (6 and 13 unknown, most settled).
    for seed in 0..14u64 {
        for conditioned in [false, true] {
            let id = format!("m{seed}-{conditioned}");
            let key = || message_key(&id);
            let old = message(&id, format!("old {seed} ").repeat(600), bytes(3000, 1));
            if conditioned {
                db.put(&old).await?;
            }
            let new = Message {
                subject: format!("new {seed}"),
                ..message(&id, format!("new {seed} ").repeat(700), bytes(4500, 2))
            };
            let put = |db: &Db<App>| {
                let put = db.put(&new);
                if conditioned {
                    put.condition(Message::fields().subject.eq(old.subject.clone()))
                } else {
                    put.if_absent()
                }
            };
            // One attempt a call; each read and each item write answered with a 500 (the
            // write applied) half the time: the put's first read must succeed, its item
            // write be lost, and its settling read fail for the outcome to stay unknown.
            let faults = Faults::new(seed)
                .rate(0.5)
                .kinds([FaultKind::ServerErrorAfterApply])
                .operations(["GetItem", "PutItem"]);
            let lossy = faulty_with(
                &db,
                &faults,
                RetryConfig::standard().with_max_attempts(1),
                QUOTA,
            )
            .await?;
            let token = match put(&lossy).await {
                Ok(()) => {
                    settled[usize::from(conditioned)] += 1;
                    assert_eq!(db.get(key()).await?.as_ref(), Some(&new), "{id}: settled");
                    continue;
                }
                Err(Error::OutcomeUnknown {
                    token: Some(token), ..
                }) => token,
                // The first read failed: nothing was written.
                Err(e) => {
                    let expected = conditioned.then_some(&old);
                    assert_eq!(db.get(key()).await?.as_ref(), expected, "{id}: {e}");
                    continue;
                }
            };
            unknown[usize::from(conditioned)] += 1;
            assert_eq!(db.get(key()).await?.as_ref(), Some(&new), "{id}: applied");
            let (_, before) = named_and_present(&db).await?;
            put(&db).write_token(token).await?;
            // The stored item, and the chunks it names, are the first call's.
            assert_eq!(db.get(key()).await?.as_ref(), Some(&new), "{id}: resent");
            let (named, present) = named_and_present(&db).await?;
            assert!(
                named.iter().all(|chunk| present.contains(chunk)),
                "{id}: a chunk the item names is missing"
            );
            // The resend left no chunk of its own behind and deleted none.
            assert_eq!(present, before, "{id}: the chunks changed");
            let report = sweep_aged(&db).await?;
            let (named, present) = named_and_present(&db).await?;
            assert_eq!(named, present, "{id}: after the sweep ({report:?})");
            assert_eq!(db.get(key()).await?.as_ref(), Some(&new), "{id}: swept");
        }
    }
    assert!(
        unknown.iter().chain(&settled).all(|n| *n > 0),
        "{unknown:?} unknown, {settled:?} settled"
    );
    Ok(())
}
