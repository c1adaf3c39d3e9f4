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
//! [exports](crate::export).
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

use crate::{Error, ValidationReason};
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType,
    LocalSecondaryIndex, Projection as SdkProjection, ProjectionType, ProvisionedThroughput,
    ScalarAttributeType, StreamSpecification, StreamViewType, TableStatus, TimeToLiveSpecification,
};
use std::time::Duration;

mod check;
pub use check::TableDifference;
pub(crate) use check::check_table;

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
    /// declares `#[dynamo(delimiter = "..")]` (see [`Delimiter`](crate::key::Delimiter)).
    const DELIMITER: crate::key::Delimiter = crate::key::Delimiter::HASH;
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
    /// success instead of a conflict (see [`Put`](crate::ops::Put),
    /// [`Update`](crate::ops::Update)). Updates are also conditioned on the token not
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

impl<T: KeyAttrType> KeyAttrType for Option<T> {
    const TYPE: ScalarType = T::TYPE;
}
impl<T: KeyAttrType> crate::sealed::KeyAttrType for Option<T> {}

/// `const` equality of scalar types.
#[doc(hidden)]
pub const fn scalar_eq(a: ScalarType, b: ScalarType) -> bool {
    a as u8 == b as u8
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

fn key_element(name: &str, key_type: KeyType) -> Result<KeySchemaElement, Error> {
    KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(key_type)
        .build()
        .map_err(|e| Error::request_build("CreateTable", e))
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

/// Capacity and stream settings of a table, for one deployment: the declaration's
/// ([`TableOptions::declared`]) or another stage's. The table name is runtime
/// configuration; these are the rest of what differs between stages.
///
/// Checked where they are used ([`Db::create_table_with`](crate::Db::create_table_with),
/// [`Db::check_table_with`](crate::Db::check_table_with),
/// [`Export::with_options`](crate::export::Export::with_options)): zero units, units for
/// an index the schema does not declare or for an LSI (which shares the table's
/// capacity), and index units on an on-demand table are refused with
/// [`ValidationReason::InvalidOption`] before anything is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableOptions {
    billing: Billing,
    /// Units of global secondary indexes, by name (the declared ones first).
    indexes: Vec<(String, Throughput)>,
    stream: Option<StreamView>,
}

impl TableOptions {
    /// The settings the schema declares.
    pub fn declared(schema: &TableSchema) -> TableOptions {
        TableOptions {
            billing: schema.billing,
            indexes: schema
                .indexes
                .iter()
                .filter_map(|i| i.throughput.map(|t| (i.name.to_owned(), t)))
                .collect(),
            stream: schema.stream,
        }
    }

    /// On-demand billing (drops any index units).
    pub fn on_demand(mut self) -> TableOptions {
        self.billing = Billing::OnDemand;
        self.indexes.clear();
        self
    }

    /// Provisioned billing with `table` units for the table (and for each global
    /// secondary index not given its own with [`index_throughput`](Self::index_throughput)).
    pub fn provisioned(mut self, table: Throughput) -> TableOptions {
        self.billing = Billing::Provisioned(table);
        self
    }

    /// The provisioned units of the global secondary index `index`.
    pub fn index_throughput(mut self, index: &str, throughput: Throughput) -> TableOptions {
        match self.indexes.iter_mut().find(|(name, _)| name == index) {
            Some(slot) => slot.1 = throughput,
            None => self.indexes.push((index.to_owned(), throughput)),
        }
        self
    }

    /// The stream's view type, or `None` for no stream.
    pub fn stream(mut self, view: Option<StreamView>) -> TableOptions {
        self.stream = view;
        self
    }

    /// The billing mode and the table's units.
    pub fn billing(&self) -> Billing {
        self.billing
    }

    /// The stream's view type, if the table has a stream.
    pub fn stream_view(&self) -> Option<StreamView> {
        self.stream
    }

    /// The units given to index `index` with
    /// [`index_throughput`](Self::index_throughput) or in the declaration (not the table's
    /// units it falls back to).
    pub fn index_throughput_of(&self, index: &str) -> Option<Throughput> {
        self.indexes
            .iter()
            .find(|(name, _)| name == index)
            .map(|(_, t)| *t)
    }

    /// Refuses settings DynamoDB would refuse, or that name no index of `schema`.
    fn validate(&self, schema: &TableSchema) -> Result<(), Error> {
        let refuse = |message: String| {
            Err(Error::invalid_request(
                "CreateTable",
                ValidationReason::InvalidOption,
                message,
            ))
        };
        let zero = |t: Throughput| t.read == 0 || t.write == 0;
        if let Billing::Provisioned(t) = self.billing
            && zero(t)
        {
            return refuse(format!(
                "table {}: provisioned read and write capacity are at least 1 unit each (got read {}, write {})",
                schema.type_name, t.read, t.write
            ));
        }
        for (name, t) in &self.indexes {
            match schema.index(name) {
                None => {
                    return refuse(format!(
                        "table {} declares no index `{name}` to give capacity to",
                        schema.type_name
                    ));
                }
                Some(index) if index.kind == IndexKind::Local => {
                    return refuse(format!(
                        "index `{name}` is an LSI: it shares the table's capacity and has none of its own"
                    ));
                }
                Some(_) => {}
            }
            if self.billing == Billing::OnDemand {
                return refuse(format!(
                    "index `{name}` is given provisioned capacity but the table is billed on demand"
                ));
            }
            if zero(*t) {
                return refuse(format!(
                    "index `{name}`: provisioned read and write capacity are at least 1 unit each (got read {}, write {})",
                    t.read, t.write
                ));
            }
        }
        Ok(())
    }
}

/// One index as [`create_table`] creates it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct IndexLayout {
    pub(crate) name: &'static str,
    pub(crate) kind: IndexKind,
    /// In key-schema order: the partition key attribute(s), then the sort key's.
    pub(crate) keys: Vec<(&'static str, KeyRole)>,
    pub(crate) projection: Projection,
    /// A GSI's units on a provisioned table (its own or the table's); `None` otherwise.
    pub(crate) throughput: Option<Throughput>,
}

/// What [`create_table`] creates for a schema; the schema exports
/// (`crate::export`) render the same description, so the two never disagree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Layout {
    /// Every key attribute of the table and its indexes, once, in first-use order.
    pub(crate) definitions: Vec<KeyAttribute>,
    pub(crate) keys: Vec<(&'static str, KeyRole)>,
    pub(crate) indexes: Vec<IndexLayout>,
    pub(crate) ttl: Option<&'static str>,
    pub(crate) billing: Billing,
    pub(crate) stream: Option<StreamView>,
}

/// The table [`create_table`] creates for `schema` as declared (the derive refuses a
/// declaration DynamoDB would refuse, so it needs no check here). Used by the exports.
#[cfg_attr(not(feature = "export"), allow(dead_code))]
pub(crate) fn layout(schema: &TableSchema) -> Layout {
    layout_of(schema, &TableOptions::declared(schema))
}

/// The table [`create_table`] creates for `schema` with `options`, checked.
pub(crate) fn layout_with(schema: &TableSchema, options: &TableOptions) -> Result<Layout, Error> {
    options.validate(schema)?;
    Ok(layout_of(schema, options))
}

fn layout_of(schema: &TableSchema, options: &TableOptions) -> Layout {
    let mut definitions: Vec<KeyAttribute> = Vec::new();
    let mut define = |attr: KeyAttribute| {
        if !definitions.iter().any(|d| d.name == attr.name) {
            definitions.push(attr);
        }
    };
    define(schema.pk);
    schema.sk.into_iter().for_each(&mut define);
    for index in schema.indexes {
        index
            .pk
            .iter()
            .chain(index.sk)
            .copied()
            .for_each(&mut define);
    }
    let mut keys = vec![(schema.pk.name, KeyRole::Hash)];
    keys.extend(schema.sk.map(|sk| (sk.name, KeyRole::Range)));
    let indexes = schema
        .indexes
        .iter()
        .map(|index| {
            let pk: Vec<(&'static str, KeyRole)> = match index.kind {
                // An LSI shares the table's partition key (DynamoDB rule).
                IndexKind::Local => vec![(schema.pk.name, KeyRole::Hash)],
                IndexKind::Global => index.pk.iter().map(|a| (a.name, KeyRole::Hash)).collect(),
            };
            let throughput = match (options.billing, index.kind) {
                (Billing::Provisioned(table), IndexKind::Global) => {
                    Some(options.index_throughput_of(index.name).unwrap_or(table))
                }
                _ => None,
            };
            IndexLayout {
                name: index.name,
                kind: index.kind,
                keys: pk
                    .into_iter()
                    .chain(index.sk.iter().map(|a| (a.name, KeyRole::Range)))
                    .collect(),
                projection: index.projection,
                throughput,
            }
        })
        .collect();
    Layout {
        definitions,
        keys,
        indexes,
        ttl: schema.ttl,
        billing: options.billing,
        stream: options.stream,
    }
}

fn throughput(t: Throughput) -> Result<ProvisionedThroughput, Error> {
    ProvisionedThroughput::builder()
        .read_capacity_units(i64::from(t.read))
        .write_capacity_units(i64::from(t.write))
        .build()
        .map_err(|e| Error::request_build("CreateTable", e))
}

/// Creates a table for `schema` under `table_name` with the capacity and stream the
/// schema declares, waits until it is `ACTIVE`, and enables TTL on the schema's TTL
/// attribute.
///
/// Most code calls [`Db::create_table`](crate::Db::create_table) instead.
pub async fn create_table(
    client: &Client,
    table_name: &str,
    schema: &TableSchema,
) -> Result<(), Error> {
    create_table_with(client, table_name, schema, &TableOptions::declared(schema)).await
}

/// [`create_table`] with `options` in place of the declared capacity and stream.
pub async fn create_table_with(
    client: &Client,
    table_name: &str,
    schema: &TableSchema,
    options: &TableOptions,
) -> Result<(), Error> {
    const OP: &str = "CreateTable";
    let layout = layout_with(schema, options)?;
    let mut request = client.create_table().table_name(table_name);
    request = match layout.billing {
        Billing::OnDemand => request.billing_mode(BillingMode::PayPerRequest),
        Billing::Provisioned(t) => request
            .billing_mode(BillingMode::Provisioned)
            .provisioned_throughput(throughput(t)?),
    };
    if let Some(view) = layout.stream {
        request = request.stream_specification(
            StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(view.sdk())
                .build()
                .map_err(|e| Error::request_build(OP, e))?,
        );
    }
    for (name, role) in &layout.keys {
        request = request.key_schema(key_element(name, role.sdk())?);
    }
    for def in &layout.definitions {
        request = request.attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name(def.name)
                .attribute_type(sdk_type(def.ty))
                .build()
                .map_err(|e| Error::request_build(OP, e))?,
        );
    }
    for index in &layout.indexes {
        match index.kind {
            IndexKind::Global => {
                let mut gsi = GlobalSecondaryIndex::builder()
                    .index_name(index.name)
                    .projection(projection(index.projection));
                for (name, role) in &index.keys {
                    gsi = gsi.key_schema(key_element(name, role.sdk())?);
                }
                if let Some(t) = index.throughput {
                    gsi = gsi.provisioned_throughput(throughput(t)?);
                }
                request = request.global_secondary_indexes(
                    gsi.build().map_err(|e| Error::request_build(OP, e))?,
                );
            }
            IndexKind::Local => {
                let mut lsi = LocalSecondaryIndex::builder()
                    .index_name(index.name)
                    .projection(projection(index.projection));
                for (name, role) in &index.keys {
                    lsi = lsi.key_schema(key_element(name, role.sdk())?);
                }
                request = request
                    .local_secondary_indexes(lsi.build().map_err(|e| Error::request_build(OP, e))?);
            }
        }
    }
    request
        .send()
        .await
        .map_err(|e| Error::service(OP, table_name, e))?;

    wait_until_active(client, table_name).await?;

    if let Some(ttl) = layout.ttl {
        client
            .update_time_to_live()
            .table_name(table_name)
            .time_to_live_specification(
                TimeToLiveSpecification::builder()
                    .attribute_name(ttl)
                    .enabled(true)
                    .build()
                    .map_err(|e| Error::request_build("UpdateTimeToLive", e))?,
            )
            .send()
            .await
            .map_err(|e| Error::service("UpdateTimeToLive", table_name, e))?;
    }
    Ok(())
}

