//! `ScatterQuery`: one query over many partitions (the shards of a hot partition key),
//! run on all of them concurrently and merged in sort-key order, with one cursor.
//!
//! Every partition is read with the request a [`Query`] of it sends (the same key
//! condition, filter, projection, decoding and checks); the merge itself is
//! [`merge`](super::merge).

use super::key_condition::{IntoPartition, IntoSortKey, PartitionValue};
use super::merge::{Keep, Merge, Settings, Step};
use super::query::{Query, QuerySource, hydrate_page};
use crate::collection::{Includes, Target};
use crate::cursor::{self, Cursor, Fingerprint, Position};
use crate::expr::Placeholders;
use crate::key::KeyError;
use crate::keyspace::sort::{KeySpace, Primary};
use crate::request::page::{Page, UnknownEntity, decode_target};
use crate::{Condition, Db, Entity, Error, Item, Key, Table};
use aws_sdk_dynamodb::operation::query::QueryInput;
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::types::AttributeValue;
use futures_util::stream::{self, Stream};
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

/// How many requests a [`ScatterQuery`] has in flight at once unless told otherwise
/// ([`ScatterQuery::concurrency`]): 16, so the first requests to up to 16 partitions (a
/// common shard count) are answered in one round trip. DynamoDB serves each partition on
/// its own, so more requests at once cost no more capacity, only connections and memory (a
/// partition buffers at most two responses, 1 MB each at most).
pub const DEFAULT_SCATTER_CONCURRENCY: usize = 16;

/// A query of many partitions of one entity (or collection) merged into one read: the
/// same key condition and filter on every partition, run concurrently, the items in
/// sort-key order across all of them; see [`Db::scatter_query`].
///
/// It has the methods of [`Query`] and behaves like a query of one partition holding
/// every partition's items:
/// - **Order**: by sort key as DynamoDB orders it (strings and binary by their bytes,
///   numbers by value, a multi-attribute key attribute by attribute), descending with
///   [`reverse`](Self::reverse). Items with equal sort keys in several partitions come in
///   the order of the partitions as given (reversed with `reverse`), so a reversed read is
///   the forward read backwards.
/// - **Limit**: [`limit(n)`](Self::limit) returns the first `n` matching items overall. A
///   partition is read only while its next item can still be among them, and each
///   request asks for no more items than could still be needed from its partition, so a
///   small limit reads a response or so of each partition, not all of them.
/// - **Pages and cursors**: [`page`](Self::page) returns items and one cursor holding every
///   partition's position (after the last item returned from it, or exhausted), bound to
///   this query (table, index, target, every partition in order, their number, the key
///   condition, the filter, the direction) and checksummed like a [`Query`]'s cursor; a
///   cursor of another query (another partition list or shard count included) or an
///   altered one is refused with [`Error::Cursor`]. Page after page gives exactly the
///   merged sequence. Without a limit, a page reads each partition at most once.
/// - **Stream**: [`stream`](Self::stream) yields each item as soon as it is known to be
///   next, reading ahead while the caller works.
/// - **Reading ahead**: a partition's next response is asked for while its current one is
///   being merged (so a partition buffers at most two responses); with a limit, only once
///   every partition has answered once, and only for partitions whose next item can
///   still be among the first `limit`. Items read but not returned by a page are read
///   again by the next one.
/// - **Capacity**: a page's capacity is the sum over every request that completed for it.
///   Requests still in flight when a page has its items (reads ahead) are dropped, and
///   their capacity is not counted.
///
/// Requests run as tasks of the current Tokio runtime, at most
/// [`concurrency`](Self::concurrency) at once ([`DEFAULT_SCATTER_CONCURRENCY`]).
/// [`Query::max_pages`] has no counterpart: a page without a limit already sends at most
/// one request per partition.
///
/// ```no_run
/// # use dynamo_model::{Db, Entity, Table};
/// # use futures_util::TryStreamExt;
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
/// /// One day of orders, spread over 16 partitions.
/// #[derive(Entity, Serialize, Deserialize)]
/// #[dynamo(table = App, pk = "ORDERS#{day}#{shard}", sk = "{placed_at}#{order_id}")]
/// struct Order { day: String, shard: u8, placed_at: u64, order_id: String, total: u64 }
///
/// # async fn demo(db: Db<App>) -> Result<(), dynamo_model::Error> {
/// let day = || {
///     (0..16u8).map(|shard| Order::partition(OrderPartition { day: "2026-11-03", shard }))
/// };
/// // The latest orders of the day over 100, across all shards, 50 a page.
/// let latest = || {
///     db.scatter_query(day())
///         .sk(Order::sk().placed_at().ge(1_700_000_000u64))
///         .filter(Order::fields().total.gt(100u64))
///         .reverse()
///         .limit(50)
/// };
/// let page = latest().page(None).await?;
/// // The next 50, from the cursor (a string to hand to a client and take back).
/// let next = latest().page(page.cursor.as_ref()).await?;
/// // Every order of the day, in order, each as soon as it is known to be next.
/// let all: Vec<Order> = db.scatter_query(day()).stream().try_collect().await?;
/// # Ok(()) }
/// ```
#[must_use = "a scatter query does nothing until one of all(), page() or stream() is awaited"]
pub struct ScatterQuery<T: Target, K: KeySpace = Primary> {
    /// The query every partition runs (its own partition is the first of the list).
    query: Query<T, K>,
    partitions: Vec<Result<PartitionValue, KeyError>>,
    concurrency: usize,
}

