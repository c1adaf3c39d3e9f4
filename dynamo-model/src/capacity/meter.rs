//! [`Meter`]: the capacity of every request a [`Db`](dynamo_model::Db) sends, as DynamoDB reported it and
//! as the crate estimates it from the items involved.

use super::{batch_get_units, read_units, transactional, write_units};
use crate::call::{Action, Answer, Call, Observer, Operation, Outcome, Returned};
use crate::{Item, item_size};
use aws_sdk_dynamodb::types::ConsumedCapacity;
use std::sync::{Arc, Mutex, PoisonError};

/// Read or write units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Units {
    /// Read capacity units (`GetItem`, `BatchGetItem`, `Query`, `Scan`,
    /// `TransactGetItems`).
    Read,
    /// Write capacity units (`PutItem`, `UpdateItem`, `DeleteItem`, `BatchWriteItem`,
    /// `TransactWriteItems`).
    Write,
}

/// The capacity of one DynamoDB call, recorded by a [`Meter`]. DynamoDB reports the
/// capacity of the attempt that answered: an earlier attempt of a retried call (applied,
/// then answered with a 500 or lost) is not counted.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Charge {
    /// The DynamoDB API call, e.g. `PutItem`.
    pub operation: &'static str,
    /// Whether the units are read or write units.
    pub units: Units,
    /// What the call cost by DynamoDB's rules, computed from the sizes of the items it
    /// read or wrote (see [`crate::capacity`]). `None` where the client cannot know them:
    /// an update or a delete that returned no whole item, a batch or transaction with
    /// deletes, updates or condition checks (they cost by the size of items the client
    /// never sees), a read with a projection or `Select` (DynamoDB charges the whole
    /// items), a failed call. A write costs by the larger of the item before and after:
    /// a put or an update that made an item smaller is estimated by the new item. A scan's
    /// estimate counts the items it returned, not those its filter dropped.
    pub estimated: Option<f64>,
    /// Whether the call succeeded. A failed call has no figures (DynamoDB reports none),
    /// though a write refused by its condition still consumed write units.
    pub succeeded: bool,
    /// What DynamoDB reported in all (`ConsumedCapacity`): the table and its indexes.
    /// `None` for a call that failed or whose response had none.
    pub consumed: Option<f64>,
    /// The part of [`consumed`](Self::consumed) charged to the base table: a write also
    /// writes every index the item is in (each at the size of its projection), which the
    /// estimate leaves out; compare write estimates with this. `None` for a read of an
    /// index, a failed call, or a response without the breakdown.
    pub consumed_by_table: Option<f64>,
    /// The items DynamoDB read to answer a read, each of which it charged for: what a
    /// `Query` or a `Scan` evaluated (`ScannedCount`, before its filter), 1 for a
    /// `GetItem`, the keys a `BatchGetItem` or a `TransactGetItems` asked for (less
    /// those a batch returned unprocessed; a key without an item counts, as it costs).
    /// `None` for a write or a failed call.
    pub items_read: Option<u64>,
    /// The items a read returned: the matches of a `Query` or a `Scan` (`Count`, after
    /// its filter; a `Select::Count` read counts them without returning them), 1 or 0
    /// for a `GetItem`, the items found by a `BatchGetItem` or a `TransactGetItems`.
    /// `items_read - items_returned` is what the read paid for and dropped: items a
    /// filter discarded, keys without an item. `None` for a write or a failed call.
    pub items_returned: Option<u64>,
}

