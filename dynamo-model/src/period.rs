//! One table per period for time series (feature `time`): the current period's table takes
//! the writes, older ones are read less and less, and whole periods are dropped instead of
//! deleting items one by one.
//!
//! The AWS guidance for time-series data: "create one table per period (day, week,
//! month), provisioned with the capacity it needs: the current table with high capacity,
//! older tables with little; create the next table before its period begins, and delete
//! tables that are no longer needed." [`PeriodTables`] names each table from a prefix
//! (runtime configuration, like [`Db`]'s table name) and the period's start, routes each
//! timestamp to its table, creates tables ahead of time with the schema of `T` (TTL
//! included), lists them, changes an old table's capacity, drops old periods, and reads a
//! time range across periods newest first.
//!
//! | period | table of 2026-11-23 with prefix `events` |
//! |--------|-------------------------------------------|
//! | [`Period::Day`] | `events_2026_11_23` |
//! | [`Period::Week`] (ISO 8601 weeks, Monday first) | `events_2026_w48` |
//! | [`Period::Month`] | `events_2026_11` |
//!
//! Periods are UTC.
//!
//! ```no_run
//! # use dynamo_model::{Db, Entity, Table, period::{Capacity, Period, PeriodTables, TimeRange}};
//! # use serde::{Deserialize, Serialize};
//! # use time::{Duration, OffsetDateTime};
//! # use futures_util::TryStreamExt;
//! # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
//! # #[derive(Entity, Serialize, Deserialize)]
//! # #[dynamo(table = App, pk = "DEVICE#{device}", sk = "AT#{at}")]
//! # struct Reading { device: String, at: OffsetDateTime, value: f64 }
//! # async fn demo(client: aws_sdk_dynamodb::Client) -> Result<(), dynamo_model::Error> {
//! // The template's table name is the prefix: readings_2026_11, readings_2026_12, ...
//! let tables = PeriodTables::new(&Db::<App>::new(client, "readings"), Period::Month)?;
//! let now = OffsetDateTime::now_utc();
//! tables.create_ahead(now, 1).await?; // this month's table and next month's
//!
//! let reading = Reading { device: "d-1".into(), at: now, value: 21.5 };
//! tables.db_at(reading.at).put(&reading).await?;
//!
//! // The last 90 days of d-1, newest first, across the monthly tables.
//! let last_90_days = TimeRange { from: now - Duration::days(90), to: now + Duration::SECOND };
//! let recent: Vec<Reading> = tables
//!     .query_newest_first(last_90_days, |db, range| {
//!         db.query(Reading::partition("d-1"))
//!             .sk(Reading::sk().at().between(range.from, range.to))
//!             .reverse()
//!             .stream()
//!     })
//!     .try_collect()
//!     .await?;
//!
//! // Old months: cheap capacity, then gone after a year.
//! for table in tables.list().await? {
//!     if table.end < now - Duration::days(60) {
//!         tables.set_capacity(&table, Capacity::Provisioned { read: 1, write: 1 }).await?;
//!     }
//! }
//! tables.drop_before(now - Duration::days(365)).await?;
//! # Ok(()) }
//! ```

use crate::{Db, Error, Table, ValidationReason};
use aws_sdk_dynamodb::types::{
    BillingMode, GlobalSecondaryIndexUpdate, ProvisionedThroughput,
    UpdateGlobalSecondaryIndexAction,
};
use futures_util::stream::{self, Stream, StreamExt};
use std::sync::Arc;
use time::{Date, Month, OffsetDateTime, Time, UtcOffset, Weekday};

/// The length of one table's period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Period {
    /// One table per UTC day.
    Day,
    /// One table per ISO 8601 week (Monday to Sunday, UTC).
    Week,
    /// One table per UTC calendar month.
    Month,
}

impl Period {
    /// The first instant of the period holding `at` (UTC).
    pub fn start_of(self, at: OffsetDateTime) -> OffsetDateTime {
        let date = at.to_offset(UtcOffset::UTC).date();
        let first = match self {
            Period::Day => date,
            Period::Week => date
                .checked_sub(time::Duration::days(i64::from(
                    date.weekday().number_days_from_monday(),
                )))
                .unwrap_or(Date::MIN),
            Period::Month => date.replace_day(1).unwrap_or(date),
        };
        first.with_time(Time::MIDNIGHT).assume_utc()
    }

