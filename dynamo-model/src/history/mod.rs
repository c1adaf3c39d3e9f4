//! Version-prefix history: the latest copy of an item and every revision of it, in one
//! partition, written atomically.
//!
//! An entity declared `#[dynamo(history)]` (it needs a `#[dynamo(version)]` field: the
//! revision number) is stored twice on every change: its latest copy under slot 0 of its
//! sort key and the revision under slot `k` (see [`HistoryLayout`] for the layout):
//!
//! ```text
//! PK=DOC#d-1  SK=v00000000000000000000#DOC   version=3   the latest copy
//! PK=DOC#d-1  SK=v00000000000000000001#DOC   version=1   revision 1
//! PK=DOC#d-1  SK=v00000000000000000002#DOC   version=2   revision 2
//! PK=DOC#d-1  SK=v00000000000000000003#DOC   version=3   revision 3
//! ```
//!
//! Adding revision `N + 1` is one `TransactWriteItems`: put the revision (no item may exist
//! under its key) and put the latest copy (its stored version must be `N`). Two writers
//! racing from revision `N` cannot both win; the loser gets [`Error::VersionConflict`]
//! with the version it found and the current item, and [`History::revise`] re-reads and
//! tries again. Every read other than the history sees the latest copy only: `db.get`,
//! queries, collections, scans, batch and transactional gets and index queries skip
//! revisions. A stream's record of a revision is no change of the entity either; read it
//! with [`StreamRecord::decode_revision`](dynamo_model::stream::StreamRecord::decode_revision).
//!
//! # Indexes
//!
//! Revisions carry no index key attribute the entity renders from a template, so they
//! stay out of those indexes (sparse-index rules hold on the latest copy as on any item).
//! `history(revisions_in(GSI1))` lets them into the indexes named; typed reads of the
//! entity there still skip them, and [`Query::revisions`] reads them. An index keyed on
//! the table's own keys (an inverted index) or on plain attributes holds revisions too,
//! since they carry those attributes; typed reads skip them there as well.
//!
//! # The stored format
//!
//! Each revision is the item the entity encodes (its fields, the entity-type attribute,
//! TTL) with the revision number in the version attribute, the time it was written in
//! the layout's time attribute (`_vt`, epoch milliseconds) and the write token of the call
//! that wrote it (`_wt`); the latest copy is the same item under slot 0, with the index
//! keys. Another program reads the latest copies with `begins_with(SK, "v000…0#")` and a
//! revision by its key.
//!
//! With `history(counter_on_latest)` (AWS's number-based layout, see [`HistoryLayout`])
//! the version attribute is on the latest copy only and a revision's number is its key's;
//! the time attribute is on revisions only.
//!
//! Plain puts, updates and deletes of an entity with history are refused
//! ([`ValidationReason::KeepsHistory`](crate::ValidationReason::KeepsHistory)): they would
//! change the latest copy without its revision.
//!
//! ```no_run
//! use dynamo_model::{Db, Entity, Table};
//!
//! #[derive(Table)]
//! #[dynamo(pk = "PK", sk = "SK")]
//! struct App;
//!
//! #[derive(Entity, Clone)]
//! #[dynamo(table = App, pk = "DOC#{doc_id}", sk = "DOC", history)]
//! struct Document {
//!     doc_id: String,
//!     title: String,
//!     #[dynamo(version)]
//!     version: u64,
//! }
//!
//! # async fn demo(db: Db<App>) -> Result<(), dynamo_model::Error> {
//! let history = db.history::<Document>();
//! let doc = Document { doc_id: "d-1".into(), title: "Draft".into(), version: 0 };
//! assert_eq!(history.create(&doc).await?, 1);
//! // Read, change, write revision 2; re-read and retry if another writer got there first.
//! let revised = history
//!     .revise(Document::key("d-1"), |doc| doc.title = "Final".into())
//!     .await?;
//! assert_eq!(revised.revision, 2);
//! let first = history.revision(Document::key("d-1"), 1).await?;
//! let newest_first = history.revisions(Document::key("d-1")).reverse().all().await?;
//! # Ok(()) }
//! ```

mod query;
mod write;
use write::{describe, rest_of, revision_key};

pub use crate::schema::history::{HistoryLayout, MAX_WIDTH};

