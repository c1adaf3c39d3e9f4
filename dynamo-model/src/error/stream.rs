//! The vocabulary of stream records and the errors reading them.
use std::fmt;

/// `as_str`, `parse` and `Display` of an enum of names DynamoDB writes, from one table
/// of them.
macro_rules! dynamodb_names {
    ($name:ident { $($variant:ident => $text:literal,)* }) => {
        impl $name {
            #[doc = concat!("The name as DynamoDB writes it:" $(, " `", $text, "`")*, ".")]
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }

            /// Parses the name DynamoDB writes (`None` for anything else).
            pub fn parse(name: &str) -> Option<Self> {
                match name {
                    $($text => Some($name::$variant),)*
                    _ => None,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

/// What happened to the item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EventName {
    /// A new item was written (`INSERT`).
    Insert,
    /// An existing item was changed or replaced (`MODIFY`).
    Modify,
    /// The item was deleted (`REMOVE`), by a request or by TTL
    /// ([`StreamRecord::by_ttl`](dynamo_model::stream::StreamRecord::by_ttl)).
    Remove,
}

dynamodb_names!(EventName {
    Insert => "INSERT",
    Modify => "MODIFY",
    Remove => "REMOVE",
});

impl EventName {
    /// Whether an event of this kind has an old image: a `MODIFY` or a `REMOVE` (an
    /// `INSERT` had no item before).
    pub fn has_old(self) -> bool {
        self != EventName::Insert
    }

    /// Whether an event of this kind has a new image: an `INSERT` or a `MODIFY` (a
    /// `REMOVE` leaves no item).
    pub fn has_new(self) -> bool {
        self != EventName::Remove
    }
}

/// What a stream records of each item it changes (`StreamViewType`, set on the table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ViewType {
    /// The key attributes only.
    KeysOnly,
    /// The item after the change.
    NewImage,
    /// The item before the change.
    OldImage,
    /// The item before and after the change.
    NewAndOldImages,
}

dynamodb_names!(ViewType {
    KeysOnly => "KEYS_ONLY",
    NewImage => "NEW_IMAGE",
    OldImage => "OLD_IMAGE",
    NewAndOldImages => "NEW_AND_OLD_IMAGES",
});

/// Which image of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ImageKind {
    /// The item before the change (`OldImage`).
    Old,
    /// The item after the change (`NewImage`).
    New,
}

impl fmt::Display for ImageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ImageKind::Old => "old",
            ImageKind::New => "new",
        })
    }
}

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
