//! `Query`: typed key conditions, filters, direction, limits that count matching items,
//! pagination with bound cursors, and a stream over all pages.

use super::key_condition::{IntoPartition, IntoSortKey, PartitionValue, SortCondition};
use crate::collection::{Includes, Target};
use crate::cursor::{Cursor, Fingerprint};
use crate::expr::Node;
use crate::key::KeyError;
use crate::keyspace::sort::{KeySpace, Primary, SortKeyRange};
use crate::request::Customize;
use crate::request::page::{Page, UnknownEntity};
use crate::schema::IndexSchema;
use crate::{Condition, Db, Entity, Error, Key, Table};
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::types::AttributeValue;
use std::marker::PhantomData;

/// A `Query` request; see [`Db::query`] and [`Query::collection`].
///
/// The examples below share this model:
///
/// ```
/// # use dynamo_model::{Entity, Table};
/// # use serde::{Deserialize, Serialize};
/// #[derive(Table)]
/// #[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
/// struct App;
///
/// #[derive(Entity, Serialize, Deserialize)]
/// #[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{placed_at}#{order_id}",
///          index(GSI1, pk = "STATUS#{status}", sk = "{placed_at}"))]
/// struct Order { user_id: String, order_id: String, placed_at: u64, status: String, tags: Vec<String>, note: Option<String> }
///
/// #[derive(Entity, Serialize, Deserialize)]
/// #[dynamo(table = App, pk = "STORE", sk = "{country}#{region}#{city}")]
/// struct Store { country: String, region: String, city: String }
/// ```
///
/// **Sort-key conditions** come from the generated `Type::sk()` chain: fix whole leading
/// components (`begins_with`, never matching a longer value of the last fixed
/// component), all of them (`=`), or end with a range on the next component:
///
/// ```no_run
/// # use dynamo_model::{Db, Entity, Table};
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{placed_at}#{order_id}")]
/// # struct Order { user_id: String, order_id: String, placed_at: u64 }
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[dynamo(table = App, pk = "STORE", sk = "{country}#{region}#{city}")]
/// # struct Store { country: String, region: String, city: String }
/// # async fn demo(db: Db<App>) -> Result<(), dynamo_model::Error> {
/// let q = || db.query(Order::partition("u-1"));
/// q().all().await?;                                                       // begins_with(SK, "ORDER#")
/// q().sk(Order::sk().placed_at().eq(5u64)).all().await?;                  // begins_with "ORDER#<5>#"
/// q().sk(Order::sk().placed_at().eq(5u64).order_id().eq("o-1")).all().await?; // SK = the full key
/// q().sk(Order::sk().placed_at().lt(5u64)).all().await?;                  // also .le, .gt, .ge
/// q().sk(Order::sk().placed_at().between(1u64, 9u64)).all().await?;       // inclusive
/// // Hierarchies at any level: every store of a country, of a region, of a city.
/// db.query(Store::partition()).sk(Store::sk().country().eq("US").region().eq("West")).all().await?;
/// // A partial value of a component, asked for explicitly (e.g. a month of a timestamp):
/// db.query(Store::partition()).sk(Store::sk().country().eq("US").region().starts_with("We")).all().await?;
/// # Ok(()) }
/// ```
///
/// **Filters** use typed paths (`Type::fields()`), always through placeholders:
///
/// ```no_run
/// # use dynamo_model::{Db, Entity, Table};
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{placed_at}#{order_id}")]
/// # struct Order { user_id: String, order_id: String, placed_at: u64, status: String, tags: Vec<String>, note: Option<String> }
/// # async fn demo(db: Db<App>) -> Result<(), dynamo_model::Error> {
/// let f = Order::fields();
/// let matching = f.status.eq("open")                       // =, ne, lt, le, gt, ge
///     .and(f.placed_at.between(100u64, 200u64))
///     .and(f.status.begins_with("op").or(f.tags.contains("gift")))
///     .and(f.note.exists())                                // exists, not_exists
///     .and(f.tags.size().le(3))                            // size(path) comparisons
///     .and(!f.status.is_in(["void", "lost"]));             // IN, NOT
/// db.query(Order::partition("u-1")).filter(matching).all().await?;
/// # Ok(()) }
/// ```
///
/// **Direction, limits and pages**: `reverse()` reads newest (largest) first; `limit(n)`
/// counts *matching* items; `page(cursor)` returns a page and an opaque cursor bound to
/// this query; `stream()` yields every item across pages:
///
/// ```no_run
/// # use dynamo_model::{Cursor, Db, Entity, Table};
/// # use futures_util::TryStreamExt;
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{placed_at}#{order_id}")]
/// # struct Order { user_id: String, order_id: String, placed_at: u64 }
/// # async fn demo(db: Db<App>, from_client: Option<String>) -> Result<(), dynamo_model::Error> {
/// let cursor = from_client.map(Cursor::from);
/// let page = db.query(Order::partition("u-1")).reverse().limit(20).page(cursor.as_ref()).await?;
/// let next_for_client: Option<String> = page.cursor.map(|c| c.to_string());
///
/// let all: Vec<Order> = db.query(Order::partition("u-1")).stream().try_collect().await?;
/// # Ok(()) }
/// ```
///
/// **Indexes** have their own typed partitions and sort-key chains
/// (`Type::{index}_partition`, `Type::{index}_sk`), so a condition of one key space cannot
/// be used on another:
///
/// ```no_run
/// # use dynamo_model::{Db, Entity, Table};
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))] struct App;
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{placed_at}#{order_id}",
/// #          index(GSI1, pk = "STATUS#{status}", sk = "{placed_at}"))]
/// # struct Order { user_id: String, order_id: String, placed_at: u64, status: String }
/// # async fn demo(db: Db<App>) -> Result<(), dynamo_model::Error> {
/// let open_recent = db
///     .query(Order::gsi1_partition("open"))
///     .sk(Order::gsi1_sk().placed_at().ge(1_700_000_000u64))
///     .reverse()
///     .all()
///     .await?;
/// # Ok(()) }
/// ```
#[must_use = "a query does nothing until one of all(), page() or stream() is awaited"]
pub struct Query<T: Target, K: KeySpace = Primary> {
    pub(crate) db: Db<T::Table>,
    pub(crate) customize: Customize<QueryFluentBuilder>,
    pub(crate) index: Option<&'static IndexSchema>,
    pub(crate) _key_space: PhantomData<fn() -> K>,
    pub(crate) pk: Result<PartitionValue, KeyError>,
    pub(crate) sk: Result<SortCondition, KeyError>,
    /// Whether the caller chose the sort-key condition (`sk(..)`), rather than the
    /// default range of the partition's entity; a collection keeps a chosen one.
    pub(crate) sk_chosen: bool,
    /// A refusal decided while building (e.g. a view of another entity type), reported
    /// when the query is sent.
    pub(crate) refusal: Option<(crate::ValidationReason, String)>,
    pub(crate) filter: Option<Node>,
    pub(crate) reverse: bool,
    pub(crate) limit: Option<usize>,
    pub(crate) page_size: Option<usize>,
    pub(crate) max_pages: Option<usize>,
    pub(crate) consistent: bool,
    pub(crate) unknown: UnknownEntity,
    pub(crate) exclude_expired: bool,
    /// `ProjectionExpression` attributes, when only some are read.
    pub(crate) projection: Option<&'static [&'static str]>,
    /// The history of one item under an unpadded layout read in revision order: every
    /// revision is read, then sorted by the slot of its sort key
    /// ([`HistoryLayout::sorts_history`](dynamo_model::history::HistoryLayout::sorts_history)).
    pub(crate) by_slot: Option<&'static crate::schema::history::HistoryLayout>,
}

