//! Dates, times and identifiers as key parts: fixed-width RFC 3339 UTC timestamps,
//! calendar dates, lowercase hyphenated UUIDs, uppercase ULIDs.
use super::*;

/// [`KeyPart`] for date and date-time types: the fixed-width form of each
/// ([`CivilValue`]). A value with none (a year outside 0000–9999) is
/// [`KeyError::OutOfRange`]; decoding accepts exactly that form, of a real date and time.
#[cfg(any(feature = "time", feature = "chrono"))]
macro_rules! civil_key_part {
    ($($(#[$attr:meta])* $t:ty;)*) => {$(
        $(#[$attr])*
        impl KeyPart for $t {
            fn encode_key(&self, out: &mut String) -> Result<(), KeyError> {
                self.push_civil(out).map_err(|reason| KeyError::OutOfRange {
                    type_name: <$t>::NAME,
                    value: self.to_string(),
                    reason,
                })
            }

            fn decode_key(component: &str) -> Result<Self, KeyError> {
                <$t>::parse_civil(component).map_err(|reason| malformed(<$t>::NAME, component, reason))
            }

            prefix_free_delimited!(<$t>::NAME);
        }
    )*};
}

#[cfg(any(feature = "time", feature = "chrono"))]
use crate::text::civil::CivilValue;

#[cfg(any(feature = "time", feature = "chrono"))]
civil_key_part! {
    /// Converted to UTC and written as `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ` (always 30
    /// characters). The offset is not preserved: decoding yields the same instant
    /// in UTC. Instants whose UTC year is outside `0000..=9999` are
    /// [`KeyError::OutOfRange`].
    #[cfg(feature = "time")]
    time::OffsetDateTime;
    /// Written `YYYY-MM-DD` (always 10 characters). Dates whose year is outside
    /// `0000..=9999` are [`KeyError::OutOfRange`].
    #[cfg(feature = "time")]
    time::Date;
    /// Written `YYYY-MM-DDTHH:MM:SS.nnnnnnnnn` (always 29 characters; no offset, as the
    /// value has none). Date-times whose year is outside `0000..=9999` are
    /// [`KeyError::OutOfRange`].
    #[cfg(feature = "time")]
    time::PrimitiveDateTime;
    /// Written `YYYY-MM-DD` (always 10 characters). Dates whose year is outside
    /// `0000..=9999` are [`KeyError::OutOfRange`] (chrono's own range is ±262143).
    #[cfg(feature = "chrono")]
    chrono::NaiveDate;
    /// Written `YYYY-MM-DDTHH:MM:SS.nnnnnnnnn` (always 29 characters); a leap second as
    /// second `60`, which sorts after second 59 and before the next minute, as chrono orders
    /// it. Date-times whose year is outside `0000..=9999` are [`KeyError::OutOfRange`].
    #[cfg(feature = "chrono")]
    chrono::NaiveDateTime;
    /// Written `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ` (always 30 characters, the form of
    /// `time::OffsetDateTime`); a leap second as second `60`. Instants whose year is outside
    /// `0000..=9999` are [`KeyError::OutOfRange`].
    #[cfg(feature = "chrono")]
    chrono::DateTime<chrono::Utc>;
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

/// Written as its 26 characters of Crockford base32, uppercase, whose byte order equals
/// the ULID's order (its millisecond timestamp first, then its randomness): ULIDs made
/// later sort after, as a sort key of items in creation order. Decoding accepts exactly
/// that form (not lowercase, not the letters Crockford reads as digits), so that one
/// ULID has one key.
#[cfg(feature = "ulid")]
impl KeyPart for ulid::Ulid {
    fn encode_key(&self, out: &mut String) -> Result<(), KeyError> {
        let mut buf = [0; ulid::ULID_LEN];
        out.push_str(self.array_to_str(&mut buf));
        Ok(())
    }

    fn decode_key(component: &str) -> Result<Self, KeyError> {
        const EXPECTED: &str = "expected 26 characters of uppercase Crockford base32";
        let malformed_ulid = || malformed("Ulid", component, EXPECTED);
        let ulid = ulid::Ulid::from_string(component).map_err(|_| malformed_ulid())?;
        let mut buf = [0; ulid::ULID_LEN];
        if ulid.array_to_str(&mut buf) != component {
            return Err(malformed_ulid());
        }
        Ok(ulid)
    }

    prefix_free_delimited!("Ulid");
}
