//! [`Explain`]: what a read will send and what it may cost, before it runs.
//!
//! Every read builder has an `explain()` next to its `params()`
//! ([`Get`](dynamo_model::item::Get), [`Query`](dynamo_model::read::Query) and the
//! collections, projections and histories read through it,
//! [`ScatterQuery`](dynamo_model::read::ScatterQuery), [`Scan`](dynamo_model::read::Scan),
//! [`BatchGet`](dynamo_model::batch::BatchGet)). It returns the very inputs `params()`
//! returns, with what a reader wants to know of them: the table and index, the key
//! condition, filter and projection with their placeholders resolved, how many requests
//! one read sends, the items and read units of a page by DynamoDB's capacity rules
//! ([`crate::capacity`]), and warnings about reads that cost more than they return.

use crate::collection::Target;
use crate::schema::{IndexSchema, Projection, TableSchema};
use aws_sdk_dynamodb::operation::batch_get_item::BatchGetItemInput;
use aws_sdk_dynamodb::operation::get_item::GetItemInput;
use aws_sdk_dynamodb::operation::query::QueryInput;
use aws_sdk_dynamodb::operation::scan::ScanInput;

mod observed;
mod render;

pub(crate) use observed::{Observations, Seen};

/// Below this share of the items read that a filter keeps (returned ÷ read, over the
/// observed calls of a read shape), [`Warning::FilterDiscards`] is given: the read pays
/// for more than twice what it returns (a filter is applied after the read, so the items
/// it drops cost read capacity all the same).
pub const FILTER_KEEPS_AT_LEAST: f64 = 0.5;

/// From this many reads a minute of a scan or scatter query (observed requests of its
/// shape a minute ÷ the requests one read sends), [`Warning::Frequent`] is given: reads
/// that fan out over segments or shards belong off the request path.
pub const FREQUENT_READS_PER_MINUTE: f64 = 10.0;

/// DynamoDB stops a `Query`'s or `Scan`'s response at 1 MB of items read.
const RESPONSE_BYTES: usize = 1024 * 1024;

/// The requests a read sends, exactly as the builder's `params()` returns them.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Requests {
    /// One `GetItem`.
    Get(GetItemInput),
    /// The first `Query` of each partition: one for a query, one per shard of a scatter
    /// query. Later requests send the same input with `ExclusiveStartKey` set.
    Query(Vec<QueryInput>),
    /// The first `Scan` of each segment (one without segments).
    Scan(Vec<ScanInput>),
    /// One `BatchGetItem` per chunk of up to 100 keys.
    BatchGet(Vec<BatchGetItemInput>),
}

impl Requests {
    /// How many inputs there are (the requests of a read's first page).
    pub fn len(&self) -> usize {
        match self {
            Requests::Get(_) => 1,
            Requests::Query(inputs) => inputs.len(),
            Requests::Scan(inputs) => inputs.len(),
            Requests::BatchGet(inputs) => inputs.len(),
        }
    }

    /// Whether there is no input (never, for a read that can be explained).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// How a read spreads over requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fanout {
    /// One request: a get, or a query (one request a page).
    One,
    /// One query per partition of a scatter query, run concurrently and merged.
    Shards(usize),
    /// One scan per segment of a parallel scan.
    Segments(u32),
    /// `BatchGetItem` requests of up to 100 keys each.
    Batches {
        /// The requests.
        requests: usize,
        /// The distinct keys they read.
        keys: usize,
    },
}

/// Where the item size of an [`Estimate`] comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum SizeBasis {
    /// The sizes observed of the entity types read (by an
    /// [`Insight`](dynamo_model::insight) attached to the `Db`).
    Observed {
        /// The mean size of an item, in bytes (weighted over the entity types read).
        mean_bytes: f64,
        /// How many items it was measured on.
        samples: u64,
    },
    /// No size observed: only the bounds of the capacity rules are known.
    Unknown,
}

