//! Batches over sharded partitions: each worker's events spread over eight partitions
//! (`{id:shard(8)}`), written with `BatchWriteItem` (puts and deletes), read back by key
//! with `BatchGetItem` and as a whole with a scatter query over the eight shards.
//!
//! What the crate promises: every operation of a batch write is either confirmed
//! (`written`) or handed back (`unprocessed`, `failed`), never dropped; one handed back
//! may have been applied, and resent it leaves the item as that operation alone would
//! (no other writer touches these items). So the model resends what is handed back
//! until everything is confirmed, then knows every event exactly.

use crate::entities::{Event, EventKey, Soak};
use crate::tally::{Tally, read};
use dynamo_model::Db;
use dynamo_model::batch::WriteOp;
use reliability::Res;
use std::collections::BTreeMap;

/// Event ids per worker.
const EVENTS: usize = 40;
/// Rounds of resending what a batch handed back before the run gives up.
const RESENDS: u32 = 50;

/// One worker's events, as the model expects them (by id).
pub struct Events {
    owner: String,
    events: BTreeMap<String, Event>,
}

impl Events {
    pub fn new(worker: usize) -> Self {
        Events {
            owner: format!("w{worker}"),
            events: BTreeMap::new(),
        }
    }

    /// One batch write of puts and deletes on distinct ids, resent until every
    /// operation is confirmed, then a batch get of some ids and a scatter query of all.
    pub async fn batch_op(
        &mut self,
        db: &Db<Soak>,
        tally: &Tally,
        rng: &mut fastrand::Rng,
    ) -> Res<()> {
        tally.op("batch write");
        let mut ids: Vec<usize> = (0..EVENTS).collect();
        rng.shuffle(&mut ids);
        ids.truncate(rng.usize(2..=30));
        let (mut puts, mut deletes) = (Vec::new(), Vec::new());
        for id in ids {
            let id = format!("e{id:02}");
            if rng.u8(..10) < 7 {
                puts.push(Event {
                    owner: self.owner.clone(),
                    id,
                    payload: format!("p{}", rng.u64(..)),
                });
            } else {
                deletes.push(id);
            }
        }
        let whole = || {
            let keys = deletes.iter().map(|id| {
                Event::key(EventKey {
                    owner: self.owner.as_str(),
                    id: id.as_str(),
                })
            });
            db.batch_write().puts(&puts).deletes(keys)
        };
        // `None`: the whole batch is still to send (its first call failed as a whole).
        let mut pending: Option<Vec<WriteOp>> = None;
        for round in 0..=RESENDS {
            if round == RESENDS {
                return Err(format!("batch write: unconfirmed after {RESENDS} rounds").into());
            }
            let sent = match &pending {
                None => whole().send().await,
                Some(ops) => {
                    tally.settled("batch write: operations handed back, resent");
                    db.batch_write().ops(ops.clone()).send().await
                }
            };
            match sent {
                Ok(out) => {
                    let mut left = out.unprocessed;
                    left.extend(out.failed.into_iter().flat_map(|(ops, _)| ops));
                    if left.is_empty() {
                        break;
                    }
                    pending = Some(left);
                }
                Err(_) => tally.settled("batch write: call failed, resent"),
            }
        }
        for event in puts {
            self.events.insert(event.id.clone(), event);
        }
        for id in deletes {
            self.events.remove(&id);
        }
        self.batch_get(db, tally, rng).await?;
        self.scatter(db, tally).await
    }

    /// A consistent batch get of some ids: exactly the model's events among them.
    async fn batch_get(&self, db: &Db<Soak>, tally: &Tally, rng: &mut fastrand::Rng) -> Res<()> {
        tally.op("batch get");
        let mut ids: Vec<String> = (0..EVENTS).map(|i| format!("e{i:02}")).collect();
        rng.shuffle(&mut ids);
        ids.truncate(12);
        let mut found = BTreeMap::new();
        let mut left = ids.clone();
        for _ in 0..RESENDS {
            if left.is_empty() {
                break;
            }
            let keys: Vec<_> = left
                .iter()
                .map(|id| {
                    Event::key(EventKey {
                        owner: self.owner.as_str(),
                        id: id.as_str(),
                    })
                })
                .collect();
            let out = read(tally, "batch get failed, read again", || {
                db.batch_get::<Event>()
                    .keys(keys.clone())
                    .consistent()
                    .send()
            })
            .await?;
            for event in out.items {
                left.retain(|id| *id != event.id);
                found.insert(event.id.clone(), event);
            }
            let unread: Vec<String> = out
                .unprocessed
                .iter()
                .chain(out.failed.iter().flat_map(|(keys, _)| keys))
                .filter_map(|key| {
                    key.sk
                        .as_deref()
                        .and_then(|sk| sk.strip_prefix("EV#"))
                        .map(str::to_owned)
                })
                .collect();
            if !unread.is_empty() {
                tally.settled("batch get: keys handed back, read again");
            }
            left.retain(|id| unread.contains(id));
        }
        let expected: BTreeMap<String, Event> = ids
            .iter()
            .filter_map(|id| self.events.get(id).map(|e| (id.clone(), e.clone())))
            .collect();
        tally.check(
            "no lost or duplicated write (batch get)",
            found == expected,
            || {
                format!(
                    "{}: expected {:?}, read {:?}",
                    self.owner,
                    expected.keys(),
                    found.keys()
                )
            },
        )
    }

    /// A consistent scatter query over the eight shards: exactly the model's events.
    async fn scatter(&self, db: &Db<Soak>, tally: &Tally) -> Res<()> {
        tally.op("scatter query");
        let page = read(tally, "scatter query failed, read again", || {
            db.scatter_query(Event::partition(self.owner.as_str()))
                .consistent()
                .all()
        })
        .await?;
        let mut found = page.items;
        found.sort_by(|a, b| a.id.cmp(&b.id));
        let expected: Vec<Event> = self.events.values().cloned().collect();
        tally.check(
            "no lost or duplicated write (scatter query)",
            found == expected,
            || {
                format!(
                    "{}: expected {} events, read {}",
                    self.owner,
                    expected.len(),
                    found.len()
                )
            },
        )
    }
}
