//! # dynamo-model
//!
//! A typed single-table ORM for Amazon DynamoDB.
//!
//! One table holds many entity types. You declare the table once with
//! `#[derive(Table)]` (key attribute names, indexes, TTL), bind each domain struct to it
//! with `#[derive(Entity)]` and key templates such as `pk = "USER#{user_id}"`,
//! `sk = "ORDER#{created_at}#{order_id}"`, and the crate renders keys, writes an
//! entity-type attribute on every item, converts structs to items and back, and builds
//! every expression with placeholders.
//!
//! ```
//! use dynamo_model::{Entity, Table};
//!
//! #[derive(Table)]
//! #[dynamo(pk = "PK", sk = "SK")]
//! struct App;
//!
//! #[derive(Entity, Debug, PartialEq)]
//! #[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{placed_at}#{order_id}")]
//! struct Order {
//!     user_id: String,
//!     order_id: String,
//!     placed_at: u64,
//!     total_cents: u64,
//! }
//!
//! let order = Order { user_id: "u-1".into(), order_id: "o-7".into(), placed_at: 42, total_cents: 1999 };
//! // Typed (a Key<Order>), its fields named, in any order: none can be swapped or missed.
//! let key = Order::key(OrderKey { user_id: "u-1", placed_at: 42, order_id: "o-7" });
//! assert_eq!(key.raw().unwrap().pk, "USER#u-1");
//! assert_eq!(key.raw().unwrap().sk.as_deref(), Some("ORDER#00000000000000000042#o-7"));
//! assert_eq!(key.raw().unwrap(), order.primary_key().raw().unwrap());
//!
//! let item = order.to_item().unwrap();
//! assert_eq!(Order::from_item(item).unwrap(), order);
//! ```
//!
//! Operations go through a [`Db`], a client bound to one table name
//! ([`Db::from_env`] in production, feature `aws-config`): [`Db::get`], [`Db::put`],
//! [`Db::delete`], [`Db::update`], queries, scans, batches and transactions. Each is a
//! builder that owns a clone of the `Db` (so it and its future are `'static`), ends in
//! `.send().await` (or just `.await`), shows the SDK input it would send with `params()`
//! and takes `customize(..)` hooks for the SDK request. Every failure is an [`Error`]
//! you can match on.
//!
//! What application code names is in the [`prelude`]: `use dynamo_model::prelude::*;`
//! brings the derives and their traits, [`Db`], [`Key`], [`Condition`], [`Page`],
//! [`Cursor`], [`Error`] and the builder each `Db` method returns, for signatures that
//! name one. The builders are defined by what they do: operations on one item in
//! [`item`] ([`Get`](item::Get), [`Put`](item::Put), [`Update`](item::Update),
//! [`Delete`](item::Delete)), reads of many items in [`read`] ([`Query`](read::Query),
//! [`ScatterQuery`](read::ScatterQuery), [`Scan`](read::Scan)), then [`batch`] and
//! [`transact`].
//!
//! Features: `time`, `chrono`, `uuid` and `ulid` add key encodings and codecs for
//! `time::OffsetDateTime`, `time::Date` and `time::PrimitiveDateTime`, for
//! `chrono::NaiveDate`, `chrono::NaiveDateTime` and `chrono::DateTime<Utc>`, for
//! `uuid::Uuid` and for `ulid::Ulid`; `aws-config` adds [`Db::from_env`]; `local` adds [`local`], which
//! finds or starts DynamoDB Local and creates throw-away tables for tests; `double` adds
//! [`double`], an in-process stand-in for DynamoDB for unit tests (scripted answers,
//! recorded requests, no server); `lambda` and
//! `streams` read DynamoDB Streams records as AWS Lambda delivers them and as the
//! Streams API returns them ([`stream`]); `tracing` (the only default feature) gives
//! every item operation, read, batch and transaction a span with OpenTelemetry's field
//! names ([`trace`]: never an attribute
//! value, keys only with [`Db::trace_keys`]); `rust_decimal`, `bytes` and `serde_json`
//! add those types as attributes; `zstd`, `gzip` compressed fields; `cache` a
//! read-through cache of hot items; `export` schema exports (CloudFormation, AWS CDK,
//! NoSQL Workbench, Markdown). [`migrate`] brings stored items along when the model
//! changes.
//!
//! What reads cost and where the load goes, from the client: `explain()` on every read
//! builder ([`insight::Explain`]), [`capacity::Budget`] to pin an access pattern's cost in
//! a test, and [`insight::Insight`] ([`Db::observed`]) to find hot partitions by entity
//! type and key template as they happen.
//!
//! The [`guide`] walks through single-table design with the crate, one chapter per
//! pattern (one table for many types, key templates, overloaded and sparse indexes,
//! adjacency lists, revision history, large items, write sharding, bulk loads, batches
//! and transactions, TTL, period tables, capacity, scans, projections, caching), then
//! adopting an existing table, testing with DynamoDB Local or the test double and going to
//! production.