/// The items and read units of one page of a read: the first request of each shard or
/// segment, or every request of a get or batch get.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Estimate {
    /// Items the page reads (before any filter): one for a get, the keys of a batch get,
    /// the `Limit` of each request of a query or scan (or, without one, the items a
    /// request of this read shape was observed to read); `None` when unknown.
    pub items: Option<u64>,
    /// The item size the read units are computed from.
    pub sizes: SizeBasis,
    /// The read units of the page by DynamoDB's rules ([`crate::capacity`]) from the items
    /// and their observed size; `None` without both. Sizes are of whole items, so a read
    /// of an index projecting less costs less.
    pub read_units: Option<f64>,
    /// The fewest read units the page can cost (a request costs at least one unit, half
    /// eventually consistent; a batch get at least that per key).
    pub min_read_units: f64,
    /// The most read units the page can cost (a query's or scan's response stops at 1 MB; an
    /// item is at most 400 KB).
    pub max_read_units: f64,
}

/// Something about a read that costs more than it returns.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Warning {
    /// In observed calls of this read shape, the filter kept less than
    /// [`FILTER_KEEPS_AT_LEAST`] of the items read: the rest was paid for and dropped.
    FilterDiscards {
        /// The share of the items read that the filter dropped, from 0 to 1.
        discarded: f64,
        /// The observed calls (requests) it is measured over.
        calls: u64,
    },
    /// A scan or scatter query read at least [`FREQUENT_READS_PER_MINUTE`] times a minute.
    Frequent {
        /// `"scan"` or `"scatter query"`.
        read: &'static str,
        /// Reads a minute: observed requests of this shape a minute ÷ the requests of one
        /// read.
        per_minute: f64,
    },
    /// Items of entity types the read does not return came back in observed calls (a
    /// collection reads the whole partition and drops the types it does not hold): they
    /// cost read capacity. Narrow the sort key, or add the types to the collection.
    DroppedEntityTypes {
        /// The entity types dropped, with how many of their items came back.
        types: Vec<(String, u64)>,
    },
    /// The index projects only some attributes and the read returns keys: whole items
    /// take a `hydrate` (one `BatchGetItem` a page, each item rounded to 4 KB on its own).
    Hydrate {
        /// The index.
        index: &'static str,
        /// `KEYS_ONLY` or `INCLUDE`.
        projection: &'static str,
    },
    /// The history of one item in revision order under an unpadded layout: every request
    /// reads the item's whole history, whatever the `limit`.
    WholeHistory,
}

/// An expression as sent, and with its placeholders replaced by the names and values
/// they stand for (for reading only: it is not valid to send).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Expression {
    /// The text as sent (`#n0 = :v0 AND begins_with(#n1, :v1)`).
    pub sent: String,
    /// The text with placeholders resolved (`PK = "USER#ada" AND begins_with(SK, "ORDER#")`).
    pub resolved: String,
}

