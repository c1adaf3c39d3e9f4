//! The UTC calendar fields of the date and time types of `time` and `chrono`, from which
//! the time buckets of computed key parts are taken.
use super::*;
#[cfg(feature = "chrono")]
use chrono::Timelike as _;

/// [`BucketTime`] for a crate's date and date-time without an offset; `$fields` makes
/// the fields of a date and an hour.
macro_rules! local_bucket_times {
    ($feature:literal, $fields:ident: $date:ty, $date_time:ty) => {
        /// A date is its own UTC day (hour 0).
        #[cfg(feature = $feature)]
        impl BucketTime for $date {
            fn utc_fields(&self) -> Result<UtcFields, KeyError> {
                Ok($fields(*self, 0))
            }
        }

        /// A date and time without an offset is taken as UTC, as its key part is.
        #[cfg(feature = $feature)]
        impl BucketTime for $date_time {
            fn utc_fields(&self) -> Result<UtcFields, KeyError> {
                Ok($fields(self.date(), self.hour()))
            }
        }
    };
}

#[cfg(feature = "time")]
fn time_fields(date: time::Date, hour: u8) -> UtcFields {
    UtcFields {
        year: date.year(),
        month: u8::from(date.month()),
        day: date.day(),
        hour,
    }
}

#[cfg(feature = "time")]
impl BucketTime for time::OffsetDateTime {
    fn utc_fields(&self) -> Result<UtcFields, KeyError> {
        let utc = self
            .checked_to_offset(time::UtcOffset::UTC)
            .ok_or_else(|| KeyError::OutOfRange {
                type_name: "OffsetDateTime",
                value: self.to_string(),
                reason: "the instant has no UTC date",
            })?;
        Ok(time_fields(utc.date(), utc.hour()))
    }
}

local_bucket_times!("time", time_fields: time::Date, time::PrimitiveDateTime);

#[cfg(feature = "chrono")]
pub(super) fn chrono_fields(date: chrono::NaiveDate, hour: u32) -> UtcFields {
    use chrono::Datelike;
    UtcFields {
        year: date.year(),
        // Calendar months and days and clock hours: always below 256.
        month: date.month() as u8,
        day: date.day() as u8,
        hour: hour as u8,
    }
}

local_bucket_times!("chrono", chrono_fields: chrono::NaiveDate, chrono::NaiveDateTime);

#[cfg(feature = "chrono")]
impl BucketTime for chrono::DateTime<chrono::Utc> {
    fn utc_fields(&self) -> Result<UtcFields, KeyError> {
        self.naive_utc().utc_fields()
    }
}