    /// The first instant of the period after the one holding `at` (the last instant
    /// `time` can represent for the last period of year 9999).
    pub fn next(self, at: OffsetDateTime) -> OffsetDateTime {
        let start = self.start_of(at);
        let next = match self {
            Period::Day => start.checked_add(time::Duration::days(1)),
            Period::Week => start.checked_add(time::Duration::weeks(1)),
            Period::Month => {
                let date = start.date();
                let (year, month) = match date.month() {
                    Month::December => (date.year() + 1, Month::January),
                    m => (date.year(), m.next()),
                };
                Date::from_calendar_date(year, month, 1)
                    .ok()
                    .map(|d| d.with_time(Time::MIDNIGHT).assume_utc())
            }
        };
        next.unwrap_or(time::PrimitiveDateTime::MAX.assume_utc())
    }

    /// The table-name suffix of the period starting at `start`.
    fn suffix(self, start: OffsetDateTime) -> String {
        let date = start.date();
        match self {
            Period::Day => format!(
                "{:04}_{:02}_{:02}",
                date.year(),
                u8::from(date.month()),
                date.day()
            ),
            Period::Week => {
                let (year, week, _) = date.to_iso_week_date();
                format!("{year:04}_w{week:02}")
            }
            Period::Month => format!("{:04}_{:02}", date.year(), u8::from(date.month())),
        }
    }

    /// The start of the period a suffix names; `None` for anything [`suffix`] does not
    /// write.
    fn parse_suffix(self, suffix: &str) -> Option<OffsetDateTime> {
        let number = |s: &str, len: usize| -> Option<i32> {
            (s.len() == len && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse().ok())
                .flatten()
        };
        let parts: Vec<&str> = suffix.split('_').collect();
        let date = match (self, parts.as_slice()) {
            (Period::Day, [y, m, d]) => Date::from_calendar_date(
                number(y, 4)?,
                Month::try_from(u8::try_from(number(m, 2)?).ok()?).ok()?,
                u8::try_from(number(d, 2)?).ok()?,
            )
            .ok()?,
            (Period::Week, [y, w]) => Date::from_iso_week_date(
                number(y, 4)?,
                u8::try_from(number(w.strip_prefix('w')?, 2)?).ok()?,
                Weekday::Monday,
            )
            .ok()?,
            (Period::Month, [y, m]) => Date::from_calendar_date(
                number(y, 4)?,
                Month::try_from(u8::try_from(number(m, 2)?).ok()?).ok()?,
                1,
            )
            .ok()?,
            _ => return None,
        };
        let start = date.with_time(Time::MIDNIGHT).assume_utc();
        // Only the canonical spelling: one name per period.
        (self.suffix(start) == suffix).then_some(start)
    }
}

/// One period's table.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PeriodTable {
    /// The table's name.
    pub name: String,
    /// The period's first instant (UTC).
    pub start: OffsetDateTime,
    /// The next period's first instant: the period is `start..end`.
    pub end: OffsetDateTime,
}

/// A table's capacity mode ([`PeriodTables::set_capacity`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Capacity {
    /// On-demand (pay per request), what [`PeriodTables`] creates tables with.
    OnDemand,
    /// Provisioned read and write units, for the table and each of its global secondary
    /// indexes.
    Provisioned {
        /// Read capacity units.
        read: i64,
        /// Write capacity units.
        write: i64,
    },
}

/// The tables of schema `T`, one per [`Period`], named `{prefix}_{period}`. Cloning is
/// cheap. See the [module documentation](self).
pub struct PeriodTables<T> {
    /// The template: its table name is the prefix; its client (with any cache or meter),
    /// cursor secret and cache serve every period's table.
    db: Db<T>,
    period: Period,
}

