//! Order-preserving encoding of values into DynamoDB key strings.
//!
//! A key template such as `ORDER#{created_at}#{order_id}` is rendered by
//! writing its literal text and, for every `{field}` placeholder, the encoding
//! produced by [`KeyPart::encode_key`]. DynamoDB compares string keys by their
//! UTF-8 bytes, so every encoding here is chosen such that:
//!
//! * the byte order of the encodings equals the logical order of the values
//!   (for strings: the byte order of the raw UTF-8);
//! * it is injective, and [`KeyPart::decode_key`] restores the value exactly;
//! * it never contains the [`DELIMITER`] `#`, so a value can never forge a
//!   delimiter, every `#` in a full key is a component boundary, and a
//!   whole-component prefix such as `ORDER#1#` can never match a longer value
//!   such as `ORDER#10#...`;
//! * when one encoding is a proper prefix of another, the byte that follows in
//!   the longer one sorts above `#`, so ranges on a component followed by
//!   more components are exact (see [`KeyPart`]'s *Composite keys*).
//!
//! | type | encoding |
//! |------|----------|
//! | `String` | the UTF-8 text; every character up to `%` (U+0000 to U+0025: controls, space, `!`, `"`, `#`, `$`, `%`) written as `%` and two uppercase hex digits, every other character as is |
//! | `u8` … `u128`, `usize` | zero-padded decimal, width of the type's `MAX` (`usize` as `u64`) |
//! | `i8` … `i128`, `isize` | `v >= 0`: zero-padded decimal, width of `MAX`; `v < 0`: `-` then `v - MIN` zero-padded to the same width (`isize` as `i64`) |
//! | `bool` | `false` / `true` |
//! | `time::OffsetDateTime` (feature `time`) | UTC, `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ` |
//! | `time::Date` (feature `time`) | `YYYY-MM-DD` |
//! | `time::PrimitiveDateTime` (feature `time`) | `YYYY-MM-DDTHH:MM:SS.nnnnnnnnn` (no offset) |
//! | `chrono::NaiveDate` (feature `chrono`) | `YYYY-MM-DD` |
//! | `chrono::NaiveDateTime` (feature `chrono`) | `YYYY-MM-DDTHH:MM:SS.nnnnnnnnn` (no offset); a leap second as second `60` |
//! | `chrono::DateTime<chrono::Utc>` (feature `chrono`) | `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ`; a leap second as second `60` |
//! | `uuid::Uuid` (feature `uuid`) | lowercase hyphenated |
//! | `ulid::Ulid` (feature `ulid`) | 26 characters of uppercase Crockford base32 |
//!
//! `u128` and `i128` values with more than 38 significant digits are refused
//! ([`KeyError::OutOfRange`]): key fields are also stored as number attributes, and a
//! DynamoDB number holds at most 38 significant digits.
//!
//! Dates and date-times have a fixed width, which is what makes their text sort like the
//! values: four digits of year, then two of month, day, hour, minute and second, and nine
//! of nanosecond. Years outside `0000..=9999` are refused ([`KeyError::OutOfRange`],
//! before anything is sent) rather than written in a wider or signed form: `time`
//! (without its `large-dates` feature) stops at ±9999 and chrono at ±262143, and a year
//! `-0001` or `10000` would need a sign or a fifth digit, which no other key of the same
//! field has, so it could not sort among them without widening every key already
//! stored. An `OffsetDateTime`'s year is the year of its UTC instant.
//!
//! ```text
//! 5i64            -> 0000000000000000005
//! -1i64           -> -9223372036854775807
//! i64::MIN        -> -0000000000000000000
//! "a#b"           -> a%23b
//! "John Smith"    -> John%20Smith
//! "100%"          -> 100%25
//! "é"             -> é
//! ORDER#{created_at}#{order_id}
//!                 -> ORDER#2024-01-02T03:04:05.000000000Z#00000000000000000042
//! ```
//!
//! An empty string is a valid component (`ORDER##x`), but DynamoDB rejects a
//! key attribute whose whole value is empty; that is checked by the caller.
//!
//! The table above is the encoding under the default delimiter `#`. A table, an entity
//! or an index template may declare another one (`.`, `_`, `|` or `:`); values are then
//! written by [`KeyPart::encode_key_with`], which keeps the same guarantees with that
//! delimiter in place of `#`: strings escape every character up to the delimiter's escape
//! character, fixed-width encodings escape only the delimiter (see [`Delimiter`] for the
//! table of what each delimiter escapes).

