//! Key-part formats: a field rendered in a key as existing data has it, instead of the
//! default order-preserving encoding.
//!
//! Declared per field with `#[dynamo(key_format = "..")]`; the field keeps its type and
//! every key that uses it (the primary key, index keys, constructors, sort-key conditions,
//! decoding) reads and writes the declared text, and decoding accepts exactly that text:
//!
//! | `key_format`            | field types                          | a key holds                 |
//! |-------------------------|--------------------------------------|-----------------------------|
//! | `"unpadded"`            | integers                             | `7`, `-12`, `12345`         |
//! | `"padded(N)"`           | integers (non-negative values)       | `00000007` (`N` = 8)        |
//! | `"rfc3339"`             | timestamps                           | `2020-04-24T14:40:00Z`      |
//! | `"rfc3339(3)"`          | timestamps                           | `2020-04-24T14:40:00.250Z`  |
//! | `"rfc3339(0, no_z)"`    | timestamps                           | `2020-04-24T14:40:00`       |
//! | `"epoch_seconds"`       | instants                             | `1587739200`                |
//! | `"epoch_millis"`        | instants                             | `1587739200250`             |
//! | `"verbatim"`            | `String`                             | the string as it is         |
//!
//! `rfc3339` takes 0, 3, 6 or 9 fraction digits (`rfc3339(6)`), with `Z` unless `no_z`
//! is given; timestamps are `time::OffsetDateTime` and `time::PrimitiveDateTime` (feature
//! `time`), `chrono::DateTime<Utc>` and `chrono::NaiveDateTime` (feature `chrono`).
//! Instants are written in UTC, and a text without `Z` is read as UTC. Epoch formats
//! apply to instants (`OffsetDateTime`, `DateTime<Utc>`). Dates (`time::Date`,
//! `chrono::NaiveDate`) need no format: their default is already `YYYY-MM-DD`.
//!
//! # What a format gives up
//!
//! * A value the format cannot hold is refused when a key is rendered (before anything
//!   is sent), never rounded: a timestamp with more precision than its fraction digits, a
//!   negative or too wide number for `padded(N)`, a string containing the delimiter for
//!   `verbatim`.
//! * `unpadded` is not fixed-width: the byte order of keys is not the order of the
//!   values (`10` sorts before `9`), so a sort-key condition on such a field takes
//!   equality only: a range (`lt`, `le`, `gt`, `ge`, `between`) or `starts_with` on it is
//!   refused before sending with [`KeyError::Unordered`] (reason
//!   [`ValidationReason::UnorderedKeyPart`](crate::ValidationReason::UnorderedKeyPart))
//!   instead of silently leaving items out. The epoch formats are fixed-width between
//!   2001-09-09 and 2286-11-20 (10 digits of seconds, 13 of milliseconds), and ranges on
//!   them are allowed: keys of instants outside that window sort as text among the others.
//!   `verbatim` strings keep their order (text order is string order), but they are not
//!   escaped at all, so one value can be a prefix of another (`begins_with` on the component matches both) and a string
//!   whose characters sort below the delimiter breaks ranges over the components after
//!   it. Use them to read data that already has these forms; new designs keep the
//!   default.
//! * A shard or time bucket (`{field:shard(N)}`, `{field:date}`) is computed from the
//!   field's default encoding, so a formatted field cannot also be one (a compile error).
//!
//! ```
//! use dynamo_model::key::format::{Formatted, Rfc3339, Unpadded};
//! use dynamo_model::key::KeyPart;
//!
//! let mut key = String::new();
//! Formatted::<u64, Unpadded>::new(12345).encode_key(&mut key)?;
//! assert_eq!(key, "12345");
//! let at = Formatted::<time::OffsetDateTime, Rfc3339<0, false>>::decode_key("2020-04-24T14:40:00")?;
//! assert_eq!(at.into_inner(), time::macros::datetime!(2020-04-24 14:40:00 UTC));
//! # Ok::<(), dynamo_model::key::KeyError>(())
//! ```
//!
//! # The field's own attribute
//!
//! A formatted field that is also stored as a plain attribute (not `key_only`) holds the
//! value there in the same format, so one value has one text in the whole item: a device
//! log's `State#Date = WARNING1#2020-04-24T14:40:00` and `Date = 2020-04-24T14:40:00` (an
//! index may sort by `Date`) agree byte for byte, and a crate write keeps the other
//! program's layout. Each format declares its [`AttributeForm`]: `rfc3339(..)` writes a
//! string of the key text, the epoch formats a number of it, and `unpadded`, `padded(N)`
//! and `verbatim` keep the type's own attribute (a number is already its digits, a string
//! its text). Conditions and updates on the field, and a multi-attribute index key of it,
//! use the same form. Reads also accept the type's own encoding (what versions before
//! attribute forms wrote, `2020-04-24T14:40:00.000000000Z`): the value is the same and a
//! key field is checked against its key anyway; the next write stores the declared form.
//!
//! # Formats of your own
//!
//! `#[dynamo(key_format = MyFormat)]` (a type, not a string) names a format of your own:
//! implement [`KeyFormat`] for the field's type. The format says how a key writes and
//! reads the value, how it is carried under other delimiters ([`Escaping`]), whether its
//! texts sort like the values ([`KeyFormat::ORDERED`]) and how the field's attribute holds
//! the value ([`KeyFormat::ATTRIBUTE`]). It then serves everywhere a built-in format does:
//! the primary key, index templates, constructors, sort-key conditions, decoding.
//!
//! ```
//! use dynamo_model::key::format::{AttributeForm, Escaping, KeyFormat};
//! use dynamo_model::key::KeyError;
//! use dynamo_model::{Entity, Table};
//!
//! /// Meter numbers the other program writes in hexadecimal, eight digits (`0000002a`):
//! /// fixed width, so the texts sort like the numbers; the attribute stays a number.
//! pub struct Hex8;
//!
//! impl KeyFormat<u32> for Hex8 {
//!     const NAME: &'static str = "8-digit hex";
//!     const ESCAPING: Escaping = Escaping::Fixed;
//!     const ORDERED: bool = true;
//!     const ATTRIBUTE: AttributeForm = AttributeForm::Own;
//!
//!     fn encode(value: &u32, out: &mut String) -> Result<(), KeyError> {
//!         out.push_str(&format!("{value:08x}"));
//!         Ok(())
//!     }
//!
//!     fn decode(component: &str) -> Result<u32, KeyError> {
//!         let lower = component.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
//!         match u32::from_str_radix(component, 16) {
//!             Ok(value) if component.len() == 8 && lower => Ok(value),
//!             _ => Err(KeyError::Malformed {
//!                 type_name: Self::NAME,
//!                 input: component.to_owned(),
//!                 reason: "expected eight lowercase hex digits",
//!             }),
//!         }
//!     }
//! }
//!
//! #[derive(Table)]
//! #[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
//! struct Meters;
//!
//! #[derive(Entity)]
//! #[dynamo(table = Meters, pk = "m#{meter}", sk = "READING#{at}",
//!          index(GSI1, pk = "SITE#{site}", sk = "m#{meter}"))]
//! struct Reading {
//!     #[dynamo(key_format = Hex8)]
//!     meter: u32,
//!     at: u64,
//!     site: String,
//! }
//!
//! let key = Reading::key(ReadingKey { meter: 42u32, at: 7u64 });
//! assert_eq!(key.raw()?.pk, "m#0000002a");
//! // An index key too, with ranges in the format's order.
//! let _site = Reading::gsi1_partition("north");
//! let _above = Reading::gsi1_sk().meter().gt(41u32);
//! # Ok::<(), dynamo_model::Error>(())
//! ```

