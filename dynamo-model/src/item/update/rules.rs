//! The rules of ruled fields (`#[dynamo(validate(..))]`) on an update: a value it sets
//! whole is checked when it is given; a change whose result is unknown before it is
//! applied is refused (see [`crate::validate`]).

use super::{Action, SetFn, Update};
use crate::expr::AttrPath;
use crate::{Entity, Error, ValidationReason};

impl<E: Entity> Update<E> {
    /// Checks the rules of the field `path` sets to `value` (`set`, `set_if_absent`); the
    /// first broken rule is reported when the update is sent.
    pub(super) fn check_rules<V: 'static>(&mut self, path: &AttrPath, value: &V) {
        if self.refused.is_some() || !E::__RULED.contains(&path.top()) {
            return;
        }
        let checked = match path {
            AttrPath::Top(name) => E::__validate_attribute(name, value),
            AttrPath::Nested(..) => Err(unchecked::<E>(path.top(), "a member of it")),
        };
        if let Err(e) = checked {
            self.refused = Some(crate::entity::redact::<E>(e));
        }
    }

    /// The first broken rule, or a change of a ruled field the crate cannot check.
    pub(super) fn check_ruled_changes(&mut self) -> Result<(), Error> {
        if let Some(e) = self.refused.take() {
            return Err(e);
        }
        for action in &self.actions {
            let path = action.path();
            if !E::__RULED.contains(&path.top()) {
                continue;
            }
            let how = match (action, path) {
                (Action::Set(..) | Action::SetFn(_, SetFn::IfNotExists, _), _) => continue,
                (Action::Remove(_), AttrPath::Top(_)) => continue,
                (Action::Remove(_), AttrPath::Nested(..)) => "removes a member of it",
                (Action::SetFn(_, SetFn::Append | SetFn::Prepend, _), _) => "appends to it",
                (Action::SetFn(_, SetFn::Subtract, _), _) => "subtracts from it",
                (Action::Add(..), _) => "adds to it",
                (Action::Compute(..), _) => "computes it from attributes",
                (Action::Delete(..), _) => "deletes elements of it",
            };
            return Err(unchecked::<E>(path.top(), how));
        }
        Ok(())
    }
}

/// An update that changes ruled field `field` as `how` says: its result is unknown
/// before it is applied, so its rules cannot be checked.
fn unchecked<E: Entity>(field: &str, how: &str) -> Error {
    let message = format!(
        "the update {how}, so the rules of field `{field}` cannot be checked before it is applied; set the whole value instead"
    );
    Error::invalid(E::ENTITY_TYPE, ValidationReason::RuledField, message)
}
