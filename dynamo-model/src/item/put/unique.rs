//! The put of an entity with unique values: the item and its sentinels in one
//! transaction (see [`crate::item::unique`]).

use super::Put;
use crate::item::PreparedWrite;
use crate::item::unique::{After, ItemWrite, UniqueWrite};
use crate::{Entity, Error, Item};

impl<E: Entity> Put<E> {
    /// Sends the put with its claims and releases.
    pub(super) async fn send_unique(self) -> Result<(), Error> {
        crate::item::unique::refuse_hooks::<E>(self.customize.is_set())?;
        let db = self.db.clone();
        // A put that only creates needs no read: there is no item to release values of.
        let creates = self.if_absent || (E::VERSION.is_some() && self.version == 0);
        let kept_created = self.kept_created();
        let write = self.prepare_with(None)?;
        let item = write.item.clone().unwrap_or_default();
        let owner = crate::item::key_of_item::<E>(&item)?;
        UniqueWrite::<E> {
            db: &db,
            owner,
            write,
            kind: ItemWrite::Put,
            after: After::Item(item),
            keep: kept_created.map(|_| keep_created::<E> as fn(&mut PreparedWrite, Option<&Item>)),
            pinned: kept_created,
            stored: creates.then_some(None),
        }
        .send()
        .await
    }
}

/// The creation time the item holds, taken into the put's item and its guard (see
/// `super::created`): an overwrite keeps it.
fn keep_created<E: Entity>(write: &mut PreparedWrite, stored: Option<&Item>) {
    let Some(attribute) = E::__STAMPS.created else {
        return;
    };
    let Some(time) = stored.and_then(|item| item.get(attribute)) else {
        return;
    };
    if let Some(item) = &mut write.item {
        item.insert(attribute.to_owned(), time.clone());
    }
    super::created::set_guard_value(write, time.clone());
}
