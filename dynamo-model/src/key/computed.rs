//! Computed key parts: template placeholders whose text is derived from a field instead of
//! being the field's own encoding.
//!
//! | placeholder | renders | from a field of type |
//! |---|---|---|
//! | `{order_id:shard(16)}` | the shard `00` … `15` of the field's value ([`shard_of`]) | any [`KeyPart`] |
//! | `{slot:random(16)}` | the field's value `00` … `15`, a shard the writer picked at random ([`random_shard`]) | `u16` ([`ShardValue`]) |
//! | `{created_at:date}` | the UTC day `YYYY-MM-DD` ([`DayBucket`]) | a [`BucketTime`] (`time::OffsetDateTime`) |
//! | `{created_at:hour}` | the UTC hour `YYYY-MM-DDTHH` ([`HourBucket`]) | a [`BucketTime`] |
//! | `{created_at:month}` | the UTC month `YYYY-MM` ([`MonthBucket`]) | a [`BucketTime`] |
//!
//! ```text
//! pk = "ORDERS#{created_at:date}#{order_id:shard(16)}", sk = "{created_at}#{order_id}"
//! created_at = 2014-07-09T10:11:12Z, order_id = "o-1"
//!   -> PK = ORDERS#2014-07-09#10
//!      SK = 2014-07-09T10:11:12.000000000Z#o-1
//! ```
//!
//! A computed part is never stored on its own: the key constructor (`Order::key(..)`)
//! takes the source fields, and every put, get, update and delete renders the part from
//! them, so a user never stores or passes a shard or a bucket. Decoding an item renders
//! its keys again from the decoded fields and refuses the item when they differ from the
//! stored keys ([`Entity::from_item`](crate::Entity::from_item)), so a forged or stale
//! shard suffix never decodes.
//!
//! # The shard function (stable: part of the stored format)
//!
//! `{field:shard(N)}` renders `crc32(enc) % N`, zero-padded to the number of decimal digits
//! of `N - 1` (`shard(16)`: `00` … `15`; `shard(10)`: `0` … `9`; `shard(200)`: `000` …
//! `199`), so the shards of a partition sort in shard order. Here
//!
//! - `enc` is the UTF-8 bytes of the field's key-part encoding, [`KeyPart::encode_key`]
//!   (what a plain `{field}` placeholder renders: `o-1` for the string `o-1`, `a%23b`
//!   for `a#b`, `00000000000000000042` for the `u64` 42);
//! - `crc32` is the CRC-32 of ISO-HDLC / IEEE 802.3, the one of zlib, gzip and PNG
//!   (polynomial `0x04C11DB7`, reflected, initial value and final XOR `0xFFFFFFFF`;
//!   `crc32("123456789") = 0xCBF43926`), as an unsigned 32-bit integer;
//! - `N` is the template's shard count, 1 to [`MAX_SHARDS`].
//!
//! CRC-32 is in every language's standard library (`zlib.crc32` in Python,
//! `java.util.zip.CRC32`, Go's `hash/crc32`), so other programs can compute the shard of a
//! key; and it is fixed by standard, unlike `std`'s `DefaultHasher`, which may change
//! between Rust releases. Its low bits depend on every input bit, so `% N` spreads keys
//! for power-of-two counts too (the low bits of FNV-1a, by contrast, depend only on the low
//! bits of each input byte). The unit tests pin vectors of this function, so it cannot
//! change silently: changing it would move every stored item to another shard.
//!
//! # Random shards
//!
//! `{slot:random(N)}` is for items written once and read only by querying every shard:
//! their shard carries no meaning, so the writer picks one at random
//! (`Event { slot: Event::random_slot(), .. }`, from [`random_shard`]) and the reads fan
//! out over all `N`. The shard cannot be computed from the other fields, so it is an
//! ordinary `u16` field of the entity, stored with the item: a decoded item knows its key
//! (`primary_key()`, updates and deletes of it work), and a point get or delete takes the
//! shard explicitly in the key constructor. A shard is meant to spread writes over
//! partitions, so `shard` and `random` belong in partition-key templates only (`pk`, or an
//! index's `pk`): in a sort key the derive refuses them.
//!
//! # Time buckets
//!
//! `date`, `hour` and `month` render the UTC calendar day, hour or month of a time value in
//! fixed width, so buckets sort chronologically; years outside 0000–9999 are refused
//! ([`KeyError::OutOfRange`]), as for timestamps. The source type implements
//! [`BucketTime`] (`time::OffsetDateTime` with feature `time`; implement it for another
//! time type). Queries name a bucket with its type ([`DayBucket`], [`HourBucket`],
//! [`MonthBucket`]) or with any time value inside it.