/// The default delimiter between key components ([`Delimiter::HASH`]).
///
/// No encoding produced by [`KeyPart::encode_key`] contains it, so every `#` in a full
/// key separates two components.
pub const DELIMITER: char = '#';

use super::delimiter::Delimiter;
use crate::codec::{AttrValue, EncodeError};
/// An attribute as a field's encoding gives it (`None`: the field writes none).
type Encoded = Result<Option<aws_sdk_dynamodb::types::AttributeValue>, EncodeError>;

pub use crate::error::KeyError;
use crate::text::push_padded_u64;
use crate::text::significant_digits;

fn malformed(type_name: &'static str, input: &str, reason: &'static str) -> KeyError {
    KeyError::Malformed {
        type_name,
        input: input.to_owned(),
        reason,
    }
}

/// A value that can be a component of a key template.
///
/// Implementations must guarantee that
///
/// * the byte order of encodings equals the logical order of values;
/// * distinct values have distinct encodings;
/// * no encoding contains [`DELIMITER`] (so a whole-component prefix such as
///   `ORDER#1#` never matches a longer value such as `ORDER#10#...`);
/// * when one encoding is a proper prefix of another, the byte that follows in
///   the longer one sorts above [`DELIMITER`]. Either every encoding has the
///   same length, or no encoding contains a byte at or below `#` (controls,
///   space, `!`, `"`, `#`): otherwise ranges on a component followed by more
///   components return wrong items (see [Composite keys](#composite-keys));
/// * `decode_key` inverts `encode_key` and accepts nothing else.
///
/// Custom string-like types can delegate to [`escape_str`], which keeps every
/// rule.
///
/// These rules are stated for the default delimiter `#`; [`encode_key_with`] carries them
/// over to the other delimiters a table or template may declare (see [`Delimiter`]). Its
/// default escapes the `#`-encoding like a string value under that delimiter, which keeps
/// every rule for any implementation that keeps them for `#`. A type whose encodings are
/// never a proper prefix of one another may write them more compactly (the built-in
/// integer, date and UUID types escape only the delimiter) by overriding the three
/// `_with` methods together.
///
/// [`encode_key_with`]: KeyPart::encode_key_with
///
/// # Composite keys
///
/// In a key such as `N#{name}#{n}` a component is followed by `#` and more
/// text, so keys sort by `enc(name) + "#" + …`, not by `enc(name)` alone. A
/// range on `name` is exact only if `a < b` implies `enc(a) + "#" + x <
/// enc(b) + "#" + y` whatever `x` and `y` are. That fails when `enc(a)` is a
/// proper prefix of `enc(b)` and the next byte of `enc(b)` sorts below `#`:
/// with `"` or `!` written as is, `b!` (`N#b!#…`) would sort *below* `b`
/// (`N#b#…`), so `name <= "b"` would return `b!` and `name >= "John"` would
/// miss `John Smith` (space, 0x20). Hence the last rule above, which every
/// built-in encoding keeps:
///
/// * strings contain no byte at or below `%` (0x25): those characters are
///   written as `%` and two uppercase hex digits (`#` as `%23`, space as
///   `%20`, `%` as `%25`), and the bytes of multi-byte UTF-8 characters are
///   all 0x80 or above. The escape keeps the order: `%` sorts below every
///   character written as is, and uppercase hex digits sort like the values
///   they write;
/// * integers, dates, timestamps and UUIDs have a fixed width per type (a negative
///   integer starts with `-`, a non-negative one with a digit, so neither is
///   a prefix of the other), and `false` / `true` are no prefix of each other.
///
/// The sort-key conditions of [`keyspace::sort`](dynamo_model::keyspace::sort) rely on it:
/// the keys whose component equals `v` are exactly those in `[v#, v$]` (with delimiter `d`,
/// in `[v d, v d']`, `d'` the character after `d`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used in a key template",
    label = "this field is used in a key template",
    note = "key fields must implement `dynamo_model::KeyPart`: String, integers, bool, time::OffsetDateTime, time::Date and time::PrimitiveDateTime (feature `time`), chrono::NaiveDate, chrono::NaiveDateTime and chrono::DateTime<Utc> (feature `chrono`), uuid::Uuid (feature `uuid`), or your own type implementing it"
)]
pub trait KeyPart: Sized {
    /// Whether the byte order of encoded values is the order of the values themselves
    /// (`true` for every built-in encoding but `key_format = "unpadded"`). A part that
    /// does not keep order takes equality only in sort-key conditions: a range
    /// (`lt`, `le`, `gt`, `ge`, `between`) or `starts_with` on it is refused before
    /// sending ([`KeyError::Unordered`]), since it would compare text (`10` before `9`)
    /// and silently leave items out.
    const KEEPS_ORDER: bool = true;

