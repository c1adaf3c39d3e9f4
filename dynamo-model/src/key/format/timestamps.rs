use super::*;

/// The calendar fields of a timestamp type, for the text formats.
#[diagnostic::on_unimplemented(
    message = "key format `rfc3339` does not apply to a field of type `{Self}`",
    label = "not a timestamp",
    note = "`rfc3339` applies to time::OffsetDateTime and time::PrimitiveDateTime (feature `time`), chrono::DateTime<Utc> and chrono::NaiveDateTime (feature `chrono`)"
)]
pub trait Timestamp: Sized {
    /// The type's name, for errors.
    const TYPE: &'static str;
    fn civil(&self) -> Result<crate::text::civil::Civil, &'static str>;
    fn from_civil(civil: crate::text::civil::Civil) -> Result<Self, &'static str>;
}

/// The nanoseconds since the epoch of an instant type, for the epoch formats. An instant is
/// a timestamp, named as one in errors.
#[diagnostic::on_unimplemented(
    message = "key formats `epoch_seconds` and `epoch_millis` do not apply to a field of type `{Self}`",
    label = "not an instant",
    note = "the epoch formats apply to time::OffsetDateTime (feature `time`) and chrono::DateTime<Utc> (feature `chrono`)"
)]
pub trait Instant: Timestamp {
    /// `None` for an instant no epoch count names (a leap second).
    fn epoch_nanos(&self) -> Option<i128>;
    fn from_epoch_nanos(nanos: i128) -> Option<Self>;
}

use crate::text::civil::{Civil, CivilValue};

const fn check_digits(digits: u8) {
    assert!(
        matches!(digits, 0 | 3 | 6 | 9),
        "rfc3339 takes 0, 3, 6 or 9 fraction digits"
    );
}

/// `YYYY-MM-DDTHH:MM:SS[.f{digits}][Z]`.
fn push_rfc3339(civil: &Civil, digits: u8, z: bool, out: &mut String) -> Result<(), &'static str> {
    let unit = 10u32.pow(9 - u32::from(digits));
    if !civil.nanosecond.is_multiple_of(unit) {
        return Err("more precision than the key format's fraction digits");
    }
    let mut text = String::with_capacity(30);
    civil.push(crate::text::civil::CivilForm::Local, &mut text);
    // `YYYY-MM-DDTHH:MM:SS.nnnnnnnnn`: keep the seconds and `digits` of the fraction.
    let keep = if digits == 0 {
        19
    } else {
        20 + usize::from(digits)
    };
    out.push_str(&text[..keep]);
    if z {
        out.push('Z');
    }
    Ok(())
}

fn parse_rfc3339(text: &str, digits: u8, z: bool) -> Result<Civil, &'static str> {
    const EXPECTED: &str = "expected RFC 3339 in the key format's exact form";
    let body = if z {
        text.strip_suffix('Z').ok_or(EXPECTED)?
    } else {
        text
    };
    let want = if digits == 0 {
        19
    } else {
        20 + usize::from(digits)
    };
    if body.len() != want || !body.is_ascii() {
        return Err(EXPECTED);
    }
    // Widen to the 29-character local form: the digits left out are zeros.
    let mut full = String::with_capacity(29);
    full.push_str(&body[..19]);
    if digits == 0 {
        full.push_str(".000000000");
    } else {
        if body.as_bytes()[19] != b'.' {
            return Err(EXPECTED);
        }
        full.push_str(&body[19..]);
        full.extend(std::iter::repeat_n('0', 9 - usize::from(digits)));
    }
    Civil::parse(&full, crate::text::civil::CivilForm::Local).map_err(|_| EXPECTED)
}

impl<T: Timestamp + 'static, const DIGITS: u8, const Z: bool> KeyFormat<T> for Rfc3339<DIGITS, Z> {
    const NAME: &'static str = "RFC 3339 timestamp";
    const ESCAPING: Escaping = {
        check_digits(DIGITS);
        Escaping::Fixed
    };
    const ORDERED: bool = true;
    const ATTRIBUTE: AttributeForm = AttributeForm::Text;
    const RESOLUTION_NANOS: u64 = 10u64.pow(9 - DIGITS as u32);

    fn encode(value: &T, out: &mut String) -> Result<(), KeyError> {
        let out_of_range = |reason| KeyError::OutOfRange {
            type_name: T::TYPE,
            value: String::from("(timestamp)"),
            reason,
        };
        let civil = value.civil().map_err(out_of_range)?;
        push_rfc3339(&civil, DIGITS, Z, out).map_err(out_of_range)
    }

    fn decode(component: &str) -> Result<T, KeyError> {
        parse_rfc3339(component, DIGITS, Z)
            .and_then(T::from_civil)
            .map_err(|reason| malformed("RFC 3339 timestamp", component, reason))
    }
}