/// What a read will send and what it may cost, before it runs.
///
/// Every read builder has an `explain()` next to its `params()`
/// ([`Get`](dynamo_model::item::Get), [`Query`](dynamo_model::read::Query) and the
/// collections, projections, keys and histories read through it,
/// [`ScatterQuery`](dynamo_model::read::ScatterQuery), [`Scan`](dynamo_model::read::Scan),
/// [`BatchGet`](dynamo_model::batch::BatchGet)). It holds the very inputs `params()`
/// returns, with what a reader wants to know of them: the table and index, the key
/// condition, filter and projection with their placeholders resolved, how many requests
/// one read sends, the items and read units of a page by DynamoDB's capacity rules
/// ([`crate::capacity`]), and [`Warning`]s about reads that cost more than they return.
/// Estimates and warnings use what an [`Insight`](super::Insight) attached to the `Db`
/// ([`Db::observed`](dynamo_model::Db::observed)) saw of the same read shape and entity
/// types, when there is one. `Display` renders it as a readable plan.
///
/// ```
/// # use dynamo_model::{Entity, Table};
/// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
/// # #[derive(Entity, serde::Serialize, serde::Deserialize)]
/// # #[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{order_id}")]
/// # struct Order { user_id: String, order_id: String, total: u64 }
/// use dynamo_model::insight::{Fanout, Requests};
///
/// let db = dynamo_model::Db::<App>::offline("app");
/// let query = || db.query(Order::partition("ada")).filter(Order::fields().total.gt(100u64)).limit(20);
/// let plan = query().explain()?;
/// // The very request `params()` returns, and what it says.
/// assert_eq!(plan.requests, Requests::Query(vec![query().params()?]));
/// assert_eq!(plan.fanout, Fanout::One);
/// let key = plan.key_condition.as_ref().map(|k| k.resolved.as_str());
/// assert_eq!(key, Some(r#"PK = "USER#ada" AND begins_with(SK, "ORDER#")"#));
/// assert_eq!(plan.estimate.items, Some(20));
/// println!("{plan}");
/// # Ok::<(), dynamo_model::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Explain {
    /// The DynamoDB call: `GetItem`, `Query`, `Scan` or `BatchGetItem`.
    pub operation: &'static str,
    /// The table.
    pub table: String,
    /// The index read, if any.
    pub index: Option<String>,
    /// The inputs, as `params()` returns them.
    pub requests: Requests,
    /// How the read spreads over requests.
    pub fanout: Fanout,
    /// Whether the reads are strongly consistent.
    pub consistent: bool,
    /// The keys read by a get or batch get, resolved (`PK = "USER#ada" AND SK = "PROFILE"`).
    pub keys: Vec<String>,
    /// The `KeyConditionExpression` of a query (of its first partition for a scatter
    /// query: the others differ in the partition value only).
    pub key_condition: Option<Expression>,
    /// The `FilterExpression`, including the entity-type and expiry filters the crate adds.
    pub filter: Option<Expression>,
    /// The `ProjectionExpression`, when only some attributes are read.
    pub projection: Option<Expression>,
    /// The entity types the read returns (the members of a collection).
    pub entity_types: Vec<&'static str>,
    /// The items and read units of a page.
    pub estimate: Estimate,
    /// What costs more than it returns.
    pub warnings: Vec<Warning>,
}

/// What a builder knows of its read beyond the inputs: the target and the index.
pub(crate) struct Reading {
    table: &'static TableSchema,
    index: Option<&'static IndexSchema>,
    entity_types: &'static [&'static str],
    keys_only: bool,
    whole_history: bool,
}

impl Reading {
    /// A read of target `T` from `index` (the table when `None`).
    pub(crate) fn of<T: Target>(index: Option<&'static IndexSchema>) -> Self {
        Reading {
            table: &<T::Table as crate::Table>::SCHEMA,
            index,
            entity_types: T::ENTITY_TYPES,
            keys_only: T::IS_KEYS,
            whole_history: false,
        }
    }

    /// The history of one item, read whole and sorted by slot on every request.
    pub(crate) fn whole_history(mut self, yes: bool) -> Self {
        self.whole_history = yes;
        self
    }

    /// The mean item size observed of the entity types read, weighted by samples.
    fn sizes(&self, table: &str, observed: Option<&dyn Observations>) -> SizeBasis {
        let (mut bytes, mut samples) = (0.0, 0u64);
        for sizes in self
            .entity_types
            .iter()
            .filter_map(|t| observed?.sizes(table, t))
        {
            bytes += sizes.mean * sizes.samples as f64;
            samples += sizes.samples;
        }
        if samples == 0 {
            return SizeBasis::Unknown;
        }
        SizeBasis::Observed {
            mean_bytes: bytes / samples as f64,
            samples,
        }
    }

