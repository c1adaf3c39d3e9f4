//! Records of the event AWS Lambda delivers from a DynamoDB stream (feature `lambda`).

use super::*;
use aws_lambda_events::event::dynamodb::{EventRecord, StreamViewType};

impl StreamRecord {
    /// A record of the event AWS Lambda delivers from a DynamoDB stream
    /// (`aws_lambda_events::event::dynamodb::Event::records`), feature `lambda`.
    ///
    /// The images arrive as `serde_dynamo` items and are converted value by value
    /// (no JSON round trip). In this shape an absent image is an empty map (every
    /// image of an item has at least its key attributes, so empty means absent), and
    /// an absent creation time is the Unix epoch: both are read as absent.
    ///
    /// ```
    /// # #[cfg(feature = "lambda")] {
    /// use aws_lambda_events::event::dynamodb::Event;
    /// use dynamo_model::stream::{EventName, StreamRecord};
    ///
    /// let event: Event = serde_json::from_str(r#"{"Records": [{
    ///     "eventID": "1", "eventName": "REMOVE", "eventVersion": "1.1",
    ///     "eventSource": "aws:dynamodb", "awsRegion": "us-east-1",
    ///     "dynamodb": {"Keys": {"PK": {"S": "USER#u-1"}, "SK": {"S": "PROFILE"}},
    ///                  "SequenceNumber": "222", "SizeBytes": 26,
    ///                  "StreamViewType": "KEYS_ONLY"}}]}"#).unwrap();
    /// let record = StreamRecord::from_lambda(event.records[0].clone()).unwrap();
    /// assert_eq!(record.event, EventName::Remove);
    /// assert!(record.old_image.is_none());
    /// # }
    /// ```
    pub fn from_lambda(record: EventRecord) -> Result<Self, Error> {
        let event = EventName::parse(&record.event_name)
            .ok_or_else(|| StreamError::UnknownEventName(record.event_name.clone()))?;
        let change = record.change;
        let image = |item: serde_dynamo::Item| -> Option<Item> {
            // serde_dynamo's values map one to one onto the SDK's (a total match).
            (!item.is_empty()).then(|| item.into())
        };
        let created = change.approximate_creation_date_time;
        let by_ttl = record.user_identity.is_some_and(|identity| {
            identity.type_ == "Service" && identity.principal_id == "dynamodb.amazonaws.com"
        });
        Ok(StreamRecord {
            event,
            keys: change.keys.into(),
            old_image: image(change.old_image),
            new_image: image(change.new_image),
            sequence_number: change.sequence_number,
            approximate_creation_time: (created.timestamp() != 0
                || created.timestamp_subsec_nanos() != 0)
                .then(|| SystemTime::from(created)),
            view_type: change.stream_view_type.and_then(|view| match view {
                StreamViewType::KeysOnly => Some(ViewType::KeysOnly),
                StreamViewType::NewImage => Some(ViewType::NewImage),
                StreamViewType::OldImage => Some(ViewType::OldImage),
                StreamViewType::NewAndOldImages => Some(ViewType::NewAndOldImages),
                _ => None,
            }),
            event_id: Some(record.event_id).filter(|id| !id.is_empty()),
            by_ttl,
        })
    }
}
