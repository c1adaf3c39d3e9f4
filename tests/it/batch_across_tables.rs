//! One batch write across several tables (`BatchWrite::put_to` / `delete_from`): tables of
//! two `Table` types, two tables of one type, two period tables; every write in its own
//! table under faults (period tables included) and after resubmission, duplicates refused
//! per table.

use crate::common::*;
use dynamo_model::local::faults::{FaultKind, Faults};
use dynamo_model::local::TempTable;
use dynamo_model::period::{Period, PeriodTables};
use dynamo_model::{local, Db, Entity, Table, ValidationReason};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use time::macros::datetime;

/// A table type of its own, besides `App`.
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
pub struct Ledger;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Ledger, pk = "ENTRY#{id}", sk = "ENTRY", entity_type = "LedgerEntry")]
pub struct LedgerEntry {
    pub id: String,
    pub cents: i64,
}

pub fn entries(n: usize) -> Vec<LedgerEntry> {
    (0..n)
        .map(|i| LedgerEntry {
            id: format!("e{i:02}"),
            cents: i as i64,
        })
        .collect()
}

/// The users `prefix0`, `prefix1`, ... (`n` of them).
pub fn named(prefix: &str, n: usize) -> Vec<User> {
    (0..n)
        .map(|i| User::sample(&format!("{prefix}{i}")))
        .collect()
}

pub fn ids(users: &[User]) -> BTreeSet<String> {
    users.iter().map(|u| u.user_id.clone()).collect()
}

/// Two `App` tables and a `Ledger` table.
struct Three {
    users: Db<App>,
    twin: Db<App>,
    ledger: Db<Ledger>,
}

/// A batch from `users`' table of 60 operations: 20 puts there and the same 20 keys
/// put to `twin`, 10 entries put to `ledger`, and the deletes of `gone` (5 users of each
/// `App` table).
fn sixty(tables: &Three, fresh: &[User], gone: &[User]) -> dynamo_model::batch::BatchWrite<App> {
    tables
        .users
        .batch_write()
        .puts(fresh)
        .puts_to(&tables.twin, fresh)
        .puts_to(&tables.ledger, &entries(10))
        .deletes(gone[..5].iter().map(|u| u.primary_key()))
        .deletes_from(&tables.twin, gone[5..].iter().map(|u| u.primary_key()))
}

/// `users` and `twin` hold `fresh` (and nothing else), `ledger` its 10 entries.
async fn each_in_its_own_table(tables: &Three, fresh: &[User]) -> TestResult {
    assert_eq!(stored_ids(&tables.users).await?, ids(fresh));
    assert_eq!(stored_ids(&tables.twin).await?, ids(fresh));
    assert_eq!(raw_items(&tables.users).await?.len(), fresh.len());
    assert_eq!(raw_items(&tables.twin).await?.len(), fresh.len());
    let mut stored = tables.ledger.scan::<LedgerEntry>().all().await?.items;
    stored.sort_by_key(|e| e.cents);
    assert_eq!(stored, entries(10));
    assert_eq!(raw_items(&tables.ledger).await?.len(), 10);
    Ok(())
}

/// Fresh tables (dropped with the guards), `gone` seeded: the first five users of
/// `named("gone", 10)` in `users`, the others in `twin`.
async fn seeded() -> Res<((TempTable<App>, TempTable<App>, TempTable<Ledger>), Three)> {
    let (users, twin) = (
        local::fresh_table::<App>().await?,
        local::fresh_table::<App>().await?,
    );
    let ledger = local::fresh_table::<Ledger>().await?;
    let tables = Three {
        users: (*users).clone(),
        twin: (*twin).clone(),
        ledger: (*ledger).clone(),
    };
    let gone = named("gone", 10);
    for user in &gone[..5] {
        tables.users.put(user).await?;
    }
    for user in &gone[5..] {
        tables.twin.put(user).await?;
    }
    Ok(((users, twin, ledger), tables))
}