/// Records the capacity of every call sent through a [`Db`](dynamo_model::Db) made with
/// [`Db::metered`](dynamo_model::Db::metered):
/// DynamoDB's `ConsumedCapacity` next to the crate's estimate, per call. It covers every
/// operation, including the several calls one operation of the crate may make (a chunked
/// put: a read, batch writes of chunks, the item; a batch of 1,000 keys).
///
/// ```no_run
/// # use dynamo_model::{Db, Entity, Table, capacity::Meter};
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE")]
/// # struct User { id: String, name: String }
/// # async fn demo(db: Db<App>) -> Result<(), dynamo_model::Error> {
/// let meter = Meter::new();
/// let metered = db.metered(&meter);
/// metered.put(&User { id: "u-1".into(), name: "Ann".into() }).await?;
/// let _user = metered.get(User::key("u-1")).await?;
/// for charge in meter.charges() {
///     println!("{}: {:?} estimated, {:?} consumed", charge.operation, charge.estimated, charge.consumed);
/// }
/// println!("{} units in all", meter.consumed());
/// # Ok(()) }
/// ```
///
/// Metering asks DynamoDB for `ReturnConsumedCapacity=INDEXES` (the total, and its
/// breakdown by table and index) on calls that did not ask for it: a few bytes more per
/// response. A call that asked for `TOTAL` keeps it (and has no breakdown).
///
/// A meter keeps running totals of every call, and the records of the most recent ones
/// (10,000 by default, [`Meter::with_history`]), so one attached to a long-running
/// service stays small. Clones share their records.
#[derive(Debug, Clone)]
pub struct Meter {
    inner: Arc<Mutex<Records>>,
}

impl Default for Meter {
    fn default() -> Self {
        Meter::with_history(10_000)
    }
}

#[derive(Debug, Default)]
struct Records {
    recent: std::collections::VecDeque<Charge>,
    history: usize,
    /// Consumed units by kind, over every call recorded.
    consumed: [f64; 2],
    calls: u64,
}

fn slot(units: Units) -> usize {
    match units {
        Units::Read => 0,
        Units::Write => 1,
    }
}

impl Meter {
    /// A meter keeping the records of the last 10,000 calls.
    pub fn new() -> Self {
        Meter::default()
    }