/// Polls `DescribeTable` until the table and all its indexes are `ACTIVE` (the real
/// service takes seconds to minutes; DynamoDB Local is immediate).
async fn wait_until_active(client: &Client, table_name: &str) -> Result<(), Error> {
    let mut delay = Duration::from_millis(20);
    loop {
        let out = client
            .describe_table()
            .table_name(table_name)
            .send()
            .await
            .map_err(|e| Error::service("DescribeTable", table_name, e))?;
        if let Some(table) = out.table() {
            let indexes_active = table
                .global_secondary_indexes()
                .iter()
                .all(|g| g.index_status() == Some(&aws_sdk_dynamodb::types::IndexStatus::Active));
            if table.table_status() == Some(&TableStatus::Active) && indexes_active {
                return Ok(());
            }
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(Duration::from_secs(2));
    }
}

#[cfg(test)]
mod tests {
    use crate::Table;

    #[derive(crate::Table)]
    #[dynamo(
        pk = "PK",
        sk = "SK",
        gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
        gsi(name = "ByRegion", pk = ["RegionPK", "RegionPK2"], sk = ["RegionSK:N"]),
        lsi(name = "LSI1", sk = "LSI1SK")
    )]
    struct App;

    #[derive(crate::Table)]
    #[dynamo(
        pk = "PK",
        sk = "SK",
        billing = "provisioned",
        capacity(read = 4, write = 2),
        stream = "NEW_AND_OLD_IMAGES",
        gsi(name = "GSI1", pk = "GSI1PK", capacity(read = 3, write = 1)),
        gsi(name = "GSI2", pk = "GSI2PK"),
        lsi(name = "LSI1", sk = "LSI1SK")
    )]
    struct Provisioned;

    #[test]
    fn the_declared_capacity_and_stream_are_in_the_schema_and_the_layout() {
        use super::{Billing, StreamView, Throughput};
        let schema = &Provisioned::SCHEMA;
        assert_eq!(
            schema.billing,
            Billing::Provisioned(Throughput { read: 4, write: 2 })
        );
        assert_eq!(schema.stream, Some(StreamView::NewAndOldImages));
        assert_eq!(
            schema
                .indexes
                .iter()
                .map(|i| i.throughput)
                .collect::<Vec<_>>(),
            vec![Some(Throughput { read: 3, write: 1 }), None, None]
        );
        let layout = super::layout(schema);
        // A GSI without its own units takes the table's; an LSI has none.
        assert_eq!(
            layout
                .indexes
                .iter()
                .map(|i| i.throughput)
                .collect::<Vec<_>>(),
            vec![
                Some(Throughput { read: 3, write: 1 }),
                Some(Throughput { read: 4, write: 2 }),
                None
            ]
        );
        // On demand and no stream unless declared.
        assert_eq!(App::SCHEMA.billing, Billing::OnDemand);
        assert_eq!(App::SCHEMA.stream, None);
        assert!(
            super::layout(&App::SCHEMA)
                .indexes
                .iter()
                .all(|i| i.throughput.is_none())
        );
    }

    #[test]
    fn options_dynamodb_would_refuse_are_refused_before_sending() {
        use super::{TableOptions, Throughput};
        let declared = TableOptions::declared(&Provisioned::SCHEMA);
        let one = Throughput { read: 1, write: 1 };
        let refused = [
            declared
                .clone()
                .provisioned(Throughput { read: 0, write: 1 }),
            declared
                .clone()
                .provisioned(Throughput { read: 1, write: 0 }),
            declared
                .clone()
                .index_throughput("GSI2", Throughput { read: 1, write: 0 }),
            declared.clone().index_throughput("Nope", one),
            declared.clone().index_throughput("LSI1", one),
            declared.clone().on_demand().index_throughput("GSI1", one),
        ];
        for options in refused {
            let err = super::layout_with(&Provisioned::SCHEMA, &options).err();
            assert_eq!(
                err.and_then(|e| e.validation_reason()),
                Some(crate::ValidationReason::InvalidOption),
                "{options:?}"
            );
            // And through the Db, nothing is sent (an offline client would fail to send).
            let db = crate::Db::<Provisioned>::offline("t");
            let err = futures_util::FutureExt::now_or_never(db.create_table_with(&options))
                .and_then(Result::err);
            assert_eq!(
                err.and_then(|e| e.validation_reason()),
                Some(crate::ValidationReason::InvalidOption),
                "{options:?}"
            );
        }
        assert!(super::layout_with(&Provisioned::SCHEMA, &declared).is_ok());
        // On demand drops the declared index units.
        let on_demand = declared.on_demand();
        assert_eq!(on_demand.index_throughput_of("GSI1"), None);
        assert!(super::layout_with(&Provisioned::SCHEMA, &on_demand).is_ok());
    }

    #[test]
    fn index_key_attributes_are_every_index_key_and_nothing_else() {
        let schema = &App::SCHEMA;
        for name in [
            "GSI1PK",
            "GSI1SK",
            "RegionPK",
            "RegionPK2",
            "RegionSK",
            "LSI1SK",
        ] {
            assert!(schema.is_index_key_attribute(name), "{name}");
        }
        // The table's own keys are reserved attributes, not index keys of their own.
        for name in ["PK", "SK", "_type", "GSI1", "RegionSK:N", "gsi1pk", ""] {
            assert!(!schema.is_index_key_attribute(name), "{name}");
        }
    }
}
