//! Transactions and history: transfers between two accounts in `TransactWriteItems`
//! with the caller's own token (accounts read back through the cache), and documents
//! with history (create, revise, restore, prune).
//!
//! What the crate promises after an error, and so what the model assumes:
//! - [`Error::TransactionCanceled`]: "nothing was applied"; the accounts must show the
//!   model's state before the transfer. A refusal of a transfer the balance allows
//!   (`ConditionalCheckFailed`) is a broken invariant.
//! - [`Error::DeadlineExceeded`] and any other error of a transaction: it may have
//!   been applied; resent with the same token it is applied at most once (DynamoDB
//!   keeps a token ten minutes), so the model resends until it succeeds and then expects
//!   the transfer applied exactly once.
//! - a history write (create, revise, restore) that fails: the latest copy must be at
//!   the revision before (unchanged) or the one after (with this write's body), never
//!   further; the revisions must stay contiguous. A conflict on a document only this
//!   worker writes is the crate mistaking its own write for another's.

use crate::entities::{Account, Doc, Soak};
use crate::tally::{Tally, ensure, read};
use dynamo_model::history::Keep;
use dynamo_model::{Db, Error};
use reliability::Res;
use std::collections::{BTreeMap, HashMap};

/// Each account's balance at the start.
pub const OPENING: i64 = 1_000;
/// Documents per worker.
pub const DOCS: usize = 3;
/// A document is pruned to its newest three revisions once it holds this many.
const PRUNE_AT: usize = 8;
/// Resends of a transaction whose outcome is unknown before the run gives up.
const RESENDS: u32 = 50;

/// One worker's two accounts and documents, as the model expects them.
pub struct Ledger {
    worker: usize,
    run: u32,
    transfers: u64,
    accounts: [Account; 2],
    docs: HashMap<usize, BTreeMap<u64, String>>,
}

impl Ledger {
    pub fn new(worker: usize, run: u32) -> Self {
        let account = |side: &str| Account {
            id: format!("w{worker}-{side}"),
            balance: OPENING,
            transfers: 0,
        };
        Ledger {
            worker,
            run,
            transfers: 0,
            accounts: [account("a"), account("b")],
            docs: HashMap::new(),
        }
    }

    /// The accounts to write before the run starts.
    pub fn opening(&self) -> &[Account; 2] {
        &self.accounts
    }

    /// One transfer of a random amount (sometimes more than the balance) with a token of
    /// its own; then both accounts read through the cache must show the model's balances.
    pub async fn transfer(
        &mut self,
        db: &Db<Soak>,
        tally: &Tally,
        rng: &mut fastrand::Rng,
    ) -> Res<()> {
        tally.op("transaction (transfer)");
        let from = rng.usize(..2);
        let to = 1 - from;
        let amount = rng.i64(1..=400);
        let allowed = self.accounts[from].balance >= amount;
        self.transfers += 1;
        let token = format!("{:08x}-w{}-{}", self.run, self.worker, self.transfers);
        let mut after = self.accounts.clone();
        after[from].balance -= amount;
        after[from].transfers += 1;
        after[to].balance += amount;
        after[to].transfers += 1;
        let applied = self
            .send_transfer(db, tally, from, amount, &token, allowed, &after)
            .await?;
        if applied {
            self.accounts = after;
        }
        for side in 0..2 {
            let id = self.accounts[side].id.clone();
            let cached = read(tally, "account get failed, read again", || {
                db.get(Account::key(id.as_str())).send()
            })
            .await?;
            let expected = &self.accounts[side];
            tally.check(
                "no stale read through the cache after the client's own write",
                cached.as_ref() == Some(expected),
                || {
                    format!(
                        "{id}: the model holds {expected:?}, the cached get returned {cached:?}"
                    )
                },
            )?;
        }
        Ok(())
    }

