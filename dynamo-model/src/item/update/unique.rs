//! An update that changes unique values: the item's update and its sentinels in one
//! transaction (see [`crate::item::unique`]); the item is read back for what the update
//! returns.

use super::{Action, Returning, Update};
use crate::expr::AttrPath;
use crate::item::unique::{After, ItemWrite, UniqueWrite};
use crate::{Entity, Error, Item, ValidationReason};
use aws_sdk_dynamodb::types::AttributeValue;

/// The unique attributes an update sets (`Some`) or removes (`None`).
pub(super) type Changes = Vec<(&'static str, Option<AttributeValue>)>;

impl<E: Entity> Update<E> {
    /// The changes of unique attributes; a change whose result DynamoDB computes (`add`,
    /// `append`, `set_if_absent`, a member) is refused: the value it leaves is unknown
    /// before it is applied, so its sentinel cannot be claimed.
    pub(super) fn unique_changes(&self) -> Result<Changes, Error> {
        let mut changes = Changes::new();
        if E::__UNIQUE.is_empty() {
            return Ok(changes);
        }
        for action in &self.actions {
            let top = action.path().top();
            let Some(attribute) = E::__UNIQUE
                .iter()
                .flat_map(|c| c.attributes.iter().copied())
                .find(|a| *a == top)
            else {
                continue;
            };
            match (action, action.path()) {
                (Action::Set(_, Ok(value)), AttrPath::Top(_)) => {
                    changes.push((attribute, Some(value.clone())));
                }
                // Reported by the update itself when it is prepared.
                (Action::Set(_, Err(_)), _) => {}
                (Action::Remove(_), AttrPath::Top(_)) => changes.push((attribute, None)),
                _ => {
                    return Err(Error::invalid(
                        E::ENTITY_TYPE,
                        ValidationReason::UniqueValue,
                        format!(
                            "`{attribute}` is unique: the update must set or remove its whole value, whose sentinel it claims or releases"
                        ),
                    ));
                }
            }
        }
        Ok(changes)
    }

    /// Sends an update that changes unique values (`changes`).
    pub(super) async fn run_unique(
        self,
        changes: Changes,
        returning: Returning,
    ) -> Result<Option<Item>, Error> {
        if returning == Returning::Old {
            let instead = "send it with send, send_returning_updated or send_returning_nothing";
            return Err(crate::item::unique::returns_no_values::<E>(instead));
        }
        crate::item::unique::refuse_hooks::<E>(self.customize.is_set())?;
        let db = self.db.clone();
        let owner = self.key.raw()?.clone();
        let (write, updated) = self.prepare_with(None)?;
        let (key, key_item) = (write.key.clone(), write.key_item.clone());
        UniqueWrite::<E> {
            db: &db,
            owner,
            write,
            kind: ItemWrite::Update,
            after: After::Changes(changes),
            keep: None,
            pinned: None,
            stored: None,
        }
        .send()
        .await?;
        if returning == Returning::Nothing {
            return Ok(None);
        }
        // The item as stored after the transaction (and whatever was written since).
        let Some(mut item) = crate::item::consistent::ConsistentGet::new(&db, key_item)
            .send()
            .await?
        else {
            return Err(Error::NotFound {
                entity: E::ENTITY_TYPE,
                key,
            });
        };
        item.remove(<E::Table as crate::Table>::SCHEMA.write_token);
        Ok(Some(match returning {
            Returning::Updated => crate::item::ambiguous::project(&item, &updated),
            _ => item,
        }))
    }
}
