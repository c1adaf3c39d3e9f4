//! Migrations and backfills: bring the items an entity already has along when its model
//! changes.
//!
//! A [`Migration`] walks the items of one entity (a scan of the table in parallel
//! segments, or the items of one partition), applies a change to each and writes the
//! result back:
//!
//! - [`rewrite`](Migration::rewrite): decode the item and encode it again (attributes
//!   the entity does not declare are kept, the keys of indexes its templates do not
//!   render among them: remove stale ones with
//!   [`remove_attribute`](Migration::remove_attribute)). This writes what the current declaration
//!   writes and the stored item lacks: the entity-type
//!   attribute of items another program wrote (`identify = "keys"`), the attributes of an
//!   index template added or changed since, the value of a new field's `default`, a
//!   renamed field under its new name (read through its `alias`, the older name removed);
//! - [`map`](Migration::map): a function over each decoded item (`None` leaves it as it
//!   is);
//! - [`rename_attribute`](Migration::rename_attribute),
//!   [`set_default`](Migration::set_default) and
//!   [`remove_attribute`](Migration::remove_attribute): changes of the stored attributes
//!   themselves.
//!
//! Changes run in the order they are added, on the item as the previous one left it.
//!
//! # Guarantees
//!
//! - **Only the entity's items.** Items of other entity types, revisions of versioned
//!   entities and chunk items are counted ([`Progress::other`]) and left alone. An item
//!   of the entity that does not decode is reported ([`Report::failures`], with its typed
//!   [`DecodeError`](crate::DecodeError)) and left alone; the migration goes on.
//! - **Nothing lost.** Each write is an `UpdateItem` that sets and removes only the
//!   attributes the change touches, conditioned on every attribute of the item being
//!   what was read and on the attributes it sets, the entity's own attributes, the
//!   write token and the marker still being absent where they were. When the
//!   application changed the item in between (a put, an update, a batch or transaction
//!   write), the condition fails, the item is read again (strongly consistent) and the
//!   change applied to what is stored now ([`Progress::conflicts`]); an item deleted
//!   meanwhile stays deleted ([`Progress::vanished`]). An attribute the entity does not
//!   declare that another program adds meanwhile is kept, since the write does not
//!   touch it. The check of the entity's other attributes is left out where it would
//!   not fit in one expression (DynamoDB allows 4 KB and 300 operators): a wide
//!   entity's sparse items are still checked on every attribute read and written. An
//!   item with so many attributes that even that does not fit (about 150), or that
//!   DynamoDB refuses as invalid, is reported ([`Report::failures`]) and left alone;
//!   the migration goes on.
//! - **Current index keys.** A rewrite writes the keys of the entity's index templates
//!   from the fields whatever the stored ones hold: keys of a template that changed
//!   since, or left by a field that is now absent, are replaced or removed (they do not
//!   stop the decode).
//! - **Resumable.** After the items of each request, the position of every segment and the
//!   counts so far are saved in a [`CheckpointStore`] under the migration's name; a run
//!   started again with the same name and store continues from there, after a crash or a
//!   cancelled future. The checkpoint is bound to the table, the entity, the name and the
//!   number of segments (a checkpoint of another migration is refused).
//! - **Exactly once.** Items written after the last checkpoint are read again by the
//!   resumed run. A change that gives the same result when applied again (a rewrite, a
//!   rename, a default) finds nothing left to do. For a [`map`](Migration::map), whose
//!   function need not be idempotent (an increment), the write also adds the migration's
//!   name to a string-set attribute ([`MIGRATIONS_ATTRIBUTE`], `_migrations`), and an
//!   item that holds it is not changed again ([`Progress::already`]). A write whose
//!   response was lost (the SDK resent it, and its condition failed on its own result)
//!   is recognised the same way. The attribute stays on the item until something
//!   replaces the whole item; [`with_marker`](Migration::with_marker) turns it on for
//!   the other changes too, [`without_marker`](Migration::without_marker) off.
//! - **Paced.** [`max_read_units_per_second`](Migration::max_read_units_per_second) and
//!   [`max_write_units_per_second`](Migration::max_write_units_per_second) keep the
//!   capacity consumed (as DynamoDB reports it) under a budget across all segments.
//! - **Dry run.** [`dry_run`](Migration::dry_run) reads and applies every change in memory,
//!   counts what it would write and keeps a sample ([`Report::sample`]), and writes
//!   nothing: no item, no checkpoint.
//!
//! While it runs, the application keeps reading old and new shapes alike: declare the new
//! field with a `default` and the renamed one with an `alias` before migrating.
//!
//! Where DynamoDB Local ignores scan segments (every segment reads the whole table), the
//! conditions keep the effects exactly once too, but [`Progress::scanned`] counts every
//! item once per segment.
//!
//! ```no_run
//! use dynamo_model::migrate::{FileCheckpoints, Migration};
//! use dynamo_model::{Db, Entity, Table};
//!
//! #[derive(Table)]
//! #[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
//! struct App;
//!
//! /// `by_email` was added after a million users were written.
//! #[derive(Entity, Debug, Clone)]
//! #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE",
//!          index(GSI1, pk = "EMAIL#{email}", sk = "USER"))]
//! struct User {
//!     id: String,
//!     email: String,
//!     #[dynamo(default)]
//!     visits: u64,
//! }
//!
//! # async fn demo(db: Db<App>) -> Result<(), dynamo_model::Error> {
//! let report = Migration::<User>::new(&db, "2026-11-users-by-email")
//!     .rewrite() // writes GSI1PK/GSI1SK, and `visits` where it was missing
//!     .segments(4)
//!     .max_read_units_per_second(200.0)
//!     .max_write_units_per_second(100.0)
//!     .checkpoints(FileCheckpoints::new("migrations"))
//!     .on_progress(|p| eprintln!("{} read, {} changed", p.scanned, p.changed))
//!     .run()
//!     .await?;
//! assert!(report.failures.is_empty());
//! # Ok(()) }
//! ```

