//! Table declarations: key attributes, secondary indexes, TTL, capacity and stream, and
//! creating the table.
//!
//! A schema is static (declared once with `#[derive(Table)]`); the table *name* is
//! runtime configuration given to [`Db::new`](crate::Db::new), so the same schema serves
//! every stage and every test table. Capacity is often per stage too: the declaration
//! states the default ([`TableSchema::billing`], [`IndexSchema::throughput`],
//! [`TableSchema::stream`]) and [`TableOptions`] overrides it at run time for
//! [`Db::create_table_with`](crate::Db::create_table_with),
//! [`Db::check_table_with`](crate::Db::check_table_with) and the
//! [exports](dynamo_model::export).
//!
//! ```
//! use dynamo_model::Table;
//! use dynamo_model::schema::{Billing, StreamView, TableOptions, Throughput};
//!
//! #[derive(Table)]
//! #[dynamo(
//!     pk = "PK",
//!     sk = "SK",
//!     billing = "provisioned",
//!     capacity(read = 5, write = 5),
//!     stream = "NEW_AND_OLD_IMAGES",
//!     gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK", capacity(read = 2, write = 1)),
//! )]
//! struct App;
//!
//! assert_eq!(App::SCHEMA.billing, Billing::Provisioned(Throughput { read: 5, write: 5 }));
//! assert_eq!(App::SCHEMA.stream, Some(StreamView::NewAndOldImages));
//! assert_eq!(App::SCHEMA.indexes[0].throughput, Some(Throughput { read: 2, write: 1 }));
//!
//! // Production gets more: the same schema, other units.
//! let prod = TableOptions::declared(&App::SCHEMA)
//!     .provisioned(Throughput { read: 100, write: 50 })
//!     .index_throughput("GSI1", Throughput { read: 40, write: 50 });
//! assert_eq!(prod.index_throughput_of("GSI1"), Some(Throughput { read: 40, write: 50 }));
//! ```

use crate::key::Delimiter;
use crate::key::format::{AttributeForm, Formatted, FormattedOption, KeyFormat};
use crate::{Error, ValidationReason};
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType,
    LocalSecondaryIndex, Projection as SdkProjection, ProjectionType, ProvisionedThroughput,
    ScalarAttributeType, StreamSpecification, StreamViewType, TableStatus,
};
use std::time::Duration;

mod check;
mod item_key;
pub(crate) use item_key::{check_index_attributes, describe_item_key, raw_key_of};
#[doc(hidden)]
#[doc(hidden)]
pub mod history;
pub use check::TableDifference;
#[cfg(feature = "time")]
pub(crate) use check::ttl_on;
pub(crate) use check::{check_table, describe_table, enable_ttl};

/// A table declaration. Implemented by `#[derive(Table)]`.
///
/// ```
/// use dynamo_model::Table;
///
/// #[derive(Table)]
/// #[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"), ttl = "expires")]
/// struct App;
///
/// assert_eq!(App::SCHEMA.pk.name, "PK");
/// assert!(App::SCHEMA.index("GSI1").is_some());
/// ```
///
/// Implemented by the derive; implementing it by hand is not supported (its hidden
/// supertrait may change in any release).
pub trait Table: Sealed + Send + Sync + 'static {
    /// The static description of the table.
    const SCHEMA: TableSchema;

    /// The delimiter between the components of the keys the table's entities render,
    /// unless an entity or an index template declares its own: `#` unless the table
    /// declares `#[dynamo(delimiter = "..")]` (see [`Delimiter`]).
    const DELIMITER: Delimiter = Delimiter::HASH;
}

