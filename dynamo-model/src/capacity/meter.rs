//! [`Meter`]: the capacity of every request a [`Db`](dynamo_model::Db) sends, as DynamoDB reported it and
//! as the crate estimates it from the items involved.

use super::{batch_get_units, read_units, transactional, write_units};
use crate::{Item, item_size};
use aws_sdk_dynamodb::config::interceptors::{
    BeforeSerializationInterceptorContextMut, FinalizerInterceptorContextRef,
};
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::error::BoxError;
use aws_sdk_dynamodb::operation::{
    batch_get_item::{BatchGetItemInput, BatchGetItemOutput},
    batch_write_item::{BatchWriteItemInput, BatchWriteItemOutput},
    delete_item::{DeleteItemInput, DeleteItemOutput},
    get_item::{GetItemInput, GetItemOutput},
    put_item::{PutItemInput, PutItemOutput},
    query::{QueryInput, QueryOutput},
    scan::{ScanInput, ScanOutput},
    transact_get_items::{TransactGetItemsInput, TransactGetItemsOutput},
    transact_write_items::{TransactWriteItemsInput, TransactWriteItemsOutput},
    update_item::{UpdateItemInput, UpdateItemOutput},
};
use aws_sdk_dynamodb::types::{ConsumedCapacity, ReturnConsumedCapacity, ReturnValue};
use aws_smithy_types::config_bag::{Storable, StoreReplace};
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

/// What a call asked for, kept from its input (gone once serialized) for its output.
#[derive(Debug, Clone)]
struct Asked {
    operation: &'static str,
    units: Units,
    /// Strongly consistent reads (`GetItem`, `Query`, `Scan`).
    consistent: bool,
    /// The item a put wrote, or the items a batch or transaction put; `None` when the
    /// call also deletes, updates or checks items, whose sizes the client does not know.
    written: Option<f64>,
    /// The returned item is the whole item (`ALL_NEW` / `ALL_OLD`).
    whole_item_returned: bool,
    /// Keys a `BatchGetItem` or a `TransactGetItems` asked for.
    keys: usize,
    /// A read of some attributes only (a projection, `AttributesToGet`, `Select`): it
    /// costs by the whole items, which the client does not see.
    projected: bool,
}

impl Storable for Asked {
    type Storer = StoreReplace<Asked>;
}

/// The interceptor behind [`Db::metered`](dynamo_model::Db::metered).
#[derive(Debug)]
pub(crate) struct Metering(pub(crate) Meter);

/// Asks for `INDEXES` unless the caller chose a value.
pub(crate) fn total(current: &mut Option<ReturnConsumedCapacity>) {
    if current.is_none() {
        *current = Some(ReturnConsumedCapacity::Indexes);
    }
}

fn asked(operation: &'static str, units: Units) -> Asked {
    Asked {
        operation,
        units,
        consistent: false,
        written: None,
        whole_item_returned: false,
        keys: 0,
        projected: false,
    }
}

/// A `Select` that reads part of each item (`COUNT`, `SPECIFIC_ATTRIBUTES`).
fn partial(select: Option<&aws_sdk_dynamodb::types::Select>) -> bool {
    use aws_sdk_dynamodb::types::Select;
    matches!(select, Some(Select::Count | Select::SpecificAttributes))
}

fn whole(rv: Option<&ReturnValue>) -> bool {
    matches!(rv, Some(ReturnValue::AllNew | ReturnValue::AllOld))
}

/// The sum, unless a term is unknown (`0.0` for none: `f64`'s `Sum` starts at `-0.0`).
fn add(terms: impl IntoIterator<Item = Option<f64>>) -> Option<f64> {
    terms
        .into_iter()
        .try_fold(0.0, |sum, term| term.map(|t| sum + t))
}

/// The write units of putting each of `items` (`None` stands for a write of unknown
/// size).
fn puts<'a>(items: impl IntoIterator<Item = Option<&'a Item>>) -> Option<f64> {
    add(items
        .into_iter()
        .map(|item| item.map(|i| write_units(item_size(i)))))
}

/// The reported units in all, and the base table's part.
type Reported = (Option<f64>, Option<f64>);

