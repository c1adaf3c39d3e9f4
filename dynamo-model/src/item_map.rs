//! The item, as every layer of the crate handles it: DynamoDB's attribute map.

/// An item as DynamoDB represents it: attribute name → value.
pub type Item = std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>;

/// An item of string attributes, for tests: `strings(&[("PK", "USER#ada")])`.
#[cfg(test)]
pub(crate) fn strings(pairs: &[(&str, &str)]) -> Item {
    let value = |v: &str| aws_sdk_dynamodb::types::AttributeValue::S(v.to_owned());
    pairs
        .iter()
        .map(|(name, v)| ((*name).to_owned(), value(v)))
        .collect()
}
