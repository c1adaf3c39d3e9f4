//! What a double answers, and how an answer is rendered for the request it answers:
//! DynamoDB's JSON, its error codes and HTTP statuses.

use super::Operation;
use crate::codec::json::item_json;
use crate::{Entity, Item, TableSchema};
use serde_json::{Map, Value, json};

/// The error codes' namespace in DynamoDB's JSON protocol (`__type`).
const NAMESPACE: &str = "com.amazonaws.dynamodb.v20120810";

/// The answer to one call, rendered for the request it answers: an item found is a
/// `GetItem`'s `Item`, a query's `Items` or a batch get's `Responses` alike.
///
/// ```
/// use dynamo_model::double::Answer;
///
/// let answers = [
///     Answer::ok(),                           // success, nothing found or returned
///     Answer::throttled(),                    // ProvisionedThroughputExceededException
///     Answer::unprocessed(2),                 // a batch's last 2 requests unprocessed
///     Answer::condition_failed(),             // ConditionalCheckFailedException, no item
///     Answer::canceled(1, "TransactionConflict"), // a transaction's operation 1
///     Answer::error("ValidationException", "One or more parameter values were invalid"),
/// ];
/// # let _ = answers;
/// ```
#[derive(Debug, Clone)]
pub struct Answer(Kind);

#[derive(Debug, Clone)]
enum Kind {
    /// A success: these items found or returned, a batch's last `unprocessed` requests
    /// left unprocessed.
    Found {
        items: Vec<Item>,
        unprocessed: usize,
        /// The schema of the items' table, when known (`Answer::items`): a query or scan
        /// then pages them as DynamoDB would (`Limit`, `ExclusiveStartKey`).
        schema: Option<&'static TableSchema>,
    },
    /// `ConditionalCheckFailedException`, with the item as stored.
    ConditionFailed(Option<Item>),
    /// `TransactionCanceledException`: operation `index` failed with `code`.
    Canceled {
        index: usize,
        code: String,
        item: Option<Item>,
    },
    /// Any error: its HTTP status, code and message.
    Error {
        status: u16,
        code: String,
        message: String,
    },
    /// A response given whole.
    Json { status: u16, body: String },
}

/// `entity` as an item.
#[track_caller]
fn item_of<E: Entity>(entity: &E) -> Item {
    match entity.to_item() {
        Ok(item) => item,
        Err(e) => panic!("{}: cannot be an answer's item: {e}", E::ENTITY_TYPE),
    }
}

impl Answer {
    /// A success with nothing to return: the write was applied; a read found nothing (no
    /// item for a `GetItem`, an empty page for a query or a scan); every request of a batch
    /// was processed.
    pub fn ok() -> Answer {
        Answer::found(Vec::new())
    }

    /// A success that returns `entity`: the item a `GetItem` found, the one item of a
    /// query's or a scan's page, the attributes a write returned (`ReturnValues`), an item
    /// a batch get or a transaction found (when the request asked for its key).
    ///
    /// # Panics
    ///
    /// If `entity` cannot be encoded ([`Entity::to_item`]).
    #[track_caller]
    pub fn item<E: Entity>(entity: &E) -> Answer {
        Answer::found(vec![item_of(entity)])
    }

