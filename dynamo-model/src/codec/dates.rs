//! Dates, times and UUIDs as attributes: RFC 3339 text (UTC, nanoseconds), calendar
//! dates, and lowercase hyphenated UUIDs.

use super::*;

#[cfg(feature = "time")]
impl AttrValue for time::OffsetDateTime {
    const __DYNAMO_TYPE: Option<&'static str> = Some("S");
    fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
        // Same fixed-width UTC form as in keys, so the attribute sorts and can be an index key.
        let mut s = String::with_capacity(30);
        crate::text::push_utc_timestamp(self, &mut s)
            .map_err(|reason| EncodeError::new(format!("{self}: {reason}")))?;
        Ok(AttributeValue::S(s))
    }
    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        match value {
            AttributeValue::S(s) => {
                time::OffsetDateTime::parse(&s, &time::format_description::well_known::Rfc3339)
                    .map_err(|e| DecodeErrorKind::Invalid(format!("{s:?} is not RFC 3339: {e}")))
            }
            other => Err(wrong_type("S", &other)),
        }
    }
}

/// A date or date-time as a string attribute in its fixed-width form (the form of its
/// key encoding, so the attribute sorts and can be an index key).
#[cfg(any(feature = "time", feature = "chrono"))]
fn civil_attr(
    civil: Result<Civil, &'static str>,
    form: CivilForm,
    value: &dyn std::fmt::Display,
) -> Result<AttributeValue, EncodeError> {
    let civil = civil.map_err(|reason| EncodeError::new(format!("{value}: {reason}")))?;
    let mut s = String::with_capacity(30);
    civil.push(form, &mut s);
    Ok(AttributeValue::S(s))
}

/// Reads a string attribute in the fixed-width form `form`.
#[cfg(any(feature = "time", feature = "chrono"))]
fn civil_from_attr<T>(
    value: AttributeValue,
    form: CivilForm,
    build: impl FnOnce(Civil) -> Result<T, &'static str>,
) -> Result<T, DecodeErrorKind> {
    match value {
        AttributeValue::S(s) => Civil::parse(&s, form)
            .and_then(build)
            .map_err(|reason| DecodeErrorKind::Invalid(format!("{s:?}: {reason}"))),
        other => Err(wrong_type("S", &other)),
    }
}

#[cfg(any(feature = "time", feature = "chrono"))]
use crate::text::civil::{Civil, CivilForm};

/// Stored as `S "YYYY-MM-DD"`; years outside 0000–9999 are refused.
#[cfg(feature = "time")]
impl AttrValue for time::Date {
    const __DYNAMO_TYPE: Option<&'static str> = Some("S");
    fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
        let civil = Civil::date(self.year(), u8::from(self.month()), self.day());
        civil_attr(civil, CivilForm::Date, self)
    }
    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        civil_from_attr(value, CivilForm::Date, |c| {
            c.to_time().map(|(date, _)| date)
        })
    }
}

/// Stored as `S "YYYY-MM-DDTHH:MM:SS.nnnnnnnnn"`; years outside 0000–9999 are refused.
#[cfg(feature = "time")]
impl AttrValue for time::PrimitiveDateTime {
    const __DYNAMO_TYPE: Option<&'static str> = Some("S");
    fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
        civil_attr(
            Civil::of_time(self.date(), self.time()),
            CivilForm::Local,
            self,
        )
    }
    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        civil_from_attr(value, CivilForm::Local, |c| {
            c.to_time()
                .map(|(date, time)| time::PrimitiveDateTime::new(date, time))
        })
    }
}

/// Stored as `S "YYYY-MM-DD"`; years outside 0000–9999 are refused.
#[cfg(feature = "chrono")]
impl AttrValue for chrono::NaiveDate {
    const __DYNAMO_TYPE: Option<&'static str> = Some("S");
    fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
        civil_attr(
            Civil::of_chrono(*self, chrono::NaiveTime::MIN),
            CivilForm::Date,
            self,
        )
    }
    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        civil_from_attr(value, CivilForm::Date, |c| {
            c.to_chrono().map(|(date, _)| date)
        })
    }
}

/// Stored as `S "YYYY-MM-DDTHH:MM:SS.nnnnnnnnn"` (a leap second as second 60); years
/// outside 0000–9999 are refused.
#[cfg(feature = "chrono")]
impl AttrValue for chrono::NaiveDateTime {
    const __DYNAMO_TYPE: Option<&'static str> = Some("S");
    fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
        civil_attr(
            Civil::of_chrono(self.date(), self.time()),
            CivilForm::Local,
            self,
        )
    }
    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        civil_from_attr(value, CivilForm::Local, |c| {
            c.to_chrono()
                .map(|(date, time)| chrono::NaiveDateTime::new(date, time))
        })
    }
}

/// Stored as `S "YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ"` like `time::OffsetDateTime` (a leap
/// second as second 60); years outside 0000–9999 are refused. Decoding also accepts any
/// RFC 3339 text (another precision or offset), as written by other programs.
#[cfg(feature = "chrono")]
impl AttrValue for chrono::DateTime<chrono::Utc> {
    const __DYNAMO_TYPE: Option<&'static str> = Some("S");
    fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
        let utc = self.naive_utc();
        civil_attr(
            Civil::of_chrono(utc.date(), utc.time()),
            CivilForm::Utc,
            self,
        )
    }
    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        match value {
            AttributeValue::S(s) => chrono::DateTime::parse_from_rfc3339(&s)
                .map(|t| t.to_utc())
                .map_err(|e| DecodeErrorKind::Invalid(format!("{s:?} is not RFC 3339: {e}"))),
            other => Err(wrong_type("S", &other)),
        }
    }
}

#[cfg(feature = "uuid")]
impl AttrValue for uuid::Uuid {
    const __DYNAMO_TYPE: Option<&'static str> = Some("S");
    fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
        Ok(AttributeValue::S(self.hyphenated().to_string()))
    }
    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        match value {
            AttributeValue::S(s) => uuid::Uuid::parse_str(&s)
                .map_err(|e| DecodeErrorKind::Invalid(format!("{s:?} is not a UUID: {e}"))),
            other => Err(wrong_type("S", &other)),
        }
    }
}
