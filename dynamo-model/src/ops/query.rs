//! `Query`: typed key conditions, filters, direction, limits that count matching items,
//! pagination with bound cursors, and a stream over all pages.

use super::BoxFuture;
use super::key_condition::{
    IntoPartition, IntoSortKey, PartitionValue, SortCondition, attribute_range_fits,
    render_attribute_op, render_sort_key,
};
use super::pager::{self, Collected, PageRequest, PageSource, RawPage};
use crate::collection::{Includes, Target};
use crate::cursor::{self, Cursor, Fingerprint};
use crate::expr::{Node, Placeholders};
use crate::key::sort::{KeySpace, Primary, SortKeyOp, SortKeyRange};
use crate::keytext::KeyError;
use crate::request::Customize;
use crate::request::page::{Page, UnknownEntity, decode_target, entity_type_filter};
use crate::schema::{IndexKind, IndexSchema, Projection};
use crate::trace::Instrument;
use crate::{Condition, Db, Entity, Error, Item, Key, Table};
use aws_sdk_dynamodb::operation::query::QueryInput;
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnConsumedCapacity};
use futures_util::stream::{self, Stream};
use std::collections::{HashMap, VecDeque};
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

/// The key attributes of the queried table or index.
pub(super) struct KeyNames {
    pk: Vec<&'static str>,
    /// The sort key's attributes, in key order (several for a multi-attribute key): the
    /// order of a partition's items.
    pub(super) sk: Vec<&'static str>,
    /// Every attribute of `LastEvaluatedKey` (table key plus index key).
    cursor: Vec<&'static str>,
}

