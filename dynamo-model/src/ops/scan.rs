//! `Scan`: every item of an entity or collection, in parallel segments, optionally paced
//! to a read-capacity budget.
//!
//! Scans read the whole table and cost capacity for every item read, filtered or not:
//! prefer queries. When a scan is needed (exports, migrations), keep pages small, split
//! it into segments for large tables, and give it a budget so it cannot starve the
//! application's own reads.

use super::query::{decode_target, entity_type_filter, RawPage};
use super::request::Customize;
use super::{and_opt, BoxFuture};
use crate::collection::{Includes, Target};
use crate::cursor::{self, Cursor, Fingerprint};
use crate::expr::{Node, Placeholders};
use crate::ops::{Page, UnknownEntity};
use crate::{Condition, Db, Entity, Error, Item, Table};
use aws_sdk_dynamodb::operation::scan::builders::ScanFluentBuilder;
use aws_sdk_dynamodb::operation::scan::ScanInput;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnConsumedCapacity};
use futures_util::stream::{self, Stream, StreamExt};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;
use tokio::time::Instant;

/// A `Scan` request; see [`Db::scan`].
///
/// ```no_run
/// # use dynamo_model::{Db, Entity, Table};
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE")]
/// # struct User { id: String, active: bool }
/// # async fn demo(db: Db<App>) -> Result<(), dynamo_model::Error> {
/// let active = db
///     .scan::<User>()
///     .filter(User::fields().active.eq(true))
///     .segments(4)                    // four concurrent segment scans
///     .page_size(100)
///     .max_read_units_per_second(50.0) // never more than 50 RCU/s
///     .all()
///     .await?;
/// # Ok(()) }
/// ```
#[must_use = "a scan does nothing until all(), page() or stream() is awaited"]
pub struct Scan<T: Target> {
    db: Db<T::Table>,
    customize: Customize<ScanFluentBuilder>,
    filter: Option<Node>,
    page_size: Option<usize>,
    segments: u32,
    budget: Option<f64>,
    consistent: bool,
    limit: Option<usize>,
    unknown: UnknownEntity,
    exclude_expired: bool,
}

/// Keeps consumed read capacity under a per-second budget, across all segments: each
/// request waits until the capacity consumed so far fits in the time elapsed.
#[derive(Debug)]
pub(crate) struct Pacer {
    budget: f64,
    started: Instant,
    consumed: f64,
}

impl Pacer {
    pub(crate) fn new(budget: f64) -> Self {
        Pacer {
            budget,
            started: Instant::now(),
            consumed: 0.0,
        }
    }

    /// How long to wait before the next request.
    fn delay(&self) -> Duration {
        // A tiny budget can make the due time unrepresentable: wait as long as possible.
        let due = Duration::try_from_secs_f64(self.consumed / self.budget).unwrap_or(Duration::MAX);
        due.saturating_sub(self.started.elapsed())
    }
}

async fn pace(pacer: &Option<Arc<Mutex<Pacer>>>) {
    if let Some(p) = pacer {
        let delay = p.lock().await.delay();
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
    }
}

async fn record(pacer: &Option<Arc<Mutex<Pacer>>>, consumed: f64) {
    if let Some(p) = pacer {
        p.lock().await.consumed += consumed;
    }
}

/// Where scan pages come from: DynamoDB, or a fake in tests.
pub(crate) trait PageSource: Send + Sync + 'static {
    fn fetch(
        &self,
        segment: Option<(u32, u32)>,
        start: Option<Item>,
    ) -> BoxFuture<'_, Result<RawPage, Error>>;
}

/// One segment's pages, one after the other, paced.
fn segment_pages<S: PageSource>(
    source: Arc<S>,
    segment: Option<(u32, u32)>,
    pacer: Option<Arc<Mutex<Pacer>>>,
) -> impl Stream<Item = Result<RawPage, Error>> + Send {
    // State: the key to start from; `None` once the segment is exhausted.
    stream::unfold(Some(None::<Item>), move |state| {
        let (source, pacer) = (Arc::clone(&source), pacer.clone());
        async move {
            let start = state?;
            pace(&pacer).await;
            match source.fetch(segment, start).await {
                Ok(page) => {
                    record(&pacer, page.consumed).await;
                    let next = page.last_key.clone().map(Some);
                    Some((Ok(page), next))
                }
                Err(e) => Some((Err(e), None)),
            }
        }
    })
}

