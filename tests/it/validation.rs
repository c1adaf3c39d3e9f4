//! Field and entity rules (`#[dynamo(validate(..))]`): a value that breaks one is refused
//! before sending on every path that writes it (put, batch, transaction, update, history,
//! migration), and nothing of the write is stored.

use crate::common::*;
use dynamo_model::{local, Entity, Error, Table, ValidationReason};
use proptest::prelude::*;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
pub struct Accounts;

/// An account whose handle, age and plan have rules, and whose plan and credit agree.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Accounts, pk = "ACCOUNT#{id}", sk = "ACCOUNT", validate = plan_has_credit)]
pub struct Account {
    pub id: String,
    #[dynamo(validate(length(min = 3, max = 16), pattern = "^[a-z0-9_]+$"))]
    pub handle: String,
    #[dynamo(validate(range(min = 13, max = 150)))]
    pub age: u32,
    #[dynamo(validate(one_of("free", "pro")))]
    pub plan: String,
    pub credit: u32,
}

fn plan_has_credit(a: &Account) -> Result<(), String> {
    match (a.plan.as_str(), a.credit) {
        ("pro", 0) => Err("a pro account has credit".into()),
        _ => Ok(()),
    }
}

/// The same rules with a history of revisions.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Accounts, pk = "PROFILE#{id}", sk = "PROFILE", history)]
pub struct Profile {
    pub id: String,
    #[dynamo(validate(length(max = 8)))]
    pub bio: String,
    #[dynamo(version)]
    pub version: u64,
}

fn account(id: &str) -> Account {
    Account {
        id: id.into(),
        handle: format!("user_{id}"),
        age: 30,
        plan: "free".into(),
        credit: 0,
    }
}

/// `result` is the rule `field` breaks (`None`: the entity's own rule).
fn assert_broken<T: std::fmt::Debug>(result: Result<T, Error>, field: Option<&str>) {
    match result {
        Err(Error::Rule(v)) => {
            assert_eq!(v.field_name(), field, "{v}");
            assert_eq!(v.entity(), "Account");
        }
        other => panic!("expected a broken rule of {field:?}, got {other:?}"),
    }
}

#[tokio::test]
async fn a_broken_rule_writes_nothing_on_any_path() -> TestResult {
    let db = local::fresh_table::<Accounts>().await?;
    let mut young = account("a");
    young.age = 12;
    assert_broken(db.put(&young).await, Some("age"));

    let mut shouting = account("b");
    shouting.handle = "LOUD".into();
    let batch = db
        .batch_write()
        .put(&account("c"))
        .put(&shouting)
        .send()
        .await;
    assert_broken(batch, Some("handle"));

    let mut unpaid = account("d");
    unpaid.plan = "pro".into();
    let tx = db
        .transact_write()
        .put(db.put(&account("e")))
        .put(db.put(&unpaid))
        .send()
        .await;
    assert_broken(tx, None);
    assert!(raw_table(&db).await?.is_empty(), "nothing written");

    db.put(&account("f")).await?;
    let f = Account::fields();
    let before = raw_table(&db).await?;
    let set = db
        .update(Account::key("f"))
        .set(f.plan, "gold")
        .send()
        .await;
    assert_broken(set, Some("plan"));
    let in_tx = db
        .transact_write()
        .update(db.update(Account::key("f")).set(f.handle, "x"))
        .send()
        .await;
    assert_broken(in_tx, Some("handle"));
    let upsert = db
        .update(Account::key("g"))
        .upsert()
        .set(f.age, 200u32)
        .send()
        .await;
    assert_broken(upsert, Some("age"));
    let add = db.update(Account::key("f")).add(f.age, 200).send().await;
    assert_refused(
        &add.map(drop).err().ok_or("added")?,
        ValidationReason::RuledField,
    );
    assert_eq!(raw_table(&db).await?, before, "the item as it was");

    // What keeps the rules is written, by each path.
    let updated = db
        .update(Account::key("f"))
        .set(f.handle, "renamed_f")
        .add(f.credit, 5)
        .send()
        .await?;
    assert_eq!((updated.handle.as_str(), updated.credit), ("renamed_f", 5));
    db.batch_write().put(&account("h")).send().await?;
    Ok(())
}

#[tokio::test]
async fn history_and_migration_writes_keep_the_rules() -> TestResult {
    let db = local::fresh_table::<Accounts>().await?;
    let history = db.history::<Profile>();
    let long = Profile {
        id: "p".into(),
        bio: "much too long".into(),
        version: 0,
    };
    assert!(matches!(history.create(&long).await, Err(Error::Rule(_))));
    assert!(
        raw_table(&db).await?.is_empty(),
        "no revision, no latest copy"
    );
    let short = Profile {
        bio: "short".into(),
        ..long
    };
    history.create(&short).await?;
    let revised = history
        .revise(Profile::key("p"), |p| p.bio = "longer than eight".into())
        .await;
    assert!(matches!(revised, Err(Error::Rule(_))), "{revised:?}");
    assert_eq!(
        history
            .revisions(Profile::key("p"))
            .all()
            .await?
            .items
            .len(),
        1
    );

    for id in ["m1", "m2"] {
        db.put(&account(id)).await?;
    }
    let before = raw_table(&db).await?;
    let report = db
        .migration::<Account>("make-everyone-twelve")
        .map(each(|a: &mut Account| a.age = 12))
        .run()
        .await?;
    assert_eq!(report.failures.len(), 2, "{:?}", report.failures);
    for failure in &report.failures {
        assert!(matches!(failure.error, Error::Rule(_)), "{}", failure.error);
    }
    assert_eq!(raw_table(&db).await?, before, "every account as it was");
    Ok(())
}

#[test]
fn a_put_is_stored_exactly_when_its_values_keep_the_rules() -> TestResult {
    let (runtime, db) = runtime_and_table::<Accounts>()?;
    let values = (
        "[a-zA-Z0-9_ ]{0,20}",
        0u32..200,
        prop_oneof!["free", "pro", "gold"],
        0u32..3,
    );
    runner(24).run(&values, |(handle, age, plan, credit)| {
        runtime.block_on(async {
            let id = format!("{handle}/{age}/{plan}/{credit}");
            let a = Account {
                id: id.clone(),
                handle,
                age,
                plan,
                credit,
            };
            let keeps = (3..=16).contains(&a.handle.chars().count())
                && a.handle
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                && (13..=150).contains(&a.age)
                && ["free", "pro"].contains(&a.plan.as_str())
                && !(a.plan == "pro" && a.credit == 0);
            let written = db.put(&a).await;
            prop_assert_eq!(written.is_ok(), keeps, "{:?}", written);
            if !keeps {
                prop_assert!(matches!(written, Err(Error::Rule(_))));
            }
            let stored = db.get(Account::key(&id)).await.map_err(fail)?;
            prop_assert_eq!(stored.is_some(), keeps);
            Ok(())
        })
    })?;
    Ok(())
}