fn sum(capacity: Option<&[ConsumedCapacity]>) -> Reported {
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

fn one(capacity: Option<&ConsumedCapacity>) -> Reported {
    (
        capacity.and_then(|c| c.capacity_units),
        capacity
            .and_then(|c| c.table.as_ref())
            .and_then(|t| t.capacity_units),
    )
}

/// What a Query or a Scan input (the same fields on two types) asks: a read of pages,
/// projected by an expression, the legacy attribute list or `Select`.
macro_rules! paged_read {
    ($input:ident, $operation:literal) => {{
        total(&mut $input.return_consumed_capacity);
        Asked {
            consistent: $input.consistent_read == Some(true),
            projected: $input.projection_expression.is_some()
                || $input.attributes_to_get.is_some()
                || partial($input.select.as_ref()),
            ..asked($operation, Units::Read)
        }
    }};
}

impl Intercept for Metering {
    fn name(&self) -> &'static str {
        "dynamo_model::capacity::Meter"
    }

    fn modify_before_serialization(
        &self,
        context: &mut BeforeSerializationInterceptorContextMut<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let input = context.input_mut();
        let asked = if let Some(i) = input.downcast_mut::<GetItemInput>() {
            total(&mut i.return_consumed_capacity);
            Asked {
                consistent: i.consistent_read == Some(true),
                projected: i.projection_expression.is_some() || i.attributes_to_get.is_some(),
                ..asked("GetItem", Units::Read)
            }
        } else if let Some(i) = input.downcast_mut::<PutItemInput>() {
            total(&mut i.return_consumed_capacity);
            Asked {
                written: puts([i.item.as_ref()]),
                ..asked("PutItem", Units::Write)
            }
        } else if let Some(i) = input.downcast_mut::<UpdateItemInput>() {
            total(&mut i.return_consumed_capacity);
            Asked {
                whole_item_returned: whole(i.return_values.as_ref()),
                ..asked("UpdateItem", Units::Write)
            }
        } else if let Some(i) = input.downcast_mut::<DeleteItemInput>() {
            total(&mut i.return_consumed_capacity);
            Asked {
                whole_item_returned: whole(i.return_values.as_ref()),
                ..asked("DeleteItem", Units::Write)
            }
        } else if let Some(i) = input.downcast_mut::<QueryInput>() {
            paged_read!(i, "Query")
        } else if let Some(i) = input.downcast_mut::<ScanInput>() {
            paged_read!(i, "Scan")
        } else if let Some(i) = input.downcast_mut::<BatchGetItemInput>() {
            total(&mut i.return_consumed_capacity);
            let tables = i.request_items.iter().flat_map(|m| m.values());
            let mut keys = 0;
            let mut consistent = true;
            for t in tables {
                keys += t.keys.len();
                consistent &= t.consistent_read == Some(true);
            }
            Asked {
                keys,
                consistent,
                ..asked("BatchGetItem", Units::Read)
            }
        } else if let Some(i) = input.downcast_mut::<BatchWriteItemInput>() {
            total(&mut i.return_consumed_capacity);
            let requests = i.request_items.iter().flat_map(|m| m.values()).flatten();
            Asked {
                written: puts(requests.map(|r| r.put_request.as_ref().map(|p| &p.item))),
                ..asked("BatchWriteItem", Units::Write)
            }
        } else if let Some(i) = input.downcast_mut::<TransactWriteItemsInput>() {
            total(&mut i.return_consumed_capacity);
            let items = i.transact_items.iter().flatten();
            Asked {
                written: puts(items.map(|t| t.put.as_ref().map(|p| &p.item))).map(transactional),
                ..asked("TransactWriteItems", Units::Write)
            }
        } else if let Some(i) = input.downcast_mut::<TransactGetItemsInput>() {
            total(&mut i.return_consumed_capacity);
            Asked {
                keys: i.transact_items.as_ref().map_or(0, Vec::len),
                ..asked("TransactGetItems", Units::Read)
            }
        } else {
            // Table management and other calls: not metered.
            return Ok(());
        };
        cfg.interceptor_state().store_put(asked);
        Ok(())
    }

    fn read_after_execution(
        &self,
        context: &FinalizerInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let Some(asked) = cfg.load::<Asked>().cloned() else {
            return Ok(());
        };
        let output = match context.output_or_error() {
            Some(Ok(output)) => Some(output),
            _ => None,
        };
        let (estimated, (consumed, consumed_by_table)) = match output {
            None => (None, (None, None)),
            Some(out) => estimate(&asked, out),
        };
        let (items_read, items_returned) = output.map_or((None, None), |out| items(&asked, out));
        self.0.record(Charge {
            operation: asked.operation,
            units: asked.units,
            estimated: estimated.filter(|_| !asked.projected),
            succeeded: output.is_some(),
            consumed,
            consumed_by_table,
            items_read,
            items_returned,
        });
        Ok(())
    }
}

