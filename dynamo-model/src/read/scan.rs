//! `Scan`: every item of an entity or collection, of the table or of one of the entity's
//! indexes, in parallel segments, optionally paced to a read-capacity budget.
//!
//! Scans read the whole table and cost capacity for every item read, filtered or not:
//! prefer queries. When a scan is needed (exports, migrations), keep `page_size` small, split
//! it into segments for large tables, and give it a budget so it cannot starve the
//! application's own reads.

use super::dynamodb::{Expressions, Request, ScanOp};
use super::pager::{self, Ask};
use super::projection::{self, KeyNames};
use crate::collection::{Includes, Target};
use crate::cursor::{self, Cursor, Fingerprint};
use crate::expr::guard::and_opt;
use crate::expr::{Node, Placeholders};
use crate::keyspace::sort::{InIndex, KeySpace, Primary};
use crate::request::Customize;
use crate::request::page::{Page, UnknownEntity, decode_target};
use crate::schema::IndexSchema;
use crate::{Condition, Db, Entity, Error, Key, ValidationReason};
use aws_sdk_dynamodb::operation::scan::ScanInput;
use aws_sdk_dynamodb::operation::scan::builders::ScanFluentBuilder;
use futures_util::stream::{self, Stream, StreamExt};
use std::marker::PhantomData;
use std::sync::Arc;

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
///
/// **Index scans** ([`index`](Scan::index)) read one of the entity's indexes instead of the
/// table, e.g. every item of a sparse index (see [`Scan::index`]).
#[must_use = "a scan does nothing until all(), page() or stream() is awaited"]
pub struct Scan<T: Target, K: KeySpace = Primary> {
    db: Db<T::Table>,
    customize: Customize<ScanFluentBuilder>,
    /// The index scanned (`None`: the table), as `K` names it.
    index: Option<&'static IndexSchema>,
    _key_space: PhantomData<fn() -> K>,
    /// `ProjectionExpression` attributes, when only a view's are read.
    projection: Option<&'static [&'static str]>,
    /// Why the scan cannot be sent (a view of another entity type).
    refusal: Option<(ValidationReason, String)>,
    filter: Option<Node>,
    page_size: Option<usize>,
    segments: u32,
    budget: Option<f64>,
    consistent: bool,
    limit: Option<usize>,
    unknown: UnknownEntity,
    exclude_expired: bool,
}

/// The prepared Scan request of every request, and the fingerprint its cursors are bound to.
struct ScanSource<X: crate::Table> {
    request: Request<X, ScanOp>,
    fingerprint: Fingerprint,
    /// Every attribute of `LastEvaluatedKey` (table key plus index key).
    cursor_names: Vec<&'static str>,
}