    /// Sends the transfer until its outcome is known; whether it was applied.
    #[allow(clippy::too_many_arguments)]
    async fn send_transfer(
        &self,
        db: &Db<Soak>,
        tally: &Tally,
        from: usize,
        amount: i64,
        token: &str,
        allowed: bool,
        after: &[Account; 2],
    ) -> Res<bool> {
        let f = Account::fields();
        let (from_id, to_id) = (&self.accounts[from].id, &self.accounts[1 - from].id);
        for _ in 0..RESENDS {
            let sent = db
                .transact_write()
                .token(token)
                .update(
                    db.update(Account::key(from_id.as_str()))
                        .add(f.balance, -amount)
                        .add(f.transfers, 1)
                        .condition(f.balance.ge(amount)),
                )
                .update(
                    db.update(Account::key(to_id.as_str()))
                        .add(f.balance, amount)
                        .add(f.transfers, 1),
                )
                .send()
                .await;
            match sent {
                Ok(()) => {
                    tally.check(
                        "a transfer the balance does not allow is refused",
                        allowed,
                        || {
                            format!(
                                "{token}: {amount} from a balance of {}",
                                self.accounts[from].balance
                            )
                        },
                    )?;
                    return Ok(true);
                }
                Err(Error::TransactionCanceled { operations, .. }) => {
                    let refused = operations.iter().any(|o| {
                        o.reason == dynamo_model::transact::CancelReason::ConditionalCheckFailed
                    });
                    tally.check(
                        "a transfer the balance allows is not refused",
                        !(refused && allowed),
                        || {
                            format!(
                                "{token}: {amount} from {}: {operations:?}",
                                self.accounts[from].balance
                            )
                        },
                    )?;
                    tally.settled(if refused {
                        "transaction: refused (balance)"
                    } else {
                        "transaction: cancelled (conflicts until the deadline)"
                    });
                    self.expect_accounts(
                        db,
                        tally,
                        &self.accounts,
                        "a cancelled transaction applied nothing",
                        token,
                    )
                    .await?;
                    return Ok(false);
                }
                Err(Error::DeadlineExceeded { .. }) => {
                    tally.settled("transaction: deadline, resent with its token")
                }
                Err(e) => {
                    // Not said to be unapplied: find out, then resend with the token.
                    let found = self.read_accounts(db, tally).await?;
                    let applied = found == *after;
                    tally.check("a transaction is applied whole or not at all", applied || found == self.accounts, || {
                        format!("{token} failed ({e}): before {:?}, after {after:?}, found {found:?}", self.accounts)
                    })?;
                    if applied {
                        // Worth reading: the crate said neither "cancelled" nor "deadline".
                        eprintln!("note: transfer {token} failed with `{e:?}` although applied");
                    }
                    tally.settled(if applied {
                        "transaction: error although applied, resent with its token"
                    } else {
                        "transaction: error, not applied, resent with its token"
                    });
                }
            }
        }
        Err(format!("transaction {token}: outcome still unknown after {RESENDS} resends").into())
    }

    async fn read_accounts(&self, db: &Db<Soak>, tally: &Tally) -> Res<Vec<Account>> {
        let mut found = Vec::new();
        for account in &self.accounts {
            let id = account.id.as_str();
            let stored = read(tally, "account get failed, read again", || {
                db.get(Account::key(id)).consistent().send()
            })
            .await?;
            found.push(stored.ok_or_else(|| format!("account {id} is gone"))?);
        }
        Ok(found)
    }

    async fn expect_accounts(
        &self,
        db: &Db<Soak>,
        tally: &Tally,
        expected: &[Account; 2],
        invariant: &'static str,
        token: &str,
    ) -> Res<()> {
        let found = self.read_accounts(db, tally).await?;
        tally.check(invariant, found == *expected, || {
            format!("{token}: expected {expected:?}, found {found:?}")
        })
    }

    /// One history operation on a random document, then its revisions read back.
    pub async fn doc_op(
        &mut self,
        db: &Db<Soak>,
        tally: &Tally,
        rng: &mut fastrand::Rng,
    ) -> Res<()> {
        let k = rng.usize(..DOCS);
        let id = format!("w{}-d{k}", self.worker);
        let history = db.history::<Doc>();
        let model = self.docs.entry(k).or_default().clone();
        let latest = model.keys().next_back().copied().unwrap_or(0);
        let body = format!("b{}", rng.u32(..));
        let (intended, outcome) = if latest == 0 {
            tally.op("history create");
            let doc = Doc {
                id: id.clone(),
                body: body.clone(),
                version: 0,
            };
            (body, history.create(&doc).await)
        } else if model.len() >= PRUNE_AT {
            tally.op("history prune");
            return self.prune(db, tally, k, &id).await;
        } else if rng.u8(..5) == 0 {
            tally.op("history restore");
            let (&r, old) = model
                .iter()
                .nth(rng.usize(..model.len()))
                .ok_or("no revision")?;
            let restored = history.restore(Doc::key(id.as_str()), r).await;
            (old.clone(), restored.map(|rev| rev.revision))
        } else {
            tally.op("history revise");
            let b = body.clone();
            let revised = history
                .revise(Doc::key(id.as_str()), move |d| d.body = b.clone())
                .await;
            (body, revised.map(|rev| rev.revision))
        };
        let applied = match outcome {
            Ok(revision) => {
                tally.check("no revision gap", revision == latest + 1, || {
                    format!(
                        "{id}: latest revision {latest}, the write returned revision {revision}"
                    )
                })?;
                true
            }
            Err(e) => {
                self.settle_doc(db, tally, &id, latest, &model, &intended, e)
                    .await?
            }
        };
        let written = applied.then_some(intended);
        if let Some(body) = written {
            self.docs.entry(k).or_default().insert(latest + 1, body);
        }
        self.check_revisions(db, tally, k, &id).await
    }