/// The requests of a scatter query, one per partition, and the fingerprint binding its
/// cursors.
struct Plan<X: Table> {
    sources: Vec<QuerySource<X>>,
    fingerprint: Fingerprint,
}

impl<E: Entity, K: KeySpace> ScatterQuery<E, K> {
    fn new<P: IntoPartition<E, K>>(
        db: &Db<E::Table>,
        partitions: impl IntoIterator<Item = P>,
    ) -> Self {
        let mut partitions = partitions.into_iter().map(|p| p.into_partition());
        let Some((first, default_sk)) = partitions.next() else {
            // Refused when sent (see `plan`); the query only carries the settings.
            let query = Query::from_partition(
                db,
                Ok(PartitionValue::Rendered(String::new())),
                super::SortCondition::any(),
                None,
            );
            return ScatterQuery {
                query,
                partitions: Vec::new(),
                concurrency: DEFAULT_SCATTER_CONCURRENCY,
            };
        };
        let query = Query::<E, K>::from_partition(db, first, default_sk, None);
        // Every partition as the query reads it (a versioned entity's inverted index
        // reads its latest copies), as the first one is.
        let rest: Vec<_> = partitions
            .map(|(pk, _)| query.latest_partition_of(pk))
            .collect();
        let mut all = Vec::with_capacity(rest.len() + 1);
        all.push(query.pk.clone());
        all.extend(rest);
        ScatterQuery {
            query,
            partitions: all,
            concurrency: DEFAULT_SCATTER_CONCURRENCY,
        }
    }
}

impl<T: Target, K: KeySpace> ScatterQuery<T, K> {
    /// The same read with the query `change` makes.
    fn with<U: Target<Table = T::Table>>(
        self,
        change: impl FnOnce(Query<T, K>) -> Query<U, K>,
    ) -> ScatterQuery<U, K> {
        ScatterQuery {
            query: change(self.query),
            partitions: self.partitions,
            concurrency: self.concurrency,
        }
    }

    /// At most `n` requests in flight at once (at least 1; default
    /// [`DEFAULT_SCATTER_CONCURRENCY`]).
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// Restricts the sort key on every partition (see [`Query::sk`]).
    pub fn sk(self, condition: impl IntoSortKey<T, K>) -> Self {
        self.with(|q| q.sk(condition))
    }

    /// Keeps only items matching `condition` on every partition (see [`Query::filter`]).
    pub fn filter<E: Entity>(self, condition: Condition<E>) -> Self
    where
        T: Includes<E>,
    {
        self.with(|q| q.filter(condition))
    }

    /// Descending sort-key order across all partitions (see [`Query::reverse`]).
    pub fn reverse(self) -> Self {
        self.with(Query::reverse)
    }

    /// The first `n` matching items across all partitions (see [`Query::limit`]).
    pub fn limit(self, n: usize) -> Self {
        self.with(|q| q.limit(n))
    }

    /// Items read per request (DynamoDB `Limit`) of every partition.
    pub fn page_size(self, n: usize) -> Self {
        self.with(|q| q.page_size(n))
    }