    /// The static warnings: an index projection that takes a hydrate, a whole history.
    fn warnings(&self) -> Vec<Warning> {
        let mut warnings = Vec::new();
        if let Some(index) = self.index
            && self.keys_only
        {
            let projection = match index.projection {
                Projection::KeysOnly => Some("KEYS_ONLY"),
                Projection::Include(_) => Some("INCLUDE"),
                _ => None,
            };
            if let Some(projection) = projection {
                warnings.push(Warning::Hydrate {
                    index: index.name,
                    projection,
                });
            }
        }
        if self.whole_history {
            warnings.push(Warning::WholeHistory);
        }
        warnings
    }
}

impl Explain {
    /// The plan of a `GetItem`.
    pub(crate) fn get(
        reading: Reading,
        input: GetItemInput,
        observed: Option<&dyn Observations>,
    ) -> Self {
        let table = input.table_name().unwrap_or_default().to_owned();
        let consistent = input.consistent_read() == Some(true);
        let keys = input
            .key()
            .map(|key| render::key(reading.table, key))
            .into_iter()
            .collect();
        let sizes = reading.sizes(&table, observed);
        let estimate = Estimate {
            items: Some(1),
            read_units: mean(sizes).map(|bytes| crate::capacity::read_units(bytes, consistent)),
            sizes,
            min_read_units: crate::capacity::read_units(0, consistent),
            max_read_units: crate::capacity::read_units(crate::size::MAX_ITEM_BYTES, consistent),
        };
        let projection = render::expression(
            input.projection_expression(),
            input.expression_attribute_names(),
            None,
        );
        let read = KeyRead {
            consistent,
            keys,
            projection,
            estimate,
        };
        Self::of_keys(
            &reading,
            "GetItem",
            table,
            Fanout::One,
            read,
            Requests::Get(input),
        )
    }

    /// The plan of a query (`Fanout::One`) or scatter query (`Fanout::Shards`): the first
    /// input of each partition.
    pub(crate) fn query(
        reading: Reading,
        inputs: Vec<QueryInput>,
        fanout: Fanout,
        observed: Option<&dyn Observations>,
    ) -> Self {
        let seen = inputs.first().and_then(|i| observed?.query(i));
        let read = (fanout != Fanout::One).then_some("scatter query");
        Self::paged(reading, inputs, fanout, read, seen, observed)
    }

    /// The plan of a scan: the first input of each segment.
    pub(crate) fn scan(
        reading: Reading,
        inputs: Vec<ScanInput>,
        observed: Option<&dyn Observations>,
    ) -> Self {
        let seen = inputs.first().and_then(|i| observed?.scan(i));
        let fanout = match inputs.first().and_then(|i| i.total_segments()) {
            Some(n) => Fanout::Segments(n.max(1) as u32),
            None => Fanout::One,
        };
        Self::paged(reading, inputs, fanout, Some("scan"), seen, observed)
    }

    /// The plan of a query or a scan, read off the first of its `inputs` (one a partition
    /// or segment) and what was `seen` of its shape.
    fn paged<I: PagedInput>(
        reading: Reading,
        inputs: Vec<I>,
        fanout: Fanout,
        read: Option<&'static str>,
        seen: Option<Seen>,
        observed: Option<&dyn Observations>,
    ) -> Self {
        let first = inputs.first();
        let table = first.and_then(I::table).unwrap_or_default().to_owned();
        let (names, values) = (first.and_then(I::names), first.and_then(I::values));
        let text = |e: Option<&str>| render::expression(e, names, values);
        let paged = Paged {
            limit: first.and_then(I::limit),
            consistent: first.and_then(I::consistent) == Some(true),
            requests: inputs.len(),
            filtered: first.is_some_and(|i| i.filter().is_some()),
            read,
        };
        Explain {
            operation: I::OPERATION,
            index: first.and_then(I::index).map(str::to_owned),
            fanout,
            consistent: paged.consistent,
            keys: Vec::new(),
            key_condition: text(first.and_then(I::key_condition)),
            filter: text(first.and_then(I::filter)),
            projection: text(first.and_then(I::projection)),
            entity_types: reading.entity_types.to_vec(),
            estimate: paged.estimate(reading.sizes(&table, observed), seen.as_ref()),
            warnings: paged.warnings(&reading, seen.as_ref()),
            table,
            requests: I::requests(inputs),
        }
    }