use super::delimiter::Delimiter;
use super::encode::{KeyArg, KeyPart};
use crate::codec::{AttrValue, EncodeError};
use crate::error::{DecodeErrorKind, KeyError};
use aws_sdk_dynamodb::types::AttributeValue;
use std::fmt;
use std::marker::PhantomData;

/// How a format writes values of type `T` as one key component (under the default
/// delimiter `#`). Implemented by the format markers of this module for the types they
/// apply to.
#[diagnostic::on_unimplemented(
    message = "key format `{Self}` does not apply to a field of type `{T}`",
    label = "the field's `key_format` is not one of this type's formats",
    note = "`unpadded` and `padded(N)` apply to integers, `rfc3339(..)` to timestamps, `epoch_seconds` and `epoch_millis` to instants (OffsetDateTime, DateTime<Utc>), `verbatim` to String; see dynamo_model::key::format"
)]
pub trait KeyFormat<T>: 'static {
    /// The format, for error messages.
    const NAME: &'static str;
    /// How the text is carried under a delimiter other than `#`.
    const ESCAPING: Escaping;
    /// Whether the byte order of the texts equals the order of the values (fixed width, or
    /// built to sort like the values), so that sort-key ranges (`lt`, `between`, ...) over
    /// a key part in this format select exactly the values in the range
    /// ([`KeyPart::KEEPS_ORDER`]). A part in a format that does not takes equality only:
    /// ranges and `starts_with` on it are refused before sending, and so are ranges on a
    /// multi-attribute index key attribute holding the text ([`AttributeForm::Text`] or
    /// [`AttributeForm::Number`]). `false` for `unpadded` (its attribute is a number).
    const ORDERED: bool;
    /// How the field's own attribute holds the value, when the field is also stored as a
    /// plain attribute (see [`AttributeForm`]).
    const ATTRIBUTE: AttributeForm;
    /// The smallest step of time the format holds, in nanoseconds (1 for a format of
    /// anything else): a time the crate sets itself (`#[dynamo(created)]`,
    /// `#[dynamo(updated)]`) is cut to it, since [`encode`](KeyFormat::encode) refuses
    /// what the format cannot hold.
    const RESOLUTION_NANOS: u64 = 1;

    /// Appends the text of `value`, or refuses a value the format cannot hold.
    fn encode(value: &T, out: &mut String) -> Result<(), KeyError>;

    /// Reads exactly the text [`encode`](KeyFormat::encode) writes.
    fn decode(component: &str) -> Result<T, KeyError>;
}

