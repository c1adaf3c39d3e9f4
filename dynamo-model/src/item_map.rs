//! The item, as every layer of the crate handles it: DynamoDB's attribute map.

/// An item as DynamoDB represents it: attribute name → value.
pub type Item = std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>;