    /// After a failed history write: the latest copy at `latest` (unchanged) or at
    /// `latest + 1` with the body written (`intended`); whether it was applied.
    #[allow(clippy::too_many_arguments)]
    async fn settle_doc(
        &self,
        db: &Db<Soak>,
        tally: &Tally,
        id: &str,
        latest: u64,
        model: &BTreeMap<u64, String>,
        intended: &str,
        e: Error,
    ) -> Res<bool> {
        if let Error::VersionConflict { .. } | Error::ConditionFailed { .. } = e {
            ensure(false, "no conflict with the client's own write", || {
                format!("history write of {id}: {e}")
            })?;
        }
        let history = db.history::<Doc>();
        let stored = read(tally, "doc get failed, read again", || {
            history.latest(Doc::key(id))
        })
        .await?;
        let version = stored.as_ref().map_or(0, |d| d.version);
        tally.check("no revision gap", version == latest || version == latest + 1, || {
            format!("{id}: latest revision {latest} before a write that failed ({e}), {version} after")
        })?;
        if version == latest {
            tally.check(
                "a history write reported cancelled applied nothing",
                !matches!(e, Error::TransactionCanceled { .. }),
                || format!("{id}: {e}"),
            )?;
            let old = model.get(&latest);
            tally.check(
                "a failed history write leaves the latest copy whole",
                stored.as_ref().map(|d| &d.body) == old,
                || format!("{id}: expected {old:?}, found {stored:?}"),
            )?;
            tally.settled("history write: failed, not applied");
            return Ok(false);
        }
        tally.check(
            "a history write reported cancelled applied nothing",
            !matches!(e, Error::TransactionCanceled { .. }),
            || format!("{id}: {e}"),
        )?;
        tally.check(
            "a failed history write leaves the latest copy whole",
            stored.as_ref().map(|d| d.body.as_str()) == Some(intended),
            || format!("{id}: revision {version} should hold {intended:?}, found {stored:?}"),
        )?;
        tally.settled("history write: failed, found applied");
        Ok(true)
    }

    async fn prune(&mut self, db: &Db<Soak>, tally: &Tally, k: usize, id: &str) -> Res<()> {
        let model = self.docs.entry(k).or_default();
        let keep: Vec<u64> = model.keys().rev().take(3).rev().copied().collect();
        match db
            .history::<Doc>()
            .prune(Doc::key(id), Keep::Newest(3))
            .await
        {
            Ok(removed) => {
                tally.check(
                    "a prune keeps exactly the newest revisions",
                    removed.kept == keep,
                    || format!("{id}: kept {:?}, the model keeps {keep:?}", removed.kept),
                )?;
            }
            Err(_) => tally.settled("history prune: failed, revisions read"),
        }
        // Whatever the prune did, it did it in one transaction: all or nothing.
        let found = self.revisions(db, tally, id).await?;
        let model = self.docs.entry(k).or_default();
        if found.keys().copied().collect::<Vec<_>>() == keep {
            model.retain(|r, _| keep.contains(r));
        }
        self.check_revisions(db, tally, k, id).await
    }

    async fn revisions(
        &self,
        db: &Db<Soak>,
        tally: &Tally,
        id: &str,
    ) -> Res<BTreeMap<u64, String>> {
        let page = read(tally, "revisions query failed, read again", || {
            db.history::<Doc>()
                .revisions(Doc::key(id))
                .consistent()
                .all()
        })
        .await?;
        Ok(page
            .items
            .into_iter()
            .map(|r| (r.revision, r.value.body))
            .collect())
    }

    /// The revisions stored are exactly the model's: contiguous up to the latest, each
    /// with its body.
    async fn check_revisions(&self, db: &Db<Soak>, tally: &Tally, k: usize, id: &str) -> Res<()> {
        let found = self.revisions(db, tally, id).await?;
        let model = self.docs.get(&k).cloned().unwrap_or_default();
        tally.check(
            "revisions contiguous, none lost or duplicated",
            found == model,
            || format!("{id}: the model holds {model:?}, stored {found:?}"),
        )
    }
}
