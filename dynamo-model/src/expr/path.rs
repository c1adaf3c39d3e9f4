//! Typed paths: [`Path`] of a field, [`NestedPath`] into its maps and lists, and the
//! traits that say which paths an update may change.

use super::{AttrPath, Segment};
use crate::codec::{AttrValue, EncodeError};
use aws_sdk_dynamodb::types::AttributeValue;
use std::borrow::Cow;
use std::marker::PhantomData;

/// Marker: a field an update may change.
#[derive(Debug, Clone, Copy)]
pub enum Mutable {}

/// Marker: a field a primary key template is built from. Such a field can appear in
/// conditions but not in updates, because changing it would move the item to another key.
#[derive(Debug, Clone, Copy)]
pub enum KeyField {}

/// The path of a field a primary key template is built from, or of the version field
/// (which the crate manages): it takes conditions, not updates.
pub type KeyPath<E, V> = Path<E, V, KeyField>;

/// Variance-neutral marker: a path neither owns nor borrows an `E` or a `V`.
type PathMarker<E, V, M> = PhantomData<fn() -> (E, V, M)>;

/// The path of an attribute of entity `E` holding values of type `V`.
pub struct Path<E, V, M = Mutable> {
    name: &'static str,
    _marker: PathMarker<E, V, M>,
}

impl<E, V, M> Clone for Path<E, V, M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E, V, M> Copy for Path<E, V, M> {}

impl<E, V, M> std::fmt::Debug for Path<E, V, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Path({})", self.name)
    }
}

/// A path an update may change: every field's path except those of primary-key fields
/// and of the `#[dynamo(version)]` field. Sealed: implemented by the crate only.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is the path of a primary-key, version, compressed or encrypted field, which this update cannot change",
    label = "a key field, the #[dynamo(version)] field, or a #[dynamo(compress)] field",
    note = "changing a key field moves the item to another key: delete the old item and put the new one (atomically, in a transaction); the version is managed by the crate (use if_version / any_version); a compressed field holds compressed bytes and an encrypted field a ciphertext, which only `set` and `remove` replace"
)]
pub trait UpdatablePath<E, V>: crate::sealed::UpdatablePath {
    /// Where the attribute is.
    fn attribute(&self) -> AttrPath;
}

/// A path an update's [`set`](dynamo_model::item::Update::set) and
/// [`remove`](dynamo_model::item::Update::remove) may change: every path an [`UpdatablePath`] is,
/// and the [`CompressedPath`](super::CompressedPath) of a compressed field, whose
/// new value is compressed as a put compresses it. Sealed: implemented by the crate only.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is the path of a primary-key or version field, which an update cannot set",
    label = "a key field, or the #[dynamo(version)] field",
    note = "changing a key field moves the item to another key: delete the old item and put the new one (atomically, in a transaction); the version is managed by the crate (use if_version / any_version)"
)]
pub trait SettablePath<E, V>: crate::sealed::SettablePath {
    /// Where the attribute is.
    fn attribute(&self) -> AttrPath;

    /// The attribute storing `value` at this path, or `None` when the value is absent
    /// (`None`, an empty set), which removes the attribute.
    #[doc(hidden)]
    fn __encode(&self, value: &V) -> Result<Option<AttributeValue>, EncodeError>;
}

/// `SettablePath` and `UpdatablePath` for a mutable path form, whose attribute is
/// `$attribute(self)`.
macro_rules! mutable_path {
    ($($ty:ty => |$p:ident| $attribute:expr;)*) => {$(
        impl<E, V> crate::sealed::SettablePath for $ty {}
        impl<E, V> crate::sealed::UpdatablePath for $ty {}

        impl<E, V: AttrValue> SettablePath<E, V> for $ty {
            fn attribute(&self) -> AttrPath {
                let $p = self;
                $attribute
            }
            fn __encode(&self, value: &V) -> Result<Option<AttributeValue>, EncodeError> {
                value.to_attr_opt()
            }
        }

        impl<E, V> UpdatablePath<E, V> for $ty {
            fn attribute(&self) -> AttrPath {
                let $p = self;
                $attribute
            }
        }
    )*};
}
mutable_path! {
    Path<E, V, Mutable> => |p| AttrPath::Top(p.name);
    NestedPath<E, V, Mutable> => |p| p.path.clone();
    &NestedPath<E, V, Mutable> => |p| p.path.clone();
}

impl<E, V, M> From<&NestedPath<E, V, M>> for NestedPath<E, V, M> {
    fn from(path: &NestedPath<E, V, M>) -> Self {
        path.clone()
    }
}