use super::KeyPart;
use crate::error::KeyError;
use crate::text::push_padded_u64;
use std::fmt;

/// The largest shard count of a template: `shard(N)` and `random(N)` take 1 to 1000.
///
/// A read of a sharded partition queries every shard, so `N` is the fan-out of every
/// read; 1000 partitions already take a million writes per second at DynamoDB's
/// per-partition limit of 1,000 write units, far beyond any single hot key.
pub const MAX_SHARDS: u16 = 1000;

/// The CRC-32 (ISO-HDLC / IEEE 802.3, as zlib's `crc32`) of a key-part encoding: the hash
/// of `{field:shard(N)}` (see the [module documentation](self)).
///
/// ```
/// assert_eq!(dynamo_model::key::computed::shard_hash("123456789"), 0xCBF4_3926);
/// ```
pub fn shard_hash(encoded: &str) -> u32 {
    crc32fast::hash(encoded.as_bytes())
}

/// The shard `0..count` of a value whose key-part encoding is `encoded`:
/// `shard_hash(encoded) % count`. A `count` of 0 is treated as 1.
///
/// ```
/// use dynamo_model::key::computed::shard_of;
/// assert_eq!(shard_of("o-1", 16), 10);
/// assert_eq!(shard_of("123456789", 10), 2); // 0xCBF43926 = 3421780262
/// ```
pub fn shard_of(encoded: &str, count: u16) -> u16 {
    // The remainder is below `count`, a u16.
    (shard_hash(encoded) % u32::from(count.max(1))) as u16
}

/// The number of decimal digits a shard of a template with `count` shards is written
/// with: those of `count - 1` (at least one).
pub fn shard_width(count: u16) -> usize {
    let mut last = count.saturating_sub(1);
    let mut width = 1;
    while last >= 10 {
        last /= 10;
        width += 1;
    }
    width
}

/// Appends shard number `shard` of a template with `count` shards, zero-padded to
/// [`shard_width`]; refuses a number that is not below `count`.
pub fn push_shard_number(shard: u16, count: u16, out: &mut String) -> Result<(), KeyError> {
    if shard >= count {
        return Err(KeyError::OutOfRange {
            type_name: "shard",
            value: shard.to_string(),
            reason: "a shard number must be below the shard count of its template",
        });
    }
    push_padded_u64(out, u64::from(shard), shard_width(count));
    Ok(())
}

/// The shard number a rendered component holds, if it is exactly what
/// [`push_shard_number`] writes for a template with `count` shards.
pub fn parse_shard(component: &str, count: u16) -> Option<u16> {
    if component.len() != shard_width(count) || !component.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    component.parse().ok().filter(|&shard| shard < count)
}

/// A shard chosen uniformly at random in `0..count`, for a `{field:random(N)}` field
/// (the derive generates `Type::random_{field}()`, which passes the template's count).
pub fn random_shard(count: u16) -> u16 {
    fastrand::u16(..count.max(1))
}

/// Hashes what `encode` appends to `out` into a shard of `count`, which replaces it: the
/// encoding is rendered in place, so a shard costs no allocation.
pub(crate) fn push_hashed(
    count: u16,
    out: &mut String,
    encode: impl FnOnce(&mut String) -> Result<bool, KeyError>,
) -> Result<bool, KeyError> {
    let start = out.len();
    if !encode(out)? {
        out.truncate(start);
        return Ok(false);
    }
    let shard = shard_of(&out[start..], count);
    out.truncate(start);
    push_shard_number(shard, count, out).map(|()| true)
}

/// A field a `{field:random(N)}` placeholder reads its shard from: a `u16` the writer
/// picked (see [`random_shard`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold a random shard",
    label = "this field is used in a `random(N)` placeholder",
    note = "a `{{field:random(N)}}` placeholder reads the shard the writer picked from a `u16` field (fill it with `Type::random_field()`)"
)]
pub trait ShardValue {
    /// The shard number.
    fn shard_number(&self) -> u16;
}

