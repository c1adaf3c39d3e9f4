//! Entity ↔ item conversion.
//!
//! `#[derive(Entity)]` generates straight-line code that converts each field with
//! [`AttrValue`]: no intermediate `serde` data model, no second pass over the item, and
//! strings are moved out of decoded attributes rather than copied. Types the crate does
//! not know are stored through `serde_dynamo` when the field says `#[dynamo(serde)]`.

use crate::error::DecodeErrorKind;
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;

/// Why a value could not be turned into an attribute.
///
/// One pointer wide: every field's encoding returns a `Result` with it, so the success
/// path moves a small value, not a 56-byte error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeError(Box<EncodeErrorInner>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct EncodeErrorInner {
    message: String,
    number: bool,
    /// Refused by a key format (a field's attribute in the format's form).
    key: bool,
    path: String,
}

impl EncodeError {
    /// A value that cannot be stored, with the reason in words.
    #[cold]
    pub fn new(message: impl Into<String>) -> Self {
        EncodeError(Box::new(EncodeErrorInner {
            message: message.into(),
            number: false,
            key: false,
            path: String::new(),
        }))
    }

    /// A number outside what a DynamoDB number can hold (38 significant digits,
    /// magnitude from 1e-130 up to but excluding 1e126, finite).
    #[cold]
    pub fn number(message: impl Into<String>) -> Self {
        EncodeError(Box::new(EncodeErrorInner {
            message: message.into(),
            number: true,
            key: false,
            path: String::new(),
        }))
    }

    /// Whether the value was refused as a number out of DynamoDB's range.
    pub fn is_number(&self) -> bool {
        self.0.number
    }

    /// A value the field's key format cannot hold, refused when the field's attribute is
    /// written in the format's form (see [`AttributeForm`](dynamo_model::key::format::AttributeForm)).
    #[cold]
    pub(crate) fn key_format(e: &crate::error::KeyError) -> Self {
        EncodeError(Box::new(EncodeErrorInner {
            message: e.to_string(),
            number: false,
            key: true,
            path: String::new(),
        }))
    }

    /// Whether the value was refused by a key format
    /// ([`ValidationReason::KeyEncoding`](crate::ValidationReason::KeyEncoding), as in a
    /// key).
    pub fn is_key(&self) -> bool {
        self.0.key
    }

    /// The reason a request refused for this value gives: a number out of DynamoDB's
    /// range is [`InvalidNumber`](crate::ValidationReason::InvalidNumber), a value its key
    /// format cannot hold [`KeyEncoding`](crate::ValidationReason::KeyEncoding), anything
    /// else [`InvalidValue`](crate::ValidationReason::InvalidValue).
    pub(crate) fn validation_reason(&self) -> crate::ValidationReason {
        if self.is_number() {
            crate::ValidationReason::InvalidNumber
        } else if self.is_key() {
            crate::ValidationReason::KeyEncoding
        } else {
            crate::ValidationReason::InvalidValue
        }
    }

    /// Where inside the attribute the refused value is (`.member` and `[index]` steps,
    /// e.g. `.lines[2].price`); empty when it is the attribute itself.
    pub fn path(&self) -> &str {
        &self.0.path
    }

    /// Why the value was refused, without the path.
    pub fn reason(&self) -> &str {
        &self.0.message
    }

    /// This error, one step further down (`.member` or `[index]`, prepended).
    #[cold]
    pub fn at(mut self, step: impl std::fmt::Display) -> Self {
        self.0.path = format!("{step}{}", self.0.path);
        self
    }

    crate::error::path_steps!();
}

impl std::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.path.is_empty() {
            f.write_str(&self.0.message)
        } else {
            write!(f, "at {}: {}", self.0.path, self.0.message)
        }
    }
}

impl std::error::Error for EncodeError {}

