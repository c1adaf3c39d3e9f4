//! What each call showed the insight: the partitions it read or wrote and their units,
//! the sizes of the items it returned, the shape of a read; from the call's record and
//! DynamoDB's answer.

use super::{Observing, Seen, Touched, share};
use crate::Item;
use crate::call::{Action, Answer, Call, Operation, Returned, Target};
use crate::capacity::{read_units, transactional, write_units};
use crate::insight::shapes::ShapeCall;
use crate::item_size;
use crate::schema::IndexKind;
use aws_sdk_dynamodb::types::ConsumedCapacity;
use std::collections::HashMap;

impl Observing {
    pub(super) fn account(&self, call: &Call, answer: &Answer<'_>, seen: &mut Seen) {
        match call.operation {
            Operation::GetItem if self.ours(&call.table) => self.account_get(call, answer, seen),
            Operation::Query | Operation::Scan if self.ours(&call.table) => {
                self.account_items(call, answer, seen)
            }
            Operation::BatchGetItem | Operation::TransactGetItems => {
                self.account_get_many(call, answer, seen)
            }
            Operation::PutItem
            | Operation::UpdateItem
            | Operation::DeleteItem
            | Operation::BatchWriteItem
            | Operation::TransactWriteItems => self.account_write(call, answer, seen),
            _ => {}
        }
    }

    /// The partitions an item is in: the table's, and each global index's whose key it
    /// has. A write also writes each local index the item is in, on the same partition:
    /// `write` counts those on the table's partition.
    fn partitions(&self, target: &Target, estimate: f64, write: bool, out: &mut Vec<Touched>) {
        if let Some(key) = &target.key {
            let locals = if write { target.local } else { 0 };
            out.push(Touched {
                index: None,
                pk: key.pk.clone(),
                sk: key.sk.clone(),
                entity_type: target.entity.clone(),
                estimate: estimate * (1 + locals) as f64,
            });
        }
        for (index, pk) in &target.global {
            out.push(Touched {
                index: Some(index),
                pk: pk.clone(),
                sk: None,
                entity_type: target.entity.clone(),
                estimate,
            });
        }
    }

    /// The partitions of an item DynamoDB returned.
    fn partitions_of(&self, item: &Item, estimate: f64, write: bool, out: &mut Vec<Touched>) {
        let target = Target::put(self.schema, self.table.clone(), item);
        self.partitions(&target, estimate, write, out);
    }

    /// The partitions a call writes in this table, by what it asked: a put's (the
    /// table's and its indexes'), an update's, a delete's or a condition check's by its
    /// key; a transaction's at transactional cost.
    pub(super) fn written(&self, call: &Call) -> Vec<Touched> {
        let cost = |units: f64| match call.operation {
            Operation::TransactWriteItems => transactional(units),
            _ => units,
        };
        let mut touched = Vec::new();
        for target in call.targets.iter().filter(|t| self.ours(&t.table)) {
            match (target.action, target.size) {
                (Action::Put, Some(size)) => {
                    self.partitions(target, cost(write_units(size)), true, &mut touched)
                }
                (Action::Get, _) => {}
                _ => touched.extend(target.key.as_ref().map(|key| Touched {
                    index: None,
                    pk: key.pk.clone(),
                    sk: key.sk.clone(),
                    entity_type: target.entity.clone(),
                    estimate: cost(1.0),
                })),
            }
        }
        touched
    }

    fn record_sizes(&self, seen: &mut Seen, items: &[Item]) -> Vec<std::sync::Arc<str>> {
        let mut types = Vec::with_capacity(items.len());
        for item in items {
            if let Some(t) = self.type_of(item) {
                seen.sizes.push((t.clone(), item_size(item)));
                types.push(t);
            }
        }
        types
    }

    fn account_get(&self, call: &Call, answer: &Answer<'_>, seen: &mut Seen) {
        let (Returned::One(item), Some(key)) = (
            &answer.returned,
            call.targets.first().and_then(|t| t.key.as_ref()),
        ) else {
            return;
        };
        let size = item.map_or(0, item_size);
        let entity_type = item.and_then(|i| self.type_of(i));
        if let Some(item) = item {
            self.record_sizes(seen, std::slice::from_ref(*item));
        }
        let units = total(answer.consumed).unwrap_or_else(|| read_units(size, call.consistent));
        let t = Touched {
            index: None,
            pk: key.pk.clone(),
            sk: key.sk.clone(),
            entity_type,
            estimate: units,
        };
        seen.reads.push((t, units));
    }