/// One rendered request, reused for every request the query sends.
pub(super) struct Prepared {
    /// What every request sends (moved into the query's source).
    pub(super) expressions: super::dynamodb::Expressions,
    pub(super) fingerprint: Fingerprint,
    pub(super) cursor_names: Vec<&'static str>,
    /// The partition's attributes and values: a cursor must stay inside it.
    pub(super) pk_check: Vec<(&'static str, AttributeValue)>,
    sk_attr: Option<&'static str>,
    sk_range: Option<SortKeyRange>,
    /// No item can match: responses are empty and nothing is sent.
    nothing: bool,
}

impl<T: Target, K: KeySpace> Query<T, K> {
    pub(crate) fn new<E: Entity>(
        db: &Db<T::Table>,
        partition: impl IntoPartition<E, K>,
        sk: Option<SortCondition>,
    ) -> Self {
        let (pk, default_sk) = partition.into_partition();
        Self::from_partition(db, pk, default_sk, sk)
    }

    /// A query of partition `pk`, whose entity's items are `default_sk` (the partition
    /// constructors' default condition).
    pub(super) fn from_partition(
        db: &Db<T::Table>,
        pk: Result<PartitionValue, KeyError>,
        default_sk: SortCondition,
        sk: Option<SortCondition>,
    ) -> Self {
        let chosen = sk.is_some();
        let sk = sk.unwrap_or(default_sk);
        Self::with_key(db, K::index::<T::Table>(), pk, sk, chosen)
            .latest_partition()
            .latest_copies()
    }

