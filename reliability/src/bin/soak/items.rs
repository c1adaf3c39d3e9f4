//! Single-item writes: profiles (versioned puts, updates and deletes, read back through
//! the cache) and chunked, compressed blobs (puts and deletes of several chunk items).
//!
//! What the crate promises after an error, and so what the model assumes:
//! - [`Error::OutcomeUnknown`]: the write may or may not be applied; resent with the
//!   token it carries (a delete: as it is), it is applied exactly once. The model resends
//!   until the write is settled, then knows the state exactly.
//! - a plain [`Error::Service`] from a put, update or delete: never returned for a write
//!   that may have been applied (the runtime's guide, `production.md`, "Retries"), so the model
//!   keeps the old state, and a strongly consistent read must show it.
//! - a chunked put or delete that fails any other way: "leaves the old or the new value
//!   readable, never a mix" (`dynamo_model::chunk`): the read must be one of the two,
//!   whole, and the model takes the one read.
//! - a conflict ([`Error::VersionConflict`], [`Error::ConditionFailed`]) on an item only
//!   this worker writes, whose version the model knows, is the crate mistaking its own
//!   write for another's: a broken invariant.

use crate::entities::{Blob, Profile, Soak};
use crate::tally::{Tally, ensure, read};
use dynamo_model::item::WriteToken;
use dynamo_model::{Chunked, Db, Error};
use reliability::Res;
use std::collections::HashMap;

/// How many times a write whose outcome stays unknown is resent before the run gives up.
const RESENDS: u32 = 50;

/// Profiles per worker: more than the cache holds ([`crate::CACHE_ITEMS`] over all
/// workers), so it evicts as well as invalidates.
pub const PROFILES: usize = 48;
/// Blobs per worker.
pub const BLOBS: usize = 6;

/// Whether a single-item write was applied, once its errors are settled.
#[derive(Debug, PartialEq)]
enum Settled<T> {
    Applied(T),
    NotApplied,
}

/// The profiles and blobs one worker owns, as the model expects them.
pub struct Items {
    worker: usize,
    profiles: HashMap<usize, Profile>,
    blobs: HashMap<usize, Blob>,
}

impl Items {
    pub fn new(worker: usize) -> Self {
        Items {
            worker,
            profiles: HashMap::new(),
            blobs: HashMap::new(),
        }
    }

    fn profile_id(&self, k: usize) -> String {
        format!("w{}-{k}", self.worker)
    }

    /// One profile operation on a random profile: a put, an update or a delete, then a
    /// read through the cache that must return what the model holds.
    pub async fn profile_op(
        &mut self,
        db: &Db<Soak>,
        tally: &Tally,
        rng: &mut fastrand::Rng,
    ) -> Res<()> {
        let k = rng.usize(..PROFILES);
        let id = self.profile_id(k);
        let old = self.profiles.get(&k).cloned();
        let new = match (old.clone(), rng.u8(..10)) {
            (Some(old), 0..=4) => {
                tally.op("profile update");
                let add = rng.u64(1..10);
                let name = format!("n{}", rng.u32(..));
                let expected = Profile {
                    name: name.clone(),
                    visits: old.visits + add,
                    version: old.version + 1,
                    ..old.clone()
                };
                match update_profile(db, tally, &old, &name, add).await? {
                    Settled::Applied(stored) => {
                        tally.check(
                            "an update returns the item it wrote",
                            stored == expected,
                            || format!("{id}: expected {expected:?}, returned {stored:?}"),
                        )?;
                        Some(expected)
                    }
                    Settled::NotApplied => Some(old),
                }
            }
            (Some(old), 5) => {
                tally.op("profile delete");
                match delete_profile(db, tally, &old).await? {
                    Settled::Applied(()) => None,
                    Settled::NotApplied => Some(old),
                }
            }
            (old, _) => {
                tally.op("profile put");
                let value = Profile {
                    id: id.clone(),
                    name: format!("p{}", rng.u32(..)),
                    visits: rng.u64(..1000),
                    version: old.as_ref().map_or(0, |p| p.version),
                };
                match put_profile(db, tally, &value, &old).await? {
                    Settled::Applied(()) => Some(Profile {
                        version: value.version + 1,
                        ..value
                    }),
                    Settled::NotApplied => old,
                }
            }
        };
        self.set_profile(k, new.clone());
        let cached = read(tally, "profile get failed, read again", || {
            db.get(Profile::key(id.as_str())).send()
        })
        .await?;
        tally.check(
            "no stale read through the cache after the client's own write",
            cached == new,
            || format!("{id}: the model holds {new:?}, the cached get returned {cached:?}"),
        )
    }

    /// A get of a random profile through the cache, no write before it: answered from
    /// memory when the item was read since its last write, and it must still be the
    /// model's value (every write since invalidated it).
    pub async fn profile_read(
        &mut self,
        db: &Db<Soak>,
        tally: &Tally,
        rng: &mut fastrand::Rng,
    ) -> Res<()> {
        tally.op("profile get (cached)");
        let k = rng.usize(..PROFILES);
        let id = self.profile_id(k);
        let expected = self.profiles.get(&k).cloned();
        let cached = read(tally, "profile get failed, read again", || {
            db.get(Profile::key(id.as_str())).send()
        })
        .await?;
        tally.check(
            "no stale read through the cache after the client's own write",
            cached == expected,
            || format!("{id}: the model holds {expected:?}, the cached get returned {cached:?}"),
        )
    }