/// All segments' pages, read concurrently and merged in the order they arrive.
pub(crate) fn merged_pages<S: PageSource>(
    source: Arc<S>,
    segments: u32,
    budget: Option<f64>,
) -> impl Stream<Item = Result<RawPage, Error>> + Send {
    let pacer = budget.map(|b| Arc::new(Mutex::new(Pacer::new(b))));
    let streams = (0..segments).map(|i| {
        let segment = (segments > 1).then_some((i, segments));
        segment_pages(Arc::clone(&source), segment, pacer.clone()).boxed()
    });
    stream::select_all(streams)
}

struct Prepared {
    filter: Option<String>,
    names: Option<HashMap<String, String>>,
    values: Option<HashMap<String, AttributeValue>>,
    fingerprint: Fingerprint,
}

/// A prepared Scan request against DynamoDB.
struct DynamoSource<X: Table> {
    db: Db<X>,
    prepared: Prepared,
    consistent: bool,
    page_size: Option<usize>,
    customize: Customize<ScanFluentBuilder>,
}

impl<X: Table> DynamoSource<X> {
    /// One page's request, rendered into the SDK's builder and customized.
    fn request(&self, segment: Option<(u32, u32)>, start: Option<Item>) -> ScanFluentBuilder {
        let (db, p) = (&self.db, &self.prepared);
        let request = db
            .client()
            .scan()
            .table_name(db.table_name())
            .set_filter_expression(p.filter.clone())
            .set_expression_attribute_names(p.names.clone())
            .set_expression_attribute_values(p.values.clone())
            .consistent_read(self.consistent)
            .set_limit(self.page_size.map(|n| n.min(i32::MAX as usize) as i32))
            .set_segment(segment.map(|s| s.0 as i32))
            .set_total_segments(segment.map(|s| s.1 as i32))
            .set_exclusive_start_key(start)
            .return_consumed_capacity(ReturnConsumedCapacity::Total);
        self.customize.apply(request)
    }
}

impl<X: Table> PageSource for DynamoSource<X> {
    fn fetch(
        &self,
        segment: Option<(u32, u32)>,
        start: Option<Item>,
    ) -> BoxFuture<'_, Result<RawPage, Error>> {
        let db = &self.db;
        let request = self.request(segment, start);
        Box::pin(async move {
            let out = request
                .send()
                .await
                .map_err(|e| Error::service("Scan", db.table_name(), e))?;
            Ok(RawPage {
                consumed: out
                    .consumed_capacity
                    .as_ref()
                    .and_then(|c| c.capacity_units)
                    .unwrap_or(0.0),
                evaluated: out.scanned_count.max(0) as usize,
                items: out.items.unwrap_or_default(),
                last_key: out.last_evaluated_key.filter(|k| !k.is_empty()),
            })
        })
    }
}

impl<T: Target> Scan<T> {
    pub(crate) fn new(db: &Db<T::Table>) -> Self {
        Scan {
            db: db.clone(),
            customize: Customize::default(),
            filter: None,
            page_size: None,
            segments: 1,
            budget: None,
            consistent: false,
            limit: None,
            unknown: UnknownEntity::Skip,
            exclude_expired: false,
        }
    }

    /// Keeps only items matching `condition` (read capacity is still consumed for the
    /// items it drops).
    pub fn filter<E: Entity>(mut self, condition: Condition<E>) -> Self
    where
        T: Includes<E>,
    {
        self.filter = and_opt(self.filter.take(), Some(condition.node));
        self
    }

    /// Items read per request (DynamoDB `Limit`; a page also stops at 1 MB). Small pages
    /// keep each request's capacity burst small.
    pub fn page_size(mut self, n: usize) -> Self {
        self.page_size = Some(n.max(1));
        self
    }