impl<T: Target> Scan<T> {
    pub(crate) fn new(db: &Db<T::Table>) -> Self {
        Scan {
            db: db.clone(),
            customize: Customize::default(),
            index: None,
            _key_space: PhantomData,
            projection: None,
            refusal: None,
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

    /// Scans index `S` (the marker type `#[derive(Table)]` generates per index, e.g.
    /// `AppGsi1` for index `GSI1` of table `App`) instead of the table: only the items that
    /// carry the index's keys, which for a sparse index are the few whose template fields
    /// are present. Only an index the entity has a template for can be named
    /// ([`InIndex`]). Everything else stays as for a table scan: decoding, the entity-type
    /// filter (where the index projects the entity-type attribute), segments, cursors,
    /// [`params`](Scan::params) and [`explain`](Scan::explain). An index that does not
    /// project what decoding needs is refused before sending: read it through
    /// [`project`](Scan::project) (a view of the projected attributes) or
    /// [`keys_only`](Scan::keys_only).
    ///
    /// ```
    /// # use dynamo_model::{Entity, Table};
    /// # use serde::{Deserialize, Serialize};
    /// #[derive(Table)]
    /// #[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
    /// struct App;
    ///
    /// /// Escalated complaints carry `escalated_to`, and only they are in `GSI1`.
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[dynamo(table = App, pk = "COMPLAINT#{id}", sk = "COMPLAINT",
    ///          index(GSI1, pk = "ESCALATED#{escalated_to}", sk = "{id}"))]
    /// struct Complaint { id: String, escalated_to: Option<String> }
    ///
    /// # let db = dynamo_model::Db::<App>::offline("app");
    /// let escalated = db.scan::<Complaint>().index::<AppGsi1>().segments(2);
    /// let inputs = escalated.params()?;
    /// assert_eq!(inputs[0].index_name(), Some("GSI1"));
    /// assert_eq!(inputs[1].segment(), Some(1));
    /// # Ok::<(), dynamo_model::Error>(())
    /// ```
    pub fn index<S: KeySpace>(self) -> Scan<T, S>
    where
        T: InIndex<S>,
    {
        let mut scan = self.retarget::<T, S>();
        scan.index = S::index::<<T as Target>::Table>();
        if scan.index.is_none() {
            scan.refusal = Some((
                ValidationReason::WrongKeySpace,
                format!(
                    "the table does not declare index `{}`",
                    S::INDEX.unwrap_or_default()
                ),
            ));
        }
        scan
    }
}

impl<T: Target, K: KeySpace> Scan<T, K> {
    /// Keeps only items matching `condition` (read capacity is still consumed for the
    /// items it drops).
    pub fn filter<E: Entity>(mut self, condition: Condition<E>) -> Self
    where
        T: Includes<E>,
    {
        self.filter = and_opt(self.filter.take(), Some(condition.node));
        self
    }

    crate::setters::setters! {
        /// Items read per request (DynamoDB `Limit`; a response also stops at 1 MB). A small
        /// page size keeps each request's capacity burst small.
        page_size(n: usize) => page_size = Some(n.max(1));
        /// Splits the scan into `n` segments read concurrently (parallel scan; DynamoDB
        /// allows 1 to 1,000,000). Results arrive in no particular order.
        segments(n: u32) => segments = n.clamp(1, 1_000_000);
        /// Paces requests, across all segments, so that consumed read capacity stays under
        /// `units` per second on average. The cost of a request is what DynamoDB reports in
        /// its response, so at most one request per segment can run ahead of the budget: keep
        /// `page_size` small for a tight bound.
        max_read_units_per_second(units: f64) => budget = (units.is_finite() && units > 0.0).then_some(units);
        /// Leaves out items whose TTL has passed (DynamoDB deletes them only eventually).
        exclude_expired() => exclude_expired = true;
        /// Strongly consistent reads.
        consistent() => consistent = true;
        /// Stop after `n` matching items.
        limit(n: usize) => limit = Some(n);
        /// Items of entity types outside the target: skipped (default; filtered on the
        /// server) or an error (then every item is read and checked).
        on_unknown(policy: UnknownEntity) => unknown = policy;
    }

    /// Returns the typed keys of the items instead of the items: what an index projecting
    /// only keys (`KEYS_ONLY`) holds.
    ///
    /// ```
    /// # use dynamo_model::{Entity, Table};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Table)]
    /// # #[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK", projection = keys_only))]
    /// # struct App;
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE", index(GSI1, pk = "EMAIL#{email}", sk = "USER"))]
    /// # struct User { id: String, email: Option<String> }
    /// # let db = dynamo_model::Db::<App>::offline("app");
    /// // The index holds keys only: the whole entity is refused, its keys are not.
    /// assert!(db.scan::<User>().index::<AppGsi1>().params().is_err());
    /// assert!(db.scan::<User>().index::<AppGsi1>().keys_only().params().is_ok());
    /// # Ok::<(), dynamo_model::Error>(())
    /// ```
    pub fn keys_only(self) -> Scan<Key<T>, K>
    where
        T: Entity<Table = <T as Target>::Table>,
    {
        self.retarget()
    }

    /// Reads only the attributes of `V`, a partial view of `T` (an entity with the same
    /// entity type and key templates and a subset of the fields), as
    /// [`Query::project`](super::Query::project) does: how an index that projects only some
    /// attributes (`INCLUDE`) is read.
    ///
    /// ```
    /// # use dynamo_model::{Entity, Table};
    /// # use serde::{Deserialize, Serialize};
    /// #[derive(Table)]
    /// #[dynamo(pk = "PK", sk = "SK",
    ///          gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK", projection(include = ["_type", "id", "total"])))]
    /// struct App;
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[dynamo(table = App, pk = "ORDER#{id}", sk = "ORDER", index(GSI1, pk = "ORDERS", sk = "{id}"))]
    /// struct Order { id: String, total: u64, notes: String }
    ///
    /// /// What `GSI1` projects of an order.
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[dynamo(table = App, pk = "ORDER#{id}", sk = "ORDER", entity_type = "Order")]
    /// struct OrderTotal { id: String, total: u64 }
    ///
    /// # let db = dynamo_model::Db::<App>::offline("app");
    /// let scan = || db.scan::<Order>().index::<AppGsi1>();
    /// assert!(scan().params().is_err()); // `notes` is not in the index
    /// let inputs = scan().project::<OrderTotal>().params()?;
    /// assert!(inputs[0].projection_expression().is_some());
    /// # Ok::<(), dynamo_model::Error>(())
    /// ```
    pub fn project<V>(self) -> Scan<V, K>
    where
        T: Entity<Table = <T as Target>::Table>,
        V: Entity<Table = <T as Target>::Table>,
    {
        let mut scan = self.retarget::<V, K>();
        scan.projection = Some(V::ATTRIBUTES);
        if T::ENTITY_TYPE != V::ENTITY_TYPE {
            scan.refusal = Some((
                ValidationReason::InvalidOption,
                format!(
                    "the view `{}` has entity type `{}`, not `{}` of the scanned entity: a view must have the entity type of what it reads",
                    std::any::type_name::<V>(),
                    V::ENTITY_TYPE,
                    T::ENTITY_TYPE
                ),
            ));
        }
        scan
    }

    /// The same scan, decoding its results as `U` from key space `S`.
    fn retarget<U: Target<Table = T::Table>, S: KeySpace>(self) -> Scan<U, S> {
        Scan {
            db: self.db,
            customize: self.customize,
            index: self.index,
            _key_space: PhantomData,
            projection: self.projection,
            refusal: self.refusal,
            filter: self.filter,
            page_size: self.page_size,
            segments: self.segments,
            budget: self.budget,
            consistent: self.consistent,
            limit: self.limit,
            unknown: self.unknown,
            exclude_expired: self.exclude_expired,
        }
    }

    /// What every request sends, after the checks of what the table or index can answer.
    fn source(&self) -> Result<ScanSource<T::Table>, Error> {
        self.prepare().map_err(|e| e.during("Scan"))
    }

    fn prepare(&self) -> Result<ScanSource<T::Table>, Error> {
        if let Some((reason, message)) = &self.refusal {
            return Err(Error::invalid(T::NAME, *reason, message.clone()));
        }
        projection::check_projection::<T>(self.index, self.projection)?;
        projection::check_options::<T>(self.index, self.consistent, self.exclude_expired)?;
        let type_filter = match self.unknown {
            UnknownEntity::Skip => projection::type_filter::<T>(self.index),
            _ => None,
        };
        let expiry = if self.exclude_expired {
            crate::expr::guard::not_expired::<T::Table>()
        } else {
            None
        };
        let node = and_opt(and_opt(type_filter, expiry), self.filter.clone());
        let mut p = Placeholders::default();
        let filter = match &node {
            Some(node) => Some(crate::expr::guard::render_for(T::NAME, &mut p, node)?),
            None => None,
        };
        let keys = KeyNames::of::<T::Table>(self.index);
        let view = projection::view_expression::<T::Table>(
            &mut p,
            self.index,
            self.projection,
            &keys.cursor,
        );
        let filter_bytes = filter.as_deref().unwrap_or("").as_bytes();
        let table = self.db.table_name().as_bytes();
        // A table scan's cursors keep the bytes they always had; an index scan's are bound
        // to the index too.
        let fingerprint = match self.index {
            None => Fingerprint::of(&[b"scan", table, T::NAME.as_bytes(), filter_bytes]),
            Some(index) => Fingerprint::of(&[
                b"scan-index",
                table,
                index.name.as_bytes(),
                T::NAME.as_bytes(),
                filter_bytes,
            ]),
        };
        let mut expressions = Expressions::filtered(filter, p.finish());
        expressions.projection = view;
        Ok(ScanSource {
            request: Request {
                db: self.db.clone(),
                expressions,
                consistent: self.consistent,
                operation: ScanOp {
                    index: self.index.map(|i| i.name),
                    customize: self.customize.clone(),
                },
                reads: crate::read::dynamodb::Reads {
                    entity: crate::collection::single_entity::<T>(),
                    partition: None,
                },
            },
            fingerprint,
            cursor_names: keys.cursor,
        })
    }

    /// The `Scan` inputs of the first request of each segment (one input without segments)
    /// as [`all`](Self::all) and [`stream`](Self::stream) send them, instead of sending
    /// them (like ElectroDB's `.params()`). Later requests send the same input with
    /// `ExclusiveStartKey` set; [`page`](Self::page) also caps `Limit` at the `limit`.
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
        self.inputs()
    }

    /// What this scan will send and what a page may cost, without sending anything (see
    /// [`Query::explain`](super::Query::explain)): one input per segment, as
    /// [`params`](Scan::params) returns them, and a page's items and read units summed
    /// over the segments. With an [`Insight`](crate::insight::Insight) attached to the
    /// `Db`, also how much the filter (with the entity-type filter the crate adds) dropped
    /// and how often a scan of this shape runs.
    pub fn explain(&self) -> Result<crate::insight::Explain, Error> {
        let observed = crate::request::observations(&self.db);
        let reading = crate::insight::explain::Reading::of::<T>(self.index);
        Ok(crate::insight::Explain::scan(
            reading,
            self.inputs()?,
            observed,
        ))
    }

    /// The first input of each segment.
    fn inputs(&self) -> Result<Vec<ScanInput>, Error> {
        let source = self.source()?;
        (0..self.segments)
            .map(|i| {
                let request = source.request.builder(Ask {
                    segment: (self.segments > 1).then_some((i, self.segments)),
                    start: None,
                    limit: pager::first_limit(self.page_size, None),
                });
                crate::request::input("Scan", request.as_input().clone().build())
            })
            .collect()
    }

    /// The operation span of this scan (see [`crate::trace`]).
    fn span(&self) -> crate::trace::Span {
        crate::request::page::read_span(
            "Scan",
            self.db.table_name(),
            T::NAME,
            self.consistent,
            (self.page_size, self.limit),
        )
    }

    /// Every matching item (at most `limit`), from all segments.
    pub async fn all(self) -> Result<Page<T>, Error> {
        crate::request::page::traced_page(self.span(), self.all_untraced()).await
    }

    /// The responses of every segment, read in parallel under the scan's budget.
    fn responses(
        &self,
        source: ScanSource<T::Table>,
    ) -> pager::Merged<impl Stream<Item = Result<pager::Response, Error>> + Send + Unpin + use<T, K>>
    {
        let starts = vec![crate::cursor::Position::Start; self.segments as usize];
        pager::Merged::new(pager::parallel(
            Arc::new(source.request),
            starts,
            self.page_size,
            self.budget,
            |_, _, response| std::future::ready(Ok(response)),
        ))
    }

    async fn all_untraced(self) -> Result<Page<T>, Error> {
        let mut responses = self.responses(self.source()?);
        let unknown = self.unknown;
        let reading = pager::Reading::default();
        let collected = pager::read(&mut responses, reading, self.limit, false, |item| {
            decode_target(item, unknown, self.db.keys())
        })
        .await?;
        Ok(Page::read(collected.items, None, collected.tally))
    }

    /// One page of a single-segment scan, starting after `cursor`: one request reading at
    /// most `page_size` (and at most `limit`) items, of which the matching ones are
    /// returned; the cursor continues after the last item read. Use it to spread a scan
    /// over time (e.g. one page per job run): each call costs one bounded request.
    pub async fn page(self, cursor: Option<&Cursor>) -> Result<Page<T>, Error> {
        crate::request::page::traced_page(self.span(), self.page_untraced(cursor)).await
    }

    async fn page_untraced(self, cursor: Option<&Cursor>) -> Result<Page<T>, Error> {
        if self.segments > 1 {
            return Err(Error::invalid(
                T::NAME,
                crate::ValidationReason::InvalidOption,
                "page() reads one segment; use all() or stream() with segments",
            ));
        }
        let source = self.source()?;
        let fingerprint = source.fingerprint;
        let start = match cursor {
            Some(c) => Some(
                cursor::decode(c, fingerprint, self.db.cursor_secret()).map_err(|e| {
                    Error::Cursor {
                        target: T::NAME,
                        reason: e,
                    }
                })?,
            ),
            None => None,
        };
        if self.limit == Some(0) {
            // Nothing asked for: stay where we are (a request would skip an item).
            return Ok(Page::empty(cursor.cloned()));
        }
        // One request per call, reading at most `limit` items: a page never reads more
        // than it can return, and a job paging through the table stays within its pace.
        let page_size = match (self.page_size, self.limit) {
            (Some(p), Some(l)) => Some(p.min(l)),
            (p, l) => p.or(l),
        };
        let reading = pager::Reading {
            page_size,
            max_requests: Some(1),
            cursor_names: &source.cursor_names,
        };
        let unknown = self.unknown;
        let collected = pager::collect(&source.request, reading, start, self.limit, true, |item| {
            decode_target(item, unknown, self.db.keys())
        })
        .await?;
        Ok(collected.into_page(fingerprint, self.db.cursor_secret()))
    }

    /// Every matching item as a stream, sending requests (to all segments) as it is polled.
    pub fn stream(self) -> impl Stream<Item = Result<T, Error>> + Send + 'static {
        let (unknown, limit) = (self.unknown, self.limit.unwrap_or(usize::MAX));
        let keys = self.db.shared_keys();
        let span = self.span();
        let items = match self.source() {
            Err(e) => stream::once(async move { Err(e) }).left_stream(),
            Ok(source) => {
                let responses = self.responses(source);
                // The read loop one response at a time; an item that does not decode, or
                // a request that fails, is an error in the stream's place, and the read
                // goes on.
                stream::unfold(responses, move |mut responses| {
                    let keys = keys.clone();
                    async move {
                        if responses.is_over() {
                            return None;
                        }
                        let reading = pager::Reading::default();
                        let read = pager::read(&mut responses, reading, None, true, |item| {
                            Ok(decode_target(item, unknown, keys.as_deref()).transpose())
                        });
                        let items = match read.await {
                            Ok(collected) => collected.items,
                            Err(e) => vec![Err(e)],
                        };
                        Some((stream::iter(items), responses))
                    }
                })
                .flatten()
                .take(limit)
                .right_stream()
            }
        };
        crate::trace::stream(span, items)
    }
}

impl<T: crate::Table> Db<T> {
    /// Scans the table for every item of `X` (an entity or a collection); see [`Scan`],
    /// and [`Scan::index`] for a scan of one of the entity's indexes.
    pub fn scan<X: Target<Table = T>>(&self) -> Scan<X> {
        Scan::new(self)
    }
}

crate::request::customizable!(
    impl[T: Target, K: KeySpace] Scan<T, K>,
    ScanFluentBuilder,
    "of every request before it is sent",
    "A hook that changes the filter, placeholders, segments or start key takes the scan out of the crate's guarantees (typed results, cursors)."
);