    /// A query of partition `pk` and sort-key condition `sk` (`chosen` by the caller, or
    /// the default range of the partition's entity) on the table or `index`, every other
    /// option at its default.
    pub(crate) fn with_key(
        db: &Db<T::Table>,
        index: Option<&'static IndexSchema>,
        pk: Result<PartitionValue, KeyError>,
        sk: SortCondition,
        chosen: bool,
    ) -> Self {
        Query {
            db: db.clone(),
            customize: Customize::default(),
            index,
            _key_space: PhantomData,
            pk,
            sk: Ok(sk),
            sk_chosen: chosen,
            refusal: None,
            filter: None,
            reverse: false,
            limit: None,
            page_size: None,
            max_pages: None,
            consistent: false,
            unknown: UnknownEntity::Skip,
            exclude_expired: false,
            projection: None,
            by_slot: None,
        }
    }

    /// Whether the queried table or index has `attribute` as its only key attribute of
    /// the partition (`partition`) or sort key.
    fn keyed_on(&self, attribute: &str, partition: bool) -> bool {
        let schema = &<T::Table as Table>::SCHEMA;
        match (self.index, partition) {
            (None, true) => schema.pk.name == attribute,
            (None, false) => schema.sk.is_some_and(|a| a.name == attribute),
            (Some(index), true) => matches!(index.pk, [only] if only.name == attribute),
            (Some(index), false) => matches!(index.sk, [only] if only.name == attribute),
        }
    }

    /// On an index whose partition key is the table's sort key (an inverted index), a
    /// `#[dynamo(history)]` entity's partition value is its latest copies' sort key.
    fn latest_partition(mut self) -> Self {
        let pk = std::mem::replace(&mut self.pk, Ok(PartitionValue::Rendered(String::new())));
        self.pk = self.latest_partition_of(pk);
        self
    }

    /// Partition `pk` as this query reads it (see [`latest_partition`](Self::latest_partition)).
    pub(super) fn latest_partition_of(
        &self,
        mut pk: Result<PartitionValue, KeyError>,
    ) -> Result<PartitionValue, KeyError> {
        let table_sk = <T::Table as Table>::SCHEMA.sk.map(|a| a.name);
        if let (Some(layout), Some(sk), Some(_)) = (T::HISTORY, table_sk, self.index)
            && self.keyed_on(sk, true)
            && let Ok(PartitionValue::Rendered(value)) = &mut pk
        {
            *value = layout.latest(value);
        }
        pk
    }

    /// Where the sort key queried is the table's (the base table), moves the sort-key
    /// condition of a `#[dynamo(history)]` entity to its latest copies (slot 0 of its
    /// history layout): its revisions are history, read with
    /// [`History::revisions`](dynamo_model::history::History::revisions).
    fn latest_copies(mut self) -> Self {
        let table_sk = <T::Table as Table>::SCHEMA.sk.map(|a| a.name);
        let on_table_sk = table_sk.is_some_and(|sk| self.keyed_on(sk, false));
        if let (Some(layout), true, Ok(sk)) = (T::HISTORY, on_table_sk, &self.sk) {
            match latest_only(layout, sk.clone()) {
                Some(latest) => self.sk = Ok(latest),
                None => {
                    self.refusal = Some((
                        crate::ValidationReason::WrongKeySpace,
                        "this sort-key condition cannot be applied to the latest copies of a #[dynamo(history)] entity; read its revisions with db.history().revisions(key)".to_owned(),
                    ))
                }
            }
        }
        self
    }

    crate::setters::setters! {
        /// Leaves out items whose TTL has passed (DynamoDB deletes them only eventually).
        exclude_expired() => exclude_expired = true;
    }