impl<T> Clone for PeriodTables<T> {
    fn clone(&self) -> Self {
        PeriodTables {
            db: self.db.clone(),
            period: self.period,
        }
    }
}

impl<T> std::fmt::Debug for PeriodTables<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeriodTables")
            .field("db", &self.db)
            .field("period", &self.period)
            .finish_non_exhaustive()
    }
}

/// A time range, `from` included and `to` excluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeRange {
    /// The first instant of the range.
    pub from: OffsetDateTime,
    /// The first instant after the range.
    pub to: OffsetDateTime,
}

/// The most periods one read across periods visits.
pub const MAX_PERIODS_PER_READ: usize = 1000;

/// The longest prefix: DynamoDB table names are 3 to 255 characters, and the longest
/// suffix (`_2026_11_23`) takes 11.
const MAX_PREFIX: usize = 255 - 11;

impl<T: Table> PeriodTables<T> {
    /// The tables named `{prefix}_{period}`, where the prefix is `db`'s table name, and
    /// each period's [`Db`] is `db` on that table (same client, so the same interceptors,
    /// [meter](crate::capacity::Meter) or [cache](Db::with_cache); same cursor secret).
    /// The prefix is 1 to 244 characters of those DynamoDB allows in table names (`a-z`,
    /// `A-Z`, `0-9`, `_`, `-`, `.`); anything else is refused
    /// ([`ValidationReason::InvalidOption`]).
    pub fn new(db: &Db<T>, period: Period) -> Result<Self, Error> {
        let prefix = db.table_name();
        let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
        if prefix.is_empty() || prefix.len() > MAX_PREFIX || !prefix.chars().all(allowed) {
            return Err(Error::invalid_request(
                "CreateTable",
                ValidationReason::InvalidOption,
                format!(
                    "period table prefix {prefix:?}: 1 to {MAX_PREFIX} characters of a-z, A-Z, 0-9, `_`, `-` and `.`"
                ),
            ));
        }
        Ok(PeriodTables {
            db: db.clone(),
            period,
        })
    }

    /// The period of these tables.
    pub fn period(&self) -> Period {
        self.period
    }

    /// The table of the period holding `at`.
    pub fn table_at(&self, at: OffsetDateTime) -> PeriodTable {
        let start = self.period.start_of(at);
        PeriodTable {
            name: format!("{}_{}", self.db.table_name(), self.period.suffix(start)),
            start,
            end: self.period.next(start),
        }
    }

    /// A [`Db`] on the table of the period holding `at`: where an item timestamped `at`
    /// is written and read.
    pub fn db_at(&self, at: OffsetDateTime) -> Db<T> {
        self.db(&self.table_at(at))
    }

    /// A [`Db`] on `table`.
    pub fn db(&self, table: &PeriodTable) -> Db<T> {
        self.db.with_table_name(table.name.as_str())
    }

    /// The table a name designates, if it is one of these tables.
    pub fn parse(&self, name: &str) -> Option<PeriodTable> {
        let suffix = name.strip_prefix(self.db.table_name())?.strip_prefix('_')?;
        let start = self.period.parse_suffix(suffix)?;
        Some(PeriodTable {
            name: name.to_owned(),
            start,
            end: self.period.next(start),
        })
    }

    /// Creates the table of the period holding `now` and of the `ahead` periods after it
    /// (schema of `T`, on-demand), skipping those that exist, and makes sure each has TTL
    /// enabled when the schema has a TTL attribute (also on a table an interrupted run
    /// created without it). Returns the tables it created. Safe to run from several
    /// schedulers at once; run it on a schedule, so the next period's table is active
    /// before its first write.
    pub async fn create_ahead(
        &self,
        now: OffsetDateTime,
        ahead: u32,
    ) -> Result<Vec<PeriodTable>, Error> {
        let existing = self.list().await?;
        let mut created = Vec::new();
        let mut table = self.table_at(now);
        for _ in 0..=ahead {
            if !existing.iter().any(|t| t.name == table.name) {
                match self.db(&table).create_table().await {
                    Ok(()) => created.push(table.clone()),
                    // Created meanwhile by another run.
                    Err(Error::Service { source, .. })
                        if matches!(
                            *source,
                            aws_sdk_dynamodb::Error::ResourceInUseException(_)
                        ) => {}
                    Err(e) => return Err(e),
                }
            }
            self.ensure_ttl(&table).await?;
            if table.end == time::PrimitiveDateTime::MAX.assume_utc() {
                break;
            }
            table = self.table_at(table.end);
        }
        Ok(created)
    }