/// `Debug`, `Clone` and `PartialEq` for a wrapper of a `value` in format `F`: those of the
/// value, whatever `F` is (a derive would ask them of `F` too).
macro_rules! value_traits {
    ($wrapper:ident) => {
        impl<T: fmt::Debug, F> fmt::Debug for $wrapper<T, F> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.value.fmt(f)
            }
        }

        impl<T: Clone, F> Clone for $wrapper<T, F> {
            fn clone(&self) -> Self {
                $wrapper::new(self.value.clone())
            }
        }

        impl<T: PartialEq, F> PartialEq for $wrapper<T, F> {
            fn eq(&self, other: &Self) -> bool {
                self.value == other.value
            }
        }
    };
}

/// A value of type `T` rendered in keys with format `F` (see the [module](self) docs):
/// what a `#[dynamo(key_format = "..")]` field's key arguments, sort-key conditions and
/// decoding use. Arguments take the plain `T` (or `&T`, or `&str` for a `String`) in keys,
/// key conditions, conditions, filters and updates ([`Operand`](crate::Operand)), and a
/// formatted `String` keeps `begins_with` and `contains`; this wrapper is rarely written
/// by hand.
pub struct Formatted<T, F> {
    value: T,
    format: PhantomData<fn() -> F>,
}

impl<T, F> Formatted<T, F> {
    /// Wraps `value`.
    pub const fn new(value: T) -> Self {
        Formatted {
            value,
            format: PhantomData,
        }
    }

    /// The value.
    pub fn into_inner(self) -> T {
        self.value
    }

    /// The value, by reference.
    pub fn get(&self) -> &T {
        &self.value
    }
}

value_traits!(Formatted);

fn malformed(format: &'static str, input: &str, reason: &'static str) -> KeyError {
    KeyError::Malformed {
        type_name: format,
        input: input.to_owned(),
        reason,
    }
}

/// How the plain attribute of a field with a key format holds its value: one value has
/// one format in the whole item, so a key holding `WARNING1#2020-04-24T14:40:00` and the
/// field's attribute (which may itself be the key of an index) agree byte for byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AttributeForm {
    /// The field type's own attribute encoding, as without a key format: what the integer
    /// formats (a number attribute is already the number) and `verbatim` (a string is
    /// its own text) declare.
    Own,
    /// A string (`S`) holding exactly the key text [`KeyFormat::encode`] writes: what
    /// `rfc3339(..)` declares.
    Text,
    /// A number (`N`) holding the key text, which must be a DynamoDB number (a value whose
    /// text is not is refused before sending): what the epoch formats declare.
    Number,
}

