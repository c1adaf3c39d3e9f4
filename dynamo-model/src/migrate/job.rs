//! The job of a running migration: each segment read response by response, each item migrated and
//! written back under its condition, the positions checkpointed.

use super::change::{Changes, diff, is_ours, plan};
use super::{
    Checkpoint, CheckpointStore, Failure, KEEP, MAX_CONFLICTS_PER_ITEM, MAX_EXPRESSION_BYTES,
    MAX_OPERATORS, MIGRATIONS_ATTRIBUTE, PlannedChange, Progress, Step, expression_fits, same_item,
};
use crate::call::Policy;
use crate::cursor::{self, Fingerprint, Position};
use crate::expr::{Node, Placeholders, UpdateClauses};
use crate::read::dynamodb::{Expressions, QueryOp, Reads, Request, ScanOp};
use crate::read::pager::{Pacer, Response, Source, pace, spend};
use crate::request::exec::{Reported, Sending, exec};
use crate::{Db, Entity, Error, Item, RawKey, Table, ValidationReason};
use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{
    AttributeValue, ReturnConsumedCapacity, ReturnValuesOnConditionCheckFailure,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What `on_progress` calls with the progress after the items of each response.
pub(super) type ProgressFn = dyn Fn(&Progress) + Send + Sync;

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub(super) struct Shared {
    pub(super) positions: Mutex<Vec<Position>>,
    pub(super) progress: Mutex<Progress>,
    pub(super) failures: Mutex<Vec<Failure>>,
    pub(super) sample: Mutex<Vec<PlannedChange>>,
    pub(super) refusals: Mutex<Refusals>,
    /// Saves one at a time, so a later checkpoint never lands before an earlier one.
    pub(super) save: tokio::sync::Mutex<()>,
    pub(super) writes: Option<tokio::sync::Mutex<Pacer>>,
}

pub(super) struct Job<E: Entity> {
    pub(super) db: Db<E::Table>,
    pub(super) name: String,
    pub(super) steps: Vec<Step<E>>,
    pub(super) marker: bool,
    pub(super) dry_run: bool,
    pub(super) store: Arc<dyn CheckpointStore>,
    pub(super) on_progress: Option<Arc<ProgressFn>>,
    pub(super) fingerprint: Fingerprint,
    pub(super) secret: Vec<u8>,
    pub(super) stop_after: u32,
}

/// The writes DynamoDB refused in a row, across segments, and for what reason.
#[derive(Default)]
pub(super) struct Refusals {
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
    /// Migrates the items of one response of segment `index`, then checkpoints the
    /// segment at `position` (where it stands after the response) with their counts. The
    /// segments are read in parallel the crate's one way (`pager::parallel`), paced by the
    /// migration's read budget; each segment's responses come here in turn.
    pub(super) async fn response(
        &self,
        index: usize,
        position: Position,
        response: Response,
        shared: &Shared,
    ) -> Result<(), Error> {
        let (items, read_units) = (response.items, response.consumed);
        let mut counts = Progress {
            scanned: items.len() as u64,
            read_units,
            ..Progress::default()
        };
        for item in items {
            let key = crate::schema::raw_key_of(&<E::Table as Table>::SCHEMA, &item);
            let outcome = self.migrate_item(item, shared, &mut counts).await?;
            let outcome = match outcome {
                Outcome::Refused(error) => {
                    if lock(&shared.refusals).refused(&error, self.stop_after) {
                        // The responses finished so far are checkpointed; this one
                        // is read again by the next run.
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
                Outcome::Changed => counts.changed += 1,
                Outcome::Unchanged => counts.unchanged += 1,
                Outcome::Already => counts.already += 1,
                Outcome::Other => counts.other += 1,
                Outcome::Vanished => counts.vanished += 1,
                Outcome::Failed(error) | Outcome::Refused(error) => {
                    counts.failed += 1;
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
        self.checkpoint(index, position, &counts, shared).await
    }

    /// Records the end of a response's items: the segment's position and their `counts`,
    /// saved together.
    async fn checkpoint(
        &self,
        index: usize,
        position: Position,
        counts: &Progress,
        shared: &Shared,
    ) -> Result<(), Error> {
        let _saving = shared.save.lock().await;
        let (positions, progress) = {
            let mut positions = lock(&shared.positions);
            if let Some(slot) = positions.get_mut(index) {
                *slot = position;
            }
            let mut progress = lock(&shared.progress);
            progress.add(counts);
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

    /// The read every request of a job sends through the crate's one source towards
    /// DynamoDB, built once with its expressions rendered: a query of the one partition
    /// `partition` names, or a scan of the table (segmented by each request's [`Ask`](crate::read::pager::Ask)).
    pub(super) fn reads(
        db: &Db<E::Table>,
        partition: Option<&str>,
    ) -> Result<Arc<dyn Source>, Error> {
        let Some(pk) = partition else {
            return Ok(Arc::new(Self::read_request(
                db,
                Expressions::default(),
                ScanOp::default(),
                Reads::of(E::ENTITY_TYPE),
            )));
        };
        let schema = &<E::Table as Table>::SCHEMA;
        let partition = Node::equals(schema.pk.name, AttributeValue::S(pk.to_owned()));
        let mut p = Placeholders::default();
        let key_condition = crate::expr::guard::render_for(E::ENTITY_TYPE, &mut p, &partition)?;
        let (names, values) = p.finish();
        let expressions = Expressions {
            key_condition,
            names,
            values,
            ..Expressions::default()
        };
        let reads = Reads {
            partition: Some(pk.to_owned()),
            ..Reads::of(E::ENTITY_TYPE)
        };
        Ok(Arc::new(Self::read_request(
            db,
            expressions,
            QueryOp::of_table(),
            reads,
        )))
    }

    /// A read of the migrated items.
    fn read_request<O>(
        db: &Db<E::Table>,
        expressions: Expressions,
        operation: O,
        reads: Reads,
    ) -> Request<E::Table, O> {
        Request {
            db: db.clone(),
            expressions,
            consistent: false,
            operation,
            reads,
        }
    }
}

impl<E: Entity> Job<E> {
    /// The migration's changes, as each item takes them.
    fn changes(&self) -> Changes<'_, E> {
        Changes {
            name: &self.name,
            steps: &self.steps,
            marker: self.marker,
        }
    }

    async fn migrate_item(
        &self,
        mut item: Item,
        shared: &Shared,
        counts: &mut Progress,
    ) -> Result<Outcome, Error> {
        for _ in 0..MAX_CONFLICTS_PER_ITEM {
            if !is_ours::<E>(&item) {
                return Ok(Outcome::Other);
            }
            let changes = self.changes();
            if self.marker && changes.holds_marker(&item) {
                return Ok(Outcome::Already);
            }
            let changed = match changes.apply(&item) {
                Ok(Some(changed)) => changed,
                Ok(None) => return Ok(Outcome::Unchanged),
                Err(e) => return Ok(Outcome::Failed(e)),
            };
            if self.dry_run {
                let mut sample = lock(&shared.sample);
                if sample.len() < KEEP
                    && let Some(key) =
                        crate::schema::raw_key_of(&<E::Table as Table>::SCHEMA, &item)
                {
                    sample.push(plan(key, &item, &changed));
                }
                return Ok(Outcome::Changed);
            }
            pace(shared.writes.as_ref()).await;
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
                    spend(shared.writes.as_ref(), units).await;
                    counts.write_units += units;
                    return Ok(Outcome::Changed);
                }
                Written::Conflict(now) => {
                    match now {
                        None => return Ok(Outcome::Vanished),
                        // This very write, applied by an attempt whose response was
                        // lost (the SDK sent it again and its condition failed).
                        Some(now) if same_item(&now, &changed) => return Ok(Outcome::Changed),
                        Some(now) => {
                            counts.conflicts += 1;
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
        let CheckedUpdate {
            key,
            update,
            condition,
            placeholders: p,
        } = match checked_update::<E>(read, changed) {
            Ok(checked) => checked,
            Err(too_large) => return Ok(Written::TooLarge(too_large)),
        };
        let (names, values) = p.finish();
        let operation = crate::call::Operation::UpdateItem;
        let sending = Sending::write(
            db,
            operation,
            Policy::CONDITIONAL,
            E::ENTITY_TYPE,
            Some(&key),
            None,
        );
        let request = db
            .client()
            .update_item()
            .table_name(db.table_name())
            .set_key(Some(key))
            .update_expression(update)
            .condition_expression(condition)
            .set_expression_attribute_names(names)
            .set_expression_attribute_values(values)
            .return_consumed_capacity(ReturnConsumedCapacity::Total)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        let sent = sending.send(exec!(sending, request)).await;
        match sent {
            Ok(out) => Ok(Written::Done(out.consumed_units())),
            Err(e) => match e.into_service_error() {
                UpdateItemError::ConditionalCheckFailedException(failed) => {
                    let now = match failed.item {
                        Some(item) if !item.is_empty() => Some(item),
                        // Not returned (DynamoDB Local may leave it out): read it.
                        _ => self.read_again(read).await?,
                    };
                    Ok(Written::Conflict(now))
                }
                // DynamoDB refused this item's request (its size, an expression
                // limit): the item is reported and the migration goes on.
                other if other.code() == Some("ValidationException") => Ok(Written::Refused(
                    Error::service("UpdateItem", db.table_name(), other),
                )),
                other => Err(Error::service("UpdateItem", db.table_name(), other)),
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
        crate::item::ambiguous::read_consistent(db, key).await
    }
}
/// The update of one item by a migration, conditioned on the item being as it was read.
struct CheckedUpdate {
    key: HashMap<String, AttributeValue>,
    update: String,
    condition: String,
    placeholders: Placeholders,
}

/// The update turning `read` into `changed` and its condition (see [`unchanged`]), or
/// why DynamoDB could not take them in one request.
fn checked_update<E: Entity>(read: &Item, changed: &Item) -> Result<CheckedUpdate, String> {
    let schema = &<E::Table as Table>::SCHEMA;
    let is_key = |name: &str| name == schema.pk.name || schema.sk.is_some_and(|a| a.name == name);
    let mut p = Placeholders::default();
    // Update: only what the change sets or removes, so that an attribute another writer
    // added after the read survives.
    let (mut set, removed) = diff(read, changed);
    set.retain(|(name, _)| !is_key(name));
    let mut actions = UpdateClauses::default();
    for (name, value) in &set {
        actions.set(p.name(name), p.value((*value).clone()));
    }
    for name in removed {
        actions.remove(p.name(name));
    }
    let update_operators = actions.len();
    let update = actions.render();
    let sets: Vec<&str> = set.iter().map(|(name, _)| name.as_str()).collect();
    let clauses = unchanged::<E>(read, &sets, &mut p);
    let condition = clauses.join(" AND ");
    // DynamoDB refuses an expression over 4 KB or with more than 300 operators: an item
    // with that many attributes cannot be checked (or changed) attribute by attribute in
    // one request.
    if !expression_fits(&clauses, " AND ") {
        return Err(format!(
            "checking it unchanged takes {} conditions ({} bytes; DynamoDB allows {MAX_OPERATORS} operators and {MAX_EXPRESSION_BYTES} bytes)",
            clauses.len(),
            condition.len()
        ));
    }
    if update.len() > MAX_EXPRESSION_BYTES || update_operators > MAX_OPERATORS {
        return Err(format!(
            "the change sets or removes {update_operators} attributes ({} bytes; DynamoDB allows {MAX_OPERATORS} operators and {MAX_EXPRESSION_BYTES} bytes)",
            update.len()
        ));
    }
    let key = read
        .iter()
        .filter(|(name, _)| is_key(name))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    Ok(CheckedUpdate {
        key,
        update,
        condition,
        placeholders: p,
    })
}

/// The clauses of the condition that the item is as `read`: every attribute as read, and
/// absent what the read did not have but the write `sets`, and the crate's write token and
/// marker (which every other single-item write of the crate adds).
fn unchanged<E: Entity>(read: &Item, sets: &[&str], p: &mut Placeholders) -> Vec<String> {
    let schema = &<E::Table as Table>::SCHEMA;
    let mut clauses: Vec<String> = Vec::with_capacity(read.len() + 4);
    let mut present: Vec<&String> = read.keys().collect();
    present.sort();
    for name in present {
        let path = p.name(name);
        let value = p.value(read[name].clone());
        clauses.push(format!("{path} = {value}"));
    }
    let mut absent: std::collections::BTreeSet<&str> = sets
        .iter()
        .copied()
        .chain([schema.write_token, MIGRATIONS_ATTRIBUTE])
        .collect();
    absent.retain(|name| !read.contains_key(*name));
    for name in &absent {
        let path = p.name(name);
        clauses.push(format!("attribute_not_exists({path})"));
    }
    // Where it fits, also absent the entity's other attributes (older names included): a
    // batch or transaction write that adds one meanwhile then counts as a change too, and
    // a map runs again on the item as it is now. An item too wide for that is still
    // checked attribute by attribute on what was read.
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
        (*p, clauses) = (watched, watching);
    }
    clauses
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