/// The static description of a table: key attributes, indexes, TTL attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableSchema {
    /// Rust name of the declaring type, for messages.
    pub type_name: &'static str,
    /// Partition key attribute (always a string attribute: keys are rendered templates).
    pub pk: KeyAttribute,
    /// Sort key attribute, if the table has one.
    pub sk: Option<KeyAttribute>,
    /// Global and local secondary indexes.
    pub indexes: &'static [IndexSchema],
    /// The TTL attribute (epoch seconds), enabled by [`create_table`].
    pub ttl: Option<&'static str>,
    /// The attribute holding each item's entity type.
    pub entity_type: &'static str,
    /// The write-token attribute (`_wt` unless the table sets `write_token = "..."`).
    ///
    /// Every single-item put and update this crate sends stores in it a short random
    /// token (16 characters) unique to the call, the same on the SDK's retries of that
    /// call. When DynamoDB applies a write but its response is lost (an HTTP 500 or a
    /// timeout after the write) and the SDK sends the request again, the retry's condition
    /// fails against the call's own write; the token in the current item that DynamoDB
    /// returns with the failure shows that this very call wrote it, so the call reports
    /// success instead of a conflict (see [`Put`](dynamo_model::item::Put),
    /// [`Update`](dynamo_model::item::Update)). Updates are also conditioned on the token not
    /// being stored yet, so a retried `add` is never added twice.
    ///
    /// Stored format: a string attribute, overwritten by every single-item put or update
    /// made through [`Db`](crate::Db). Batch writes and transactions do not write it (batch
    /// writes carry no condition, and transactions are made idempotent by their
    /// `ClientRequestToken`): a batch put removes it, while a transaction update, like any
    /// writer outside this crate, leaves the previous token in place. It counts in the item size like any attribute.
    /// Decoding ignores it; no field and no index key may use its name.
    pub write_token: &'static str,
    /// Whether items without the entity-type attribute are identified by the key templates
    /// of the table's entities (`identify = "keys"` on the table: every entity behaves as if
    /// it declared it).
    pub identify_by_keys: bool,
    /// Whether the crate's writes add the entity-type attribute to the items of the
    /// table's entities (`write_type = false` on the table, or on an entity, turns it
    /// off, for a table whose published design has no such attribute; the entities are
    /// then identified by their keys, `identify = "keys"`, which the derive requires).
    ///
    /// Without it, items are told apart by their key templates alone: an item of an
    /// entity that never had the attribute is read and guarded exactly like one another
    /// program wrote (see [`identify_by_keys`](Self::identify_by_keys)).
    pub writes_entity_type: bool,
    /// Whether single-item puts and updates store the write token
    /// ([`write_token`](Self::write_token)); `write_token = false` on the table (or on an
    /// entity) turns it off, so the items the crate writes hold exactly the entity's
    /// attributes.
    ///
    /// The trade-off: a write whose response is lost cannot be recognised as the call's
    /// own. Such a put or update is not retried by the SDK after an attempt that may have
    /// been applied (a retried `add` would be counted twice): it fails at once with
    /// [`Error::OutcomeUnknown`] whose `token` is `None`
    /// (read the item to decide; nothing settles it), where a token would have settled it
    /// as applied. Throttling and other errors that say the write was not applied are
    /// still retried.
    ///
    /// A `#[dynamo(history)]` entity's writes are transactions: without a token, a write
    /// whose response was lost is still applied at most once, by the transaction's
    /// `ClientRequestToken`, which its retries reuse for DynamoDB's ten-minute window; a
    /// retry past that window (a retry policy longer than ten minutes) that finds the
    /// call's own revision reports [`Error::VersionConflict`], where a token would have
    /// recognised it.
    pub writes_token: bool,
    /// How the table is billed: on demand unless the table declares
    /// `billing = "provisioned", capacity(read = N, write = N)`.
    pub billing: Billing,
    /// What the table's stream records hold (`stream = "NEW_AND_OLD_IMAGES"`, ...); `None`
    /// for no stream.
    pub stream: Option<StreamView>,
}

/// Read and write capacity units of a provisioned table or global secondary index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Throughput {
    /// Read capacity units (at least 1).
    pub read: u32,
    /// Write capacity units (at least 1).
    pub write: u32,
}