    /// The plan of a batch get of `table`: every chunk's input.
    pub(crate) fn batch_get(
        reading: Reading,
        table: &str,
        inputs: Vec<BatchGetItemInput>,
        observed: Option<&dyn Observations>,
    ) -> Self {
        let requested = |i: &BatchGetItemInput| i.request_items()?.get(table).cloned();
        let all: Vec<_> = inputs.iter().filter_map(requested).collect();
        let keys: Vec<String> = all
            .iter()
            .flat_map(|ka| ka.keys())
            .map(|key| render::key(reading.table, key))
            .collect();
        let consistent = all.first().and_then(|ka| ka.consistent_read()) == Some(true);
        let projection = all.first().and_then(|ka| {
            render::expression(
                ka.projection_expression(),
                ka.expression_attribute_names(),
                None,
            )
        });
        let sizes = reading.sizes(table, observed);
        let n = keys.len();
        let units = |bytes: usize| crate::capacity::batch_get_units(vec![bytes; n], 0, consistent);
        let estimate = Estimate {
            items: Some(n as u64),
            read_units: mean(sizes).map(units),
            sizes,
            min_read_units: crate::capacity::batch_get_units([], n, consistent),
            max_read_units: units(crate::size::MAX_ITEM_BYTES),
        };
        let fanout = Fanout::Batches {
            requests: inputs.len(),
            keys: n,
        };
        let read = KeyRead {
            consistent,
            keys,
            projection,
            estimate,
        };
        let requests = Requests::BatchGet(inputs);
        Self::of_keys(
            &reading,
            "BatchGetItem",
            table.to_owned(),
            fanout,
            read,
            requests,
        )
    }

    /// The plan of a read by keys (a get or a batch get): no index, key condition or
    /// filter, and only the static warnings (nothing is filtered away).
    fn of_keys(
        reading: &Reading,
        operation: &'static str,
        table: String,
        fanout: Fanout,
        read: KeyRead,
        requests: Requests,
    ) -> Self {
        Explain {
            operation,
            table,
            index: None,
            requests,
            fanout,
            consistent: read.consistent,
            keys: read.keys,
            key_condition: None,
            filter: None,
            projection: read.projection,
            entity_types: reading.entity_types.to_vec(),
            estimate: read.estimate,
            warnings: reading.warnings(),
        }
    }
}

/// What the plan of a read by keys takes from its inputs.
struct KeyRead {
    consistent: bool,
    /// The keys, rendered.
    keys: Vec<String>,
    projection: Option<Expression>,
    estimate: Estimate,
}

/// The observed mean item size, rounded up to whole bytes.
fn mean(sizes: SizeBasis) -> Option<usize> {
    match sizes {
        SizeBasis::Observed { mean_bytes, .. } => Some(mean_bytes.ceil() as usize),
        SizeBasis::Unknown => None,
    }
}

/// What the plan of a query or a scan reads off its requests.
trait PagedInput: Sized {
    const OPERATION: &'static str;
    fn table(&self) -> Option<&str>;
    fn index(&self) -> Option<&str>;
    fn names(&self) -> Option<&std::collections::HashMap<String, String>>;
    fn values(
        &self,
    ) -> Option<&std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>>;
    fn limit(&self) -> Option<i32>;
    fn consistent(&self) -> Option<bool>;
    fn key_condition(&self) -> Option<&str>;
    fn filter(&self) -> Option<&str>;
    fn projection(&self) -> Option<&str>;
    fn requests(inputs: Vec<Self>) -> Requests;
}