    fn set_profile(&mut self, k: usize, value: Option<Profile>) {
        match value {
            Some(p) => self.profiles.insert(k, p),
            None => self.profiles.remove(&k),
        };
    }

    /// One blob operation: a put of a new value (noise that takes chunks, or a
    /// repetitive value that compresses inline) or a delete, then a consistent read that
    /// must return the model's value, whole.
    pub async fn blob_op(
        &mut self,
        db: &Db<Soak>,
        tally: &Tally,
        rng: &mut fastrand::Rng,
    ) -> Res<()> {
        let k = rng.usize(..BLOBS);
        let id = format!("w{}-{k}", self.worker);
        let old = self.blobs.get(&k).cloned();
        let new = if old.is_some() && rng.u8(..5) == 0 {
            tally.op("blob delete");
            delete_blob(db, tally, &id, &old).await?
        } else {
            tally.op("blob put");
            let data = if rng.bool() {
                reliability::bytes(rng.usize(..6000), rng.u64(..))
            } else {
                vec![rng.u8(..); rng.usize(..20_000)]
            };
            let value = Blob {
                id: id.clone(),
                data: Chunked::new(data),
            };
            put_blob(db, tally, &value, &old).await?
        };
        match &new {
            Some(v) => self.blobs.insert(k, v.clone()),
            None => self.blobs.remove(&k),
        };
        let stored = read_blob(db, tally, &id).await?;
        tally.check("no torn chunked value", stored == new, || {
            format!(
                "{id}: the model holds {} bytes, read {}",
                describe(&new),
                describe(&stored)
            )
        })
    }
}

fn describe(blob: &Option<Blob>) -> String {
    match blob {
        None => "no item".into(),
        Some(b) => format!("{:?} bytes", b.data.get().map(Vec::len)),
    }
}

async fn read_blob(db: &Db<Soak>, tally: &Tally, id: &str) -> Res<Option<Blob>> {
    read(tally, "blob get failed, read again", || {
        db.get(Blob::key(id)).consistent().send()
    })
    .await
}

async fn read_profile(db: &Db<Soak>, tally: &Tally, id: &str) -> Res<Option<Profile>> {
    read(tally, "profile get failed, read again", || {
        db.get(Profile::key(id)).consistent().send()
    })
    .await
}

/// After a plain service error the write was not applied: the stored item must be the
/// model's old one.
async fn not_applied(
    db: &Db<Soak>,
    tally: &Tally,
    old: &Option<Profile>,
    id: &str,
    what: &'static str,
) -> Res<Settled<()>> {
    tally.settled(what);
    let stored = read_profile(db, tally, id).await?;
    tally.check(
        "a write that fails with a plain service error was not applied",
        stored == *old,
        || format!("{id} ({what}): before {old:?}, stored {stored:?}"),
    )?;
    Ok(Settled::NotApplied)
}

/// An error the model has no room for: a conflict on an item only this worker writes
/// (the crate mistaking its own write for another's), or an error a single-item write
/// is not documented to return.
fn conflict(what: &str, id: &str, e: Error) -> Res<()> {
    let invariant = match e {
        Error::VersionConflict { .. } | Error::ConditionFailed { .. } | Error::NotFound { .. } => {
            "no conflict with the client's own write"
        }
        _ => "a single-item write fails only as documented",
    };
    ensure(false, invariant, || {
        format!("{what} {id} (only this worker writes it): {e:?}")
    })
}

async fn put_profile(
    db: &Db<Soak>,
    tally: &Tally,
    value: &Profile,
    old: &Option<Profile>,
) -> Res<Settled<()>> {
    let mut token: Option<WriteToken> = None;
    for _ in 0..RESENDS {
        let mut put = db.put(value);
        if let Some(t) = token.clone() {
            put = put.write_token(t);
        }
        match put.send().await {
            Ok(()) => return Ok(Settled::Applied(())),
            Err(Error::OutcomeUnknown { token: Some(t), .. }) => {
                tally.settled("put: outcome unknown, resent with its token");
                token = Some(t);
            }
            Err(Error::Service { .. }) if token.is_none() => {
                return not_applied(db, tally, old, &value.id, "put: service error, not applied")
                    .await;
            }
            Err(Error::Service { .. }) => tally.settled("put: resend failed, resent again"),
            Err(e) => {
                conflict("put of", &value.id, e)?;
            }
        }
    }
    Err(format!(
        "put {}: outcome still unknown after {RESENDS} resends",
        value.id
    )
    .into())
}

