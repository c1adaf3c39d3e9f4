//! The errors reading stream records.
use crate::stream_names::{EventName, ImageKind, ViewType};

/// A stream record that cannot be used, or an image it does not carry
/// ([`Error::Stream`](super::Error::Stream)). Images that do not decode are [`Error::Decode`](super::Error::Decode).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError {
    /// The record's event name is not `INSERT`, `MODIFY` or `REMOVE` (or is missing).
    #[error("unknown stream event name {0:?} (expected INSERT, MODIFY or REMOVE)")]
    UnknownEventName(String),
    /// The record has no change section (`dynamodb` in both shapes): no keys, no images.
    #[error("the stream record has no `dynamodb` section (no keys, no images)")]
    MissingChange,
    /// An attribute of the record holds a value of a DynamoDB type the Streams SDK of
    /// this build does not know (a type added to the service later): `path` is where,
    /// e.g. `NewImage.lines[2].sku`.
    #[error("{path} holds a value of an attribute type this build does not know")]
    UnknownAttributeType {
        /// Where in the record.
        path: String,
    },
    /// The record has neither keys nor an image with the table's key attributes.
    #[error("the stream record has no key attributes ({attribute} missing or not a string)")]
    MissingKey {
        /// The key attribute looked for.
        attribute: &'static str,
    },
    /// An image was asked for that the event has but the record does not carry, because
    /// of the stream's view type (`KEYS_ONLY` carries none, `NEW_IMAGE` no old one,
    /// `OLD_IMAGE` no new one). Choose the view type the handler needs on the table.
    #[error("this {event} record of {entity} carries no {image} image: the stream's view type is {}", view_type.map(ViewType::as_str).unwrap_or("not given, and the image is missing"))]
    ImageNotInView {
        /// The entity type (or collection) decoded.
        entity: &'static str,
        /// The record's event.
        event: EventName,
        /// The image asked for.
        image: ImageKind,
        /// The view type the record names, if it names one.
        view_type: Option<ViewType>,
    },
}
