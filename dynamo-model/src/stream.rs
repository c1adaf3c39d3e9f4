//! DynamoDB Streams: change records decoded into entities and collections.
//!
//! A table with a stream records every write as a record: the event (`INSERT`, `MODIFY`,
//! `REMOVE`), the item's key and, depending on the stream's view type, the item as it
//! was before and after. [`StreamRecord`] is such a record in the crate's own types,
//! from either shape a program meets:
//! - [`StreamRecord::from_lambda`] (feature `lambda`): a record of the
//!   `aws_lambda_events::event::dynamodb::Event` AWS Lambda hands to a function;
//! - [`StreamRecord::from_sdk`] (feature `streams`): a `Record` read with the DynamoDB
//!   Streams API (`aws-sdk-dynamodbstreams`, `GetRecords`).
//!
//! [`StreamRecord::decode`] then gives a [`Change`] of an entity or of a
//! [`Collection`](crate::Collection) enum, or `None` when the record is about an item
//! that is not one of them (another entity type, a chunk item of a chunked attribute, a
//! revision of a `#[dynamo(history)]` entity): one table holds many entity types, so
//! its stream does too, and a handler picks the records it cares about.
//! [`StreamRecord::decode_revision`] reads the records of revisions instead, typed
//! ([`Revision`]).
//!
//! ```
//! use dynamo_model::stream::{EventName, Image, StreamRecord, ViewType};
//! use dynamo_model::{Entity, Table};
//!
//! #[derive(Table)]
//! #[dynamo(pk = "PK", sk = "SK")]
//! struct Shop;
//!
//! #[derive(Entity, Debug, Clone, PartialEq)]
//! #[dynamo(table = Shop, pk = "CUSTOMER#{customer}", sk = "ORDER#{order}")]
//! struct Order { customer: String, order: u32, total_cents: u64 }
//!
//! #[derive(Entity, Debug, Clone, PartialEq)]
//! #[dynamo(table = Shop, pk = "CUSTOMER#{customer}", sk = "PROFILE")]
//! struct Customer { customer: String, name: String }
//!
//! # fn main() -> Result<(), dynamo_model::Error> {
//! let before = Order { customer: "c-1".into(), order: 7, total_cents: 1_000 };
//! let after = Order { total_cents: 1_250, ..before.clone() };
//! // In a Lambda function: StreamRecord::from_lambda(record)?; from GetRecords:
//! // StreamRecord::from_sdk(record)?. Here, built by hand.
//! let record = StreamRecord::new(EventName::Modify, dynamo_model::Item::new())
//!     .with_old_image(before.to_item()?)
//!     .with_new_image(after.to_item()?);
//!
//! let change = record.decode::<Order>()?.expect("an order's record");
//! assert_eq!(change.event, EventName::Modify);
//! assert_eq!(change.key(), after.primary_key());
//! assert_eq!(change.old_image()?, Some(&before));
//! assert_eq!(change.new_image()?, Some(&after));
//!
//! // The same record is not a customer's: no garbage, no error.
//! assert!(record.decode::<Customer>()?.is_none());
//!
//! // A REMOVE from a KEYS_ONLY stream: the key, and a clear error for the image.
//! let mut keys = after.to_item()?;
//! keys.retain(|attribute, _| attribute == "PK" || attribute == "SK");
//! let removed = StreamRecord::new(EventName::Remove, keys).with_view_type(ViewType::KeysOnly);
//! let change = removed.decode::<Order>()?.expect("an order's key");
//! assert_eq!(change.key(), after.primary_key());
//! assert!(matches!(change.old, Image::NotInView));
//! assert!(change.old_image().is_err());
//! # Ok(()) }
//! ```
//!
//! # How a record is attributed to an entity type
//!
//! - A record with an image: the image's entity-type attribute names its type
//!   ([`TableSchema::entity_type`](crate::TableSchema::entity_type)); an image of
//!   another type is [`Image::OtherEntity`], and a record none of whose images is the
//!   target's decodes as `None`. An image of the target's type is decoded exactly like
//!   an item read from the table (its key attributes checked against its fields): a
//!   malformed image is an [`Error::Decode`] that names the entity, the key and the
//!   attribute, never garbage and never a panic.
//! - A record with keys only (a `KEYS_ONLY` stream, or any `REMOVE` of an
//!   `OLD_IMAGE`-less view): the key belongs to the target when one of its entity
//!   types' key templates renders it (see [`crate::registry`]). When the templates of
//!   several entity types render that key, [`Change::entity_type`] is `None`: the record
//!   may be another type's, which only an image can tell.
//!
//! # Chunked and compressed fields
//!
//! An image holds what the item holds. A `#[dynamo(compress)]` field is decoded (and
//! decompressed) as on any read. A `#[dynamo(chunked)]` field whose value is stored in
//! chunk items decodes without its value, as in a query: [`Chunked::get`](crate::Chunked::get)
//! is `None` and [`Chunked::manifest`](crate::Chunked::manifest) says what the item
//! names; load it with [`Db::load_chunks`](crate::Db::load_chunks) (the chunks of an old
//! image may be deleted by then: they are removed once the item no longer names them).
//! The chunk items' own records decode as `None` for every entity.
//!
//! # Delivery
//!
//! Streams deliver each record at least once, in order per item key. A handler that keeps
//! an aggregate must apply each record once: the example `order_aggregate` records every
//! applied event id in the same transaction as the aggregate's update.