impl ShardValue for u16 {
    fn shard_number(&self) -> u16 {
        *self
    }
}

impl<T: ShardValue + ?Sized> ShardValue for &T {
    fn shard_number(&self) -> u16 {
        (**self).shard_number()
    }
}

/// The UTC calendar fields of a time value, from which the time buckets are computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UtcFields {
    /// The year (buckets can encode 0 to 9999).
    pub year: i32,
    /// The month, 1 to 12.
    pub month: u8,
    /// The day of the month, 1 to 31.
    pub day: u8,
    /// The hour, 0 to 23.
    pub hour: u8,
}

/// A time value that `{field:date}`, `{field:hour}` and `{field:month}` can bucket: it
/// gives its UTC calendar fields.
///
/// Implemented for `time::OffsetDateTime`, `Date` and `PrimitiveDateTime` (feature `time`)
/// and chrono's `NaiveDate`, `NaiveDateTime` and `DateTime<Utc>` (feature `chrono`); a
/// value without an offset is taken as UTC. Implement it for another time
/// type (a date without a time of day gives hour 0): every bucket placeholder then accepts
/// fields of that type, and every bucket argument accepts its values.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a time value a key can be bucketed by",
    label = "this field is used in a `date`, `hour` or `month` placeholder",
    note = "time buckets are computed from a type implementing `dynamo_model::key::computed::BucketTime`: time::OffsetDateTime, Date or PrimitiveDateTime (feature `time`), chrono's NaiveDate, NaiveDateTime or DateTime<Utc> (feature `chrono`), or your own time type"
)]
pub trait BucketTime {
    /// The value's calendar fields in UTC, or why it has none (e.g. a UTC year that does
    /// not exist).
    fn utc_fields(&self) -> Result<UtcFields, KeyError>;
}

impl<T: BucketTime + ?Sized> BucketTime for &T {
    fn utc_fields(&self) -> Result<UtcFields, KeyError> {
        (**self).utc_fields()
    }
}

#[cfg(any(feature = "time", feature = "chrono"))]
mod bucket_times;

/// A time bucket: the value of a `date`, `hour` or `month` placeholder.
pub trait TimeBucket: KeyPart + Copy + Ord + fmt::Debug {
    /// The bucket holding the instant with these UTC fields; refuses a year outside
    /// 0000–9999 (fixed-width keys) and fields that are no calendar date.
    fn from_utc(fields: UtcFields) -> Result<Self, KeyError>;

    /// The bucket holding `time`.
    fn of(time: &(impl BucketTime + ?Sized)) -> Result<Self, KeyError> {
        Self::from_utc(time.utc_fields()?)
    }
}

/// The number of days of `month` (1 to 12) in `year`, in the proleptic Gregorian calendar.
fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        _ => 31,
    }
}

/// Checks calendar fields: year 0–9999, month 1–12, a day of that month, hour 0–23.
fn calendar(
    type_name: &'static str,
    year: i32,
    month: u8,
    day: u8,
    hour: u8,
) -> Result<(u16, u8, u8, u8), KeyError> {
    let out_of_range = |reason| KeyError::OutOfRange {
        type_name,
        value: format!("{year:04}-{month:02}-{day:02}T{hour:02}"),
        reason,
    };
    let year = u16::try_from(year)
        .ok()
        .filter(|y| *y <= 9999)
        .ok_or_else(|| out_of_range("the year in UTC must be between 0000 and 9999"))?;
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) || hour > 23 {
        return Err(out_of_range("not a calendar date and hour"));
    }
    Ok((year, month, day, hour))
}