    /// Splits the scan into `n` segments read concurrently (parallel scan; DynamoDB
    /// allows 1 to 1,000,000). Results arrive in no particular order.
    pub fn segments(mut self, n: u32) -> Self {
        self.segments = n.clamp(1, 1_000_000);
        self
    }

    /// Paces requests, across all segments, so that consumed read capacity stays under
    /// `units` per second on average. The cost of a page is what DynamoDB reports in its
    /// response, so at most one page per segment can run ahead of the budget: keep pages
    /// small (`page_size`) for a tight bound.
    pub fn max_read_units_per_second(mut self, units: f64) -> Self {
        self.budget = (units.is_finite() && units > 0.0).then_some(units);
        self
    }

    /// Leaves out items whose TTL has passed (DynamoDB deletes them only eventually).
    pub fn exclude_expired(mut self) -> Self {
        self.exclude_expired = true;
        self
    }

    /// Strongly consistent reads.
    pub fn consistent(mut self) -> Self {
        self.consistent = true;
        self
    }

    /// Stop after `n` matching items.
    pub fn limit(mut self, n: usize) -> Self {
        self.limit = Some(n);
        self
    }

    /// Items of entity types outside the target: skipped (default; filtered on the
    /// server) or an error (then every item is read and checked).
    pub fn on_unknown(mut self, policy: UnknownEntity) -> Self {
        self.unknown = policy;
        self
    }

    fn prepare(&self) -> Result<Prepared, Error> {
        let type_filter = (self.unknown == UnknownEntity::Skip).then(entity_type_filter::<T>);
        let expiry = if self.exclude_expired {
            super::not_expired::<T::Table>()
        } else {
            None
        };
        let node = and_opt(and_opt(type_filter, expiry), self.filter.clone());
        let mut p = Placeholders::default();
        let filter = match &node {
            Some(node) => Some(super::render_for(T::NAME, &mut p, node)?),
            None => None,
        };
        let (names, values) = p.finish();
        let fingerprint = Fingerprint::of(&[
            b"scan",
            self.db.table_name().as_bytes(),
            T::NAME.as_bytes(),
            filter.as_deref().unwrap_or("").as_bytes(),
        ]);
        Ok(Prepared {
            filter,
            names,
            values,
            fingerprint,
        })
    }

    fn decode_page(&self, page: RawPage, out: &mut Vec<T>) -> Result<(), Error> {
        for item in page.items {
            if self.limit.is_some_and(|l| out.len() >= l) {
                break;
            }
            if let Some(t) = decode_target(item, self.unknown)? {
                out.push(t);
            }
        }
        Ok(())
    }

    fn source(&self) -> Result<Arc<DynamoSource<T::Table>>, Error> {
        self.source_with_page_size(self.page_size)
    }

    fn source_with_page_size(
        &self,
        page_size: Option<usize>,
    ) -> Result<Arc<DynamoSource<T::Table>>, Error> {
        Ok(Arc::new(DynamoSource {
            db: self.db.clone(),
            prepared: self.prepare().map_err(|e| e.during("Scan"))?,
            consistent: self.consistent,
            page_size,
            customize: self.customize.clone(),
        }))
    }

    /// The `Scan` inputs of the first page of each segment (one input without segments),
    /// instead of sending them (like ElectroDB's `.params()`). Later pages send the same
    /// input with `ExclusiveStartKey` set.
    ///
    /// ```
    /// # use dynamo_model::{Entity, Table};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// # #[derive(Entity, serde::Serialize, serde::Deserialize)]
    /// # #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # let db = dynamo_model::Db::<App>::offline("app");
    /// let inputs = db.scan::<User>().segments(4).params()?;
    /// assert_eq!(inputs.len(), 4);
    /// assert_eq!(inputs[3].segment(), Some(3));
    /// assert_eq!(inputs[3].total_segments(), Some(4));
    /// # Ok::<(), dynamo_model::Error>(())
    /// ```
    pub fn params(self) -> Result<Vec<ScanInput>, Error> {
        let source = self.source()?;
        (0..self.segments)
            .map(|i| {
                let segment = (self.segments > 1).then_some((i, self.segments));
                let request = source.request(segment, None);
                super::request::input("Scan", request.as_input().clone().build())
            })
            .collect()
    }