use crate::collection::{Decoded, Target};
pub use crate::error::StreamError;
use crate::error::{DecodeError, DecodeErrorKind};
use crate::history::{Revision, Versioned};
pub use crate::stream_names::{EventName, ImageKind, ViewType};
use crate::{Entity, Error, Item, Key, RawKey, Table};
use aws_sdk_dynamodb::types::AttributeValue;
use std::time::SystemTime;

/// One DynamoDB Streams record in the crate's types, not yet decoded.
///
/// Built from AWS Lambda's shape ([`StreamRecord::from_lambda`]), from the Streams API's
/// ([`StreamRecord::from_sdk`]) or by hand ([`StreamRecord::new`], for tests or another
/// transport such as Kinesis); decoded with [`StreamRecord::decode`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StreamRecord {
    /// What happened to the item.
    pub event: EventName,
    /// The key attributes of the item (`Keys`).
    pub keys: Item,
    /// The item before the change, when the event has one and the view type records it.
    pub old_image: Option<Item>,
    /// The item after the change, when the event has one and the view type records it.
    pub new_image: Option<Item>,
    /// The record's sequence number: increases with each change of an item's key within
    /// a shard (compare them as numbers: they are decimal strings of up to 40 digits).
    pub sequence_number: Option<String>,
    /// About when the change happened (the record's `ApproximateCreationDateTime`).
    pub approximate_creation_time: Option<SystemTime>,
    /// The stream's view type, when the record names it.
    pub view_type: Option<ViewType>,
    /// The record's unique id (`eventID`): what an idempotent handler remembers.
    pub event_id: Option<String>,
    /// Whether DynamoDB's TTL process deleted the item (a `REMOVE` whose user identity
    /// is the service `dynamodb.amazonaws.com`), not a request.
    pub by_ttl: bool,
}

impl StreamRecord {
    /// A record of `event` on the item with key attributes `keys`, without images or
    /// metadata (add them with the `with_` methods).
    pub fn new(event: EventName, keys: Item) -> Self {
        StreamRecord {
            event,
            keys,
            old_image: None,
            new_image: None,
            sequence_number: None,
            approximate_creation_time: None,
            view_type: None,
            event_id: None,
            by_ttl: false,
        }
    }