/// The accessors both inputs share; `$key_condition` is the query's own.
macro_rules! paged_input {
    ($ty:ty, $operation:literal, $requests:path, $key_condition:expr) => {
        impl PagedInput for $ty {
            const OPERATION: &'static str = $operation;
            fn table(&self) -> Option<&str> {
                self.table_name()
            }
            fn index(&self) -> Option<&str> {
                self.index_name()
            }
            fn names(&self) -> Option<&std::collections::HashMap<String, String>> {
                self.expression_attribute_names()
            }
            fn values(
                &self,
            ) -> Option<&std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>>
            {
                self.expression_attribute_values()
            }
            fn limit(&self) -> Option<i32> {
                self.limit
            }
            fn consistent(&self) -> Option<bool> {
                self.consistent_read
            }
            fn key_condition(&self) -> Option<&str> {
                let key_condition: fn(&Self) -> Option<&str> = $key_condition;
                key_condition(self)
            }
            fn filter(&self) -> Option<&str> {
                self.filter_expression()
            }
            fn projection(&self) -> Option<&str> {
                self.projection_expression()
            }
            fn requests(inputs: Vec<Self>) -> Requests {
                $requests(inputs)
            }
        }
    };
}

paged_input!(QueryInput, "Query", Requests::Query, |i| i
    .key_condition_expression());
paged_input!(ScanInput, "Scan", Requests::Scan, |_| None);

/// What the estimate and warnings of a query or scan depend on.
struct Paged {
    /// The `Limit` of each request.
    limit: Option<i32>,
    consistent: bool,
    /// Requests of one page (shards or segments).
    requests: usize,
    /// Whether a `FilterExpression` is sent.
    filtered: bool,
    /// `"scan"` or `"scatter query"`: a read that fans out, watched for frequency.
    read: Option<&'static str>,
}

impl Paged {
    fn estimate(&self, sizes: SizeBasis, seen: Option<&Seen>) -> Estimate {
        let per_request = match (self.limit, seen) {
            (Some(limit), _) => Some(limit.max(0) as u64),
            (None, Some(seen)) if seen.calls > 0 => Some(seen.items_read.div_ceil(seen.calls)),
            (None, _) => None,
        };
        let requests = self.requests.max(1) as f64;
        // A response sums its items' sizes and rounds once (`crate::capacity`).
        let read_units = match (per_request, mean(sizes)) {
            (Some(items), Some(bytes)) => {
                let response = (items as usize).saturating_mul(bytes).min(RESPONSE_BYTES);
                Some(crate::capacity::read_units(response, self.consistent) * requests)
            }
            _ => None,
        };
        Estimate {
            items: per_request.map(|n| n * self.requests.max(1) as u64),
            sizes,
            read_units,
            min_read_units: crate::capacity::read_units(0, self.consistent) * requests,
            max_read_units: crate::capacity::read_units(RESPONSE_BYTES, self.consistent) * requests,
        }
    }

    fn warnings(&self, reading: &Reading, seen: Option<&Seen>) -> Vec<Warning> {
        let mut warnings = reading.warnings();
        let Some(seen) = seen else {
            return warnings;
        };
        if self.filtered && seen.items_read > 0 {
            let kept = seen.items_returned as f64 / seen.items_read as f64;
            if kept < FILTER_KEEPS_AT_LEAST {
                warnings.push(Warning::FilterDiscards {
                    discarded: 1.0 - kept,
                    calls: seen.calls,
                });
            }
        }
        if let Some(read) = self.read {
            let per_minute = seen.calls_per_minute / self.requests.max(1) as f64;
            if per_minute >= FREQUENT_READS_PER_MINUTE {
                warnings.push(Warning::Frequent { read, per_minute });
            }
        }
        let dropped: Vec<(String, u64)> = seen
            .returned_by_type
            .iter()
            .filter(|(t, n)| *n > 0 && !reading.entity_types.contains(&t.as_str()))
            .cloned()
            .collect();
        if !dropped.is_empty() {
            warnings.push(Warning::DroppedEntityTypes { types: dropped });
        }
        warnings
    }
}

#[cfg(test)]
mod tests;
