//! Value generators shared by the key properties (`encode` and `sort`), biased to the
//! values that break key encodings: bytes below and above each delimiter (`#`, `.`, `_`,
//! `|`, `:`), their escape characters and look-alikes of their escapes, digits and
//! uppercase letters (escaped under `:`, `_` and `|`), the empty string, multi-byte UTF-8,
//! and the extremes of every integer type.

use proptest::prelude::*;

/// Pieces that, concatenated, make hostile strings sharing prefixes: bytes below `#`
/// (controls, space, `!`, `"`), `#` itself, `$` and `%` (the byte after `#`, the escape),
/// escape look-alikes, bytes just above (`&`), multi-byte UTF-8 and plain letters.
const PIECES: &[&str] = &[
    "",
    "a",
    "b",
    "John",
    "Smith",
    " ",
    "!",
    "\"",
    "#",
    "$",
    "%",
    "&",
    "'",
    "%23",
    "%2",
    "%25",
    "%20",
    "%%",
    "\"$",
    "\"\"",
    "\u{0}",
    "\u{1}",
    "\u{1f}",
    "\u{7f}",
    "é",
    "€",
    "\u{10FFFF}",
    "~",
    "Z",
    "0",
    "-",
    ".",
    "/",
    "/2E",
    "_",
    "`",
    "`5F",
    "|",
    "}",
    "}7C",
    ":",
    ";",
    ";3A",
    "A",
    "9",
    "a.b",
];

/// Strings biased to hostile characters; about one in ten is empty.
pub fn strings() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => Just(String::new()),
        3 => "[ab#!\"$%&]{0,8}",
        3 => "[aA9#%./_`|}:;~]{0,8}",
        2 => "[\\x00-\\x02 !\"#$%&a~\\x7f]{0,6}",
        4 => prop::collection::vec(prop::sample::select(PIECES), 1..5).prop_map(|p| p.concat()),
        1 => "\\PC{0,12}",
        1 => any::<String>(),
    ]
}

/// Short strings from a tiny alphabet, so that several generated values are equal.
pub fn colliding_strings() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => Just(String::new()),
        2 => "[a!# %._|:A]{0,2}",
        2 => prop::sample::select(
            &["a", "a!", "a ", "a#", "a%", "b", "%23", "é", "a.", "a_", "a|", "a:", "a/", "A", "a1"][..]
        )
        .prop_map(str::to_owned),
    ]
}

/// Integers of type `$t` (unsigned ones as they are; see [`signed_values`] for signed
/// ones): uniform, small magnitudes, the extremes and the twenty values
/// next to each, and any `$more` (each as likely as an extreme); for 128-bit types only
/// values a DynamoDB number can hold (see [`storable`]).
macro_rules! integer_values {
    ($t:ty $(, $more:expr)*) => {
        prop_oneof![
            3 => any::<$t>(),
            3 => (any::<$t>(), 0..<$t>::BITS).prop_map(|(v, shift)| v >> shift),
            1 => Just(<$t>::MIN),
            1 => Just(<$t>::MAX),
            1 => <$t>::MIN..=(<$t>::MIN + 20),
            1 => (<$t>::MAX - 20)..=<$t>::MAX,
            $(1 => $more,)*
        ]
        .prop_map(|v: $t| $crate::key::testing::storable(v, |v| v / 10))
    };
}
pub(crate) use integer_values;

/// `value` itself when a DynamoDB number can hold it (at most 38 significant digits),
/// otherwise `shrink(value)`: keys refuse 128-bit values with more (`u128::MAX` has 39).
pub fn storable<T: Copy + std::fmt::Display>(value: T, shrink: fn(T) -> T) -> T {
    if crate::text::significant_digits(&value.to_string()) > 38 {
        shrink(value)
    } else {
        value
    }
}

/// Signed integers of type `$t`: small magnitudes of both signs too.
macro_rules! signed_values {
    ($t:ty) => {
        $crate::key::testing::integer_values!(
            $t,
            Just(0 as $t),
            Just(-1 as $t),
            (-20 as $t)..=(20 as $t)
        )
    };
}
pub(crate) use signed_values;