    /// Adjusts the SDK request of every page before it is sent: `hook` receives the
    /// [`ScanFluentBuilder`] as the crate built it and returns it. Hooks run in the order
    /// they were added (also by [`params`](Self::params)).
    ///
    /// A hook that changes the filter, placeholders, segments or start key takes the scan
    /// out of the crate's guarantees (typed results, cursors).
    pub fn customize(
        mut self,
        hook: impl Fn(ScanFluentBuilder) -> ScanFluentBuilder + Send + Sync + 'static,
    ) -> Self {
        self.customize = self.customize.then(hook);
        self
    }

    /// Every matching item (at most `limit`), from all segments.
    pub async fn all(self) -> Result<Page<T>, Error> {
        let mut pages = merged_pages(self.source()?, self.segments, self.budget);
        let mut items = Vec::new();
        let mut consumed = 0.0;
        while let Some(page) = pages.next().await {
            let page = page?;
            consumed += page.consumed;
            self.decode_page(page, &mut items)?;
            if self.limit.is_some_and(|l| items.len() >= l) {
                break;
            }
        }
        Ok(Page {
            items,
            cursor: None,
            consumed_capacity: consumed,
        })
    }

    /// One page of a single-segment scan, starting after `cursor`. Use it to spread a
    /// scan over time (e.g. one page per job run).
    pub async fn page(self, cursor: Option<&Cursor>) -> Result<Page<T>, Error> {
        if self.segments > 1 {
            return Err(Error::invalid(
                T::NAME,
                crate::ValidationReason::InvalidOption,
                "page() reads one segment; use all() or stream() with segments",
            ));
        }
        if self.limit == Some(0) {
            return Ok(Page {
                items: Vec::new(),
                cursor: cursor.cloned(),
                consumed_capacity: 0.0,
            });
        }
        // Read at most `limit` items, so the page's LastEvaluatedKey never skips read items
        // that the limit would drop.
        let page_size = match (self.page_size, self.limit) {
            (Some(p), Some(l)) => Some(p.min(l)),
            (p, l) => p.or(l),
        };
        let source = self.source_with_page_size(page_size)?;
        let fingerprint = source.prepared.fingerprint;
        let start = match cursor {
            Some(c) => Some(
                cursor::decode(c, fingerprint, self.db.cursor_secret()).map_err(|e| {
                    Error::Cursor {
                        target: T::NAME,
                        source: e,
                    }
                })?,
            ),
            None => None,
        };
        let page = source.fetch(None, start).await?;
        let next = page.last_key.clone();
        let consumed = page.consumed;
        let mut items = Vec::new();
        self.decode_page(page, &mut items)?;
        Ok(Page {
            items,
            cursor: next.map(|k| cursor::encode(fingerprint, &k, self.db.cursor_secret())),
            consumed_capacity: consumed,
        })
    }

    /// Every matching item as a stream, fetching pages (from all segments) as it is polled.
    pub fn stream(self) -> impl Stream<Item = Result<T, Error>> + Send + 'static {
        let (unknown, limit) = (self.unknown, self.limit.unwrap_or(usize::MAX));
        match self.source() {
            Err(e) => stream::once(async move { Err(e) }).left_stream(),
            Ok(source) => merged_pages(source, self.segments, self.budget)
                .flat_map(move |page| {
                    let decoded: Vec<Result<T, Error>> = match page {
                        Ok(page) => page
                            .items
                            .into_iter()
                            .filter_map(|item| decode_target(item, unknown).transpose())
                            .collect(),
                        Err(e) => vec![Err(e)],
                    };
                    stream::iter(decoded)
                })
                .take(limit)
                .right_stream(),
        }
    }
}

