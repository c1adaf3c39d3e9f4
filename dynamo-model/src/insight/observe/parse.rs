//! What a call asks, read from its input before it is sent: the partitions it touches,
//! and the shape of a read.

use super::{Asked, Observing, Touched, indexes};
use crate::capacity::{transactional, write_units};
use crate::insight::shapes::{query_shape, scan_shape};
use crate::item_size;
use crate::schema::{IndexKind, TableSchema};
use aws_sdk_dynamodb::operation::{
    batch_get_item::BatchGetItemInput, batch_write_item::BatchWriteItemInput,
    delete_item::DeleteItemInput, get_item::GetItemInput, put_item::PutItemInput,
    query::QueryInput, scan::ScanInput, transact_get_items::TransactGetItemsInput,
    transact_write_items::TransactWriteItemsInput, update_item::UpdateItemInput,
};
use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem, WriteRequest};
use aws_smithy_runtime_api::client::interceptors::context::Input;
use std::collections::HashMap;

/// A key attribute's value as text: a string, or a number's digits.
pub(crate) fn text(value: Option<&AttributeValue>) -> Option<String> {
    match value? {
        AttributeValue::S(s) => Some(s.clone()),
        AttributeValue::N(n) => Some(n.clone()),
        _ => None,
    }
}

/// What `input` asks of this `Db`'s table; `None` for another table or another call.
pub(super) fn ask(o: &Observing, input: &mut Input) -> Option<Asked> {
    let ours = |table: Option<&str>| table == Some(o.table());
    let schema = o.schema();
    if let Some(i) = input.downcast_mut::<GetItemInput>() {
        if !ours(i.table_name()) {
            return None;
        }
        indexes(o, &mut i.return_consumed_capacity);
        let (pk, sk) = key_of(schema, i.key.as_ref())?;
        let consistent = i.consistent_read == Some(true);
        return Some(Asked::Get { pk, sk, consistent });
    }
    if let Some(i) = input.downcast_mut::<PutItemInput>() {
        if !ours(i.table_name()) {
            return None;
        }
        indexes(o, &mut i.return_consumed_capacity);
        let item = i.item.as_ref()?;
        let mut touched = Vec::new();
        o.partitions_of(item, write_units(item_size(item)), true, &mut touched);
        return Some(Asked::Write { touched });
    }
    // An update or a delete: one item by its key, of a size the input does not show.
    let by_key = if let Some(i) = input.downcast_mut::<UpdateItemInput>() {
        Some((
            i.table_name.as_deref(),
            &mut i.return_consumed_capacity,
            i.key.as_ref(),
        ))
    } else if let Some(i) = input.downcast_mut::<DeleteItemInput>() {
        Some((
            i.table_name.as_deref(),
            &mut i.return_consumed_capacity,
            i.key.as_ref(),
        ))
    } else {
        None
    };
    if let Some((table, capacity, key)) = by_key {
        if !ours(table) {
            return None;
        }
        indexes(o, capacity);
        let (pk, sk) = key_of(schema, key)?;
        return Some(Asked::Write {
            touched: vec![touched_by_key(pk, sk, 1.0)],
        });
    }
    if let Some(i) = input.downcast_mut::<QueryInput>() {
        if !ours(i.table_name()) {
            return None;
        }
        indexes(o, &mut i.return_consumed_capacity);
        return Some(Asked::Query {
            partition: partition_of_query(schema, i),
            shape: query_shape(i),
            projected: i.projection_expression.is_some() || i.select.is_some(),
            consistent: i.consistent_read == Some(true),
        });
    }
    if let Some(i) = input.downcast_mut::<ScanInput>() {
        if !ours(i.table_name()) {
            return None;
        }
        indexes(o, &mut i.return_consumed_capacity);
        return Some(Asked::Scan {
            shape: scan_shape(i),
            projected: i.projection_expression.is_some() || i.select.is_some(),
        });
    }
    if let Some(i) = input.downcast_mut::<BatchGetItemInput>() {
        let asked = i.request_items.as_ref()?.get(o.table())?;
        let consistent = asked.consistent_read == Some(true);
        indexes(o, &mut i.return_consumed_capacity);
        return Some(Asked::GetMany {
            consistent,
            ours: Vec::new(),
        });
    }
    if let Some(i) = input.downcast_mut::<TransactGetItemsInput>() {
        let ours: Vec<bool> = i
            .transact_items
            .iter()
            .flatten()
            .map(|t| t.get.as_ref().is_some_and(|g| g.table_name == o.table()))
            .collect();
        if !ours.contains(&true) {
            return None;
        }
        indexes(o, &mut i.return_consumed_capacity);
        return Some(Asked::GetMany {
            consistent: true,
            ours,
        });
    }
    if let Some(i) = input.downcast_mut::<BatchWriteItemInput>() {
        let requests = i.request_items.as_ref()?.get(o.table())?;
        let touched = batch_writes(o, requests);
        indexes(o, &mut i.return_consumed_capacity);
        return Some(Asked::Write { touched });
    }
    if let Some(i) = input.downcast_mut::<TransactWriteItemsInput>() {
        let touched = transact_writes(o, i.transact_items.as_deref().unwrap_or_default());
        if touched.is_empty() {
            return None;
        }
        indexes(o, &mut i.return_consumed_capacity);
        return Some(Asked::Write { touched });
    }
    None
}