/// Parses the fixed-width `YYYY-MM[-DD[THH]]` forms the buckets write; strict: only what
/// they write is accepted.
fn parse_bucket(
    type_name: &'static str,
    component: &str,
    with_day: bool,
    with_hour: bool,
) -> Result<(u16, u8, u8, u8), KeyError> {
    let expected = match (with_day, with_hour) {
        (true, true) => "expected `YYYY-MM-DDTHH`",
        (true, false) => "expected `YYYY-MM-DD`",
        _ => "expected `YYYY-MM`",
    };
    let malformed = |reason| KeyError::Malformed {
        type_name,
        input: component.to_owned(),
        reason,
    };
    let bytes = component.as_bytes();
    let len = 7 + if with_day { 3 } else { 0 } + if with_hour { 3 } else { 0 };
    let separators: &[(usize, u8)] = &[(4, b'-'), (7, b'-'), (10, b'T')];
    if bytes.len() != len
        || separators
            .iter()
            .filter(|(at, _)| *at < len)
            .any(|&(at, sep)| bytes[at] != sep)
    {
        return Err(malformed(expected));
    }
    let number = |at: usize, digits: usize| -> Result<u16, KeyError> {
        bytes[at..at + digits].iter().try_fold(0u16, |acc, &b| {
            if b.is_ascii_digit() {
                // At most 4 digits: cannot overflow a u16.
                Ok(acc * 10 + u16::from(b - b'0'))
            } else {
                Err(malformed(expected))
            }
        })
    };
    let year = number(0, 4)?;
    // Two digits: at most 99, so the narrowing is lossless.
    let month = number(5, 2)? as u8;
    let day = if with_day { number(8, 2)? as u8 } else { 1 };
    let hour = if with_hour { number(11, 2)? as u8 } else { 0 };
    calendar(type_name, i32::from(year), month, day, hour)
        .map_err(|_| malformed("not a calendar date and hour"))
}

/// The UTC day of a time value: what `{field:date}` renders, `YYYY-MM-DD`.
///
/// ```
/// use dynamo_model::key::computed::DayBucket;
/// use dynamo_model::KeyPart;
/// let day = DayBucket::new(2014, 7, 9)?;
/// let mut out = String::new();
/// day.encode_key(&mut out)?;
/// assert_eq!(out, "2014-07-09");
/// # Ok::<(), dynamo_model::key::KeyError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DayBucket {
    year: u16,
    month: u8,
    day: u8,
}

/// The UTC hour of a time value: what `{field:hour}` renders, `YYYY-MM-DDTHH`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HourBucket {
    day: DayBucket,
    hour: u8,
}

/// The UTC month of a time value: what `{field:month}` renders, `YYYY-MM`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MonthBucket {
    year: u16,
    month: u8,
}

impl DayBucket {
    /// The day `year-month-day`; refuses a year outside 0000–9999 or a day that is not
    /// in the calendar.
    pub fn new(year: u16, month: u8, day: u8) -> Result<Self, KeyError> {
        let (year, month, day, _) = calendar("DayBucket", year.into(), month, day, 0)?;
        Ok(DayBucket { year, month, day })
    }

    /// The year.
    pub fn year(&self) -> u16 {
        self.year
    }

    /// The month, 1 to 12.
    pub fn month(&self) -> u8 {
        self.month
    }

    /// The day of the month, 1 to 31.
    pub fn day(&self) -> u8 {
        self.day
    }
}

impl HourBucket {
    /// The hour `hour` (0 to 23) of the day `year-month-day`.
    pub fn new(year: u16, month: u8, day: u8, hour: u8) -> Result<Self, KeyError> {
        let (year, month, day, hour) = calendar("HourBucket", year.into(), month, day, hour)?;
        Ok(HourBucket {
            day: DayBucket { year, month, day },
            hour,
        })
    }

    /// The day of this hour.
    pub fn day(&self) -> DayBucket {
        self.day
    }

    /// The hour, 0 to 23.
    pub fn hour(&self) -> u8 {
        self.hour
    }
}

impl MonthBucket {
    /// The month `year-month`.
    pub fn new(year: u16, month: u8) -> Result<Self, KeyError> {
        let (year, month, _, _) = calendar("MonthBucket", year.into(), month, 1, 0)?;
        Ok(MonthBucket { year, month })
    }

    /// The year.
    pub fn year(&self) -> u16 {
        self.year
    }

    /// The month, 1 to 12.
    pub fn month(&self) -> u8 {
        self.month
    }
}

impl TimeBucket for DayBucket {
    fn from_utc(f: UtcFields) -> Result<Self, KeyError> {
        let (year, month, day, _) = calendar("DayBucket", f.year, f.month, f.day, 0)?;
        Ok(DayBucket { year, month, day })
    }
}

