//! The one module that reads SDK inputs and outputs: the [`Call`] of a request the crate
//! did not build (a raw call on `Db::client()`), the [`Outcome`] of every call, and the
//! capacity level observers ask for.

use super::{Action, Answer, Call, Operation, Outcome, Returned, Target, shape, text};
use crate::Item;
use crate::schema::{IndexKind, TableSchema};
use aws_sdk_dynamodb::operation::{
    batch_execute_statement::BatchExecuteStatementInput,
    batch_get_item::{BatchGetItemInput, BatchGetItemOutput},
    batch_write_item::{BatchWriteItemInput, BatchWriteItemOutput},
    delete_item::{DeleteItemError, DeleteItemInput, DeleteItemOutput},
    execute_statement::ExecuteStatementInput,
    execute_transaction::ExecuteTransactionInput,
    get_item::{GetItemInput, GetItemOutput},
    put_item::{PutItemError, PutItemInput, PutItemOutput},
    query::{QueryInput, QueryOutput},
    scan::{ScanInput, ScanOutput},
    transact_get_items::{TransactGetItemsInput, TransactGetItemsOutput},
    transact_write_items::{TransactWriteItemsInput, TransactWriteItemsOutput},
    update_item::{UpdateItemError, UpdateItemInput, UpdateItemOutput},
};
use aws_sdk_dynamodb::types::{ConsumedCapacity, ReturnConsumedCapacity};
use aws_smithy_runtime_api::client::interceptors::context::{Error, Input, Output};
use aws_smithy_runtime_api::client::orchestrator::OrchestratorError;
use std::any::Any;
use std::sync::Arc;

/// Calls `$then!` with the SDK input types of DynamoDB's item operations (the ones that
/// consume capacity), listed once.
macro_rules! item_inputs {
    ($then:ident) => {
        $then!(
            GetItemInput,
            PutItemInput,
            UpdateItemInput,
            DeleteItemInput,
            QueryInput,
            ScanInput,
            BatchGetItemInput,
            BatchWriteItemInput,
            TransactGetItemsInput,
            TransactWriteItemsInput
        )
    };
}

/// Asks for `ConsumedCapacity` with its per-index breakdown, unless the request chose a
/// level.
pub(super) fn ask_capacity(input: &mut Input) {
    macro_rules! level {
        ($($input:ty),*) => {
            $(if let Some(i) = input.downcast_mut::<$input>() {
                &mut i.return_consumed_capacity
            } else)* {
                return;
            }
        };
    }
    let level = item_inputs!(level);
    if level.is_none() {
        *level = Some(ReturnConsumedCapacity::Indexes);
    }
}

/// A copy of the SDK input of an item operation or a PartiQL call (`()` for any other).
pub(super) fn copy_input(input: &Input) -> Arc<dyn Any + Send + Sync> {
    macro_rules! copy_of {
        ($($input:ty),*) => {
            $(if let Some(i) = input.downcast_ref::<$input>() {
                return Arc::new(i.clone());
            })*
        };
    }
    item_inputs!(copy_of);
    copy_of!(
        ExecuteStatementInput,
        BatchExecuteStatementInput,
        ExecuteTransactionInput
    );
    Arc::new(())
}

fn table(name: Option<&str>) -> Arc<str> {
    Arc::from(name.unwrap_or_default())
}

/// Whether PartiQL `statement` may write (anything but a `SELECT`).
fn may_write(statement: &str) -> bool {
    let head = statement.trim_start();
    !head
        .get(..6)
        .is_some_and(|word| word.eq_ignore_ascii_case("select"))
}

/// The record of a request the crate did not build; `None` for calls no observer
/// watches (table management).
pub(super) fn call(schema: &TableSchema, input: &Input) -> Option<Call> {
    single(schema, input)
        .or_else(|| query_or_scan(schema, input))
        .or_else(|| many(schema, input))
        .or_else(|| statement(input))
}

/// A `GetItem`, `PutItem`, `UpdateItem` or `DeleteItem`.
fn single(schema: &TableSchema, input: &Input) -> Option<Call> {
    let by_key = |operation, action, name: Option<&str>, key: Option<&Item>| {
        let table = table(name);
        let target = Target::by_key(schema, table.clone(), action, key);
        Call {
            targets: vec![target],
            ..Call::new(operation, table)
        }
    };
    if let Some(i) = input.downcast_ref::<GetItemInput>() {
        return Some(Call {
            consistent: i.consistent_read == Some(true),
            projected: i.projection_expression.is_some() || i.attributes_to_get.is_some(),
            ..by_key(
                Operation::GetItem,
                Action::Get,
                i.table_name(),
                i.key.as_ref(),
            )
        });
    }
    if let Some(i) = input.downcast_ref::<PutItemInput>() {
        let table = table(i.table_name());
        let targets = i
            .item
            .iter()
            .map(|item| Target::put(schema, table.clone(), item));
        return Some(Call {
            targets: targets.collect(),
            returns_item: super::returns_whole(i.return_values.as_ref()),
            ..Call::new(Operation::PutItem, table)
        });
    }
    // An update and a delete: the same record from two input types.
    macro_rules! keyed {
        ($i:ident, $operation:ident, $action:ident) => {
            Some(Call {
                returns_item: super::returns_whole($i.return_values.as_ref()),
                ..by_key(
                    Operation::$operation,
                    Action::$action,
                    $i.table_name(),
                    $i.key.as_ref(),
                )
            })
        };
    }
    if let Some(i) = input.downcast_ref::<UpdateItemInput>() {
        return keyed!(i, UpdateItem, Update);
    }
    let i = input.downcast_ref::<DeleteItemInput>()?;
    keyed!(i, DeleteItem, Delete)
}