fn epoch_encode<T: Instant>(value: &T, unit: i128, out: &mut String) -> Result<(), KeyError> {
    let nanos = value.epoch_nanos().ok_or(KeyError::OutOfRange {
        type_name: T::TYPE,
        value: String::from("(leap second)"),
        reason: "a leap second has no epoch count",
    })?;
    if nanos % unit != 0 {
        return Err(KeyError::OutOfRange {
            type_name: T::TYPE,
            value: nanos.to_string(),
            reason: "more precision than the key format's unit",
        });
    }
    out.push_str(&(nanos / unit).to_string());
    Ok(())
}

fn epoch_decode<T: Instant>(
    name: &'static str,
    component: &str,
    unit: i128,
) -> Result<T, KeyError> {
    let count: i128 = parse_unpadded(component)
        .map_err(|_| malformed(name, component, "expected a count in plain decimal"))?;
    count
        .checked_mul(unit)
        .and_then(T::from_epoch_nanos)
        .ok_or_else(|| malformed(name, component, "outside the type's range"))
}

/// The epoch formats: a count of `$unit` nanoseconds, in plain decimal.
macro_rules! epoch_formats {
    ($($format:ident: $name:literal, $unit:literal;)*) => {$(
        impl<T: Instant + 'static> KeyFormat<T> for $format {
            const NAME: &'static str = $name;
            // Plain decimal under every delimiter, like an unpadded integer.
            const ESCAPING: Escaping = Escaping::None;
            // Fixed width from 2001-09-09 to 2286-11-20 (10 digits of seconds, 13 of
            // milliseconds), where ranges are exact; see the module docs for instants outside.
            const ORDERED: bool = true;
            const ATTRIBUTE: AttributeForm = AttributeForm::Number;
            const RESOLUTION_NANOS: u64 = $unit;

            fn encode(value: &T, out: &mut String) -> Result<(), KeyError> {
                epoch_encode(value, $unit, out)
            }

            fn decode(component: &str) -> Result<T, KeyError> {
                epoch_decode($name, component, $unit)
            }
        }
    )*};
}

epoch_formats! {
    EpochSeconds: "epoch seconds", 1_000_000_000;
    EpochMillis: "epoch milliseconds", 1_000_000;
}

#[cfg(feature = "time")]
impl Timestamp for time::OffsetDateTime {
    const TYPE: &'static str = "OffsetDateTime";
    fn civil(&self) -> Result<Civil, &'static str> {
        let utc = self
            .checked_to_offset(time::UtcOffset::UTC)
            .ok_or(crate::text::civil::YEAR_RANGE)?;
        Civil::of_time(utc.date(), utc.time())
    }
    fn from_civil(civil: Civil) -> Result<Self, &'static str> {
        <Self as CivilValue>::from_civil(civil)
    }
}

/// The timestamps whose calendar fields are their [`CivilValue`] fields as they are (no
/// offset to convert first).
macro_rules! civil_timestamps {
    ($($(#[$cfg:meta])* $ty:ty;)*) => {$(
        $(#[$cfg])*
        impl Timestamp for $ty {
            const TYPE: &'static str = <Self as CivilValue>::NAME;
            fn civil(&self) -> Result<Civil, &'static str> {
                self.to_civil()
            }
            fn from_civil(civil: Civil) -> Result<Self, &'static str> {
                <Self as CivilValue>::from_civil(civil)
            }
        }
    )*};
}

civil_timestamps! {
    #[cfg(feature = "time")]
    time::PrimitiveDateTime;
    #[cfg(feature = "chrono")]
    chrono::DateTime<chrono::Utc>;
    #[cfg(feature = "chrono")]
    chrono::NaiveDateTime;
}

#[cfg(feature = "time")]
impl Instant for time::OffsetDateTime {
    fn epoch_nanos(&self) -> Option<i128> {
        Some(self.unix_timestamp_nanos())
    }
    fn from_epoch_nanos(nanos: i128) -> Option<Self> {
        time::OffsetDateTime::from_unix_timestamp_nanos(nanos).ok()
    }
}

#[cfg(feature = "chrono")]
impl Instant for chrono::DateTime<chrono::Utc> {
    fn epoch_nanos(&self) -> Option<i128> {
        // chrono carries a leap second as a nanosecond count of 1e9 or more within
        // second 59; epoch counts have no leap seconds, so `23:59:60.5` would share
        // the key of `00:00:00.5` the next day.
        let sub = self.timestamp_subsec_nanos();
        (sub < 1_000_000_000)
            .then(|| i128::from(self.timestamp()) * 1_000_000_000 + i128::from(sub))
    }
    fn from_epoch_nanos(nanos: i128) -> Option<Self> {
        let secs = i64::try_from(nanos.div_euclid(1_000_000_000)).ok()?;
        let sub = u32::try_from(nanos.rem_euclid(1_000_000_000)).ok()?;
        chrono::DateTime::from_timestamp(secs, sub)
    }
}