/// A Rust value stored as one DynamoDB attribute.
///
/// Implemented for strings, all integer types, floats, `bool`, `Option`, `Vec`, maps
/// with string keys, sets (a `HashSet` or `BTreeSet` of `String`, of an integer type or
/// of [`Binary`]: a string, number or binary set, see [`SetElement`]), [`Binary`],
/// `time::OffsetDateTime` (feature `time`, stored as RFC 3339 UTC with nanoseconds so it
/// sorts), `time::Date` and `time::PrimitiveDateTime` (feature `time`),
/// `chrono::NaiveDate`, `chrono::NaiveDateTime` and `chrono::DateTime<Utc>` (feature
/// `chrono`) — every date type in the fixed-width form of its key encoding —,
/// `uuid::Uuid` (feature `uuid`) and [`Serde`] (anything serde can handle, through
/// `serde_dynamo`). Your own structs and enums get it from
/// [`derive(Attribute)`](macro@crate::Attribute).
///
/// ```
/// use dynamo_model::AttrValue;
/// use aws_sdk_dynamodb::types::AttributeValue;
///
/// assert_eq!(42u32.to_attr().unwrap(), AttributeValue::N("42".into()));
/// assert_eq!(u32::from_attr(AttributeValue::N("42".into())).unwrap(), 42);
/// // `None` is not stored at all, so sparse indexes and `attribute_not_exists` work.
/// assert_eq!(None::<u32>.to_attr_opt().unwrap(), None);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be stored as a DynamoDB attribute by dynamo-model",
    label = "unsupported field type",
    note = "supported: String, integers, floats, bool, Option, Vec, HashMap/BTreeMap<String, _>, HashSet/BTreeSet of String, of an integer type or of Binary (string, number and binary sets), Binary, OffsetDateTime, Date and PrimitiveDateTime (feature `time`), chrono's NaiveDate, NaiveDateTime and DateTime<Utc> (feature `chrono`), Uuid (feature `uuid`), and types with `#[derive(dynamo_model::Attribute)]`: add that derive to your own structs and enums; for a foreign type add `#[dynamo(serde)]` to the field to store it through serde_dynamo; a `Chunked<_>` field needs `#[dynamo(chunked)]`"
)]
pub trait AttrValue: Sized {
    /// The DynamoDB type every value of the type is stored as (`"S"`, `"N"`, `"M"`, ...),
    /// for the schema exports; `None` when it depends on the value.
    #[doc(hidden)]
    const __DYNAMO_TYPE: Option<&'static str> = None;

    /// Whether DynamoDB orders stored values of the type as the values are ordered, so
    /// that a range condition on the attribute (a multi-attribute index sort key) means
    /// what it says: `false` only for a key format whose stored text does not
    /// (`KeyFormat::ORDERED` of the key format module).
    #[doc(hidden)]
    const __ORDERED: bool = true;

    /// Encodes the value.
    fn to_attr(&self) -> Result<AttributeValue, EncodeError>;

    /// Encodes the value, or `None` when the attribute should not be written at all
    /// (`Option::None`, and empty sets, which DynamoDB rejects).
    #[inline]
    fn to_attr_opt(&self) -> Result<Option<AttributeValue>, EncodeError> {
        self.to_attr().map(Some)
    }

    /// Decodes the value, taking ownership of the attribute so strings are moved.
    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind>;

    /// The value of an attribute that is absent from the item (an error unless the type
    /// has a natural empty value, like `Option` or sets).
    #[inline]
    fn from_missing() -> Result<Self, DecodeErrorKind> {
        Err(DecodeErrorKind::Missing)
    }
}

/// A type stored as a map attribute of named members: `#[derive(Attribute)]` on a struct
/// with named fields implements it, so a typed path to such a field reaches its members
/// (`Order::fields().ship_to.field::<String>("city")`) in conditions and updates.
pub trait MapAttribute: AttrValue {}

/// The DynamoDB type name of an attribute value, for error messages.
pub fn type_name(value: &AttributeValue) -> &'static str {
    dynamodb_type(value).unwrap_or("unknown")
}

/// The DynamoDB type name of a value (`S`, `N`, `M`, ...), `None` for a type this crate
/// does not know.
pub(crate) fn dynamodb_type(value: &AttributeValue) -> Option<&'static str> {
    Some(match value {
        AttributeValue::S(_) => "S",
        AttributeValue::N(_) => "N",
        AttributeValue::B(_) => "B",
        AttributeValue::Bool(_) => "BOOL",
        AttributeValue::Null(_) => "NULL",
        AttributeValue::L(_) => "L",
        AttributeValue::M(_) => "M",
        AttributeValue::Ss(_) => "SS",
        AttributeValue::Ns(_) => "NS",
        AttributeValue::Bs(_) => "BS",
        _ => return None,
    })
}

#[cold]
pub(crate) fn wrong_type(expected: &'static str, found: &AttributeValue) -> DecodeErrorKind {
    DecodeErrorKind::WrongType {
        expected,
        found: type_name(found),
    }
}

impl AttrValue for String {
    const __DYNAMO_TYPE: Option<&'static str> = Some("S");
    #[inline]
    fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
        Ok(AttributeValue::S(self.clone()))
    }
    #[inline]
    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        match value {
            AttributeValue::S(s) => Ok(s),
            other => Err(wrong_type("S", &other)),
        }
    }
}

