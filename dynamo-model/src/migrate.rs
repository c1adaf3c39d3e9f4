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
//!   [`DecodeError`]) and left alone; the migration goes on.
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
//! - **Resumable.** After every page the position of every segment and the counts so far
//!   are saved in a [`CheckpointStore`] under the migration's name; a run started again
//!   with the same name and store continues from there, after a crash or a cancelled
//!   future. The checkpoint is bound to the table, the entity, the name and the number of
//!   segments (a checkpoint of another migration is refused).
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
use crate::collection::{Decoded, Target};
use crate::cursor::{self, Cursor, Fingerprint, Position};
use crate::expr::Placeholders;
use crate::ops::pager::Pacer;
use crate::trace::Instrument;
use crate::{Db, DecodeError, Entity, Error, Item, RawKey, Table, ValidationReason};
use aws_sdk_dynamodb::error::ProvideErrorMetadata;

/// A boxed future, as [`CheckpointStore`] returns them.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{
    AttributeValue, ReturnConsumedCapacity, ReturnValuesOnConditionCheckFailure,
};
use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

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

/// A saved position of a migration: where each segment stands and the counts so far.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// Every segment's position, bound to the migration (a checksummed cursor).
    pub positions: Cursor,
    /// The counts up to that position.
    pub progress: Progress,
}

impl Checkpoint {
    /// The checkpoint as one line of text (what [`FileCheckpoints`] stores).
    pub fn to_text(&self) -> String {
        format!("v1 {} {}", self.positions, self.progress.to_text())
    }

    /// Reads [`Checkpoint::to_text`]'s text back (`None` when it is not one).
    pub fn from_text(text: &str) -> Option<Checkpoint> {
        let rest = text.trim().strip_prefix("v1 ")?;
        let (positions, progress) = rest.split_once(' ')?;
        Some(Checkpoint {
            positions: Cursor::from(positions),
            progress: Progress::from_text(progress)?,
        })
    }
}

/// Where checkpoints are kept, by migration name.
pub trait CheckpointStore: Send + Sync {
    /// The last checkpoint saved for `migration`.
    fn load<'a>(&'a self, migration: &'a str) -> BoxFuture<'a, Result<Option<Checkpoint>, Error>>;
    /// Saves `checkpoint` for `migration`, replacing the previous one.
    fn save<'a>(
        &'a self,
        migration: &'a str,
        checkpoint: &'a Checkpoint,
    ) -> BoxFuture<'a, Result<(), Error>>;
}

/// Checkpoints in memory (shared by clones): for tests, and for jobs that resume within
/// one process.
#[derive(Debug, Clone, Default)]
pub struct MemoryCheckpoints(Arc<Mutex<HashMap<String, Checkpoint>>>);

impl MemoryCheckpoints {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// The checkpoint saved for `migration`.
    pub fn get(&self, migration: &str) -> Option<Checkpoint> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(migration)
            .cloned()
    }
}

impl CheckpointStore for MemoryCheckpoints {
    fn load<'a>(&'a self, migration: &'a str) -> BoxFuture<'a, Result<Option<Checkpoint>, Error>> {
        let found = self.get(migration);
        Box::pin(async move { Ok(found) })
    }

    fn save<'a>(
        &'a self,
        migration: &'a str,
        checkpoint: &'a Checkpoint,
    ) -> BoxFuture<'a, Result<(), Error>> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(migration.to_owned(), checkpoint.clone());
        Box::pin(async { Ok(()) })
    }
}

/// Checkpoints in files, one per migration (`<dir>/<name>.checkpoint`), each replaced
/// atomically (written to a temporary file, then renamed over it).
#[derive(Debug, Clone)]
pub struct FileCheckpoints {
    dir: PathBuf,
}

impl FileCheckpoints {
    /// A store in directory `dir` (created on the first save).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        FileCheckpoints { dir: dir.into() }
    }

    fn path(&self, migration: &str) -> PathBuf {
        // A name is any text: keep the file name to safe characters, and short (file
        // systems allow 255 bytes); the digest of the whole name tells names apart.
        let file: String = migration
            .chars()
            .take(100)
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        // Names that differ only in other characters get files of their own.
        let digest: String = Fingerprint::of(&[migration.as_bytes()]).bytes()[..6]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        self.dir.join(format!("{file}-{digest}.checkpoint"))
    }
}

fn io_error(path: &std::path::Path, e: std::io::Error) -> Error {
    Error::Io {
        context: format!("migration checkpoint {}", path.display()),
        source: e,
    }
}

impl CheckpointStore for FileCheckpoints {
    fn load<'a>(&'a self, migration: &'a str) -> BoxFuture<'a, Result<Option<Checkpoint>, Error>> {
        Box::pin(async move {
            let path = self.path(migration);
            match std::fs::read_to_string(&path) {
                Ok(text) => Checkpoint::from_text(&text).map(Some).ok_or_else(|| {
                    Error::invalid_request(
                        "Migration",
                        ValidationReason::InvalidOption,
                        format!("{} is not a migration checkpoint", path.display()),
                    )
                }),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(io_error(&path, e)),
            }
        })
    }

