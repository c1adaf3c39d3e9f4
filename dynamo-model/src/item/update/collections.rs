//! The changes of lists and sets an update makes: elements appended or prepended, added
//! or deleted.

use super::{Action, SetFn, Update};
use crate::codec::{AttrValue, Operand, SetAttribute};
use crate::expr::{AttrPath, Mutable};
use crate::{Entity, Path, UpdatablePath};
use std::collections::BTreeSet;

/// The methods `$method` that `$action` (`ADD` or `DELETE`) the set of the elements given
/// at a set field's path.
macro_rules! set_changes {
    ($($(#[doc = $doc:literal])* $method:ident => $action:ident;)*) => {$(
        $(#[doc = $doc])*
        pub fn $method<S: SetAttribute>(
            self,
            path: Path<E, S, Mutable>,
            elements: impl IntoIterator<Item = impl Operand<S::Element>>,
        ) -> Self {
            let set: BTreeSet<S::Element> =
                elements.into_iter().map(Operand::into_operand).collect();
            self.push_value(path.attribute(), &set, Action::$action)
        }
    )*};
}

impl<E: Entity> Update<E> {
    /// Appends elements to a list attribute (an absent list counts as empty).
    pub fn append<T: AttrValue>(
        self,
        path: impl UpdatablePath<E, Vec<T>>,
        elements: Vec<T>,
    ) -> Self {
        self.list_fn(path.attribute(), &elements, SetFn::Append)
    }

    /// Prepends elements to a list attribute (an absent list counts as empty).
    pub fn prepend<T, P>(self, path: P, elements: Vec<T>) -> Self
    where
        T: AttrValue,
        P: UpdatablePath<E, Vec<T>>,
    {
        self.list_fn(path.attribute(), &elements, SetFn::Prepend)
    }

    fn list_fn<T: AttrValue>(self, path: AttrPath, elements: &Vec<T>, f: SetFn) -> Self {
        self.push_value(path, elements, |p, v| Action::SetFn(p, f, v))
    }

    set_changes! {
        /// `ADD path :elements` on a set field (a string, number or binary set, see
        /// [`SetAttribute`]): adds the elements, creating the set when it is absent. The
        /// elements are of the set's element type: `["a", "b"]` for a string set, `[1, 2]`
        /// for a number set (the literals take the element type), [`Binary`](crate::Binary)
        /// values for a binary set. At least one element: DynamoDB has no empty set (the
        /// update is refused before it is sent). DynamoDB's ADD works on top-level
        /// attributes only.
        add_to_set => Add;
        /// `DELETE path :elements` on a set field (a string, number or binary set, see
        /// [`SetAttribute`]): removes the elements (elements the set does not hold are
        /// ignored), and DynamoDB drops the attribute when the set is left empty. The
        /// elements, at least one, are of the set's element type, as in
        /// [`add_to_set`](Update::add_to_set). DynamoDB's DELETE works on top-level
        /// attributes only.
        delete_from_set => Delete;
    }
}
