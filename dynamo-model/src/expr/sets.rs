//! Conditions on set attributes: `contains(path, element)` on the paths of string, number
//! and binary sets (`HashSet`/`BTreeSet` of a [`SetElement`], optional or not).

use super::{Condition, MapPath, Node, Path, encode};
use crate::codec::{Operand, SetElement};
use std::collections::{BTreeSet, HashSet};

/// `contains` on the paths (`$path`) of every set type.
macro_rules! set_conditions {
    ($($path:ident),*) => {$(
        set_contains! {
            $path:
            impl [S] HashSet<T, S>;
            impl [] BTreeSet<T>;
            impl [S] Option<HashSet<T, S>>;
            impl [] Option<BTreeSet<T>>;
        }
    )*};
}

/// `contains` on `$path`s of the set types `$set`.
macro_rules! set_contains {
    ($path:ident: $(impl [$($generics:tt)*] $set:ty;)*) => {$(
        impl<E, M, T: SetElement, $($generics)*> $path<E, $set, M> {
            /// `contains(path, element)`: the set holds this element (a string, a number
            /// or a [`Binary`](crate::Binary), as the set's element type). False when the
            /// set is absent (an empty set is not stored).
            pub fn contains(self, element: impl Operand<T>) -> Condition<E> {
                let path = self.attr_path();
                let value = encode(&path, &element.into_operand());
                Condition::new(Node::Contains { path, value })
            }
        }
    )*};
}

set_conditions!(Path, MapPath);
