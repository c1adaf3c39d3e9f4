//! Encrypted fields (`#[dynamo(encrypt)]`): authenticated encryption with keys you supply.
//!
//! A field marked `#[dynamo(encrypt)]` is encoded as usual, then its attribute is replaced
//! by a binary envelope before anything is sent: AES-256-GCM (aws-lc-rs, the library the
//! SDK's TLS already builds) over the attribute value, with a random 96-bit nonce and the
//! id of the key that sealed it. The associated data binds the ciphertext to where it is
//! stored: the item's primary key, the attribute name and the entity type. A ciphertext
//! copied to another item, another attribute or another entity type does not
//! authenticate, and neither does an altered byte or a wrong key: reading it fails with
//! [`DecodeErrorKind::Encryption`](crate::DecodeErrorKind::Encryption), never with a wrong
//! value and never with a panic. A plain value where a ciphertext belongs is refused too.
//!
//! Keys come from a [`KeyProvider`] given to the table handle with
//! [`Db::with_keys`](crate::Db::with_keys): [`LocalKeys`] holds them in memory. A `Db`
//! without one refuses to write such an entity
//! ([`ValidationReason::EncryptionKeys`](crate::ValidationReason::EncryptionKeys)) and
//! cannot read its encrypted fields ([`EncryptionError::NoKeys`]).
//!
//! Rotation: seal new values with a new key, keep the old ones for reading. Every
//! envelope names its key, so old items still read; a rewrite (a put, or an update that
//! sets the field) seals with the current key.
//!
//! ```
//! use dynamo_model::encrypt::{DataKey, LocalKeys};
//! # use dynamo_model::{Db, Table};
//! # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
//! let keys = LocalKeys::new("2025-01", DataKey::new([7; 32]))
//!     // Rotation: "2026-01" seals from now on, "2025-01" still opens older values.
//!     .rotate("2026-01", DataKey::new([8; 32]));
//! let db = Db::<App>::offline("app").with_keys(keys);
//! ```
//!
//! What the field can no longer do, since the stored value is a ciphertext: be part of a
//! key template (primary or index), be the version, TTL, creation or update time or a
//! generated id, be compressed or chunked, be compared in a condition or filter (its
//! typed path is an [`EncryptedPath`](crate::EncryptedPath), with
//! `exists`/`not_exists` only) or be changed in place by an update (`add`, `append`, set
//! operations): all compile errors. An update [`set`](dynamo_model::item::Update::set) seals the
//! new value with the item's key as a put does.
//!
//! See the [guide chapter](dynamo_model::guide::p24_encrypted_fields) for the design and how to
//! plug in AWS KMS.

mod envelope;
#[cfg(test)]
mod tests;

pub use envelope::{ENVELOPE_OVERHEAD, FORMAT_VERSION};
pub(crate) use envelope::{Fields, open_item, seal_item, seal_value};

pub use crate::error::EncryptionError;

use aws_lc_rs::aead::{AES_256_GCM, LessSafeKey, UnboundKey};

/// A 256-bit AES-GCM key. Its `Debug` never shows the key.
pub struct DataKey(LessSafeKey);

impl DataKey {
    /// The key of these 32 bytes (from a secret store, or a data key KMS decrypted).
    pub fn new(bytes: [u8; 32]) -> DataKey {
        // A 32-byte key is AES-256-GCM's length, the only error `UnboundKey::new` has.
        match UnboundKey::new(&AES_256_GCM, &bytes) {
            Ok(key) => DataKey(LessSafeKey::new(key)),
            Err(_) => unreachable!("AES-256-GCM takes a 32-byte key"),
        }
    }

    /// The key of `bytes`, which must be 32 bytes long (`None` otherwise).
    pub fn from_slice(bytes: &[u8]) -> Option<DataKey> {
        <[u8; 32]>::try_from(bytes).ok().map(DataKey::new)
    }

    /// A new random key, from the operating system's generator (`None` if it fails).
    pub fn generate() -> Option<DataKey> {
        let mut bytes = [0u8; 32];
        aws_lc_rs::rand::fill(&mut bytes).ok()?;
        Some(DataKey::new(bytes))
    }

    pub(crate) fn aead(&self) -> &LessSafeKey {
        &self.0
    }
}

impl std::fmt::Debug for DataKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DataKey(..)")
    }
}

/// Where the keys of encrypted fields come from: one current key that seals new values,
/// and every key that may have sealed a stored value, by id.
///
/// Implement it to fetch keys from your secret store or from AWS KMS (see the
/// [guide](dynamo_model::guide::p24_encrypted_fields)); [`LocalKeys`] holds them in memory. The
/// calls are synchronous and on every write and read of an encrypted field: resolve keys
/// ahead (e.g. decrypt data keys with KMS at start-up), do not call a service here.
pub trait KeyProvider: Send + Sync + 'static {
    /// The id and the key new values are sealed with (`None`: writes are refused). An id
    /// is 1 to 255 bytes, stored in every envelope.
    fn current(&self) -> Option<(&str, &DataKey)>;

    /// The key of `id`, to open a value it sealed (`None`: unknown).
    fn key(&self, id: &str) -> Option<&DataKey>;
}

/// Keys held in memory, by id: one current key and older ones that still decrypt.
#[derive(Debug)]
pub struct LocalKeys {
    keys: Vec<(String, DataKey)>,
    current: usize,
}

impl LocalKeys {
    /// Keys with `key` under `id` as the current one.
    pub fn new(id: impl Into<String>, key: DataKey) -> LocalKeys {
        LocalKeys {
            keys: vec![(id.into(), key)],
            current: 0,
        }
    }

    /// Adds `key` under `id` for reading only (values an older key sealed). A key
    /// already under `id` is replaced.
    pub fn with_key(mut self, id: impl Into<String>, key: DataKey) -> LocalKeys {
        self.insert(id.into(), key);
        self
    }

    /// Makes `key` under `id` the current key (rotation): it seals new values, and the
    /// keys held before still open what they sealed.
    pub fn rotate(mut self, id: impl Into<String>, key: DataKey) -> LocalKeys {
        self.current = self.insert(id.into(), key);
        self
    }

    fn insert(&mut self, id: String, key: DataKey) -> usize {
        match self.keys.iter().position(|(known, _)| *known == id) {
            Some(i) => {
                self.keys[i].1 = key;
                i
            }
            None => {
                self.keys.push((id, key));
                self.keys.len() - 1
            }
        }
    }
}

impl KeyProvider for LocalKeys {
    fn current(&self) -> Option<(&str, &DataKey)> {
        self.keys
            .get(self.current)
            .map(|(id, key)| (id.as_str(), key))
    }

    fn key(&self, id: &str) -> Option<&DataKey> {
        self.keys
            .iter()
            .find(|(known, _)| known == id)
            .map(|(_, key)| key)
    }
}