use crate::collection::{Decoded, Target};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::expr::Placeholders;
use crate::item::consistent::ConsistentGet;
use crate::item::{PreparedWrite, and, is_entity, version_is};
use crate::read::Query;
use crate::retry::{Deadline, RetryPolicy};
use crate::{Db, Entity, Error, Item, Key, Table};
use aws_sdk_dynamodb::types::AttributeValue;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// An entity declared `#[dynamo(history)]`: what [`Db::history`] works on. Implemented
/// by the derive only (sealed).
pub trait Versioned: Entity + crate::sealed::Versioned {}

/// One revision of an entity with history, read from its history.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Revision<E> {
    /// The revision number (1 for the first).
    pub revision: u64,
    /// When the revision was written (`None` when the item carries no time, e.g. one
    /// written by another program).
    pub revised_at: Option<SystemTime>,
    /// The entity as of this revision (its version field is `revision`).
    pub value: E,
}

/// Which revisions [`History::prune`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Keep {
    /// The newest `n` revisions (at least 1: the revision the latest copy holds).
    Newest(usize),
    /// Revisions written at or after this time, those whose time is unknown (written by
    /// another program, without the time attribute), and always the newest revision.
    Since(SystemTime),
}

/// What [`History::prune`] or [`History::delete_all`] removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Removed {
    /// The revision numbers deleted, oldest first.
    pub revisions: Vec<u64>,
    /// The revisions left, oldest first.
    pub kept: Vec<u64>,
    /// Whether the latest copy was deleted (only [`History::delete_all`] does).
    pub latest: bool,
}

/// The history operations of one entity type with history; see [`Db::history`] and the
/// [module documentation](self).
///
/// Holds a clone of the [`Db`], so it borrows nothing and its futures are `'static`.
pub struct History<E: Entity> {
    db: Db<E::Table>,
    policy: RetryPolicy,
}

impl<E: Entity> Clone for History<E> {
    fn clone(&self) -> Self {
        History {
            db: self.db.clone(),
            policy: self.policy,
        }
    }
}

impl<T: Table> Db<T> {
    /// The history operations of entity `E` (declared `#[dynamo(history)]`): create, add
    /// and revise revisions, read the latest copy, one revision or all of them, prune,
    /// restore, delete.
    pub fn history<E: Versioned<Table = T>>(&self) -> History<E> {
        History {
            db: self.clone(),
            policy: self.retry_policy_or(RetryPolicy::default()),
        }
    }
}

