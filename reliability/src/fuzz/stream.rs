//! Stream records in both shapes: AWS Lambda's JSON event and the Streams SDK's types.

use super::entities::{HashKeys, PROFILE_NAMES, Profile};
use super::input::Input;
use dynamo_model::Item;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::stream::StreamRecord;
use std::collections::HashMap;

use aws_lambda_events::event::dynamodb::EventRecord;
use aws_sdk_dynamodbstreams::primitives::Blob as StreamBlob;
use aws_sdk_dynamodbstreams::types as streams;

/// The first byte picks the shape: even, the rest is Lambda's JSON of one record; odd,
/// the rest builds a Streams SDK record (event, view type, keys and both images), whose
/// images must arrive unchanged. Either is decoded as a [`Profile`] and a [`HashKeys`].
pub fn stream(data: &[u8]) {
    let mut input = Input::new(data);
    let record = if input.byte().is_multiple_of(2) {
        let Ok(event) = serde_json::from_slice::<EventRecord>(input.rest()) else {
            return;
        };
        StreamRecord::from_lambda(event)
    } else {
        let (record, images) = sdk_record(&mut input);
        let decoded = StreamRecord::from_sdk(record);
        if let Ok(decoded) = &decoded {
            let [keys, old, new] = images;
            assert_eq!(decoded.keys, keys);
            assert_eq!(decoded.old_image, Some(old).filter(|i| !i.is_empty()));
            assert_eq!(decoded.new_image, Some(new).filter(|i| !i.is_empty()));
        }
        decoded
    };
    if let Ok(record) = record {
        let _ = record.decode::<Profile>();
        let _ = record.decode::<HashKeys>();
        let _ = record.into_change::<Profile>();
    }
}

/// A Streams SDK record from the input, and its keys and images as the crate's items.
fn sdk_record(input: &mut Input<'_>) -> (streams::Record, [Item; 3]) {
    let event = ["INSERT", "MODIFY", "REMOVE", "OTHER"][usize::from(input.byte() % 4)];
    let view = [
        "KEYS_ONLY",
        "NEW_IMAGE",
        "OLD_IMAGE",
        "NEW_AND_OLD_IMAGES",
        "X",
    ][usize::from(input.byte() % 5)];
    let images = [0, 1, 2].map(|_| input.map(PROFILE_NAMES, 0));
    let [keys, old, new] = images.clone().map(|item| convert(&item));
    let change = streams::StreamRecord::builder()
        .set_keys(Some(keys))
        .set_old_image(Some(old))
        .set_new_image(Some(new))
        .stream_view_type(streams::StreamViewType::from(view))
        .sequence_number(input.text())
        .build();
    let record = streams::Record::builder()
        .event_name(streams::OperationType::from(event))
        .dynamodb(change)
        .event_id(input.text())
        .build();
    (record, images)
}

fn convert(item: &Item) -> HashMap<String, streams::AttributeValue> {
    item.iter()
        .map(|(k, v)| (k.clone(), convert_value(v)))
        .collect()
}

fn convert_value(value: &AttributeValue) -> streams::AttributeValue {
    use streams::AttributeValue as V;
    let blob = |b: &dynamo_model::aws_sdk_dynamodb::primitives::Blob| StreamBlob::new(b.as_ref());
    match value {
        AttributeValue::S(s) => V::S(s.clone()),
        AttributeValue::N(n) => V::N(n.clone()),
        AttributeValue::B(b) => V::B(blob(b)),
        AttributeValue::Bool(b) => V::Bool(*b),
        AttributeValue::Ss(s) => V::Ss(s.clone()),
        AttributeValue::Ns(s) => V::Ns(s.clone()),
        AttributeValue::Bs(s) => V::Bs(s.iter().map(blob).collect()),
        AttributeValue::L(l) => V::L(l.iter().map(convert_value).collect()),
        AttributeValue::M(m) => V::M(convert(m)),
        AttributeValue::Null(n) => V::Null(*n),
        _ => V::Null(true),
    }
}
