//! Text forms shared by keys and attributes: zero-padded decimals, the fixed-width UTC
//! timestamp, DynamoDB's count of significant digits. A leaf: it depends on nothing else
//! of the crate, so `key` and `codec` both build on it without depending on each other.

/// Appends `v` as decimal, left-padded with zeros to `width` digits.
/// `width` must be at least the number of digits of `v` (at most 20).
pub(crate) fn push_padded_u64(out: &mut String, mut v: u64, width: usize) {
    let mut buf = [b'0'; 20];
    let mut i = buf.len();
    while v > 0 {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
    }
    debug_assert!(buf.len() - i <= width && width <= buf.len());
    out.extend(buf[buf.len() - width..].iter().map(|&b| char::from(b)));
}

/// The significant digits of a decimal integer or number string: what DynamoDB counts
/// against its limit of 38.
pub(crate) fn significant_digits(n: &str) -> usize {
    n.trim_start_matches('-')
        .trim_start_matches('0')
        .trim_end_matches('0')
        .len()
}

/// The fixed-width text forms of dates and times (features `time` and `chrono`).
#[cfg(any(feature = "time", feature = "chrono"))]
pub(crate) mod civil {
    use super::push_padded_u64;

    /// Why a date outside the fixed-width forms' years cannot be written.
    pub(crate) const YEAR_RANGE: &str = "the year must be between 0000 and 9999";