    /// Strongly consistent reads (see [`Query::consistent`]).
    pub fn consistent(self) -> Self {
        self.with(Query::consistent)
    }

    /// Leaves out items whose TTL has passed (see [`Query::exclude_expired`]).
    pub fn exclude_expired(self) -> Self {
        self.with(Query::exclude_expired)
    }

    /// What to do with items of entity types outside a collection (see
    /// [`Query::on_unknown`]).
    pub fn on_unknown(self, policy: UnknownEntity) -> Self {
        self.with(|q| q.on_unknown(policy))
    }

    /// Reads the partitions as collection `C` (see [`Query::collection`]).
    pub fn collection<C>(self) -> ScatterQuery<C, K>
    where
        T: Entity,
        C: Target<Table = <T as Target>::Table> + Includes<T>,
    {
        self.with(Query::collection)
    }

    /// Returns the typed keys of the matching items (see [`Query::keys_only`]);
    /// [`hydrate`](ScatterQuery::hydrate) turns a page of them into whole items.
    pub fn keys_only(self) -> ScatterQuery<Key<T>, K>
    where
        T: Entity<Table = <T as Target>::Table>,
    {
        self.with(Query::keys_only)
    }

    /// Reads only the attributes of the view `V` (see [`Query::project`]).
    pub fn project<V>(self) -> ScatterQuery<V, K>
    where
        T: Entity<Table = <T as Target>::Table>,
        V: Entity<Table = <T as Target>::Table>,
    {
        self.with(Query::project)
    }

    /// Adjusts every partition's SDK request before it is sent (see
    /// [`Query::customize`]). A hook that changes the key condition, filter, projection,
    /// placeholders, limit, direction or start key takes the read out of the crate's
    /// guarantees (order, limits, cursors).
    pub fn customize(
        self,
        hook: impl Fn(QueryFluentBuilder) -> QueryFluentBuilder + Send + Sync + 'static,
    ) -> Self {
        self.with(|q| q.customize(hook))
    }

    /// Each partition's request, checked, and the fingerprint of the whole read.
    fn plan(&self) -> Result<Plan<T::Table>, Error> {
        if self.partitions.is_empty() {
            return Err(Error::invalid(
                T::NAME,
                crate::ValidationReason::InvalidOption,
                "a scatter query needs at least one partition",
            )
            .during("Query"));
        }
        let sources = self
            .partitions
            .iter()
            .map(|pk| self.query.source_with(pk))
            .collect::<Result<Vec<_>, Error>>()?;
        // A partition's fingerprint covers its partition value; the same value twice
        // would return its items twice.
        let mut seen = HashSet::new();
        for (i, source) in sources.iter().enumerate() {
            if !seen.insert(source.prepared.fingerprint.as_bytes().to_vec()) {
                return Err(Error::invalid(
                    T::NAME,
                    crate::ValidationReason::DuplicateKey,
                    format!(
                        "partition {i} of the scatter query is listed before: its items would be returned twice"
                    ),
                )
                .during("Query"));
            }
        }
        let count = (sources.len() as u64).to_be_bytes();
        let filter = self.filter_bytes()?;
        let mut parts: Vec<&[u8]> = vec![b"scatter", &count, &filter];
        // Each partition's own fingerprint: table, index, target, partition and sort-key
        // condition, direction.
        parts.extend(sources.iter().map(|s| s.prepared.fingerprint.as_bytes()));
        Ok(Plan {
            fingerprint: Fingerprint::of(&parts),
            sources,
        })
    }

    /// The caller's filter as bytes for the fingerprint: rendered alone (placeholders
    /// numbered from zero), its names and values in a canonical order, and whether
    /// expired items are left out (that filter's value is the time of each request, so
    /// only the choice is bound).
    fn filter_bytes(&self) -> Result<Vec<u8>, Error> {
        let mut out = vec![u8::from(self.query.exclude_expired)];
        let Some(node) = &self.query.filter else {
            return Ok(out);
        };
        let mut p = Placeholders::default();
        let expression =
            crate::expr::guard::render_for(T::NAME, &mut p, node).map_err(|e| e.during("Query"))?;
        let (names, values) = p.finish();
        put(&mut out, expression.as_bytes());
        let names: BTreeMap<String, String> = names.unwrap_or_default().into_iter().collect();
        for (placeholder, name) in &names {
            put(&mut out, placeholder.as_bytes());
            put(&mut out, name.as_bytes());
        }
        let values: BTreeMap<String, AttributeValue> =
            values.unwrap_or_default().into_iter().collect();
        for (placeholder, value) in &values {
            put(&mut out, placeholder.as_bytes());
            value_bytes(&mut out, value);
        }
        Ok(out)
    }