    /// A success that returns `entities`: the items a query or a scan reads, or the items
    /// a batch get or a read transaction found (each where the request asked for its key;
    /// the others are left out, as DynamoDB returns only what was asked).
    ///
    /// A query or a scan answered with them reads them as pages, as DynamoDB would: after
    /// the item of the request's `ExclusiveStartKey`, at most its `Limit` items, with a
    /// `LastEvaluatedKey` (the last item's key, and its index key in a read of an index)
    /// while items are left. So `.always(Answer::items(&all))` answers every page of a
    /// paginated read, and a cursor continues where the page before ended.
    ///
    /// # Panics
    ///
    /// If an entity cannot be encoded ([`Entity::to_item`]).
    #[track_caller]
    pub fn items<'a, E: Entity>(entities: impl IntoIterator<Item = &'a E>) -> Answer {
        Answer(Kind::Found {
            items: entities.into_iter().map(item_of).collect(),
            unprocessed: 0,
            schema: Some(&<E::Table as crate::Table>::SCHEMA),
        })
    }

    /// [`items`](Self::items) of items as stored (of several entity types, say, or not
    /// written by the crate). Without their table's schema, a query or a scan returns them
    /// all as one page, whatever its `Limit`.
    pub fn found(items: Vec<Item>) -> Answer {
        Answer(Kind::Found {
            items,
            unprocessed: 0,
            schema: None,
        })
    }

    /// A batch's answer with its last `n` requests unprocessed (`UnprocessedItems` of a
    /// `BatchWriteItem`, `UnprocessedKeys` of a `BatchGetItem`), in the request's order
    /// (tables by name); every request when `n` is as large as the batch. The crate sends
    /// them again.
    pub fn unprocessed(n: usize) -> Answer {
        Answer::ok().with_unprocessed(n)
    }

    /// This answer, with a batch's last `n` requests unprocessed: a batch get that found
    /// some items ([`items`](Self::items)) and could not read the last keys.
    pub fn with_unprocessed(self, n: usize) -> Answer {
        match self.0 {
            Kind::Found { items, schema, .. } => Answer(Kind::Found {
                items,
                unprocessed: n,
                schema,
            }),
            other => Answer(other),
        }
    }

    /// `ConditionalCheckFailedException` without an item: the condition of a put, an
    /// update or a delete was false, and no item is stored under the key (e.g. an update
    /// of an item that does not exist: [`Error::NotFound`](crate::Error::NotFound)).
    pub fn condition_failed() -> Answer {
        Answer(Kind::ConditionFailed(None))
    }

    /// `ConditionalCheckFailedException` with `current` as the item stored: a put
    /// `if_absent` of a key taken, a version conflict. The crate's error carries it
    /// ([`Error::current`](crate::Error)).
    ///
    /// # Panics
    ///
    /// If `current` cannot be encoded ([`Entity::to_item`]).
    #[track_caller]
    pub fn condition_failed_with<E: Entity>(current: &E) -> Answer {
        Answer(Kind::ConditionFailed(Some(item_of(current))))
    }

    /// [`condition_failed_with`](Self::condition_failed_with) an item as stored.
    pub fn condition_failed_with_item(current: Item) -> Answer {
        Answer(Kind::ConditionFailed(Some(current)))
    }

    /// `TransactionCanceledException`: operation `index` (0-based, in the order added) of
    /// a transaction failed with DynamoDB's cancellation `code`
    /// (`ConditionalCheckFailed`, `TransactionConflict`, `ProvisionedThroughputExceeded`,
    /// `ThrottlingError`, `ValidationError`, ...); every other operation's reason is
    /// `None`. Nothing was applied.
    pub fn canceled(index: usize, code: &str) -> Answer {
        Answer(Kind::Canceled {
            index,
            code: code.to_owned(),
            item: None,
        })
    }

    /// A transaction cancelled because the condition of operation `index` was false, with
    /// `current` as the item stored.
    ///
    /// # Panics
    ///
    /// If `current` cannot be encoded ([`Entity::to_item`]).
    #[track_caller]
    pub fn canceled_with<E: Entity>(index: usize, current: &E) -> Answer {
        Answer(Kind::Canceled {
            index,
            code: "ConditionalCheckFailed".to_owned(),
            item: Some(item_of(current)),
        })
    }

    /// `ProvisionedThroughputExceededException` (HTTP 400): throttled. The SDK retries it,
    /// then the crate does for batches and transactions.
    pub fn throttled() -> Answer {
        Answer::error(
            "ProvisionedThroughputExceededException",
            "The level of configured provisioned throughput for the table was exceeded. \
             Consider increasing your provisioning level with the UpdateTable API.",
        )
    }

    /// `InternalServerError` (HTTP 500): the request may or may not have been applied. The
    /// SDK retries it; a write whose attempts all end so is settled by the crate with a
    /// read of the item (script that `GetItem` too).
    pub fn server_error() -> Answer {
        Answer::error_with_status(500, "InternalServerError", "Internal server error")
    }

    /// A DynamoDB error with HTTP status 400: `code` as DynamoDB names it
    /// (`ValidationException`, `ResourceNotFoundException`, `ThrottlingException`,
    /// `RequestLimitExceeded`, ...) and its message. The SDK reads its code as it reads
    /// the service's, so its retries and the crate's apply as they would.
    pub fn error(code: &str, message: &str) -> Answer {
        Answer::error_with_status(400, code, message)
    }

    /// A DynamoDB error with another HTTP status (5xx: the SDK retries it).
    pub fn error_with_status(status: u16, code: &str, message: &str) -> Answer {
        Answer(Kind::Error {
            status,
            code: code.to_owned(),
            message: message.to_owned(),
        })
    }

    /// A response given whole: its HTTP status and JSON body, for what the other answers
    /// do not say (consumed capacity, a `LastEvaluatedKey`, a table description).
    pub fn json(status: u16, body: impl Into<String>) -> Answer {
        Answer(Kind::Json {
            status,
            body: body.into(),
        })
    }

    /// The HTTP status and body answering `operation` whose request body is `request`.
    ///
    /// Panics when the answer cannot answer the operation (a condition failure of a
    /// transaction, which DynamoDB reports as a cancellation).
    pub(super) fn render(&self, operation: Operation, request: &Value) -> (u16, String) {
        match &self.0 {
            Kind::Found {
                items,
                unprocessed,
                schema,
            } => {
                let body = match (operation, schema) {
                    (Operation::Query | Operation::Scan, Some(schema)) => {
                        page(request, items, schema)
                    }
                    _ => found(operation, request, items, *unprocessed),
                };
                (200, body.to_string())
            }
            Kind::ConditionFailed(item) => {
                if operation == Operation::TransactWriteItems {
                    panic!(
                        "dynamo_model::double: a transaction's failed condition is a \
                         cancellation: answer it with Answer::canceled(index, \
                         \"ConditionalCheckFailed\") or Answer::canceled_with(index, &current)"
                    );
                }
                let mut body = error_body(
                    "ConditionalCheckFailedException",
                    "The conditional request failed",
                );
                if let Some(item) = item {
                    body.insert("Item".to_owned(), item_json(item));
                }
                (400, Value::Object(body).to_string())
            }
            Kind::Canceled { index, code, item } => (
                400,
                canceled(request, *index, code, item.as_ref()).to_string(),
            ),
            Kind::Error {
                status,
                code,
                message,
            } => (
                *status,
                Value::Object(error_body(code, message)).to_string(),
            ),
            Kind::Json { status, body } => (*status, body.clone()),
        }
    }
}

