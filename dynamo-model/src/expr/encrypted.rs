//! Typed paths of encrypted fields: set and removed in updates, tested for existence in
//! conditions, never compared (the stored bytes are a ciphertext).

use crate::codec::{AttrValue, EncodeError};
use crate::expr::{AttrPath, Condition};
use aws_sdk_dynamodb::types::AttributeValue;
use std::marker::PhantomData;

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

impl<E, V> Clone for EncryptedPath<E, V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E, V> Copy for EncryptedPath<E, V> {}

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

    /// `attribute_exists(path)`
    pub fn exists(self) -> Condition<E> {
        Condition::function("attribute_exists", AttrPath::Top(self.name))
    }

    /// `attribute_not_exists(path)`
    pub fn not_exists(self) -> Condition<E> {
        Condition::function("attribute_not_exists", AttrPath::Top(self.name))
    }
}

/// Comparisons an encrypted field does not have: the stored value is a ciphertext, so
/// `eq`, `lt`, `begins_with`, ... on an [`EncryptedPath`] are a compile error naming the
/// reason. Implemented by no type.
#[diagnostic::on_unimplemented(
    message = "a #[dynamo(encrypt)] field cannot be compared in a condition or filter",
    label = "stored as a ciphertext",
    note = "DynamoDB sees only the ciphertext of an encrypted attribute: test it with `exists()` / `not_exists()`, or compare the decoded value after reading it"
)]
pub trait EncryptedComparison {
    #[doc(hidden)]
    fn __never(self) -> std::convert::Infallible;
}

macro_rules! no_comparison {
    ($($name:ident($($arg:ident),*)),*) => {
        impl<E, V> EncryptedPath<E, V> {
            $(
                #[doc(hidden)]
                #[allow(unreachable_code)]
                pub fn $name<T>(self, $($arg: T),*) -> Condition<E>
                where
                    Self: EncryptedComparison,
                {
                    let _ = ($($arg),*);
                    match self.__never() {}
                }
            )*
        }
    };
}
no_comparison!(
    eq(value),
    ne(value),
    lt(value),
    le(value),
    gt(value),
    ge(value),
    between(low, high),
    is_in(values),
    begins_with(prefix),
    contains(value),
    size()
);

impl<E, V> crate::sealed::SettablePath for EncryptedPath<E, V> {}

/// The plain value: the update seals it with the item's key and the `Db`'s current key
/// when it is sent.
impl<E, V: AttrValue> crate::expr::SettablePath<E, V> for EncryptedPath<E, V> {
    fn attribute(&self) -> AttrPath {
        AttrPath::Top(self.name)
    }

    fn __encode(&self, value: &V) -> Result<Option<AttributeValue>, EncodeError> {
        value.to_attr_opt()
    }
}