impl<T: Table> Db<T> {
    /// Scans the table for every item of `X` (an entity or a collection).
    pub fn scan<X: Target<Table = T>>(&self) -> Scan<X> {
        Scan::new(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A table of `per_segment × segments` numbered items, served in pages of `page`,
    /// each page costing `cost` read units.
    struct Fake {
        segments: u32,
        per_segment: usize,
        page: usize,
        cost: f64,
        requests: AtomicUsize,
    }

    impl PageSource for Fake {
        fn fetch(
            &self,
            segment: Option<(u32, u32)>,
            start: Option<Item>,
        ) -> BoxFuture<'_, Result<RawPage, Error>> {
            self.requests.fetch_add(1, Ordering::SeqCst);
            let seg = segment.map(|s| s.0).unwrap_or(0) as usize;
            assert_eq!(segment.map(|s| s.1).unwrap_or(1), self.segments);
            let from = start
                .and_then(|k| {
                    k.get("i")
                        .and_then(|v| v.as_n().ok())
                        .and_then(|n| n.parse::<usize>().ok())
                })
                .map(|i| i + 1)
                .unwrap_or(seg * self.per_segment);
            let end = ((seg + 1) * self.per_segment).min(from + self.page);
            let items: Vec<Item> = (from..end)
                .map(|i| Item::from([("i".to_string(), AttributeValue::N(i.to_string()))]))
                .collect();
            let last_key = (end < (seg + 1) * self.per_segment)
                .then(|| items.last().cloned())
                .flatten();
            let cost = self.cost;
            Box::pin(async move {
                Ok(RawPage {
                    evaluated: items.len(),
                    items,
                    last_key,
                    consumed: cost,
                })
            })
        }
    }

    async fn read_all(fake: Arc<Fake>, budget: Option<f64>) -> Vec<usize> {
        let segments = fake.segments;
        let mut seen: Vec<usize> = merged_pages(fake, segments, budget)
            .map(|p| p.unwrap().items)
            .flat_map(stream::iter)
            .map(|i| i["i"].as_n().unwrap().parse::<usize>().unwrap())
            .collect()
            .await;
        seen.sort_unstable();
        seen
    }

    #[tokio::test]
    async fn segments_are_read_to_the_end_and_merged_without_loss_or_duplicates() {
        let fake = Arc::new(Fake {
            segments: 4,
            per_segment: 23,
            page: 5,
            cost: 0.0,
            requests: AtomicUsize::new(0),
        });
        let seen = read_all(Arc::clone(&fake), None).await;
        assert_eq!(seen, (0..92).collect::<Vec<_>>());
        assert_eq!(fake.requests.load(Ordering::SeqCst), 4 * 5); // ceil(23 / 5) pages per segment
    }

    #[tokio::test(start_paused = true)]
    async fn a_budget_paces_consumed_capacity_across_segments() {
        // 3 segments × 10 pages × 2.5 RCU = 75 RCU at 10 RCU/s, on tokio's paused clock. A
        // page's cost is known only from its response, so each segment's last page may run
        // ahead of the budget: at least (75 - 3 × 2.5) / 10 = 6.75 s.
        let fake = Arc::new(Fake {
            segments: 3,
            per_segment: 50,
            page: 5,
            cost: 2.5,
            requests: AtomicUsize::new(0),
        });
        let started = Instant::now();
        let seen = read_all(fake, Some(10.0)).await;
        assert_eq!(seen.len(), 150);
        let elapsed = started.elapsed();
        assert!(elapsed >= Duration::from_millis(6_750), "{elapsed:?}");
        assert!(elapsed <= Duration::from_secs(8), "{elapsed:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn without_a_budget_nothing_waits() {
        let fake = Arc::new(Fake {
            segments: 2,
            per_segment: 50,
            page: 5,
            cost: 100.0,
            requests: AtomicUsize::new(0),
        });
        let started = Instant::now();
        read_all(fake, None).await;
        assert_eq!(started.elapsed(), Duration::ZERO);
    }
}