/// One rendered request, reused for every page.
pub(super) struct Prepared {
    key_condition: String,
    filter: Option<String>,
    names: Option<HashMap<String, String>>,
    values: Option<HashMap<String, AttributeValue>>,
    pub(super) fingerprint: Fingerprint,
    pub(super) cursor_names: Vec<&'static str>,
    /// The partition's attributes and values: a cursor must stay inside it.
    pub(super) pk_check: Vec<(&'static str, AttributeValue)>,
    sk_attr: Option<&'static str>,
    sk_range: Option<SortKeyRange>,
    projection: Option<String>,
    /// No item can match: pages are empty and nothing is sent.
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
        Query {
            db: db.clone(),
            customize: Customize::default(),
            index: K::index::<T::Table>(),
            _key_space: PhantomData,
            sk_chosen: sk.is_some(),
            refusal: None,
            sk: Ok(sk.unwrap_or(default_sk)),
            pk,
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
        .latest_partition()
        .latest_copies()
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
    /// `#[dynamo(versioned)]` entity's partition value is its latest copies' sort key.
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
    /// condition of a `#[dynamo(versioned)]` entity to its latest copies (slot 0 of its
    /// history layout): its revisions are history, read with
    /// [`Versions::history`](dynamo_model::history::Versions::history).
    fn latest_copies(mut self) -> Self {
        let table_sk = <T::Table as Table>::SCHEMA.sk.map(|a| a.name);
        let on_table_sk = table_sk.is_some_and(|sk| self.keyed_on(sk, false));
        if let (Some(layout), true, Ok(sk)) = (T::HISTORY, on_table_sk, &self.sk) {
            match latest_only(layout, sk.clone()) {
                Some(latest) => self.sk = Ok(latest),
                None => {
                    self.refusal = Some((
                        crate::ValidationReason::WrongKeySpace,
                        "this sort-key condition cannot be applied to the latest copies of a #[dynamo(versioned)] entity; read its revisions with db.versions().history(key)".to_owned(),
                    ))
                }
            }
        }
        self
    }

    /// Leaves out items whose TTL has passed (DynamoDB deletes them only eventually).
    pub fn exclude_expired(mut self) -> Self {
        self.exclude_expired = true;
        self
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

    /// Descending sort-key order (`ScanIndexForward=false`), e.g. newest first or top-N.
    pub fn reverse(mut self) -> Self {
        self.reverse = true;
        self
    }

    /// Return at most `n` items *that match* (DynamoDB's own `Limit` counts items read
    /// before filtering; this keeps reading pages until `n` items matched or the results
    /// end, or [`max_pages`](Query::max_pages) requests were made).
    pub fn limit(mut self, n: usize) -> Self {
        self.limit = Some(n);
        self
    }

    /// Items read per request (DynamoDB `Limit`); DynamoDB also stops a page at 1 MB.
    pub fn page_size(mut self, n: usize) -> Self {
        self.page_size = Some(n.max(1));
        self
    }

    /// At most `n` requests for one `all()` or `page()` call; the returned cursor
    /// continues where it stopped.
    pub fn max_pages(mut self, n: usize) -> Self {
        self.max_pages = Some(n.max(1));
        self
    }

    /// Strongly consistent reads (tables and LSIs only; GSIs are eventually consistent).
    pub fn consistent(mut self) -> Self {
        self.consistent = true;
        self
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
    /// What to do with items of entity types outside a collection (default: skip).
    pub fn on_unknown(mut self, policy: UnknownEntity) -> Self {
        self.unknown = policy;
        self
    }

    /// The attributes decoding needs that a global index with an `INCLUDE` projection does
    /// not project (`None` when nothing is missing): the entity type (every decode checks
    /// it) and the stored fields of the view, the entity or every member of a collection.
    /// Sending such a query would pay for items that all fail to decode, or decode with
    /// fields silently absent. (A local index fetches what it does not project from the
    /// table, so it is not refused.)
    fn unprojected_attributes(&self) -> Option<Vec<&'static str>> {
        let index = self.index?;
        let Projection::Include(included) = index.projection else {
            return None;
        };
        if T::IS_KEYS || index.kind == IndexKind::Local {
            return None;
        }
        let schema = &<T::Table as Table>::SCHEMA;
        let keys = self.key_names().ok()?;
        let fields: Vec<&'static str> = match self.projection {
            Some(view) => view.to_vec(),
            None => T::MEMBER_ATTRIBUTES.concat(),
        };
        let mut missing: Vec<&'static str> = Vec::new();
        for attribute in std::iter::once(schema.entity_type).chain(fields) {
            if !included.contains(&attribute)
                && !keys.cursor.contains(&attribute)
                && !missing.contains(&attribute)
            {
                missing.push(attribute);
            }
        }
        (!missing.is_empty()).then_some(missing)
    }

    /// Whether the items read carry the entity-type attribute.
    fn projects_entity_type(&self) -> bool {
        self.projects(Some(<T::Table as Table>::SCHEMA.entity_type))
    }

    /// Whether the items read carry `attribute` (a table read carries everything).
    fn projects(&self, attribute: Option<&str>) -> bool {
        match (self.index.map(|i| i.projection), attribute) {
            (None | Some(Projection::All), _) => true,
            (_, None) => false,
            (Some(Projection::KeysOnly), _) => false,
            (Some(Projection::Include(attrs)), Some(a)) => attrs.contains(&a),
        }
    }

    pub(super) fn key_names(&self) -> Result<KeyNames, Error> {
        let schema = &<T::Table as Table>::SCHEMA;
        let table_keys = std::iter::once(schema.pk.name).chain(schema.sk.map(|a| a.name));
        let names = |attrs: &[crate::schema::KeyAttribute]| {
            attrs.iter().map(|a| a.name).collect::<Vec<_>>()
        };
        match self.index {
            None => Ok(KeyNames {
                pk: vec![schema.pk.name],
                sk: schema.sk.map(|a| a.name).into_iter().collect(),
                cursor: table_keys.collect(),
            }),
            Some(index) => {
                let pk = match index.kind {
                    IndexKind::Local => vec![schema.pk.name],
                    IndexKind::Global => names(index.pk),
                };
                let mut cursor: Vec<&'static str> = table_keys.collect();
                for name in index.pk.iter().chain(index.sk).map(|a| a.name) {
                    if !cursor.contains(&name) {
                        cursor.push(name);
                    }
                }
                Ok(KeyNames {
                    pk,
                    sk: names(index.sk),
                    cursor,
                })
            }
        }
    }

    #[cfg(test)]
    fn prepare(&self) -> Result<Prepared, Error> {
        self.prepare_with(&self.pk)
    }

    /// The request of this query on partition `pk` (the query's own, or one of the
    /// partitions of a [`ScatterQuery`](super::ScatterQuery)).
    fn prepare_with(&self, pk: &Result<PartitionValue, KeyError>) -> Result<Prepared, Error> {
        if let Some((reason, message)) = &self.refusal {
            return Err(Error::invalid(T::NAME, *reason, message.clone()));
        }
        if let Some(index) = self.index
            && index.projection == Projection::KeysOnly
            && !T::IS_COLLECTION
            && !T::IS_KEYS
        {
            return Err(Error::invalid(
                T::NAME,
                crate::ValidationReason::IndexProjection,
                format!(
                    "index `{}` projects only keys: query it with .keys_only(), or .keys_only().hydrate(..) for whole items",
                    index.name
                ),
            ));
        }
        if let Some(missing) = self.unprojected_attributes() {
            let index = self.index.map(|i| i.name).unwrap_or_default();
            return Err(Error::invalid(
                T::NAME,
                crate::ValidationReason::IndexProjection,
                format!(
                    "index `{index}` does not project `{}`, which reading {} needs; read a view of the projected attributes (.project::<View>()), or .keys_only().hydrate(..) for whole items",
                    missing.join("`, `"),
                    T::NAME
                ),
            ));
        }
        let key_error = |e: &KeyError| Error::key(T::NAME, e.clone());
        let pk_value = pk.as_ref().map_err(key_error)?.clone();
        if let PartitionValue::Rendered(value) = &pk_value {
            crate::keytext::check_key_value(
                T::NAME,
                "partition",
                value,
                crate::keytext::MAX_PARTITION_KEY_BYTES,
            )?;
        }
        let sk = self.sk.as_ref().map_err(key_error)?;
        if self.consistent && matches!(self.index, Some(i) if i.kind == IndexKind::Global) {
            return Err(Error::invalid(
                T::NAME,
                crate::ValidationReason::ConsistentIndexRead,
                "a GSI supports only eventually consistent reads",
            ));
        }
        let names = self.key_names()?;
        let mut p = Placeholders::default();
        let pk_check: Vec<(&'static str, AttributeValue)> = match (&pk_value, names.pk.as_slice()) {
            (PartitionValue::Rendered(v), [attr]) => vec![(*attr, AttributeValue::S(v.clone()))],
            (PartitionValue::Attributes(values), attrs)
                if values.len() == attrs.len()
                    && values.iter().zip(attrs).all(|((a, _), b)| a == b) =>
            {
                // DynamoDB refuses an empty string as a key attribute value.
                if let Some((attr, _)) = values
                    .iter()
                    .find(|(_, v)| matches!(v, AttributeValue::S(s) if s.is_empty()))
                {
                    return Err(Error::invalid(
                        T::NAME,
                        crate::ValidationReason::EmptyKeyValue,
                        format!(
                            "the partition value of `{attr}` is empty; DynamoDB requires at least one byte"
                        ),
                    ));
                }
                values.clone()
            }
            _ => {
                return Err(Error::invalid(
                    T::NAME,
                    crate::ValidationReason::WrongKeySpace,
                    "the partition does not match the key attributes of the table or index queried",
                ));
            }
        };
        let mut parts: Vec<String> = pk_check
            .iter()
            .map(|(attr, v)| format!("{} = {}", p.name(attr), p.value(v.clone())))
            .collect();
        if let SortCondition::Rendered(range) = sk {
            let values: &[&String] = match &range.op {
                SortKeyOp::Eq(v)
                | SortKeyOp::BeginsWith(v)
                | SortKeyOp::Le(v)
                | SortKeyOp::Ge(v) => &[v],
                SortKeyOp::Between(low, high) => &[low, high],
                SortKeyOp::Any | SortKeyOp::Nothing => &[],
            };
            // DynamoDB refuses a key condition value longer than a sort key can be.
            for value in values {
                crate::keytext::check_key_value(
                    T::NAME,
                    "sort-key condition",
                    value,
                    crate::keytext::MAX_SORT_KEY_BYTES,
                )?;
            }
        }
        // No sort key can match (and DynamoDB would refuse every way of saying so).
        let mut nothing = matches!(sk, SortCondition::Rendered(r) if r.op == SortKeyOp::Nothing);
        match (sk, names.sk.as_slice()) {
            (SortCondition::Rendered(range), [attr]) => {
                parts.extend(render_sort_key(&mut p, attr, &range.op))
            }
            (SortCondition::Rendered(range), []) if range.op == SortKeyOp::Any => {}
            (SortCondition::Attributes(range), attrs) if attribute_range_fits(range, attrs) => {
                match range.normalized() {
                    Some(range) => {
                        for (attr, v) in &range.eq {
                            parts.push(format!("{} = {}", p.name(attr), p.value(v.clone())));
                        }
                        if let Some((attr, op)) = &range.last {
                            parts.push(render_attribute_op(&mut p, attr, op));
                        }
                    }
                    None => nothing = true,
                }
            }
            _ => {
                return Err(Error::invalid(
                    T::NAME,
                    crate::ValidationReason::WrongKeySpace,
                    "the sort-key condition does not match the sort key of the table or index queried",
                ));
            }
        }
        let key_condition = parts.join(" AND ");
        // A collection keeps the whole partition, so unknown types can be reported; an
        // index that does not project the entity-type attribute cannot be filtered on it.
        let type_filter =
            (!T::IS_COLLECTION && self.projects_entity_type()).then(entity_type_filter::<T>);
        if self.exclude_expired && !self.projects(<T::Table as Table>::SCHEMA.ttl) {
            return Err(Error::invalid(
                T::NAME,
                crate::ValidationReason::IndexProjection,
                "exclude_expired on an index that does not project the TTL attribute would exclude nothing",
            ));
        }
        let expiry = if self.exclude_expired {
            super::not_expired::<T::Table>()
        } else {
            None
        };
        let filter = super::and_opt(super::and_opt(type_filter, expiry), self.filter.clone());
        let filter = match filter {
            Some(node) => Some(super::render_for(T::NAME, &mut p, &node)?),
            None => None,
        };
        // The view's attributes, plus what every read needs: the entity type (decoding
        // checks it) and the key attributes (cursors continue from them).
        let projection = self.projection.map(|attrs| {
            let mut wanted: Vec<&'static str> = attrs.to_vec();
            wanted.push(<T::Table as Table>::SCHEMA.entity_type);
            wanted.extend(names.cursor.iter().copied());
            let mut seen = std::collections::HashSet::new();
            wanted.retain(|a| seen.insert(*a));
            wanted
                .iter()
                .map(|a| p.name(a))
                .collect::<Vec<_>>()
                .join(", ")
        });
        let (names_map, values) = p.finish();
        let index_name = self.index.map(|i| i.name).unwrap_or("");
        let direction: &[u8] = if self.reverse { b"desc" } else { b"asc" };
        let fingerprint = Fingerprint::of(&[
            b"query",
            self.db.table_name().as_bytes(),
            index_name.as_bytes(),
            T::NAME.as_bytes(),
            &condition_bytes(&pk_value, sk),
            direction,
        ]);
        Ok(Prepared {
            key_condition,
            filter,
            names: names_map,
            values,
            fingerprint,
            cursor_names: names.cursor,
            pk_check,
            sk_attr: names.sk.first().copied().filter(|_| names.sk.len() == 1),
            projection,
            sk_range: match sk {
                SortCondition::Rendered(range) => Some(range.clone()),
                SortCondition::Attributes(_) => None,
            },
            nothing,
        })
    }

    /// The prepared request as a page source: what every page of this query sends.
    fn source(&self) -> Result<QuerySource<T::Table>, Error> {
        self.source_with(&self.pk)
    }

    /// What every page of this query on partition `pk` sends.
    pub(super) fn source_with(
        &self,
        pk: &Result<PartitionValue, KeyError>,
    ) -> Result<QuerySource<T::Table>, Error> {
        Ok(QuerySource {
            db: self.db.clone(),
            index: self.index.map(|i| i.name),
            forward: !self.reverse,
            consistent: self.consistent,
            prepared: self.prepare_with(pk).map_err(|e| e.during("Query"))?,
            customize: self.customize.clone(),
        })
    }

    /// The `Query` input of the first page, instead of sending it (like ElectroDB's
    /// `.params()`). Later pages send the same input with `ExclusiveStartKey` set (and,
    /// after a filter dropped items, a larger `Limit`).
    ///
    /// A query that sends nothing (no item can match, e.g. `between("b", "a")`, or
    /// `limit(0)`) has no params: an error with
    /// [`ValidationReason::InvalidOption`](crate::ValidationReason).
    ///
    /// ```
    /// # use dynamo_model::{Entity, Table};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// # #[derive(Entity, serde::Serialize, serde::Deserialize)]
    /// # #[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{order_id}")]
    /// # struct Order { user_id: String, order_id: String }
    /// # let db = dynamo_model::Db::<App>::offline("app");
    /// let input = db.query(Order::partition("u-1")).reverse().limit(10).params()?;
    /// assert_eq!(input.key_condition_expression(), Some("#n0 = :v0 AND begins_with(#n1, :v1)"));
    /// assert_eq!(input.scan_index_forward(), Some(false));
    /// assert_eq!(input.limit(), Some(10));
    /// # Ok::<(), dynamo_model::Error>(())
    /// ```
    pub fn params(self) -> Result<QueryInput, Error> {
        let source = self.source()?;
        self.params_of(&source)
    }

    /// The input of the first page `source` (this query on one partition) sends.
    pub(super) fn params_of(&self, source: &QuerySource<T::Table>) -> Result<QueryInput, Error> {
        if self.limit == Some(0) {
            return Err(Error::invalid(
                T::NAME,
                crate::ValidationReason::InvalidOption,
                "limit(0) asks for nothing, so the query sends no request",
            )
            .during("Query"));
        }
        if source.prepared.nothing {
            return Err(Error::invalid(
                T::NAME,
                crate::ValidationReason::InvalidOption,
                "no item can match this query's sort-key condition, so it sends no request",
            )
            .during("Query"));
        }
        let request = source.request(PageRequest {
            segment: None,
            start: None,
            limit: pager::first_limit(self.page_size, self.limit),
        });
        crate::request::input("Query", request.as_input().clone().build())
    }

    fn start_key(
        &self,
        prepared: &Prepared,
        cursor: Option<&Cursor>,
    ) -> Result<Option<Item>, Error> {
        let Some(cursor) = cursor else {
            return Ok(None);
        };
        let key =
            cursor::decode(cursor, prepared.fingerprint, self.db.cursor_secret()).map_err(|e| {
                Error::Cursor {
                    target: T::NAME,
                    source: e,
                }
            })?;
        // Even a well-formed cursor must stay in the queried partition.
        if !prepared
            .pk_check
            .iter()
            .all(|(attr, v)| key.get(*attr) == Some(v))
        {
            return Err(Error::Cursor {
                target: T::NAME,
                source: cursor::CursorError::WrongQuery,
            });
        }
        Ok(Some(key))
    }

    /// Reads until `want` items matched (or the results end, or `max_pages`), starting at
    /// `start`, through the one pager. `single_page` stops after one request when no
    /// `want` is given.
    async fn collect(
        &self,
        source: &QuerySource<T::Table>,
        start: Option<Item>,
        want: Option<usize>,
        single_page: bool,
    ) -> Result<Collected<T>, Error> {
        if let Some(layout) = self.by_slot {
            return self.collect_by_slot(layout, source, start, want).await;
        }
        let reading = pager::Reading {
            page_size: self.page_size,
            max_pages: self.max_pages,
            cursor_names: &source.prepared.cursor_names,
        };
        let unknown = self.unknown;
        pager::collect(source, reading, start, want, single_page, |item| {
            if !source.prepared.admits(&item) {
                return Ok(None);
            }
            decode_target(item, unknown)
        })
        .await
    }

    /// A history in revision order under an unpadded layout (`v9` before `v10`, which
    /// the key order does not give): reads every revision of the item (all pages; a
    /// `max_pages` is not applied), sorts them by slot (descending with `reverse()`),
    /// starts after the revision of `start` (a cursor's key) and returns up to `want`,
    /// with the key of the last one returned as where to continue when more follow.
    async fn collect_by_slot(
        &self,
        layout: &'static crate::schema::history::HistoryLayout,
        source: &QuerySource<T::Table>,
        start: Option<Item>,
        want: Option<usize>,
    ) -> Result<Collected<T>, Error> {
        let sk_attr = <T::Table as Table>::SCHEMA.sk.map(|a| a.name);
        // Where a revision sorts: by slot, then (should the key condition admit another
        // rest's revisions) by sort key, so no two items share a position and a cursor
        // resumes after exactly one.
        let position_of = |item: &Item| {
            let sk = sk_attr
                .and_then(|a| item.get(a))
                .and_then(|v| v.as_s().ok())?;
            layout.parse(sk).map(|(slot, _)| (slot, sk.clone()))
        };
        let after = match &start {
            Some(key) => Some(position_of(key).ok_or(Error::Cursor {
                target: T::NAME,
                source: cursor::CursorError::WrongQuery,
            })?),
            None => None,
        };
        let reading = pager::Reading {
            page_size: self.page_size,
            max_pages: None,
            cursor_names: &source.prepared.cursor_names,
        };
        let unknown = self.unknown;
        let names = &source.prepared.cursor_names;
        let read = pager::collect(source, reading, None, None, false, |item| {
            if !source.prepared.admits(&item) {
                return Ok(None);
            }
            // A decoded revision's key parses (its decoding checks it).
            let Some(position) = position_of(&item) else {
                return Ok(None);
            };
            let key = pager::key_of(&item, names);
            Ok(decode_target(item, unknown)?.map(|t| (position, key, t)))
        })
        .await?;
        let mut sorted = read.items;
        sorted.sort_by(|(a, _, _), (b, _, _)| a.cmp(b));
        if self.reverse {
            sorted.reverse();
        }
        let reverse = self.reverse;
        sorted.retain(|(position, _, _)| match &after {
            Some(a) if reverse => position < a,
            Some(a) => position > a,
            None => true,
        });
        let more = want.is_some_and(|w| sorted.len() > w);
        if let Some(w) = want {
            sorted.truncate(w);
        }
        let next = if more {
            sorted.last().map(|(_, key, _)| key.clone())
        } else {
            None
        };
        Ok(Collected {
            items: sorted.into_iter().map(|(_, _, t)| t).collect(),
            next,
            consumed: read.consumed,
            estimated: read.estimated,
            counts: read.counts,
        })
    }

    fn make_page(&self, collected: Collected<T>, prepared: &Prepared) -> Page<T> {
        Page {
            items: collected.items,
            cursor: collected
                .next
                .map(|key| cursor::encode(prepared.fingerprint, &key, self.db.cursor_secret())),
            consumed_capacity: collected.consumed,
            estimated_capacity: collected.estimated,
            count: 0,
            scanned_count: 0,
            requests: 0,
        }
        .with_counts(collected.counts)
    }

    /// The only matching item, or `None` when nothing matches; [`Error::NotUnique`] when
    /// more than one does. For reads that expect at most one item, such as a user by a
    /// unique email through an index (`db.query(User::by_email_partition(email)).one()`):
    /// a second match is reported, never silently dropped. Reads until two matching items
    /// are found or the results end (a `limit` is ignored).
    ///
    /// ```no_run
    /// # use dynamo_model::{Db, Entity, Table};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))] struct App;
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE",
    ///          index(GSI1, pk = "EMAIL#{email}", sk = "USER"))]
    /// struct User { id: String, email: String }
    ///
    /// # async fn demo(db: Db<App>) -> Result<(), dynamo_model::Error> {
    /// let user: Option<User> = db.query(User::gsi1_partition("ann@example.com")).one().await?;
    /// # Ok(()) }
    /// ```
    pub async fn one(mut self) -> Result<Option<T>, Error> {
        let span = self.span();
        self.limit = Some(2);
        crate::trace::traced(span.clone(), async move {
            let found = self.one_untraced().await?;
            crate::trace::record(&span, "dynamo_model.items", u64::from(found.is_some()));
            Ok(found)
        })
        .await
    }

    async fn one_untraced(self) -> Result<Option<T>, Error> {
        let source = self.source()?;
        let schema = &<T::Table as Table>::SCHEMA;
        let mut keys = Vec::with_capacity(2);
        let reading = pager::Reading {
            page_size: self.page_size,
            max_pages: None,
            cursor_names: &source.prepared.cursor_names,
        };
        let unknown = self.unknown;
        let collected = pager::collect(&source, reading, None, Some(2), false, |item| {
            if !source.prepared.admits(&item) {
                return Ok(None);
            }
            let key = crate::keytext::describe_item_key(schema, &item);
            let decoded = decode_target(item, unknown)?;
            if decoded.is_some() {
                keys.push(key.unwrap_or_default());
            }
            Ok(decoded)
        })
        .await?;
        let mut items = collected.items.into_iter();
        match (items.next(), items.next()) {
            (first, None) => Ok(first),
            (Some(_), Some(_)) | (None, Some(_)) => {
                let mut keys = keys.into_iter();
                Err(Error::NotUnique {
                    target: T::NAME,
                    first: keys.next().unwrap_or_default(),
                    second: keys.next().unwrap_or_default(),
                })
            }
        }
    }

    /// The operation span of this query (see [`crate::trace`]).
    pub(super) fn span(&self) -> crate::trace::Span {
        let span = crate::trace::operation("Query", self.db.table_name(), T::NAME);
        if let Some(index) = self.index {
            crate::trace::record(&span, "aws.dynamodb.index_name", index.name);
        }
        crate::trace::record(&span, "aws.dynamodb.scan_forward", !self.reverse);
        crate::trace::record(&span, "aws.dynamodb.consistent_read", self.consistent);
        crate::trace::limits(&span, self.page_size, self.limit);
        span
    }

    /// All matching items (at most `limit`), reading as many pages as needed.
    pub async fn all(self) -> Result<Page<T>, Error> {
        let span = self.span();
        crate::trace::traced(span.clone(), async move {
            let page = self.all_untraced().await?;
            crate::request::page::trace_page(&span, &page);
            Ok(page)
        })
        .await
    }

    async fn all_untraced(self) -> Result<Page<T>, Error> {
        let source = self.source()?;
        if self.limit == Some(0) {
            return Ok(Page::empty(None));
        }
        let collected = self.collect(&source, None, self.limit, false).await?;
        Ok(self.make_page(collected, &source.prepared))
    }

    /// One page: up to `limit` matching items (or one DynamoDB page without a limit),
    /// starting after `cursor` (from a previous page of the *same* query).
    pub async fn page(self, cursor: Option<&Cursor>) -> Result<Page<T>, Error> {
        let span = self.span();
        crate::trace::traced(span.clone(), async move {
            let page = self.page_untraced(cursor).await?;
            crate::request::page::trace_page(&span, &page);
            Ok(page)
        })
        .await
    }

    async fn page_untraced(self, cursor: Option<&Cursor>) -> Result<Page<T>, Error> {
        let source = self.source()?;
        let prepared = &source.prepared;
        if self.limit == Some(0) {
            // Nothing asked for: stay where we are (a request would skip an item).
            self.start_key(prepared, cursor)?;
            return Ok(Page::empty(cursor.cloned()));
        }
        let start = self.start_key(prepared, cursor)?;
        let collected = self.collect(&source, start, self.limit, true).await?;
        Ok(self.make_page(collected, prepared))
    }

    /// Every matching item (at most `limit`) as a stream, fetching pages as it is polled.
    pub fn stream(self) -> impl Stream<Item = Result<T, Error>> + Send + 'static
    where
        T: Send,
    {
        struct State<T: Target, K: KeySpace> {
            query: Query<T, K>,
            source: Option<QuerySource<T::Table>>,
            buffer: VecDeque<T>,
            next: Option<Item>,
            done: bool,
            yielded: usize,
        }
        let span = self.span();
        let state = State {
            query: self,
            source: None,
            buffer: VecDeque::new(),
            next: None,
            done: false,
            yielded: 0,
        };
        let items = stream::unfold(state, |mut s| async move {
            loop {
                if s.query.limit.is_some_and(|l| s.yielded >= l) {
                    return None;
                }
                if let Some(item) = s.buffer.pop_front() {
                    s.yielded += 1;
                    return Some((Ok(item), s));
                }
                if s.done {
                    return None;
                }
                if s.source.is_none() {
                    match s.query.source() {
                        Ok(source) => s.source = Some(source),
                        Err(e) => {
                            s.done = true;
                            return Some((Err(e), s));
                        }
                    }
                }
                let source = s.source.as_ref()?;
                let want = s.query.limit.map(|l| l - s.yielded);
                match s.query.collect(source, s.next.take(), want, true).await {
                    Ok(collected) => {
                        s.buffer.extend(collected.items);
                        s.next = collected.next;
                        s.done = s.next.is_none();
                    }
                    Err(e) => {
                        s.done = true;
                        return Some((Err(e), s));
                    }
                }
            }
        });
        crate::trace::stream(span, items)
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

/// The whole items behind a page of keys, fetched with one batch get and returned in the
/// page's order; keys whose item vanished in between are left out.
pub(super) async fn hydrate_page<E: Entity>(
    db: &Db<E::Table>,
    consistent: bool,
    keys: Page<Key<E>>,
) -> Result<Page<E>, Error> {
    let mut get = db.batch_get::<E>().keys(keys.items).keep_order();
    if consistent {
        get = get.consistent();
    }
    let mut full = get.send().await?;
    let missing = full.unprocessed.len()
        + full
            .failed
            .iter()
            .map(|(keys, _)| keys.len())
            .sum::<usize>();
    if missing > 0 {
        return Err(Error::Incomplete {
            entity: E::ENTITY_TYPE,
            operation: "BatchGetItem",
            missing,
            source: full.failed.pop().map(|(_, e)| Box::new(e)),
        });
    }
    Ok(Page {
        items: full.items,
        cursor: keys.cursor,
        consumed_capacity: keys.consumed_capacity + full.consumed_capacity,
        estimated_capacity: keys.estimated_capacity + full.estimated_capacity,
        count: keys.count,
        scanned_count: keys.scanned_count,
        requests: keys.requests,
    })
}

/// A prepared query against DynamoDB: the page source behind `all`, `page` and `stream`.
pub(super) struct QuerySource<X: Table> {
    db: Db<X>,
    index: Option<&'static str>,
    forward: bool,
    consistent: bool,
    pub(super) prepared: Prepared,
    customize: Customize<QueryFluentBuilder>,
}

/// The condition `sk` on a versioned entity's latest copies: its values moved into slot 0
/// of `layout`, or `None` when that cannot be said as one key condition (a range over
/// the template's rest would span slots).
fn latest_only(
    layout: &crate::schema::history::HistoryLayout,
    sk: SortCondition,
) -> Option<SortCondition> {
    let SortCondition::Rendered(range) = &sk else {
        return None;
    };
    let op = match &range.op {
        SortKeyOp::Any => SortKeyOp::BeginsWith(layout.latest("")),
        SortKeyOp::BeginsWith(v) => SortKeyOp::BeginsWith(layout.latest(v)),
        SortKeyOp::Eq(v) => SortKeyOp::Eq(layout.latest(v)),
        SortKeyOp::Nothing => SortKeyOp::Nothing,
        _ => return None,
    };
    let mut latest = SortKeyRange::op(op);
    latest.exclude = range.exclude.as_deref().map(|v| layout.latest(v));
    latest.prefix = range.prefix.as_deref().map(|v| layout.latest(v));
    Some(SortCondition::Rendered(latest))
}

impl<X: Table> QuerySource<X> {
    /// One page's request, rendered into the SDK's builder and customized.
    fn request(&self, r: PageRequest) -> QueryFluentBuilder {
        let p = &self.prepared;
        let request = self
            .db
            .client()
            .query()
            .table_name(self.db.table_name())
            .set_index_name(self.index.map(str::to_owned))
            .key_condition_expression(&p.key_condition)
            .set_filter_expression(p.filter.clone())
            .set_projection_expression(p.projection.clone())
            .set_expression_attribute_names(p.names.clone())
            .set_expression_attribute_values(p.values.clone())
            .scan_index_forward(self.forward)
            .consistent_read(self.consistent)
            .set_limit(r.limit)
            .set_exclusive_start_key(r.start)
            .return_consumed_capacity(ReturnConsumedCapacity::Total);
        self.customize.apply(request)
    }
}

impl<X: Table> PageSource for QuerySource<X> {
    fn fetch(&self, r: PageRequest) -> BoxFuture<'_, Result<RawPage, Error>> {
        // No sort key can match, and DynamoDB would refuse every way to say so.
        if self.prepared.nothing {
            return Box::pin(async { Ok(RawPage::default()) });
        }
        let span = crate::trace::request("Query", 1);
        if let Some(limit) = r.limit {
            crate::trace::record(&span, "aws.dynamodb.limit", limit);
        }
        let request = self.request(r);
        Box::pin(
            async move {
                let out = request.send().await.map_err(|e| {
                    crate::trace::request_failed(Error::service("Query", self.db.table_name(), e))
                })?;
                Ok(RawPage::from_output(
                    out.items,
                    out.last_evaluated_key,
                    out.consumed_capacity.as_ref(),
                    out.scanned_count,
                    self.consistent,
                ))
            }
            .instrument(span),
        )
    }
}

impl Prepared {
    /// The part of the sort-key condition DynamoDB could not apply (see [`SortKeyRange`]).
    fn admits(&self, item: &Item) -> bool {
        admits(self.sk_attr, self.sk_range.as_ref(), item)
    }

    /// [`admits`](Self::admits) as a function of its own, for reads that outlive this
    /// request (a merged read checks the items of every partition with it).
    pub(super) fn admission(&self) -> impl Fn(&Item) -> bool + Send + Sync + 'static {
        let (attr, range) = (self.sk_attr, self.sk_range.clone());
        move |item| admits(attr, range.as_ref(), item)
    }
}

fn admits(attr: Option<&'static str>, range: Option<&SortKeyRange>, item: &Item) -> bool {
    match (range, attr.and_then(|a| item.get(a))) {
        (Some(range), Some(AttributeValue::S(sk))) => range.admits(sk),
        _ => true,
    }
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
    "QueryFluentBuilder",
    "of every page before it is sent",
    "A hook that changes the key condition, filter, projection, placeholders, limit or start key takes the query out of the crate's guarantees (typed results, cursors)."
);

/// The key condition as bytes for the cursor's fingerprint: every part tagged and
/// length-prefixed, so two different conditions never give the same bytes. Written out
/// for the common single-attribute keys (formatting them with `Debug` cost more than the
/// rest of the fingerprint); multi-attribute keys keep their `Debug` text.
fn condition_bytes(pk: &PartitionValue, sk: &SortCondition) -> Vec<u8> {
    fn part(out: &mut Vec<u8>, tag: u8, bytes: &[u8]) {
        out.push(tag);
        out.extend_from_slice(&(bytes.len() as u64).to_be_bytes());
        out.extend_from_slice(bytes);
    }
    let mut out = Vec::with_capacity(128);
    match pk {
        PartitionValue::Rendered(v) => part(&mut out, b'p', v.as_bytes()),
        PartitionValue::Attributes(_) => part(&mut out, b'P', format!("{pk:?}").as_bytes()),
    }
    match sk {
        SortCondition::Rendered(range) => {
            let (tag, values): (u8, &[&String]) = match &range.op {
                SortKeyOp::Any => (b'a', &[]),
                SortKeyOp::Nothing => (b'n', &[]),
                SortKeyOp::Eq(v) => (b'=', &[v]),
                SortKeyOp::BeginsWith(v) => (b'^', &[v]),
                SortKeyOp::Le(v) => (b'<', &[v]),
                SortKeyOp::Ge(v) => (b'>', &[v]),
                SortKeyOp::Between(low, high) => (b'[', &[low, high]),
            };
            part(&mut out, tag, &[values.len() as u8]);
            for v in values {
                part(&mut out, b's', v.as_bytes());
            }
            for (tag, v) in [(b'x', &range.exclude), (b'f', &range.prefix)] {
                match v {
                    Some(v) => part(&mut out, tag, v.as_bytes()),
                    None => part(&mut out, b'-', &[]),
                }
            }
            // The history of one item: a cursor of another item's history (same range
            // under an unpadded layout) does not continue it. Absent otherwise, so the
            // cursors of other queries keep their bytes.
            if let Some((_, rest)) = &range.revisions_of {
                part(&mut out, b'r', rest.as_bytes());
            }
        }
        SortCondition::Attributes(_) => part(&mut out, b'S', format!("{sk:?}").as_bytes()),
    }
    out
}

#[cfg(test)]
mod tests;