    crate::setters::setters! {
        /// With the item before the change.
        with_old_image(item: Item) => old_image = Some(item);
        /// With the item after the change.
        with_new_image(item: Item) => new_image = Some(item);
        /// With the stream's view type.
        with_view_type(view_type: ViewType) => view_type = Some(view_type);
        /// With the record's sequence number.
        with_sequence_number(sequence_number: impl Into<String>) =>
            sequence_number = Some(sequence_number.into());
        /// With the record's event id.
        with_event_id(event_id: impl Into<String>) => event_id = Some(event_id.into());
    }

    /// The value of the table's entity-type attribute in the record's new image, or else
    /// in its old one (`None` for a keys-only record).
    pub fn entity_type<T: Table>(&self) -> Option<&str> {
        [&self.new_image, &self.old_image]
            .into_iter()
            .flatten()
            .find_map(|image| entity_type_in::<T>(image))
    }

    /// Decodes the record into a change of `T` (an [`Entity`] or a
    /// [`Collection`](crate::Collection)), or `None` when the record is about an item
    /// that is not one of `T` (see the [module documentation](self) for how that is
    /// told). Clones the images; [`StreamRecord::into_change`] moves them.
    pub fn decode<T: Target>(&self) -> Result<Option<Change<T>>, Error> {
        self.clone().into_change()
    }

    /// Decodes the record of a revision of `E` (an entity declared `#[dynamo(history)]`):
    /// a [`Change`] whose images are [`Revision`]s (the revision number, its time when
    /// the item holds one, the entity as of that revision), or `None` when the record is
    /// about anything else, the latest copy included (which [`decode`](Self::decode)
    /// reads). The same as `decode::<Revision<E>>()`.
    ///
    /// A revision is told by its key, whoever wrote it: the crate's revisions, and those
    /// another program writes without the entity-type attribute or, in AWS's
    /// number-based layout, without a number (its key's is its own). A new revision is
    /// an `INSERT`; a revision deleted ([`History::prune`](crate::history::History::prune),
    /// [`History::delete_all`](crate::history::History::delete_all)) is a `REMOVE`.
    ///
    /// ```
    /// use dynamo_model::history::Revision;
    /// use dynamo_model::stream::{EventName, StreamRecord};
    /// use dynamo_model::{Entity, Item, Table};
    /// use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
    ///
    /// #[derive(Table)]
    /// #[dynamo(pk = "PK", sk = "SK")]
    /// struct Equipment;
    ///
    /// /// AWS's version-control sample: `v0` holds `Latest`, `v1`, `v2`, … the revisions.
    /// #[derive(Entity, Debug, Clone, PartialEq)]
    /// #[dynamo(table = Equipment, identify = "keys", store_key_fields = false,
    ///          pk = "Equipment#{id}", history(layout = "aws"))]
    /// struct Machine {
    ///     id: String,
    ///     #[dynamo(rename = "State")]
    ///     state: String,
    ///     #[dynamo(version, rename = "Latest")]
    ///     latest: u64,
    /// }
    ///
    /// # fn main() -> Result<(), dynamo_model::Error> {
    /// // Revision 7 as the sample's stream consumer writes it: no entity type, no number.
    /// let text = |s: &str| AttributeValue::S(s.to_owned());
    /// let v7 = Item::from([
    ///     ("PK".to_owned(), text("Equipment#1")),
    ///     ("SK".to_owned(), text("v7")),
    ///     ("State".to_owned(), text("running")),
    /// ]);
    /// let record = StreamRecord::new(EventName::Insert, Item::new()).with_new_image(v7);
    ///
    /// // Not a change of the machine (its latest copy): a handler using `?` goes on.
    /// assert!(record.decode::<Machine>()?.is_none());
    /// // A change of its history: revision 7 of machine 1.
    /// let change = record.decode_revision::<Machine>()?.expect("a revision's record");
    /// assert_eq!((change.revision(), change.key()), (7, Machine::key("1")));
    /// let revision: &Revision<Machine> = change.new_image()?.expect("an INSERT's image");
    /// assert_eq!(revision.value.state, "running");
    /// assert_eq!(revision.value.latest, 7);
    /// # Ok(()) }
    /// ```
    pub fn decode_revision<E: Versioned>(&self) -> Result<Option<Change<Revision<E>>>, Error> {
        self.decode::<Revision<E>>()
    }