/// The estimated and reported units of a call's output.
fn estimate(
    asked: &Asked,
    out: &aws_smithy_runtime_api::client::interceptors::context::Output,
) -> (Option<f64>, Reported) {
    let size = |item: Option<&Item>| item.map_or(0, item_size);
    if let Some(o) = out.downcast_ref::<GetItemOutput>() {
        let units = read_units(size(o.item.as_ref()), asked.consistent);
        (Some(units), one(o.consumed_capacity.as_ref()))
    } else if let Some(o) = out.downcast_ref::<PutItemOutput>() {
        // A put that returned the item it replaced costs by the larger of the two.
        let old = o.attributes.as_ref().map(|a| write_units(item_size(a)));
        let units = asked.written.map(|new| old.map_or(new, |old| new.max(old)));
        (units, one(o.consumed_capacity.as_ref()))
    } else if let Some(o) = out.downcast_ref::<UpdateItemOutput>() {
        let units = asked
            .whole_item_returned
            .then(|| write_units(size(o.attributes.as_ref())));
        (units, one(o.consumed_capacity.as_ref()))
    } else if let Some(o) = out.downcast_ref::<DeleteItemOutput>() {
        // No item returned with ALL_OLD: there was none, which costs one unit.
        let units = asked
            .whole_item_returned
            .then(|| write_units(size(o.attributes.as_ref())));
        (units, one(o.consumed_capacity.as_ref()))
    } else if let Some(o) = out.downcast_ref::<QueryOutput>() {
        let bytes = o.items.iter().flatten().map(item_size).sum();
        (
            Some(read_units(bytes, asked.consistent)),
            one(o.consumed_capacity.as_ref()),
        )
    } else if let Some(o) = out.downcast_ref::<ScanOutput>() {
        let bytes = o.items.iter().flatten().map(item_size).sum();
        (
            Some(read_units(bytes, asked.consistent)),
            one(o.consumed_capacity.as_ref()),
        )
    } else if let Some(o) = out.downcast_ref::<BatchGetItemOutput>() {
        let found: Vec<usize> = o
            .responses
            .iter()
            .flat_map(|m| m.values())
            .flatten()
            .map(item_size)
            .collect();
        let unprocessed: usize = o
            .unprocessed_keys
            .iter()
            .flat_map(|m| m.values())
            .map(|k| k.keys.len())
            .sum();
        let missing = asked.keys.saturating_sub(found.len() + unprocessed);
        (
            Some(batch_get_units(found, missing, asked.consistent)),
            sum(o.consumed_capacity.as_deref()),
        )
    } else if let Some(o) = out.downcast_ref::<BatchWriteItemOutput>() {
        // The puts written: those sent minus those returned unprocessed.
        let unprocessed = o
            .unprocessed_items
            .iter()
            .flat_map(|m| m.values())
            .flatten();
        let not_written = puts(unprocessed.map(|r| r.put_request.as_ref().map(|p| &p.item)));
        let units = asked
            .written
            .zip(not_written)
            .map(|(sent, left)| sent - left);
        (units, sum(o.consumed_capacity.as_deref()))
    } else if let Some(o) = out.downcast_ref::<TransactWriteItemsOutput>() {
        (asked.written, sum(o.consumed_capacity.as_deref()))
    } else if let Some(o) = out.downcast_ref::<TransactGetItemsOutput>() {
        let units = o
            .responses
            .iter()
            .flatten()
            .map(|r| transactional(read_units(size(r.item.as_ref()), true)))
            .fold(0.0, |a, b| a + b);
        (Some(units), sum(o.consumed_capacity.as_deref()))
    } else {
        (None, (None, None))
    }
}

/// The items a read's output says it read and returned (see [`Charge::items_read`]);
/// `(None, None)` for a write.
fn items(
    asked: &Asked,
    out: &aws_smithy_runtime_api::client::interceptors::context::Output,
) -> (Option<u64>, Option<u64>) {
    // DynamoDB's counts are never negative; a negative one would be a malformed response.
    let count = |n: i32| u64::try_from(n).unwrap_or(0);
    let (read, returned) = if let Some(o) = out.downcast_ref::<GetItemOutput>() {
        (1, u64::from(o.item.is_some()))
    } else if let Some(o) = out.downcast_ref::<QueryOutput>() {
        (count(o.scanned_count), count(o.count))
    } else if let Some(o) = out.downcast_ref::<ScanOutput>() {
        (count(o.scanned_count), count(o.count))
    } else if let Some(o) = out.downcast_ref::<BatchGetItemOutput>() {
        let found = o
            .responses
            .iter()
            .flat_map(|m| m.values())
            .flatten()
            .count();
        let unprocessed: usize = o
            .unprocessed_keys
            .iter()
            .flat_map(|m| m.values())
            .map(|k| k.keys.len())
            .sum();
        (asked.keys.saturating_sub(unprocessed) as u64, found as u64)
    } else if let Some(o) = out.downcast_ref::<TransactGetItemsOutput>() {
        let found = o.responses.iter().flatten().filter(|r| r.item.is_some());
        (asked.keys as u64, found.count() as u64)
    } else {
        return (None, None);
    };
    (Some(read), Some(returned))
}