async fn update_profile(
    db: &Db<Soak>,
    tally: &Tally,
    old: &Profile,
    name: &str,
    add: u64,
) -> Res<Settled<Profile>> {
    let f = Profile::fields();
    let mut token: Option<WriteToken> = None;
    for _ in 0..RESENDS {
        let mut update = db
            .update(Profile::key(old.id.as_str()))
            .set(f.name, name.to_owned())
            .add(f.visits, add)
            .if_version(old.version);
        if let Some(t) = token.clone() {
            update = update.write_token(t);
        }
        match update.send().await {
            Ok(stored) => return Ok(Settled::Applied(stored)),
            Err(Error::OutcomeUnknown { token: Some(t), .. }) => {
                tally.settled("update: outcome unknown, resent with its token");
                token = Some(t);
            }
            Err(Error::Service { .. }) if token.is_none() => {
                let old = Some(old.clone());
                not_applied(
                    db,
                    tally,
                    &old,
                    &old_id(&old),
                    "update: service error, not applied",
                )
                .await?;
                return Ok(Settled::NotApplied);
            }
            Err(Error::Service { .. }) => tally.settled("update: resend failed, resent again"),
            Err(e) => conflict("update of", &old.id, e)?,
        }
    }
    Err(format!(
        "update {}: outcome still unknown after {RESENDS} resends",
        old.id
    )
    .into())
}

fn old_id(old: &Option<Profile>) -> String {
    old.as_ref().map(|p| p.id.clone()).unwrap_or_default()
}

async fn delete_profile(db: &Db<Soak>, tally: &Tally, old: &Profile) -> Res<Settled<()>> {
    let mut resent = false;
    for _ in 0..RESENDS {
        let delete = db
            .delete(Profile::key(old.id.as_str()))
            .if_version(old.version);
        match delete.send().await {
            Ok(()) => return Ok(Settled::Applied(())),
            Err(Error::OutcomeUnknown { .. }) => {
                tally.settled("delete: outcome unknown, resent");
                resent = true;
            }
            // Resent after an unknown outcome, a versioned delete that finds the key empty
            // reports a conflict: "the item is gone either way" (Error::OutcomeUnknown).
            Err(Error::VersionConflict { found: None, .. }) if resent => {
                tally.settled("delete: resent, found the item gone");
                return Ok(Settled::Applied(()));
            }
            Err(Error::Service { .. }) if !resent => {
                let old = Some(old.clone());
                return not_applied(
                    db,
                    tally,
                    &old,
                    &old_id(&old),
                    "delete: service error, not applied",
                )
                .await;
            }
            Err(Error::Service { .. }) => tally.settled("delete: resend failed, resent again"),
            Err(e) => conflict("delete of", &old.id, e)?,
        }
    }
    Err(format!(
        "delete {}: outcome still unknown after {RESENDS} resends",
        old.id
    )
    .into())
}

/// A chunked put; the blob as stored once it is settled.
async fn put_blob(
    db: &Db<Soak>,
    tally: &Tally,
    value: &Blob,
    old: &Option<Blob>,
) -> Res<Option<Blob>> {
    let mut token: Option<WriteToken> = None;
    for _ in 0..RESENDS {
        let mut put = db.put(value);
        if let Some(t) = token.clone() {
            put = put.write_token(t);
        }
        match put.send().await {
            Ok(()) => return Ok(Some(value.clone())),
            Err(Error::OutcomeUnknown { token: Some(t), .. }) => {
                tally.settled("chunked put: outcome unknown, resent with its token");
                token = Some(t);
            }
            Err(e @ (Error::ConditionFailed { .. } | Error::VersionConflict { .. })) => {
                conflict("chunked put of", &value.id, e)?
            }
            Err(_) => {
                tally.settled("chunked put: failed, the old or the new value read");
                return old_or_new(db, tally, &value.id, old, &Some(value.clone())).await;
            }
        }
    }
    Err(format!(
        "chunked put {}: outcome still unknown after {RESENDS} resends",
        value.id
    )
    .into())
}

async fn delete_blob(
    db: &Db<Soak>,
    tally: &Tally,
    id: &str,
    old: &Option<Blob>,
) -> Res<Option<Blob>> {
    for _ in 0..RESENDS {
        match db.delete(Blob::key(id)).send().await {
            Ok(()) => return Ok(None),
            Err(Error::OutcomeUnknown { .. }) => {
                tally.settled("chunked delete: outcome unknown, resent")
            }
            Err(e @ (Error::ConditionFailed { .. } | Error::VersionConflict { .. })) => {
                conflict("chunked delete of", id, e)?
            }
            Err(_) => {
                tally.settled("chunked delete: failed, the old value or none read");
                return old_or_new(db, tally, id, old, &None).await;
            }
        }
    }
    Err(format!("chunked delete {id}: outcome still unknown after {RESENDS} resends").into())
}

/// After a chunked write failed: the value read must be the old or the new one, whole.
async fn old_or_new(
    db: &Db<Soak>,
    tally: &Tally,
    id: &str,
    old: &Option<Blob>,
    new: &Option<Blob>,
) -> Res<Option<Blob>> {
    let stored = read_blob(db, tally, id).await?;
    tally.check(
        "a failed chunked write leaves the old or the new value",
        stored == *old || stored == *new,
        || {
            format!(
                "{id}: old {}, new {}, read {}",
                describe(old),
                describe(new),
                describe(&stored)
            )
        },
    )?;
    Ok(stored)
}
