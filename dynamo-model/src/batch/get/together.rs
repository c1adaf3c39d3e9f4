//! Batch gets of several tables sent together ([`BatchGet::and`]): the keys of every
//! batch read in shared `BatchGetItem` calls (each call names every table it reads), one
//! deadline and one concurrency for all, and each batch's keys reported in its own output.

use super::read::{GetTable, TablesRead};
use super::{BatchGet, BatchGetOutput, Part};
use crate::collection::Target;
use crate::request::Customize;
use crate::{Error, RawKey, ValidationReason};
use aws_sdk_dynamodb::config::Region;
use aws_sdk_dynamodb::operation::batch_get_item::BatchGetItemInput;
use aws_sdk_dynamodb::operation::batch_get_item::builders::BatchGetItemFluentBuilder;

/// Batch gets of several tables, sent as one batch (see [`BatchGet::and`]): `T`'s batch
/// first, then the batches of `P`. Awaited, it gives `T`'s output and `P`'s outputs.
#[must_use = "a batch does nothing until it is sent or awaited"]
pub struct BatchGets<T: Target, P: Parts> {
    first: BatchGet<T>,
    rest: P,
}

/// The batch gets sent after the first of a [`BatchGets`]: a [`BatchGet`], a pair of
/// them (nested as `and` nests them), or a `Vec` of them (the period tables of a week, for
/// example). Implemented by the crate only.
pub trait Parts: Send + 'static + sealed::Sealed {
    /// The outputs of the batches: a [`BatchGetOutput`], a pair or a `Vec` of them.
    type Output: Send + 'static;
    #[doc(hidden)]
    fn plan(&mut self, plan: &mut sealed::Plan) -> Result<(), Error>;
    #[doc(hidden)]
    fn finish(&self, read: &mut sealed::Split) -> Result<Self::Output, Error>;
}

mod sealed {
    use super::*;

    pub trait Sealed {}

    /// The tables and keys of the batches, in their order.
    #[derive(Default)]
    pub struct Plan {
        pub(super) tables: Vec<GetTable>,
        pub(super) keys: Vec<(usize, RawKey)>,
        pub(super) customize: Vec<Customize<BatchGetItemFluentBuilder>>,
        pub(super) region: Option<Region>,
    }

    /// What was read, handed to the batches table by table, in the plan's order.
    pub struct Split {
        pub(super) read: TablesRead,
        pub(super) tables: Vec<GetTable>,
        pub(super) next: usize,
    }
}
use sealed::{Plan, Split};

impl<T: Target> sealed::Sealed for BatchGet<T> {}
impl<P: Parts, Q: Parts> sealed::Sealed for (P, Q) {}
impl<P: Parts> sealed::Sealed for Vec<P> {}

impl<T: Target> Parts for BatchGet<T> {
    type Output = BatchGetOutput<T>;

    fn plan(&mut self, plan: &mut Plan) -> Result<(), Error> {
        let refuse = |message: String| {
            Err(Error::invalid_request(
                "BatchGetItem",
                ValidationReason::InvalidOption,
                message,
            ))
        };
        let region = self.db.client().config().region().cloned();
        if plan.tables.is_empty() {
            plan.region = region;
        } else if plan.region != region {
            return refuse(format!(
                "the batch get of table {} reaches DynamoDB in region {}, the first batch in {}: one batch reads in one account and region",
                self.db.table_name(),
                region.as_ref().map_or("(none)", |r| r.as_ref()),
                plan.region.as_ref().map_or("(none)", |r| r.as_ref()),
            ));
        }
        if plan.tables.iter().any(|t| *t.name == *self.db.table_name()) {
            return refuse(format!(
                "two batch gets of table {}: read both targets with one batch of a collection",
                self.db.table_name()
            ));
        }
        let unique = self.unique_keys()?;
        let start = plan.keys.len();
        plan.tables.push(self.table(start..start + unique.len()));
        plan.keys.extend((start..).zip(unique));
        plan.customize.push(self.customize.clone());
        Ok(())
    }

    fn finish(&self, split: &mut Split) -> Result<BatchGetOutput<T>, Error> {
        self.output(split.next_part())
    }
}

impl<P: Parts, Q: Parts> Parts for (P, Q) {
    type Output = (P::Output, Q::Output);

    fn plan(&mut self, plan: &mut Plan) -> Result<(), Error> {
        self.0.plan(plan)?;
        self.1.plan(plan)
    }

    fn finish(&self, split: &mut Split) -> Result<Self::Output, Error> {
        Ok((self.0.finish(split)?, self.1.finish(split)?))
    }
}

impl<P: Parts> Parts for Vec<P> {
    type Output = Vec<P::Output>;

    fn plan(&mut self, plan: &mut Plan) -> Result<(), Error> {
        self.iter_mut().try_for_each(|p| p.plan(plan))
    }

    fn finish(&self, split: &mut Split) -> Result<Self::Output, Error> {
        self.iter().map(|p| p.finish(split)).collect()
    }
}