    /// Where each partition starts: the beginning, or where `cursor` says.
    fn positions(
        &self,
        plan: &Plan<T::Table>,
        cursor: Option<&Cursor>,
    ) -> Result<Vec<Position>, Error> {
        let Some(cursor) = cursor else {
            return Ok(vec![Position::Start; plan.sources.len()]);
        };
        let positions = cursor::decode_positions(
            cursor,
            plan.fingerprint,
            plan.sources.len(),
            self.query.db.cursor_secret(),
        )
        .map_err(|e| Error::Cursor {
            target: T::NAME,
            reason: e,
        })?;
        // The cursor leaves out the partition's own key attributes (the partition list
        // gives them): a position can never leave its partition.
        Ok(positions
            .into_iter()
            .zip(&plan.sources)
            .map(|(position, source)| match position {
                Position::After(mut key) => {
                    for (attr, value) in &source.prepared.pk_check {
                        key.insert((*attr).to_owned(), value.clone());
                    }
                    Position::After(key)
                }
                other => other,
            })
            .collect())
    }

    /// The cursor of `positions`.
    fn cursor(
        &self,
        plan_sources: &[Vec<&'static str>],
        fingerprint: Fingerprint,
        positions: Vec<Position>,
    ) -> Cursor {
        let positions: Vec<Position> = positions
            .into_iter()
            .zip(plan_sources)
            .map(|(position, pk)| match position {
                Position::After(mut key) => {
                    for attr in pk {
                        key.remove(*attr);
                    }
                    Position::After(key)
                }
                other => other,
            })
            .collect();
        cursor::encode_positions(fingerprint, &positions, self.query.db.cursor_secret())
    }

    /// The merged read of `sources` from `positions`.
    fn merge(
        &self,
        sources: Vec<QuerySource<T::Table>>,
        positions: Vec<Position>,
        requests_per_source: Option<usize>,
    ) -> Result<Merge<T>, Error> {
        let first = sources.first().map(|s| &s.prepared);
        let admission = first.map(|p| p.admission());
        let cursor_names = first.map(|p| p.cursor_names.clone()).unwrap_or_default();
        let unknown = self.query.unknown;
        let keys = self.query.db.shared_keys();
        let keep: Keep<T> = Box::new(move |item: Item| {
            if admission.as_ref().is_some_and(|admits| !admits(&item)) {
                return Ok(None);
            }
            decode_target::<T>(item, unknown, keys.as_deref())
        });
        let settings = Settings {
            target: T::NAME,
            operation: "Query",
            sort_names: self.query.key_names()?.sk,
            cursor_names,
            reverse: self.query.reverse,
            page_size: self.query.page_size,
            concurrency: self.concurrency,
            requests_per_source,
        };
        Merge::new(sources.into_iter().map(Arc::new), positions, settings, keep)
    }

    /// Up to `limit` items of the merged read from `positions`, and where it stands.
    async fn read(
        &self,
        plan: Plan<T::Table>,
        positions: Vec<Position>,
        requests_per_source: Option<usize>,
    ) -> Result<Page<T>, Error> {
        let pk_attrs: Vec<Vec<&'static str>> = plan
            .sources
            .iter()
            .map(|s| s.prepared.pk_check.iter().map(|(a, _)| *a).collect())
            .collect();
        let mut merge = self.merge(plan.sources, positions, requests_per_source)?;
        let limit = self.query.limit;
        let mut items = Vec::new();
        while limit.is_none_or(|l| items.len() < l) {
            match merge.next(limit.map(|l| l - items.len())).await {
                Step::Item(item) => items.push(item?),
                Step::End | Step::Stopped => break,
            }
        }
        let cursor = (!merge.exhausted())
            .then(|| self.cursor(&pk_attrs, plan.fingerprint, merge.positions()));
        Ok(Page::read(items, cursor, merge.tally))
    }

    /// Every partition's first `Query` input, in the order of the partitions, instead of
    /// sending them (see [`Query::params`]). Later requests send the same input with
    /// `ExclusiveStartKey` set and a `Limit` of what may still be needed.
    ///
    /// ```
    /// # use dynamo_model::{Entity, Table};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// # #[derive(Entity, serde::Serialize, serde::Deserialize)]
    /// # #[dynamo(table = App, pk = "ORDERS#{day}#{shard}", sk = "{order_id}")]
    /// # struct Order { day: String, shard: u8, order_id: String }
    /// # let db = dynamo_model::Db::<App>::offline("app");
    /// let inputs = db
    ///     .scatter_query((0..4u8).map(|shard| Order::partition(OrderPartition { day: "2026-11-03", shard })))
    ///     .limit(10)
    ///     .params()?;
    /// assert_eq!(inputs.len(), 4);
    /// assert!(inputs.iter().all(|input| input.limit() == Some(10)));
    /// # Ok::<(), dynamo_model::Error>(())
    /// ```
    pub fn params(self) -> Result<Vec<QueryInput>, Error> {
        let plan = self.plan()?;
        plan.sources
            .iter()
            .map(|source| self.query.params_of(source))
            .collect()
    }

    /// All matching items (the first `limit` of them), sending as many requests to each
    /// partition as needed; the cursor continues after them when more may follow.
    pub async fn all(self) -> Result<Page<T>, Error> {
        crate::request::page::traced_page(self.query.span(), self.all_untraced()).await
    }

    async fn all_untraced(self) -> Result<Page<T>, Error> {
        let plan = self.plan()?;
        if self.query.limit == Some(0) {
            return Ok(empty(None));
        }
        let start = vec![Position::Start; plan.sources.len()];
        self.read(plan, start, None).await
    }

    /// One page: up to `limit` items (without a limit: the items known to be next after
    /// one request to each partition), starting after `cursor` (from a previous page of
    /// the *same* scatter query).
    pub async fn page(self, cursor: Option<&Cursor>) -> Result<Page<T>, Error> {
        crate::request::page::traced_page(self.query.span(), self.page_untraced(cursor)).await
    }

    async fn page_untraced(self, cursor: Option<&Cursor>) -> Result<Page<T>, Error> {
        let plan = self.plan()?;
        let positions = self.positions(&plan, cursor)?;
        if self.query.limit == Some(0) {
            // Nothing asked for: stay where we are.
            return Ok(empty(cursor.cloned()));
        }
        let requests_per_source = self.query.limit.is_none().then_some(1);
        self.read(plan, positions, requests_per_source).await
    }

    /// Every matching item (at most `limit`) as a stream, in merged order, each as soon
    /// as it is known to be next.
    pub fn stream(self) -> impl Stream<Item = Result<T, Error>> + Send + 'static
    where
        T: Send,
    {
        // One state per stream, moved from step to step: its size does not matter.
        #[allow(clippy::large_enum_variant)]
        enum State<T: Target, K: KeySpace> {
            Fresh(ScatterQuery<T, K>),
            Running {
                merge: Merge<T>,
                left: Option<usize>,
            },
            Over,
        }
        let span = self.query.span();
        let items = stream::unfold(State::Fresh(self), |state| async move {
            let (mut merge, left) = match state {
                State::Fresh(query) => {
                    let started = query.plan().and_then(|plan| {
                        let start = vec![Position::Start; plan.sources.len()];
                        query.merge(plan.sources, start, None)
                    });
                    match started {
                        Ok(merge) => (merge, query.query.limit),
                        Err(e) => return Some((Err(e), State::Over)),
                    }
                }
                State::Running { merge, left } => (merge, left),
                State::Over => return None,
            };
            if left == Some(0) {
                return None;
            }
            match merge.next(left).await {
                Step::Item(Ok(item)) => Some((
                    Ok(item),
                    State::Running {
                        merge,
                        left: left.map(|l| l - 1),
                    },
                )),
                Step::Item(Err(e)) => Some((Err(e), State::Over)),
                Step::End | Step::Stopped => None,
            }
        });
        crate::trace::stream(span, items)
    }
}

impl<E: Entity, K: KeySpace> ScatterQuery<Key<E>, K> {
    /// One page of keys (as [`page`](ScatterQuery::page)), then the whole items behind
    /// them, fetched with one batch get and returned in the merged order (see
    /// [`Query::hydrate`]).
    pub async fn hydrate(self, cursor: Option<&Cursor>) -> Result<Page<E>, Error> {
        let db = self.query.db.clone();
        let consistent = self.query.consistent;
        let keys = self.page(cursor).await?;
        hydrate_page(&db, consistent, keys).await
    }
}

fn empty<T>(cursor: Option<Cursor>) -> Page<T> {
    Page::empty(cursor)
}

/// Length-prefixed bytes.
fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_be_bytes());
    out.extend_from_slice(bytes);
}

