//! Bank transfers: 100 accounts, 1,000 concurrent random transfers, each a transaction of
//! two updates guarded by the accounts' versions (optimistic locking) and by the sender's
//! balance. At the end the total is unchanged and every transfer was either applied once
//! or reported as failed.
//!
//! Run: `cargo run -p examples --bin bank_transfers`

use dynamo_model::transact::CancelReason;
use dynamo_model::{Db, Entity, Error, Table};
use futures_util::{stream, StreamExt, TryStreamExt};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct Bank;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Bank, pk = "ACCOUNT#{id}", sk = "ACCOUNT")]
struct Account {
    id: u32,
    balance: i64,
    #[dynamo(version)]
    version: u64,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Debug, Clone, Copy)]
struct Transfer {
    from: u32,
    to: u32,
    amount: i64,
}

#[derive(Debug)]
enum Outcome {
    Applied { attempts: u32 },
    InsufficientFunds,
    GaveUp,
    NoSuchAccount,
}

/// Reads both accounts, then moves the money in one transaction that only commits if
/// neither account changed since it was read; on a lost race, reads again and retries.
async fn transfer(db: &Db<Bank>, t: Transfer) -> Result<Outcome, Error> {
    let f = Account::fields();
    for attempt in 1..=25 {
        let (from, to) = match (
            db.get(Account::key(t.from)).consistent().await?,
            db.get(Account::key(t.to)).consistent().await?,
        ) {
            (Some(from), Some(to)) => (from, to),
            _ => return Ok(Outcome::NoSuchAccount),
        };
        if from.balance < t.amount {
            return Ok(Outcome::InsufficientFunds);
        }
        let result = db
            .transact_write()
            .update(
                db.update(Account::key(t.from))
                    .add(f.balance, -t.amount)
                    .condition(f.balance.ge(t.amount))
                    .if_version(from.version),
            )
            .update(
                db.update(Account::key(t.to))
                    .add(f.balance, t.amount)
                    .if_version(to.version),
            )
            .await;
        match result {
            Ok(()) => return Ok(Outcome::Applied { attempts: attempt }),
            // Another transfer changed one of the accounts first: read again.
            Err(Error::TransactionCanceled { operations, .. })
                if operations
                    .iter()
                    .all(|o| o.reason == CancelReason::ConditionalCheckFailed) => {}
            Err(other) => return Err(other),
        }
    }
    Ok(Outcome::GaveUp)
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let db = examples::table::<Bank>("bank-transfers").await?;
    const ACCOUNTS: u32 = 100;
    const INITIAL: i64 = 1_000;
    let accounts: Vec<Account> = (0..ACCOUNTS)
        .map(|id| Account {
            id,
            balance: INITIAL,
            version: 0,
        })
        .collect();
    // Versioned entities are written with conditional puts (a batch write cannot check
    // versions): each account is created at version 1.
    stream::iter(&accounts)
        .map(|a| db.put(a).send())
        .buffer_unordered(16)
        .try_collect::<Vec<()>>()
        .await?;
    let total_before: i64 = accounts.iter().map(|a| a.balance).sum();
    println!("{ACCOUNTS} accounts, {total_before} in total");

    let mut seed: u64 = 2024;
    let transfers: Vec<Transfer> = (0..1_000)
        .map(|_| {
            let mut next = || {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                seed >> 33
            };
            let from = (next() % u64::from(ACCOUNTS)) as u32;
            let to = (from + 1 + (next() % u64::from(ACCOUNTS - 1)) as u32) % ACCOUNTS;
            // Skewed towards a few hot accounts, so transfers race for them.
            let (from, to) = if next() % 3 == 0 {
                (from % 5, to)
            } else {
                (from, to)
            };
            let to = if to == from { (to + 1) % ACCOUNTS } else { to };
            Transfer {
                from,
                to,
                amount: 1 + (next() % 400) as i64,
            }
        })
        .collect();

    let started = std::time::Instant::now();
    let outcomes: Vec<(Transfer, Outcome)> = stream::iter(transfers.iter().copied())
        .map(|t| {
            let db = db.clone();
            async move { transfer(&db, t).await.map(|o| (t, o)) }
        })
        .buffer_unordered(32)
        .try_collect()
        .await?;
    let elapsed = started.elapsed();

    let applied: Vec<&(Transfer, Outcome)> = outcomes
        .iter()
        .filter(|(_, o)| matches!(o, Outcome::Applied { .. }))
        .collect();
    let insufficient = outcomes
        .iter()
        .filter(|(_, o)| matches!(o, Outcome::InsufficientFunds))
        .count();
    let gave_up = outcomes
        .iter()
        .filter(|(_, o)| matches!(o, Outcome::GaveUp))
        .count();
    let retried = applied
        .iter()
        .filter(|(_, o)| matches!(o, Outcome::Applied { attempts } if *attempts > 1))
        .count();
    println!(
        "{} transfers in {:.1?}: {} applied ({} after lost races), {} refused for insufficient funds, {} gave up",
        outcomes.len(), elapsed, applied.len(), retried, insufficient, gave_up
    );
    assert_eq!(
        applied.len() + insufficient + gave_up,
        transfers.len(),
        "every transfer has an outcome"
    );

    // Expected balances from the applied transfers alone: each applied exactly once.
    let mut expected: HashMap<u32, i64> = (0..ACCOUNTS).map(|id| (id, INITIAL)).collect();
    for (t, _) in &applied {
        *expected.entry(t.from).or_default() -= t.amount;
        *expected.entry(t.to).or_default() += t.amount;
    }
    let stored = db.scan::<Account>().consistent().all().await?.items;
    assert_eq!(stored.len(), ACCOUNTS as usize);
    let total_after: i64 = stored.iter().map(|a| a.balance).sum();
    for a in &stored {
        assert_eq!(
            Some(&a.balance),
            expected.get(&a.id),
            "account {} matches the applied transfers",
            a.id
        );
        assert!(a.balance >= 0, "no account overdrawn");
    }
    println!(
        "total after: {total_after} (conserved: {})",
        total_after == total_before
    );
    assert_eq!(total_after, total_before);
    println!("bank_transfers: all assertions passed");
    Ok(())
}