    /// Appends the order-preserving encoding of `self` to `out`.
    fn encode_key(&self, out: &mut String) -> Result<(), KeyError>;

    /// Parses one component produced by `encode_key` (already split from the
    /// full key, e.g. with [`split_components`]).
    ///
    /// Decoding is strict: only the exact output of `encode_key` is accepted;
    /// anything else is a [`KeyError::Malformed`].
    fn decode_key(component: &str) -> Result<Self, KeyError>;

    /// Appends the encoding of `self` in a key whose components `delimiter` separates:
    /// [`encode_key`](KeyPart::encode_key) for `#`. For another delimiter the default
    /// escapes the `#`-encoding as a string value ([`Delimiter::escape_str`]): it then
    /// contains no byte up to the delimiter's escape character, and sorts, and is a prefix
    /// of another, exactly as the `#`-encoding is.
    fn encode_key_with(&self, delimiter: Delimiter, out: &mut String) -> Result<(), KeyError> {
        if delimiter == Delimiter::HASH {
            return self.encode_key(out);
        }
        let mut text = String::new();
        self.encode_key(&mut text)?;
        delimiter.escape_str(&text, out)
    }

    /// Parses one component [`encode_key_with`](KeyPart::encode_key_with) wrote with
    /// `delimiter`, as strictly as [`decode_key`](KeyPart::decode_key).
    fn decode_key_with(component: &str, delimiter: Delimiter) -> Result<Self, KeyError> {
        if delimiter == Delimiter::HASH {
            return Self::decode_key(component);
        }
        let text = delimiter.unescape_str(component, std::any::type_name::<Self>())?;
        Self::decode_key(&text)
    }

    /// Whether `component` is exactly the encoding under `delimiter` of some value (the
    /// check the entity registry runs on each field of a key).
    #[doc(hidden)]
    fn __accepts(component: &str, delimiter: Delimiter) -> bool {
        Self::decode_key_with(component, delimiter).is_ok()
    }

    /// Decodes `component` and encodes the value as a stored key field's attribute (what
    /// an update that creates its item writes, having no entity to encode).
    #[doc(hidden)]
    fn __key_attribute(component: &str, delimiter: Delimiter) -> Result<Encoded, KeyError>
    where
        Self: AttrValue,
    {
        Self::decode_key_with(component, delimiter).map(|value| value.to_attr_opt())
    }

    /// The value as a key template's placeholder renders it (the generated code's entry
    /// points are this trait's methods, so a field type that is not a `KeyPart` is
    /// reported once, however many of them the derive calls).
    #[doc(hidden)]
    fn __field(&self) -> part::Part<'_, Self> {
        part::field(self)
    }

    /// Appends what the encodings under `delimiter` of the values starting with `partial`
    /// start with, for `starts_with` on a component: under `#` the partial text escaped
    /// like a string value ([`escape_str`]; the text of a number or a timestamp is its own
    /// escape), under another delimiter the escape of that, as
    /// [`encode_key_with`](KeyPart::encode_key_with) escapes the `#`-encoding.
    fn escape_partial_with(
        partial: &str,
        delimiter: Delimiter,
        out: &mut String,
    ) -> Result<(), KeyError> {
        if delimiter == Delimiter::HASH {
            return escape_str(partial, out);
        }
        let mut text = String::new();
        escape_str(partial, &mut text)?;
        delimiter.escape_str(&text, out)
    }
}

/// An argument accepted where a key field of type `T` is expected: `T`, `&T`,
/// and `&str` for `String` fields. Sealed: implemented by the crate only (implement
/// [`KeyPart`] for a type of your own).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used as a key argument of type `{T}`",
    note = "pass a `{T}` or a `&{T}` (or a `&str` for a `String` field)"
)]
pub trait KeyArg<T>: crate::sealed::KeyArg<T> {
    /// Appends the encoding of this argument, as a value of type `T`, in a key whose
    /// components `delimiter` separates, to `out`.
    fn encode_key_arg(&self, delimiter: Delimiter, out: &mut String) -> Result<(), KeyError>;
}