#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate self as dynamo_model;

mod attribute;
pub mod auto;
pub mod batch;
#[cfg(feature = "cache")]
pub mod cache;
mod call;
pub mod capacity;
pub mod chunk;
pub mod codec;
pub mod collection;
pub mod compress;
pub mod cursor;
mod db;
#[cfg(feature = "double")]
pub mod double;
pub mod encrypt;
pub mod entity;
pub mod error;
#[cfg(feature = "export")]
pub mod export;
pub mod expr;
mod extra_types;
#[doc(hidden)]
pub mod generated;
pub mod guide;
pub mod history;
pub mod insight;
pub mod item;
mod item_map;
pub mod key;
pub mod keyspace;
#[cfg(feature = "local")]
pub mod local;
pub mod migrate;
#[cfg(feature = "time")]
pub mod period;
pub mod prelude;
pub mod read;
pub mod registry;
mod request;
pub mod retry;
pub mod schema;
mod sealed;
mod setters;
mod size;
pub mod stored_format;
pub mod stream;
mod stream_names;
mod text;
mod token;
pub mod trace;
pub mod transact;
pub mod unique;
pub mod validate;

pub use batch::{BatchGetOutput, BatchWriteOutput, LoadProgress, WriteOp};
pub use chunk::Chunked;
pub use codec::{
    AttrValue, Binary, Epoch, MapAttribute, Numeric, Operand, Serde, SetAttribute, SetElement,
    TtlValue, VersionValue,
};
pub use collection::{Collection, Target};
pub use cursor::Cursor;
pub use db::Db;
pub use entity::Entity;
pub use entity::Key;
pub use error::{DecodeError, DecodeErrorKind, Error, ValidationReason};
pub use expr::CompressedPath;
pub use expr::EncryptedPath;
pub use expr::{AttrPath, Condition, KeyPath, NestedPath, Path, SettablePath, UpdatablePath};
pub use expr::{AttributeType, Comparand, Members};
pub use item_map::Item;
pub use key::{KeyPart, RawKey};
pub use keyspace::chain::{AttributeField, SortKeyField};
pub use keyspace::sharded::ShardedPartition;
#[doc(hidden)]
pub use keyspace::sort::SortKeyRange;
pub use keyspace::sort::{
    AttributeCondition, InIndex, KeySpace, MultiPartition, Partition, Primary, SortKeyCondition,
};
#[doc(hidden)]
pub use read::SortCondition;
pub use request::BoxFuture;
pub use request::page::{Page, UnknownEntity};
pub use retry::RetryPolicy;
pub use schema::{Table, TableSchema};
pub use size::{MAX_ITEM_BYTES, item_size, local_index_bytes, value_size};