    /// The index whose partitions a query reads: `None` for the table, and for a local
    /// index, which shares the table's partitions.
    fn partition_index(&self, call: &Call) -> Option<Option<&'static str>> {
        let Some(name) = call.index.as_deref() else {
            return Some(None);
        };
        let index = self.schema.indexes.iter().find(|x| x.name == name)?;
        Some(match index.kind {
            IndexKind::Local => None,
            IndexKind::Global => Some(index.name),
        })
    }

    fn account_items(&self, call: &Call, answer: &Answer<'_>, seen: &mut Seen) {
        let Returned::Items {
            items,
            scanned,
            count,
        } = &answer.returned
        else {
            return;
        };
        let bytes: usize = items.iter().map(item_size).sum();
        let units = match call.operation {
            Operation::Query => {
                total(answer.consumed).unwrap_or_else(|| read_units(bytes, call.consistent))
            }
            _ => total(answer.consumed).unwrap_or(0.0),
        };
        let types = if call.whole_items {
            self.record_sizes(seen, items)
        } else {
            items.iter().filter_map(|i| self.type_of(i)).collect()
        };
        let partition = call.partition.as_ref().zip(self.partition_index(call));
        if let (Operation::Query, Some((pk, index))) = (call.operation, partition) {
            let t = Touched {
                index,
                pk: pk.clone(),
                sk: None,
                // Items of a keys-only index carry no type: their keys tell it.
                entity_type: types
                    .first()
                    .cloned()
                    .or_else(|| call.entity.map(std::sync::Arc::from))
                    .or_else(|| items.first().and_then(|i| self.type_by_key(i))),
                estimate: units,
            };
            seen.reads.push((t, units));
        }
        if let Some(shape) = call.shape {
            let read = ShapeCall {
                read: *scanned,
                returned: *count,
                units,
                types,
            };
            seen.shape = Some((shape, read));
        }
    }

    fn account_get_many(&self, call: &Call, answer: &Answer<'_>, seen: &mut Seen) {
        let tx = call.operation == Operation::TransactGetItems;
        let items: Vec<&Item> = match &answer.returned {
            Returned::Found { items, .. } => items
                .iter()
                .filter(|(table, _)| self.ours(table))
                .map(|(_, item)| *item)
                .collect(),
            Returned::Each(each) => each
                .iter()
                .zip(&call.targets)
                .filter(|(_, target)| self.ours(&target.table))
                .filter_map(|(item, _)| *item)
                .collect(),
            _ => return,
        };
        if !call.targets.iter().any(|t| self.ours(&t.table)) {
            return;
        }
        let reported = self.reported(answer.consumed, true);
        let mut touched = Vec::new();
        for item in items {
            let units = read_units(item_size(item), call.consistent || tx);
            let units = if tx { transactional(units) } else { units };
            let before = touched.len();
            self.partitions_of(item, units, false, &mut touched);
            touched.truncate(before + 1); // a read of the table: its partition only
            seen.sizes
                .extend(self.type_of(item).map(|t| (t, item_size(item))));
        }
        let mut by_target = HashMap::new();
        if let Some(r) = reported.get(&None) {
            by_target.insert(None, *r);
        }
        seen.reads.extend(share(touched, &by_target));
    }

    fn account_write(&self, call: &Call, answer: &Answer<'_>, seen: &mut Seen) {
        let mut touched = self.written(call);
        if touched.is_empty() {
            return;
        }
        let reported = self.reported(answer.consumed, false);
        // An update or delete returning the item shows its index partitions.
        let returned = match (&answer.returned, call.operation) {
            (_, Operation::PutItem) => None,
            (Returned::One(item), _) => *item,
            _ => None,
        };
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

    /// The units DynamoDB reported for this table, by target (`None`: the table with its
    /// local indexes; a global index by its name).
    fn reported(
        &self,
        list: Option<&[ConsumedCapacity]>,
        read: bool,
    ) -> HashMap<Option<&'static str>, f64> {
        let mut out = HashMap::new();
        for c in list.unwrap_or_default() {
            if c.table_name.as_deref().is_some_and(|t| !self.ours(t)) {
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
}

/// The total a single-table call reported.
fn total(consumed: Option<&[ConsumedCapacity]>) -> Option<f64> {
    consumed?.first().and_then(|c| c.capacity_units)
}