    /// [`StreamRecord::decode`], moving the images out of the record.
    ///
    /// An image of an entity with encrypted fields (`#[dynamo(encrypt)]`) fails with
    /// [`EncryptionError::NoKeys`](crate::encrypt::EncryptionError::NoKeys) here: decode
    /// it with [`StreamRecord::decode_with_keys`].
    pub fn into_change<T: Target>(self) -> Result<Option<Change<T>>, Error> {
        self.into_change_with(None)
    }

    /// [`StreamRecord::decode`], decrypting the encrypted fields of the images with
    /// `keys` (see [`encrypt`](crate::encrypt)).
    pub fn decode_with_keys<T: Target>(
        &self,
        keys: &dyn crate::encrypt::KeyProvider,
    ) -> Result<Option<Change<T>>, Error> {
        self.clone().into_change_with(Some(keys))
    }

    fn into_change_with<T: Target>(
        self,
        keys: Option<&dyn crate::encrypt::KeyProvider>,
    ) -> Result<Option<Change<T>>, Error> {
        let raw_key = self.raw_key::<T>()?;
        // Chunk items of chunked attributes are the crate's own, never an entity's.
        if crate::chunk::is_chunk_key(&raw_key) {
            return Ok(None);
        }
        let has_image = self.old_image.is_some() || self.new_image.is_some();
        let owners = || crate::registry::entity_types_of_key::<T::Table>(&raw_key);
        let entity_type = if has_image {
            self.entity_type::<T::Table>().map(str::to_owned)
        } else {
            // Keys only: the key templates are all there is to go by. A revision of a
            // versioned entity is its history, not the entity (and the latest copy is not
            // a revision).
            if is_revision_of::<T>(&raw_key) != T::READS_REVISIONS {
                return Ok(None);
            }
            let owners = owners();
            if !owners.iter().any(|t| T::ENTITY_TYPES.contains(t)) {
                return Ok(None);
            }
            match owners.as_slice() {
                [only] => Some((*only).to_owned()),
                _ => None,
            }
        };
        let event = self.event;
        let image = |item: Option<Item>, in_event: bool| -> Result<Image<T>, Error> {
            match item {
                _ if !in_event => Ok(Image::Absent),
                None => Ok(Image::NotInView),
                Some(item) => decode_image::<T>(item, &raw_key, keys),
            }
        };
        let old = image(self.old_image, event.has_old())?;
        let new = image(self.new_image, event.has_new())?;
        if has_image && !matches!(old, Image::Present(_)) && !matches!(new, Image::Present(_)) {
            return Ok(None);
        }
        Ok(Some(Change {
            event,
            raw_key,
            entity_type,
            old,
            new,
            sequence_number: self.sequence_number,
            approximate_creation_time: self.approximate_creation_time,
            view_type: self.view_type,
            event_id: self.event_id,
            by_ttl: self.by_ttl,
        }))
    }

    /// The item's key: from `Keys`, or from an image when the record has no keys.
    fn raw_key<T: Target>(&self) -> Result<RawKey, Error> {
        let schema = &<T::Table as Table>::SCHEMA;
        let source = [
            Some(&self.keys),
            self.new_image.as_ref(),
            self.old_image.as_ref(),
        ]
        .into_iter()
        .flatten()
        .find(|item| item.contains_key(schema.pk.name));
        let Some(item) = source else {
            return Err(StreamError::MissingKey {
                attribute: schema.pk.name,
            }
            .into());
        };
        let attribute = |name: &'static str| -> Result<String, Error> {
            match item.get(name) {
                Some(AttributeValue::S(value)) => Ok(value.clone()),
                Some(other) => Err(key_error::<T>(
                    name,
                    DecodeErrorKind::WrongType {
                        expected: "S",
                        found: crate::codec::type_name(other),
                    },
                )),
                None => Err(StreamError::MissingKey { attribute: name }.into()),
            }
        };
        Ok(RawKey {
            pk: attribute(schema.pk.name)?,
            sk: schema.sk.map(|sk| attribute(sk.name)).transpose()?,
        })
    }
}

