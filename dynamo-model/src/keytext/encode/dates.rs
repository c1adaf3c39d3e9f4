//! Dates, times and UUIDs as key parts: fixed-width RFC 3339 UTC timestamps, calendar
//! dates, lowercase hyphenated UUIDs.
use super::*;

/// Writes a date or date-time in its fixed-width form, or says why it cannot (a year
/// outside 0000–9999).
#[cfg(any(feature = "time", feature = "chrono"))]
pub(super) fn encode_civil(
    civil: Result<Civil, &'static str>,
    form: CivilForm,
    type_name: &'static str,
    value: &dyn std::fmt::Display,
    out: &mut String,
) -> Result<(), KeyError> {
    let civil = civil.map_err(|reason| KeyError::OutOfRange {
        type_name,
        value: value.to_string(),
        reason,
    })?;
    civil.push(form, out);
    Ok(())
}

/// Reads a component in a fixed-width form and builds the value from its fields (`build`
/// refuses fields that make no calendar date or time of day).
#[cfg(any(feature = "time", feature = "chrono"))]
pub(super) fn decode_civil<T>(
    component: &str,
    form: CivilForm,
    type_name: &'static str,
    build: impl FnOnce(Civil) -> Result<T, &'static str>,
) -> Result<T, KeyError> {
    Civil::parse(component, form)
        .and_then(build)
        .map_err(|reason| malformed(type_name, component, reason))
}

#[cfg(any(feature = "time", feature = "chrono"))]
use crate::text::civil::{Civil, CivilForm};

/// Converted to UTC and written as `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ` (always 30
/// characters). The offset is not preserved: decoding yields the same instant
/// in UTC. Instants whose UTC year is outside `0000..=9999` are
/// [`KeyError::OutOfRange`].
#[cfg(feature = "time")]
impl KeyPart for time::OffsetDateTime {
    fn encode_key(&self, out: &mut String) -> Result<(), KeyError> {
        crate::text::push_utc_timestamp(self, out).map_err(|reason| KeyError::OutOfRange {
            type_name: "OffsetDateTime",
            value: self.to_string(),
            reason,
        })
    }

    fn decode_key(component: &str) -> Result<Self, KeyError> {
        decode_civil(component, CivilForm::Utc, "OffsetDateTime", |civil| {
            let (date, time) = civil.to_time()?;
            Ok(time::PrimitiveDateTime::new(date, time).assume_utc())
        })
    }

    prefix_free_delimited!("OffsetDateTime");
}

/// Written `YYYY-MM-DD` (always 10 characters). Dates whose year is outside
/// `0000..=9999` are [`KeyError::OutOfRange`].
#[cfg(feature = "time")]
impl KeyPart for time::Date {
    fn encode_key(&self, out: &mut String) -> Result<(), KeyError> {
        let civil = Civil::date(self.year(), u8::from(self.month()), self.day());
        encode_civil(civil, CivilForm::Date, "Date", self, out)
    }

    fn decode_key(component: &str) -> Result<Self, KeyError> {
        decode_civil(component, CivilForm::Date, "Date", |civil| {
            civil.to_time().map(|(date, _)| date)
        })
    }

    prefix_free_delimited!("Date");
}

/// Written `YYYY-MM-DDTHH:MM:SS.nnnnnnnnn` (always 29 characters; no offset, as the
/// value has none). Date-times whose year is outside `0000..=9999` are
/// [`KeyError::OutOfRange`].
#[cfg(feature = "time")]
impl KeyPart for time::PrimitiveDateTime {
    fn encode_key(&self, out: &mut String) -> Result<(), KeyError> {
        let civil = Civil::of_time(self.date(), self.time());
        encode_civil(civil, CivilForm::Local, "PrimitiveDateTime", self, out)
    }

    fn decode_key(component: &str) -> Result<Self, KeyError> {
        decode_civil(component, CivilForm::Local, "PrimitiveDateTime", |civil| {
            civil
                .to_time()
                .map(|(date, time)| time::PrimitiveDateTime::new(date, time))
        })
    }

