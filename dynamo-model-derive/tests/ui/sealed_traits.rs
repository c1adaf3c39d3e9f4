// Traits the crate implements for its own types are sealed: a hand implementation is
// refused, so they can grow without breaking anyone.
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::codec::EncodeError;
use dynamo_model::{AttrValue, DecodeErrorKind, Numeric};

struct Cents(i64);

impl AttrValue for Cents {
    fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
        self.0.to_attr()
    }
    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        i64::from_attr(value).map(Cents)
    }
}

impl Numeric for Cents {
    type Delta = i64;
}

fn main() {}
