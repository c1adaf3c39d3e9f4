//! Batch gets across tables (`BatchGet::and`): tables of two `Table` types, two tables of
//! one type and period tables read in shared calls, each batch's keys reported in its own
//! output (found, not found, unprocessed or failed, never lost nor twice), under faults
//! and when a table refuses.

use crate::batch_across_tables::{entries, ids, named, Ledger, LedgerEntry};
use crate::common::*;
use dynamo_model::local::faults::{FaultKind, Faults};
use dynamo_model::period::{Period, PeriodTables};
use dynamo_model::{local, Db, Entity, Key, ValidationReason};
use std::collections::BTreeSet;
use time::macros::datetime;

#[tokio::test]
async fn one_batch_reads_two_table_types_and_a_twin_each_into_its_own_output() -> TestResult {
    let (users, twin) = (
        local::fresh_table::<App>().await?,
        local::fresh_table::<App>().await?,
    );
    let ledger = local::fresh_table::<Ledger>().await?;
    let (here, there) = (named("u", 60), named("t", 30));
    users.batch_write().puts(&here[..50]).await?;
    twin.batch_write().puts(&there).await?;
    ledger.batch_write().puts(&entries(50)).await?;
    // The same user ids as `users`' under `twin`: read from `twin`, not `users`.
    let joint = || {
        users
            .batch_get::<User>()
            .keys(here.iter().map(|u| u.primary_key()))
            .keep_order()
            .and(
                ledger
                    .batch_get::<LedgerEntry>()
                    .keys(entries(50).iter().map(|e| e.primary_key())),
            )
            .and(
                twin.batch_get::<User>()
                    .keys(there.iter().map(|u| u.primary_key())),
            )
    };

    // 140 keys in two calls, the first spanning `users` and `ledger`.
    let calls: Vec<Vec<(String, usize)>> = joint()
        .params()?
        .iter()
        .map(|input| {
            let mut tables: Vec<_> = input
                .request_items()
                .into_iter()
                .flatten()
                .map(|(name, ka)| (name.clone(), ka.keys().len()))
                .collect();
            tables.sort();
            tables
        })
        .collect();
    let mut first = vec![
        (users.table_name().to_owned(), 60),
        (ledger.table_name().to_owned(), 40),
    ];
    first.sort();
    let mut second = vec![
        (ledger.table_name().to_owned(), 10),
        (twin.table_name().to_owned(), 30),
    ];
    second.sort();
    assert_eq!(calls, [first, second]);

    let (mine, (booked, twins)) = joint().await?;
    assert_eq!(mine.items, here[..50].to_vec(), "in the keys' order");
    let missing: Vec<_> = here[50..]
        .iter()
        .map(|u| u.primary_key().into_raw())
        .collect::<Result<_, _>>()?;
    assert_eq!(mine.not_found, missing);
    let mut booked_items = booked.items;
    booked_items.sort_by_key(|e| e.cents);
    assert_eq!(booked_items, entries(50));
    assert_eq!(ids(&twins.items), ids(&there));
    for out in [&mine.unprocessed, &twins.unprocessed] {
        assert!(out.is_empty());
    }
    assert!(booked.not_found.is_empty() && twins.not_found.is_empty());
    assert!(mine.consumed_capacity > 0.0 && booked.consumed_capacity > 0.0);
    assert!(twins.consumed_capacity > 0.0);
    Ok(())
}

