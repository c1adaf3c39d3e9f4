//! The interceptor behind [`Db::observed`](dynamo_model::Db::observed): reads what each
//! call asks (partition keys, read shapes) before it is sent, and what it cost after.

use super::shapes::ShapeCall;
use super::{Fnv, Insight, PartitionId, PartitionKey, key_hash};
use crate::capacity::{Units, read_units, transactional, write_units};
use crate::registry::EntityRegistration;
use crate::schema::{IndexKind, TableSchema};
use crate::{Item, item_size};
use aws_sdk_dynamodb::config::interceptors::{
    BeforeSerializationInterceptorContextMut, FinalizerInterceptorContextRef,
};
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::error::BoxError;
use aws_sdk_dynamodb::operation::{
    batch_get_item::BatchGetItemOutput, batch_write_item::BatchWriteItemOutput,
    delete_item::DeleteItemOutput, get_item::GetItemOutput, put_item::PutItemOutput,
    query::QueryOutput, scan::ScanOutput, transact_get_items::TransactGetItemsOutput,
    transact_write_items::TransactWriteItemsOutput, update_item::UpdateItemOutput,
};
use aws_sdk_dynamodb::types::{AttributeValue, ConsumedCapacity, ReturnConsumedCapacity};
use aws_smithy_runtime_api::client::interceptors::context::Output;
use aws_smithy_types::config_bag::{Storable, StoreReplace};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

mod parse;
use parse::ask;

/// The interceptor: one per observed `Db`, for its table.
#[derive(Debug)]
pub(crate) struct Observing {
    insight: Insight,
    table: Arc<str>,
    schema: &'static TableSchema,
    entities: Vec<&'static EntityRegistration>,
}

impl Observing {
    pub(crate) fn new<T: crate::Table>(insight: &Insight, table: Arc<str>) -> Self {
        Observing {
            insight: insight.clone(),
            table,
            schema: &T::SCHEMA,
            entities: crate::registry::entities_of::<T>(),
        }
    }
}

/// One partition a call touched: the table's (`index: None`) or an index's.
#[derive(Debug, Clone)]
pub(super) struct Touched {
    pub(super) index: Option<&'static str>,
    pub(super) pk: String,
    pub(super) sk: Option<String>,
    pub(super) entity_type: Option<Arc<str>>,
    /// The units by the capacity rules, to share a reported total by.
    pub(super) estimate: f64,
}

/// What a call asked, kept from its input for its output.
#[derive(Debug, Clone)]
pub(super) enum Asked {
    /// A `GetItem` of a key.
    Get {
        pk: String,
        sk: Option<String>,
        consistent: bool,
    },
    /// A `Query` of one partition.
    Query {
        partition: Option<(Option<&'static str>, String)>,
        shape: u64,
        projected: bool,
        consistent: bool,
    },
    /// A `Scan`.
    Scan { shape: u64, projected: bool },
    /// A `BatchGetItem` or a `TransactGetItems` (`ours`: which of its gets read this
    /// table; empty for a batch): partitions known from the items returned.
    GetMany { consistent: bool, ours: Vec<bool> },
    /// A write of one or more items.
    Write { touched: Vec<Touched> },
}

impl Storable for Asked {
    type Storer = StoreReplace<Asked>;
}

impl Intercept for Observing {
    fn name(&self) -> &'static str {
        "dynamo_model::insight::Insight"
    }

    fn modify_before_serialization(
        &self,
        context: &mut BeforeSerializationInterceptorContextMut<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if let Some(asked) = ask(self, context.input_mut()) {
            cfg.interceptor_state().store_put(asked);
        }
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
            Some(Ok(output)) => output,
            // A single-item write refused by its condition consumed its write units.
            Some(Err(error)) if refused_by_condition(error) => {
                if let Asked::Write { touched } = asked {
                    let writes = share(touched, &HashMap::new());
                    self.publish(Seen {
                        now: Instant::now(),
                        reads: Vec::new(),
                        writes,
                        sizes: Vec::new(),
                        shape: None,
                    });
                }
                return Ok(());
            }
            _ => return Ok(()),
        };
        let now = Instant::now();
        let mut seen = Seen {
            now,
            reads: Vec::new(),
            writes: Vec::new(),
            sizes: Vec::new(),
            shape: None,
        };
        self.account(&asked, output, &mut seen);
        self.publish(seen);
        Ok(())
    }
}

/// What one call's response showed, applied to the insight under one lock.
struct Seen {
    now: Instant,
    reads: Vec<(Touched, f64)>,
    writes: Vec<(Touched, f64)>,
    sizes: Vec<(Arc<str>, usize)>,
    shape: Option<(u64, ShapeCall)>,
}