/// `#[derive(Table)]`: declares a table's key attributes, indexes and TTL attribute.
///
/// ```
/// use dynamo_model::Table;
///
/// #[derive(Table)]
/// #[dynamo(
///     pk = "PK",
///     sk = "SK",
///     gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
///     gsi(name = "ByEmail", pk = "email", projection = keys_only),
///     lsi(name = "LSI1", sk = "LSI1SK", projection(include = ["total"])),
///     ttl = "expires_at",
///     entity_type = "_type",
///     write_token = "_wt",
/// )]
/// struct App;
/// ```
///
/// Options: `pk` (required) and `sk` name the key attributes; `gsi(name, pk, sk,
/// projection, capacity)` and `lsi(name, sk, projection)` declare indexes (a name is any
/// name DynamoDB accepts, `[a-zA-Z0-9_.-]{3,255}`; `pk`/`sk` an attribute name, `"name:N"`
/// or `"name:B"` for a number or binary key, or a list of up to four for a multi-attribute
/// key; projection `all` (default), `keys_only`, or `projection(include = [...])`;
/// `capacity(read = N, write = N)` a GSI's provisioned units); `billing = "on_demand"`
/// (default) or `"provisioned"` with `capacity(read = N, write = N)` for the table;
/// `stream = "NEW_AND_OLD_IMAGES"` (or `"KEYS_ONLY"`, `"NEW_IMAGE"`, `"OLD_IMAGE"`)
/// enables DynamoDB Streams with that view; `identify = "keys"` identifies every entity of
/// the table by its keys; `ttl` names the TTL attribute;
/// `entity_type` names the entity-type attribute (default `_type`); `write_token` names the
/// attribute in which single-item puts and updates store their write token (default `_wt`,
/// see [`TableSchema::write_token`]); `write_type = false` (with `identify = "keys"`) and
/// `write_token = false` store neither in the items the crate writes (see
/// [`TableSchema::writes_entity_type`] and [`TableSchema::writes_token`] for what each
/// costs); `delimiter = ".."` is the delimiter between the
/// components of the keys its entities render (`#` by default; `.`, `_`, `|` or `:`, see
/// [`key::Delimiter`]), unless an entity or an index template declares its own.
pub use dynamo_model_derive::Table;