/// Values of `min..=max`: uniform, its ends, the `edge` values next to each end, and the
/// window `near..=near + window`, so that pairs often fall close together.
pub fn spread<T>(min: T, max: T, edge: T, near: T, window: T) -> impl Strategy<Value = T>
where
    T: Copy + std::fmt::Debug + std::ops::Add<Output = T> + std::ops::Sub<Output = T> + 'static,
    std::ops::RangeInclusive<T>: Strategy<Value = T>,
{
    prop_oneof![
        4 => min..=max,
        1 => Just(min),
        1 => Just(max),
        1 => min..=min + edge,
        1 => max - edge..=max,
        2 => near..=near + window,
    ]
}

/// UUIDs: uniform, nil, max and small values.
#[cfg(feature = "uuid")]
pub fn uuids() -> impl Strategy<Value = uuid::Uuid> {
    prop_oneof![
        4 => any::<u128>().prop_map(uuid::Uuid::from_u128),
        1 => Just(uuid::Uuid::nil()),
        1 => Just(uuid::Uuid::max()),
        1 => (0u128..=20).prop_map(uuid::Uuid::from_u128),
    ]
}

/// ULIDs: uniform, nil, max, and ones of one millisecond told apart by their randomness.
#[cfg(feature = "ulid")]
pub fn ulids() -> impl Strategy<Value = ulid::Ulid> {
    prop_oneof![
        4 => any::<u128>().prop_map(ulid::Ulid),
        1 => Just(ulid::Ulid::nil()),
        1 => Just(ulid::Ulid::max()),
        2 => (0u64..=3, any::<u128>()).prop_map(|(ms, r)| ulid::Ulid::from_parts(ms, r)),
    ]
}

#[cfg(feature = "time")]
pub mod datetime_values {
    use proptest::prelude::*;
    use time::macros::datetime;
    use time::{OffsetDateTime, PrimitiveDateTime, UtcOffset};

    pub const MIN: OffsetDateTime = datetime!(0000-01-01 0:00 UTC);
    pub const MAX: OffsetDateTime = datetime!(9999-12-31 23:59:59.999_999_999 UTC);

    fn offset() -> impl Strategy<Value = UtcOffset> {
        prop_oneof![
            Just(UtcOffset::UTC),
            (-93_599i32..=93_599)
                .prop_map(|s| UtcOffset::from_whole_seconds(s).unwrap_or(UtcOffset::UTC)),
        ]
    }

    /// Instants whose UTC year is in 0..=9999, shown in a random offset.
    pub fn datetimes() -> impl Strategy<Value = OffsetDateTime> {
        let (min, max) = (MIN.unix_timestamp_nanos(), MAX.unix_timestamp_nanos());
        // A window one microsecond wide, so pairs often share a second.
        let near = 1_700_000_000_000_000_000i128;
        (super::spread(min, max, 2_000, near, 1_000), offset()).prop_map(|(nanos, offset)| {
            let utc = OffsetDateTime::from_unix_timestamp_nanos(nanos).expect("in range");
            utc.checked_to_offset(offset).unwrap_or(utc)
        })
    }

    /// Local date-times with years 0..=9999 in a random offset; the UTC
    /// instant may fall outside the encodable range.
    pub fn local_datetimes() -> impl Strategy<Value = OffsetDateTime> {
        let min = PrimitiveDateTime::new(MIN.date(), MIN.time()).assume_utc();
        let (min, max) = (min.unix_timestamp_nanos(), MAX.unix_timestamp_nanos());
        (min..=max, offset()).prop_map(|(nanos, offset)| {
            let local = OffsetDateTime::from_unix_timestamp_nanos(nanos).expect("in range");
            PrimitiveDateTime::new(local.date(), local.time()).assume_offset(offset)
        })
    }
}

/// Dates and date-times of the `time` crate: the whole encodable range (years 0000 to
/// 9999), its ends, and narrow windows so that pairs often share a day or a second.
#[cfg(feature = "time")]
pub mod time_values {
    use proptest::prelude::*;
    use time::macros::date;
    use time::{Date, PrimitiveDateTime, Time};

    pub const MIN_DATE: Date = date!(0000 - 01 - 01);
    pub const MAX_DATE: Date = date!(9999 - 12 - 31);

    /// Julian days of encodable dates.
    fn days() -> impl Strategy<Value = i32> {
        let (min, max) = (MIN_DATE.to_julian_day(), MAX_DATE.to_julian_day());
        let near = date!(2024 - 02 - 28).to_julian_day();
        super::spread(min, max, 400, near, 3)
    }