    /// Enables TTL on `table` when the schema has a TTL attribute and it is off.
    async fn ensure_ttl(&self, table: &PeriodTable) -> Result<(), Error> {
        let Some(attribute) = T::SCHEMA.ttl else {
            return Ok(());
        };
        let client = self.db.client();
        if crate::schema::ttl_on(client, &table.name).await?.is_some() {
            return Ok(());
        }
        crate::schema::enable_ttl(client, &table.name, attribute).await
    }

    /// Every table of these periods that exists, oldest first (`ListTables`, every response).
    pub async fn list(&self) -> Result<Vec<PeriodTable>, Error> {
        let mut tables = Vec::new();
        let mut start: Option<String> = None;
        loop {
            let out = self
                .db
                .client()
                .list_tables()
                .set_exclusive_start_table_name(start)
                .send()
                .await
                .map_err(|e| Error::service("ListTables", self.db.table_name(), e))?;
            tables.extend(out.table_names().iter().filter_map(|n| self.parse(n)));
            start = out.last_evaluated_table_name;
            if start.is_none() {
                break;
            }
        }
        tables.sort_by_key(|t| t.start);
        Ok(tables)
    }

    /// Switches `table` to on-demand, or to provisioned capacity (the same units for the
    /// table and each global secondary index): old periods are read rarely and written
    /// never, so they need little. DynamoDB allows a switch of billing mode once per 24
    /// hours per table.
    pub async fn set_capacity(&self, table: &PeriodTable, capacity: Capacity) -> Result<(), Error> {
        const OP: &str = "UpdateTable";
        let mut request = self.db.client().update_table().table_name(&table.name);
        match capacity {
            Capacity::OnDemand => request = request.billing_mode(BillingMode::PayPerRequest),
            Capacity::Provisioned { read, write } => {
                let throughput = || {
                    ProvisionedThroughput::builder()
                        .read_capacity_units(read)
                        .write_capacity_units(write)
                        .build()
                        .map_err(|e| Error::request_build(OP, e))
                };
                request = request
                    .billing_mode(BillingMode::Provisioned)
                    .provisioned_throughput(throughput()?);
                for index in T::SCHEMA.indexes {
                    if index.kind != crate::schema::IndexKind::Global {
                        continue;
                    }
                    request = request.global_secondary_index_updates(
                        GlobalSecondaryIndexUpdate::builder()
                            .update(
                                UpdateGlobalSecondaryIndexAction::builder()
                                    .index_name(index.name)
                                    .provisioned_throughput(throughput()?)
                                    .build()
                                    .map_err(|e| Error::request_build(OP, e))?,
                            )
                            .build(),
                    );
                }
            }
        }
        request
            .send()
            .await
            .map_err(|e| Error::service(OP, &table.name, e))?;
        Ok(())
    }

    /// Deletes the tables whose whole period ends at or before `cutoff`, with every item
    /// in them; returns them.
    pub async fn drop_before(&self, cutoff: OffsetDateTime) -> Result<Vec<PeriodTable>, Error> {
        let mut dropped = Vec::new();
        for table in self.list().await? {
            if table.end <= cutoff {
                self.db(&table).delete_table().await?;
                dropped.push(table);
            }
        }
        Ok(dropped)
    }

