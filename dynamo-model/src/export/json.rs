//! Items as DynamoDB JSON (`{"S": "..."}`) and back, and the YAML writer of the
//! CloudFormation template.

use super::*;

pub(super) use crate::codec::dynamodb_type;

pub(super) use crate::codec::json::item_json;
#[cfg(test)]
pub(super) use crate::codec::json::value_json;

pub(super) fn json_error(message: String) -> Error {
    Error::invalid_request("Workbench", ValidationReason::InvalidValue, message)
}

/// A value from DynamoDB JSON.
pub(super) fn json_value(value: &Value, path: &str) -> Result<AttributeValue, Error> {
    let bad = || json_error(format!("{path}: not a DynamoDB JSON value: {value}"));
    let Some((ty, inner)) = value
        .as_object()
        .filter(|m| m.len() == 1)
        .and_then(|m| m.iter().next())
    else {
        return Err(bad());
    };
    let strings = |inner: &Value| -> Result<Vec<String>, Error> {
        inner
            .as_array()
            .ok_or_else(bad)?
            .iter()
            .map(|v| v.as_str().map(str::to_owned).ok_or_else(bad))
            .collect()
    };
    let blob = |text: &str| -> Result<Blob, Error> {
        BASE64
            .decode(text)
            .map(Blob::new)
            .map_err(|e| json_error(format!("{path}: binary value is not base64: {e}")))
    };
    Ok(match ty.as_str() {
        "S" => AttributeValue::S(inner.as_str().ok_or_else(bad)?.to_owned()),
        "N" => AttributeValue::N(inner.as_str().ok_or_else(bad)?.to_owned()),
        "B" => AttributeValue::B(blob(inner.as_str().ok_or_else(bad)?)?),
        "BOOL" => AttributeValue::Bool(inner.as_bool().ok_or_else(bad)?),
        "NULL" => AttributeValue::Null(true),
        "L" => AttributeValue::L(
            inner
                .as_array()
                .ok_or_else(bad)?
                .iter()
                .enumerate()
                .map(|(i, v)| json_value(v, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        "M" => AttributeValue::M(json_item(inner, path)?),
        "SS" => AttributeValue::Ss(strings(inner)?),
        "NS" => AttributeValue::Ns(strings(inner)?),
        "BS" => AttributeValue::Bs(
            strings(inner)?
                .iter()
                .map(|s| blob(s))
                .collect::<Result<_, _>>()?,
        ),
        _ => return Err(bad()),
    })
}

pub(super) fn json_item(value: &Value, path: &str) -> Result<Item, Error> {
    value
        .as_object()
        .ok_or_else(|| json_error(format!("{path}: not an item: {value}")))?
        .iter()
        .map(|(name, v)| Ok((name.clone(), json_value(v, &format!("{path}.{name}"))?)))
        .collect()
}

/// The sample items of a NoSQL Workbench model (its tables' and facets' `TableData`, in
/// DynamoDB JSON), as items: what [`Export::add_sample`] wrote, or sample data designed in
/// Workbench, ready to decode with [`Entity::from_item`] or to write. A value that is not
/// DynamoDB JSON is refused with [`ValidationReason::InvalidValue`].
pub fn workbench_items(model: &Value) -> Result<Vec<Item>, Error> {
    let mut items = Vec::new();
    let tables = model["DataModel"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (t, table) in tables.iter().enumerate() {
        let facets = table["TableFacets"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let data = std::iter::once((format!("DataModel[{t}]"), &table["TableData"])).chain(
            facets.iter().enumerate().map(|(f, facet)| {
                (
                    format!("DataModel[{t}].TableFacets[{f}]"),
                    &facet["TableData"],
                )
            }),
        );
        for (path, data) in data {
            for (i, item) in data
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .enumerate()
            {
                items.push(json_item(item, &format!("{path}.TableData[{i}]"))?);
            }
        }
    }
    Ok(items)
}

/// Appends `value` as YAML at `indent` spaces (block style; strings in JSON's quoting,
/// which YAML's double-quoted scalars accept).
pub(super) fn yaml(value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, v) in map {
                out.push_str(&pad);
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                inline_or_block(v, indent, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for v in items {
                out.push_str(&pad);
                out.push('-');
                match v {
                    Value::Object(map) if !map.is_empty() => {
                        // The first key on the dash's line, the others under it.
                        let mut first = true;
                        for (key, inner) in map {
                            if first {
                                out.push(' ');
                                first = false;
                            } else {
                                out.push_str(&" ".repeat(indent + 2));
                            }
                            out.push_str(&Value::String(key.clone()).to_string());
                            out.push(':');
                            inline_or_block(inner, indent + 2, out);
                        }
                    }
                    other => inline_or_block(other, indent, out),
                }
            }
        }
        scalar => {
            out.push_str(&pad);
            out.push_str(&scalar.to_string());
            out.push('\n');
        }
    }
}

pub(super) fn inline_or_block(value: &Value, indent: usize, out: &mut String) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            yaml(value, indent + 2, out);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            yaml(value, indent + 2, out);
        }
        // Scalars, `[]` and `{}` are JSON, which is also YAML flow style.
        scalar => {
            out.push(' ');
            out.push_str(&scalar.to_string());
            out.push('\n');
        }
    }
}