/// `#[derive(Entity)]`: binds a struct to a table with key templates.
///
/// ```
/// # use dynamo_model::{Attribute, Entity, Table};
/// # #[derive(Table)]
/// # #[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
/// # struct App;
/// #[derive(Attribute, Debug, PartialEq)]
/// struct Preferences {
///     theme: String,
///     languages: Vec<String>,
/// }
///
/// #[derive(Entity, Debug, PartialEq)]
/// #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE",
///          index(GSI1, pk = "EMAIL#{email}", sk = "USER"), entity_type = "User",
///          rename_all = "camelCase")]
/// struct User {
///     id: String,
///     email: Option<String>,      // sparse: no GSI1 attributes while `None`
///     display_name: String,       // stored as `displayName`
///     #[dynamo(rename = "prefs", default)]
///     preferences: Option<Preferences>, // a map attribute, through #[derive(Attribute)]
///     #[dynamo(serde)]
///     history: Vec<(String, u8)>, // a foreign type: stored through serde_dynamo
///     #[dynamo(skip)]
///     cached: usize,              // not stored; `Default::default()` when read
/// }
/// ```
///
/// No serde derive is needed: the codec is generated. Container options:
/// - `table` (the `#[derive(Table)]` type), `pk` and `sk` templates (literal text and
///   `{field}` placeholders; a placeholder is followed by the end of the template or by
///   the delimiter, `#` unless declared otherwise). A placeholder can compute its text
///   from the field (see [`key::computed`]): `{field:shard(N)}` (a stable hash of the
///   field, `0..N`), `{field:random(N)}` (a `u16` field the writer fills at random),
///   `{field:date}`, `{field:hour}`, `{field:month}` (UTC buckets of a time value);
///   shards in partition keys only;
/// - `delimiter = ".."`: the delimiter of the entity's templates (`#`, `.`, `_`, `|` or
///   `:`; default: the table's), e.g. `delimiter = ".", pk = "{day}.{shard}"`; see
///   [`key::Delimiter`] for what each escapes;
/// - `index(NAME, pk = .., sk = ..)`: templates onto a declared index (or `pk = [a, b]`:
///   a multi-attribute key of the entity's own fields). `NAME` is the index's name as the
///   table declares it, exactly: an identifier (`GSI1`) or a string for any other name
///   DynamoDB accepts (`index("GSI-1", ..)`); a name the table does not declare is a
///   compile error at the name. The index's templates may have their own
///   `delimiter = ".."` if it needs one. An index key attribute may be the table's own
///   key attribute: `index(ByAgent, pk = [agent])` on a GSI whose sort key is the table's
///   sort key (sorted by the entity's `sk` template: `Type::{index}_sk()` takes its
///   conditions), or a template that repeats the entity's own `sk` template onto it; the
///   primary key writes that attribute, so the index never writes or removes it;
/// - `entity_type` (default: the struct name);
/// - `identify = "keys"`: items without the entity-type attribute (written by another
///   program) are this entity's when its key templates render their keys and the templates
///   of no other entity identified by its keys do. Gets, queries, scans and collections
///   read them; writes keep working on them (their conditions accept the item when its
///   type is this entity's or absent). Items that have the attribute must carry this
///   entity's type, so a table can mix both while a migration adds it.
///   Queries and scans then cannot filter such items by type on the server: items of the
///   partition without the attribute are read and the ones no template of the entity
///   renders are dropped on the client (they still cost read capacity and count towards a
///   request's `Limit`). A key that the templates of two such entities both render is
///   refused ([`KeyError::AmbiguousEntity`](key::KeyError::AmbiguousEntity)), and an
///   untyped item under such a key does not decode
///   ([`DecodeErrorKind::AmbiguousEntity`]). Templates without any literal text cannot
///   identify anything and are a compile error;
/// - `write_type = false` (with `identify = "keys"`) and `write_token = false`: the
///   entity's writes store no entity-type attribute, or no write token, so the items the
///   crate writes hold exactly the design's attributes; the cost of each is on
///   [`TableSchema::writes_entity_type`] and [`TableSchema::writes_token`] (without a
///   token, a lost response of a put or update is [`Error::OutcomeUnknown`] instead of
///   settled). Either can also be set for every entity, on the table;
/// - `store_key_fields = false`: the fields the primary key holds as they are (`{field}`
///   in `pk`, or in `sk` of an entity that is not versioned) are read from the key
///   attributes and not written as attributes of their own (as another program's items
///   have them). Keep the default (`true`) when a filter, a multi-attribute index or
///   another program reads them as plain attributes. A key field is read from the key
///   whenever its attribute is missing, with either setting;
/// - `key_struct = Name`: the name of the generated key struct of a key with two or more
///   fields (default `{Type}Key`), when that name is taken in the module;
/// - `rename_all = ".."`: attribute names from field names by serde's rules (`lowercase`,
///   `UPPERCASE`, `PascalCase`, `camelCase`, `snake_case`, `SCREAMING_SNAKE_CASE`,
///   `kebab-case`, `SCREAMING-KEBAB-CASE`);
/// - `default` or `default = "path"`: a missing attribute takes its field's value in
///   `Self::default()` (or in what the function returns);
/// - `history` or `history(..)`: the entity keeps every revision next to its latest copy
///   (needs a `#[dynamo(version)] u64` field and a constant `sk` template; see
///   [`history`] and the [guide](guide::p10_revision_history)). Options: `prefix = "v"`,
///   `width = 20` (digits of the revision number; `0`: unpadded), `separator = "#"`,
///   `time_attribute = "_vt"` (when each revision was written, read back as
///   [`Revision::revised_at`](history::Revision::revised_at); `time_attribute = false`
///   records no time), `revisions_in(GSI1,
///   "GSI-2")` (indexes whose keys revisions keep), `counter_on_latest` (the version
///   attribute on the latest copy only), `numeric_order` (an unpadded history read in
///   revision order); or a published layout by name: `layout = "aws"` is AWS's
///   number-based layout (`v0` the latest copy, `v1`, `v2`, …; `width = 0`,
///   `separator = ""`, `counter_on_latest`, `numeric_order`, `time_attribute = false`
///   unless given, and `sk = ""` unless given).
/// - `validate = path`: a function over the whole value (`fn(&Self) -> Result<(), M>`,
///   `M: Display`) checked before every write of the whole value (not updates); see
///   [`validate`].
///
/// Field options:
/// - `rename = ".."`: the attribute name (1 byte or more; not the table's key,
///   entity-type or write-token attribute, and not another field's);
/// - `default` or `default = "path"`: the value when the attribute is missing
///   (`Option` and sets are `None`/empty without it);
/// - `skip`: not stored, `Default::default()` (or the `default`) when read;
/// - `skip_serializing_if = "path"`: not written when the function says so;
/// - `serde`: stored through serde_dynamo (for a type without [`AttrValue`]; prefer
///   [`derive(Attribute)`](macro@Attribute) for your own types);
/// - `version`: the optimistic-locking counter (a `u64`);
/// - `ttl`: the expiry, stored as epoch seconds under the table's TTL attribute;
/// - `key_format = ".."`: how the field's value is written, to match existing data: in
///   key templates, as its own attribute and as a multi-attribute index key, so any
///   attribute, key or not, can hold another program's text byte for byte (`"unpadded"`,
///   `"padded(N)"`, `"rfc3339"`, `"rfc3339(3)"`, `"rfc3339(0, no_z)"`, `"epoch_seconds"`,
///   `"epoch_millis"`, `"verbatim"`; or, without quotes, a type of your own implementing
///   [`KeyFormat`](key::format::KeyFormat) for the field's type: `key_format = Hex8`);
///   decoding accepts exactly that text. See [`key::format`] for the types each applies
///   to and the order guarantees each gives up. A template that computes a shard or a
///   time bucket from the field uses the default encoding, so a format there is refused;
/// - `key_only`: a field read from a key that holds it as it is (`{field}` in `pk`, in
///   `sk` of an entity without history, or in an index key template) and not stored as an
///   attribute of its own (as `store_key_fields = false` does for the primary key's
///   fields);
/// - `compress = "zstd"` / `"gzip"`, or `compress(codec = "..", level = N, threshold = N,
///   max_size = N)` (features `zstd`, `gzip`): a `String`, `Vec<u8>`, [`Binary`] or
///   `serde` field stored as a binary attribute whose first byte names the codec; values
///   shorter than `threshold` bytes are stored uncompressed, decompression is bounded by
///   `max_size`; see [`compress`];
/// - `chunked` or `chunked(inline = N, chunk_size = N)`: a large `String` or `Vec<u8>`
///   field stored inline up to `inline` bytes and beyond that in chunk items of
///   `chunk_size` bytes next to the item, written and read with it; see [`chunk`];
/// - `alias = ".."` (repeatable; also `#[serde(alias)]`): an older attribute name the
///   field is read from when its own attribute is missing. Writes use the current name,
///   so rewriting an item (a migration) moves it to the new name; an update that sets,
///   clears or increments the field removes the older names (an increment starts from
///   the value stored under them), and one that would need their value otherwise
///   (`set_if_absent`, list appends, set operations, nested paths) is refused
///   ([`ValidationReason::RenamedField`]). Conditions and filters name the current
///   attribute only: a row still holding the value under an older name does not match
///   them until it is rewritten;
/// - `validate(..)`: rules checked before every write that sets the field, a broken one
///   refused as [`Error::Rule`] with nothing written: `length(min = N, max = N)`,
///   `range(min = v, max = v)`, `pattern = ".."`, `one_of(a, b, ..)`, `with = path`
///   (`fn(&T) -> Result<(), M>`); a rule the field's type cannot meet is a compile error.
///   See [`validate`];
/// - `generate = "ulid"` / `"uuid_v7"` / `"uuid_v4"`: an id [`Db::create`] makes when the
///   field is unset (nil, or an empty `String`), once, before the request (a resent
///   request keeps it); ULIDs and UUIDv7 sort in creation order as key parts. See
///   [`auto`];
/// - `created`, `updated`: times the crate sets ([`auto::Timestamp`] fields, in the field's
///   format): `create` sets both, every put and update sets `updated`, an upsert that
///   creates the item sets `created` (`if_not_exists`). See [`auto`].
///
/// The same options in `#[serde(..)]` (`rename`, `rename_all`, `default`, `skip`,
/// `skip_serializing_if`) are honoured too, so a serde-annotated struct keeps its
/// attribute names; when `#[dynamo(..)]` and `#[serde(..)]` both give an option they must
/// agree, or compilation fails naming both.
///
/// Generated, next to the entity (so these names must be free in its module):
/// - `impl Entity`;
/// - `Type::key(..)`, the key constructor. A key of one field takes its value
///   (`User::key("u-1")`, `Config::key()` for a key without fields). A key of two or more
///   fields (pk and sk templates together) takes a generated struct `{Type}Key` with one
///   field per key field, named and in any order, so two fields of one type cannot be
///   swapped and a missing or unknown field is a compile error:
///   `Order::key(OrderKey { user_id: "u-1", placed_at: 42, order_id: "o-7" })`. Each field
///   takes what [`KeyArg`](key::KeyArg) accepts (`T`, `&T`, `&str` for a `String`), and
///   `OrderKey { .. }.into()` is a [`Key<Order>`](Key) too;
/// - `Type::partition(..)` and `Type::{index}_partition(..)` (`GSI1` → `gsi1_partition`,
///   `GSI-1` → `gsi_1_partition`; the rule, with a table of examples, is in the guide's
///   [index chapter](guide::p05_overloaded_indexes)),
///   the partitions to [query](Db::query), by the same rule: one field by value, two or
///   more in a struct `{Type}Partition` or `{Type}{Index}Partition` (`{Index}` in
///   PascalCase: `GSI1` → `Gsi1`, `by-region` → `ByRegion`). Of a template with a shard,
///   they take the fields but the shard's source and return a [`ShardedPartition`]: every
///   shard's partition;
/// - `Type::random_{field}()` for each `{field:random(N)}`: a shard picked at random;
/// - `Type::sk()` and `Type::{index}_sk()`: typed sort-key conditions (`{Type}Sk`,
///   `{Type}{Index}Sk`), one accessor per template field in template order, each a
///   [`SortKeyField`] to fix (`.eq(v)`) or to end in a range on:
///   `Order::sk().placed_at().eq(5).order_id().lt("o-9")`,
///   `Order::sk().placed_at().between(a, b)`;
/// - `Type::fields()`: a `{Type}Fields` with a typed [`Path`] per field for conditions and
///   updates, whose values are what [`Operand`] accepts (an integer literal takes the
///   field's type);
/// - `impl InIndex<{Table}{Index}>` for each index the entity has a template for, so the
///   index can be scanned ([`Scan::index`](read::Scan::index)).
pub use dynamo_model_derive::Entity;

