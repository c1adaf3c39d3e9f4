//! The changes of lists and string sets an update makes: elements appended or
//! prepended, added or deleted.

use super::{Action, SetFn, StringSet, Update};
use crate::codec::AttrValue;
use crate::expr::AttrPath;
use crate::{Entity, UpdatablePath};
use std::collections::BTreeSet;

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

    /// `ADD path :elements` on a string-set field: adds the elements (creating the set).
    /// DynamoDB's ADD works on top-level attributes only.
    pub fn add_to_set<S: StringSet>(
        self,
        path: crate::Path<E, S, crate::expr::Mutable>,
        elements: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        let set: BTreeSet<String> = elements.into_iter().map(Into::into).collect();
        self.push_value(path.attribute(), &set, Action::Add)
    }

    /// `DELETE path :elements` on a string-set field: removes the elements (DynamoDB
    /// drops an emptied set). DynamoDB's DELETE works on top-level attributes only.
    pub fn delete_from_set<S: StringSet>(
        self,
        path: crate::Path<E, S, crate::expr::Mutable>,
        elements: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        let removed = elements.into_iter().map(Into::into);
        self.push_value(
            path.attribute(),
            &removed.collect::<BTreeSet<String>>(),
            Action::Delete,
        )
    }
}