/// Nothing dropped: each of the `total` operations confirmed or handed back, none twice,
/// and each handed back naming the batch's own table (`None`) or one of `others`.
fn each_confirmed_or_handed_back(
    out: &dynamo_model::batch::BatchWriteOutput,
    total: usize,
    others: &[&str],
) {
    assert!(out.failed.is_empty(), "{:?}", out.failed);
    assert_eq!(out.written + out.unprocessed.len(), total);
    for op in &out.unprocessed {
        let table = op.table().map(|t| t.name());
        assert!(table.is_none_or(|t| others.contains(&t)), "{table:?}");
    }
}

#[tokio::test]
async fn sixty_puts_and_deletes_land_each_in_its_own_table() -> TestResult {
    let (_guards, tables) = seeded().await?;
    let (fresh, gone) = (named("u", 20), named("gone", 10));

    // 25 + 25 + 10 requests, in the order added, each call keyed by the tables it writes.
    let inputs = sixty(&tables, &fresh, &gone).params()?;
    let calls: Vec<(BTreeSet<String>, usize)> = inputs
        .iter()
        .filter_map(|input| input.request_items())
        .map(|m| (m.keys().cloned().collect(), m.values().map(Vec::len).sum()))
        .collect();
    let names = |dbs: &[&str]| dbs.iter().map(|n| n.to_string()).collect::<BTreeSet<_>>();
    let (a, b, c) = (
        tables.users.table_name(),
        tables.twin.table_name(),
        tables.ledger.table_name(),
    );
    assert_eq!(
        calls,
        [
            (names(&[a, b]), 25),
            (names(&[b, c]), 25),
            (names(&[a, b]), 10)
        ]
    );

    let out = sixty(&tables, &fresh, &gone).await?;
    assert_eq!(out.written, 60);
    assert!(out.unprocessed.is_empty() && out.failed.is_empty());
    each_in_its_own_table(&tables, &fresh).await
}

#[tokio::test]
async fn under_faults_unprocessed_writes_go_back_to_their_own_tables() -> TestResult {
    let (_guards, tables) = seeded().await?;
    let (fresh, gone) = (named("u", 20), named("gone", 10));

    // Every call faulted: split (part applied, the rest unprocessed), throttled, or
    // applied and answered with a 500; one client per table, all of one plan.
    let faults = Faults::new(11).rate(1.0).kinds([
        FaultKind::PartialBatch,
        FaultKind::Throttle,
        FaultKind::ServerErrorAfterApply,
    ]);
    let flaky = Three {
        users: faulty(&tables.users, &faults).await?,
        twin: faulty(&tables.twin, &faults).await?,
        ledger: faulty(&tables.ledger, &faults).await?,
    };
    let out = sixty(&flaky, &fresh, &gone).retry(quick_retry()).await?;
    let stats = faults.stats();
    assert!(
        stats.partial_batches > 0 && stats.throttled > 0 && stats.server_errors_after_apply > 0,
        "{stats:?}"
    );
    assert!(
        !out.unprocessed.is_empty(),
        "the last write of a call is never confirmed"
    );
    let others = [tables.twin.table_name(), tables.ledger.table_name()];
    each_confirmed_or_handed_back(&out, 60, &others);

    // Resubmitted with the faults off, to the batch of the first table: each operation
    // goes to its own table.
    faults.set_enabled(false);
    let left = out.unprocessed.len();
    let again = flaky.users.batch_write().ops(out.unprocessed).await?;
    assert_eq!(again.written, left);
    each_in_its_own_table(&tables, &fresh).await
}

