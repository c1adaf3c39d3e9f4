//! The delete of an entity with unique values: the item and the sentinels of the values it
//! holds in one transaction (see [`crate::item::unique`]).

use super::Delete;
use crate::item::unique::{After, ItemWrite, UniqueWrite};
use crate::{Entity, Error};

impl<E: Entity> Delete<E> {
    /// Sends the delete with the releases of the item's values.
    pub(super) async fn run_unique(self, return_old: bool) -> Result<Option<E>, Error> {
        if return_old {
            let instead = "read the item first, then delete it on a condition or its version";
            return Err(crate::item::unique::returns_no_values::<E>(instead));
        }
        crate::item::unique::refuse_hooks::<E>(self.customize.is_set())?;
        let db = self.db.clone();
        let owner = self.key.raw()?.clone();
        let write = self.prepare()?;
        UniqueWrite::<E> {
            db: &db,
            owner,
            write,
            kind: ItemWrite::Delete,
            after: After::Gone,
            keep: None,
            pinned: None,
            stored: None,
        }
        .send()
        .await
        .map(|()| None)
    }
}
