//! Why an encrypted attribute (`#[dynamo(encrypt)]`) could not be read.

/// Why the stored value of an encrypted field could not be decrypted (see
/// [`dynamo_model::encrypt`]); carried by
/// [`DecodeErrorKind::Encryption`](dynamo_model::DecodeErrorKind::Encryption).
///
/// None of them shows the value or the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncryptionError {
    /// The `Db` has no key provider (`Db::with_keys`), or the item was decoded where
    /// none is given (`Entity::from_item`, `StreamRecord::decode`).
    #[error("no key provider to decrypt it with (see Db::with_keys)")]
    NoKeys,
    /// The envelope names a key id the provider does not know (a key removed from the
    /// provider too early, or another application's key).
    #[error("encrypted with key `{0}`, which the key provider does not have")]
    UnknownKey(String),
    /// The ciphertext does not authenticate: a wrong key under a known id, a value moved
    /// from another item, attribute or entity type, or a changed byte.
    #[error(
        "the ciphertext does not authenticate: wrong key, moved from another item or attribute, or altered"
    )]
    Rejected,
    /// The attribute is not an envelope this crate writes: a plain value where a
    /// ciphertext belongs (written by another program, or before the field was
    /// encrypted), a truncated envelope, or an unknown format version.
    #[error("not an encrypted value: {0}")]
    Malformed(&'static str),
}
