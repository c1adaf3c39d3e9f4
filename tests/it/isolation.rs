//! Key-space isolation between entity types (issue 8, point 2): a write through one entity
//! type never replaces or removes an item of another, on every write path. Single-item
//! writes and transactions fail their stored-type condition; batch writes and bulk loads,
//! which DynamoDB cannot make conditional, are refused before sending.

use crate::common::{assert_refused, fail, refused, runner, runtime_and_table, TestResult};
use dynamo_model::transact::CancelReason;
use dynamo_model::{local, Db, Entity, Error, Item, Key, RawKey, Table, ValidationReason};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use std::fmt::Debug;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A table of its own: its entities overlap on purpose, and the registry of entity types
/// is per `Table` type, so they stay out of the shared model's batch writes.
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
pub struct Iso;

/// The issue's `User`, at `sk = "PROFILE"`.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Iso, pk = "USER#{user_id}", sk = "PROFILE")]
pub struct User {
    pub user_id: String,
    pub name: String,
}

/// The issue's `Note`, at `sk = "{note_id}"`: note `PROFILE` has a user's key.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Iso, pk = "USER#{user_id}", sk = "{note_id}")]
pub struct Note {
    pub user_id: String,
    pub note_id: String,
    pub text: String,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Iso, pk = "USER#{user_id}", sk = "ORDER#{order_no}")]
pub struct Order {
    pub user_id: String,
    pub order_no: u32,
    pub total: u64,
}

/// User `user_id`, named Ada.
fn ada(user_id: &str) -> User {
    User {
        user_id: user_id.into(),
        name: "Ada".into(),
    }
}

fn note(user_id: &str, note_id: &str, text: &str) -> Note {
    Note {
        user_id: user_id.into(),
        note_id: note_id.into(),
        text: text.into(),
    }
}

fn order(user_id: &str, order_no: u32, total: u64) -> Order {
    Order {
        user_id: user_id.into(),
        order_no,
        total,
    }
}

/// At `sk = "{kind}#{seq}"`: kind `ORDER` with seq `0000000007` has the key of order 7.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Iso, pk = "USER#{user_id}", sk = "{kind}#{seq}")]
pub struct Event {
    pub user_id: String,
    pub kind: String,
    pub seq: String,
    pub body: String,
}

async fn raw_item(db: &Db<Iso>, key: &RawKey) -> Result<Option<Item>, TestCaseError> {
    let sk = key.sk.as_deref().unwrap_or_default();
    crate::common::raw_find(db, crate::common::raw_key(&key.pk, sk))
        .await
        .map_err(|e| TestCaseError::fail(format!("{e:?}")))
}

// ---------------------------------------------------------------- the examples

#[tokio::test]
async fn a_batch_put_of_a_note_never_replaces_the_user_with_its_key() -> TestResult {
    let db = local::fresh_table::<Iso>().await?;
    let user = ada("u-1");
    db.put(&user).await?;
    let note = note("u-1", "PROFILE", "hijack");
    assert_eq!(
        note.primary_key().into_raw()?,
        user.primary_key().into_raw()?
    );

    let err = db.batch_write().put(&note).await.unwrap_err();
    assert_refused(&err, ValidationReason::ForeignKeySpace);
    assert!(
        err.to_string().contains("User"),
        "names the other type: {err}"
    );
    refused(
        db.bulk_load().puts([&note]),
        ValidationReason::ForeignKeySpace,
    )
    .await;
    // One refused operation refuses the whole batch: nothing is sent.
    let other = Note {
        note_id: "n-1".into(),
        ..note.clone()
    };
    refused(
        db.batch_write().put(&other).put(&note),
        ValidationReason::ForeignKeySpace,
    )
    .await;
    assert_eq!(db.get(other.primary_key()).await?, None);

    assert_eq!(db.get(user.primary_key()).consistent().await?, Some(user));
    // A note of its own key space is written as usual.
    assert_eq!(db.batch_write().put(&other).await?.written, 1);
    Ok(())
}