    /// The items of the read `build` makes for each period overlapping `range` (`from`
    /// included, `to` excluded), newest period first. `build` gets the period's [`Db`]
    /// and the range clipped to the period, and returns the read's stream (a query's or
    /// a scatter query's [`stream`](crate::read::Query::stream)): condition the sort key
    /// on the range, newest first within the table too
    /// ([`reverse`](crate::read::Query::reverse) on a time-ordered sort key), and the
    /// stream is newest first overall: the periods' reads merged in order, which, since
    /// periods do not overlap, is each period's read after the newer one's. The tables are
    /// named from the range (no `ListTables`); one that does not exist (never created, or
    /// dropped) is skipped. Each table is read only once the stream reaches it, so taking
    /// the first items reads only the newest tables. A range over more than
    /// [`MAX_PERIODS_PER_READ`] periods is refused ([`ValidationReason::InvalidOption`]).
    pub fn query_newest_first<X, S, F>(
        &self,
        range: TimeRange,
        build: F,
    ) -> impl Stream<Item = Result<X, Error>> + Send + 'static
    where
        X: Send + 'static,
        S: Stream<Item = Result<X, Error>> + Send + 'static,
        F: Fn(Db<T>, TimeRange) -> S + Send + Sync + 'static,
    {
        let periods = self.periods_newest_first(range);
        let this = self.clone();
        let build = Arc::new(build);
        match periods {
            Ok(periods) => stream::iter(periods)
                .map(move |(table, clipped)| {
                    build(this.db(&table), clipped)
                        .filter(|item| std::future::ready(!is_missing_table(item)))
                })
                .flatten()
                .left_stream(),
            Err(e) => stream::once(async move { Err(e) }).right_stream(),
        }
    }

    /// The periods overlapping `range`, newest first, each with the range clipped to it.
    fn periods_newest_first(
        &self,
        range: TimeRange,
    ) -> Result<Vec<(PeriodTable, TimeRange)>, Error> {
        let mut out = Vec::new();
        if range.from >= range.to {
            return Ok(out);
        }
        let mut table = self.table_at(range.to - time::Duration::nanoseconds(1));
        loop {
            if out.len() == MAX_PERIODS_PER_READ {
                return Err(Error::invalid_request(
                    "Query",
                    ValidationReason::InvalidOption,
                    format!("the range {range:?} spans more than {MAX_PERIODS_PER_READ} periods"),
                ));
            }
            let clipped = TimeRange {
                from: range.from.max(table.start),
                to: range.to.min(table.end),
            };
            let start = table.start;
            out.push((table, clipped));
            if start <= range.from {
                return Ok(out);
            }
            match start.checked_sub(time::Duration::nanoseconds(1)) {
                Some(before) => table = self.table_at(before),
                None => return Ok(out),
            }
        }
    }
}