#[tokio::test]
async fn a_week_of_period_tables_under_faults_loses_no_key_and_doubles_none() -> TestResult {
    let client = local::client().await?;
    let prefix = local::unique_table_name("xg").replace('-', "_");
    let tables = PeriodTables::new(&Db::<App>::new(client, prefix.as_str()), Period::Day)?;
    let monday = datetime!(2026-11-30 10:00 UTC);
    assert_eq!(tables.create_ahead(monday, 2).await?.len(), 3);
    let days: Vec<Db<App>> = (0..3)
        .map(|d| tables.db_at(monday + time::Duration::days(d)))
        .collect();
    // Each day holds the same 40 ids, and 20 of its own; 10 asked of each day are missing.
    let (shared, missing) = (named("s", 40), named("m", 10));
    for (d, db) in days.iter().enumerate() {
        db.batch_write()
            .puts(&shared)
            .puts(&named(&format!("own{d}-"), 20))
            .await?;
    }
    let asked = |d: usize| {
        let own = named(&format!("own{d}-"), 20);
        [shared.clone(), own, missing.clone()].concat()
    };

    let faults = Faults::new(5).rate(1.0).kinds([
        FaultKind::PartialBatch,
        FaultKind::Throttle,
        FaultKind::ServerError,
    ]);
    let mut flaky = Vec::new();
    for db in &days {
        flaky.push(faulty(db, &faults).await?);
    }
    let batch = |d: usize| {
        flaky[d]
            .batch_get::<User>()
            .keys(asked(d).iter().map(|u| u.primary_key()))
    };
    let (first, rest) = batch(0)
        .retry(quick_retry())
        .and(vec![batch(1), batch(2)])
        .await?;
    let stats = faults.stats();
    assert!(
        stats.partial_batches > 0 && stats.throttled > 0 && stats.server_errors > 0,
        "{stats:?}"
    );
    faults.set_enabled(false);
    for (d, out) in std::iter::once(first).chain(rest).enumerate() {
        assert!(out.failed.is_empty(), "{:?}", out.failed);
        // Every asked key once: found (only this day's users), missing, or handed back.
        let found = ids(&out.items);
        assert_eq!(found.len(), out.items.len(), "an item twice");
        let not_found: BTreeSet<_> = out.not_found.iter().cloned().collect();
        let unprocessed: BTreeSet<_> = out.unprocessed.iter().cloned().collect();
        assert_eq!(
            out.items.len() + not_found.len() + unprocessed.len(),
            70,
            "day {d}"
        );
        let present = ids(&[shared.clone(), named(&format!("own{d}-"), 20)].concat());
        assert!(found.is_subset(&present), "day {d}: {found:?}");
        for key in &not_found {
            assert!(key.pk.contains("USER#m"), "day {d}: {key:?} exists");
        }
        // What was handed back is read now, from this day's table: with what was found,
        // exactly the day's users asked for.
        let again = days[d]
            .batch_get::<User>()
            .keys(unprocessed.into_iter().map(Key::<User>::from_raw))
            .await?;
        assert!(again.unprocessed.is_empty() && again.failed.is_empty());
        let all: BTreeSet<_> = found.union(&ids(&again.items)).cloned().collect();
        assert_eq!(all, present, "day {d}");
        assert_eq!(
            not_found.len() + again.not_found.len(),
            missing.len(),
            "day {d}"
        );
    }
    tables.drop_before(datetime!(2100-01-01 00:00 UTC)).await?;
    Ok(())
}

#[tokio::test]
async fn a_table_that_refuses_fails_its_own_keys_only() -> TestResult {
    let users = local::fresh_table::<App>().await?;
    let here = named("u", 30);
    users.batch_write().puts(&here).await?;
    // A table that does not exist: DynamoDB refuses any call naming it.
    let nowhere = Db::<Ledger>::new(users.client().clone(), "no_such_table_xg");
    let (mine, theirs) = users
        .batch_get::<User>()
        .keys(here.iter().map(|u| u.primary_key()))
        .and(
            nowhere
                .batch_get::<LedgerEntry>()
                .keys(entries(5).iter().map(|e| e.primary_key())),
        )
        .await?;
    assert_eq!(ids(&mine.items), ids(&here));
    assert!(mine.failed.is_empty() && mine.unprocessed.is_empty());
    assert!(theirs.items.is_empty());
    let [(keys, err)] = &theirs.failed[..] else {
        panic!("one refused chunk: {:?}", theirs.failed);
    };
    assert_eq!(keys.len(), 5);
    assert!(err.to_string().contains("no_such_table_xg"), "{err}");
    Ok(())
}

#[tokio::test]
async fn two_batches_of_one_table_or_of_two_regions_are_refused_before_sending() -> TestResult {
    let users = local::fresh_table::<App>().await?;
    let user = User::sample("one");
    users.put(&user).await?;
    let twice = users
        .batch_get::<User>()
        .key(user.primary_key())
        .and(users.batch_get::<User>().key(User::key("other")))
        .await;
    assert_refused(
        &twice.err().ok_or("two batches of one table were sent")?,
        ValidationReason::InvalidOption,
    );
    let elsewhere: Db<Ledger> = in_another_region(&users, "ledger");
    let err = users
        .batch_get::<User>()
        .key(user.primary_key())
        .and(
            elsewhere
                .batch_get::<LedgerEntry>()
                .key(LedgerEntry::key("e1")),
        )
        .await
        .err()
        .ok_or("a batch across regions was sent")?;
    assert!(err.to_string().contains("region"), "{err}");
    Ok(())
}