/// How a format's text is carried under a delimiter other than `#`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escaping {
    /// Fixed width (no text is a proper prefix of another): only the delimiter and its
    /// escape character are escaped, as for the built-in fixed-width types.
    Fixed,
    /// Escaped like a string value ([`Delimiter::escape_str`]).
    Text,
    /// Written as it is under every delimiter; a text containing the delimiter is refused.
    None,
}

impl<T, F: KeyFormat<T>> KeyPart for Formatted<T, F> {
    const KEEPS_ORDER: bool = F::ORDERED;

    fn encode_key(&self, out: &mut String) -> Result<(), KeyError> {
        write::<T, F>(&self.value, Delimiter::HASH, out)
    }

    fn decode_key(component: &str) -> Result<Self, KeyError> {
        Self::decode_key_with(component, Delimiter::HASH)
    }

    fn encode_key_with(&self, delimiter: Delimiter, out: &mut String) -> Result<(), KeyError> {
        write::<T, F>(&self.value, delimiter, out)
    }

    fn decode_key_with(component: &str, delimiter: Delimiter) -> Result<Self, KeyError> {
        if delimiter == Delimiter::HASH && F::ESCAPING != Escaping::None {
            return F::decode(component).map(Formatted::new);
        }
        let text = match F::ESCAPING {
            Escaping::Fixed => delimiter
                .unescape_fixed(component)
                .map_err(|reason| malformed(F::NAME, component, reason))?
                .into_owned(),
            Escaping::Text => delimiter.unescape_str(component, F::NAME)?,
            Escaping::None => component.to_owned(),
        };
        if F::ESCAPING == Escaping::None && text.contains(delimiter.as_char()) {
            return Err(malformed(
                F::NAME,
                component,
                "contains the template's delimiter",
            ));
        }
        F::decode(&text).map(Formatted::new)
    }

    fn escape_partial_with(
        partial: &str,
        delimiter: Delimiter,
        out: &mut String,
    ) -> Result<(), KeyError> {
        // A partial value holding the delimiter would reach into the next components
        // (`starts_with("OK#2020")` would match state `OK` of 2020): refused, as a
        // whole value holding it is.
        let plain = delimiter == Delimiter::HASH || F::ESCAPING == Escaping::None;
        if plain && partial.contains(delimiter.as_char()) {
            return Err(KeyError::OutOfRange {
                type_name: F::NAME,
                value: partial.to_owned(),
                reason: "a partial key value cannot contain the template's delimiter",
            });
        }
        // The text of a format is its own escape under `#` (digits, `-`, `:`, `.`, `T`,
        // `Z`, or a verbatim string): a partial value is its own prefix.
        if delimiter == Delimiter::HASH {
            out.push_str(partial);
            return Ok(());
        }
        match F::ESCAPING {
            Escaping::Fixed => {
                let start = out.len();
                out.push_str(partial);
                delimiter.escape_fixed_tail(out, start);
                Ok(())
            }
            Escaping::Text => delimiter.escape_str(partial, out),
            Escaping::None => {
                out.push_str(partial);
                Ok(())
            }
        }
    }
}

impl<T, F: KeyFormat<T>> crate::sealed::KeyArg<Formatted<T, F>> for T {}
impl<T, F: KeyFormat<T>> crate::sealed::KeyArg<Formatted<T, F>> for &T {}

/// A formatted field's argument is its plain value.
impl<T, F: KeyFormat<T>> KeyArg<Formatted<T, F>> for T {
    fn encode_key_arg(&self, delimiter: Delimiter, out: &mut String) -> Result<(), KeyError> {
        write::<T, F>(self, delimiter, out)
    }
}

impl<T, F: KeyFormat<T>> KeyArg<Formatted<T, F>> for &T {
    fn encode_key_arg(&self, delimiter: Delimiter, out: &mut String) -> Result<(), KeyError> {
        write::<T, F>(self, delimiter, out)
    }
}

impl<F: KeyFormat<String>> crate::sealed::KeyArg<Formatted<String, F>> for &str {}