/// How a table is billed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Billing {
    /// On-demand capacity (`PAY_PER_REQUEST`), the default.
    OnDemand,
    /// Provisioned capacity (`PROVISIONED`) with the table's units. Each global secondary
    /// index has its own units ([`IndexSchema::throughput`]), the table's unless declared.
    Provisioned(Throughput),
}

impl Billing {
    /// `PAY_PER_REQUEST` or `PROVISIONED`, as the API and CloudFormation spell it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Billing::OnDemand => "PAY_PER_REQUEST",
            Billing::Provisioned(_) => "PROVISIONED",
        }
    }
}

/// What a table's stream records hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StreamView {
    /// The key attributes only (`KEYS_ONLY`).
    KeysOnly,
    /// The item after the change (`NEW_IMAGE`).
    NewImage,
    /// The item before the change (`OLD_IMAGE`).
    OldImage,
    /// The item before and after the change (`NEW_AND_OLD_IMAGES`).
    NewAndOldImages,
}

impl StreamView {
    /// The view type as the API, CloudFormation and CDK spell it (`NEW_AND_OLD_IMAGES`).
    pub const fn as_str(self) -> &'static str {
        match self {
            StreamView::KeysOnly => "KEYS_ONLY",
            StreamView::NewImage => "NEW_IMAGE",
            StreamView::OldImage => "OLD_IMAGE",
            StreamView::NewAndOldImages => "NEW_AND_OLD_IMAGES",
        }
    }

    fn sdk(self) -> StreamViewType {
        match self {
            StreamView::KeysOnly => StreamViewType::KeysOnly,
            StreamView::NewImage => StreamViewType::NewImage,
            StreamView::OldImage => StreamViewType::OldImage,
            StreamView::NewAndOldImages => StreamViewType::NewAndOldImages,
        }
    }

    pub(crate) fn from_sdk(view: &StreamViewType) -> Option<StreamView> {
        match view {
            StreamViewType::KeysOnly => Some(StreamView::KeysOnly),
            StreamViewType::NewImage => Some(StreamView::NewImage),
            StreamViewType::OldImage => Some(StreamView::OldImage),
            StreamViewType::NewAndOldImages => Some(StreamView::NewAndOldImages),
            _ => None,
        }
    }
}

/// Implemented by the derives for the traits they implement ([`Table`],
/// [`KeySpace`](crate::KeySpace)): a hand-written implementation of those traits is not
/// supported, and this trait may change in any release.
#[doc(hidden)]
pub trait Sealed {}

/// A key attribute of the table or of an index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyAttribute {
    /// Attribute name.
    pub name: &'static str,
    /// DynamoDB scalar type of the attribute.
    pub ty: ScalarType,
}

/// DynamoDB scalar types usable as key attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScalarType {
    /// String (`S`).
    S,
    /// Number (`N`).
    N,
    /// Binary (`B`).
    B,
}

/// Global or local secondary index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum IndexKind {
    /// A GSI: its own partition and sort key.
    Global,
    /// An LSI: the table's partition key with another sort key; strongly consistent reads.
    Local,
}

/// Which attributes an index holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Projection {
    /// Every attribute.
    All,
    /// Only the table and index keys.
    KeysOnly,
    /// The keys plus these attributes.
    Include(&'static [&'static str]),
}

/// A secondary index declaration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexSchema {
    /// Index name.
    pub name: &'static str,
    /// GSI or LSI.
    pub kind: IndexKind,
    /// Partition key attributes (several for a multi-attribute GSI key; empty for an LSI,
    /// which uses the table's partition key).
    pub pk: &'static [KeyAttribute],
    /// Sort key attributes (up to four for a multi-attribute GSI key).
    pub sk: &'static [KeyAttribute],
    /// Attributes projected into the index.
    pub projection: Projection,
    /// The index's own provisioned units (`capacity(read = N, write = N)` on a GSI of a
    /// provisioned table); `None` when it takes the table's (or the table is on demand,
    /// or the index is an LSI, which shares the table's capacity).
    pub throughput: Option<Throughput>,
}