impl Observing {
    pub(super) fn schema(&self) -> &'static TableSchema {
        self.schema
    }

    pub(super) fn table(&self) -> &str {
        &self.table
    }

    /// The entity type an item carries.
    pub(super) fn type_of(&self, item: &Item) -> Option<Arc<str>> {
        match item.get(self.schema.entity_type) {
            Some(AttributeValue::S(t)) => Some(Arc::from(t.as_str())),
            _ => None,
        }
    }

    /// The partitions `item` is in: the table's, and each global index's whose key it has.
    /// A write also writes each local index the item is in, on the same partition: `write`
    /// counts those on the table's partition.
    pub(super) fn partitions_of(
        &self,
        item: &Item,
        estimate: f64,
        write: bool,
        out: &mut Vec<Touched>,
    ) {
        let entity_type = self.type_of(item);
        let text = |name: &str| parse::text(item.get(name));
        if let Some(pk) = text(self.schema.pk.name) {
            let sk = self.schema.sk.and_then(|sk| text(sk.name));
            let local = |i: &&crate::schema::IndexSchema| {
                i.kind == IndexKind::Local && i.sk.iter().all(|a| item.contains_key(a.name))
            };
            let locals = if write {
                self.schema.indexes.iter().filter(local).count()
            } else {
                0
            };
            out.push(Touched {
                index: None,
                pk,
                sk,
                entity_type: entity_type.clone(),
                estimate: estimate * (1 + locals) as f64,
            });
        }
        for index in self.schema.indexes {
            if index.kind != IndexKind::Global {
                continue;
            }
            let parts: Option<Vec<String>> = index.pk.iter().map(|a| text(a.name)).collect();
            if let Some(parts) = parts.filter(|p| !p.is_empty()) {
                out.push(Touched {
                    index: Some(index.name),
                    pk: parts.join(" | "),
                    sk: None,
                    entity_type: entity_type.clone(),
                    estimate,
                });
            }
        }
    }

    /// Records what the call `asked` read and cost, from its `output`, into `seen`.
    fn account(&self, asked: &Asked, output: &Output, seen: &mut Seen) {
        match asked {
            Asked::Get { pk, sk, consistent } => {
                self.account_get(pk, sk.as_ref(), *consistent, output, seen)
            }
            Asked::Query {
                partition,
                shape,
                projected,
                consistent,
            } => self.account_query(
                partition.as_ref(),
                *shape,
                *projected,
                *consistent,
                output,
                seen,
            ),
            Asked::Scan { shape, projected } => self.account_scan(*shape, *projected, output, seen),
            Asked::GetMany { consistent, ours } => {
                self.account_get_many(*consistent, ours, output, seen)
            }
            Asked::Write { touched } => self.account_write(touched, output, seen),
        }
    }

    /// The size of each item of a known entity type, into `seen`; returns their types.
    fn record_sizes(&self, seen: &mut Seen, items: &[Item]) -> Vec<Arc<str>> {
        let mut types = Vec::with_capacity(items.len());
        for item in items {
            if let Some(t) = self.type_of(item) {
                seen.sizes.push((t.clone(), item_size(item)));
                types.push(t);
            }
        }
        types
    }

    /// A `GetItem` of `pk`/`sk`: the read of its partition and the item's size.
    fn account_get(
        &self,
        pk: &str,
        sk: Option<&String>,
        consistent: bool,
        output: &Output,
        seen: &mut Seen,
    ) {
        let Some(o) = output.downcast_ref::<GetItemOutput>() else {
            return;
        };
        let size = o.item.as_ref().map_or(0, item_size);
        let entity_type = o.item.as_ref().and_then(|i| self.type_of(i));
        if let Some(item) = &o.item {
            self.record_sizes(seen, std::slice::from_ref(item));
        }
        let units =
            total(o.consumed_capacity.as_ref()).unwrap_or_else(|| read_units(size, consistent));
        let t = Touched {
            index: None,
            pk: pk.to_owned(),
            sk: sk.cloned(),
            entity_type,
            estimate: units,
        };
        seen.reads.push((t, units));
    }

    /// A `Query` of `partition` (index and key): its read, its shape's call and the
    /// items' sizes (not of a projection, which holds part of each item).
    fn account_query(
        &self,
        partition: Option<&(Option<&'static str>, String)>,
        shape: u64,
        projected: bool,
        consistent: bool,
        output: &Output,
        seen: &mut Seen,
    ) {
        let Some(o) = output.downcast_ref::<QueryOutput>() else {
            return;
        };
        let items = o.items.as_deref().unwrap_or_default();
        let bytes: usize = items.iter().map(item_size).sum();
        let units =
            total(o.consumed_capacity.as_ref()).unwrap_or_else(|| read_units(bytes, consistent));
        let types = if projected {
            items.iter().filter_map(|i| self.type_of(i)).collect()
        } else {
            self.record_sizes(seen, items)
        };
        if let Some((index, pk)) = partition {
            let t = Touched {
                index: *index,
                pk: pk.clone(),
                sk: None,
                // Items of a keys-only index carry no type: their keys tell it.
                entity_type: types
                    .first()
                    .cloned()
                    .or_else(|| items.first().and_then(|i| self.type_by_key(i))),
                estimate: units,
            };
            seen.reads.push((t, units));
        }
        let call = ShapeCall {
            read: o.scanned_count.max(0) as u64,
            returned: o.count.max(0) as u64,
            units,
            types,
        };
        seen.shape = Some((shape, call));
    }

    /// A `Scan`: its shape's call and the items' sizes (not of a projection).
    fn account_scan(&self, shape: u64, projected: bool, output: &Output, seen: &mut Seen) {
        let Some(o) = output.downcast_ref::<ScanOutput>() else {
            return;
        };
        let items = o.items.as_deref().unwrap_or_default();
        let units = total(o.consumed_capacity.as_ref()).unwrap_or(0.0);
        let types = if projected {
            items.iter().filter_map(|i| self.type_of(i)).collect()
        } else {
            self.record_sizes(seen, items)
        };
        let call = ShapeCall {
            read: o.scanned_count.max(0) as u64,
            returned: o.count.max(0) as u64,
            units,
            types,
        };
        seen.shape = Some((shape, call));
    }

    /// A `BatchGetItem` or `TransactGetItems` (`ours`: which gets read this table): the
    /// partition of each item returned, sharing the units reported.
    fn account_get_many(&self, consistent: bool, ours: &[bool], output: &Output, seen: &mut Seen) {
        let tx = !ours.is_empty();
        let (items, reported): (Vec<&Item>, Option<f64>) =
            if let Some(o) = output.downcast_ref::<BatchGetItemOutput>() {
                let items = o
                    .responses
                    .as_ref()
                    .and_then(|r| r.get(self.table()))
                    .map(|v| v.iter().collect())
                    .unwrap_or_default();
                let reported = self.reported(o.consumed_capacity.as_deref(), true);
                (items, reported.get(&None).copied())
            } else if let Some(o) = output.downcast_ref::<TransactGetItemsOutput>() {
                let responses = o.responses.iter().flatten().zip(ours);
                let items = responses
                    .filter(|(_, ours)| **ours)
                    .filter_map(|(r, _)| r.item.as_ref())
                    .collect();
                let reported = self.reported(o.consumed_capacity.as_deref(), true);
                (items, reported.get(&None).copied())
            } else {
                return;
            };
        let mut touched = Vec::new();
        for item in items {
            let units = read_units(item_size(item), consistent || tx);
            let units = if tx { transactional(units) } else { units };
            let before = touched.len();
            self.partitions_of(item, units, false, &mut touched);
            touched.truncate(before + 1); // a read of the table: its partition only
            seen.sizes
                .extend(self.type_of(item).map(|t| (t, item_size(item))));
        }
        let mut by_target = HashMap::new();
        if let Some(r) = reported {
            by_target.insert(None, r);
        }
        seen.reads.extend(share(touched, &by_target));
    }

    /// A write of the partitions `touched`, sharing the units reported (with the index
    /// partitions of an item it returned).
    fn account_write(&self, touched: &[Touched], output: &Output, seen: &mut Seen) {
        let (reported, returned) = self.write_output(output);
        let mut touched = touched.to_vec();
        // An update or delete returning the item shows its index partitions.
        if let (Some(item), [base]) = (returned, touched.as_mut_slice()) {
            base.entity_type = base.entity_type.take().or_else(|| self.type_of(item));
            // The item after an update, before a delete: its size is the charge
            // (an update's, unless the item was larger before).
            base.estimate = base.estimate.max(write_units(item_size(item)));
            let estimate = base.estimate;
            let mut more = Vec::new();
            self.partitions_of(item, estimate, true, &mut more);
            touched.extend(more.into_iter().filter(|t| t.index.is_some()));
        }
        seen.writes.extend(share(touched, &reported));
    }

    /// A write's reported units per target (table or index) and the item it returned.
    fn write_output<'a>(
        &self,
        output: &'a aws_smithy_runtime_api::client::interceptors::context::Output,
    ) -> (HashMap<Option<&'static str>, f64>, Option<&'a Item>) {
        if let Some(o) = output.downcast_ref::<PutItemOutput>() {
            (
                self.reported(o.consumed_capacity.as_slice_opt(), false),
                None,
            )
        } else if let Some(o) = output.downcast_ref::<UpdateItemOutput>() {
            (
                self.reported(o.consumed_capacity.as_slice_opt(), false),
                o.attributes.as_ref(),
            )
        } else if let Some(o) = output.downcast_ref::<DeleteItemOutput>() {
            (
                self.reported(o.consumed_capacity.as_slice_opt(), false),
                o.attributes.as_ref(),
            )
        } else if let Some(o) = output.downcast_ref::<BatchWriteItemOutput>() {
            (self.reported(o.consumed_capacity.as_deref(), false), None)
        } else if let Some(o) = output.downcast_ref::<TransactWriteItemsOutput>() {
            (self.reported(o.consumed_capacity.as_deref(), false), None)
        } else {
            (HashMap::new(), None)
        }
    }

    /// The units DynamoDB reported for this table, per target: the table (`None`) and each
    /// global index. Without a breakdown, the total is the table's for a read (which reads
    /// the table or one index), and nothing is known for a write (its total includes
    /// every index it wrote).
    fn reported(
        &self,
        list: Option<&[ConsumedCapacity]>,
        read: bool,
    ) -> HashMap<Option<&'static str>, f64> {
        let mut out = HashMap::new();
        for c in list.unwrap_or_default() {
            if c.table_name.as_deref().is_some_and(|t| t != self.table()) {
                continue;
            }
            match c.table.as_ref().and_then(|t| t.capacity_units) {
                Some(units) => {
                    // A local index shares the table's partitions.
                    let local: f64 = c
                        .local_secondary_indexes
                        .iter()
                        .flat_map(|l| l.values())
                        .filter_map(|l| l.capacity_units)
                        .sum();
                    out.insert(None, units + local);
                    for index in self.schema.indexes {
                        let units = c
                            .global_secondary_indexes
                            .as_ref()
                            .and_then(|g| g.get(index.name))
                            .and_then(|g| g.capacity_units);
                        if let Some(units) = units {
                            out.insert(Some(index.name), units);
                        }
                    }
                }
                None if read => {
                    if let Some(units) = c.capacity_units {
                        out.insert(None, units);
                    }
                }
                None => {}
            }
        }
        out
    }

    fn publish(&self, seen: Seen) {
        let settings = self.insight.settings();
        let warnings = self.insight.update(|hot, shapes| {
            let mut warnings = Vec::new();
            for (units, list) in [(Units::Read, &seen.reads), (Units::Write, &seen.writes)] {
                for (t, consumed) in list {
                    let key = self.partition_hash(t);
                    let label = || Arc::new(self.label(t, settings.show_keys));
                    let own = self.owner(t);
                    warnings.extend(hot.record(seen.now, units, key, *consumed, label, own));
                }
            }
            for (entity_type, bytes) in &seen.sizes {
                shapes.size(&self.table, entity_type, *bytes);
            }
            if let Some((shape, call)) = seen.shape {
                shapes.record(seen.now, shape, call);
            }
            warnings
        });
        for warning in warnings {
            let p = &warning.hot.partition;
            crate::trace::hot_partition(
                &p.table,
                p.index.as_deref(),
                p.entity_type.as_deref(),
                p.template,
                super::hot::units_name(warning.hot.units),
                warning.hot.rate,
                warning.hot.shards,
                &warning,
            );
        }
    }

    /// The entity type of a touched item, when known, with its template there.
    fn owner(&self, t: &Touched) -> Option<super::hot::Owner> {
        let entity_type = t.entity_type.clone()?;
        let template = self.template_of(&entity_type, t.index);
        Some((entity_type, template))
    }

    /// `entity_type`'s partition-key template on the table or on `index`.
    fn template_of(&self, entity_type: &str, index: Option<&str>) -> Option<&'static str> {
        let r = self
            .entities
            .iter()
            .find(|r| r.entity_type == entity_type)?;
        match index {
            None => Some(r.pk_template),
            Some(index) => r.index_templates.iter().find(|i| i.index == index)?.pk,
        }
    }

    /// The entity type whose templates render the table key of `item` (for items without
    /// the entity-type attribute, e.g. read from a keys-only index).
    fn type_by_key(&self, item: &Item) -> Option<Arc<str>> {
        let pk = parse::text(item.get(self.schema.pk.name))?;
        let sk = self.schema.sk.and_then(|sk| parse::text(item.get(sk.name)));
        let raw = crate::RawKey { pk, sk };
        self.entities
            .iter()
            .find(|r| r.owns(&raw))
            .map(|r| Arc::from(r.entity_type))
    }

    fn partition_hash(&self, t: &Touched) -> u64 {
        let mut h = Fnv::new();
        h.write(self.table.as_bytes());
        h.write(b"\x00");
        h.write(t.index.unwrap_or("").as_bytes());
        h.write(b"\x00");
        h.write(t.pk.as_bytes());
        h.finish()
    }

    /// What the partition is: its entity type (carried by the item, else the one whose
    /// templates render the key) and that type's partition-key template.
    fn label(&self, t: &Touched, show_keys: bool) -> PartitionId {
        let by_key = || {
            let raw = crate::RawKey {
                pk: t.pk.clone(),
                sk: t.sk.clone(),
            };
            self.entities
                .iter()
                .find(|r| match t.sk {
                    Some(_) => r.owns(&raw),
                    None => r.owns_partition(&t.pk),
                })
                .map(|r| Arc::from(r.entity_type))
        };
        let entity_type = match t.index {
            None => t.entity_type.clone().or_else(by_key),
            Some(_) => t.entity_type.clone(),
        };
        let registration = entity_type
            .as_deref()
            .and_then(|e| self.entities.iter().find(|r| r.entity_type == e));
        let template = registration.and_then(|r| match t.index {
            None => Some(r.pk_template),
            Some(index) => r
                .index_templates
                .iter()
                .find(|i| i.index == index)
                .and_then(|i| i.pk),
        });
        PartitionId {
            table: self.table.clone(),
            index: t.index.map(Arc::from),
            entity_type,
            template,
            key: if show_keys {
                PartitionKey::Text(t.pk.clone())
            } else {
                PartitionKey::Hashed(key_hash(&t.pk))
            },
        }
    }
}

