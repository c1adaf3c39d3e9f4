//! Items as DynamoDB JSON (`{"S": ".."}`, binary in base64): the form of the service's
//! wire protocol, NoSQL Workbench's `TableData` and the test double's answers.

use crate::Item;
use aws_sdk_dynamodb::types::AttributeValue;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};

/// A value in DynamoDB JSON. A value of a type this crate does not know is
/// `{"NULL": true}`.
pub(crate) fn value_json(value: &AttributeValue) -> Value {
    match value {
        AttributeValue::S(s) => json!({"S": s}),
        AttributeValue::N(n) => json!({"N": n}),
        AttributeValue::B(b) => json!({"B": BASE64.encode(b.as_ref())}),
        AttributeValue::Bool(b) => json!({"BOOL": b}),
        AttributeValue::L(list) => json!({"L": list.iter().map(value_json).collect::<Vec<_>>()}),
        AttributeValue::M(map) => json!({"M": item_json(map)}),
        AttributeValue::Ss(set) => json!({"SS": set}),
        AttributeValue::Ns(set) => json!({"NS": set}),
        AttributeValue::Bs(set) => {
            json!({"BS": set.iter().map(|b| BASE64.encode(b.as_ref())).collect::<Vec<_>>()})
        }
        _ => json!({"NULL": true}),
    }
}

/// An item in DynamoDB JSON, its attributes in name order.
pub(crate) fn item_json(item: &Item) -> Value {
    let mut names: Vec<&String> = item.keys().collect();
    names.sort();
    Value::Object(
        names
            .into_iter()
            .filter_map(|name| item.get(name).map(|v| (name.clone(), value_json(v))))
            .collect(),
    )
}
