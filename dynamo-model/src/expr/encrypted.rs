//! Typed paths of encrypted fields: set and removed in updates, tested for existence in
//! conditions, never compared (the stored bytes are a ciphertext).

use crate::codec::AttrValue;
use std::marker::PhantomData;

// The plain value: an update seals it with the item's key and the `Db`'s current key when
// it is sent, as a put seals the field.
super::opaque::opaque_path!(EncryptedPath: EncryptedComparison, V: AttrValue, |_, value| {
    value.to_attr_opt()
});

/// The typed path of an encrypted field (`User::fields().ssn`, `#[dynamo(encrypt)]`): `V`
/// is the field's type.
///
/// A ciphertext cannot be compared with a value, so conditions and filters on it are
/// [`exists`](Self::exists) and [`not_exists`](Self::not_exists); an update's
/// [`set`](dynamo_model::item::Update::set) seals the new value with the item's key as a
/// put does, and [`remove`](dynamo_model::item::Update::remove) clears an `Option` field.
pub struct EncryptedPath<E, V> {
    name: &'static str,
    _marker: PhantomData<fn() -> (E, V)>,
}

impl<E, V> std::fmt::Debug for EncryptedPath<E, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EncryptedPath({})", self.name)
    }
}

impl<E, V> EncryptedPath<E, V> {
    #[doc(hidden)]
    pub const fn __new(name: &'static str) -> Self {
        EncryptedPath {
            name,
            _marker: PhantomData,
        }
    }

    /// The attribute name.
    pub const fn name(&self) -> &'static str {
        self.name
    }
}

#[diagnostic::on_unimplemented(
    message = "a #[dynamo(encrypt)] field cannot be compared in a condition or filter",
    note = "stored as a ciphertext: DynamoDB sees only the ciphertext of an encrypted attribute; test it with `exists()` / `not_exists()`, or compare the decoded value after reading it"
)]
/// Comparisons an encrypted field does not have: the stored value is a ciphertext, so
/// `eq`, `lt`, `begins_with`, ... on an [`EncryptedPath`] are a compile error naming the
/// reason. Implemented by no type.
pub trait EncryptedComparison: Sized {
    /// Never called: no type implements the trait.
    #[doc(hidden)]
    fn __never(self) -> std::convert::Infallible;
}
