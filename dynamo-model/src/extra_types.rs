//! Attribute support for types of other crates, each behind its feature:
//! `rust_decimal::Decimal` (feature `rust_decimal`) as an exact DynamoDB number,
//! `bytes::Bytes` (feature `bytes`) as a binary attribute, and `serde_json::Value`
//! (feature `serde_json`) as the attribute serde_dynamo makes of it (objects as maps,
//! arrays as lists, numbers as numbers).

#[cfg(any(feature = "rust_decimal", feature = "bytes", feature = "serde_json"))]
use crate::codec::{AttrValue, EncodeError};
#[cfg(any(feature = "rust_decimal", feature = "bytes", feature = "serde_json"))]
use crate::error::DecodeErrorKind;
#[cfg(any(feature = "rust_decimal", feature = "bytes", feature = "serde_json"))]
use aws_sdk_dynamodb::types::AttributeValue;

/// An exact decimal, stored as a DynamoDB number without rounding: a `Decimal` has at most
/// 28 significant digits and a magnitude under 8e28, within what a DynamoDB number holds
/// (38 digits). Reading accepts every way DynamoDB writes a number (`1.50`, `1.5E+3`);
/// a stored number a `Decimal` cannot hold exactly (more than 28 digits, or too large) is a
/// decode error, never a rounded value.
#[cfg(feature = "rust_decimal")]
impl AttrValue for rust_decimal::Decimal {
    fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
        Ok(AttributeValue::N(self.to_string()))
    }

    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        let n = match value {
            AttributeValue::N(n) => n,
            other => return Err(crate::codec::wrong_type("N", &other)),
        };
        let parsed = if n.contains(['e', 'E']) {
            rust_decimal::Decimal::from_scientific(&n)
        } else {
            n.parse::<rust_decimal::Decimal>()
        };
        let value = parsed.map_err(|e| {
            DecodeErrorKind::Invalid(format!("number {n:?} is not an exact Decimal: {e}"))
        })?;
        // Parsing may round what it cannot hold: refuse a value that is not the stored
        // number.
        if !same_number(&value.to_string(), &n) {
            return Err(DecodeErrorKind::Invalid(format!(
                "number {n:?} has more digits than a Decimal holds exactly ({value})"
            )));
        }
        Ok(value)
    }
}

/// Whether two decimal texts are the same number (significant digits, sign and
/// magnitude compared, so `1.50`, `1.5` and `15E-1` are one number).
#[cfg(feature = "rust_decimal")]
pub(crate) fn same_number(a: &str, b: &str) -> bool {
    fn normal(n: &str) -> Option<(bool, String, i64)> {
        let (negative, unsigned) = match n.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, n.strip_prefix('+').unwrap_or(n)),
        };
        let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
            Some(i) => (&unsigned[..i], unsigned[i + 1..].parse::<i64>().ok()?),
            None => (unsigned, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits = format!("{int}{frac}");
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let Some(first) = digits.bytes().position(|b| b != b'0') else {
            return Some((false, String::new(), 0)); // zero, whatever its sign
        };
        let last = digits.bytes().rposition(|b| b != b'0').unwrap_or(first);
        // The power of ten of the first significant digit.
        let magnitude = exponent
            .checked_add(int.len() as i64)?
            .checked_sub(1 + first as i64)?;
        Some((negative, digits[first..=last].to_owned(), magnitude))
    }
    matches!((normal(a), normal(b)), (Some(x), Some(y)) if x == y)
}

/// Bytes stored as a binary (`B`) attribute.
#[cfg(feature = "bytes")]
impl AttrValue for bytes::Bytes {
    fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
        Ok(AttributeValue::B(aws_sdk_dynamodb::primitives::Blob::new(
            self.to_vec(),
        )))
    }

    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        match value {
            AttributeValue::B(b) => Ok(bytes::Bytes::from(b.into_inner())),
            other => Err(crate::codec::wrong_type("B", &other)),
        }
    }
}

/// Any JSON value, stored as serde_dynamo stores it: an object as a map, an array as a
/// list, a string as a string, a number as a number (checked against DynamoDB's range
/// before sending), a boolean as a boolean, `null` as `NULL`. An absent attribute reads
/// as `null`.
#[cfg(feature = "serde_json")]
impl AttrValue for serde_json::Value {
    fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
        crate::codec::to_checked_attribute(self)
    }

    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        serde_dynamo::from_attribute_value(value)
            .map_err(|e| DecodeErrorKind::Invalid(e.to_string()))
    }

    fn from_missing() -> Result<Self, DecodeErrorKind> {
        Ok(serde_json::Value::Null)
    }
}

#[cfg(all(test, feature = "rust_decimal"))]
mod tests {
    use super::same_number;

    #[test]
    fn the_same_number_in_any_spelling() {
        for (a, b) in [
            ("1.5", "1.50"),
            ("1.5", "15E-1"),
            ("1500", "1.5E+3"),
            ("-0.001", "-1e-3"),
            ("0", "-0.000"),
            ("0.0", "0E5"),
        ] {
            assert!(same_number(a, b), "{a} {b}");
        }
        for (a, b) in [
            ("1.5", "1.6"),
            ("1.5", "-1.5"),
            ("15", "1.5"),
            ("1", "x"),
            ("1", ""),
        ] {
            assert!(!same_number(a, b), "{a} {b}");
        }
    }
}