fn key_error<T: Target>(attribute: &str, kind: DecodeErrorKind) -> Error {
    Error::Decode(DecodeError {
        entity: T::NAME,
        key: None,
        attribute: Some(attribute.to_owned()),
        kind,
    })
}

fn entity_type_in<T: Table>(item: &Item) -> Option<&str> {
    match item.get(T::SCHEMA.entity_type) {
        Some(AttributeValue::S(found)) => Some(found),
        _ => None,
    }
}

/// Decodes one image into `T`, or tells whose it is.
fn decode_image<T: Target>(
    mut item: Item,
    key: &RawKey,
    keys: Option<&dyn crate::encrypt::KeyProvider>,
) -> Result<Image<T>, Error> {
    // An image is the item under the record's key: one under another key would make
    // `Change::key` name an item other than the one decoded.
    let schema = &<T::Table as Table>::SCHEMA;
    if let Some(stored) = crate::schema::raw_key_of(schema, &item)
        && stored != *key
    {
        let (attribute, expected, found) = if stored.pk != key.pk {
            (schema.pk.name, key.pk.clone(), stored.pk)
        } else {
            let name = schema.sk.map_or(schema.pk.name, |sk| sk.name);
            (
                name,
                key.sk.clone().unwrap_or_default(),
                stored.sk.unwrap_or_default(),
            )
        };
        return Err(Error::Decode(DecodeError {
            entity: T::NAME,
            key: crate::schema::describe_item_key(schema, &item),
            attribute: Some(attribute.to_owned()),
            kind: DecodeErrorKind::KeyMismatch {
                expected: Some(expected),
                found,
            },
        }));
    }
    match entity_type_in::<T::Table>(&item) {
        Some(found) if !T::ENTITY_TYPES.contains(&found) => {
            return Ok(Image::OtherEntity(Some(found.to_owned())));
        }
        Some(_) => {}
        // No entity type: `T`'s only if its key templates render the key (then decoding
        // says what is wrong with it, as a read would).
        None => {
            let owners = crate::registry::entity_types_of_key::<T::Table>(key);
            if !owners.iter().any(|t| T::ENTITY_TYPES.contains(t)) {
                return Ok(Image::OtherEntity(None));
            }
        }
    }
    // A revision of a versioned entity is its history, not the entity, and the latest
    // copy is not a revision: told by the key, whoever wrote the item (another program's
    // revision carries neither the entity type nor, in AWS's layout, a number).
    let revision = crate::registry::is_revision::<T::Table>(&item) || is_revision_of::<T>(key);
    if revision != T::READS_REVISIONS {
        return Ok(Image::OtherEntity(None));
    }
    crate::collection::open::<T>(keys, &mut item)?;
    match T::decode(item)? {
        Decoded::Item(value) => Ok(Image::Present(value)),
        Decoded::Unknown(found) => Ok(Image::OtherEntity(found)),
    }
}

/// Whether `key` is the key of a revision of one of `T`'s entity types with history.
fn is_revision_of<T: Target>(key: &RawKey) -> bool {
    crate::registry::is_revision_key::<T::Table>(key, T::ENTITY_TYPES)
}

/// One image of a [`Change`].
#[derive(Debug, Clone, PartialEq)]
pub enum Image<T> {
    /// The item, decoded.
    Present(T),
    /// The event has no such image: the old image of an `INSERT`, the new image of a
    /// `REMOVE`.
    Absent,
    /// The event has such an image, but the record does not carry it: the stream's view
    /// type leaves it out (`KEYS_ONLY`; `NEW_IMAGE` for old images; `OLD_IMAGE` for new
    /// ones).
    NotInView,
    /// The image is an item of another entity type (its entity-type value, if it has
    /// one): a write replaced an item of another type under this key, or the image is a
    /// revision of a versioned entity.
    OtherEntity(Option<String>),
}

