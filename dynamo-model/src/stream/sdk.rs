//! Records read with the DynamoDB Streams API, `GetRecords` (feature `streams`).

use super::*;
use aws_sdk_dynamodbstreams::types as streams;
use std::collections::HashMap;

impl StreamRecord {
    /// A record read with the DynamoDB Streams API (`GetRecords`), feature
    /// `streams`.
    ///
    /// The Streams SDK has its own `AttributeValue` type; every value is converted
    /// (recursively, without a JSON round trip) into the DynamoDB SDK's. A value of a
    /// type the Streams SDK does not know is [`StreamError::UnknownAttributeType`],
    /// never a panic.
    pub fn from_sdk(record: streams::Record) -> Result<Self, Error> {
        let event = match record.event_name {
            Some(streams::OperationType::Insert) => EventName::Insert,
            Some(streams::OperationType::Modify) => EventName::Modify,
            Some(streams::OperationType::Remove) => EventName::Remove,
            Some(other) => {
                return Err(StreamError::UnknownEventName(other.as_str().to_owned()).into());
            }
            None => return Err(StreamError::UnknownEventName(String::new()).into()),
        };
        let change = record.dynamodb.ok_or(StreamError::MissingChange)?;
        let image = |item: Option<HashMap<String, streams::AttributeValue>>,
                     name: &str|
         -> Result<Option<Item>, Error> {
            item.filter(|item| !item.is_empty())
                .map(|item| convert_item(item, name))
                .transpose()
        };
        let by_ttl = record.user_identity.is_some_and(|identity| {
            identity.r#type.as_deref() == Some("Service")
                && identity.principal_id.as_deref() == Some("dynamodb.amazonaws.com")
        });
        Ok(StreamRecord {
            event,
            keys: image(change.keys, "Keys")?.unwrap_or_default(),
            old_image: image(change.old_image, "OldImage")?,
            new_image: image(change.new_image, "NewImage")?,
            sequence_number: change.sequence_number,
            approximate_creation_time: change
                .approximate_creation_date_time
                .and_then(|time| SystemTime::try_from(time).ok()),
            view_type: change.stream_view_type.and_then(|view| match view {
                streams::StreamViewType::KeysOnly => Some(ViewType::KeysOnly),
                streams::StreamViewType::NewImage => Some(ViewType::NewImage),
                streams::StreamViewType::OldImage => Some(ViewType::OldImage),
                streams::StreamViewType::NewAndOldImages => Some(ViewType::NewAndOldImages),
                _ => None,
            }),
            event_id: record.event_id,
            by_ttl,
        })
    }
}

/// Converts a Streams SDK item into the crate's (the DynamoDB SDK's) item.
pub(super) fn convert_item(
    item: HashMap<String, streams::AttributeValue>,
    name: &str,
) -> Result<Item, Error> {
    item.into_iter()
        .map(|(attribute, value)| {
            let converted = convert_value(value, &mut || format!("{name}.{attribute}"))?;
            Ok((attribute, converted))
        })
        .collect()
}

/// One value, recursively; `path` renders where it is (only on error).
pub(super) fn convert_value(
    value: streams::AttributeValue,
    path: &mut dyn FnMut() -> String,
) -> Result<AttributeValue, Error> {
    use aws_sdk_dynamodb::primitives::Blob;
    Ok(match value {
        streams::AttributeValue::S(s) => AttributeValue::S(s),
        streams::AttributeValue::N(n) => AttributeValue::N(n),
        streams::AttributeValue::B(b) => AttributeValue::B(Blob::new(b.into_inner())),
        streams::AttributeValue::Bool(b) => AttributeValue::Bool(b),
        streams::AttributeValue::Null(n) => AttributeValue::Null(n),
        streams::AttributeValue::Ss(ss) => AttributeValue::Ss(ss),
        streams::AttributeValue::Ns(ns) => AttributeValue::Ns(ns),
        streams::AttributeValue::Bs(bs) => {
            AttributeValue::Bs(bs.into_iter().map(|b| Blob::new(b.into_inner())).collect())
        }
        streams::AttributeValue::L(list) => AttributeValue::L(
            list.into_iter()
                .enumerate()
                .map(|(i, v)| convert_value(v, &mut || format!("{}[{i}]", path())))
                .collect::<Result<_, _>>()?,
        ),
        streams::AttributeValue::M(map) => AttributeValue::M(
            map.into_iter()
                .map(|(k, v)| {
                    let converted = convert_value(v, &mut || format!("{}.{k}", path()))?;
                    Ok((k, converted))
                })
                .collect::<Result<_, Error>>()?,
        ),
        // `Unknown` and any variant a later SDK adds.
        _ => return Err(StreamError::UnknownAttributeType { path: path() }.into()),
    })
}