/// A formatted `String` field also takes a `&str`.
impl<F: KeyFormat<String>> KeyArg<Formatted<String, F>> for &str {
    fn encode_key_arg(&self, delimiter: Delimiter, out: &mut String) -> Result<(), KeyError> {
        write::<String, F>(&(*self).to_owned(), delimiter, out)
    }
}

/// Appends the text of `value` in format `F` as a component of a key `delimiter`
/// separates.
fn write<T, F: KeyFormat<T>>(
    value: &T,
    delimiter: Delimiter,
    out: &mut String,
) -> Result<(), KeyError> {
    let start = out.len();
    match F::ESCAPING {
        _ if delimiter == Delimiter::HASH && F::ESCAPING != Escaping::None => F::encode(value, out),
        Escaping::Fixed => {
            F::encode(value, out)?;
            delimiter.escape_fixed_tail(out, start);
            Ok(())
        }
        Escaping::Text => {
            let mut text = String::new();
            F::encode(value, &mut text)?;
            delimiter.escape_str(&text, out)
        }
        Escaping::None => {
            F::encode(value, out)?;
            if out[start..].contains(delimiter.as_char()) {
                let value = out[start..].to_owned();
                out.truncate(start);
                return Err(KeyError::OutOfRange {
                    type_name: F::NAME,
                    value,
                    reason: "a verbatim key part cannot contain the template's delimiter",
                });
            }
            Ok(())
        }
    }
}

/// Appends the key text of an optional field's value with format `F`: `false` (and
/// nothing written) when it is absent. What a sparse index template renders.
#[doc(hidden)]
pub fn encode_optional<V, F>(
    value: &V,
    delimiter: Delimiter,
    out: &mut String,
) -> Result<bool, KeyError>
where
    V: super::OptionalKeyPart,
    F: KeyFormat<V::Part>,
{
    match value.present() {
        Some(present) => write::<V::Part, F>(present, delimiter, out).map(|()| true),
        None => Ok(false),
    }
}

// ------------------------------------------------------------------ integers

/// Integers in plain decimal: no padding, `-` for negatives, no `+`, no leading zeros
/// (`0`, `7`, `-12`). Not fixed-width: keys no longer sort numerically.
pub struct Unpadded;

/// Non-negative integers zero-padded to `N` digits (`padded(8)`: `00000007`): sorts
/// numerically for values below `10^N`. A negative value or one with more than `N` digits
/// is refused.
pub struct Padded<const N: usize>;

/// Parses canonical decimal: an optional `-`, then digits without a leading zero (except
/// `0` itself, which is never negative).
fn parse_unpadded<T: std::str::FromStr>(component: &str) -> Result<T, KeyError> {
    const NAME: &str = "unpadded integer";
    let digits = component.strip_prefix('-').unwrap_or(component);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(malformed(
            NAME,
            component,
            "expected an optional `-` and digits",
        ));
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return Err(malformed(NAME, component, "leading zeros are not written"));
    }
    if digits == "0" && component.starts_with('-') {
        return Err(malformed(NAME, component, "zero is written `0`"));
    }
    component
        .parse()
        .map_err(|_| malformed(NAME, component, "value out of range for the field's type"))
}

/// A DynamoDB number holds at most 38 significant digits: a key part must be storable as
/// the field's number attribute too.
fn storable_digits(text: &str, type_name: &'static str) -> Result<(), KeyError> {
    if crate::text::significant_digits(text) > 38 {
        return Err(KeyError::OutOfRange {
            type_name,
            value: text.to_owned(),
            reason: "a DynamoDB number holds at most 38 significant digits",
        });
    }
    Ok(())
}