/// A `Query` or a `Scan`.
fn query_or_scan(schema: &TableSchema, input: &Input) -> Option<Call> {
    if let Some(i) = input.downcast_ref::<QueryInput>() {
        return Some(Call {
            partition: partition_of_query(schema, i).map(|(_, pk)| pk),
            ..shape::query_asked(i).call()
        });
    }
    let i = input.downcast_ref::<ScanInput>()?;
    Some(shape::scan_asked(i).call())
}

/// A batch or a transaction: its items, each in its table.
fn many(schema: &TableSchema, input: &Input) -> Option<Call> {
    let none = Arc::<str>::from("");
    if let Some(i) = input.downcast_ref::<BatchGetItemInput>() {
        let mut call = Call {
            consistent: true,
            ..Call::new(Operation::BatchGetItem, none)
        };
        for (name, asked) in i.request_items.iter().flatten() {
            let table = Arc::<str>::from(name.as_str());
            call.keys += asked.keys.len();
            call.consistent &= asked.consistent_read == Some(true);
            call.targets.extend(
                asked
                    .keys
                    .iter()
                    .map(|key| Target::by_key(schema, table.clone(), Action::Get, Some(key))),
            );
        }
        return Some(call);
    }
    if let Some(i) = input.downcast_ref::<TransactGetItemsInput>() {
        let gets = i
            .transact_items
            .iter()
            .flatten()
            .filter_map(|t| t.get.as_ref());
        let targets: Vec<Target> = gets
            .map(|g| {
                Target::by_key(
                    schema,
                    table(Some(&g.table_name)),
                    Action::Get,
                    Some(&g.key),
                )
            })
            .collect();
        return Some(Call {
            consistent: true,
            keys: i.transact_items.as_ref().map_or(0, Vec::len),
            targets,
            ..Call::new(Operation::TransactGetItems, none)
        });
    }
    if let Some(i) = input.downcast_ref::<BatchWriteItemInput>() {
        let mut targets = Vec::new();
        for (name, requests) in i.request_items.iter().flatten() {
            let table = Arc::<str>::from(name.as_str());
            for r in requests {
                if let Some(put) = &r.put_request {
                    targets.push(Target::put(schema, table.clone(), &put.item));
                } else if let Some(delete) = &r.delete_request {
                    let key = Some(&delete.key);
                    targets.push(Target::by_key(schema, table.clone(), Action::Delete, key));
                }
            }
        }
        return Some(Call {
            targets,
            ..Call::new(Operation::BatchWriteItem, none)
        });
    }
    let i = input.downcast_ref::<TransactWriteItemsInput>()?;
    let mut targets = Vec::new();
    for t in i.transact_items.iter().flatten() {
        let by_key = |name: &str, action, key: &Item| {
            Target::by_key(schema, table(Some(name)), action, Some(key))
        };
        if let Some(p) = &t.put {
            targets.push(Target::put(schema, table(Some(&p.table_name)), &p.item));
        } else if let Some(u) = &t.update {
            targets.push(by_key(&u.table_name, Action::Update, &u.key));
        } else if let Some(d) = &t.delete {
            targets.push(by_key(&d.table_name, Action::Delete, &d.key));
        } else if let Some(c) = &t.condition_check {
            targets.push(by_key(&c.table_name, Action::Check, &c.key));
        }
    }
    Some(Call {
        targets,
        ..Call::new(Operation::TransactWriteItems, none)
    })
}

/// A PartiQL call: whether it may write.
fn statement(input: &Input) -> Option<Call> {
    let writes = if let Some(i) = input.downcast_ref::<ExecuteStatementInput>() {
        i.statement.as_deref().is_some_and(may_write)
    } else if let Some(i) = input.downcast_ref::<BatchExecuteStatementInput>() {
        i.statements
            .iter()
            .flatten()
            .any(|s| may_write(&s.statement))
    } else {
        let i = input.downcast_ref::<ExecuteTransactionInput>()?;
        i.transact_statements
            .iter()
            .flatten()
            .any(|s| may_write(&s.statement))
    };
    Some(Call {
        writes_unknown_keys: writes,
        ..Call::new(Operation::Statement, Arc::from(""))
    })
}