impl<T: KeyPart> crate::sealed::KeyArg<T> for T {}
impl<T: KeyPart> crate::sealed::KeyArg<T> for &T {}
impl crate::sealed::KeyArg<String> for &str {}

impl<T: KeyPart> KeyArg<T> for T {
    fn encode_key_arg(&self, delimiter: Delimiter, out: &mut String) -> Result<(), KeyError> {
        self.encode_key_with(delimiter, out)
    }
}

impl<T: KeyPart> KeyArg<T> for &T {
    fn encode_key_arg(&self, delimiter: Delimiter, out: &mut String) -> Result<(), KeyError> {
        (**self).encode_key_with(delimiter, out)
    }
}

impl KeyArg<String> for &str {
    fn encode_key_arg(&self, delimiter: Delimiter, out: &mut String) -> Result<(), KeyError> {
        delimiter.escape_str(self, out)
    }
}

/// A template field that may be absent, as used by sparse indexes: a
/// `T: KeyPart` is always present, an `Option<T>` is present when `Some`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used in an index key template",
    label = "this field is used in an index key template",
    note = "index key fields implement `dynamo_model::KeyPart` (String, integers, bool, time::OffsetDateTime, time::Date and time::PrimitiveDateTime with feature `time`, chrono::NaiveDate, chrono::NaiveDateTime and chrono::DateTime<Utc> with feature `chrono`, uuid::Uuid with feature `uuid`, or your own type), optionally wrapped in `Option` for a sparse index"
)]
pub trait OptionalKeyPart: crate::sealed::OptionalKeyPart {
    /// The key part when present (`T` for both `T` and `Option<T>`): what queries on the
    /// index take.
    type Part: KeyPart;

    /// Appends the encoding (in a key whose components `delimiter` separates) to `out`
    /// and returns `true` if the value is present; returns `false` and leaves `out`
    /// unchanged if it is absent.
    fn encode_optional_key(
        &self,
        delimiter: Delimiter,
        out: &mut String,
    ) -> Result<bool, KeyError> {
        match self.present() {
            Some(value) => value.encode_key_with(delimiter, out).map(|()| true),
            None => Ok(false),
        }
    }

    /// The value when present.
    fn present(&self) -> Option<&Self::Part>;

    /// The value holding `part` (`part` itself, or `Some(part)`): a field read back from
    /// an index key.
    #[doc(hidden)]
    fn from_part(part: Self::Part) -> Self;

    /// The value as an index key template's placeholder renders it (see
    /// [`KeyPart::__field`]).
    #[doc(hidden)]
    fn __present(&self) -> part::Part<'_, Self>
    where
        Self: Sized,
    {
        part::present(self)
    }

    /// Decodes an index key component into the field (`T`, or `Some` of it).
    #[doc(hidden)]
    fn __decode(component: &str, delimiter: Delimiter) -> Result<Self, KeyError>
    where
        Self: Sized,
    {
        <Self::Part as KeyPart>::decode_key_with(component, delimiter).map(Self::from_part)
    }
}

impl<T: KeyPart> crate::sealed::OptionalKeyPart for T {}
impl<T: KeyPart> crate::sealed::OptionalKeyPart for Option<T> {}

impl<T: KeyPart> OptionalKeyPart for T {
    type Part = T;

    fn present(&self) -> Option<&T> {
        Some(self)
    }

    fn from_part(part: T) -> Self {
        part
    }
}

impl<T: KeyPart> OptionalKeyPart for Option<T> {
    type Part = T;

    fn present(&self) -> Option<&T> {
        self.as_ref()
    }

    fn from_part(part: T) -> Self {
        Some(part)
    }
}

/// Splits a full key string into its components at the default delimiter `#` (for
/// another delimiter, [`Delimiter::split`]).
///
/// Encoded values never contain [`DELIMITER`], so every `#` is a boundary.
/// Escapes stay inside the returned slices, so each one can be passed to
/// [`KeyPart::decode_key`]. A key without delimiters yields one component; an
/// empty key yields one empty component.
pub fn split_components(key: &str) -> impl Iterator<Item = &str> {
    Delimiter::HASH.split(key)
}