impl AttrValue for bool {
    const __DYNAMO_TYPE: Option<&'static str> = Some("BOOL");
    #[inline]
    fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
        Ok(AttributeValue::Bool(*self))
    }
    #[inline]
    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        match value {
            AttributeValue::Bool(b) => Ok(b),
            other => Err(wrong_type("BOOL", &other)),
        }
    }
}

/// A stored number that does not parse as the field's number type.
#[cold]
fn not_a(n: &str, type_name: &str, e: impl std::fmt::Display) -> DecodeErrorKind {
    DecodeErrorKind::Invalid(format!("number {n:?} is not a {type_name}: {e}"))
}

/// The numeric types, stored as a DynamoDB number (`N`): `$text` is the number's text,
/// `$v` bound to the value, and the stored text parses back as the type.
macro_rules! number_attr {
    ($($t:ty),* => |$v:ident| $text:expr) => {$(
        impl AttrValue for $t {
            const __DYNAMO_TYPE: Option<&'static str> = Some("N");
            #[inline]
            fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
                let $v = *self;
                $text.map(AttributeValue::N)
            }
            #[inline]
            fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
                match value {
                    AttributeValue::N(n) => n.parse::<$t>().map_err(|e| not_a(&n, stringify!($t), e)),
                    other => Err(wrong_type("N", &other)),
                }
            }
        }
    )*};
}
number_attr!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize
    => |v| integer_text(v.to_string(), std::mem::size_of_val(&v))
);
number_attr!(f32, f64 => |v| {
    // DynamoDB numbers: magnitude from 1e-130 up to (not including) 1e126.
    // The nearest double to each bound prints as the bound itself, so comparing
    // with the bounds as doubles decides exactly what the service accepts.
    #[allow(clippy::useless_conversion)] // the identity for f64; widens an f32
    let magnitude = f64::from(v.abs());
    if !v.is_finite() {
        Err(EncodeError::number(format!("{v} is not a number DynamoDB can store")))
    } else if magnitude != 0.0 && !(1e-130..1e126).contains(&magnitude) {
        Err(EncodeError::number(format!(
            "{v:e} is outside the range of a DynamoDB number (magnitude 1e-130 to below 1e126)"
        )))
    } else if v.abs() == 0.0 || (1e-7..1e15).contains(&v.abs()) {
        // Plain notation for ordinary magnitudes; exponent notation otherwise, since
        // `1e300` written out would exceed the 38 significant digits of a DynamoDB number.
        Ok(format!("{v}"))
    } else {
        Ok(format!("{v:e}"))
    }
});

/// The text of an integer `bytes` wide: DynamoDB numbers hold at most 38 significant
/// digits, which only 128-bit integers can exceed (u128::MAX has 39).
fn integer_text(n: String, bytes: usize) -> Result<String, EncodeError> {
    if bytes > 8 && crate::text::significant_digits(&n) > 38 {
        return Err(EncodeError::number(format!(
            "{n} has more than the 38 significant digits a DynamoDB number holds"
        )));
    }
    Ok(n)
}

impl<T: AttrValue> AttrValue for Option<T> {
    const __DYNAMO_TYPE: Option<&'static str> = T::__DYNAMO_TYPE;
    #[inline]
    fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
        match self {
            Some(v) => v.to_attr(),
            None => Ok(AttributeValue::Null(true)),
        }
    }
    #[inline]
    fn to_attr_opt(&self) -> Result<Option<AttributeValue>, EncodeError> {
        match self {
            Some(v) => v.to_attr_opt(),
            None => Ok(None),
        }
    }
    #[inline]
    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        match value {
            AttributeValue::Null(_) => Ok(None),
            other => T::from_attr(other).map(Some),
        }
    }
    #[inline]
    fn from_missing() -> Result<Self, DecodeErrorKind> {
        Ok(None)
    }
}

impl<T: AttrValue> AttrValue for Box<T> {
    const __DYNAMO_TYPE: Option<&'static str> = T::__DYNAMO_TYPE;
    #[inline]
    fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
        (**self).to_attr()
    }
    #[inline]
    fn to_attr_opt(&self) -> Result<Option<AttributeValue>, EncodeError> {
        (**self).to_attr_opt()
    }
    #[inline]
    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        T::from_attr(value).map(Box::new)
    }
    #[inline]
    fn from_missing() -> Result<Self, DecodeErrorKind> {
        T::from_missing().map(Box::new)
    }
}