/// An attribute value as bytes that tell every value apart: tagged, length-prefixed,
/// maps in key order, sets in their stored order (DynamoDB compares sets as sets, so two
/// orders of one set bind two cursors: a cursor is refused, never misapplied).
/// A tag, the number of `parts`, then each of them length-prefixed.
fn put_all<'a>(out: &mut Vec<u8>, tag: u8, parts: impl ExactSizeIterator<Item = &'a [u8]>) {
    out.push(tag);
    put(out, &(parts.len() as u64).to_be_bytes());
    for part in parts {
        put(out, part);
    }
}

fn value_bytes(out: &mut Vec<u8>, value: &AttributeValue) {
    match value {
        AttributeValue::S(s) => {
            out.push(b's');
            put(out, s.as_bytes());
        }
        AttributeValue::N(n) => {
            out.push(b'n');
            put(out, n.as_bytes());
        }
        AttributeValue::B(b) => {
            out.push(b'b');
            put(out, b.as_ref());
        }
        AttributeValue::Bool(b) => out.extend_from_slice(&[b'?', u8::from(*b)]),
        AttributeValue::Null(_) => out.push(b'0'),
        AttributeValue::Ss(set) => put_all(out, b'S', set.iter().map(|s| s.as_bytes())),
        AttributeValue::Ns(set) => put_all(out, b'N', set.iter().map(|n| n.as_bytes())),
        AttributeValue::Bs(set) => put_all(out, b'B', set.iter().map(|b| b.as_ref())),
        AttributeValue::L(list) => {
            out.push(b'L');
            put(out, &(list.len() as u64).to_be_bytes());
            for v in list {
                value_bytes(out, v);
            }
        }
        AttributeValue::M(map) => {
            out.push(b'M');
            put(out, &(map.len() as u64).to_be_bytes());
            let sorted: BTreeMap<&String, &AttributeValue> = map.iter().collect();
            for (k, v) in sorted {
                put(out, k.as_bytes());
                value_bytes(out, v);
            }
        }
        other => {
            // A variant newer than this code: its debug text (no map inside to reorder).
            out.push(b'?');
            put(out, format!("{other:?}").as_bytes());
        }
    }
}