impl<T> Image<T> {
    /// The decoded item, if the image is one of `T`.
    pub fn as_ref(&self) -> Option<&T> {
        match self {
            Image::Present(value) => Some(value),
            _ => None,
        }
    }

    /// The decoded item, if the image is one of `T`, moved out.
    pub fn into_option(self) -> Option<T> {
        match self {
            Image::Present(value) => Some(value),
            _ => None,
        }
    }
}

/// A stream record decoded into a change of `T` ([`StreamRecord::decode`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Change<T> {
    /// What happened to the item.
    pub event: EventName,
    /// The item's key attributes ([`Change::key`] types them for an entity).
    pub raw_key: RawKey,
    /// The entity type of the item: from its image, or for a keys-only record the one
    /// entity type whose key templates render the key (`None` when several do).
    pub entity_type: Option<String>,
    /// The item before the change.
    pub old: Image<T>,
    /// The item after the change.
    pub new: Image<T>,
    /// See [`StreamRecord::sequence_number`].
    pub sequence_number: Option<String>,
    /// See [`StreamRecord::approximate_creation_time`].
    pub approximate_creation_time: Option<SystemTime>,
    /// See [`StreamRecord::view_type`].
    pub view_type: Option<ViewType>,
    /// See [`StreamRecord::event_id`].
    pub event_id: Option<String>,
    /// See [`StreamRecord::by_ttl`].
    pub by_ttl: bool,
}

impl<T: Target> Change<T> {
    /// The item before the change: `Ok(None)` when there was none of `T` (an `INSERT`,
    /// or an item of another type that this write replaced), an error when the event has
    /// one but the stream's view type leaves it out ([`StreamError::ImageNotInView`]).
    pub fn old_image(&self) -> Result<Option<&T>, Error> {
        self.image(&self.old, ImageKind::Old)
    }

    /// The item after the change: `Ok(None)` when there is none of `T` (a `REMOVE`, or
    /// an item of another type written over this one), an error when the event has one
    /// but the stream's view type leaves it out ([`StreamError::ImageNotInView`]).
    pub fn new_image(&self) -> Result<Option<&T>, Error> {
        self.image(&self.new, ImageKind::New)
    }

    fn image<'a>(&self, image: &'a Image<T>, kind: ImageKind) -> Result<Option<&'a T>, Error> {
        match image {
            Image::NotInView => Err(StreamError::ImageNotInView {
                entity: T::NAME,
                event: self.event,
                image: kind,
                view_type: self.view_type,
            }
            .into()),
            other => Ok(other.as_ref()),
        }
    }
}

impl<E: Entity> Change<E> {
    /// The item's typed key.
    pub fn key(&self) -> Key<E> {
        Key::from_raw(self.raw_key.clone())
    }
}

impl<E: Versioned> Change<Revision<E>> {
    /// The revision number, from the record's key (`v7` is revision 7).
    pub fn revision(&self) -> u64 {
        self.slot().map_or(0, |(slot, _)| slot)
    }

    /// The key of the item whose revision this is (its latest copy's key): what
    /// [`History`](crate::history::History)'s reads take.
    pub fn key(&self) -> Key<E> {
        let mut raw = self.raw_key.clone();
        if let (Some(layout), Some((_, rest))) = (E::__HISTORY, self.slot()) {
            raw.sk = Some(layout.latest(rest));
        }
        Key::from_raw(raw)
    }

    /// The slot and rest of the record's sort key under `E`'s history layout (a record
    /// decodes as a revision only when they parse).
    fn slot(&self) -> Option<(u64, &str)> {
        E::__HISTORY?.parse(self.raw_key.sk.as_deref()?)
    }
}

#[cfg(feature = "lambda")]
mod lambda;

#[cfg(feature = "streams")]
mod sdk;

#[cfg(test)]
pub(crate) mod tests;
