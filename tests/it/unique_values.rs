//! Unique values other than the key (`#[dynamo(unique)]`): one sentinel item per held
//! value, claimed and released in the transaction of every put, update and delete;
//! refused in batches and in other transactions; and, under concurrent writers and lost
//! responses, every held value with exactly one sentinel, every sentinel naming a live item
//! that holds its value.

use crate::common::*;
use dynamo_model::local::faults::{FaultKind, Faults};
use dynamo_model::{local, Db, Entity, Error, Item, Table, ValidationReason};
use std::collections::BTreeMap;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
pub struct Site;

/// A user with a unique email and an optional unique handle.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Site, pk = "USER#{id}", sk = "PROFILE")]
pub struct User {
    pub id: String,
    #[dynamo(unique)]
    pub email: String,
    #[dynamo(unique)]
    pub handle: Option<String>,
    pub name: String,
}

/// A booking whose room and hour together are unique.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Site, pk = "BOOKING#{id}", sk = "BOOKING")]
pub struct Booking {
    pub id: String,
    #[dynamo(unique = "slot")]
    pub room: String,
    #[dynamo(unique = "slot")]
    pub hour: u32,
}

fn user(id: &str, email: &str) -> User {
    User {
        id: id.into(),
        email: email.into(),
        handle: None,
        name: format!("user {id}"),
    }
}

/// The sentinels the table holds, by partition key: the owner each names.
async fn sentinels(db: &Db<Site>) -> Res<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for item in raw_items(db).await? {
        let pk = text(&item, "PK");
        if pk.starts_with(dynamo_model::unique::UNIQUE_PREFIX) {
            out.insert(pk, text(&item, dynamo_model::unique::OWNER_PK));
        }
    }
    Ok(out)
}

fn text(item: &Item, attribute: &str) -> String {
    item.get(attribute)
        .and_then(|v| v.as_s().ok())
        .cloned()
        .unwrap_or_default()
}

/// The sentinel key of `value` of `constraint` on `entity`'s items.
fn sentinel(entity: &str, constraint: &str, value: &str) -> String {
    let mut pk = String::from(dynamo_model::unique::UNIQUE_PREFIX);
    for (i, part) in [entity, constraint, value].into_iter().enumerate() {
        if i > 0 {
            pk.push('#');
        }
        dynamo_model::key::escape_str(part, &mut pk).expect("escaped");
    }
    pk
}

/// The invariant: the sentinels are exactly those of the values the live users hold,
/// each naming its holder (two users holding one value would name it twice).
async fn assert_sentinels_match_users(db: &Db<Site>) -> TestResult {
    let mut expected = BTreeMap::new();
    let users: Vec<User> = db.scan::<User>().all().await?.items;
    for u in &users {
        let owner = format!("USER#{}", u.id);
        let values = [
            Some(("email", &u.email)),
            u.handle.as_ref().map(|h| ("handle", h)),
        ];
        for (constraint, value) in values.into_iter().flatten() {
            let key = sentinel("User", constraint, value);
            if let Some(other) = expected.insert(key.clone(), owner.clone()) {
                return Err(format!("{key} is held by {other} and {owner}").into());
            }
        }
    }
    assert_eq!(sentinels(db).await?, expected, "users: {users:?}");
    Ok(())
}

/// A fresh table holding user 1, with the email `email`.
async fn with_user(email: &str) -> Res<local::TempTable<Site>> {
    let db = local::fresh_table::<Site>().await?;
    db.put(&user("1", email)).await?;
    Ok(db)
}

fn reason(e: &Error) -> Option<ValidationReason> {
    e.validation_reason()
}

#[tokio::test]
async fn a_taken_value_is_refused_with_nothing_written() -> TestResult {
    let db = with_user("ada@example.com").await?;
    match db.put(&user("2", "ada@example.com")).await {
        Err(Error::UniqueValueTaken {
            entity,
            constraint,
            owner,
            ..
        }) => {
            assert_eq!((entity, constraint), ("User", "email"));
            assert!(owner.contains("USER#1"), "{owner}");
        }
        other => panic!("a second holder of one email: {other:?}"),
    }
    assert_eq!(db.get(User::key("2")).consistent().await?, None);
    let found = db
        .get_unique(User::by_email(&"ada@example.com".into()))
        .await?;
    assert_eq!(found.map(|u| u.id), Some("1".into()));
    assert_eq!(
        db.get_unique(User::by_email(&"nobody@example.com".into()))
            .await?,
        None
    );
    // Creating under a taken value fails the same way; the same value put again by its
    // holder is no conflict.
    let created = db.create(&mut user("3", "ada@example.com")).await;
    assert!(matches!(created, Err(Error::UniqueValueTaken { .. })));
    db.put(&user("1", "ada@example.com")).await?;
    assert_sentinels_match_users(&db).await
}