#[tokio::test]
async fn a_crafted_batch_delete_never_removes_an_order() -> TestResult {
    let db = local::fresh_table::<Iso>().await?;
    let order = order("u-1", 7, 1999);
    db.put(&order).await?;
    let order_key = order.primary_key().into_raw()?;

    // A `Key<Note>` built from the order's key values.
    let crafted = Key::<Note>::from_raw(order_key.clone());
    refused(
        db.batch_write().delete(crafted),
        ValidationReason::ForeignKeySpace,
    )
    .await;
    // An event whose fields render the order's key.
    let event = Event::key(EventKey {
        user_id: "u-1",
        kind: "ORDER",
        seq: "0000000007",
    });
    assert_eq!(event.raw()?, &order_key);
    refused(
        db.batch_write().delete(event),
        ValidationReason::ForeignKeySpace,
    )
    .await;
    // The same operations resubmitted as raw operations are checked as well.
    refused(
        db.batch_write().ops([dynamo_model::WriteOp::Delete {
            entity: "Note",
            key: order_key.clone(),
            table: None,
        }]),
        ValidationReason::ForeignKeySpace,
    )
    .await;

    assert_eq!(db.get(order.primary_key()).consistent().await?, Some(order));
    Ok(())
}

// ---------------------------------------------------------------- every write path

/// An entity type the property writes through: what its update and check change.
trait Writer: Entity<Table = Iso> + Clone + Debug {
    fn update(db: &Db<Iso>, key: Key<Self>) -> dynamo_model::item::Update<Self>;
    fn condition() -> dynamo_model::Condition<Self>;
}

/// `Writer` for `$entity`: its update sets `$field` to `$value`, its check is that
/// `$field` exists.
macro_rules! writer {
    ($entity:ident, $field:ident, $value:expr) => {
        impl Writer for $entity {
            fn update(db: &Db<Iso>, key: Key<Self>) -> dynamo_model::item::Update<Self> {
                db.update(key).set($entity::fields().$field, $value)
            }
            fn condition() -> dynamo_model::Condition<Self> {
                $entity::fields().$field.exists()
            }
        }
    };
}

writer!(User, name, "changed");
writer!(Note, text, "changed");
writer!(Order, total, 1u64);
writer!(Event, body, "changed");

const PATHS: [&str; 10] = [
    "put",
    "update",
    "delete",
    "batch put",
    "batch delete",
    "bulk load",
    "transaction put",
    "transaction update",
    "transaction delete",
    "transaction check",
];

/// Writes `a` through write path `path`.
async fn write<A: Writer>(db: &Db<Iso>, a: &A, path: &str) -> Result<(), Error> {
    let key = a.primary_key();
    match path {
        "put" => db.put(a).await,
        "update" => A::update(db, key).await.map(drop),
        "delete" => db.delete(key).await,
        "batch put" => db.batch_write().put(a).await.map(drop),
        "batch delete" => db.batch_write().delete(key).await.map(drop),
        "bulk load" => db.bulk_load().puts([a]).await.map(drop),
        "transaction put" => db.transact_write().put(db.put(a)).await,
        "transaction update" => db.transact_write().update(A::update(db, key)).await,
        "transaction delete" => db.transact_write().delete(db.delete(key)).await,
        "transaction check" => db.transact_write().check(key, A::condition()).await,
        other => unreachable!("no write path {other}"),
    }
}

/// What a write under another entity type's item may end in: a refusal before sending,
/// or a failed stored-type condition.
fn is_refusal(err: &Error) -> bool {
    match err {
        Error::Validation { reason, .. } => *reason == ValidationReason::ForeignKeySpace,
        Error::OtherEntityStored { .. }
        | Error::ConditionFailed { .. }
        | Error::NotFound { .. } => true,
        Error::TransactionCanceled { operations, .. } => operations.iter().all(|o| {
            matches!(
                o.reason,
                CancelReason::ConditionalCheckFailed | CancelReason::OtherEntityStored(_)
            )
        }),
        _ => false,
    }
}