    fn save<'a>(
        &'a self,
        migration: &'a str,
        checkpoint: &'a Checkpoint,
    ) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            let path = self.path(migration);
            // One short line per page: blocking file calls are cheaper than a thread.
            std::fs::create_dir_all(&self.dir).map_err(|e| io_error(&self.dir, e))?;
            // A temporary file of this save's own (two runs sharing the directory never
            // write one file), synced before it replaces the checkpoint: a crash leaves
            // the old checkpoint or the new one, whole.
            static SAVES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let save = SAVES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let temporary =
                path.with_extension(format!("checkpoint.{}-{save}.tmp", std::process::id()));
            let written = (|| {
                use std::io::Write;
                let mut file = std::fs::File::create(&temporary)?;
                file.write_all(checkpoint.to_text().as_bytes())?;
                file.sync_all()
            })();
            if let Err(e) = written {
                let _ = std::fs::remove_file(&temporary);
                return Err(io_error(&temporary, e));
            }
            std::fs::rename(&temporary, &path).map_err(|e| {
                let _ = std::fs::remove_file(&temporary);
                io_error(&path, e)
            })
        })
    }
}

type ProgressFn = dyn Fn(&Progress) + Send + Sync;

/// A migration of the items of entity `E`; see the [module documentation](self).
#[must_use = "a migration does nothing until run() is awaited"]
pub struct Migration<E: Entity> {
    db: Db<E::Table>,
    name: String,
    steps: Vec<Step<E>>,
    marker: Option<bool>,
    partition: Option<Result<String, crate::keytext::KeyError>>,
    segments: u32,
    page_size: usize,
    read_budget: Option<f64>,
    write_budget: Option<f64>,
    dry_run: bool,
    store: Arc<dyn CheckpointStore>,
    progress: Option<Arc<ProgressFn>>,
    stop_after: u32,
}

impl<E: Entity> fmt::Debug for Migration<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Migration")
            .field("entity", &E::ENTITY_TYPE)
            .field("name", &self.name)
            .field("steps", &self.steps.len())
            .field("segments", &self.segments)
            .field("dry_run", &self.dry_run)
            .finish_non_exhaustive()
    }
}

impl<E: Entity> Migration<E> {
    /// A migration of `E`'s items named `name`: the name keys its checkpoint and its
    /// marker, so give each migration its own and keep it when resuming one.
    pub fn new(db: &Db<E::Table>, name: impl Into<String>) -> Self {
        Migration {
            db: db.clone(),
            name: name.into(),
            steps: Vec::new(),
            marker: None,
            partition: None,
            segments: 1,
            page_size: 100,
            read_budget: None,
            write_budget: None,
            dry_run: false,
            store: Arc::new(MemoryCheckpoints::new()),
            progress: None,
            stop_after: DEFAULT_STOP_AFTER_REFUSALS,
        }
    }

    /// Decodes each item and encodes it again with the current declaration.
    pub fn rewrite(mut self) -> Self {
        self.steps.push(Step::Rewrite);
        self
    }

    /// Applies `f` to each decoded item: `Some` is written, `None` leaves the item as it
    /// is. `f` runs again on an item whose write conflicted, on the item as read again;
    /// it runs at most once per item across resumed runs otherwise (see the marker).
    pub fn map(mut self, f: impl Fn(E) -> Option<E> + Send + Sync + 'static) -> Self {
        self.steps.push(Step::Map(Arc::new(f)));
        self
    }

    /// Moves attribute `from` to `to` on items that have `from`. An item that already has
    /// `to` with the same value loses `from`; one that has `to` with a different value is
    /// left unchanged and reported among the [failures](Report::failures) (a
    /// [`ValidationReason::RenamedField`] error), since either removal would lose data:
    /// decide with a [`map`](Self::map) or by hand, then run the rename again. Renaming
    /// an attribute onto itself is refused.
    pub fn rename_attribute(mut self, from: impl Into<String>, to: impl Into<String>) -> Self {
        self.steps.push(Step::Rename {
            from: from.into(),
            to: to.into(),
        });
        self
    }

    /// Sets `attribute` to `value` on items that do not have it.
    pub fn set_default(mut self, attribute: impl Into<String>, value: AttributeValue) -> Self {
        self.steps.push(Step::Default {
            attribute: attribute.into(),
            value,
        });
        self
    }

    /// Removes `attribute` from items that have it: an attribute no field reads any more
    /// (a field's older name after a rename, a dropped field), or the keys of an index
    /// the entity no longer declares, which a [`rewrite`](Self::rewrite) keeps as it keeps
    /// every attribute the entity does not declare. The table's keys, the crate's own
    /// attributes, the keys the entity's index templates render and the entity's fields
    /// are refused (change a field with [`map`](Self::map)).
    pub fn remove_attribute(mut self, attribute: impl Into<String>) -> Self {
        self.steps.push(Step::Remove {
            attribute: attribute.into(),
        });
        self
    }

    /// Only the items of one partition of the table (a `Query`), e.g. `User::partition(..)`.
    pub fn partition(mut self, partition: crate::Partition<E>) -> Self {
        self.partition = Some(partition.value);
        self
    }

    /// Scans in `n` parallel segments (1 to 1,000,000, DynamoDB's limit; default 1).
    /// Ignored with [`partition`](Self::partition).
    pub fn segments(mut self, n: u32) -> Self {
        self.segments = n.clamp(1, MAX_SEGMENTS);
        self
    }

    /// Items read per request (1 to 1,000; default 100): the unit of a checkpoint.
    pub fn page_size(mut self, n: usize) -> Self {
        self.page_size = n.clamp(1, 1_000);
        self
    }

    /// Keeps the read capacity consumed under `units` per second across all segments
    /// (more than 0; `run` refuses 0, a negative number or NaN; infinity paces nothing).
    pub fn max_read_units_per_second(mut self, units: f64) -> Self {
        self.read_budget = Some(units);
        self
    }

    /// Keeps the write capacity consumed under `units` per second across all segments
    /// (more than 0, as [`max_read_units_per_second`](Self::max_read_units_per_second)).
    pub fn max_write_units_per_second(mut self, units: f64) -> Self {
        self.write_budget = Some(units);
        self
    }