#[tokio::test]
async fn one_batch_writes_to_two_day_tables_under_faults() -> TestResult {
    let client = local::client().await?;
    let prefix = local::unique_table_name("xb").replace('-', "_");
    let tables = PeriodTables::new(&Db::<App>::new(client, prefix.as_str()), Period::Day)?;
    let (monday, tuesday) = (
        datetime!(2026-11-30 10:00 UTC),
        datetime!(2026-12-01 10:00 UTC),
    );
    assert_eq!(tables.create_ahead(monday, 1).await?.len(), 2);
    let (first, second) = (tables.db_at(monday), tables.db_at(tuesday));
    assert_ne!(first.table_name(), second.table_name());

    // The same day tables through a client whose every call is faulted, the SDK's own
    // retries off: the crate's loop alone resubmits what each call left.
    let faults = Faults::new(23).rate(1.0).kinds([
        FaultKind::PartialBatch,
        FaultKind::Throttle,
        FaultKind::ServerErrorAfterApply,
    ]);
    let (flaky_first, flaky_second) = (
        faulty(&first, &faults).await?,
        faulty(&second, &faults).await?,
    );

    // The same users in both days, and some of each day's own.
    let (both, own) = (named("d", 12), named("only", 6));
    let out = flaky_first
        .batch_write()
        .puts(&both)
        .puts(&own[..3])
        .puts_to(&flaky_second, &both)
        .puts_to(&flaky_second, &own[3..])
        .retry(quick_retry())
        .await?;
    let stats = faults.stats();
    assert!(
        stats.partial_batches > 0 && stats.throttled > 0 && stats.server_errors_after_apply > 0,
        "{stats:?}"
    );
    each_confirmed_or_handed_back(&out, 30, &[second.table_name()]);

    // Resubmitted with the faults off: each day's table holds its own users, once.
    faults.set_enabled(false);
    let left = out.unprocessed.len();
    let again = flaky_first.batch_write().ops(out.unprocessed).await?;
    assert_eq!(again.written, left);
    assert_eq!(
        stored_ids(&first).await?,
        ids(&both).union(&ids(&own[..3])).cloned().collect()
    );
    assert_eq!(
        stored_ids(&second).await?,
        ids(&both).union(&ids(&own[3..])).cloned().collect()
    );
    assert_eq!(raw_items(&first).await?.len(), 15);
    assert_eq!(raw_items(&second).await?.len(), 15);
    tables.drop_before(datetime!(2100-01-01 00:00 UTC)).await?;
    Ok(())
}

#[tokio::test]
async fn a_key_twice_in_one_table_is_refused_once_in_each_of_two_tables_is_not() -> TestResult {
    let (users, twin) = (
        local::fresh_table::<App>().await?,
        local::fresh_table::<App>().await?,
    );
    let user = User::sample("same");
    // The batch's own table named through `put_to` is the same table.
    let twice = users.batch_write().put(&user).put_to(&users, &user).await;
    assert_refused(
        &twice.err().ok_or("a duplicate key was sent")?,
        ValidationReason::DuplicateKey,
    );
    let twice = users
        .batch_write()
        .put_to(&twin, &user)
        .delete_from(&twin, user.primary_key())
        .await;
    assert_refused(
        &twice.err().ok_or("a duplicate key was sent")?,
        ValidationReason::DuplicateKey,
    );
    assert!(stored_ids(&users).await?.is_empty() && stored_ids(&twin).await?.is_empty());

    let out = users.batch_write().put(&user).put_to(&twin, &user).await?;
    assert_eq!(out.written, 2);
    assert_eq!(stored_ids(&users).await?, ids(std::slice::from_ref(&user)));
    assert_eq!(stored_ids(&twin).await?, ids(std::slice::from_ref(&user)));
    Ok(())
}

#[tokio::test]
async fn a_table_that_refuses_fails_its_own_writes_only() -> TestResult {
    let users = local::fresh_table::<App>().await?;
    let fresh = named("u", 20);
    // A table that does not exist: DynamoDB refuses any call naming it, writing nothing.
    let nowhere = Db::<Ledger>::new(users.client().clone(), "no_such_table_xb");
    let out = users
        .batch_write()
        .puts(&fresh)
        .puts_to(&nowhere, &entries(10))
        .await?;
    assert_eq!(out.written, 20);
    assert!(out.unprocessed.is_empty());
    // Two calls (20 + 5, then 5), each refused: the entries of each failed under their
    // table's error, the users written.
    assert_eq!(
        out.failed.iter().map(|(ops, _)| ops.len()).sum::<usize>(),
        10
    );
    for (ops, err) in &out.failed {
        let tables: BTreeSet<_> = ops.iter().map(|op| op.table().map(|t| t.name())).collect();
        assert_eq!(tables, [Some("no_such_table_xb")].into_iter().collect());
        assert!(err.to_string().contains("no_such_table_xb"), "{err}");
    }
    assert_eq!(stored_ids(&users).await?, ids(&fresh));
    Ok(())
}
