//! Encrypted fields (`#[dynamo(encrypt)]`) on an update: a value set whole is sealed
//! with the item's key as a put seals it; a change DynamoDB would compute on the stored
//! value is refused (it holds a ciphertext). See [`crate::encrypt`].

use super::{Action, SetFn, Update};
use crate::encrypt::seal_value;
use crate::expr::AttrPath;
use crate::{Entity, Error, ValidationReason};

impl<E: Entity> Update<E> {
    /// Seals the values the update sets on encrypted fields; refuses any other change of
    /// one but its removal.
    pub(super) fn seal_encrypted(&mut self) -> Result<(), Error> {
        if E::__ENCRYPTED.is_empty() {
            return Ok(());
        }
        let key = self.key.raw()?.clone();
        let keys = self.db.shared_keys();
        for action in &mut self.actions {
            let (top, nested) = match action.path() {
                AttrPath::Top(name) => (*name, false),
                path @ AttrPath::Nested(..) => (path.top(), true),
            };
            let Some(field) = E::__ENCRYPTED.iter().find(|a| **a == top) else {
                continue;
            };
            let how = match action {
                _ if nested => "changes a member of it",
                Action::Set(_, Ok(value)) => {
                    let sealed = seal_value(keys.as_deref(), E::ENTITY_TYPE, field, &key, value);
                    *value = sealed?;
                    continue;
                }
                Action::Set(_, Err(_)) | Action::Remove(_) => continue,
                Action::SetFn(_, SetFn::IfNotExists, _) => "sets it only if absent",
                Action::SetFn(_, SetFn::Append | SetFn::Prepend, _) => "appends to it",
                Action::SetFn(_, SetFn::Subtract, _) => "subtracts from it",
                Action::Add(..) => "adds to it",
                Action::Compute(..) => "computes it from attributes",
                Action::Delete(..) => "deletes elements of it",
            };
            let message = format!(
                "the update {how}, but field `{field}` is stored encrypted: DynamoDB cannot compute on a ciphertext; set the whole value instead"
            );
            return Err(Error::invalid(
                E::ENTITY_TYPE,
                ValidationReason::EncryptedField,
                message,
            ));
        }
        Ok(())
    }
}
