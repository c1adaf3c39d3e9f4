//! The times an update sets itself ([`crate::auto`]): `updated` on every update (unless
//! the update sets it), `created` with `if_not_exists` when an upsert may create the item;
//! an update that changes `created` itself is refused.

use super::{Action, SetFn, Update};
use crate::expr::AttrPath;
use crate::{Entity, Error};

impl<E: Entity> Update<E> {
    /// Adds the actions of the entity's times, at now; `creates`: the update may create
    /// the item.
    pub(super) fn stamp_actions(&mut self, creates: bool) -> Result<(), Error> {
        let stamps = E::__STAMPS;
        if let Some(created) = stamps.created
            && self.actions.iter().any(|a| a.path().top() == created)
        {
            let message = format!(
                "the update changes `{created}`, the creation time the crate keeps: it is set when the item is created and never changed"
            );
            return Err(Error::invalid(
                E::ENTITY_TYPE,
                crate::ValidationReason::CreationTime,
                message,
            ));
        }
        if stamps.updated.is_none() && !(creates && stamps.created.is_some()) {
            return Ok(());
        }
        let mut values = E::__stamp_values(std::time::SystemTime::now(), creates)?;
        let untouched = |actions: &[Action], attribute: &str| {
            !actions.iter().any(|a| a.path().top() == attribute)
        };
        if let Some(attribute) = stamps.updated
            && let Some(value) = values.remove(attribute)
            && untouched(&self.actions, attribute)
        {
            self.actions
                .push(Action::Set(AttrPath::Top(attribute), Ok(value)));
        }
        if let (true, Some(attribute)) = (creates, stamps.created)
            && let Some(value) = values.remove(attribute)
            && untouched(&self.actions, attribute)
        {
            let path = AttrPath::Top(attribute);
            self.actions
                .push(Action::SetFn(path, SetFn::IfNotExists, Ok(value)));
        }
        Ok(())
    }
}
