//! Typed paths of compressed fields: set and removed in updates, tested for existence in
//! conditions, never compared (the stored bytes are not the value).

use crate::compress::{Compressible, Compression, to_attr};
use std::marker::PhantomData;

/// The typed path of a compressed field (`Post::fields().body`): `V` is the field's type.
///
/// Stored bytes cannot be compared with a value, so conditions and filters on it are
/// [`exists`](Self::exists) and [`not_exists`](Self::not_exists); an update's
/// [`set`](dynamo_model::item::Update::set) compresses the new value as a put does, and
/// [`remove`](dynamo_model::item::Update::remove) clears an `Option` field.
pub struct CompressedPath<E, V> {
    name: &'static str,
    compression: Compression,
    _marker: PhantomData<fn() -> (E, V)>,
}

impl<E, V> std::fmt::Debug for CompressedPath<E, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CompressedPath({}, {:?})", self.name, self.compression)
    }
}

impl<E, V> CompressedPath<E, V> {
    #[doc(hidden)]
    pub const fn __new(name: &'static str, compression: Compression) -> Self {
        CompressedPath {
            name,
            compression,
            _marker: PhantomData,
        }
    }

    /// The attribute name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// How the field is compressed.
    pub const fn compression(&self) -> Compression {
        self.compression
    }
}

/// Comparisons a compressed field does not have: stored bytes are not the value, so
/// `eq`, `lt`, `begins_with`, ... on a [`CompressedPath`] are a compile error naming the
/// reason (rather than rustc's guess at another trait's method of the same name).
/// Implemented by no type.
#[diagnostic::on_unimplemented(
    message = "a #[dynamo(compress)] field cannot be compared in a condition or filter",
    label = "stored as compressed bytes",
    note = "a compressed attribute holds compressed bytes, not the value: test it with `exists()` / `not_exists()`, or keep a plain copy of what you need to compare in another field"
)]
pub trait CompressedComparison {
    #[doc(hidden)]
    fn __never(self) -> std::convert::Infallible;
}

super::opaque::opaque_path!(
    CompressedPath: CompressedComparison,
    V: Compressible,
    |path, value| to_attr(value, &path.compression)
);