impl TimeBucket for HourBucket {
    fn from_utc(f: UtcFields) -> Result<Self, KeyError> {
        let (year, month, day, hour) = calendar("HourBucket", f.year, f.month, f.day, f.hour)?;
        Ok(HourBucket {
            day: DayBucket { year, month, day },
            hour,
        })
    }
}

impl TimeBucket for MonthBucket {
    fn from_utc(f: UtcFields) -> Result<Self, KeyError> {
        let (year, month, _, _) = calendar("MonthBucket", f.year, f.month, 1, 0)?;
        Ok(MonthBucket { year, month })
    }
}

impl From<HourBucket> for DayBucket {
    fn from(hour: HourBucket) -> Self {
        hour.day
    }
}

impl From<DayBucket> for MonthBucket {
    fn from(day: DayBucket) -> Self {
        MonthBucket {
            year: day.year,
            month: day.month,
        }
    }
}

impl fmt::Display for DayBucket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

impl fmt::Display for HourBucket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}T{:02}", self.day, self.hour)
    }
}

impl fmt::Display for MonthBucket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}", self.year, self.month)
    }
}

/// Written as [`Display`](fmt::Display) shows it (fixed width, so it sorts by day).
impl KeyPart for DayBucket {
    fn encode_key(&self, out: &mut String) -> Result<(), KeyError> {
        MonthBucket {
            year: self.year,
            month: self.month,
        }
        .encode_key(out)?;
        out.push('-');
        push_padded_u64(out, self.day.into(), 2);
        Ok(())
    }

    fn decode_key(component: &str) -> Result<Self, KeyError> {
        let (year, month, day, _) = parse_bucket("DayBucket", component, true, false)?;
        Ok(DayBucket { year, month, day })
    }
}

/// Written as [`Display`](fmt::Display) shows it (fixed width, so it sorts by hour).
impl KeyPart for HourBucket {
    fn encode_key(&self, out: &mut String) -> Result<(), KeyError> {
        self.day.encode_key(out)?;
        out.push('T');
        push_padded_u64(out, self.hour.into(), 2);
        Ok(())
    }

    fn decode_key(component: &str) -> Result<Self, KeyError> {
        let (year, month, day, hour) = parse_bucket("HourBucket", component, true, true)?;
        Ok(HourBucket {
            day: DayBucket { year, month, day },
            hour,
        })
    }
}

/// Written as [`Display`](fmt::Display) shows it (fixed width, so it sorts by month).
impl KeyPart for MonthBucket {
    fn encode_key(&self, out: &mut String) -> Result<(), KeyError> {
        push_padded_u64(out, self.year.into(), 4);
        out.push('-');
        push_padded_u64(out, self.month.into(), 2);
        Ok(())
    }

    fn decode_key(component: &str) -> Result<Self, KeyError> {
        let (year, month, _, _) = parse_bucket("MonthBucket", component, false, false)?;
        Ok(MonthBucket { year, month })
    }
}

/// What a bucket placeholder's argument may be (in key and partition constructors): the
/// bucket itself, or any time value inside it (a [`BucketTime`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot name a `{B}`",
    note = "pass the bucket (`{B}`) or a time value inside it (a type implementing `dynamo_model::key::computed::BucketTime`, e.g. time::OffsetDateTime)"
)]
pub trait BucketArg<B> {
    /// The bucket the argument names.
    fn to_bucket(&self) -> Result<B, KeyError>;
}

impl<B: TimeBucket, T: BucketTime> BucketArg<B> for T {
    fn to_bucket(&self) -> Result<B, KeyError> {
        B::of(self)
    }
}

macro_rules! bucket_args {
    ($($bucket:ty),*) => {$(
        impl BucketArg<$bucket> for $bucket {
            fn to_bucket(&self) -> Result<$bucket, KeyError> {
                Ok(*self)
            }
        }

        impl BucketArg<$bucket> for &$bucket {
            fn to_bucket(&self) -> Result<$bucket, KeyError> {
                Ok(**self)
            }
        }
    )*};
}

bucket_args!(DayBucket, HourBucket, MonthBucket);