    /// A meter keeping the records of the last `calls` calls (totals cover all of them).
    pub fn with_history(calls: usize) -> Self {
        Meter {
            inner: Arc::new(Mutex::new(Records {
                history: calls,
                ..Records::default()
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Records> {
        // A panic while pushing a record leaves the records whole: keep using them.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The recorded calls still kept, in the order they completed.
    pub fn charges(&self) -> Vec<Charge> {
        self.lock().recent.iter().cloned().collect()
    }

    /// Takes the kept records and resets the totals (to measure one operation after
    /// another).
    pub fn take(&self) -> Vec<Charge> {
        let mut records = self.lock();
        records.consumed = [0.0; 2];
        records.calls = 0;
        records.recent.drain(..).collect()
    }

    /// Calls recorded since the meter was made (or last [`take`](Self::take)n).
    pub fn calls(&self) -> u64 {
        self.lock().calls
    }

    /// The units DynamoDB reported, over every call since the meter was made (or last
    /// taken): read and write units together, indexes included.
    pub fn consumed(&self) -> f64 {
        let records = self.lock();
        records.consumed[0] + records.consumed[1]
    }

    /// The read or the write units DynamoDB reported (as [`consumed`](Self::consumed)).
    pub fn consumed_units(&self, units: Units) -> f64 {
        self.lock().consumed[slot(units)]
    }

    /// The estimated units of the kept records of calls that succeeded; `None` when one
    /// of them has no estimate (see [`Charge::estimated`]).
    pub fn estimated(&self) -> Option<f64> {
        add(self
            .lock()
            .recent
            .iter()
            .filter(|c| c.succeeded)
            .map(|c| c.estimated))
    }

    pub(super) fn record(&self, charge: Charge) {
        let mut records = self.lock();
        records.calls += 1;
        records.consumed[slot(charge.units)] += charge.consumed.unwrap_or(0.0);
        if records.history == 0 {
            return;
        }
        if records.recent.len() == records.history {
            records.recent.pop_front();
        }
        records.recent.push_back(charge);
    }
}

/// The observer behind [`Db::metered`](dynamo_model::Db::metered).
#[derive(Debug)]
pub(crate) struct Metering(pub(crate) Meter);

/// The sum, unless a term is unknown (`0.0` for none: `f64`'s `Sum` starts at `-0.0`).
fn add(terms: impl IntoIterator<Item = Option<f64>>) -> Option<f64> {
    terms
        .into_iter()
        .try_fold(0.0, |sum, term| term.map(|t| sum + t))
}

/// The write units of the items a call puts, if it only puts (a delete, an update or a
/// check costs by the size of an item the client never sees).
fn written(call: &Call) -> Option<f64> {
    let puts = add(call.targets.iter().map(|t| match t.action {
        Action::Put => t.size.map(write_units),
        _ => None,
    }));
    match call.operation {
        Operation::TransactWriteItems => puts.map(transactional),
        _ => puts,
    }
}

/// The reported units in all, and the base table's part.
type Reported = (Option<f64>, Option<f64>);

fn reported(capacity: Option<&[ConsumedCapacity]>) -> Reported {
    let Some(list) = capacity else {
        return (None, None);
    };
    (
        add(list.iter().map(|c| c.capacity_units)),
        add(list
            .iter()
            .map(|c| c.table.as_ref().and_then(|t| t.capacity_units))),
    )
}

impl Observer for Metering {
    fn wants_capacity(&self) -> bool {
        true
    }

    fn after(&self, call: &Call, outcome: &Outcome<'_>) {
        if call.operation == Operation::Statement {
            // PartiQL: not metered.
            return;
        }
        let answer = match outcome {
            Outcome::Answered(answer) => Some(answer),
            Outcome::Refused | Outcome::Failed => None,
        };
        let (estimated, (consumed, consumed_by_table)) = match answer {
            None => (None, (None, None)),
            Some(answer) => (estimate(call, answer), reported(answer.consumed)),
        };
        let (items_read, items_returned) = answer.map_or((None, None), |a| items(call, a));
        self.0.record(Charge {
            operation: call.operation.name(),
            units: if call.operation.reads() {
                Units::Read
            } else {
                Units::Write
            },
            estimated: estimated.filter(|_| !call.projected),
            succeeded: answer.is_some(),
            consumed,
            consumed_by_table,
            items_read,
            items_returned,
        });
    }
}

/// The units a call cost by the capacity rules, from what it asked and what came back.
fn estimate(call: &Call, answer: &Answer<'_>) -> Option<f64> {
    let size = |item: Option<&Item>| item.map_or(0, item_size);
    match (&answer.returned, call.operation) {
        (Returned::One(item), Operation::GetItem) => Some(read_units(size(*item), call.consistent)),
        // A put that returned the item it replaced costs by the larger of the two.
        (Returned::One(old), Operation::PutItem) => {
            let old = old.map(|a| write_units(item_size(a)));
            written(call).map(|new| old.map_or(new, |old| new.max(old)))
        }
        // No item returned with ALL_OLD: there was none, which costs one unit.
        (Returned::One(item), _) => call.returns_item.then(|| write_units(size(*item))),
        (Returned::Items { items, .. }, _) => {
            let bytes = items.iter().map(item_size).sum();
            Some(read_units(bytes, call.consistent))
        }
        (Returned::Found { items, unprocessed }, _) => {
            let found: Vec<usize> = items.iter().map(|(_, i)| item_size(i)).collect();
            let missing = call.keys.saturating_sub(found.len() + unprocessed);
            Some(batch_get_units(found, missing, call.consistent))
        }
        (Returned::Each(items), _) => Some(
            items
                .iter()
                .map(|item| transactional(read_units(size(*item), true)))
                .fold(0.0, |a, b| a + b),
        ),
        // The puts written: those sent minus those returned unprocessed.
        (Returned::Unprocessed(left), _) => {
            let not_written = add(left
                .iter()
                .map(|item| item.map(|i| write_units(item_size(i)))));
            written(call)
                .zip(not_written)
                .map(|(sent, left)| sent - left)
        }
        (Returned::Nothing, Operation::TransactWriteItems) => written(call),
        (Returned::Nothing, _) => None,
    }
}

/// The items a read's answer says it read and returned (see [`Charge::items_read`]);
/// `(None, None)` for a write.
fn items(call: &Call, answer: &Answer<'_>) -> (Option<u64>, Option<u64>) {
    let (read, returned) = match &answer.returned {
        Returned::One(item) if call.operation == Operation::GetItem => {
            (1, u64::from(item.is_some()))
        }
        Returned::Items { scanned, count, .. } => (*scanned, *count),
        Returned::Found { items, unprocessed } => (
            call.keys.saturating_sub(*unprocessed) as u64,
            items.len() as u64,
        ),
        Returned::Each(items) => (
            call.keys as u64,
            items.iter().filter(|i| i.is_some()).count() as u64,
        ),
        _ => return (None, None),
    };
    (Some(read), Some(returned))
}
