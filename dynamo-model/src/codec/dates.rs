//! Dates, times and identifiers as attributes: RFC 3339 text (UTC, nanoseconds), calendar
//! dates, lowercase hyphenated UUIDs, uppercase ULIDs.

use super::*;

/// A date or date-time as a string attribute in its fixed-width form (the form of its
/// key encoding, so the attribute sorts and can be an index key); years outside
/// 0000–9999 are refused.
#[cfg(any(feature = "time", feature = "chrono"))]
fn civil_attr<T: CivilValue>(value: &T) -> Result<AttributeValue, EncodeError> {
    let mut s = String::with_capacity(30);
    value
        .push_civil(&mut s)
        .map_err(|reason| EncodeError::new(format!("{value}: {reason}")))?;
    Ok(AttributeValue::S(s))
}

/// An instant from a string attribute in any RFC 3339 text (another precision or
/// offset, as written by other programs).
#[cfg(any(feature = "time", feature = "chrono"))]
fn rfc3339_from_attr<T, E: std::fmt::Display>(
    value: AttributeValue,
    parse: impl FnOnce(&str) -> Result<T, E>,
) -> Result<T, DecodeErrorKind> {
    match value {
        AttributeValue::S(s) => {
            parse(&s).map_err(|e| DecodeErrorKind::Invalid(format!("{s:?} is not RFC 3339: {e}")))
        }
        other => Err(wrong_type("S", &other)),
    }
}

/// A date or date-time from a string attribute in its fixed-width form.
#[cfg(any(feature = "time", feature = "chrono"))]
fn civil_from_attr<T: CivilValue>(value: AttributeValue) -> Result<T, DecodeErrorKind> {
    match value {
        AttributeValue::S(s) => T::parse_civil(&s)
            .map_err(|reason| DecodeErrorKind::Invalid(format!("{s:?}: {reason}"))),
        other => Err(wrong_type("S", &other)),
    }
}

/// [`AttrValue`] for date and date-time types: stored as `S` in their fixed-width form,
/// read back with `$from_attr`.
#[cfg(any(feature = "time", feature = "chrono"))]
macro_rules! civil_attr_value {
    ($($(#[$attr:meta])* $t:ty => $from_attr:expr;)*) => {$(
        $(#[$attr])*
        impl AttrValue for $t {
            const __DYNAMO_TYPE: Option<&'static str> = Some("S");
            fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
                civil_attr(self)
            }
            fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
                $from_attr(value)
            }
        }
    )*};
}

#[cfg(any(feature = "time", feature = "chrono"))]
use crate::text::civil::CivilValue;

#[cfg(any(feature = "time", feature = "chrono"))]
civil_attr_value! {
    /// Stored as `S "YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ"`, the same fixed-width UTC form as in
    /// keys; decoding accepts any RFC 3339 text.
    #[cfg(feature = "time")]
    time::OffsetDateTime => |value| rfc3339_from_attr(value, |s| {
        time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
    });
    /// Stored as `S "YYYY-MM-DD"`; years outside 0000–9999 are refused.
    #[cfg(feature = "time")]
    time::Date => civil_from_attr;
    /// Stored as `S "YYYY-MM-DDTHH:MM:SS.nnnnnnnnn"`; years outside 0000–9999 are refused.
    #[cfg(feature = "time")]
    time::PrimitiveDateTime => civil_from_attr;
    /// Stored as `S "YYYY-MM-DD"`; years outside 0000–9999 are refused.
    #[cfg(feature = "chrono")]
    chrono::NaiveDate => civil_from_attr;
    /// Stored as `S "YYYY-MM-DDTHH:MM:SS.nnnnnnnnn"` (a leap second as second 60); years
    /// outside 0000–9999 are refused.
    #[cfg(feature = "chrono")]
    chrono::NaiveDateTime => civil_from_attr;
    /// Stored as `S "YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ"` like `time::OffsetDateTime` (a leap
    /// second as second 60); years outside 0000–9999 are refused. Decoding also accepts any
    /// RFC 3339 text (another precision or offset), as written by other programs.
    #[cfg(feature = "chrono")]
    chrono::DateTime<chrono::Utc> => |value| rfc3339_from_attr(value, |s| {
        chrono::DateTime::parse_from_rfc3339(s).map(|t| t.to_utc())
    });
}

/// Identifiers as string attributes in the form of their key encoding, so the attribute
/// sorts as the key does and can be an index key: a UUID lowercase hyphenated, a ULID in
/// its 26 uppercase characters (sorting by time). Reading accepts any form the type's
/// crate parses (another program's uppercase UUID or lowercase ULID).
macro_rules! id_attr {
    ($($(#[$cfg:meta])* $t:ty => $what:literal, $text:expr, $parse:path;)*) => {$(
        $(#[$cfg])*
        impl AttrValue for $t {
            const __DYNAMO_TYPE: Option<&'static str> = Some("S");
            fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
                let text: fn(&$t) -> String = $text;
                Ok(AttributeValue::S(text(self)))
            }
            fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
                let invalid = |s: &str, e| DecodeErrorKind::Invalid(format!("{s:?} is not {}: {e}", $what));
                match value {
                    AttributeValue::S(s) => $parse(&s).map_err(|e| invalid(&s, e)),
                    other => Err(wrong_type("S", &other)),
                }
            }
        }
    )*};
}

id_attr! {
    #[cfg(feature = "uuid")]
    uuid::Uuid => "a UUID", |u| u.hyphenated().to_string(), uuid::Uuid::parse_str;
    #[cfg(feature = "ulid")]
    ulid::Ulid => "a ULID", |u| u.to_string(), ulid::Ulid::from_string;
}