/// Puts `b`, then writes `a` through every path; `b`'s stored item must stay exactly as it
/// was. Where `a` has `b`'s key, every write must fail. `a_foreign`: `a`'s key is one
/// another entity type can own (the test's own account of the templates), so batch
/// writes must be refused; otherwise they must go through.
async fn isolate<A: Writer, B: Entity<Table = Iso> + Debug>(
    db: &Db<Iso>,
    a: &A,
    b: &B,
    a_foreign: bool,
) -> Result<(), TestCaseError> {
    db.put(b).await.map_err(fail)?;
    let b_key = b.primary_key().into_raw().map_err(fail)?;
    let stored = raw_item(db, &b_key).await?;
    prop_assert!(stored.is_some());
    let same_key = a.primary_key().into_raw().map_err(fail)? == b_key;
    for path in PATHS {
        let result = write(db, a, path).await;
        let after = raw_item(db, &b_key).await?;
        prop_assert_eq!(&after, &stored, "{} through {:?} changed {:?}", path, a, b);
        let batch = path.starts_with("batch") || path == "bulk load";
        let must_fail = same_key || (batch && a_foreign);
        match &result {
            Err(e) if must_fail => {
                prop_assert!(is_refusal(e), "{} through {:?}: {:?}", path, a, e);
                if batch {
                    prop_assert_eq!(
                        e.validation_reason(),
                        Some(ValidationReason::ForeignKeySpace)
                    );
                }
            }
            Ok(()) => prop_assert!(
                !must_fail,
                "{} through {:?} over {:?} succeeded",
                path,
                a,
                b
            ),
            // A write away from `b`'s key, of a key only `a`'s type can own: the update
            // and check need an existing item of `a`, the rest go through.
            Err(e) => prop_assert!(
                path.contains("update") || path.contains("check"),
                "{} through {:?}: {:?}",
                path,
                a,
                e
            ),
        }
    }
    Ok(())
}

fn values() -> impl Strategy<Value = (String, u32, bool)> {
    (
        prop_oneof![
            Just("PROFILE".to_owned()),
            Just("ORDER".to_owned()),
            "[A-Z]{1,6}",
            "[a-z#\"$]{1,5}",
        ],
        prop_oneof![0u32..3, any::<u32>()],
        prop::bool::weighted(0.6),
    )
}

/// For random key values of entities whose templates overlap (a note under any sort key
/// vs a user's `PROFILE`; an event under `{kind}#{seq}` vs an order's `ORDER#{n}`), in
/// both directions, a write through one never modifies or removes the other's item on any
/// write path: it is refused or fails its condition.
#[test]
fn a_write_through_one_entity_type_never_touches_another() -> TestResult {
    let (runtime, db) = runtime_and_table::<Iso>()?;
    let case = AtomicUsize::new(0);
    let mut runner = runner(24);
    let result = runner.run(&(values(), 0u8..4), |((word, n, collide), direction)| {
        // Each case in its own partition.
        let user_id = format!("c{}", case.fetch_add(1, Ordering::Relaxed));
        let user = ada(&user_id);
        let note = note(&user_id, if collide { "PROFILE" } else { &word }, "note");
        let order = order(&user_id, n, 5);
        let event = Event {
            user_id,
            kind: if collide { "ORDER".into() } else { word },
            seq: if collide {
                format!("{n:010}")
            } else {
                n.to_string()
            },
            body: "event".into(),
        };
        // Which keys another entity type can own, from the templates: every user key is
        // a note key (note `PROFILE`), every order key an event key (kind `ORDER`, a
        // ten-digit u32 as seq).
        let note_foreign = note.note_id == "PROFILE";
        let event_foreign = event.kind == "ORDER"
            && event.seq.len() == 10
            && event.seq.parse::<u32>().is_ok()
            && event.seq.bytes().all(|b| b.is_ascii_digit());
        runtime.block_on(async {
            match direction {
                0 => isolate(&db, &note, &user, note_foreign).await,
                1 => isolate(&db, &user, &note, true).await,
                2 => isolate(&db, &event, &order, event_foreign).await,
                _ => isolate(&db, &order, &event, true).await,
            }
        })
    });
    result.map_err(|e| e.to_string().into())
}