#[tokio::test]
async fn changes_move_the_sentinel_and_deletes_release_it() -> TestResult {
    let (f, db) = (User::fields(), with_user("a@x").await?);
    // An update that changes the email: the old one is free, the new one taken.
    let updated = db.update(User::key("1")).set(f.email, "b@x".to_string());
    assert_eq!(updated.await?.email, "b@x");
    db.put(&user("2", "a@x")).await?;
    assert!(matches!(
        db.update(User::key("2"))
            .set(f.email, "b@x".to_string())
            .await,
        Err(Error::UniqueValueTaken { .. })
    ));
    assert_eq!(
        db.get(User::key("2")).consistent().await?.map(|u| u.email),
        Some("a@x".into())
    );
    // An optional value: set, then removed (released).
    db.update(User::key("1"))
        .set(f.handle, Some("ada".to_string()))
        .send_returning_nothing()
        .await?;
    assert_sentinels_match_users(&db).await?;
    db.update(User::key("1"))
        .remove(f.handle)
        .send_returning_nothing()
        .await?;
    let mut with_handle = user("2", "a@x");
    with_handle.handle = Some("ada".into());
    db.put(&with_handle).await?;
    // A put that overwrites with another value releases the old one.
    db.put(&user("2", "c@x")).await?;
    db.put(&user("3", "a@x")).await?;
    assert_sentinels_match_users(&db).await?;
    // A delete releases every value of the item.
    db.delete(User::key("3")).await?;
    db.delete(User::key("missing")).await?;
    let must_exist = db.delete(User::key("missing")).must_exist().await;
    assert!(matches!(must_exist, Err(Error::NotFound { .. })));
    db.put(&user("4", "a@x")).await?;
    assert_sentinels_match_users(&db).await
}

#[tokio::test]
async fn an_updates_own_conditions_and_versions_report_as_without_unique_values() -> TestResult {
    let db = with_user("a@x").await?;
    let f = User::fields();
    let refused = db
        .update(User::key("1"))
        .set(f.email, "b@x".to_string())
        .condition(f.name.eq("someone else".to_string()))
        .await;
    assert!(
        matches!(refused, Err(Error::ConditionFailed { .. })),
        "{refused:?}"
    );
    let missing = db
        .update(User::key("2"))
        .set(f.email, "b@x".to_string())
        .await;
    assert!(
        matches!(missing, Err(Error::NotFound { .. })),
        "{missing:?}"
    );
    // An update of other fields is a plain update, also inside a transaction.
    db.transact_write()
        .update(db.update(User::key("1")).set(f.name, "Ada".to_string()))
        .await?;
    assert_sentinels_match_users(&db).await
}

#[tokio::test]
async fn groups_of_fields_are_unique_together() -> TestResult {
    let db = local::fresh_table::<Site>().await?;
    let booking = |id: &str, room: &str, hour| Booking {
        id: id.into(),
        room: room.into(),
        hour,
    };
    db.put(&booking("b1", "blue", 9)).await?;
    db.put(&booking("b2", "blue", 10)).await?;
    db.put(&booking("b3", "red", 9)).await?;
    match db.put(&booking("b4", "blue", 9)).await {
        Err(Error::UniqueValueTaken { constraint, .. }) => assert_eq!(constraint, "slot"),
        other => panic!("a second booking of one slot: {other:?}"),
    }
    let found = db.get_unique(Booking::by_slot(&"blue".into(), &10)).await?;
    assert_eq!(found.map(|b| b.id), Some("b2".into()));
    // A change DynamoDB would compute cannot claim its value first.
    let f = Booking::fields();
    let added = db.update(Booking::key("b1")).add(f.hour, 1).await;
    assert_eq!(
        added.err().as_ref().and_then(reason),
        Some(ValidationReason::UniqueValue)
    );
    // Moving one part of the group moves the group's sentinel.
    db.update(Booking::key("b1"))
        .set(f.hour, 11u32)
        .send_returning_nothing()
        .await?;
    db.put(&booking("b4", "blue", 9)).await?;
    Ok(())
}

