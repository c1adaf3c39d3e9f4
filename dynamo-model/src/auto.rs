//! Values the crate sets on writes: generated ids and creation and update times.
//!
//! ```
//! use dynamo_model::{Entity, Table};
//! # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct Social;
//!
//! #[derive(Entity)]
//! #[dynamo(table = Social, pk = "USER#{user_id}", sk = "POST#{post_id}")]
//! struct Post {
//!     user_id: String,
//!     /// A ULID made when the post is created: unique, and in creation order as a key.
//!     #[dynamo(generate = "ulid")]
//!     post_id: ulid::Ulid,
//!     body: String,
//!     #[dynamo(created)]
//!     created_at: time::OffsetDateTime,
//!     #[dynamo(updated)]
//!     updated_at: time::OffsetDateTime,
//! }
//!
//! # async fn demo(db: dynamo_model::Db<Social>) -> Result<(), dynamo_model::Error> {
//! let mut post = Post {
//!     user_id: "ada".into(),
//!     post_id: ulid::Ulid::nil(), // made by `create`
//!     body: "hello".into(),
//!     created_at: time::OffsetDateTime::UNIX_EPOCH, // set by `create`
//!     updated_at: time::OffsetDateTime::UNIX_EPOCH,
//! };
//! db.create(&mut post).await?;
//! assert!(!post.post_id.is_nil());
//! assert_eq!(post.created_at, post.updated_at);
//! # Ok(()) }
//! ```
//!
//! **Generated ids** (`#[dynamo(generate = "ulid" | "uuid_v7" | "uuid_v4")]`): a field
//! left unset (the nil ULID or UUID, or an empty `String`) is given a new id by
//! [`Db::create`](crate::Db::create), once, before the request is built: a resent request
//! (a retry, a lost response settled by the write token) carries the same id. ULIDs and
//! UUIDv7 are time-ordered and keep that order as key parts (`ulid::Ulid`, feature `ulid`;
//! `uuid::Uuid`, feature `uuid`; or their text in a `String`); UUIDv4 is random. Any
//! other write of a value whose generated field is unset is refused
//! ([`ValidationReason::UnsetGeneratedId`](crate::ValidationReason::UnsetGeneratedId)):
//! it would store the nil id.
//!
//! **Times** (`#[dynamo(created)]`, `#[dynamo(updated)]`, on a [`Timestamp`] field, in
//! any key or attribute format the field declares): `create` sets both to one instant;
//! every put, transaction put and history write sets `updated` in the item it writes;
//! every update sets `updated` in the same request, and an
//! [`upsert`](dynamo_model::item::Update::upsert) that creates the item sets `created` with
//! `if_not_exists` (an item there keeps its own). The values `create` and updates return
//! are the values stored. A put keeps the creation time stored: its condition holds only
//! where none is stored or the stored one is the value's (one request in a
//! read-modify-write), and a put that fails on that alone is sent again with the stored
//! time; a put of a value whose creation time is unset (`None`, or the Unix epoch) on a
//! key with no item writes the time of the put, and a set one is written as given (an
//! import). A transaction's put cannot be sent again: it fails instead of changing the
//! stored time. A batch write takes no condition, so batch puts of an entity with a
//! `created` field are refused
//! ([`ValidationReason::NotSupportedInBatch`](crate::ValidationReason::NotSupportedInBatch)).
//! An update that sets or removes `created` itself is refused
//! ([`ValidationReason::CreationTime`](crate::ValidationReason::CreationTime)); neither time
//! may be in a key template, and entities with chunked fields take no `created` field
//! (compile errors). History revisions after the first keep the creation time their
//! value holds. Migrations change neither time.

use crate::Error;
use std::time::SystemTime;

/// A type a `#[dynamo(created)]` or `#[dynamo(updated)]` field may have: a point in time
/// made from the clock.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold a creation or update time",
    note = "`created` and `updated` apply to `time::OffsetDateTime` (feature `time`), `chrono::DateTime<Utc>` (feature `chrono`), `Epoch`, and `Option`s of them"
)]
pub trait Timestamp: Sized {
    /// The time `at`.
    fn at(at: SystemTime) -> Self;
    /// Whether the value holds no time yet (`None`, or the Unix epoch): a put of a value
    /// whose creation time is unset writes the time of the put.
    fn is_unset(&self) -> bool;
}

impl<T: Timestamp> Timestamp for Option<T> {
    fn at(at: SystemTime) -> Self {
        Some(T::at(at))
    }
    fn is_unset(&self) -> bool {
        self.as_ref().is_none_or(T::is_unset)
    }
}

/// Nanoseconds from the Unix epoch to `at`, negative before it.
fn epoch_nanos(at: SystemTime) -> i128 {
    match at.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(after) => i128::try_from(after.as_nanos()).unwrap_or(i128::MAX),
        Err(before) => -i128::try_from(before.duration().as_nanos()).unwrap_or(i128::MAX),
    }
}

impl Timestamp for crate::Epoch {
    fn at(at: SystemTime) -> Self {
        // Whole seconds, towards the epoch.
        let seconds = epoch_nanos(at) / 1_000_000_000;
        crate::Epoch(i64::try_from(seconds).unwrap_or(if seconds < 0 {
            i64::MIN
        } else {
            i64::MAX
        }))
    }
    fn is_unset(&self) -> bool {
        self.0 == 0
    }
}