/// A DynamoDB error body: `__type` and `message`.
fn error_body(code: &str, message: &str) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("__type".to_owned(), json!(format!("{NAMESPACE}#{code}")));
    body.insert("message".to_owned(), json!(message));
    body
}

/// A success returning `items`, in the shape of `operation`'s output.
fn found(operation: Operation, request: &Value, items: &[Item], unprocessed: usize) -> Value {
    let first = || items.first().map(item_json);
    let all = || Value::Array(items.iter().map(item_json).collect());
    match operation {
        Operation::GetItem => first().map_or_else(|| json!({}), |item| json!({"Item": item})),
        Operation::PutItem | Operation::UpdateItem | Operation::DeleteItem => {
            first().map_or_else(|| json!({}), |item| json!({"Attributes": item}))
        }
        Operation::Query | Operation::Scan => {
            json!({"Items": all(), "Count": items.len(), "ScannedCount": items.len()})
        }
        Operation::ExecuteStatement => json!({"Items": all()}),
        Operation::BatchWriteItem => batch_write(request, unprocessed),
        Operation::BatchGetItem => batch_get(request, items, unprocessed),
        Operation::TransactGetItems => transact_get(request, items),
        _ => json!({}),
    }
}

/// The page of `items` DynamoDB returns to a query or a scan `request` of a table of
/// `schema`: after the item of its `ExclusiveStartKey` (from the first item when no item
/// has that key), at most `Limit` items, and the last one's key while items are left.
fn page(request: &Value, items: &[Item], schema: &TableSchema) -> Value {
    let all: Vec<Value> = items.iter().map(item_json).collect();
    let start = request
        .get("ExclusiveStartKey")
        .and_then(|key| all.iter().position(|item| has_key(item, key)))
        .map_or(0, |p| p + 1);
    let rest = &all[start..];
    let limit = request
        .get("Limit")
        .and_then(Value::as_u64)
        .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let shown = &rest[..rest.len().min(limit)];
    let mut body = json!({"Items": shown, "Count": shown.len(), "ScannedCount": shown.len()});
    if let (true, Some(last)) = (shown.len() < rest.len(), shown.last()) {
        body["LastEvaluatedKey"] = key_of(last, schema, request.get("IndexName"));
    }
    body
}

/// The key attributes of `item` (DynamoDB JSON): the table's, and those of the index named
/// `index`.
fn key_of(item: &Value, schema: &TableSchema, index: Option<&Value>) -> Value {
    let index = index
        .and_then(Value::as_str)
        .and_then(|name| schema.indexes.iter().find(|i| i.name == name));
    let names = std::iter::once(schema.pk.name)
        .chain(schema.sk.map(|k| k.name))
        .chain(
            index
                .into_iter()
                .flat_map(|i| i.pk.iter().chain(i.sk).map(|k| k.name)),
        );
    let key: Map<String, Value> = names
        .filter_map(|name| Some((name.to_owned(), item.get(name)?.clone())))
        .collect();
    Value::Object(key)
}

/// Whether the item (DynamoDB JSON) has every attribute of `key` with its value.
fn has_key(item: &Value, key: &Value) -> bool {
    key.as_object().is_some_and(|key| {
        key.iter()
            .all(|(name, value)| item.get(name) == Some(value))
    })
}

/// The tables of a batch's `RequestItems`, by name.
fn request_items(request: &Value) -> impl Iterator<Item = (&String, &Value)> {
    request
        .get("RequestItems")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
}