/// `#[derive(Attribute)]`: stores your own struct or enum as one attribute value
/// (implements [`AttrValue`]), so an entity field of that type needs no
/// `#[dynamo(serde)]`.
///
/// - a struct with named fields is a map (`M`) of its fields, each converted with
///   [`AttrValue`]; `None` fields are not written, and an explicit `NULL` reads as `None`;
/// - a newtype `struct Sku(String);` is stored as its field;
/// - an enum is stored as serde stores it by default (externally tagged): a unit variant
///   as its name (`S`), a variant with data as a map of its name to its value (a newtype
///   variant's value, a list for a tuple variant, a map for a struct variant).
///
/// These are serde_dynamo's forms too, so data written before through
/// `#[dynamo(serde)]` reads back unchanged (only a `None` field is left out rather than
/// written as `NULL`; either form reads).
///
/// ```
/// use dynamo_model::{Attribute, AttrValue};
/// use dynamo_model::aws_sdk_dynamodb::types::AttributeValue as Av;
///
/// #[derive(Attribute, Debug, PartialEq)]
/// #[dynamo(rename_all = "camelCase")]
/// struct Address {
///     street_line: String,       // stored as `streetLine`
///     #[dynamo(rename = "zip")]
///     postal_code: Option<String>,
/// }
///
/// #[derive(Attribute, Debug, PartialEq)]
/// enum Status {
///     Pending,                   // "Pending"
///     Shipped { carrier: String }, // {"Shipped": {"carrier": ..}}
///     #[dynamo(rename = "gone")]
///     Cancelled(String),         // {"gone": ..}
/// }
///
/// let address = Address { street_line: "1 Main St".into(), postal_code: None };
/// let Av::M(map) = address.to_attr().unwrap() else { unreachable!() };
/// assert_eq!(map["streetLine"], Av::S("1 Main St".into()));
/// assert!(!map.contains_key("zip")); // None is not written
///
/// assert_eq!(Status::Pending.to_attr().unwrap(), Av::S("Pending".into()));
/// let shipped = Status::Shipped { carrier: "DHL".into() };
/// assert_eq!(Status::from_attr(shipped.to_attr().unwrap()).unwrap(), shipped);
///
/// // A wrong shape is an error naming where it is, never a panic.
/// let err = Status::from_attr(Av::S("Lost".into())).unwrap_err();
/// assert_eq!(err.to_string(), "unknown variant `Lost`, expected one of: Pending, Shipped, gone");
/// ```
///
/// Options, in `#[dynamo(..)]` (or the same in `#[serde(..)]`, honoured as for
/// [`derive(Entity)`](macro@Entity)): on the container `rename_all` (field names of a
/// struct, variant names of an enum), `rename_all_fields` (the fields of every struct
/// variant) and `default`; on a variant `rename` and `rename_all` (its fields); on a field
/// `rename`, `default`, `skip`, `skip_serializing_if` and `serde` (a foreign type, through
/// serde_dynamo). Serde options that change the representation (`tag`, `untagged`,
/// `transparent`, ...) are refused rather than silently not followed.
///
/// A generic struct gets `T: AttrValue` bounds on its type parameters:
///
/// ```
/// use dynamo_model::{Attribute, AttrValue};
///
/// #[derive(Attribute, Debug, PartialEq)]
/// struct Tagged<T> {
///     tag: String,
///     value: T,
/// }
///
/// let v = Tagged { tag: "n".to_string(), value: 3u8 };
/// assert_eq!(Tagged::<u8>::from_attr(v.to_attr().unwrap()).unwrap(), v);
/// ```
pub use dynamo_model_derive::Attribute;

