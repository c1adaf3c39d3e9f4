//! [`Budget`]: the most requests, capacity units and items an access pattern may cost,
//! checked against the calls a [`Meter`] recorded. A test pins a pattern's cost in one
//! line, and fails with every call listed when a change makes it dearer.

use super::{Charge, Meter, Units};
use std::fmt;

/// The most a block of code may cost: requests, read and write units, items read and
/// items read but not returned. Each limit is optional; a budget with none always holds.
///
/// Units are what DynamoDB reported for each call ([`Charge::consumed`], indexes
/// included) and, where it reported nothing, the crate's estimate
/// ([`Charge::estimated`]); a call with neither (a failed call) counts as no units.
///
/// [`check`](Budget::check) runs an async block with a metered clone of a
/// [`Db`](dynamo_model::Db) and returns its output, or [`BudgetExceeded`];
/// [`assert`](Budget::assert) panics instead, for a test suite. Both count the calls made
/// through the `Db` the block receives, and only those.
///
/// ```no_run
/// # use dynamo_model::{Db, Entity, Table, capacity::Budget};
/// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
/// # #[derive(Entity, Debug, Clone)]
/// # #[dynamo(table = App, pk = "USER#{user}", sk = "MSG#{at}")]
/// # struct Message { user: String, at: u64, text: String }
/// # async fn demo(db: Db<App>) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// // The inbox's first page: one request, at most 2 read units, no item read in vain.
/// let budget = Budget::new().requests(1).read_units(2.0).items_discarded(0);
/// let page = budget
///     .assert(&db, |db| async move { db.query(Message::partition("u-1")).limit(20).page(None).await })
///     .await?;
/// # let _ = page;
/// # Ok(()) }
/// ```
///
/// [`check_meter`](Budget::check_meter) and [`check_charges`](Budget::check_charges)
/// check calls recorded otherwise.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Budget {
    requests: Option<u64>,
    read_units: Option<f64>,
    write_units: Option<f64>,
    items_read: Option<u64>,
    items_discarded: Option<u64>,
}

/// One of a [`Budget`]'s limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// DynamoDB calls ([`Budget::requests`]).
    Requests,
    /// Read capacity units ([`Budget::read_units`]).
    ReadUnits,
    /// Write capacity units ([`Budget::write_units`]).
    WriteUnits,
    /// Items DynamoDB read ([`Budget::items_read`]).
    ItemsRead,
    /// Items read but not returned ([`Budget::items_discarded`]).
    ItemsDiscarded,
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Limit::Requests => "requests",
            Limit::ReadUnits => "read units",
            Limit::WriteUnits => "write units",
            Limit::ItemsRead => "items read",
            Limit::ItemsDiscarded => "items discarded",
        })
    }
}

/// A limit a block went over: what it allowed and what the calls measured.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Excess {
    /// The limit exceeded.
    pub limit: Limit,
    /// The budget's limit.
    pub allowed: f64,
    /// What the calls added up to.
    pub measured: f64,
}

/// What a list of calls added up to, as a [`Budget`] counts it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[non_exhaustive]
pub struct Usage {
    /// DynamoDB calls, failed ones included.
    pub requests: u64,
    /// Read units: reported, else estimated, per call.
    pub read_units: f64,
    /// Write units: reported, else estimated, per call.
    pub write_units: f64,
    /// Items DynamoDB read ([`Charge::items_read`]).
    pub items_read: u64,
    /// Items the reads returned ([`Charge::items_returned`]).
    pub items_returned: u64,
    /// Items read but not returned, call by call: dropped by a filter, or keys without
    /// an item.
    pub items_discarded: u64,
}

impl Usage {
    /// The totals of `charges`.
    pub fn of(charges: &[Charge]) -> Usage {
        let mut usage = Usage::default();
        for charge in charges {
            usage.requests += 1;
            match charge.units {
                Units::Read => usage.read_units += units(charge),
                Units::Write => usage.write_units += units(charge),
            }
            let read = charge.items_read.unwrap_or(0);
            let returned = charge.items_returned.unwrap_or(0);
            usage.items_read += read;
            usage.items_returned += returned;
            usage.items_discarded += read.saturating_sub(returned);
        }
        usage
    }
}

/// The units a budget counts for a call: DynamoDB's figure, else the estimate, else none.
fn units(charge: &Charge) -> f64 {
    charge.consumed.or(charge.estimated).unwrap_or(0.0)
}

impl Budget {
    /// A budget without limits; add them with the methods below.
    pub fn new() -> Self {
        Budget::default()
    }