    /// Stops the run with [`Error::MigrationStopped`] once DynamoDB has refused the
    /// writes of `items` items in a row for one same reason (the same error code and
    /// message; [`DEFAULT_STOP_AFTER_REFUSALS`] by default): a refusal every item meets (a
    /// value DynamoDB does not store, such as an empty set, or an expression it does not
    /// accept) is a fault of the migration, not of the items. Refusals by the crate
    /// before sending (a value it can tell is invalid) are reported per item and do not
    /// count. Any item changed in between starts the count
    /// again. The checkpoint keeps every page finished before the stop. `u32::MAX` never
    /// stops; `run` refuses 0.
    pub fn stop_after_refusals(mut self, items: u32) -> Self {
        self.stop_after = items;
        self
    }

    /// Reads and applies the changes without writing anything (items or checkpoints).
    pub fn dry_run(mut self) -> Self {
        self.dry_run = true;
        self
    }

    /// Records the migration in [`MIGRATIONS_ATTRIBUTE`] on every item it writes (the
    /// default for [`map`](Self::map)).
    pub fn with_marker(mut self) -> Self {
        self.marker = Some(true);
        self
    }

    /// Writes no marker, also with [`map`](Self::map): only for a function that gives
    /// the same result when applied again.
    pub fn without_marker(mut self) -> Self {
        self.marker = Some(false);
        self
    }