/// A bucket source that may be absent, as sparse index templates use it: a
/// [`BucketTime`] is always present, an `Option` of one when `Some`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a time value an index key can be bucketed by",
    label = "this field is used in a `date`, `hour` or `month` placeholder",
    note = "time buckets are computed from a type implementing `dynamo_model::key::computed::BucketTime` (time::OffsetDateTime with feature `time`), optionally wrapped in `Option` for a sparse index"
)]
pub trait OptionalBucketTime {
    /// The UTC fields when present.
    fn optional_utc_fields(&self) -> Result<Option<UtcFields>, KeyError>;
}

impl<T: BucketTime> OptionalBucketTime for T {
    fn optional_utc_fields(&self) -> Result<Option<UtcFields>, KeyError> {
        self.utc_fields().map(Some)
    }
}

impl<T: BucketTime> OptionalBucketTime for Option<T> {
    fn optional_utc_fields(&self) -> Result<Option<UtcFields>, KeyError> {
        self.as_ref().map(T::utc_fields).transpose()
    }
}

/// Rendering of computed parts, for the code `#[derive(Entity)]` generates.
#[doc(hidden)]
pub mod __private {
    use super::*;

    /// `{field:random(N)}`: the shard the field holds.
    #[inline]
    pub fn push_random_shard<T: ShardValue + ?Sized>(
        value: &T,
        count: u16,
        out: &mut String,
    ) -> Result<(), KeyError> {
        push_shard_number(value.shard_number(), count, out)
    }

    /// `{field:date}` (`hour`, `month`) of a field value.
    #[inline]
    pub fn push_bucket<B: TimeBucket, T: BucketTime + ?Sized>(
        value: &T,
        out: &mut String,
    ) -> Result<(), KeyError> {
        B::of(value)?.encode_key(out)
    }

    /// `{field:date}` (`hour`, `month`) of a constructor argument.
    #[inline]
    pub fn push_bucket_arg<B: TimeBucket, A: BucketArg<B>>(
        arg: &A,
        out: &mut String,
    ) -> Result<(), KeyError> {
        arg.to_bucket()?.encode_key(out)
    }

    /// `{field:date}` (`hour`, `month`) of an index template's field, which may be absent
    /// (`Ok(false)`).
    #[inline]
    pub fn push_bucket_optional<B: TimeBucket, T: OptionalBucketTime>(
        value: &T,
        out: &mut String,
    ) -> Result<bool, KeyError> {
        match value.optional_utc_fields()? {
            Some(fields) => B::from_utc(fields)?.encode_key(out).map(|()| true),
            None => Ok(false),
        }
    }

    /// `{field:shard(N)}` from the field's encoded component (index-key recomputation in
    /// updates, [`dynamo_model::key::template`]).
    pub fn shard_from_component(
        component: &str,
        count: u16,
        out: &mut String,
    ) -> Result<(), KeyError> {
        push_shard_number(shard_of(component, count), count, out)
    }

    /// `{field:random(N)}` from the field's encoded component (a `u16`).
    pub fn random_from_component(
        component: &str,
        count: u16,
        out: &mut String,
    ) -> Result<(), KeyError> {
        push_shard_number(u16::decode_key(component)?, count, out)
    }

    /// Re-encodes the shard of a `{field:random(COUNT)}` component of the primary key as
    /// the `u16` field's own encoding: an index template reads the field back from there
    /// ([`dynamo_model::key::template::TemplateField::Key`]).
    pub fn reencode_random_shard<const COUNT: u16>(
        entity: &'static str,
        component: &str,
        _from: crate::key::Delimiter,
        to: crate::key::Delimiter,
        out: &mut String,
    ) -> Result<(), crate::Error> {
        // A shard number is digits: the same under every delimiter.
        let shard = parse_shard(component, COUNT).ok_or_else(|| KeyError::Malformed {
            type_name: "shard",
            input: component.to_owned(),
            reason: "not a shard number of the template",
        });
        shard
            .and_then(|shard| shard.encode_key_with(to, out))
            .map_err(|e| crate::Error::key(entity, e))
    }

    /// `{field:date}` (`hour`, `month`) from the field's encoded component: decoded as
    /// `T`, then bucketed.
    pub fn bucket_from_component<T: KeyPart + BucketTime, B: TimeBucket>(
        component: &str,
        out: &mut String,
    ) -> Result<(), KeyError> {
        B::of(&T::decode_key(component)?)?.encode_key(out)
    }
}

#[cfg(test)]
mod tests;
