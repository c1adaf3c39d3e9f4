//! Sets: string sets (`SS`) of `String`, number sets (`NS`) of every integer type and
//! binary sets (`BS`) of [`Binary`], as `HashSet` and `BTreeSet` fields.
//!
//! DynamoDB stores no empty set, so an empty set is no attribute at all and a missing
//! attribute reads as an empty set. Each member is written and read by its element
//! type's own [`AttrValue`] (a number set's members are exactly the element type's
//! numbers), and a list of such members reads as a set too: serde_dynamo writes a set as
//! a list, so data written through `#[dynamo(serde)]` reads back.

use super::{AttrValue, Binary, EncodeError, wrong_type};
use crate::error::DecodeErrorKind;
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::{BTreeSet, HashSet};
use std::hash::{BuildHasher, Hash};

/// A type whose values a DynamoDB set holds: `String` (a string set, `SS`), every
/// integer type (a number set, `NS`) and [`Binary`] (a binary set, `BS`). A
/// `HashSet` or `BTreeSet` of it is a [`SetAttribute`]. Sealed: implemented by the
/// crate only.
pub trait SetElement: AttrValue + Ord + Hash + crate::sealed::SetElement {
    /// The DynamoDB type of a set of these values (`"SS"`, `"NS"`, `"BS"`).
    #[doc(hidden)]
    const __SET_TYPE: &'static str;

    /// What a member of such a set must be, for error messages.
    #[doc(hidden)]
    const __MEMBER_OF: &'static str;

    /// The set attribute holding `members`, each as the element type's `to_attr` writes it.
    #[doc(hidden)]
    fn __pack(members: Vec<AttributeValue>) -> Result<AttributeValue, EncodeError>;

    /// The members of a set attribute of this type, each as an attribute of its own;
    /// `Err` gives back any other attribute.
    #[doc(hidden)]
    fn __unpack(set: AttributeValue) -> Result<Vec<AttributeValue>, AttributeValue>;
}

/// `$t`: members `$member` (`S`, `N`, `B`) of a set `$set` (`Ss`, `Ns`, `Bs`), a `$what` set.
macro_rules! set_element {
    ($set:ident of $member:ident, $what:literal: $($t:ty),*) => {$(
        impl crate::sealed::SetElement for $t {}
        impl SetElement for $t {
            const __SET_TYPE: &'static str = concat!(stringify!($member), "S");
            const __MEMBER_OF: &'static str =
                concat!(stringify!($member), " (a member of a ", $what, " set)");
            #[inline]
            fn __pack(members: Vec<AttributeValue>) -> Result<AttributeValue, EncodeError> {
                members
                    .into_iter()
                    .map(|m| match m {
                        AttributeValue::$member(v) => Ok(v),
                        other => Err(EncodeError::new(format!(
                            "a {} value cannot be a member of a {} set",
                            super::type_name(&other),
                            $what
                        ))),
                    })
                    .collect::<Result<_, _>>()
                    .map(AttributeValue::$set)
            }
            #[inline]
            fn __unpack(set: AttributeValue) -> Result<Vec<AttributeValue>, AttributeValue> {
                match set {
                    AttributeValue::$set(members) => {
                        Ok(members.into_iter().map(AttributeValue::$member).collect())
                    }
                    other => Err(other),
                }
            }
        }
    )*};
}
set_element!(Ss of S, "string": String);
set_element!(Ns of N, "number": u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize);
set_element!(Bs of B, "binary": Binary);

/// A set field type: `HashSet<T>` or `BTreeSet<T>` of a [`SetElement`] `T`, or an
/// `Option` of one; the field types [`Update::add_to_set`] and
/// [`Update::delete_from_set`] apply to. Sealed: implemented by the crate only.
///
/// [`Update::add_to_set`]: dynamo_model::item::Update::add_to_set
/// [`Update::delete_from_set`]: dynamo_model::item::Update::delete_from_set
pub trait SetAttribute: AttrValue + crate::sealed::SetAttribute {
    /// The type of the set's elements.
    type Element: SetElement;
}

impl<T: SetAttribute> crate::sealed::SetAttribute for Option<T> {}
impl<T: SetAttribute> SetAttribute for Option<T> {
    type Element = T::Element;
}

/// The set attribute of `elements`, `None` when there are none (DynamoDB stores no empty
/// set): an element the element type cannot encode (a `u128` past 38 digits) is an error.
fn encode_set<'a, T: SetElement + 'a>(
    elements: impl ExactSizeIterator<Item = &'a T>,
) -> Result<Option<AttributeValue>, EncodeError> {
    if elements.len() == 0 {
        return Ok(None);
    }
    let members = elements.map(T::to_attr).collect::<Result<Vec<_>, _>>()?;
    T::__pack(members).map(Some)
}

/// A set of `T` from its set attribute, or from a list of its members (as serde_dynamo
/// writes a set); each member is decoded by `T` (a number out of `T`'s range is an
/// error, never wrapped or clamped).
fn decode_set<T: SetElement, C: FromIterator<T>>(
    value: AttributeValue,
) -> Result<C, DecodeErrorKind> {
    let members = match value {
        AttributeValue::L(list) => list,
        other => T::__unpack(other).map_err(|other| wrong_type(T::__SET_TYPE, &other))?,
    };
    members
        .into_iter()
        .map(|member| {
            T::from_attr(member).map_err(|e| match e {
                DecodeErrorKind::WrongType { found, .. } => DecodeErrorKind::WrongType {
                    expected: T::__MEMBER_OF,
                    found,
                },
                e => e,
            })
        })
        .collect()
}

/// `HashSet<T>` and `BTreeSet<T>` of a [`SetElement`]: the element type's set (`SS`,
/// `NS`, `BS`); an empty set is no attribute and a missing attribute reads as empty.
macro_rules! set_attr {
    ($(impl [$($generics:tt)*] for $t:ty;)*) => {$(
        impl<T: SetElement, $($generics)*> AttrValue for $t {
            const __DYNAMO_TYPE: Option<&'static str> = Some(T::__SET_TYPE);
            #[inline]
            fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
                encode_set(self.iter())?
                    .ok_or_else(|| EncodeError::new("an empty set cannot be stored"))
            }
            #[inline]
            fn to_attr_opt(&self) -> Result<Option<AttributeValue>, EncodeError> {
                encode_set(self.iter())
            }
            #[inline]
            fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
                decode_set(value)
            }
            #[inline]
            fn from_missing() -> Result<Self, DecodeErrorKind> {
                Ok(Self::default())
            }
        }

        impl<T: SetElement, $($generics)*> crate::sealed::SetAttribute for $t {}
        impl<T: SetElement, $($generics)*> SetAttribute for $t {
            type Element = T;
        }
    )*};
}

set_attr! {
    impl [S: BuildHasher + Default] for HashSet<T, S>;
    impl [] for BTreeSet<T>;
}

#[cfg(test)]
mod tests;