impl IndexSchema {
    /// The index's (first) partition key attribute, `None` for an LSI.
    pub const fn pk_name(&self) -> Option<&'static str> {
        match self.pk.first() {
            Some(key) => Some(key.name),
            None => None,
        }
    }

    /// The index's (first) sort key attribute, if it has one.
    pub const fn sk_name(&self) -> Option<&'static str> {
        match self.sk.first() {
            Some(key) => Some(key.name),
            None => None,
        }
    }
}

/// The DynamoDB type a field takes as a key attribute of a multi-attribute index.
/// Sealed: implemented by the crate only.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a key attribute",
    label = "used as an index key attribute",
    note = "DynamoDB key attributes are strings (String, dates and date-times, Uuid), numbers (integers, floats) or binary (Binary), optionally in `Option` for a sparse index"
)]
pub trait KeyAttrType: crate::sealed::KeyAttrType {
    /// `S`, `N` or `B`.
    const TYPE: ScalarType;
}

macro_rules! key_attr_type {
    ($ty:expr => $($t:ty),*) => {$(
        impl KeyAttrType for $t { const TYPE: ScalarType = $ty; }
        impl crate::sealed::KeyAttrType for $t {}
    )*};
}
key_attr_type!(ScalarType::S => String);
key_attr_type!(ScalarType::N => u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64);
key_attr_type!(ScalarType::B => crate::Binary);
#[cfg(feature = "time")]
key_attr_type!(ScalarType::S => time::OffsetDateTime, time::Date, time::PrimitiveDateTime);
#[cfg(feature = "chrono")]
key_attr_type!(ScalarType::S => chrono::NaiveDate, chrono::NaiveDateTime, chrono::DateTime<chrono::Utc>);
#[cfg(feature = "uuid")]
key_attr_type!(ScalarType::S => uuid::Uuid);
#[cfg(feature = "ulid")]
key_attr_type!(ScalarType::S => ulid::Ulid);

impl<T: KeyAttrType> KeyAttrType for Option<T> {
    const TYPE: ScalarType = T::TYPE;
}
impl<T: KeyAttrType> crate::sealed::KeyAttrType for Option<T> {}

/// The type of the attribute a key format gives ([`AttributeForm`]).
impl<T: KeyAttrType, F: KeyFormat<T>> KeyAttrType for Formatted<T, F> {
    const TYPE: ScalarType = match F::ATTRIBUTE {
        AttributeForm::Own => T::TYPE,
        AttributeForm::Text => ScalarType::S,
        AttributeForm::Number => ScalarType::N,
    };
}
impl<T: KeyAttrType, F: KeyFormat<T>> crate::sealed::KeyAttrType for Formatted<T, F> {}

/// The type of the attribute a key format gives, as for [`Formatted`].
impl<T: KeyAttrType, F: KeyFormat<T>> KeyAttrType for FormattedOption<T, F> {
    const TYPE: ScalarType = <Formatted<T, F> as KeyAttrType>::TYPE;
}
impl<T: KeyAttrType, F: KeyFormat<T>> crate::sealed::KeyAttrType for FormattedOption<T, F> {}

/// `const` equality of scalar types.
#[doc(hidden)]
pub const fn scalar_eq(a: ScalarType, b: ScalarType) -> bool {
    a as u8 == b as u8
}

/// Whether `a` and `b` name the same attribute (both present and equal), in const context.
pub const fn same_attribute(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => const_str_eq(a, b),
        _ => false,
    }
}

/// `const` string equality (`str::eq` is not `const`).
#[doc(hidden)]
pub const fn const_str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