    crate::setters::setters! {
        /// At most `calls` DynamoDB calls, failed ones included (a request of a query is
        /// one; a batch of 1,000 keys is at least ten `BatchGetItem` calls).
        requests(calls: u64) => requests = Some(calls);
        /// At most `units` read capacity units in all (`GetItem`, `Query`, `Scan`,
        /// `BatchGetItem`, `TransactGetItems`), indexes included. A `NaN` limit is never met.
        read_units(units: f64) => read_units = Some(units);
        /// At most `units` write capacity units in all (`PutItem`, `UpdateItem`,
        /// `DeleteItem`, `BatchWriteItem`, `TransactWriteItems`), the writes of indexes
        /// included. A `NaN` limit is never met.
        write_units(units: f64) => write_units = Some(units);
        /// At most `items` items read by DynamoDB ([`Charge::items_read`]): what a query
        /// or a scan evaluated before its filter, the keys a get asked for.
        items_read(items: u64) => items_read = Some(items);
        /// At most `items` items read but not returned, summed call by call: items a
        /// query's or a scan's filter dropped, keys without an item. `0` pins a read that
        /// pays only for what it returns.
        items_discarded(items: u64) => items_discarded = Some(items);
    }

    /// The limits `usage` goes over, in the order of the builder's methods.
    pub fn excesses(&self, usage: &Usage) -> Vec<Excess> {
        let limits = [
            (
                Limit::Requests,
                self.requests.map(|n| n as f64),
                usage.requests as f64,
            ),
            (Limit::ReadUnits, self.read_units, usage.read_units),
            (Limit::WriteUnits, self.write_units, usage.write_units),
            (
                Limit::ItemsRead,
                self.items_read.map(|n| n as f64),
                usage.items_read as f64,
            ),
            (
                Limit::ItemsDiscarded,
                self.items_discarded.map(|n| n as f64),
                usage.items_discarded as f64,
            ),
        ];
        limits
            .into_iter()
            .filter_map(|(limit, allowed, measured)| {
                let allowed = allowed?;
                // Within only when measurably at most the limit: a NaN limit fails.
                let within = matches!(
                    measured.partial_cmp(&allowed),
                    Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
                );
                (!within).then_some(Excess {
                    limit,
                    allowed,
                    measured,
                })
            })
            .collect()
    }

    /// Checks `charges` (e.g. [`Meter::take`]n): their [`Usage`] when within the budget.
    pub fn check_charges(&self, charges: &[Charge]) -> Result<Usage, BudgetExceeded> {
        let usage = Usage::of(charges);
        let excesses = self.excesses(&usage);
        if excesses.is_empty() {
            Ok(usage)
        } else {
            Err(BudgetExceeded {
                excesses,
                usage,
                charges: charges.to_vec(),
            })
        }
    }

    /// Checks the calls `meter` keeps ([`Meter::charges`]: every call since it was made
    /// or last taken, unless there were more than its history).
    ///
    /// ```
    /// use dynamo_model::capacity::{Budget, Meter};
    ///
    /// let meter = Meter::new();
    /// // .. calls through `db.metered(&meter)` ..
    /// let usage = Budget::new().requests(3).check_meter(&meter)?;
    /// assert_eq!(usage.requests, 0);
    /// # Ok::<(), dynamo_model::capacity::BudgetExceeded>(())
    /// ```
    pub fn check_meter(&self, meter: &Meter) -> Result<Usage, BudgetExceeded> {
        self.check_charges(&meter.charges())
    }
}

/// Calls that went over a [`Budget`]: the limits exceeded, the totals and every call.
/// Its `Display` lists them all, one call a line.
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetExceeded {
    excesses: Vec<Excess>,
    usage: Usage,
    charges: Vec<Charge>,
}

impl BudgetExceeded {
    /// The limits exceeded (at least one).
    pub fn excesses(&self) -> &[Excess] {
        &self.excesses
    }

    /// What the calls added up to.
    pub fn usage(&self) -> &Usage {
        &self.usage
    }

    /// Every call checked, in the order they completed.
    pub fn charges(&self) -> &[Charge] {
        &self.charges
    }
}

/// A figure, or `-` when unknown.
struct Figure<T>(Option<T>);

impl<T: fmt::Display> fmt::Display for Figure<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(x) => x.fmt(f),
            None => f.write_str("-"),
        }
    }
}

impl fmt::Display for BudgetExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("capacity budget exceeded:")?;
        for (i, e) in self.excesses.iter().enumerate() {
            let sep = if i == 0 { " " } else { ", " };
            write!(f, "{sep}{} {} (budget {})", e.limit, e.measured, e.allowed)?;
        }
        let u = &self.usage;
        write!(
            f,
            "\nin all: {} requests, {} read units, {} write units, {} items read, {} returned, {} discarded",
            u.requests,
            u.read_units,
            u.write_units,
            u.items_read,
            u.items_returned,
            u.items_discarded
        )?;
        for (i, c) in self.charges.iter().enumerate() {
            let kind = match c.units {
                Units::Read => "read units",
                Units::Write => "write units",
            };
            let failed = if c.succeeded { "" } else { " (failed)" };
            write!(
                f,
                "\n  {}. {}{failed}: {} {kind} (consumed {}, estimated {})",
                i + 1,
                c.operation,
                units(c),
                Figure(c.consumed),
                Figure(c.estimated),
            )?;
            if c.items_read.is_some() || c.items_returned.is_some() {
                write!(
                    f,
                    ", items read {}, returned {}",
                    Figure(c.items_read),
                    Figure(c.items_returned)
                )?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for BudgetExceeded {}

#[cfg(test)]
mod tests;