/// Why the current time cannot be stored (a clock before 1970).
pub(super) fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl<E: Versioned> History<E> {
    /// Backoff and deadline for [`revise`](Self::revise) and [`restore`](Self::restore)
    /// (re-reading after a lost race) and for the transactions of every write.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.policy = policy;
        self
    }

    fn layout() -> Result<&'static HistoryLayout, Error> {
        E::__HISTORY
            .ok_or_else(|| Self::not_versioned("the entity is not declared #[dynamo(history)]"))
    }

    fn version_attribute() -> Result<&'static str, Error> {
        E::VERSION.ok_or_else(|| {
            Self::not_versioned("an entity with history needs a #[dynamo(version)] field")
        })
    }

    fn not_versioned(why: &'static str) -> Error {
        Error::invalid(E::ENTITY_TYPE, crate::ValidationReason::NotVersioned, why)
    }

    /// Writes `value` as revision 1 and its latest copy, in one transaction. Fails with
    /// [`Error::VersionConflict`] (expected 0, the version found, the current item) when
    /// the item exists. `value`'s version field must be 0.
    pub async fn create(&self, value: &E) -> Result<u64, Error> {
        let version = value.version();
        if version != 0 {
            return Err(Error::invalid(
                E::ENTITY_TYPE,
                crate::ValidationReason::InvalidValue,
                format!(
                    "create writes revision 1 of a new item; the value is at version {version} (add revisions with add or revise)"
                ),
            ));
        }
        self.add(value).await
    }

    /// Writes `value` as the next revision: `value`'s version field says which revision
    /// it was read at (`N`, 0 for a new item); the transaction writes revision `N + 1`
    /// and the latest copy at `N + 1`, and returns `N + 1`. Fails with
    /// [`Error::VersionConflict`] when the latest copy is no longer at `N`.
    ///
    /// An ambiguous failure (a response lost after DynamoDB applied the transaction) is
    /// retried with the same `ClientRequestToken`, and a conflict with this call's own
    /// write is recognised (the latest copy carries a token unique to the call), so a
    /// revision is never written twice nor reported as a conflict with itself.
    pub async fn add(&self, value: &E) -> Result<u64, Error> {
        self.write(value, value.version()).await
    }

    /// Reads the latest copy, lets `change` modify it, and writes it as the next revision;
    /// when another writer added a revision in between, reads again and re-applies
    /// `change`, with backoff, until the retry policy's deadline. Returns the revision
    /// written. [`Error::NotFound`] when there is no item under `key`.
    pub async fn revise(
        &self,
        key: impl Into<Key<E>>,
        mut change: impl FnMut(&mut E) + Send,
    ) -> Result<Revision<E>, Error> {
        let key = key.into();
        let deadline = Deadline::after(self.policy.deadline);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut value = self.read_latest(&key, &deadline).await?;
            let expected = value.version();
            change(&mut value);
            match self.write(&value, expected).await {
                Ok(revision) => return Ok(self.written(value, revision)),
                Err(Error::VersionConflict { .. })
                    if deadline.backoff(&self.policy, attempt).await => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Writes revision `k`'s content as a new revision (the latest copy then holds it),
    /// re-reading and retrying when another writer gets in between, as
    /// [`revise`](Self::revise) does. [`Error::NotFound`] when revision `k` (or the item)
    /// does not exist.
    pub async fn restore(&self, key: impl Into<Key<E>>, k: u64) -> Result<Revision<E>, Error> {
        let key = key.into();
        let Some(old) = self.revision(key.clone(), k).await? else {
            return Err(Error::NotFound {
                entity: E::ENTITY_TYPE,
                key: format!("{key} revision {k}"),
            });
        };
        let deadline = Deadline::after(self.policy.deadline);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let latest = self.read_latest(&key, &deadline).await?;
            match self.write(&old.value, latest.version()).await {
                Ok(revision) => return Ok(self.written(old.value, revision)),
                Err(Error::VersionConflict { .. })
                    if deadline.backoff(&self.policy, attempt).await => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The latest copy under `key` (a strongly consistent read), as `db.get` reads it.
    pub async fn latest(&self, key: impl Into<Key<E>>) -> Result<Option<E>, Error> {
        self.db.get(key).consistent().send().await
    }

    /// Revision `k` of the item under `key`, `None` when there is none (never written, or
    /// pruned). A strongly consistent read.
    pub async fn revision(
        &self,
        key: impl Into<Key<E>>,
        k: u64,
    ) -> Result<Option<Revision<E>>, Error> {
        let layout = Self::layout()?;
        let key = key.into();
        if k == 0 || k > layout.max_slot() {
            return Ok(None);
        }
        let raw = revision_key(E::ENTITY_TYPE, layout, key.raw()?, k)?;
        let schema = &<E::Table as Table>::SCHEMA;
        let found = ConsistentGet::new(&self.db, raw.to_item(schema))
            .send_as_operation(E::ENTITY_TYPE, || Some(describe(schema, &raw)))
            .await?;
        match found {
            Some(item) => match Revision::<E>::decode(item)? {
                Decoded::Item(revision) => Ok(Some(revision)),
                Decoded::Unknown(_) => Ok(None),
            },
            None => Ok(None),
        }
    }

    /// The revisions of the item under `key`, oldest first (`.reverse()`: newest first),
    /// never the latest copy: a query with the crate's paging and cursors (`.limit(n)`,
    /// `.page(cursor)`, `.all()`, `.stream()`, `.params()`).
    ///
    /// With an unpadded layout (`width = 0`) the query returns revisions in the sort key's
    /// text order, not by number: with `_` as the separator (which sorts after the digits)
    /// `v10_`, `v11_`, …, `v19_`, `v1_`, `v20_`, …; sort them by [`Revision::revision`]
    /// after reading (`all()`), or page knowing the order is the text's.
    ///
    /// Unless the layout asks for revision order (`history(numeric_order)`, as AWS's
    /// `v0`, `v1`, …, `v10` layout needs): then `v9` comes before `v10`, both ways and
    /// across cursors, at a price. DynamoDB cannot return unpadded numbers in order, so
    /// every request (`all()`, each `page()`, a `stream()`) reads the item's whole
    /// history, every response of it, and sorts it here: its read capacity is that of the
    /// whole history (reported in [`Page::consumed_capacity`](crate::Page::consumed_capacity)) whatever the
    /// `limit`; `max_pages` is not applied, and `page()` without a `limit` returns the
    /// whole history. Prune an item that keeps many revisions, or use a padded layout.
    pub fn revisions(&self, key: impl Into<Key<E>>) -> Query<Revision<E>> {
        let key = key.into();
        let (layout, pk, rest) = match (Self::layout(), key.raw()) {
            (Ok(layout), Ok(raw)) => match rest_of(E::ENTITY_TYPE, layout, raw) {
                Ok(rest) => (layout, raw.pk.clone(), rest.to_owned()),
                Err(e) => return Query::refused(&self.db, e),
            },
            (Err(e), _) | (_, Err(e)) => return Query::refused(&self.db, e),
        };
        // The bounds also hold other items' revisions in the partition (another entity's
        // `v1GAUGE` lies in `v1`..`v:`): only this item's are kept.
        let bounds = layout.revision_bounds(&rest);
        let query = Query::history_of(&self.db, pk, bounds, Some((*layout, rest)));
        if layout.sorts_history() {
            query.sorted_by_slot(layout)
        } else {
            query
        }
    }

    /// Deletes revisions, keeping those `keep` names and always the newest one (the
    /// revision the latest copy holds). Deletes go in transactions of up to 100, each
    /// conditioned on the item being this entity's, so an interrupted prune can be run
    /// again and finishes the work.
    pub async fn prune(&self, key: impl Into<Key<E>>, keep: Keep) -> Result<Removed, Error> {
        let key = key.into();
        let mut revisions = self.revisions(key.clone()).consistent().all().await?.items;
        revisions.sort_by_key(|r| r.revision);
        let newest = revisions.len().saturating_sub(1);
        let (mut doomed, mut kept) = (Vec::new(), Vec::new());
        for (position, r) in revisions.iter().enumerate() {
            let keep_it = position == newest
                || match keep {
                    Keep::Newest(n) => position + n.max(1) > newest,
                    // A revision of unknown time (written by another program) is kept:
                    // nothing says it is older.
                    Keep::Since(t) => r.revised_at.is_none_or(|at| at >= t),
                };
            if keep_it {
                kept.push(r.revision);
            } else {
                doomed.push(r.revision);
            }
        }
        self.delete_revisions(&key, &doomed).await?;
        Ok(Removed {
            revisions: doomed,
            kept,
            latest: false,
        })
    }

    /// Deletes the item under `key` and its whole history: the latest copy first, then
    /// every revision.
    ///
    /// The latest copy is deleted on the condition that its version is still the one
    /// read, so no revision added meanwhile is missed: when another writer got in
    /// between, the item and its history are read again and the deletion goes on, until
    /// the retry policy's deadline. Revisions are then deleted in transactions of up to
    /// 100, each on the condition that it is absent or still this entity's at its
    /// number, as [`prune`](Self::prune) deletes them.
    ///
    /// # Interrupted
    ///
    /// The order makes an interrupted call safe to run again. Once the latest copy is
    /// deleted, every read sees the item gone (`db.get`, queries, scans,
    /// [`latest`](Self::latest)); a call interrupted after that (the process killed, a
    /// transaction failing) leaves only revisions without a latest copy, which
    /// [`revisions`](Self::revisions) still lists and which nothing else reads. Running
    /// `delete_all` again on the key finishes the job: it finds no latest copy and
    /// deletes the revisions left. Until then a [`create`](Self::create) under the key
    /// fails if revision 1 is among them (it must write revision 1 where none exists).
    /// Never does an interruption leave a latest copy whose history is partly deleted.
    ///
    /// Only the revisions read before the latest copy was deleted are deleted: an item
    /// created again under the key meanwhile keeps its own.
    pub async fn delete_all(&self, key: impl Into<Key<E>>) -> Result<Removed, Error> {
        let key = key.into();
        let version_attr = Self::version_attribute()?;
        let deadline = Deadline::after(self.policy.deadline);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let latest = self
                .db
                .get(key.clone())
                .consistent()
                .send_until(&self.policy, &deadline)
                .await?;
            let mut revisions: Vec<u64> = self
                .revisions(key.clone())
                .consistent()
                .all()
                .await?
                .items
                .into_iter()
                .map(|r| r.revision)
                .collect();
            revisions.sort_unstable();
            if let Some(latest) = &latest {
                // The latest copy, if still at the version read: no revision was added
                // since the history was read.
                match self
                    .delete_latest(&key, version_attr, latest.version())
                    .await
                {
                    Ok(()) => {}
                    Err(Error::TransactionCanceled { operations })
                        if operations.iter().all(|o| {
                            matches!(
                                o.reason,
                                crate::error::CancelReason::ConditionalCheckFailed
                                    | crate::error::CancelReason::NotFound
                            )
                        }) && deadline.backoff(&self.policy, attempt).await =>
                    {
                        continue;
                    }
                    Err(e) => return Err(e),
                }
            }
            // The item is gone for every read; what is left is history only.
            self.delete_revisions(&key, &revisions).await?;
            return Ok(Removed {
                revisions,
                kept: Vec::new(),
                latest: latest.is_some(),
            });
        }
    }

    /// Deletes the latest copy under `key` if it is this entity's at `version`.
    async fn delete_latest(
        &self,
        key: &Key<E>,
        version_attr: &'static str,
        version: u64,
    ) -> Result<(), Error> {
        let node = and(version_is(version_attr, version), Some(is_entity::<E>()));
        let raw = key.raw()?;
        let prepared = PreparedWrite {
            needs_item: true,
            expected_version: Some((version_attr, version)),
            ..PreparedWrite::guarded::<E>(
                (key.to_string(), raw.to_item(&<E::Table as Table>::SCHEMA)),
                Placeholders::default(),
                &node,
            )?
        };
        self.db
            .transact_write()
            .retry(self.policy)
            .prepared_delete(prepared)
            .send()
            .await
    }
}

impl<E: Entity> Target for Revision<E> {
    type Table = E::Table;
    const NAME: &'static str = E::ENTITY_TYPE;
    const ENTITY_TYPES: &'static [&'static str] = &[E::ENTITY_TYPE];
    const IS_COLLECTION: bool = false;
    const READS_REVISIONS: bool = true;
    const IDENTIFIED_BY_KEYS: bool = E::__IDENTIFY_BY_KEYS;
    const MEMBER_ATTRIBUTES: &'static [&'static [&'static str]] = &[E::ATTRIBUTES];

    /// A revision: its slot must be its version, and with the slot moved to 0 it must
    /// decode as the entity (the key check of [`Entity::from_item`] included).
    fn decode(mut item: Item) -> Result<Decoded<Self>, DecodeError> {
        let schema = &<E::Table as Table>::SCHEMA;
        let fail = |item: &Item, attribute: Option<&str>, kind| DecodeError {
            entity: E::ENTITY_TYPE,
            key: crate::schema::describe_item_key(schema, item),
            attribute: attribute.map(str::to_owned),
            kind,
        };
        let (Some(layout), Some(sk_attr)) = (E::__HISTORY, schema.sk) else {
            return Err(fail(
                &item,
                None,
                DecodeErrorKind::Invalid("the entity keeps no history".to_owned()),
            ));
        };
        let sk = match item.get(sk_attr.name) {
            Some(AttributeValue::S(sk)) => sk.clone(),
            _ => return Err(fail(&item, Some(sk_attr.name), DecodeErrorKind::Missing)),
        };
        let Some((slot, rest)) = layout.parse(&sk) else {
            return Err(fail(
                &item,
                Some(sk_attr.name),
                DecodeErrorKind::Invalid(format!(
                    "the sort key {} does not follow the entity's history layout",
                    crate::error::key_text(&format_args!("{sk:?}"))
                )),
            ));
        };
        if slot == 0 {
            // The latest copy, not a revision.
            return Ok(Decoded::Unknown(Some(E::ENTITY_TYPE.to_owned())));
        }
        let Some(version_attr) = E::VERSION else {
            return Err(fail(
                &item,
                None,
                DecodeErrorKind::Invalid("the entity has no version field".to_owned()),
            ));
        };
        let stored = item.get(version_attr);
        let version = stored
            .and_then(|v| v.as_n().ok())
            .and_then(|n| n.parse::<u64>().ok());
        match (stored, version) {
            // The number is the key's (the counter lives on the latest copy only).
            (None, _) if layout.counter_on_latest => {
                item.insert(version_attr.to_owned(), AttributeValue::N(slot.to_string()));
            }
            (_, Some(v)) if v == slot => {}
            _ => {
                let what = if layout.counter_on_latest {
                    "; a revision holds no number or its own"
                } else {
                    "; a revision holds its own number"
                };
                return Err(fail(
                    &item,
                    Some(version_attr),
                    DecodeErrorKind::Invalid(format!(
                        "revision {slot} stores version {version:?}{what}"
                    )),
                ));
            }
        }
        let revised_at = layout
            .time_attribute
            .and_then(|time| item.get(time))
            .and_then(|v| v.as_n().ok())
            .and_then(|n| n.parse::<u64>().ok())
            .and_then(|ms| UNIX_EPOCH.checked_add(Duration::from_millis(ms)));
        let latest = layout.latest(rest);
        item.insert(sk_attr.name.to_owned(), AttributeValue::S(latest));
        let value = E::from_item(item)?;
        Ok(Decoded::Item(Revision {
            revision: slot,
            revised_at,
            value,
        }))
    }
}