    pub fn dates() -> impl Strategy<Value = Date> {
        days().prop_map(|d| Date::from_julian_day(d).unwrap_or(MIN_DATE))
    }

    /// Every date `time` can hold (years -9999 to 9999): encodable or not.
    pub fn any_dates() -> impl Strategy<Value = Date> {
        (Date::MIN.to_julian_day()..=Date::MAX.to_julian_day())
            .prop_map(|d| Date::from_julian_day(d).unwrap_or(MIN_DATE))
    }

    fn times() -> impl Strategy<Value = Time> {
        let nanos = prop_oneof![
            3 => 0u64..86_400_000_000_000,
            1 => Just(0u64),
            1 => Just(86_399_999_999_999u64),
            2 => 43_200_000_000_000u64..=43_200_000_001_000,
        ];
        nanos.prop_map(|n| {
            let secs = n / 1_000_000_000;
            // Hours, minutes and seconds of one day: each fits its type.
            Time::from_hms_nano(
                (secs / 3600) as u8,
                (secs / 60 % 60) as u8,
                (secs % 60) as u8,
                (n % 1_000_000_000) as u32,
            )
            .unwrap_or(Time::MIDNIGHT)
        })
    }

    pub fn date_times() -> impl Strategy<Value = PrimitiveDateTime> {
        (dates(), times()).prop_map(|(d, t)| PrimitiveDateTime::new(d, t))
    }

    pub fn any_date_times() -> impl Strategy<Value = PrimitiveDateTime> {
        (any_dates(), times()).prop_map(|(d, t)| PrimitiveDateTime::new(d, t))
    }
}

/// Dates and date-times of chrono: the encodable range (years 0000 to 9999), its ends,
/// narrow windows, and leap seconds (a nanosecond count of one second or more at second
/// 59, which chrono orders after second 59 and before the next minute).
#[cfg(feature = "chrono")]
pub mod chrono_values {
    use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};
    use proptest::prelude::*;

    pub fn min_date() -> NaiveDate {
        NaiveDate::from_ymd_opt(0, 1, 1).unwrap_or(NaiveDate::MIN)
    }

    pub fn max_date() -> NaiveDate {
        NaiveDate::from_ymd_opt(9999, 12, 31).unwrap_or(NaiveDate::MAX)
    }

    fn date_of(days: i32) -> NaiveDate {
        NaiveDate::from_num_days_from_ce_opt(days).unwrap_or(NaiveDate::MIN)
    }

    pub fn dates() -> impl Strategy<Value = NaiveDate> {
        use chrono::Datelike;
        let (min, max) = (min_date().num_days_from_ce(), max_date().num_days_from_ce());
        let near = NaiveDate::from_ymd_opt(2024, 2, 28).map_or(0, |d| d.num_days_from_ce());
        super::spread(min, max, 400, near, 3).prop_map(date_of)
    }

    /// Every date chrono can hold (years -262143 to 262142): encodable or not.
    pub fn any_dates() -> impl Strategy<Value = NaiveDate> {
        use chrono::Datelike;
        (NaiveDate::MIN.num_days_from_ce()..=NaiveDate::MAX.num_days_from_ce()).prop_map(date_of)
    }

    /// Times of day; about one in five is in a leap second.
    pub fn times() -> impl Strategy<Value = NaiveTime> {
        let secs = prop_oneof![
            3 => 0u32..86_400,
            1 => Just(0u32),
            1 => Just(86_399u32),
            2 => 43_199u32..=43_201,
        ];
        let nanos = prop_oneof![
            3 => 0u32..1_000_000_000,
            1 => Just(0u32),
            1 => Just(999_999_999u32),
        ];
        (secs, nanos, prop::bool::weighted(0.2)).prop_map(|(secs, nano, leap)| {
            let (secs, nano) = if leap {
                (secs - secs % 60 + 59, nano + 1_000_000_000)
            } else {
                (secs, nano)
            };
            NaiveTime::from_num_seconds_from_midnight_opt(secs, nano).unwrap_or(NaiveTime::MIN)
        })
    }

    pub fn date_times() -> impl Strategy<Value = NaiveDateTime> {
        (dates(), times()).prop_map(|(d, t)| NaiveDateTime::new(d, t))
    }

    pub fn instants() -> impl Strategy<Value = DateTime<Utc>> {
        date_times().prop_map(|t| t.and_utc())
    }
}
