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
    const __DYNAMO_TYPE: Option<&'static str> = Some("N");
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
        if !crate::codec::same_number(&value.to_string(), &n) {
            return Err(DecodeErrorKind::Invalid(format!(
                "number {n:?} has more digits than a Decimal holds exactly ({value})"
            )));
        }
        Ok(value)
    }
}

/// Bytes stored as a binary (`B`) attribute.
#[cfg(feature = "bytes")]
impl AttrValue for bytes::Bytes {
    const __DYNAMO_TYPE: Option<&'static str> = Some("B");
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
