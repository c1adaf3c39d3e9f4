//! The vocabulary of stream records: what happened to an item ([`EventName`]), what a
//! stream records of it ([`ViewType`]) and which image of a record ([`ImageKind`]).
//!
//! These are names, not errors, and their public home is `dynamo_model::stream`
//! ([`dynamo_model::stream::EventName`], ...), which re-exports them. They are defined here,
//! in the foundation layer below `error`, because an error names them: the
//! `ImageNotInView` variant of [`StreamError`](dynamo_model::stream::StreamError) says
//! which event, image and view type a record had. The stream module is a feature above
//! every operation, and `error` may not use it; so the words both need live beneath both,
//! in this module of plain enums that uses nothing of the crate.
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