/// The table key in a request's key map: the partition key's text and the sort key's.
fn key_of(
    schema: &TableSchema,
    key: Option<&HashMap<String, AttributeValue>>,
) -> Option<(String, Option<String>)> {
    let key = key?;
    let pk = text(key.get(schema.pk.name))?;
    Some((pk, schema.sk.and_then(|sk| text(key.get(sk.name)))))
}

/// An item of the table touched by its key alone (its type and indexes unknown).
fn touched_by_key(pk: String, sk: Option<String>, estimate: f64) -> Touched {
    Touched {
        index: None,
        pk,
        sk,
        entity_type: None,
        estimate,
    }
}

/// The partitions a `BatchWriteItem`'s requests on this table touch: a put's (the
/// table's and its indexes'), a delete's by its key.
fn batch_writes(o: &Observing, requests: &[WriteRequest]) -> Vec<Touched> {
    let mut touched = Vec::new();
    for r in requests {
        if let Some(put) = &r.put_request {
            o.partitions_of(
                &put.item,
                write_units(item_size(&put.item)),
                true,
                &mut touched,
            );
        } else if let Some((pk, sk)) = key_of(o.schema(), r.delete_request.as_ref().map(|d| &d.key))
        {
            touched.push(touched_by_key(pk, sk, 1.0));
        }
    }
    touched
}

/// The partitions a `TransactWriteItems`' actions on this table touch, at transactional
/// cost: a put's (the table's and its indexes'), an update's, a delete's or a condition
/// check's by its key.
fn transact_writes(o: &Observing, items: &[TransactWriteItem]) -> Vec<Touched> {
    let mut touched = Vec::new();
    for t in items {
        if let Some(put) = t.put.as_ref().filter(|p| p.table_name == o.table()) {
            let units = transactional(write_units(item_size(&put.item)));
            o.partitions_of(&put.item, units, true, &mut touched);
            continue;
        }
        let key = if let Some(u) = t.update.as_ref().filter(|u| u.table_name == o.table()) {
            Some(&u.key)
        } else if let Some(d) = t.delete.as_ref().filter(|d| d.table_name == o.table()) {
            Some(&d.key)
        } else {
            t.condition_check
                .as_ref()
                .filter(|c| c.table_name == o.table())
                .map(|c| &c.key)
        };
        if let Some((pk, sk)) = key_of(o.schema(), key) {
            touched.push(touched_by_key(pk, sk, transactional(1.0)));
        }
    }
    touched
}

/// The partition a query reads: the index (`None` for the table, and for a local index,
/// which shares the table's partitions) and the partition key value, read from the key
/// condition's equalities on the partition key attributes (several joined with ` | ` for
/// a multi-attribute key).
pub(crate) fn partition_of_query(
    schema: &TableSchema,
    input: &QueryInput,
) -> Option<(Option<&'static str>, String)> {
    let (index, attrs): (Option<&'static str>, Vec<&str>) = match input.index_name() {
        None => (None, vec![schema.pk.name]),
        Some(name) => {
            let index = schema.indexes.iter().find(|x| x.name == name)?;
            match index.kind {
                IndexKind::Local => (None, vec![schema.pk.name]),
                IndexKind::Global => (Some(index.name), index.pk.iter().map(|a| a.name).collect()),
            }
        }
    };
    let names = input.expression_attribute_names();
    let values = input.expression_attribute_values()?;
    let mut found: Vec<Option<String>> = vec![None; attrs.len()];
    for clause in input.key_condition_expression()?.split(" AND ") {
        let clause = clause.trim().trim_matches(|c| c == '(' || c == ')');
        let Some((left, right)) = clause.split_once('=') else {
            continue;
        };
        let left = left.trim();
        let name = match left.strip_prefix('#') {
            Some(_) => match names.and_then(|n| n.get(left)) {
                Some(name) => name.as_str(),
                None => continue,
            },
            None => left,
        };
        if let Some(at) = attrs.iter().position(|a| *a == name) {
            found[at] = text(values.get(right.trim()));
        }
    }
    let parts: Option<Vec<String>> = found.into_iter().collect();
    Some((index, parts?.join(" | ")))
}