impl<T: Table> Db<T> {
    /// Queries many partitions of entity `E` as one: the same key condition and filter
    /// on each (by default every item of `E` in it), run concurrently, merged in
    /// sort-key order, with one cursor for the whole read; see [`ScatterQuery`].
    ///
    /// The partitions are those of a sharded key, e.g. one day's orders written over 16
    /// partitions to spread a hot key, given in any fixed order (it breaks ties between
    /// equal sort keys and binds cursors). A partition listed twice is refused
    /// ([`ValidationReason::DuplicateKey`](crate::ValidationReason::DuplicateKey)), and so is
    /// an empty list ([`InvalidOption`](crate::ValidationReason::InvalidOption)).
    ///
    /// ```no_run
    /// # use dynamo_model::{Db, Entity, Table};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[dynamo(table = App, pk = "EVENTS#{day}#{shard}", sk = "{at}#{event_id}")]
    /// struct Event { day: String, shard: u8, at: u64, event_id: String }
    ///
    /// # async fn demo(db: Db<App>) -> Result<(), dynamo_model::Error> {
    /// let newest = db
    ///     .scatter_query((0..10u8).map(|shard| Event::partition(EventPartition { day: "2014-07-09", shard })))
    ///     .reverse()
    ///     .limit(20)
    ///     .all()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn scatter_query<E, K, P>(
        &self,
        partitions: impl IntoIterator<Item = P>,
    ) -> ScatterQuery<E, K>
    where
        E: Entity<Table = T>,
        K: KeySpace,
        P: IntoPartition<E, K>,
    {
        ScatterQuery::new(self, partitions)
    }
}

mod explain;

#[cfg(test)]
mod tests;