/// `#[derive(Collection)]`: an enum over entity types that share a partition, so one
/// query returns all of them, dispatched on the entity-type attribute. See [`Collection`].
pub use dynamo_model_derive::Collection;

#[doc(hidden)]
pub mod __private {
    pub use crate::attribute::*;
    pub use crate::codec::EncodeError;
    pub use crate::collection::__private::*;
    pub use crate::collection::{Decoded, Includes};
    pub use crate::cursor::codec as cursor_codec;
    pub use crate::entity::__private::*;
    pub use crate::entity::compressed::*;
    pub use crate::entity::{EntityInternals, IndexChanges, IndexKeyAttributes, Touch};
    pub use crate::expr::{KeyField, Mutable};
    pub use crate::key::computed::__private::*;
    pub use crate::key::computed::{
        BucketArg, BucketTime, DayBucket, HourBucket, MonthBucket, OptionalBucketTime, ShardValue,
        random_shard,
    };
    pub use crate::key::render::{
        Part, RenderPart, Shard, arg, bucket, bucket_of, field, formatted_present, present,
        present_bucket, random,
    };
    pub use crate::key::template::KeyTemplate;
    pub use crate::key::template::{
        ComputedPart, IndexTemplate, Placeholder as TemplatePlaceholder, TemplateField,
        encode_touch, encode_touch_formatted, reencode,
    };
    pub use crate::keyspace::chain::{AttributeChain, SortKeyChain};
    pub use crate::keyspace::sort::{
        AttributeOp, AttributePrefix, Compare, SortKeyOp, SortKeyPrefix, attribute_op,
        attribute_value, encode_arg,
    };
    pub use crate::keyspace::sort::{DeclaresIndex, IndexName, IndexNameEnd, TableIndex};
    pub use crate::read::IntoSortKey;
    pub use crate::registry::{
        EntityRegistration, HasType, IndexTemplates, NoType, RegisteredKey, TypeProbe,
        accepts_bucket, accepts_shard,
    };
    pub use crate::schema::Sealed;
    pub use crate::sealed::Versioned as VersionedSeal;
    pub use inventory;

    /// What a derive's `const` block imports at once (`use ...::names::*`): `core`'s
    /// `Some`, `None` and `Ok`, which a user's items of those names cannot shadow there,
    /// and the traits of the registration's type probes.
    pub mod names {
        pub use crate::registry::{HasType as _, NoType as _};
        pub use ::core::option::Option::{None, Some};
        pub use ::core::result::Result::Ok;
    }
}

/// Re-export of the SDK crate this crate is built on, so users can name its types
/// without a version mismatch.
pub use aws_sdk_dynamodb;

/// The README's example, compiled as a doctest so it cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