    /// The fixed-width text forms of calendar dates and times, in keys and attributes. Every
    /// field is zero-padded to a fixed width and the fields go from the most significant to
    /// the least, so the byte order of the text is the order of the values, and two texts of
    /// one form never are a prefix of each other.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) enum CivilForm {
        /// `YYYY-MM-DD` (10 characters).
        Date,
        /// `YYYY-MM-DDTHH:MM:SS.nnnnnnnnn` (29 characters): a date-time without an offset.
        Local,
        /// `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ` (30 characters): an instant, in UTC.
        Utc,
    }

    impl CivilForm {
        /// The text's length and its fixed separators (byte position, byte).
        fn layout(self) -> (usize, &'static [(usize, u8)]) {
            const SEPARATORS: [(usize, u8); 7] = [
                (4, b'-'),
                (7, b'-'),
                (10, b'T'),
                (13, b':'),
                (16, b':'),
                (19, b'.'),
                (29, b'Z'),
            ];
            match self {
                CivilForm::Date => (10, &SEPARATORS[..2]),
                CivilForm::Local => (29, &SEPARATORS[..6]),
                CivilForm::Utc => (30, &SEPARATORS),
            }
        }

        /// What the text must look like, for error messages.
        pub(crate) fn expected(self) -> &'static str {
            match self {
                CivilForm::Date => "expected `YYYY-MM-DD`",
                CivilForm::Local => "expected `YYYY-MM-DDTHH:MM:SS.nnnnnnnnn`",
                CivilForm::Utc => "expected `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ`",
            }
        }
    }

    /// A calendar date and a time of day as the fixed-width forms write them: each field in
    /// the range its digits can hold (the year 0000 to 9999, the second up to 60 for a leap
    /// second). Whether the fields make a real date is for the date type to check.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) struct Civil {
        pub year: u16,
        pub month: u8,
        pub day: u8,
        pub hour: u8,
        pub minute: u8,
        /// 0 to 59, or 60 for a leap second (chrono represents them; `time` does not).
        pub second: u8,
        pub nanosecond: u32,
    }

    impl Civil {
        /// The fields of a date at midnight, or [`YEAR_RANGE`] for a year outside 0000–9999
        /// (a negative year would need a sign, and a fifth digit would break the fixed width).
        pub(crate) fn date(year: i32, month: u8, day: u8) -> Result<Civil, &'static str> {
            let year = u16::try_from(year)
                .ok()
                .filter(|y| *y <= 9999)
                .ok_or(YEAR_RANGE)?;
            Ok(Civil {
                year,
                month,
                day,
                hour: 0,
                minute: 0,
                second: 0,
                nanosecond: 0,
            })
        }

        /// The fields of a `time` date and time of day.
        #[cfg(feature = "time")]
        pub(crate) fn of_time(date: time::Date, t: time::Time) -> Result<Civil, &'static str> {
            Ok(Civil {
                hour: t.hour(),
                minute: t.minute(),
                second: t.second(),
                nanosecond: t.nanosecond(),
                ..Civil::date(date.year(), u8::from(date.month()), date.day())?
            })
        }

        /// The `time` date and time of day of these fields, or why there is none.
        #[cfg(feature = "time")]
        pub(crate) fn to_time(self) -> Result<(time::Date, time::Time), &'static str> {
            let month =
                time::Month::try_from(self.month).map_err(|_| "not a valid calendar date")?;
            let date = time::Date::from_calendar_date(i32::from(self.year), month, self.day)
                .map_err(|_| "not a valid calendar date")?;
            let t = time::Time::from_hms_nano(self.hour, self.minute, self.second, self.nanosecond)
                .map_err(|_| "not a valid time of day")?;
            Ok((date, t))
        }

        /// The fields of a `chrono` date and time of day; a leap second (a nanosecond count
        /// of one second or more, at second 59) is written as second 60, which sorts after
        /// second 59 and before the next minute, as chrono orders it.
        #[cfg(feature = "chrono")]
        pub(crate) fn of_chrono(
            date: chrono::NaiveDate,
            t: chrono::NaiveTime,
        ) -> Result<Civil, &'static str> {
            use chrono::{Datelike, Timelike};
            let (second, nanosecond) = match t.nanosecond().checked_sub(1_000_000_000) {
                Some(leap) => (60, leap),
                None => (t.second(), t.nanosecond()),
            };
            // Month 1-12, day 1-31, hour 0-23, minute and second 0-59: all fit in a u8.
            let small = |v: u32| u8::try_from(v).map_err(|_| "not a valid time of day");
            Ok(Civil {
                hour: small(t.hour())?,
                minute: small(t.minute())?,
                second: small(second)?,
                nanosecond,
                ..Civil::date(date.year(), small(date.month())?, small(date.day())?)?
            })
        }

        /// The `chrono` date and time of day of these fields (second 60: a leap second), or
        /// why there is none.
        #[cfg(feature = "chrono")]
        pub(crate) fn to_chrono(
            self,
        ) -> Result<(chrono::NaiveDate, chrono::NaiveTime), &'static str> {
            let date = chrono::NaiveDate::from_ymd_opt(
                i32::from(self.year),
                u32::from(self.month),
                u32::from(self.day),
            )
            .ok_or("not a valid calendar date")?;
            let (second, nanosecond) = if self.second == 60 {
                (59, self.nanosecond + 1_000_000_000)
            } else {
                (u32::from(self.second), self.nanosecond)
            };
            let t = chrono::NaiveTime::from_hms_nano_opt(
                u32::from(self.hour),
                u32::from(self.minute),
                second,
                nanosecond,
            )
            .ok_or("not a valid time of day")?;
            Ok((date, t))
        }

        /// Appends the text of `form` (a date form leaves the time out): the year, then
        /// each separator of the form's layout followed by the next field (the `Z` of an
        /// instant ends the text).
        pub(crate) fn push(&self, form: CivilForm, out: &mut String) {
            let fields: [(u64, usize); 7] = [
                (self.year.into(), 4),
                (self.month.into(), 2),
                (self.day.into(), 2),
                (self.hour.into(), 2),
                (self.minute.into(), 2),
                (self.second.into(), 2),
                (self.nanosecond.into(), 9),
            ];
            let (_, separators) = form.layout();
            push_padded_u64(out, fields[0].0, fields[0].1);
            for (i, &(_, separator)) in separators.iter().enumerate() {
                out.push(char::from(separator));
                if let Some(&(value, width)) = fields.get(i + 1) {
                    push_padded_u64(out, value, width);
                }
            }
        }

        /// Reads the text of `form`: exactly its length, its separators and ASCII digits
        /// everywhere else (no sign, no other width). The fields are only range-checked as
        /// far as their digits go; the date type checks the calendar.
        pub(crate) fn parse(text: &str, form: CivilForm) -> Result<Civil, &'static str> {
            let (len, separators) = form.layout();
            let bytes = text.as_bytes();
            if bytes.len() != len || separators.iter().any(|&(at, b)| bytes[at] != b) {
                return Err(form.expected());
            }
            let number = |range: std::ops::Range<usize>| -> Result<u32, &'static str> {
                bytes[range].iter().try_fold(0u32, |acc, &b| {
                    if b.is_ascii_digit() {
                        // At most 9 digits: cannot overflow a u32.
                        Ok(acc * 10 + u32::from(b - b'0'))
                    } else {
                        Err(form.expected())
                    }
                })
            };
            // At most 4 digits for the year and 2 for the others: the narrowing is lossless.
            let narrow = |v: u32| v as u8;
            let mut civil = Civil {
                year: number(0..4)? as u16,
                month: narrow(number(5..7)?),
                day: narrow(number(8..10)?),
                hour: 0,
                minute: 0,
                second: 0,
                nanosecond: 0,
            };
            if form != CivilForm::Date {
                civil.hour = narrow(number(11..13)?);
                civil.minute = narrow(number(14..16)?);
                civil.second = narrow(number(17..19)?);
                civil.nanosecond = number(20..29)?;
            }
            Ok(civil)
        }
    }

    /// A date or date-time type in its fixed-width form, in keys and attributes alike:
    /// the one place each type's conversion to and from [`Civil`] is written.
    pub(crate) trait CivilValue: Sized + std::fmt::Display {
        /// The form it is written in.
        const FORM: CivilForm;
        /// The type's name, for error messages.
        const NAME: &'static str;
        /// Its fields, or why it has no fixed-width form (a year outside 0000–9999).
        fn to_civil(&self) -> Result<Civil, &'static str>;
        /// The value of these fields, or why there is none.
        fn from_civil(civil: Civil) -> Result<Self, &'static str>;

        /// Appends its fixed-width text, or says why it has none.
        fn push_civil(&self, out: &mut String) -> Result<(), &'static str> {
            self.to_civil()?.push(Self::FORM, out);
            Ok(())
        }

        /// Reads its fixed-width text.
        fn parse_civil(text: &str) -> Result<Self, &'static str> {
            Civil::parse(text, Self::FORM).and_then(Self::from_civil)
        }
    }

    /// In UTC (the offset is not kept); the year in UTC must be 0000–9999.
    #[cfg(feature = "time")]
    impl CivilValue for time::OffsetDateTime {
        const FORM: CivilForm = CivilForm::Utc;
        const NAME: &'static str = "OffsetDateTime";
        fn to_civil(&self) -> Result<Civil, &'static str> {
            const UTC_YEAR: &str = "the year in UTC must be between 0000 and 9999";
            let utc = self
                .checked_to_offset(time::UtcOffset::UTC)
                .ok_or(UTC_YEAR)?;
            Civil::of_time(utc.date(), utc.time()).map_err(|_| UTC_YEAR)
        }
        fn from_civil(civil: Civil) -> Result<Self, &'static str> {
            let (date, time) = civil.to_time()?;
            Ok(time::PrimitiveDateTime::new(date, time).assume_utc())
        }
    }

    #[cfg(feature = "time")]
    impl CivilValue for time::Date {
        const FORM: CivilForm = CivilForm::Date;
        const NAME: &'static str = "Date";
        fn to_civil(&self) -> Result<Civil, &'static str> {
            Civil::date(self.year(), u8::from(self.month()), self.day())
        }
        fn from_civil(civil: Civil) -> Result<Self, &'static str> {
            civil.to_time().map(|(date, _)| date)
        }
    }

    /// A date-time without an offset, made of a date and a time of day: `$of` takes them
    /// apart into [`Civil`] fields, `$to` puts them back.
    macro_rules! local_civil_value {
        ($($(#[$attr:meta])* $t:ty: $name:literal, $of:ident, $to:ident;)*) => {$(
            $(#[$attr])*
            impl CivilValue for $t {
                const FORM: CivilForm = CivilForm::Local;
                const NAME: &'static str = $name;
                fn to_civil(&self) -> Result<Civil, &'static str> {
                    Civil::$of(self.date(), self.time())
                }
                fn from_civil(civil: Civil) -> Result<Self, &'static str> {
                    let (date, time) = civil.$to()?;
                    Ok(<$t>::new(date, time))
                }
            }
        )*};
    }

    local_civil_value! {
        #[cfg(feature = "time")]
        time::PrimitiveDateTime: "PrimitiveDateTime", of_time, to_time;
        #[cfg(feature = "chrono")]
        chrono::NaiveDateTime: "NaiveDateTime", of_chrono, to_chrono;
    }

    #[cfg(feature = "chrono")]
    impl CivilValue for chrono::NaiveDate {
        const FORM: CivilForm = CivilForm::Date;
        const NAME: &'static str = "NaiveDate";
        fn to_civil(&self) -> Result<Civil, &'static str> {
            Civil::of_chrono(*self, chrono::NaiveTime::MIN)
        }
        fn from_civil(civil: Civil) -> Result<Self, &'static str> {
            civil.to_chrono().map(|(date, _)| date)
        }
    }

    #[cfg(feature = "chrono")]
    impl CivilValue for chrono::DateTime<chrono::Utc> {
        const FORM: CivilForm = CivilForm::Utc;
        const NAME: &'static str = "DateTime<Utc>";
        fn to_civil(&self) -> Result<Civil, &'static str> {
            self.naive_utc().to_civil()
        }
        fn from_civil(civil: Civil) -> Result<Self, &'static str> {
            chrono::NaiveDateTime::from_civil(civil).map(|naive| naive.and_utc())
        }
    }
}