/// A path into a map or a list attribute (`settings.theme`, `address.city`,
/// `lines[0].qty`): from [`Path::at`] on map fields, [`Path::fields`] on
/// `#[derive(Attribute)]` structs, [`Path::index`] on lists, or [`Path::field`] on
/// `#[dynamo(serde)]` documents. Supports the same conditions and updates as a field's
/// [`Path`].
pub struct NestedPath<E, V, M = Mutable> {
    path: AttrPath,
    _marker: PathMarker<E, V, M>,
}

impl<E, V, M> Clone for NestedPath<E, V, M> {
    fn clone(&self) -> Self {
        NestedPath::from_path(self.path.clone())
    }
}

impl<E, V, M> std::fmt::Debug for NestedPath<E, V, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NestedPath({})", self.path)
    }
}

impl<E, V, M> NestedPath<E, V, M> {
    fn from_path(path: AttrPath) -> Self {
        NestedPath {
            path,
            _marker: PhantomData,
        }
    }

    /// The member `name` of the map at `parent`: the paths `#[derive(Attribute)]`
    /// generates.
    #[doc(hidden)]
    pub fn __member(parent: &AttrPath, name: &'static str) -> Self {
        NestedPath::from_path(parent.child(Segment::Member(Cow::Borrowed(name))))
    }

    pub(crate) fn attr_path(&self) -> AttrPath {
        self.path.clone()
    }

    /// Where the attribute is: `ship_to.city`, `lines[0].qty`.
    pub fn path(&self) -> &AttrPath {
        &self.path
    }
}

/// A `#[derive(Attribute)]` struct, stored as a map: the typed paths of its members, which
/// [`Path::fields`] returns. Implemented by the derive.
pub trait Members: crate::codec::MapAttribute {
    /// The generated struct of member paths, `{Type}AttributeFields<E, M>`: one
    /// [`NestedPath`] per stored member, under its stored name.
    type Paths<E, M>;

    /// The member paths below `parent`.
    #[doc(hidden)]
    fn __paths<E, M>(parent: &AttrPath) -> Self::Paths<E, M>;
}

macro_rules! navigation {
    ($ty:ident) => {
        impl<E, V, M, S> $ty<E, std::collections::HashMap<String, V, S>, M> {
            /// The entry `key` of this map attribute.
            pub fn at(&self, key: impl Into<String>) -> NestedPath<E, V, M> {
                NestedPath::from_path(
                    self.attr_path()
                        .child(Segment::Member(Cow::Owned(key.into()))),
                )
            }
        }

        impl<E, V, M> $ty<E, std::collections::BTreeMap<String, V>, M> {
            /// The entry `key` of this map attribute.
            pub fn at(&self, key: impl Into<String>) -> NestedPath<E, V, M> {
                NestedPath::from_path(
                    self.attr_path()
                        .child(Segment::Member(Cow::Owned(key.into()))),
                )
            }
        }

        impl<E, T, M> $ty<E, Vec<T>, M> {
            /// The element at position `index` (from 0) of this list attribute: `path[index]`.
            /// Setting an element past the end appends it; reading one is absent.
            pub fn index(&self, index: usize) -> NestedPath<E, T, M> {
                NestedPath::from_path(self.attr_path().child(Segment::Index(index)))
            }
        }

        impl<E, T, M> $ty<E, Option<Vec<T>>, M> {
            /// The element at position `index` (from 0) of this optional list attribute.
            pub fn index(&self, index: usize) -> NestedPath<E, T, M> {
                NestedPath::from_path(self.attr_path().child(Segment::Index(index)))
            }
        }

        impl<E, T: Members, M> $ty<E, T, M> {
            /// The typed paths of this `#[derive(Attribute)]` struct's members:
            /// `f.address.fields().city`.
            pub fn fields(&self) -> T::Paths<E, M> {
                T::__paths(&self.attr_path())
            }
        }

        impl<E, T: Members, M> $ty<E, Option<T>, M> {
            /// The typed paths of this optional `#[derive(Attribute)]` struct's members.
            pub fn fields(&self) -> T::Paths<E, M> {
                T::__paths(&self.attr_path())
            }
        }

        impl<E, T, M> $ty<E, crate::codec::Serde<T>, M> {
            /// The member `name` of this document (a struct stored as a map through serde,
            /// whose members the crate does not know), holding values of type `V` (as
            /// serde_dynamo stores them: give the matching type, e.g. `String` for a string
            /// member).
            pub fn field<V>(&self, name: &'static str) -> NestedPath<E, V, M> {
                NestedPath::from_path(self.attr_path().child(Segment::Member(Cow::Borrowed(name))))
            }
        }
    };
}
navigation!(Path);
navigation!(NestedPath);

impl<E, V, M> Path<E, V, M> {
    #[doc(hidden)]
    pub const fn __new(name: &'static str) -> Self {
        Path {
            name,
            _marker: PhantomData,
        }
    }

    /// The attribute name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    pub(crate) fn attr_path(&self) -> AttrPath {
        AttrPath::Top(self.name)
    }
}