    /// Where checkpoints are kept (default: in memory, for this process only).
    pub fn checkpoints(mut self, store: impl CheckpointStore + 'static) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// Called with the counts so far after every page.
    pub fn on_progress(mut self, f: impl Fn(&Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }

    fn refuse(&self, message: impl Into<String>) -> Error {
        Error::invalid(
            E::ENTITY_TYPE,
            ValidationReason::InvalidOption,
            message.into(),
        )
        .during("Migration")
    }

    fn check(&self) -> Result<(), Error> {
        if self.steps.is_empty() {
            return Err(Error::invalid(
                E::ENTITY_TYPE,
                ValidationReason::NoOperations,
                "a migration needs a change: rewrite(), map(..), rename_attribute(..), set_default(..) or remove_attribute(..)",
            ));
        }
        if self.name.is_empty() {
            return Err(self.refuse("a migration needs a name"));
        }
        if self.stop_after == 0 {
            return Err(self.refuse(
                "stop_after_refusals(0) would stop before any write: give at least 1 (u32::MAX never stops)",
            ));
        }
        for (budget, what) in [(self.read_budget, "read"), (self.write_budget, "write")] {
            if let Some(units) = budget
                && (units.is_nan() || units <= 0.0)
            {
                return Err(self.refuse(format!(
                    "a {what} budget of {units} units a second: it must be more than 0"
                )));
            }
        }
        let decodes = self
            .steps
            .iter()
            .any(|s| matches!(s, Step::Rewrite | Step::Map(_)));
        if decodes && E::__HISTORY.is_some() {
            return Err(self.refuse(
                "a versioned entity's items change through db.versions(), which writes a revision for each change",
            ));
        }
        if decodes && !E::__CHUNKED.is_empty() {
            return Err(self.refuse(
                "an entity with chunked fields is written with its chunk items: rewrite it with db.put",
            ));
        }
        let schema = &<E::Table as Table>::SCHEMA;
        for step in &self.steps {
            if let Step::Rename { from, to } = step
                && from == to
            {
                return Err(self.refuse(format!("`{from}` is renamed onto itself")));
            }
            if let Step::Remove { attribute } = step {
                let older_name = E::__ALIASES
                    .iter()
                    .any(|(_, older)| older.contains(&attribute.as_str()));
                let refused = attribute.is_empty()
                    || schema.is_reserved_attribute(attribute)
                    || attribute == schema.write_token
                    || attribute == MIGRATIONS_ATTRIBUTE
                    || renders_index_key::<E>(attribute)
                    || (E::ATTRIBUTES.contains(&attribute.as_str()) && !older_name);
                if refused {
                    return Err(self.refuse(format!(
                        "`{attribute}` is a key, a key the entity's index templates render, a field of the entity or an attribute of the crate: remove_attribute removes attributes nothing reads (change a field with map(..))"
                    )));
                }
                continue;
            }
            let touched: Vec<&str> = match step {
                Step::Rename { from, to } => vec![from, to],
                Step::Default { attribute, .. } => vec![attribute],
                _ => Vec::new(),
            };
            for attribute in touched {
                if attribute.is_empty()
                    || schema.is_reserved_attribute(attribute)
                    || schema.is_index_key_attribute(attribute)
                    || attribute == schema.write_token
                    || attribute == MIGRATIONS_ATTRIBUTE
                {
                    return Err(self.refuse(format!(
                        "`{attribute}` is a key, index key, entity-type, write-token or migration attribute: a migration changes plain attributes only (rewrite() recomputes index keys)"
                    )));
                }
            }
        }
        Ok(())
    }

    fn uses_marker(&self) -> bool {
        self.marker
            .unwrap_or_else(|| self.steps.iter().any(|s| matches!(s, Step::Map(_))))
    }

    fn fingerprint(&self, sources: usize) -> Fingerprint {
        // The changes too: a checkpoint of other changes under the same name would skip
        // the items it already passed.
        let steps: Vec<String> = self
            .steps
            .iter()
            .map(|step| match step {
                Step::Rewrite => "rewrite".to_owned(),
                Step::Map(_) => "map".to_owned(),
                Step::Rename { from, to } => format!("rename {from:?} {to:?}"),
                Step::Default { attribute, value } => format!("default {attribute:?} {value:?}"),
                Step::Remove { attribute } => format!("remove {attribute:?}"),
            })
            .collect();
        Fingerprint::of(&[
            b"migration",
            self.db.table_name().as_bytes(),
            E::ENTITY_TYPE.as_bytes(),
            self.name.as_bytes(),
            &(sources as u64).to_be_bytes(),
            match &self.partition {
                Some(Ok(pk)) => pk.as_bytes(),
                _ => b"",
            },
            format!("{steps:?}").as_bytes(),
        ])
    }

    /// Runs (or resumes) the migration to the end.
    pub async fn run(self) -> Result<Report, Error> {
        self.check()?;
        let partition = match self.partition.clone().transpose() {
            Ok(p) => p,
            Err(e) => {
                return Err(Error::invalid(
                    E::ENTITY_TYPE,
                    ValidationReason::KeyEncoding,
                    e.to_string(),
                )
                .caused_by(e)
                .during("Migration"));
            }
        };
        let sources = if partition.is_some() {
            1
        } else {
            self.segments as usize
        };
        let fingerprint = self.fingerprint(sources);
        let secret = self.db.cursor_secret().to_vec();
        let (positions, progress, resumed) = match self.store.load(&self.name).await? {
            Some(checkpoint) if !self.dry_run => {
                let positions =
                    cursor::decode_positions(&checkpoint.positions, fingerprint, sources, &secret)
                        .map_err(|source| Error::Cursor {
                            target: E::ENTITY_TYPE,
                            source,
                        })?;
                (positions, checkpoint.progress, true)
            }
            _ => (vec![Position::Start; sources], Progress::default(), false),
        };
        let shared = Arc::new(Shared {
            positions: Mutex::new(positions.clone()),
            progress: Mutex::new(progress),
            failures: Mutex::new(Vec::new()),
            sample: Mutex::new(Vec::new()),
            refusals: Mutex::new(Refusals::default()),
            save: tokio::sync::Mutex::new(()),
            reads: self
                .read_budget
                .map(|b| tokio::sync::Mutex::new(Pacer::new(b))),
            writes: self
                .write_budget
                .map(|b| tokio::sync::Mutex::new(Pacer::new(b))),
        });
        let job = Arc::new(Job {
            db: self.db.clone(),
            name: self.name.clone(),
            steps: self.steps.clone(),
            marker: self.uses_marker(),
            partition,
            page_size: self.page_size,
            dry_run: self.dry_run,
            store: Arc::clone(&self.store),
            on_progress: self.progress.clone(),
            fingerprint,
            secret,
            sources,
            stop_after: self.stop_after,
        });
        let runs = positions.into_iter().enumerate().map(|(i, start)| {
            let (job, shared) = (Arc::clone(&job), Arc::clone(&shared));
            async move { job.segment(i, start, &shared).await }
        });
        futures_util::future::try_join_all(runs).await?;
        let progress = *lock(&shared.progress);
        let failures = std::mem::take(&mut *lock(&shared.failures));
        let sample = std::mem::take(&mut *lock(&shared.sample));
        Ok(Report {
            progress,
            resumed,
            dry_run: self.dry_run,
            failures,
            sample,
        })
    }
}

impl<T: Table> Db<T> {
    /// A migration of `E`'s items named `name`; see [`crate::migrate`].
    pub fn migration<E: Entity<Table = T>>(&self, name: impl Into<String>) -> Migration<E> {
        Migration::new(self, name)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

struct Shared {
    positions: Mutex<Vec<Position>>,
    progress: Mutex<Progress>,
    failures: Mutex<Vec<Failure>>,
    sample: Mutex<Vec<PlannedChange>>,
    refusals: Mutex<Refusals>,
    /// Saves one at a time, so a later checkpoint never lands before an earlier one.
    save: tokio::sync::Mutex<()>,
    reads: Option<tokio::sync::Mutex<Pacer>>,
    writes: Option<tokio::sync::Mutex<Pacer>>,
}

async fn pace(pacer: &Option<tokio::sync::Mutex<Pacer>>) {
    if let Some(p) = pacer {
        let delay = p.lock().await.delay();
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
    }
}

async fn spend(pacer: &Option<tokio::sync::Mutex<Pacer>>, units: f64) {
    if let Some(p) = pacer {
        p.lock().await.spend(units);
    }
}

struct Job<E: Entity> {
    db: Db<E::Table>,
    name: String,
    steps: Vec<Step<E>>,
    marker: bool,
    partition: Option<String>,
    page_size: usize,
    dry_run: bool,
    store: Arc<dyn CheckpointStore>,
    on_progress: Option<Arc<ProgressFn>>,
    fingerprint: Fingerprint,
    secret: Vec<u8>,
    sources: usize,
    stop_after: u32,
}

/// The writes DynamoDB refused in a row, across segments, and for what reason.
#[derive(Default)]
struct Refusals {
    reason: String,
    count: u32,
}

impl Refusals {
    /// Counts a refusal; whether it makes `limit` in a row for one reason.
    fn refused(&mut self, error: &Error, limit: u32) -> bool {
        let reason = error.to_string();
        if self.count > 0 && self.reason == reason {
            self.count = self.count.saturating_add(1);
        } else {
            (self.reason, self.count) = (reason, 1);
        }
        self.count >= limit
    }
}

/// What became of one item.
enum Outcome {
    Changed,
    Unchanged,
    Already,
    Other,
    Vanished,
    Failed(Error),
    /// DynamoDB refused the item's write (a `ValidationException`).
    Refused(Error),
}

impl<E: Entity> Job<E> {
    async fn segment(&self, index: usize, start: Position, shared: &Shared) -> Result<(), Error> {
        let mut start = match start {
            Position::Done => return Ok(()),
            Position::Start => None,
            Position::After(key) => Some(key),
        };
        loop {
            pace(&shared.reads).await;
            let (items, last_key, read_units) = self.read_page(index, start.take()).await?;
            spend(&shared.reads, read_units).await;
            let mut page = Progress {
                scanned: items.len() as u64,
                read_units,
                ..Progress::default()
            };
            for item in items {
                let key = crate::keytext::raw_key_of(&<E::Table as Table>::SCHEMA, &item);
                let outcome = self.migrate_item(item, shared, &mut page).await?;
                let outcome = match outcome {
                    Outcome::Refused(error) => {
                        if lock(&shared.refusals).refused(&error, self.stop_after) {
                            // The pages finished so far are checkpointed; this one is
                            // read again by the next run.
                            return Err(Error::MigrationStopped {
                                migration: self.name.clone(),
                                refusals: self.stop_after,
                                last: Box::new(error),
                            });
                        }
                        Outcome::Failed(error)
                    }
                    Outcome::Changed => {
                        lock(&shared.refusals).count = 0;
                        Outcome::Changed
                    }
                    other => other,
                };
                match outcome {
                    Outcome::Changed => page.changed += 1,
                    Outcome::Unchanged => page.unchanged += 1,
                    Outcome::Already => page.already += 1,
                    Outcome::Other => page.other += 1,
                    Outcome::Vanished => page.vanished += 1,
                    Outcome::Failed(error) | Outcome::Refused(error) => {
                        page.failed += 1;
                        let mut failures = lock(&shared.failures);
                        if failures.len() < KEEP {
                            failures.push(Failure {
                                key: key.unwrap_or_else(|| RawKey {
                                    pk: String::new(),
                                    sk: None,
                                }),
                                error,
                            });
                        }
                    }
                }
            }
            let position = match &last_key {
                Some(key) => Position::After(key.clone()),
                None => Position::Done,
            };
            self.checkpoint(index, position, &page, shared).await?;
            match last_key {
                Some(key) => start = Some(key),
                None => return Ok(()),
            }
        }
    }

    /// Records a page's end: the segment's position and the counts, saved together.
    async fn checkpoint(
        &self,
        index: usize,
        position: Position,
        page: &Progress,
        shared: &Shared,
    ) -> Result<(), Error> {
        let _saving = shared.save.lock().await;
        let (positions, progress) = {
            let mut positions = lock(&shared.positions);
            if let Some(slot) = positions.get_mut(index) {
                *slot = position;
            }
            let mut progress = lock(&shared.progress);
            progress.add(page);
            (positions.clone(), *progress)
        };
        if !self.dry_run {
            let checkpoint = Checkpoint {
                positions: cursor::encode_positions(self.fingerprint, &positions, &self.secret),
                progress,
            };
            self.store.save(&self.name, &checkpoint).await?;
        }
        if let Some(f) = &self.on_progress {
            f(&progress);
        }
        Ok(())
    }

    async fn read_page(
        &self,
        index: usize,
        start: Option<Item>,
    ) -> Result<(Vec<Item>, Option<Item>, f64), Error> {
        let db = &self.db;
        let limit = i32::try_from(self.page_size).unwrap_or(1_000);
        let span = crate::trace::request(
            if self.partition.is_some() {
                "Query"
            } else {
                "Scan"
            },
            1,
        );
        crate::trace::record(&span, "aws.dynamodb.limit", limit);
        let (items, last, consumed) = match &self.partition {
            Some(pk) => {
                let schema = &<E::Table as Table>::SCHEMA;
                let out = db
                    .client()
                    .query()
                    .table_name(db.table_name())
                    .key_condition_expression("#pk = :pk")
                    .expression_attribute_names("#pk", schema.pk.name)
                    .expression_attribute_values(":pk", AttributeValue::S(pk.clone()))
                    .limit(limit)
                    .set_exclusive_start_key(start)
                    .return_consumed_capacity(ReturnConsumedCapacity::Total)
                    .send()
                    .instrument(span.clone())
                    .await
                    .map_err(|e| Error::service("Query", db.table_name(), e))
                    .map_err(|e| crate::trace::failed(&span, e))?;
                (out.items, out.last_evaluated_key, out.consumed_capacity)
            }
            None => {
                let segments = (self.sources > 1).then_some((index as i32, self.sources as i32));
                let out = db
                    .client()
                    .scan()
                    .table_name(db.table_name())
                    .limit(limit)
                    .set_segment(segments.map(|s| s.0))
                    .set_total_segments(segments.map(|s| s.1))
                    .set_exclusive_start_key(start)
                    .return_consumed_capacity(ReturnConsumedCapacity::Total)
                    .send()
                    .instrument(span.clone())
                    .await
                    .map_err(|e| Error::service("Scan", db.table_name(), e))
                    .map_err(|e| crate::trace::failed(&span, e))?;
                (out.items, out.last_evaluated_key, out.consumed_capacity)
            }
        };
        let units = consumed.and_then(|c| c.capacity_units).unwrap_or(0.0);
        let items = items.unwrap_or_default();
        crate::trace::record(&span, "dynamo_model.items", items.len() as u64);
        crate::trace::record(&span, "aws.dynamodb.consumed_capacity", units);
        Ok((items, last.filter(|k| !k.is_empty()), units))
    }

    /// Whether `item` is one of `E`'s items (not another entity's, not a revision, not a
    /// chunk item), by its entity type or, for an entity identified by its keys, its keys.
    fn is_ours(item: &Item) -> bool {
        let schema = &<E::Table as Table>::SCHEMA;
        let Some(key) = crate::keytext::raw_key_of(schema, item) else {
            return false;
        };
        if crate::chunk::is_chunk_key(&key) || crate::registry::is_revision::<E::Table>(item) {
            return false;
        }
        match item.get(schema.entity_type) {
            Some(AttributeValue::S(found)) => found == E::ENTITY_TYPE,
            Some(_) => false,
            None => {
                E::__IDENTIFY_BY_KEYS
                    && crate::registry::identified_by_key::<E::Table>(&key)
                        .contains(&E::ENTITY_TYPE)
            }
        }
    }

    fn holds_marker(&self, item: &Item) -> bool {
        matches!(item.get(MIGRATIONS_ATTRIBUTE), Some(AttributeValue::Ss(names)) if names.contains(&self.name))
    }

    /// The item as the changes leave it (`Ok(None)`: unchanged).
    fn apply(&self, item: &Item) -> Result<Option<Item>, Error> {
        let mut current = item.clone();
        let mut mapped = false;
        for step in &self.steps {
            match step {
                Step::Rewrite | Step::Map(_) => {
                    // A renamed field whose current and older names hold different
                    // values: decoding would take one and the write drop the other, so
                    // the item is reported and left, as `rename_attribute` does.
                    refuse_two_values::<E>(&current)?;
                    // Index keys rendered from templates are written again from the
                    // fields below: keys a template wrote before it changed (or that
                    // a now-absent field left behind) must not stop the decode.
                    let schema = &<E::Table as Table>::SCHEMA;
                    let mut readable = current.clone();
                    readable.retain(|name, _| {
                        !schema.is_index_key_attribute(name)
                            || E::ATTRIBUTES.contains(&name.as_str())
                            || name == schema.pk.name
                            || schema.sk.is_some_and(|sk| sk.name == name)
                    });
                    // A field held only by an index key (another program writes no
                    // plain attribute for it) is read from that key: when the item does
                    // not decode without its index keys, it is decoded with them.
                    let decoded = match <E as Target>::decode(readable) {
                        Err(_) if current.keys().any(|n| schema.is_index_key_attribute(n)) => {
                            <E as Target>::decode(current.clone())
                        }
                        other => other,
                    };
                    let decoded = match decoded {
                        Ok(Decoded::Item(value)) => value,
                        Ok(Decoded::Unknown(found)) => {
                            return Err(Error::Decode(DecodeError {
                                entity: E::ENTITY_TYPE,
                                key: crate::keytext::describe_item_key(
                                    &<E::Table as Table>::SCHEMA,
                                    &current,
                                ),
                                attribute: None,
                                kind: crate::DecodeErrorKind::WrongEntityType {
                                    expected: E::ENTITY_TYPE,
                                    found,
                                },
                            }));
                        }
                        Err(e) => return Err(Error::Decode(e)),
                    };
                    let value = match step {
                        Step::Map(f) => match f(decoded) {
                            Some(value) => {
                                mapped = true;
                                value
                            }
                            None => continue,
                        },
                        _ => decoded,
                    };
                    let mut written = value.to_item()?;
                    // Attributes the entity does not declare stay as they are: those
                    // another program writes, the write token (so an application's
                    // retried update still recognises its write) and the migrations
                    // already applied. The entity's own attributes (older names
                    // included), the keys and the index keys are what the declaration
                    // writes now, or removed.
                    for (name, v) in &current {
                        let declared = E::ATTRIBUTES.contains(&name.as_str())
                            || schema.is_reserved_attribute(name)
                            || renders_index_key::<E>(name);
                        if !declared && !written.contains_key(name) {
                            written.insert(name.clone(), v.clone());
                        }
                    }
                    // The entity's key is where the item is: a change of a key field
                    // would write another item and leave this one behind.
                    let (before, after) = (
                        crate::keytext::raw_key_of(schema, &current),
                        crate::keytext::raw_key_of(schema, &written),
                    );
                    if before != after {
                        return Err(Error::invalid(
                            E::ENTITY_TYPE,
                            ValidationReason::InvalidValue,
                            "the change moves the item to another key; a migration changes items in place",
                        ));
                    }
                    current = written;
                }
                Step::Rename { from, to } => {
                    if let Some(value) = current.remove(from.as_str()) {
                        match current.get(to.as_str()) {
                            // Both names hold one value (a write of the new program
                            // after a copy): the older name goes.
                            Some(existing) if same_value(existing, &value) => {}
                            // Two different values: which one is right is the user's
                            // call, and removing either would lose data.
                            Some(_) => {
                                return Err(Error::invalid(
                                    E::ENTITY_TYPE,
                                    ValidationReason::RenamedField,
                                    format!(
                                        "the item holds different values under `{from}` and `{to}`: the rename would lose one of them, so the item is left as it is"
                                    ),
                                ));
                            }
                            None => {
                                current.insert(to.clone(), value);
                            }
                        }
                    }
                }
                Step::Default { attribute, value } => {
                    current
                        .entry(attribute.clone())
                        .or_insert_with(|| value.clone());
                }
                Step::Remove { attribute } => {
                    current.remove(attribute.as_str());
                }
            }
        }
        if same_item(&current, item) {
            return Ok(None);
        }
        // A map changes the item's data: a versioned entity's version moves on, so that
        // an application write based on a read from before the migration conflicts
        // rather than undoing it. (A rewrite, rename or default changes the stored form
        // only, which such a write renders again.)
        if mapped && let Some(attribute) = E::VERSION {
            let version = |i: &Item| match i.get(attribute) {
                Some(AttributeValue::N(n)) => n.parse::<u64>().ok(),
                _ => None,
            };
            if let Some(read) = version(item)
                && version(&current) == Some(read)
            {
                let next = read.checked_add(1).ok_or_else(|| {
                    Error::invalid(
                        E::ENTITY_TYPE,
                        ValidationReason::VersionOverflow,
                        "the version cannot be incremented any further",
                    )
                })?;
                current.insert(attribute.to_owned(), AttributeValue::N(next.to_string()));
            }
        }
        if self.marker {
            let mut names = match current.remove(MIGRATIONS_ATTRIBUTE) {
                Some(AttributeValue::Ss(names)) => names,
                None => Vec::new(),
                // Another program's value under the marker's name: not replaced.
                Some(other) => {
                    return Err(Error::invalid(
                        E::ENTITY_TYPE,
                        ValidationReason::InvalidValue,
                        format!(
                            "`{MIGRATIONS_ATTRIBUTE}` holds a {} value, not the string set of migrations: the item is left as it is",
                            crate::codec::type_name(&other)
                        ),
                    ));
                }
            };
            if !names.contains(&self.name) {
                names.push(self.name.clone());
            }
            current.insert(MIGRATIONS_ATTRIBUTE.to_owned(), AttributeValue::Ss(names));
        }
        crate::size::check_item_size::<E>(&current)?;
        Ok(Some(current))
    }

    async fn migrate_item(
        &self,
        mut item: Item,
        shared: &Shared,
        page: &mut Progress,
    ) -> Result<Outcome, Error> {
        for _ in 0..MAX_CONFLICTS_PER_ITEM {
            if !Self::is_ours(&item) {
                return Ok(Outcome::Other);
            }
            if self.marker && self.holds_marker(&item) {
                return Ok(Outcome::Already);
            }
            let changed = match self.apply(&item) {
                Ok(Some(changed)) => changed,
                Ok(None) => return Ok(Outcome::Unchanged),
                Err(e) => return Ok(Outcome::Failed(e)),
            };
            if self.dry_run {
                let mut sample = lock(&shared.sample);
                if sample.len() < KEEP
                    && let Some(key) =
                        crate::keytext::raw_key_of(&<E::Table as Table>::SCHEMA, &item)
                {
                    sample.push(plan(key, &item, &changed));
                }
                return Ok(Outcome::Changed);
            }
            pace(&shared.writes).await;
            match self.write_if_unchanged(&item, &changed).await? {
                Written::TooLarge(why) => {
                    return Ok(Outcome::Failed(Error::invalid(
                        E::ENTITY_TYPE,
                        ValidationReason::InvalidValue,
                        format!(
                            "the item has too many attributes for one conditional write: {why}"
                        ),
                    )));
                }
                Written::Refused(e) => return Ok(Outcome::Refused(e)),
                Written::Done(units) => {
                    spend(&shared.writes, units).await;
                    page.write_units += units;
                    return Ok(Outcome::Changed);
                }
                Written::Conflict(now) => {
                    match now {
                        None => return Ok(Outcome::Vanished),
                        // This very write, applied by an attempt whose response was
                        // lost (the SDK sent it again and its condition failed).
                        Some(now) if same_item(&now, &changed) => return Ok(Outcome::Changed),
                        Some(now) => {
                            page.conflicts += 1;
                            item = now;
                        }
                    }
                }
            }
        }
        Ok(Outcome::Failed(Error::invalid(
            E::ENTITY_TYPE,
            ValidationReason::InvalidOption,
            format!(
                "the item changed under the migration {MAX_CONFLICTS_PER_ITEM} times in a row; run the migration again to retry it"
            ),
        )))
    }

    /// Updates the stored item to `changed` if it is still `read`, attribute by attribute.
    async fn write_if_unchanged(&self, read: &Item, changed: &Item) -> Result<Written, Error> {
        let db = &self.db;
        let schema = &<E::Table as Table>::SCHEMA;
        let is_key =
            |name: &str| name == schema.pk.name || schema.sk.is_some_and(|a| a.name == name);
        let mut p = Placeholders::default();
        // Update: only what the change sets or removes, so that an attribute another
        // writer added after the read survives.
        let (mut set, removed) = diff(read, changed);
        set.retain(|(name, _)| !is_key(name));
        let mut actions = Vec::new();
        let update_operators = set.len() + removed.len();
        if !set.is_empty() {
            let pairs: Vec<String> = set
                .iter()
                .map(|(name, value)| format!("{} = {}", p.name(name), p.value((*value).clone())))
                .collect();
            actions.push(format!("SET {}", pairs.join(", ")));
        }
        if !removed.is_empty() {
            let paths: Vec<String> = removed.into_iter().map(|name| p.name(name)).collect();
            actions.push(format!("REMOVE {}", paths.join(", ")));
        }
        let update = actions.join(" ");
        // Condition: every attribute as read, and absent what the read did not have but
        // this write sets, and the crate's write token and marker (which every other
        // single-item write of the crate adds).
        let mut clauses: Vec<String> = Vec::with_capacity(read.len() + 4);
        let mut present: Vec<&String> = read.keys().collect();
        present.sort();
        for name in present {
            let path = p.name(name);
            let value = p.value(read[name].clone());
            clauses.push(format!("{path} = {value}"));
        }
        let mut absent: std::collections::BTreeSet<&str> = set
            .iter()
            .map(|(name, _)| name.as_str())
            .chain([schema.write_token, MIGRATIONS_ATTRIBUTE])
            .collect();
        absent.retain(|name| !read.contains_key(*name));
        for name in &absent {
            let path = p.name(name);
            clauses.push(format!("attribute_not_exists({path})"));
        }
        // Where it fits, also absent the entity's other attributes (older names
        // included): a batch or transaction write that adds one meanwhile then counts as
        // a change too, and a map runs again on the item as it is now. An item too wide
        // for that is still checked attribute by attribute on what was read.
        let mut watched = p.clone();
        let mut watching = clauses.clone();
        let others = E::ATTRIBUTES
            .iter()
            .copied()
            .chain(
                E::__ALIASES
                    .iter()
                    .flat_map(|(_, older)| older.iter().copied()),
            )
            .filter(|name| !read.contains_key(*name) && !absent.contains(name))
            .collect::<std::collections::BTreeSet<&str>>();
        for name in others {
            let path = watched.name(name);
            watching.push(format!("attribute_not_exists({path})"));
        }
        if expression_fits(&watching, " AND ") {
            (p, clauses) = (watched, watching);
        }
        let condition = clauses.join(" AND ");
        // DynamoDB refuses an expression over 4 KB or with more than 300 operators: an
        // item with that many attributes cannot be checked (or changed) attribute by
        // attribute in one request.
        if !expression_fits(&clauses, " AND ") {
            return Ok(Written::TooLarge(format!(
                "checking it unchanged takes {} conditions ({} bytes; DynamoDB allows {MAX_OPERATORS} operators and {MAX_EXPRESSION_BYTES} bytes)",
                clauses.len(),
                condition.len()
            )));
        }
        if update.len() > MAX_EXPRESSION_BYTES || update_operators > MAX_OPERATORS {
            return Ok(Written::TooLarge(format!(
                "the change sets or removes {update_operators} attributes ({} bytes; DynamoDB allows {MAX_OPERATORS} operators and {MAX_EXPRESSION_BYTES} bytes)",
                update.len()
            )));
        }
        let key: HashMap<String, AttributeValue> = read
            .iter()
            .filter(|(name, _)| is_key(name))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        let (names, values) = p.finish();
        let span = crate::trace::request("UpdateItem", 1);
        let sent = db
            .client()
            .update_item()
            .table_name(db.table_name())
            .set_key(Some(key))
            .update_expression(update)
            .condition_expression(condition)
            .set_expression_attribute_names(names)
            .set_expression_attribute_values(values)
            .return_consumed_capacity(ReturnConsumedCapacity::Total)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .send()
            .instrument(span.clone())
            .await;
        match sent {
            Ok(out) => {
                let units = out
                    .consumed_capacity
                    .and_then(|c| c.capacity_units)
                    .unwrap_or(0.0);
                crate::trace::record(&span, "aws.dynamodb.consumed_capacity", units);
                Ok(Written::Done(units))
            }
            Err(e) => match e.into_service_error() {
                UpdateItemError::ConditionalCheckFailedException(failed) => {
                    crate::trace::record(&span, "error.type", "ConditionalCheckFailedException");
                    let now = match failed.item {
                        Some(item) if !item.is_empty() => Some(item),
                        // Not returned (DynamoDB Local may leave it out): read it.
                        _ => self.read_again(read).await?,
                    };
                    Ok(Written::Conflict(now))
                }
                // DynamoDB refused this item's request (its size, an expression
                // limit): the item is reported and the migration goes on.
                other if other.code() == Some("ValidationException") => {
                    Ok(Written::Refused(crate::trace::failed(
                        &span,
                        Error::service("UpdateItem", db.table_name(), other),
                    )))
                }
                other => Err(crate::trace::failed(
                    &span,
                    Error::service("UpdateItem", db.table_name(), other),
                )),
            },
        }
    }

    /// The item under `read`'s key as stored now (strongly consistent).
    async fn read_again(&self, read: &Item) -> Result<Option<Item>, Error> {
        let db = &self.db;
        let schema = &<E::Table as Table>::SCHEMA;
        let key: HashMap<String, AttributeValue> = std::iter::once(schema.pk.name)
            .chain(schema.sk.map(|a| a.name))
            .filter_map(|name| read.get(name).map(|v| (name.to_owned(), v.clone())))
            .collect();
        let span = crate::trace::request("GetItem", 1);
        let out = db
            .client()
            .get_item()
            .table_name(db.table_name())
            .set_key(Some(key))
            .consistent_read(true)
            .send()
            .instrument(span.clone())
            .await
            .map_err(|e| {
                crate::trace::failed(&span, Error::service("GetItem", db.table_name(), e))
            })?;
        let item = out.item.filter(|i| !i.is_empty());
        crate::trace::record(&span, "dynamo_model.items", u64::from(item.is_some()));
        Ok(item)
    }
}

enum Written {
    /// Written; the write units DynamoDB reported.
    Done(f64),
    /// Not sent: the request would be over DynamoDB's expression limits (why).
    TooLarge(String),
    /// Refused by DynamoDB as invalid (a `ValidationException`).
    Refused(Error),
    /// The condition failed: the item as stored now (`None`: deleted).
    Conflict(Option<Item>),
}

fn plan(key: RawKey, before: &Item, after: &Item) -> PlannedChange {
    let (set, removed) = diff(before, after);
    PlannedChange {
        key,
        set: set.into_iter().map(|(name, _)| name.clone()).collect(),
        removed: removed.into_iter().cloned().collect(),
    }
}

/// What turns `before` into `after`: the attributes to set (new or with another value),
/// and those to remove, each sorted by name.
fn diff<'a>(
    before: &'a Item,
    after: &'a Item,
) -> (Vec<(&'a String, &'a AttributeValue)>, Vec<&'a String>) {
    let mut set: Vec<(&String, &AttributeValue)> = after
        .iter()
        .filter(|(name, value)| !before.get(*name).is_some_and(|b| same_value(b, value)))
        .collect();
    set.sort_by(|a, b| a.0.cmp(b.0));
    let mut removed: Vec<&String> = before
        .keys()
        .filter(|name| !after.contains_key(*name))
        .collect();
    removed.sort();
    (set, removed)
}

#[cfg(test)]
mod tests;