use crate::codec::{number_value, same_number};
use crate::{Entity, Error, Item, RawKey, Table, ValidationReason};
use aws_sdk_dynamodb::types::AttributeValue;
use std::sync::Arc;

/// A boxed future, as [`CheckpointStore`] returns them: the crate's one [`BoxFuture`]
/// (`dynamo_model::BoxFuture`), the type the builders' `IntoFuture` returns too.
pub use crate::BoxFuture;

/// The string-set attribute that records the migrations applied to an item (when a
/// migration writes a marker): a resumed run skips the items that hold its name.
pub const MIGRATIONS_ATTRIBUTE: &str = "_migrations";

/// How many times an item whose write conflicted is read again before the migration
/// gives up on it (reported in [`Report::failures`]).
const MAX_CONFLICTS_PER_ITEM: usize = 8;

/// How many items' writes in a row DynamoDB may refuse for one same reason before a
/// migration stops ([`Migration::stop_after_refusals`]).
pub const DEFAULT_STOP_AFTER_REFUSALS: u32 = 100;

/// DynamoDB's limit on an expression's length.
const MAX_EXPRESSION_BYTES: usize = 4096;

/// Whether two stored values are one value as DynamoDB compares them: a set's members in
/// any order (DynamoDB does not keep the order a set was written in).
fn same_value(a: &AttributeValue, b: &AttributeValue) -> bool {
    fn same_members<T: Ord>(mut a: Vec<T>, mut b: Vec<T>) -> bool {
        a.sort_unstable();
        b.sort_unstable();
        a == b
    }
    match (a, b) {
        (AttributeValue::N(x), AttributeValue::N(y)) => x == y || same_number(x, y),
        (AttributeValue::Ss(x), AttributeValue::Ss(y)) => {
            x.len() == y.len() && same_members(x.iter().collect(), y.iter().collect())
        }
        (AttributeValue::Ns(x), AttributeValue::Ns(y)) => {
            // By value (`1.5` and `1.50` are one member); text that is no number as is.
            let values = |ns: &[String]| -> Vec<Result<(bool, String, i64), String>> {
                ns.iter()
                    .map(|n| number_value(n).ok_or_else(|| n.clone()))
                    .collect()
            };
            x.len() == y.len() && same_members(values(x), values(y))
        }
        (AttributeValue::Bs(x), AttributeValue::Bs(y)) => {
            x.len() == y.len()
                && same_members(
                    x.iter().map(|b| b.as_ref()).collect(),
                    y.iter().map(|b| b.as_ref()).collect(),
                )
        }
        (AttributeValue::L(x), AttributeValue::L(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_value(x, y))
        }
        (AttributeValue::M(x), AttributeValue::M(y)) => same_item(x, y),
        _ => a == b,
    }
}

