use crate::{Db, Entity, Error, Key};

/// A `GetItem` request; see [`Db::get`].
#[must_use = "a request does nothing until it is sent or awaited"]
pub struct Get<'a, E: Entity> {
    db: &'a Db<E::Table>,
    key: Key<E>,
    consistent: bool,
    exclude_expired: bool,
}

impl<'a, E: Entity> Get<'a, E> {
    pub(crate) fn new(db: &'a Db<E::Table>, key: Key<E>) -> Self {
        Get {
            db,
            key,
            consistent: false,
            exclude_expired: false,
        }
    }

    /// Strongly consistent read (twice the read capacity of the default eventually
    /// consistent read).
    pub fn consistent(mut self) -> Self {
        self.consistent = true;
        self
    }

    /// Treats an item whose TTL has passed as absent (DynamoDB deletes expired items only
    /// eventually).
    pub fn exclude_expired(mut self) -> Self {
        self.exclude_expired = true;
        self
    }

    /// Sends the request. `Ok(None)` when there is no item under the key; an item of
    /// another entity type under the key is a decode error.
    pub async fn send(self) -> Result<Option<E>, Error> {
        let out = self
            .db
            .client()
            .get_item()
            .table_name(self.db.table_name())
            .set_key(Some(self.key.to_item().map_err(|e| e.during("GetItem"))?))
            .consistent_read(self.consistent)
            .send()
            .await
            .map_err(|e| Error::service("GetItem", self.db.table_name(), e))?;
        match out.item {
            Some(item) if self.exclude_expired && super::is_expired::<E::Table>(&item) => Ok(None),
            Some(item) => Ok(Some(E::from_item(item)?)),
            None => Ok(None),
        }
    }
}

super::into_future!(Get, Option<E>);