impl<T: AttrValue> AttrValue for Vec<T> {
    const __DYNAMO_TYPE: Option<&'static str> = Some("L");
    #[inline]
    fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
        let mut list = Vec::with_capacity(self.len());
        for (i, v) in self.iter().enumerate() {
            // Inside a list `None` has to be kept as NULL to preserve positions.
            list.push(v.to_attr().map_err(|e| e.at_index(i))?);
        }
        Ok(AttributeValue::L(list))
    }
    #[inline]
    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        match value {
            AttributeValue::L(list) => list
                .into_iter()
                .enumerate()
                .map(|(i, v)| T::from_attr(v).map_err(|e| e.at_index(i)))
                .collect(),
            other => Err(wrong_type("L", &other)),
        }
    }
}

#[inline]
fn encode_map<'a, T: AttrValue + 'a>(
    entries: impl ExactSizeIterator<Item = (&'a String, &'a T)>,
) -> Result<AttributeValue, EncodeError> {
    let mut map = HashMap::with_capacity(entries.len());
    for (k, v) in entries {
        if let Some(v) = v.to_attr_opt().map_err(|e| e.at_member(k))? {
            map.insert(k.clone(), v);
        }
    }
    Ok(AttributeValue::M(map))
}

#[inline]
fn decode_map<T: AttrValue, C: FromIterator<(String, T)>>(
    value: AttributeValue,
) -> Result<C, DecodeErrorKind> {
    match value {
        AttributeValue::M(map) => map
            .into_iter()
            .map(|(k, v)| match T::from_attr(v) {
                Ok(v) => Ok((k, v)),
                Err(e) => Err(e.at_member(&k)),
            })
            .collect(),
        other => Err(wrong_type("M", &other)),
    }
}

/// `BTreeMap<String, T>` and `HashMap<String, T>`: a map (`M`) of the values' attributes.
macro_rules! map_attr {
    ($(impl [$($generics:tt)*] for $t:ty;)*) => {$(
        impl<T: AttrValue, $($generics)*> AttrValue for $t {
            const __DYNAMO_TYPE: Option<&'static str> = Some("M");
            #[inline]
            fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
                encode_map(self.iter())
            }
            #[inline]
            fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
                decode_map(value)
            }
        }
    )*};
}

map_attr! {
    impl [] for BTreeMap<String, T>;
    impl [S: BuildHasher + Default] for HashMap<String, T, S>;
}

/// Bytes stored as a DynamoDB binary (`B`) attribute (a plain `Vec<u8>` is a list of numbers).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Binary(pub Vec<u8>);

impl AttrValue for Binary {
    const __DYNAMO_TYPE: Option<&'static str> = Some("B");
    #[inline]
    fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
        Ok(AttributeValue::B(aws_sdk_dynamodb::primitives::Blob::new(
            self.0.clone(),
        )))
    }
    #[inline]
    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        match value {
            AttributeValue::B(b) => Ok(Binary(b.into_inner())),
            other => Err(wrong_type("B", &other)),
        }
    }
}

impl AttrValue for AttributeValue {
    #[inline]
    fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
        Ok(self.clone())
    }
    #[inline]
    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        Ok(value)
    }
}

/// Encodes `value` with `serde_dynamo`, then checks every number in it: `serde_dynamo`
/// writes any float it is given (`f64::MAX`, `1e-300`, NaN), which DynamoDB would only
/// refuse after the request is sent.
pub(crate) fn to_checked_attribute<T: serde::Serialize + ?Sized>(
    value: &T,
) -> Result<AttributeValue, EncodeError> {
    let av =
        serde_dynamo::to_attribute_value(value).map_err(|e| EncodeError::new(e.to_string()))?;
    check_numbers(&av)?;
    Ok(av)
}

/// A value stored through `serde_dynamo`: for field types without an [`AttrValue`]
/// implementation. `#[dynamo(serde)]` on a field uses it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Serde<T>(pub T);

impl<T> From<T> for Serde<T> {
    fn from(value: T) -> Self {
        Serde(value)
    }
}

impl<T: serde::Serialize + serde::de::DeserializeOwned> AttrValue for Serde<T> {
    fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
        to_checked_attribute(&self.0)
    }
    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        serde_dynamo::from_attribute_value(value)
            .map(Serde)
            .map_err(|e| DecodeErrorKind::Invalid(e.to_string()))
    }
}