/// Whether a read failed because its table does not exist.
fn is_missing_table<X>(item: &Result<X, Error>) -> bool {
    matches!(
        item,
        Err(Error::Service { source, .. })
            if matches!(**source, aws_sdk_dynamodb::Error::ResourceNotFoundException(_))
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn periods_start_and_end_in_utc() {
        let at = datetime!(2026-11-23 17:45:12 +05:00);
        assert_eq!(Period::Day.start_of(at), datetime!(2026-11-23 00:00 UTC));
        assert_eq!(Period::Week.start_of(at), datetime!(2026-11-23 00:00 UTC));
        assert_eq!(Period::Month.start_of(at), datetime!(2026-11-01 00:00 UTC));
        // 01:00 at +05:00 is still the day before in UTC.
        let early = datetime!(2026-11-01 01:00 +05:00);
        assert_eq!(
            Period::Month.start_of(early),
            datetime!(2026-10-01 00:00 UTC)
        );
        assert_eq!(
            Period::Month.next(datetime!(2026-12-01 00:00 UTC)),
            datetime!(2027-01-01 00:00 UTC)
        );
        assert_eq!(
            Period::Week.start_of(datetime!(2027-01-01 12:00 UTC)),
            datetime!(2026-12-28 00:00 UTC)
        );
    }

    #[test]
    fn names_are_canonical_and_parse_back() {
        let cases = [
            (Period::Day, datetime!(2026-11-23 00:00 UTC), "2026_11_23"),
            (Period::Week, datetime!(2026-11-23 00:00 UTC), "2026_w48"),
            // ISO week 53 of 2026 runs into 2027.
            (Period::Week, datetime!(2026-12-28 00:00 UTC), "2026_w53"),
            (Period::Month, datetime!(2026-11-01 00:00 UTC), "2026_11"),
        ];
        for (period, start, suffix) in cases {
            assert_eq!(period.suffix(start), suffix);
            assert_eq!(period.parse_suffix(suffix), Some(start), "{suffix}");
        }
        for (period, bad) in [
            (Period::Month, "2026_1"),
            (Period::Month, "2026_13"),
            (Period::Month, "2026_11_01"),
            (Period::Day, "2026_02_30"),
            (Period::Week, "2026_w54"),
            (Period::Week, "2026_48"),
            (Period::Month, "+026_11"),
            (Period::Day, ""),
        ] {
            assert_eq!(period.parse_suffix(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_last_periods_of_time_never_panic() {
        let last = datetime!(9999-12-31 23:59:59.999_999_999 UTC);
        for period in [Period::Day, Period::Week, Period::Month] {
            let start = period.start_of(last);
            assert_eq!(
                period.next(start),
                time::PrimitiveDateTime::MAX.assume_utc()
            );
            assert_eq!(period.parse_suffix(&period.suffix(start)), Some(start));
            let first = datetime!(-9999-01-01 00:00 UTC);
            assert!(period.start_of(first) <= first);
        }
        let tables = PeriodTables::new(&Db::<Ttl>::offline("ev"), Period::Month).unwrap();
        assert!(tables.parse("ev_9999_12").is_some());
        assert_eq!(tables.table_at(last).name, "ev_9999_12");
    }

    #[derive(crate::Table)]
    #[dynamo(pk = "PK", sk = "SK")]
    struct Ttl;

    /// The periods a range visits: newest first, each clipped, none outside the range.
    #[test]
    fn a_range_visits_the_periods_it_overlaps() {
        let tables = PeriodTables::new(&Db::<Ttl>::offline("ev"), Period::Month).unwrap();
        let visit = |from, to| {
            tables
                .periods_newest_first(TimeRange { from, to })
                .unwrap()
                .into_iter()
                .map(|(t, r)| (t.name, r.from, r.to))
                .collect::<Vec<_>>()
        };
        let (from, to) = (
            datetime!(2026-09-20 00:00 UTC),
            datetime!(2026-11-01 00:00 UTC),
        );
        assert_eq!(
            visit(from, to),
            [
                ("ev_2026_10".to_owned(), datetime!(2026-10-01 00:00 UTC), to),
                (
                    "ev_2026_09".to_owned(),
                    from,
                    datetime!(2026-10-01 00:00 UTC)
                ),
            ],
            "`to` on a boundary: November is not visited"
        );
        assert!(visit(to, to).is_empty());
        assert!(visit(to, from).is_empty());
        let many = TimeRange {
            from: datetime!(1900-01-01 00:00 UTC),
            to: datetime!(2026-01-01 00:00 UTC),
        };
        let err = tables.periods_newest_first(many).unwrap_err();
        assert_eq!(
            err.validation_reason(),
            Some(ValidationReason::InvalidOption)
        );
        // A bad prefix.
        for bad in ["", "has space", "slash/"] {
            assert!(PeriodTables::new(&Db::<Ttl>::offline(bad), Period::Day).is_err());
        }
    }

    proptest::proptest! {
        /// Every instant lies in its period, the periods tile time, and a period's name
        /// parses back to it.
        #[test]
        fn periods_tile_time(secs in -2_000_000_000i64..4_000_000_000i64, p in 0usize..3) {
            let period = [Period::Day, Period::Week, Period::Month][p];
            let at = OffsetDateTime::from_unix_timestamp(secs).unwrap_or(OffsetDateTime::UNIX_EPOCH);
            let start = period.start_of(at);
            let end = period.next(start);
            proptest::prop_assert!(start <= at && at < end);
            proptest::prop_assert_eq!(period.start_of(end), end);
            proptest::prop_assert_eq!(period.start_of(end - time::Duration::nanoseconds(1)), start);
            proptest::prop_assert_eq!(period.parse_suffix(&period.suffix(start)), Some(start));
        }
    }
}
