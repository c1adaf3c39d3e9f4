//! Conditions on set attributes: `contains(path, element)` on the paths of string, number
//! and binary sets (`HashSet`/`BTreeSet` of a [`SetElement`], optional or not).

use super::operand::Comparand;
use super::{Condition, NestedPath, Node, Path};
use crate::codec::SetElement;
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
            /// or a [`Binary`](crate::Binary), as the set's element type, or another
            /// attribute holding one). False when the set is absent (an empty set is not
            /// stored).
            pub fn contains<K>(&self, element: impl Comparand<E, T, K>) -> Condition<E> {
                let path = self.attr_path();
                let value = element.__term(&path);
                Condition::new(Node::Contains { path, value })
            }
        }
    )*};
}

set_conditions!(Path, NestedPath);