    /// Restricts the sort key with a condition from the generated `Type::sk()` chain.
    pub fn sk(mut self, condition: impl IntoSortKey<T, K>) -> Self {
        self.sk = condition.into_sort_key();
        self.sk_chosen = true;
        self.latest_copies()
    }

    /// Keeps only items matching `condition` (a `FilterExpression`: evaluated after the
    /// read, so filtered items still consume read capacity).
    pub fn filter<E: Entity>(mut self, condition: Condition<E>) -> Self
    where
        T: Includes<E>,
    {
        self.filter = Some(match self.filter.take() {
            Some(existing) => Node::And(Box::new(existing), Box::new(condition.node)),
            None => condition.node,
        });
        self
    }

    crate::setters::setters! {
        /// Descending sort-key order (`ScanIndexForward=false`), e.g. newest first or top-N.
        reverse() => reverse = true;
        /// Return at most `n` items *that match* (DynamoDB's own `Limit` counts items read
        /// before filtering; this keeps sending requests until `n` items matched or the results
        /// end, or [`max_pages`](Query::max_pages) requests were made).
        limit(n: usize) => limit = Some(n);
        /// Items read per request (DynamoDB `Limit`); DynamoDB also stops a response at 1 MB.
        page_size(n: usize) => page_size = Some(n.max(1));
        /// At most `n` requests for one `all()` or `page()` call; the returned cursor
        /// continues where it stopped.
        max_pages(n: usize) => max_pages = Some(n.max(1));
        /// Strongly consistent reads (tables and LSIs only; GSIs are eventually consistent).
        consistent() => consistent = true;
    }

    /// Reads the partition as collection `C` (an enum over entity types sharing it,
    /// dispatched on the entity-type attribute) instead of entity `T` alone: every item
    /// of the partition, unless narrowed with [`sk`](Query::sk) (a condition of any
    /// member entity, given before or after this call).
    ///
    /// ```no_run
    /// # use dynamo_model::{Collection, Db, Entity, Table};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[dynamo(table = App, pk = "ORDER#{order_id}", sk = "ORDER")]
    /// # struct Order { order_id: String }
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[dynamo(table = App, pk = "ORDER#{order_id}", sk = "ITEM#{line}")]
    /// # struct OrderItem { order_id: String, line: u32 }
    /// #[derive(Collection)]
    /// enum OrderDetails { Order(Order), Item(OrderItem) }
    ///
    /// # async fn demo(db: Db<App>) -> Result<(), dynamo_model::Error> {
    /// let details = db.query(Order::partition("o-1")).collection::<OrderDetails>().all().await?;
    /// for d in details.items {
    ///     match d {
    ///         OrderDetails::Order(o) => println!("order {}", o.order_id),
    ///         OrderDetails::Item(i) => println!("line {}", i.line),
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub fn collection<C>(self) -> Query<C, K>
    where
        T: Entity,
        C: Target<Table = <T as Target>::Table> + Includes<T>,
    {
        let mut query = self.retarget::<C>();
        // The entity's default range would hide the other members; a condition the caller
        // chose (in either order of `sk` and `collection`) is kept.
        if !query.sk_chosen {
            query.sk = Ok(SortCondition::any());
        }
        query
    }
    /// Returns the typed keys of the matching items instead of the items: what an index
    /// projecting only keys (`KEYS_ONLY`) holds. [`hydrate`](Query::hydrate) turns a page
    /// of keys into whole items.
    pub fn keys_only(self) -> Query<Key<T>, K>
    where
        T: Entity<Table = <T as Target>::Table>,
    {
        self.retarget()
    }
    /// Reads only the attributes of `V`, a partial view of `T`: an entity with the same
    /// entity type and key templates and a subset of the fields (`ProjectionExpression`).
    /// Less data comes back; read capacity is the same (DynamoDB sizes reads on whole items).
    ///
    /// ```no_run
    /// # use dynamo_model::{Db, Entity, Table};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{order_id}")]
    /// struct Order { user_id: String, order_id: String, total: u64, notes: String }
    ///
    /// /// Only what a list view needs.
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{order_id}", entity_type = "Order")]
    /// struct OrderLine { user_id: String, order_id: String, total: u64 }
    ///
    /// # async fn demo(db: Db<App>) -> Result<(), dynamo_model::Error> {
    /// let lines = db.query(Order::partition("u-1")).project::<OrderLine>().all().await?;
    /// # Ok(()) }
    /// ```
    pub fn project<V>(self) -> Query<V, K>
    where
        T: Entity<Table = <T as Target>::Table>,
        V: Entity<Table = <T as Target>::Table>,
    {
        let mut query = self.retarget::<V>();
        query.projection = Some(V::ATTRIBUTES);
        query.check_view::<T>()
    }