/// Escapes a raw string value exactly like `String::encode_key` and appends
/// it to `out`; used to build partial (prefix) keys (under another delimiter,
/// [`Delimiter::escape_str`]).
///
/// Every character up to `%` (U+0000 to U+0025: controls, space, `!`, `"`,
/// `#`, `$`, `%`) becomes `%` and two uppercase hex digits; every other
/// character is copied unchanged. The result contains no byte below `%`, so it
/// sorts like the raw value even when `#` and more components follow it. The
/// encoding of a prefix of a value is a prefix of the value's encoding (and
/// only then), so `begins_with` on an escaped partial value is exact. The
/// built-in escaping never fails; the `Result` leaves room for stricter rules.
///
/// ```
/// let mut out = String::from("N#");
/// dynamo_model::key::escape_str("John Smith #1", &mut out)?;
/// assert_eq!(out, "N#John%20Smith%20%231");
/// # Ok::<(), dynamo_model::key::KeyError>(())
/// ```
#[inline]
pub fn escape_str(value: &str, out: &mut String) -> Result<(), KeyError> {
    Delimiter::HASH.escape_str(value, out)
}

/// Every character up to the delimiter's escape character is escaped (see
/// [`Delimiter`]); decoding accepts exactly what encoding writes.
impl KeyPart for String {
    fn encode_key(&self, out: &mut String) -> Result<(), KeyError> {
        escape_str(self, out)
    }

    fn decode_key(component: &str) -> Result<Self, KeyError> {
        Delimiter::HASH.unescape_str(component, "String")
    }

    fn encode_key_with(&self, delimiter: Delimiter, out: &mut String) -> Result<(), KeyError> {
        delimiter.escape_str(self, out)
    }

    fn decode_key_with(component: &str, delimiter: Delimiter) -> Result<Self, KeyError> {
        delimiter.unescape_str(component, "String")
    }

    fn escape_partial_with(
        partial: &str,
        delimiter: Delimiter,
        out: &mut String,
    ) -> Result<(), KeyError> {
        delimiter.escape_str(partial, out)
    }
}

/// The [`KeyPart`] methods for another delimiter, for a type no encoding of which is a
/// proper prefix of another (fixed width, or a sign that tells the forms apart): only the
/// delimiter and its escape character are escaped (see [`Delimiter`]).
macro_rules! prefix_free_delimited {
    ($name:expr) => {
        fn encode_key_with(&self, delimiter: Delimiter, out: &mut String) -> Result<(), KeyError> {
            let start = out.len();
            self.encode_key(out)?;
            delimiter.escape_fixed_tail(out, start);
            Ok(())
        }

        fn decode_key_with(component: &str, delimiter: Delimiter) -> Result<Self, KeyError> {
            let text = delimiter
                .unescape_fixed(component)
                .map_err(|reason| malformed($name, component, reason))?;
            Self::decode_key(&text)
        }

        fn escape_partial_with(
            partial: &str,
            delimiter: Delimiter,
            out: &mut String,
        ) -> Result<(), KeyError> {
            let start = out.len();
            escape_str(partial, out)?;
            delimiter.escape_fixed_tail(out, start);
            Ok(())
        }
    };
}

mod integers;
#[cfg(test)]
use integers::width;

impl KeyPart for bool {
    fn encode_key(&self, out: &mut String) -> Result<(), KeyError> {
        out.push_str(if *self { "true" } else { "false" });
        Ok(())
    }

    fn decode_key(component: &str) -> Result<Self, KeyError> {
        match component {
            "false" => Ok(false),
            "true" => Ok(true),
            _ => Err(malformed("bool", component, "expected `false` or `true`")),
        }
    }

    prefix_free_delimited!("bool");
}

#[cfg(any(
    feature = "time",
    feature = "chrono",
    feature = "uuid",
    feature = "ulid"
))]
mod dates;
pub(super) mod part;

/// A type's name without its module paths (`Formatted<u64, Unpadded>`), for errors.
pub(crate) fn short_type_name<T>() -> &'static str {
    static NAMES: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashMap<&'static str, &'static str>>,
    > = std::sync::OnceLock::new();
    let full = std::any::type_name::<T>();
    let names = NAMES.get_or_init(Default::default);
    let mut names = names
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    names.entry(full).or_insert_with(|| {
        let mut short = String::with_capacity(full.len());
        let mut word = String::new();
        for ch in full.chars() {
            if ch.is_alphanumeric() || ch == '_' || ch == ':' {
                word.push(ch);
            } else {
                short.push_str(word.rsplit("::").next().unwrap_or(&word));
                word.clear();
                short.push(ch);
            }
        }
        short.push_str(word.rsplit("::").next().unwrap_or(&word));
        Box::leak(short.into_boxed_str())
    })
}

#[cfg(test)]
mod tests;