/// Each touched partition with its part of the reported units of its target (shared in
/// proportion to the estimates), or its estimate where nothing was reported.
fn share(
    touched: Vec<Touched>,
    reported: &HashMap<Option<&'static str>, f64>,
) -> Vec<(Touched, f64)> {
    let mut estimated: HashMap<Option<&'static str>, f64> = HashMap::new();
    for t in &touched {
        *estimated.entry(t.index).or_default() += t.estimate;
    }
    touched
        .into_iter()
        .map(|t| {
            let units = match (reported.get(&t.index), estimated.get(&t.index)) {
                (Some(r), Some(e)) if *e > 0.0 => r * t.estimate / e,
                _ => t.estimate,
            };
            (t, units)
        })
        .collect()
}

/// Whether a call failed because its condition was false: DynamoDB charged the write.
fn refused_by_condition(
    error: &aws_smithy_runtime_api::client::orchestrator::OrchestratorError<
        aws_smithy_runtime_api::client::interceptors::context::Error,
    >,
) -> bool {
    use aws_sdk_dynamodb::operation::{
        delete_item::DeleteItemError, put_item::PutItemError, update_item::UpdateItemError,
    };
    let Some(e) = error.as_operation_error() else {
        return false;
    };
    e.downcast_ref::<PutItemError>()
        .is_some_and(PutItemError::is_conditional_check_failed_exception)
        || e.downcast_ref::<UpdateItemError>()
            .is_some_and(UpdateItemError::is_conditional_check_failed_exception)
        || e.downcast_ref::<DeleteItemError>()
            .is_some_and(DeleteItemError::is_conditional_check_failed_exception)
}

/// The total a single-table call reported.
fn total(c: Option<&ConsumedCapacity>) -> Option<f64> {
    c.and_then(|c| c.capacity_units)
}

/// A single `ConsumedCapacity` as a list of one.
trait AsSlice {
    fn as_slice_opt(&self) -> Option<&[ConsumedCapacity]>;
}

impl AsSlice for Option<ConsumedCapacity> {
    fn as_slice_opt(&self) -> Option<&[ConsumedCapacity]> {
        self.as_ref().map(std::slice::from_ref)
    }
}

/// With [`Insight::exact_units`], asks for `INDEXES` unless the caller chose a value: a
/// write's units split by table and index.
pub(super) fn indexes(o: &Observing, current: &mut Option<ReturnConsumedCapacity>) {
    if o.insight.settings().exact {
        crate::capacity::ask_indexes(current);
    }
}

#[cfg(test)]
mod tests;