/// The partition a query reads: the index (`None` for the table, and for a local index,
/// which shares the table's partitions) and the partition key value, read from the key
/// condition's equalities on the partition key attributes (several joined with ` | `
/// for a multi-attribute key).
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

/// How a call ended, from what the SDK's orchestrator holds after it.
pub(super) fn outcome<'a>(
    ended: Option<Result<&'a Output, &'a OrchestratorError<Error>>>,
) -> Outcome<'a> {
    match ended {
        Some(Ok(output)) => Outcome::Answered(answer(output)),
        Some(Err(error)) if refused_by_condition(error) => Outcome::Refused,
        _ => Outcome::Failed,
    }
}

/// A single-item write refused by its condition.
fn refused_by_condition(error: &OrchestratorError<Error>) -> bool {
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

/// The answer of a single-item call.
fn one<'a>(consumed: &'a Option<ConsumedCapacity>, item: Option<&'a Item>) -> Answer<'a> {
    Answer {
        consumed: consumed.as_ref().map(std::slice::from_ref),
        returned: Returned::One(item),
    }
}

/// The answer of a query or a scan: one response, its items and DynamoDB's counts.
fn items<'a>(
    consumed: &'a Option<ConsumedCapacity>,
    items: &'a Option<Vec<Item>>,
    scanned: i32,
    count: i32,
) -> Answer<'a> {
    Answer {
        consumed: consumed.as_ref().map(std::slice::from_ref),
        returned: Returned::Items {
            items: items.as_deref().unwrap_or_default(),
            // DynamoDB's counts are never negative; a negative one would be malformed.
            scanned: u64::try_from(scanned).unwrap_or(0),
            count: u64::try_from(count).unwrap_or(0),
        },
    }
}

fn answer(out: &Output) -> Answer<'_> {
    if let Some(o) = out.downcast_ref::<GetItemOutput>() {
        one(&o.consumed_capacity, o.item.as_ref())
    } else if let Some(o) = out.downcast_ref::<PutItemOutput>() {
        one(&o.consumed_capacity, o.attributes.as_ref())
    } else if let Some(o) = out.downcast_ref::<UpdateItemOutput>() {
        one(&o.consumed_capacity, o.attributes.as_ref())
    } else if let Some(o) = out.downcast_ref::<DeleteItemOutput>() {
        one(&o.consumed_capacity, o.attributes.as_ref())
    } else if let Some(o) = out.downcast_ref::<QueryOutput>() {
        items(&o.consumed_capacity, &o.items, o.scanned_count, o.count)
    } else if let Some(o) = out.downcast_ref::<ScanOutput>() {
        items(&o.consumed_capacity, &o.items, o.scanned_count, o.count)
    } else {
        answer_many(out)
    }
}

/// The answer of a batch or a transaction.
fn answer_many(out: &Output) -> Answer<'_> {
    let (consumed, returned) = if let Some(o) = out.downcast_ref::<BatchGetItemOutput>() {
        let items = o.responses.iter().flatten();
        let items = items.flat_map(|(table, items)| items.iter().map(move |i| (table.as_str(), i)));
        let unprocessed = o.unprocessed_keys.iter().flat_map(|m| m.values());
        let returned = Returned::Found {
            items: items.collect(),
            unprocessed: unprocessed.map(|k| k.keys.len()).sum(),
        };
        (o.consumed_capacity.as_deref(), returned)
    } else if let Some(o) = out.downcast_ref::<TransactGetItemsOutput>() {
        let each = o.responses.iter().flatten().map(|r| r.item.as_ref());
        (
            o.consumed_capacity.as_deref(),
            Returned::Each(each.collect()),
        )
    } else if let Some(o) = out.downcast_ref::<BatchWriteItemOutput>() {
        let left = o
            .unprocessed_items
            .iter()
            .flat_map(|m| m.values())
            .flatten();
        let left = left.map(|r| r.put_request.as_ref().map(|p| &p.item));
        (
            o.consumed_capacity.as_deref(),
            Returned::Unprocessed(left.collect()),
        )
    } else if let Some(o) = out.downcast_ref::<TransactWriteItemsOutput>() {
        (o.consumed_capacity.as_deref(), Returned::Nothing)
    } else {
        (None, Returned::Nothing)
    };
    Answer { consumed, returned }
}

#[cfg(test)]
mod tests {
    use super::may_write;

    #[test]
    fn partiql_writes_are_anything_but_a_select() {
        for statement in ["SELECT * FROM t", "  select a FROM t", "\nSeLeCt 1"] {
            assert!(!may_write(statement), "{statement}");
        }
        for statement in [
            "UPDATE t SET a = 1",
            "INSERT INTO t VALUE {'PK': 'a'}",
            "DELETE FROM t WHERE PK = 'a'",
            "  update t set a = 1",
            "",
            "SEL",
            "EXISTS(SELECT * FROM t)",
        ] {
            assert!(may_write(statement), "{statement}");
        }
    }
}
