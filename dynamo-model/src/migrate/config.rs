//! The migration builder: the changes, the options, their checks, and the run that sets the job
//! going.

use super::job::{Job, ProgressFn, Refusals, Shared, lock};
use super::{
    CheckpointStore, DEFAULT_STOP_AFTER_REFUSALS, MAX_SEGMENTS, MIGRATIONS_ATTRIBUTE,
    MemoryCheckpoints, Progress, Report, Step, renders_index_key,
};
use crate::cursor::{self, Fingerprint, Position};
use crate::read::pager::{self, Pacer};
use crate::{Db, Entity, Error, Table, ValidationReason};
use aws_sdk_dynamodb::types::AttributeValue;
use futures_util::StreamExt;
use std::fmt;
use std::sync::{Arc, Mutex};

/// A migration of the items of entity `E`; see the [module documentation](crate::migrate).
#[must_use = "a migration does nothing until run() is awaited"]
pub struct Migration<E: Entity> {
    db: Db<E::Table>,
    name: String,
    steps: Vec<Step<E>>,
    marker: Option<bool>,
    partition: Option<Result<String, crate::key::KeyError>>,
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

    crate::setters::setters! {
        /// Only the items of one partition of the table (a `Query`), e.g. `User::partition(..)`.
        partition(partition: crate::Partition<E>) => partition = Some(partition.value);
        /// Scans in `n` parallel segments (1 to 1,000,000, DynamoDB's limit; default 1).
        /// Ignored with [`partition`](Self::partition).
        segments(n: u32) => segments = n.clamp(1, MAX_SEGMENTS);
        /// Items read per request (1 to 1,000; default 100): the unit of a checkpoint.
        page_size(n: usize) => page_size = n.clamp(1, 1_000);
        /// Keeps the read capacity consumed under `units` per second across all segments
        /// (more than 0; `run` refuses 0, a negative number or NaN; infinity paces nothing).
        max_read_units_per_second(units: f64) => read_budget = Some(units);
        /// Keeps the write capacity consumed under `units` per second across all segments
        /// (more than 0, as [`max_read_units_per_second`](Self::max_read_units_per_second)).
        max_write_units_per_second(units: f64) => write_budget = Some(units);
        /// Stops the run with [`Error::MigrationStopped`] once DynamoDB has refused the
        /// writes of `items` items in a row for one same reason (the same error code and
        /// message; [`DEFAULT_STOP_AFTER_REFUSALS`] by default): a refusal every item meets (a
        /// value DynamoDB does not store, such as an empty set, or an expression it does not
        /// accept) is a fault of the migration, not of the items. Refusals by the crate
        /// before sending (a value it can tell is invalid) are reported per item and do not
        /// count. Any item changed in between starts the count
        /// again. The checkpoint keeps the items of every request finished before the stop.
        /// `u32::MAX` never stops; `run` refuses 0.
        stop_after_refusals(items: u32) => stop_after = items;
        /// Reads and applies the changes without writing anything (items or checkpoints).
        dry_run() => dry_run = true;
        /// Records the migration in [`MIGRATIONS_ATTRIBUTE`] on every item it writes (the
        /// default for [`map`](Self::map)).
        with_marker() => marker = Some(true);
        /// Writes no marker, also with [`map`](Self::map): only for a function that gives
        /// the same result when applied again.
        without_marker() => marker = Some(false);
        /// Where checkpoints are kept (default: in memory, for this process only).
        checkpoints(store: impl CheckpointStore + 'static) => store = Arc::new(store);
    }

    /// Called with the counts so far after the items of each request.
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
                "the items of an entity with history change through db.history(), which writes a revision for each change",
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
                            reason: source,
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
            writes: self
                .write_budget
                .map(|b| tokio::sync::Mutex::new(Pacer::new(b))),
        });
        let reads = Job::<E>::reads(&self.db, partition.as_deref())?;
        let job = Arc::new(Job {
            db: self.db.clone(),
            name: self.name.clone(),
            steps: self.steps.clone(),
            marker: self.uses_marker(),
            dry_run: self.dry_run,
            store: Arc::clone(&self.store),
            on_progress: self.progress.clone(),
            fingerprint,
            secret,
            stop_after: self.stop_after,
        });
        // Each segment's responses migrated in turn, the segments concurrently; the first
        // failure ends the run.
        let migrate = |i, position: &Position, response| {
            let (job, shared, position) = (Arc::clone(&job), Arc::clone(&shared), position.clone());
            async move { job.response(i, position, response, &shared).await }
        };
        let mut segments = pager::parallel(
            reads,
            positions,
            Some(self.page_size),
            self.read_budget,
            migrate,
        );
        while let Some(migrated) = segments.next().await {
            migrated?;
        }
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