macro_rules! integer_formats {
    ($($t:ident)*) => {$(
        impl KeyFormat<$t> for Unpadded {
            const NAME: &'static str = "unpadded integer";
            // Digits and `-` are none of the delimiters: the other program's `U_12` is
            // read and written as it is under every delimiter.
            const ESCAPING: Escaping = Escaping::None;
            // `10` sorts before `9`: equality only in sort-key conditions.
            const ORDERED: bool = false;
            const ATTRIBUTE: AttributeForm = AttributeForm::Own;

            fn encode(value: &$t, out: &mut String) -> Result<(), KeyError> {
                let text = value.to_string();
                storable_digits(&text, stringify!($t))?;
                out.push_str(&text);
                Ok(())
            }

            fn decode(component: &str) -> Result<$t, KeyError> {
                storable_digits(component, stringify!($t))
                    .map_err(|_| malformed("unpadded integer", component, "more than 38 significant digits"))?;
                parse_unpadded(component)
            }
        }

        impl<const N: usize> KeyFormat<$t> for Padded<N> {
            const NAME: &'static str = "padded integer";
            const ESCAPING: Escaping = Escaping::Fixed;
            const ORDERED: bool = true;
            const ATTRIBUTE: AttributeForm = AttributeForm::Own;

            fn encode(value: &$t, out: &mut String) -> Result<(), KeyError> {
                let text = value.to_string();
                if text.starts_with('-') {
                    return Err(KeyError::OutOfRange {
                        type_name: stringify!($t),
                        value: text,
                        reason: "a padded key part holds no negative number",
                    });
                }
                if text.len() > N {
                    return Err(KeyError::OutOfRange {
                        type_name: stringify!($t),
                        value: text,
                        reason: "more digits than the key format's width",
                    });
                }
                storable_digits(&text, stringify!($t))?;
                out.extend(std::iter::repeat_n('0', N - text.len()));
                out.push_str(&text);
                Ok(())
            }

            fn decode(component: &str) -> Result<$t, KeyError> {
                if component.len() != N {
                    return Err(malformed("padded integer", component, "wrong number of digits"));
                }
                if !component.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(malformed("padded integer", component, "expected only ASCII digits"));
                }
                storable_digits(component, stringify!($t))
                    .map_err(|_| malformed("padded integer", component, "more than 38 significant digits"))?;
                component
                    .parse()
                    .map_err(|_| malformed("padded integer", component, "value out of range for the field's type"))
            }
        }
    )*};
}

integer_formats!(u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize);

// ------------------------------------------------------------------ strings

/// A string written as it is, under every delimiter: no escaping. A value containing the
/// template's delimiter is refused, so a key still splits into the same components. Gives up the prefix and order guarantees of the default
/// encoding (see the [module](self) docs).
pub struct Verbatim;

impl KeyFormat<String> for Verbatim {
    const NAME: &'static str = "verbatim string";
    const ESCAPING: Escaping = Escaping::None;
    // Text order is string order; what a value below the delimiter does to the components
    // after it is in the module docs.
    const ORDERED: bool = true;
    const ATTRIBUTE: AttributeForm = AttributeForm::Own;

    fn encode(value: &String, out: &mut String) -> Result<(), KeyError> {
        out.push_str(value);
        Ok(())
    }

    fn decode(component: &str) -> Result<String, KeyError> {
        Ok(component.to_owned())
    }
}

// ------------------------------------------------------------------ timestamps

/// RFC 3339 with `DIGITS` fraction digits (0, 3, 6 or 9; 0 writes no `.`) and a final
/// `Z` when `Z` is true: `2020-04-24T14:40:00Z`, `2020-04-24T14:40:00.250Z`,
/// `2020-04-24T14:40:00`. Instants are written in UTC; a text without `Z` is read as UTC.
/// Fixed-width for years 0000 to 9999, so keys sort by time. A value with more precision
/// than `DIGITS` is refused, never rounded.
pub struct Rfc3339<const DIGITS: u8, const Z: bool>;

/// Seconds since 1970-01-01T00:00:00Z in plain decimal (`1587739200`); negative before.
/// A value with a fraction of a second is refused.
pub struct EpochSeconds;

/// Milliseconds since 1970-01-01T00:00:00Z in plain decimal (`1587739200250`). A value
/// with a fraction of a millisecond is refused.
pub struct EpochMillis;

#[cfg(any(feature = "time", feature = "chrono"))]
// The two traits below are sealed (a private module): the formats' impls name them as
// bounds, which makes them reachable for the lint, but no user can name or implement them.
#[allow(private_interfaces)]
mod timestamps;

mod attribute;
mod operand;
pub use attribute::{FormattedAttr, FormattedOption};
#[cfg(test)]
mod tests;