/// Refuses an item that holds different values under a renamed field's name and one of
/// its older names (`#[dynamo(alias = "..")]`): a rewrite would keep one and remove the
/// other, losing data without a word. Equal values are one value stored twice.
fn refuse_two_values<E: Entity>(item: &Item) -> Result<(), Error> {
    for (name, aliases) in E::__ALIASES {
        let Some(current) = item.get(*name) else {
            continue;
        };
        for alias in *aliases {
            if let Some(older) = item.get(*alias)
                && !same_value(current, older)
            {
                return Err(Error::invalid(
                    E::ENTITY_TYPE,
                    ValidationReason::RenamedField,
                    format!(
                        "the item holds different values under `{alias}` and `{name}` (an older and the current name of one field): the rewrite would lose one of them, so the item is left as it is"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Whether `E`'s index templates render attribute `name` (not one of the table's key
/// attributes).
fn renders_index_key<E: Entity>(name: &str) -> bool {
    let schema = &<E::Table as Table>::SCHEMA;
    let table_key = name == schema.pk.name || schema.sk.is_some_and(|sk| sk.name == name);
    !table_key
        && E::__INDEX_KEYS
            .iter()
            .any(|index| index.pk == Some(name) || index.sk == Some(name))
}

/// [`same_value`] for every attribute of two items.
fn same_item(a: &Item, b: &Item) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(name, v)| b.get(name).is_some_and(|w| same_value(v, w)))
}

/// DynamoDB's limit of a scan's `TotalSegments`.
const MAX_SEGMENTS: u32 = 1_000_000;

/// DynamoDB's limit of operators and functions in one expression.
const MAX_OPERATORS: usize = 300;

/// Whether `clauses` joined by `and` (an operator each) stay within DynamoDB's limits of
/// one expression (each clause is one comparison or function).
fn expression_fits(clauses: &[String], and: &str) -> bool {
    let bytes: usize = clauses.iter().map(String::len).sum::<usize>()
        + and.len() * clauses.len().saturating_sub(1);
    let operators = (2 * clauses.len()).saturating_sub(1);
    bytes <= MAX_EXPRESSION_BYTES && operators <= MAX_OPERATORS
}

/// How many changes a dry run keeps in [`Report::sample`], and failures in
/// [`Report::failures`] (the counts go on).
const KEEP: usize = 100;

type MapFn<E> = dyn Fn(E) -> Option<E> + Send + Sync;

enum Step<E> {
    Rewrite,
    Map(Arc<MapFn<E>>),
    Rename {
        from: String,
        to: String,
    },
    Default {
        attribute: String,
        value: AttributeValue,
    },
    Remove {
        attribute: String,
    },
}

impl<E> Clone for Step<E> {
    fn clone(&self) -> Self {
        match self {
            Step::Rewrite => Step::Rewrite,
            Step::Map(f) => Step::Map(Arc::clone(f)),
            Step::Rename { from, to } => Step::Rename {
                from: from.clone(),
                to: to.clone(),
            },
            Step::Default { attribute, value } => Step::Default {
                attribute: attribute.clone(),
                value: value.clone(),
            },
            Step::Remove { attribute } => Step::Remove {
                attribute: attribute.clone(),
            },
        }
    }
}

/// Counts of a migration so far (cumulative over resumed runs).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// Items read (every segment's, once per read).
    pub scanned: u64,
    /// Items written with the change (or, in a dry run, that would be).
    pub changed: u64,
    /// Items of the entity the change leaves as they are.
    pub unchanged: u64,
    /// Items that already hold this migration's marker.
    pub already: u64,
    /// Items of other entity types, revisions of versioned entities and chunk items:
    /// not the migration's.
    pub other: u64,
    /// Writes whose condition failed because the item changed after it was read; the
    /// item was read again and the change applied to it.
    pub conflicts: u64,
    /// Items deleted between the read and the write.
    pub vanished: u64,
    /// Items of the entity that could not be migrated (see [`Report::failures`]).
    pub failed: u64,
    /// Read capacity units DynamoDB reported.
    pub read_units: f64,
    /// Write capacity units DynamoDB reported.
    pub write_units: f64,
}

impl Progress {
    fn add(&mut self, other: &Progress) {
        self.scanned += other.scanned;
        self.changed += other.changed;
        self.unchanged += other.unchanged;
        self.already += other.already;
        self.other += other.other;
        self.conflicts += other.conflicts;
        self.vanished += other.vanished;
        self.failed += other.failed;
        self.read_units += other.read_units;
        self.write_units += other.write_units;
    }

    const FIELDS: usize = 10;

    fn to_text(self) -> String {
        format!(
            "{} {} {} {} {} {} {} {} {} {}",
            self.scanned,
            self.changed,
            self.unchanged,
            self.already,
            self.other,
            self.conflicts,
            self.vanished,
            self.failed,
            self.read_units,
            self.write_units
        )
    }

    fn from_text(text: &str) -> Option<Progress> {
        let parts: Vec<&str> = text.split(' ').collect();
        if parts.len() != Self::FIELDS {
            return None;
        }
        let n = |i: usize| parts[i].parse::<u64>().ok();
        let f = |i: usize| {
            parts[i]
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
        };
        Some(Progress {
            scanned: n(0)?,
            changed: n(1)?,
            unchanged: n(2)?,
            already: n(3)?,
            other: n(4)?,
            conflicts: n(5)?,
            vanished: n(6)?,
            failed: n(7)?,
            read_units: f(8)?,
            write_units: f(9)?,
        })
    }
}

/// An item of the entity that could not be migrated.
#[derive(Debug)]
#[non_exhaustive]
pub struct Failure {
    /// The item's key attributes.
    pub key: RawKey,
    /// Why.
    pub error: Error,
}

/// What a dry run would write to one item.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PlannedChange {
    /// The item's key attributes.
    pub key: RawKey,
    /// Attributes the write would add or change.
    pub set: Vec<String>,
    /// Attributes the write would remove.
    pub removed: Vec<String>,
}

/// The outcome of [`Migration::run`].
#[derive(Debug)]
#[non_exhaustive]
pub struct Report {
    /// The counts, including those of earlier runs this one resumed.
    pub progress: Progress,
    /// Whether the run continued from a checkpoint.
    pub resumed: bool,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// Items of the entity that could not be migrated (the first 100; the count is
    /// [`Progress::failed`]).
    pub failures: Vec<Failure>,
    /// In a dry run, the first 100 changes it would write.
    pub sample: Vec<PlannedChange>,
}

mod change;
mod checkpoint;
mod config;
mod job;
mod unique;

pub use checkpoint::{Checkpoint, CheckpointStore, FileCheckpoints, MemoryCheckpoints};
pub use config::Migration;
pub use unique::{UniqueBackfill, UniqueConflict};

#[cfg(test)]
mod tests;
