//! `#[dynamo(encrypt)]` fields: stored as a ciphertext, so nowhere DynamoDB or the crate
//! reads the plain value.

use crate::check::{EntityModel, Field};
use crate::ctxt::Ctxt;

/// Each encrypted field is a plain stored field: in no key, not a value the crate sets or
/// compares, not compressed or chunked, not in an entity with history.
pub(super) fn check_encrypted_fields(cx: &mut Ctxt, m: &EntityModel) {
    for f in &m.fields {
        let Some(word) = &f.attrs.encrypt else {
            continue;
        };
        if let Some(why) = refusal(m, f) {
            cx.error_spanned_by(word, why);
        }
    }
}

fn refusal(m: &EntityModel, f: &Field) -> Option<&'static str> {
    let a = &f.attrs;
    Some(
        if f.in_primary_key || f.in_index_key || a.key_only.is_some() {
            "an encrypted field cannot be part of a key: DynamoDB reads key attributes in plain text (to store, sort and find the item); keep the field out of every key template and index key"
        } else if a.skip {
            "a skipped field is not stored, so there is nothing to encrypt"
        } else if a.version || a.ttl {
            "the version and the TTL cannot be encrypted: DynamoDB compares the version in conditions and reads the TTL to expire items"
        } else if a.created.is_some() || a.updated.is_some() || a.generate.is_some() {
            "a field the crate sets (`created`, `updated`, `generate`) cannot be encrypted: the crate writes it in conditions and updates in plain text"
        } else if a.compress.is_some() {
            "an encrypted field cannot also be compressed: a ciphertext does not compress, and compressing before encrypting leaks the value's size"
        } else if a.chunked.is_some() {
            "a chunked field cannot be encrypted: its chunk items are stored apart from the item the ciphertext is bound to"
        } else if m.versioned.is_some() {
            "an entity with history (`#[dynamo(history)]`) cannot have encrypted fields yet: its revisions are copies of the item under other keys, which a ciphertext bound to the item's key does not open"
        } else {
            return None;
        },
    )
}
