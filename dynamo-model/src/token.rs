//! The token of a single-item write, by which the crate recognises the call's own write
//! after its response was lost, and which [`Error::OutcomeUnknown`](crate::Error::OutcomeUnknown)
//! hands back to resend the same write.

use crate::Item;
use aws_sdk_dynamodb::types::AttributeValue;
use base64::Engine;

/// A token unique to one put or update call, stored in the table's write-token attribute
/// ([`TableSchema::write_token`](crate::TableSchema::write_token)), by which the crate
/// recognises the call's own write after its response was lost.
///
/// 96 random bits (16 base64url characters): two calls that write the same item never
/// share one. The SDK serialises the request once per `send()` and resends the same bytes
/// on its retries, so every attempt of a call carries the same token.
///
/// A caller meets one in [`Error::OutcomeUnknown`](crate::Error::OutcomeUnknown), and hands it back to resend the same
/// write ([`Put::write_token`](dynamo_model::item::Put::write_token),
/// [`Update::write_token`](dynamo_model::item::Update::write_token)): the resent call then
/// recognises the first one's write as its own instead of applying it twice. The token
/// can be kept as text ([`as_str`](WriteToken::as_str), `Display`) and read back with
/// [`parse`](WriteToken::parse), e.g. across a restart.
///
/// ```
/// use dynamo_model::item::WriteToken;
///
/// let token = WriteToken::parse("AAAAAAAAAAAAAAAA").expect("16 base64url characters");
/// assert_eq!(token.to_string(), "AAAAAAAAAAAAAAAA");
/// assert!(WriteToken::parse("not a token").is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WriteToken(String);

impl std::fmt::Display for WriteToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl WriteToken {
    pub(crate) fn new() -> Self {
        let bytes = fastrand::u128(..).to_le_bytes();
        WriteToken(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&bytes[..12]))
    }

    /// The token as stored (16 base64url characters).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A token kept as text ([`as_str`](WriteToken::as_str)); `None` unless `text` has
    /// the form the crate draws (16 base64url characters).
    pub fn parse(text: &str) -> Option<Self> {
        let valid = text.len() == 16
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        valid.then(|| WriteToken(text.to_owned()))
    }

    /// The value stored in the item.
    pub(crate) fn value(&self) -> AttributeValue {
        AttributeValue::S(self.0.clone())
    }

    /// Whether `item` (the item as stored, returned with a failed condition) holds this
    /// token in `attribute`: then this very call wrote it.
    pub(crate) fn written_in(&self, item: Option<&Item>, attribute: &str) -> bool {
        matches!(
            item.and_then(|item| item.get(attribute)),
            Some(AttributeValue::S(stored)) if *stored == self.0
        )
    }
}