impl Split {
    /// What was read of the next table's keys (and, for the first table, the items and
    /// keys no table asked for: a hook changed the keys).
    fn next_part(&mut self) -> Part {
        let index = self.next;
        self.next += 1;
        let Some(table) = self.tables.get(index) else {
            return Part::default();
        };
        let ours = |position: &usize| {
            table.positions.contains(position) || (index == 0 && *position == usize::MAX)
        };
        let read = &mut self.read;
        let found = take_where(&mut read.found, ours);
        let not_found = take_where(&mut read.not_found, ours);
        let unprocessed = take_where(&mut read.unprocessed, ours);
        let (failed, others) = std::mem::take(&mut read.failed)
            .into_iter()
            .partition(|(t, _, _)| *t == index);
        read.failed = others;
        Part {
            found,
            not_found,
            unprocessed: unprocessed.into_iter().map(|(_, k)| k).collect(),
            failed: failed.into_iter().map(|(_, k, e)| (k, e)).collect(),
            consumed: read.consumed.get(index).copied().unwrap_or(0.0),
        }
    }
}

/// Moves the entries whose position `ours` accepts out of `from`, in their order.
fn take_where<V>(from: &mut Vec<(usize, V)>, ours: impl Fn(&usize) -> bool) -> Vec<(usize, V)> {
    let (mine, others) = std::mem::take(from).into_iter().partition(|(p, _)| ours(p));
    *from = others;
    mine
}

impl<T: Target> BatchGet<T> {
    /// Sends this batch together with `other` (a [`BatchGet`] of another table, of any
    /// table type, or of another period table; a pair or a `Vec` of them): each
    /// `BatchGetItem` call reads up to 100 keys of any of the tables, so that a few keys
    /// of each table cost one call instead of one per table. Every batch keeps its own
    /// options (consistency, order, unknown entity types, hooks applied to every call)
    /// and its own output; the deadline and concurrency are this batch's. A call DynamoDB
    /// refuses is sent again table by table, so that each batch's `failed` holds its own
    /// keys with its own table's error.
    ///
    /// Refused before anything is sent: two batches of one table (read both targets with
    /// a batch of a collection), or a batch whose `Db` reaches another region.
    ///
    /// ```no_run
    /// # use dynamo_model::{Db, Entity, Table};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct Ledger;
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[dynamo(table = Ledger, pk = "ENTRY#{id}", sk = "ENTRY")]
    /// # struct Entry { id: String }
    /// # async fn demo(app: Db<App>, ledger: Db<Ledger>) -> Result<(), dynamo_model::Error> {
    /// let (users, entries) = app
    ///     .batch_get::<User>()
    ///     .keys(["u1", "u2"].map(User::key))
    ///     .and(ledger.batch_get::<Entry>().key(Entry::key("e1")))
    ///     .await?;
    /// println!("{} users, {} entries", users.items.len(), entries.items.len());
    /// # Ok(()) }
    /// ```
    pub fn and<P: Parts>(self, other: P) -> BatchGets<T, P> {
        BatchGets {
            first: self,
            rest: other,
        }
    }
}

impl<T: Target, P: Parts> BatchGets<T, P> {
    /// Adds more batches, sent with these: their outputs come after these, as a pair.
    pub fn and<Q: Parts>(self, other: Q) -> BatchGets<T, (P, Q)> {
        BatchGets {
            first: self.first,
            rest: (self.rest, other),
        }
    }

    fn plan(&mut self) -> Result<Plan, Error> {
        let mut plan = Plan::default();
        self.first.plan(&mut plan)?;
        self.rest.plan(&mut plan)?;
        Ok(plan)
    }

    /// The `BatchGetItem` input of each chunk of 100 keys, instead of sending them.
    pub fn params(mut self) -> Result<Vec<BatchGetItemInput>, Error> {
        let plan = self.plan()?;
        let reading = self.first.reading(&plan.tables, &plan.customize);
        reading.inputs(plan.keys.iter().map(|(p, k)| (*p, k)))
    }

    /// Reads every batch's keys; each batch's output as [`BatchGet::send`] gives it.
    pub async fn send(self) -> Result<(BatchGetOutput<T>, P::Output), Error> {
        let span = crate::trace::operation("BatchGetItem", self.first.db.table_name(), T::NAME);
        crate::trace::traced(span, self.send_untraced()).await
    }

    async fn send_untraced(mut self) -> Result<(BatchGetOutput<T>, P::Output), Error> {
        let mut plan = self.plan()?;
        crate::trace::record_current("dynamo_model.items", plan.keys.len() as u64);
        let keys = std::mem::take(&mut plan.keys);
        let reading = self.first.reading(&plan.tables, &plan.customize);
        let read = reading.read(keys).await?;
        crate::trace::record_current("dynamo_model.requests", read.requests as u64);
        crate::trace::record_current("dynamo_model.retries", read.retries as u64);
        let consumed: f64 = read.consumed.iter().sum();
        crate::trace::record_current("aws.dynamodb.consumed_capacity", consumed);
        let mut split = Split {
            read,
            tables: plan.tables,
            next: 0,
        };
        let first = Parts::finish(&self.first, &mut split)?;
        Ok((first, self.rest.finish(&mut split)?))
    }
}

crate::request::into_future!(
    impl[T: Target, P: Parts] BatchGets<T, P>,
    (BatchGetOutput<T>, P::Output)
);