#[cfg(feature = "time")]
impl Timestamp for time::OffsetDateTime {
    fn at(at: SystemTime) -> Self {
        time::OffsetDateTime::from(at)
    }
    fn is_unset(&self) -> bool {
        *self == time::OffsetDateTime::UNIX_EPOCH
    }
}

#[cfg(feature = "chrono")]
impl Timestamp for chrono::DateTime<chrono::Utc> {
    fn at(at: SystemTime) -> Self {
        // Whole seconds towards the past and the nanoseconds after them, so an instant
        // before 1970 keeps its fraction.
        let nanos = epoch_nanos(at);
        let (seconds, fraction) = (
            nanos.div_euclid(1_000_000_000),
            nanos.rem_euclid(1_000_000_000),
        );
        i64::try_from(seconds)
            .ok()
            .and_then(|s| chrono::DateTime::from_timestamp(s, fraction as u32))
            .unwrap_or(chrono::DateTime::<chrono::Utc>::MAX_UTC)
    }
    fn is_unset(&self) -> bool {
        *self == chrono::DateTime::<chrono::Utc>::UNIX_EPOCH
    }
}

/// The id kinds of `#[dynamo(generate = "..")]`.
pub mod kind {
    /// `generate = "ulid"`: a ULID, time-ordered (milliseconds, then 80 bits, random for
    /// the first id of a millisecond and counting up from it for the next ones).
    #[derive(Debug, Clone, Copy)]
    pub struct Ulid;
    /// `generate = "uuid_v7"`: a UUIDv7, time-ordered (milliseconds, then a counter and
    /// random bits).
    #[derive(Debug, Clone, Copy)]
    pub struct UuidV7;
    /// `generate = "uuid_v4"`: a random UUIDv4.
    #[derive(Debug, Clone, Copy)]
    pub struct UuidV4;
}

/// A field type a `#[dynamo(generate = "..")]` of kind `K` fills.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold a generated id of this kind",
    note = "`generate = \"ulid\"` fills a `ulid::Ulid` (feature `ulid`) or a `String`; `\"uuid_v7\"` and `\"uuid_v4\"` a `uuid::Uuid` (feature `uuid`) or a `String`"
)]
pub trait GeneratedId<K> {
    /// Whether the value is unset (nil, or empty), so `create` generates one.
    fn is_unset(&self) -> bool;
    /// A new id.
    fn generate() -> Self;
}

/// A new ULID, after every ULID this process made before: one generator for the
/// process, so two ids made in one millisecond still sort in the order they were made.
#[cfg(feature = "ulid")]
fn next_ulid() -> ulid::Ulid {
    static GENERATOR: std::sync::Mutex<ulid::Generator> =
        std::sync::Mutex::new(ulid::Generator::new());
    let mut generator = GENERATOR
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // The random part overflows once in 2^80 ids of one millisecond: an unordered id then.
    generator
        .generate()
        .unwrap_or_else(|_| ulid::Ulid::generate())
}

/// Each id type with each kind it holds: how it says it is unset and how a new one is
/// made. A `String` holds the id's canonical text: a ULID's 26 uppercase Crockford
/// characters, a UUID's hyphenated lowercase form (both sort as the ids do).
macro_rules! ids {
    ($($t:ty: $kind:ident, $feature:literal, $unset:ident, $make:expr;)*) => {$(
        #[cfg(feature = $feature)]
        impl GeneratedId<kind::$kind> for $t {
            fn is_unset(&self) -> bool {
                self.$unset()
            }
            fn generate() -> Self {
                $make
            }
        }
    )*};
}

ids! {
    ulid::Ulid: Ulid, "ulid", is_nil, next_ulid();
    uuid::Uuid: UuidV7, "uuid", is_nil, uuid::Uuid::now_v7();
    uuid::Uuid: UuidV4, "uuid", is_nil, uuid::Uuid::new_v4();
    String: Ulid, "ulid", is_empty, next_ulid().to_string();
    String: UuidV7, "uuid", is_empty, uuid::Uuid::now_v7().to_string();
    String: UuidV4, "uuid", is_empty, uuid::Uuid::new_v4().to_string();
}

/// `at` cut to a multiple of `resolution` nanoseconds since the epoch (the step of the
/// field's format), towards the past.
#[doc(hidden)]
pub fn cut(at: SystemTime, resolution: u64) -> SystemTime {
    let nanos = epoch_nanos(at);
    let cut = nanos - nanos.rem_euclid(i128::from(resolution.max(1)));
    let whole =
        std::time::Duration::from_nanos(u64::try_from(cut.unsigned_abs()).unwrap_or(u64::MAX));
    if cut < 0 {
        SystemTime::UNIX_EPOCH - whole
    } else {
        SystemTime::UNIX_EPOCH + whole
    }
}

/// The `created` and `updated` attributes of an entity (`None`: it has no such field).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Stamps {
    /// The `#[dynamo(created)]` field's attribute.
    pub created: Option<&'static str>,
    /// The `#[dynamo(updated)]` field's attribute.
    pub updated: Option<&'static str>,
}

/// Field `field` of `entity`, generated on create, is unset in a write that does not
/// create.
pub(crate) fn unset_id(entity: &'static str, field: &'static str) -> Error {
    let message = format!(
        "field `{field}` is generated when the item is created, and is unset: create the item with `db.create(value)`, or give the field a value"
    );
    Error::invalid(entity, crate::ValidationReason::UnsetGeneratedId, message)
}

#[cfg(test)]
mod tests;