impl TableSchema {
    /// The table's sort key attribute, if it has one.
    pub const fn sk_name(&self) -> Option<&'static str> {
        match self.sk {
            Some(key) => Some(key.name),
            None => None,
        }
    }

    /// The index with this name, if declared.
    pub const fn index(&self, name: &str) -> Option<&IndexSchema> {
        let mut i = 0;
        while i < self.indexes.len() {
            if const_str_eq(self.indexes[i].name, name) {
                return Some(&self.indexes[i]);
            }
            i += 1;
        }
        None
    }

    /// Position of the index named `name` in [`TableSchema::indexes`], if declared.
    pub const fn index_position(&self, name: &str) -> Option<usize> {
        let mut i = 0;
        while i < self.indexes.len() {
            if const_str_eq(self.indexes[i].name, name) {
                return Some(i);
            }
            i += 1;
        }
        None
    }

    /// Whether `attribute` is written by the crate on every item: the table's key
    /// attributes or the entity-type attribute. No field and no index template may use it.
    pub const fn is_reserved_attribute(&self, attribute: &str) -> bool {
        if const_str_eq(self.pk.name, attribute) || const_str_eq(self.entity_type, attribute) {
            return true;
        }
        match self.sk {
            Some(sk) => const_str_eq(sk.name, attribute),
            None => false,
        }
    }

    /// Whether `attribute` is a key attribute of one of the table's indexes.
    pub const fn is_index_key_attribute(&self, attribute: &str) -> bool {
        let mut i = 0;
        while i < self.indexes.len() {
            let index = &self.indexes[i];
            let mut k = 0;
            while k < index.pk.len() {
                if const_str_eq(index.pk[k].name, attribute) {
                    return true;
                }
                k += 1;
            }
            k = 0;
            while k < index.sk.len() {
                if const_str_eq(index.sk[k].name, attribute) {
                    return true;
                }
                k += 1;
            }
            i += 1;
        }
        false
    }
}

fn sdk_type(ty: ScalarType) -> ScalarAttributeType {
    match ty {
        ScalarType::S => ScalarAttributeType::S,
        ScalarType::N => ScalarAttributeType::N,
        ScalarType::B => ScalarAttributeType::B,
    }
}

/// The SDK's key schema of a table or an index: its key attributes in order, each with its
/// role.
fn key_schema(keys: &[(&str, KeyRole)]) -> Result<Vec<KeySchemaElement>, Error> {
    keys.iter()
        .map(|(name, role)| {
            KeySchemaElement::builder()
                .attribute_name(*name)
                .key_type(role.sdk())
                .build()
                .map_err(|e| Error::request_build("CreateTable", e))
        })
        .collect()
}

fn projection(p: Projection) -> SdkProjection {
    match p {
        Projection::All => SdkProjection::builder()
            .projection_type(ProjectionType::All)
            .build(),
        Projection::KeysOnly => SdkProjection::builder()
            .projection_type(ProjectionType::KeysOnly)
            .build(),
        Projection::Include(attrs) => SdkProjection::builder()
            .projection_type(ProjectionType::Include)
            .set_non_key_attributes(Some(attrs.iter().map(|a| a.to_string()).collect()))
            .build(),
    }
}

/// A key attribute's role in a key schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyRole {
    /// The partition key (`HASH`).
    Hash,
    /// The sort key (`RANGE`).
    Range,
}

impl KeyRole {
    /// `HASH` or `RANGE`, as CloudFormation and the API spell it.
    #[cfg_attr(not(feature = "export"), allow(dead_code))]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            KeyRole::Hash => "HASH",
            KeyRole::Range => "RANGE",
        }
    }

    fn sdk(self) -> KeyType {
        match self {
            KeyRole::Hash => KeyType::Hash,
            KeyRole::Range => KeyType::Range,
        }
    }
}

mod options;
pub use options::*;

#[cfg(test)]
mod tests;