    prefix_free_delimited!("PrimitiveDateTime");
}

/// Written `YYYY-MM-DD` (always 10 characters). Dates whose year is outside
/// `0000..=9999` are [`KeyError::OutOfRange`] (chrono's own range is ±262143).
#[cfg(feature = "chrono")]
impl KeyPart for chrono::NaiveDate {
    fn encode_key(&self, out: &mut String) -> Result<(), KeyError> {
        let civil = Civil::of_chrono(*self, chrono::NaiveTime::MIN);
        encode_civil(civil, CivilForm::Date, "NaiveDate", self, out)
    }

    fn decode_key(component: &str) -> Result<Self, KeyError> {
        decode_civil(component, CivilForm::Date, "NaiveDate", |civil| {
            civil.to_chrono().map(|(date, _)| date)
        })
    }

    prefix_free_delimited!("NaiveDate");
}

/// Written `YYYY-MM-DDTHH:MM:SS.nnnnnnnnn` (always 29 characters); a leap second as
/// second `60`, which sorts after second 59 and before the next minute, as chrono orders
/// it. Date-times whose year is outside `0000..=9999` are [`KeyError::OutOfRange`].
#[cfg(feature = "chrono")]
impl KeyPart for chrono::NaiveDateTime {
    fn encode_key(&self, out: &mut String) -> Result<(), KeyError> {
        let civil = Civil::of_chrono(self.date(), self.time());
        encode_civil(civil, CivilForm::Local, "NaiveDateTime", self, out)
    }

    fn decode_key(component: &str) -> Result<Self, KeyError> {
        decode_civil(component, CivilForm::Local, "NaiveDateTime", |civil| {
            civil
                .to_chrono()
                .map(|(date, time)| chrono::NaiveDateTime::new(date, time))
        })
    }

    prefix_free_delimited!("NaiveDateTime");
}

/// Written `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ` (always 30 characters, the form of
/// `time::OffsetDateTime`); a leap second as second `60`. Instants whose year is outside
/// `0000..=9999` are [`KeyError::OutOfRange`].
#[cfg(feature = "chrono")]
impl KeyPart for chrono::DateTime<chrono::Utc> {
    fn encode_key(&self, out: &mut String) -> Result<(), KeyError> {
        let utc = self.naive_utc();
        let civil = Civil::of_chrono(utc.date(), utc.time());
        encode_civil(civil, CivilForm::Utc, "DateTime<Utc>", self, out)
    }

    fn decode_key(component: &str) -> Result<Self, KeyError> {
        decode_civil(component, CivilForm::Utc, "DateTime<Utc>", |civil| {
            civil
                .to_chrono()
                .map(|(date, time)| chrono::NaiveDateTime::new(date, time).and_utc())
        })
    }

    prefix_free_delimited!("DateTime<Utc>");
}

/// Written lowercase hyphenated (36 characters), whose byte order equals the
/// UUID's byte order.
#[cfg(feature = "uuid")]
impl KeyPart for uuid::Uuid {
    fn encode_key(&self, out: &mut String) -> Result<(), KeyError> {
        let mut buf = uuid::Uuid::encode_buffer();
        out.push_str(self.hyphenated().encode_lower(&mut buf));
        Ok(())
    }

    fn decode_key(component: &str) -> Result<Self, KeyError> {
        const NAME: &str = "Uuid";
        let bytes = component.as_bytes();
        let well_formed = bytes.len() == 36
            && bytes.iter().enumerate().all(|(i, &b)| match i {
                8 | 13 | 18 | 23 => b == b'-',
                _ => matches!(b, b'0'..=b'9' | b'a'..=b'f'),
            });
        if !well_formed {
            return Err(malformed(
                NAME,
                component,
                "expected a lowercase hyphenated UUID",
            ));
        }
        uuid::Uuid::try_parse(component)
            .map_err(|_| malformed(NAME, component, "expected a lowercase hyphenated UUID"))
    }

    prefix_free_delimited!("Uuid");
}