#[tokio::test]
async fn batches_and_other_transactions_are_refused() -> TestResult {
    let db = local::fresh_table::<Site>().await?;
    let u = user("1", "a@x");
    let batch = db.batch_write().put(&u).await;
    assert_eq!(
        batch.err().as_ref().and_then(reason),
        Some(ValidationReason::UniqueValue)
    );
    let batch = db.batch_write().delete(User::key("1")).await;
    assert_eq!(
        batch.err().as_ref().and_then(reason),
        Some(ValidationReason::UniqueValue)
    );
    let tx = db.transact_write().put(db.put(&u)).await;
    assert_eq!(
        tx.err().as_ref().and_then(reason),
        Some(ValidationReason::UniqueValue)
    );
    let tx = db.transact_write().delete(db.delete(User::key("1"))).await;
    assert_eq!(
        tx.err().as_ref().and_then(reason),
        Some(ValidationReason::UniqueValue)
    );
    let f = User::fields();
    let change = db.update(User::key("1")).set(f.email, "b@x".to_string());
    let tx = db.transact_write().update(change).await;
    assert_eq!(
        tx.err().as_ref().and_then(reason),
        Some(ValidationReason::UniqueValue)
    );
    // Raw batch operations cannot write into the sentinels' key space either.
    let forged = dynamo_model::WriteOp::Delete {
        entity: "User",
        key: dynamo_model::RawKey {
            pk: sentinel("User", "email", "a@x"),
            sk: Some("_UNIQUE".into()),
        },
        table: None,
    };
    let raw = db.batch_write().ops([forged]).await;
    assert_eq!(
        raw.err().as_ref().and_then(reason),
        Some(ValidationReason::ForeignKeySpace)
    );
    // Nor write the entity's own items around the protocol.
    let item = u.to_item()?;
    let key = u.primary_key().raw()?.clone();
    let put = dynamo_model::WriteOp::Put {
        entity: "User",
        key,
        item,
        table: None,
    };
    let raw = db.batch_write().ops([put]).await;
    assert_eq!(
        raw.err().as_ref().and_then(reason),
        Some(ValidationReason::UniqueValue)
    );
    // A single request rendered for the caller would skip the sentinels, and hooks made
    // for one do not fit the transaction.
    let params = db.put(&u).params();
    assert_eq!(
        params.err().as_ref().and_then(reason),
        Some(ValidationReason::UniqueValue)
    );
    let params = db.delete(User::key("1")).params();
    assert_eq!(
        params.err().as_ref().and_then(reason),
        Some(ValidationReason::UniqueValue)
    );
    let hooked = db.put(&u).customize(|b| b).await;
    assert_eq!(
        hooked.err().as_ref().and_then(reason),
        Some(ValidationReason::UniqueValue)
    );
    assert_eq!(raw_items(&db).await?.len(), 0, "nothing written");
    Ok(())
}