    /// The same query, decoding its results as `U`.
    pub(crate) fn retarget<U: Target<Table = T::Table>>(self) -> Query<U, K> {
        Query {
            db: self.db,
            customize: self.customize,
            index: self.index,
            _key_space: PhantomData,
            pk: self.pk,
            sk: self.sk,
            sk_chosen: self.sk_chosen,
            refusal: self.refusal,
            filter: self.filter,
            reverse: self.reverse,
            limit: self.limit,
            page_size: self.page_size,
            max_pages: self.max_pages,
            consistent: self.consistent,
            unknown: self.unknown,
            exclude_expired: self.exclude_expired,
            projection: self.projection,
            by_slot: self.by_slot,
        }
    }
    crate::setters::setters! {
        /// What to do with items of entity types outside a collection (default: skip).
        on_unknown(policy: UnknownEntity) => unknown = policy;
    }
}

impl<V: Entity, K: KeySpace> Query<V, K> {
    /// A view must be of the same entity type, or the type filter would drop every item.
    fn check_view<T: Entity>(mut self) -> Self {
        if T::ENTITY_TYPE != V::ENTITY_TYPE {
            self.refusal = Some((
                crate::ValidationReason::InvalidOption,
                format!(
                    "the view `{}` has entity type `{}`, not `{}` of the queried entity: a view must have the entity type of what it reads",
                    std::any::type_name::<V>(),
                    V::ENTITY_TYPE,
                    T::ENTITY_TYPE
                ),
            ));
        }
        self
    }
}

impl<E: Entity, K: KeySpace> Query<Key<E>, K> {
    /// One page of keys (as [`page`](Query::page)), then the whole items behind them,
    /// fetched with one batch get and returned in the index's order. Keys whose item
    /// vanished in between are left out.
    pub async fn hydrate(self, cursor: Option<&Cursor>) -> Result<Page<E>, Error> {
        let db = self.db.clone();
        let consistent = self.consistent;
        let keys = self.page(cursor).await?;
        hydrate_page(&db, consistent, keys).await
    }
}

/// A prepared query against DynamoDB: the [`Source`](super::pager::Source) behind `all`,
/// `page` and `stream`.
pub(super) struct QuerySource<X: Table> {
    request: super::dynamodb::Request<X, super::dynamodb::QueryOp>,
    pub(super) prepared: Prepared,
}

impl<T: Table> Db<T> {
    /// Queries one partition for items of entity `E`, by default every item of `E` in
    /// it (sort key beginning with the template's leading literal).
    ///
    /// ```no_run
    /// # use dynamo_model::{Db, Entity, Table};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{placed_at}#{order_id}")]
    /// struct Order { user_id: String, order_id: String, placed_at: u64, total: u64 }
    ///
    /// # async fn demo(db: Db<App>) -> Result<(), dynamo_model::Error> {
    /// // The ten newest orders of u-1 placed in [1000, 2000], with a filter.
    /// let page = db
    ///     .query(Order::partition("u-1"))
    ///     .sk(Order::sk().placed_at().between(1000u64, 2000u64))
    ///     .filter(Order::fields().total.gt(100u64))
    ///     .reverse()
    ///     .limit(10)
    ///     .all()
    ///     .await?;
    /// println!("{} orders, {} RCU", page.items.len(), page.consumed_capacity);
    /// # Ok(()) }
    /// ```
    pub fn query<E: Entity<Table = T>, K: KeySpace>(
        &self,
        partition: impl IntoPartition<E, K>,
    ) -> Query<E, K> {
        Query::new(self, partition, None)
    }
}

crate::request::customizable!(
    impl[T: Target, K: KeySpace] Query<T, K>,
    QueryFluentBuilder,
    "of every request before it is sent",
    "A hook that changes the key condition, filter, projection, placeholders, limit or start key takes the query out of the crate's guarantees (typed results, cursors)."
);

mod explain;
mod plan;
use plan::latest_only;
mod read;
mod request;
mod slots;

pub(super) use read::hydrate_page;

#[cfg(test)]
mod tests;