/// The position, over all of a batch's tables in order, from which its last `unprocessed`
/// of `total` entries are left unprocessed.
fn first_unprocessed(total: usize, unprocessed: usize) -> usize {
    total.saturating_sub(unprocessed)
}

/// A `BatchWriteItem`'s answer: its last `unprocessed` write requests unprocessed.
fn batch_write(request: &Value, unprocessed: usize) -> Value {
    let total: usize = request_items(request)
        .filter_map(|(_, writes)| writes.as_array())
        .map(Vec::len)
        .sum();
    let from = first_unprocessed(total, unprocessed);
    let mut position = 0;
    let mut left = Map::new();
    for (table, writes) in request_items(request) {
        let writes = writes.as_array().map(Vec::as_slice).unwrap_or_default();
        let (_, kept) = writes.split_at(from.saturating_sub(position).min(writes.len()));
        position += writes.len();
        if !kept.is_empty() {
            left.insert(table.clone(), Value::Array(kept.to_vec()));
        }
    }
    json!({"UnprocessedItems": left})
}

/// A `BatchGetItem`'s answer: the items asked for among `items`, the last `unprocessed`
/// keys unprocessed.
fn batch_get(request: &Value, items: &[Item], unprocessed: usize) -> Value {
    let items: Vec<Value> = items.iter().map(item_json).collect();
    let keys = |table: &Value| table.get("Keys").and_then(Value::as_array).cloned();
    let total: usize = request_items(request)
        .filter_map(|(_, table)| keys(table))
        .map(|k| k.len())
        .sum();
    let from = first_unprocessed(total, unprocessed);
    let mut position = 0;
    let (mut responses, mut left) = (Map::new(), Map::new());
    for (table, asked) in request_items(request) {
        let keys = keys(asked).unwrap_or_default();
        let (done, undone) = keys.split_at(from.saturating_sub(position).min(keys.len()));
        position += keys.len();
        let found = items
            .iter()
            .filter(|item| done.iter().any(|key| has_key(item, key)))
            .cloned();
        responses.insert(table.clone(), Value::Array(found.collect()));
        if !undone.is_empty() {
            // The same projection and consistency as asked, as DynamoDB returns them.
            let mut again = asked.clone();
            if let Some(again) = again.as_object_mut() {
                again.insert("Keys".to_owned(), Value::Array(undone.to_vec()));
            }
            left.insert(table.clone(), again);
        }
    }
    json!({"Responses": responses, "UnprocessedKeys": left})
}

/// A `TransactGetItems`' answer: for each get, in order, the item of its key among `items`.
fn transact_get(request: &Value, items: &[Item]) -> Value {
    let items: Vec<Value> = items.iter().map(item_json).collect();
    let gets = request.get("TransactItems").and_then(Value::as_array);
    let responses = gets.into_iter().flatten().map(|get| {
        let key = get.get("Get").and_then(|g| g.get("Key"));
        let item = key.and_then(|key| items.iter().find(|item| has_key(item, key)));
        item.map_or_else(|| json!({}), |item| json!({"Item": item}))
    });
    json!({"Responses": responses.collect::<Vec<_>>()})
}

/// A `TransactionCanceledException` of the transaction `request`: operation `index`
/// failed with `code` (and `item` as stored), every other one `None`.
fn canceled(request: &Value, index: usize, code: &str, item: Option<&Item>) -> Value {
    let operations = request
        .get("TransactItems")
        .or_else(|| request.get("TransactStatements"))
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if index >= operations {
        panic!(
            "dynamo_model::double: Answer::canceled({index}, ..) answers a transaction of \
             {operations} operation(s): operations are numbered from 0"
        );
    }
    let codes: Vec<&str> = (0..operations)
        .map(|i| if i == index { code } else { "None" })
        .collect();
    let reasons: Vec<Value> = codes
        .iter()
        .enumerate()
        .map(|(i, code)| match (i == index, item) {
            (true, Some(item)) => {
                json!({"Code": code, "Message": reason_message(code), "Item": item_json(item)})
            }
            (true, None) => json!({"Code": code, "Message": reason_message(code)}),
            (false, _) => json!({"Code": "None"}),
        })
        .collect();
    json!({
        "__type": format!("{NAMESPACE}#TransactionCanceledException"),
        "Message": format!(
            "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]",
            codes.join(", ")
        ),
        "CancellationReasons": reasons,
    })
}

/// DynamoDB's message of a cancellation reason.
fn reason_message(code: &str) -> &str {
    match code {
        "ConditionalCheckFailed" => "The conditional request failed",
        "TransactionConflict" => "Transaction is ongoing for the item",
        "ProvisionedThroughputExceeded" => "Throughput exceeds the current capacity",
        other => other,
    }
}

#[cfg(test)]
mod tests;