/// A user item as another program wrote it: no sentinel.
fn unclaimed(id: &str, email: &str) -> Item {
    [
        ("PK", s(&format!("USER#{id}"))),
        ("SK", s("PROFILE")),
        ("_type", s("User")),
        ("id", s(id)),
        ("email", s(email)),
        ("name", s("imported")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

#[tokio::test]
async fn a_backfill_claims_held_values_and_reports_values_held_twice() -> TestResult {
    let db = local::fresh_table::<Site>().await?;
    for (id, email) in [("1", "a@x"), ("2", "b@x"), ("3", "a@x")] {
        put_raw(&db, unclaimed(id, email)).await?;
    }
    let report = db.backfill_unique::<User>().await?;
    assert_eq!((report.items, report.claimed, report.changed), (3, 2, 0));
    let [conflict] = report.conflicts.as_slice() else {
        panic!("one value held twice: {report:?}");
    };
    assert_eq!(
        (conflict.constraint, conflict.value.as_str()),
        ("email", "a@x")
    );
    assert_ne!(conflict.holder, conflict.item);
    // Resolved by hand, then the backfill is clean and the sentinels are the values'.
    let loser = if conflict.item.contains("USER#3") {
        "3"
    } else {
        "1"
    };
    db.put(&user(loser, "c@x")).await?;
    let again = db.backfill_unique::<User>().await?;
    assert!(again.conflicts.is_empty(), "{again:?}");
    assert_sentinels_match_users(&db).await?;
    // A migration cannot change a unique value: it writes no sentinel.
    let lowered = db
        .migration::<User>("shout")
        .map(each(|u: &mut User| u.email = u.email.to_uppercase()))
        .run()
        .await?;
    assert_eq!(lowered.failures.len(), 3);
    let refused = lowered.failures[0].error.validation_reason();
    assert_eq!(refused, Some(ValidationReason::UniqueValue));
    assert_sentinels_match_users(&db).await
}

/// One step of a writer in the property test.
#[derive(Debug, Clone)]
enum Step {
    Create(u8, u8),
    Put(u8, u8),
    Change(u8, u8),
    Delete(u8),
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    prop_oneof![
        (0u8..6, 0u8..4).prop_map(|(id, email)| Step::Create(id, email)),
        (0u8..6, 0u8..4).prop_map(|(id, email)| Step::Put(id, email)),
        (0u8..6, 0u8..4).prop_map(|(id, email)| Step::Change(id, email)),
        (0u8..6).prop_map(Step::Delete),
    ]
}

/// Runs `steps` against `db`; every outcome a concurrent writer may see is accepted, any
/// other error fails.
async fn run(db: Db<Site>, steps: Vec<Step>) -> Result<(), String> {
    let f = User::fields();
    for step in steps {
        let result = match &step {
            Step::Create(id, e) => {
                let mut u = user(&id.to_string(), &format!("e{e}"));
                db.create(&mut u).await
            }
            Step::Put(id, e) => db.put(&user(&id.to_string(), &format!("e{e}"))).await,
            Step::Change(id, e) => {
                db.update(User::key(id.to_string()))
                    .set(f.email, format!("e{e}"))
                    .send_returning_nothing()
                    .await
            }
            Step::Delete(id) => db.delete(User::key(id.to_string())).await,
        };
        match result {
            Ok(())
            | Err(Error::UniqueValueTaken { .. })
            | Err(Error::ConditionFailed { .. })
            | Err(Error::NotFound { .. })
            | Err(Error::TransactionCanceled { .. })
            | Err(Error::DeadlineExceeded { .. })
            // A read before the write that failed (the client suffers server errors and
            // its SDK does not retry): nothing was written.
            | Err(Error::Service { .. }) => {}
            Err(e) => return Err(format!("{step:?}: {e}")),
        }
    }
    Ok(())
}

/// Concurrent creators, overwriters, updaters and deleters over a few ids and emails,
/// through a client that suffers conflicts, server errors and responses lost after the
/// write was applied: at the end, the sentinels are exactly the held values'.
#[test]
fn concurrent_writers_under_faults_leave_one_sentinel_per_held_value() -> TestResult {
    let (runtime, db) = runtime_and_table::<Site>()?;
    let writers = proptest::collection::vec(proptest::collection::vec(step(), 6..14), 3);
    let seed = std::sync::atomic::AtomicU64::new(0);
    // Responses lost after their transaction was applied, over every case.
    let lost = std::sync::atomic::AtomicU64::new(0);
    runner(6).run(&writers, |writers| {
        let seed = seed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        runtime.block_on(async {
            for item in raw_items(&db).await.map_err(fail)? {
                let (pk, sk) = (text(&item, "PK"), text(&item, "SK"));
                raw_delete(&db, &pk, &sk).await.map_err(fail)?;
            }
            let faults = Faults::new(seed)
                .rate(0.3)
                .kinds([
                    FaultKind::TransactionConflict,
                    FaultKind::ServerErrorAfterApply,
                    FaultKind::ServerError,
                ])
                .operations(["TransactWriteItems", "GetItem"]);
            let flaky = faulty(&db, &faults).await.map_err(fail)?;
            let tasks: Vec<_> = writers
                .into_iter()
                .map(|steps| tokio::spawn(run(flaky.clone(), steps)))
                .collect();
            for task in tasks {
                task.await.map_err(fail)?.map_err(fail)?;
            }
            assert_sentinels_match_users(&db).await.map_err(fail)?;
            let stats = faults.stats();
            lost.fetch_add(
                stats.server_errors_after_apply,
                std::sync::atomic::Ordering::Relaxed,
            );
            Ok(())
        })
    })?;
    assert!(
        lost.into_inner() > 0,
        "no response was lost: the faults did not reach the writes"
    );
    Ok(())
}