/// Unix epoch seconds, stored as a DynamoDB number: the only form DynamoDB's TTL reads.
/// The stored type of `#[dynamo(ttl)]` fields (their paths compare against it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Epoch(pub i64);

impl AttrValue for Epoch {
    const __DYNAMO_TYPE: Option<&'static str> = Some("N");
    fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
        self.0.to_attr()
    }
    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        i64::from_attr(value).map(Epoch)
    }
}

impl From<i64> for Epoch {
    fn from(seconds: i64) -> Self {
        Epoch(seconds)
    }
}

#[cfg(feature = "time")]
impl From<time::OffsetDateTime> for Epoch {
    fn from(t: time::OffsetDateTime) -> Self {
        Epoch(t.unix_timestamp())
    }
}

/// A type a `#[dynamo(ttl)]` field may have: `OffsetDateTime` (feature `time`), `i64` or
/// `u64` epoch seconds, or an `Option` of those (no expiry).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a TTL field",
    label = "#[dynamo(ttl)] field",
    note = "DynamoDB's TTL reads epoch seconds: use time::OffsetDateTime (feature `time`), i64 or u64, optionally in Option"
)]
pub trait TtlValue: Sized + crate::sealed::TtlValue {
    /// How it is stored.
    type Stored: AttrValue;
    /// To epoch seconds.
    fn to_stored(&self) -> Self::Stored;
    /// From epoch seconds.
    fn from_stored(stored: Self::Stored) -> Result<Self, DecodeErrorKind>;
}

impl crate::sealed::TtlValue for i64 {}
impl crate::sealed::TtlValue for u64 {}
#[cfg(feature = "time")]
impl crate::sealed::TtlValue for time::OffsetDateTime {}
impl<T: TtlValue> crate::sealed::TtlValue for Option<T> {}

impl TtlValue for i64 {
    type Stored = Epoch;
    fn to_stored(&self) -> Epoch {
        Epoch(*self)
    }
    fn from_stored(stored: Epoch) -> Result<Self, DecodeErrorKind> {
        Ok(stored.0)
    }
}

impl TtlValue for u64 {
    type Stored = Epoch;
    fn to_stored(&self) -> Epoch {
        Epoch(i64::try_from(*self).unwrap_or(i64::MAX))
    }
    fn from_stored(stored: Epoch) -> Result<Self, DecodeErrorKind> {
        u64::try_from(stored.0)
            .map_err(|_| DecodeErrorKind::Invalid(format!("negative epoch seconds {}", stored.0)))
    }
}

#[cfg(feature = "time")]
impl TtlValue for time::OffsetDateTime {
    type Stored = Epoch;
    fn to_stored(&self) -> Epoch {
        Epoch(self.unix_timestamp())
    }
    fn from_stored(stored: Epoch) -> Result<Self, DecodeErrorKind> {
        time::OffsetDateTime::from_unix_timestamp(stored.0)
            .map_err(|e| DecodeErrorKind::Invalid(format!("epoch seconds {}: {e}", stored.0)))
    }
}

impl<T: TtlValue> TtlValue for Option<T> {
    type Stored = Option<T::Stored>;
    fn to_stored(&self) -> Self::Stored {
        self.as_ref().map(T::to_stored)
    }
    fn from_stored(stored: Self::Stored) -> Result<Self, DecodeErrorKind> {
        stored.map(T::from_stored).transpose()
    }
}

/// A type a `#[dynamo(version)]` field may have: `u64` (a narrower type could overflow
/// when the crate increments it). Sealed: implemented by the crate only.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a version field",
    label = "#[dynamo(version)] field",
    note = "a version is a u64 counting writes; 0 means never written"
)]
pub trait VersionValue: crate::sealed::VersionValue {
    /// The version as a number.
    fn get(&self) -> u64;

    /// Stores `version` (a history write sets the revision it wrote).
    fn set(&mut self, version: u64);
}

impl crate::sealed::VersionValue for u64 {}

impl VersionValue for u64 {
    fn get(&self) -> u64 {
        *self
    }

    fn set(&mut self, version: u64) {
        *self = version;
    }
}

#[cfg(any(
    feature = "time",
    feature = "chrono",
    feature = "uuid",
    feature = "ulid"
))]
mod dates;
#[cfg(any(feature = "export", feature = "double"))]
pub(crate) mod json;
mod number;
mod operand;
mod sets;
use number::check_numbers;
pub(crate) use number::{check_number, number_value, same_number};
pub use operand::{Numeric, Operand};
pub use sets::{SetAttribute, SetElement};

#[cfg(test)]
mod tests;
