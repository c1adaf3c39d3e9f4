#[cfg(feature = "cache")]
use crate::Item;
use crate::call::{Action, Call, Operation, Policy, Target};
use crate::request::exec::{Sending, exec};
use crate::request::{Customize, customizable, input};
use crate::{Db, Entity, Error, Key};
use aws_sdk_dynamodb::operation::get_item::GetItemInput;
use aws_sdk_dynamodb::operation::get_item::builders::GetItemFluentBuilder;

/// A `GetItem` request; see [`Db::get`].
///
/// The builder owns a clone of the [`Db`] (cheap: a few reference counts), so it and the
/// future it resolves to are `'static` and can be moved into a spawned task.
#[must_use = "a request does nothing until it is sent or awaited"]
pub struct Get<E: Entity> {
    db: Db<E::Table>,
    key: Key<E>,
    consistent: bool,
    exclude_expired: bool,
    /// Marked to use the `Db`'s cache (`cached`).
    #[cfg(feature = "cache")]
    cached: bool,
    customize: Customize<GetItemFluentBuilder>,
}

impl<E: Entity> Get<E> {
    pub(crate) fn new(db: &Db<E::Table>, key: Key<E>) -> Self {
        Get {
            db: db.clone(),
            key,
            consistent: false,
            exclude_expired: false,
            #[cfg(feature = "cache")]
            cached: false,
            customize: Customize::default(),
        }
    }

    crate::setters::setters! {
        /// Answers from the `Db`'s cache when the item is there, else reads it and keeps it
        /// (feature `cache`; see [`crate::cache`]). Gets of entities the cache was built
        /// with ([`CacheBuilder::entity`](crate::cache::CacheBuilder::entity)) do so without
        /// being marked. Without a cache attached ([`Db::with_cache`]) it changes nothing.
        #[cfg(feature = "cache")]
        cached() => cached = true;
    }

    /// The cache this get may use, and whether it may answer from it: one is attached,
    /// the get is marked or its entity kept, and nothing rules the cache out (a hook, or
    /// chunked fields). A consistent get reads DynamoDB and refreshes the cache.
    #[cfg(feature = "cache")]
    fn cache(&self) -> Option<(crate::cache::Cache, bool)> {
        let cache = self.db.cache()?;
        let wanted = self.cached || cache.keeps(E::ENTITY_TYPE);
        let usable = !self.customize.is_set() && E::__CHUNKED.is_empty();
        (wanted && usable).then(|| (cache.clone(), !self.consistent))
    }

    crate::setters::setters! {
        /// Strongly consistent read (twice the read capacity of the default eventually
        /// consistent read).
        consistent() => consistent = true;
        /// Treats an item whose TTL has passed as absent (DynamoDB deletes expired items only
        /// eventually).
        exclude_expired() => exclude_expired = true;
    }

    /// How the read is sent, with the record of its call for the `Db`'s observers.
    fn sending(&self, consistent: bool, policy: Policy) -> Result<Sending, Error> {
        let key = self.key.raw()?;
        Ok(Sending::new(&self.db, Operation::GetItem, policy, || {
            let table = self.db.table_arc().clone();
            let target = Target::key(table, Action::Get, Some(E::ENTITY_TYPE), key);
            Call {
                consistent,
                ..Call::single(Operation::GetItem, target)
            }
        }))
    }

    fn request(&self) -> Result<GetItemFluentBuilder, Error> {
        self.request_consistent(self.consistent)
    }

    fn request_consistent(&self, consistent: bool) -> Result<GetItemFluentBuilder, Error> {
        let request = self
            .db
            .client()
            .get_item()
            .table_name(self.db.table_name())
            .set_key(Some(self.key.to_item()?))
            .consistent_read(consistent);
        Ok(self.customize.apply(request))
    }

    /// The `GetItem` input this request would send, instead of sending it (like
    /// ElectroDB's `.params()`).
    ///
    /// ```
    /// # use dynamo_model::{Entity, Table};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// # #[derive(Entity, serde::Serialize, serde::Deserialize)]
    /// # #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # let db = dynamo_model::Db::<App>::offline("app");
    /// let input = db.get(User::key("u-1")).consistent().params()?;
    /// assert_eq!(input.table_name(), Some("app"));
    /// assert_eq!(input.consistent_read(), Some(true));
    /// # Ok::<(), dynamo_model::Error>(())
    /// ```
    pub fn params(self) -> Result<GetItemInput, Error> {
        let request = self.request().map_err(|e| e.during("GetItem"))?;
        input("GetItem", request.as_input().clone().build())
    }

    /// What this get will send and what it may cost, without sending anything (see
    /// [`Query::explain`](dynamo_model::read::Query::explain)): the input
    /// [`params`](Get::params) returns, the key, and the read units by DynamoDB's rules
    /// (from the item size observed of the entity, when an
    /// [`Insight`](crate::insight::Insight) is attached to the `Db`).
    pub fn explain(&self) -> Result<crate::insight::Explain, Error> {
        let request = self.request().map_err(|e| e.during("GetItem"))?;
        let input = input("GetItem", request.as_input().clone().build())?;
        let reading = crate::insight::explain::Reading::of::<E>(None);
        let observed = crate::request::observations(&self.db);
        Ok(crate::insight::Explain::get(reading, input, observed))
    }

    /// Sends the request. `Ok(None)` when there is no item under the key; an item of
    /// another entity type under the key is a decode error.
    pub async fn send(self) -> Result<Option<E>, Error> {
        let span = crate::trace::operation("GetItem", self.db.table_name(), E::ENTITY_TYPE);
        crate::trace::record(&span, "aws.dynamodb.consistent_read", self.consistent);
        crate::trace::key(&span, self.db.traces_keys(), || Some(self.key.to_string()));
        crate::request::page::traced_found(span, self.send_untraced()).await
    }

    async fn send_untraced(self) -> Result<Option<E>, Error> {
        #[cfg(feature = "cache")]
        if let Some((cache, answer)) = self.cache() {
            let key = self.key.raw()?.clone();
            let miss = match cache.lookup(self.db.table_arc(), key, answer) {
                Ok(item) => {
                    crate::trace::record_current("dynamo_model.cache", "hit");
                    return self.decode(Some(Item::clone(&item)));
                }
                Err(miss) => miss,
            };
            crate::trace::record_current("dynamo_model.cache", "miss");
            crate::trace::record_current("aws.dynamodb.consistent_read", true);
            // Filled by a strongly consistent read: an eventually consistent one may
            // return an item older than this client's last write, which the cache would
            // then serve for its whole time to live.
            let request = self
                .request_consistent(true)
                .map_err(|e| e.during("GetItem"))?;
            let sending = self.sending(true, Policy::READ)?;
            let out = sending
                .send(exec!(sending, request))
                .await
                .map_err(|e| Error::service("GetItem", self.db.table_name(), e))?;
            if let Some(item) = &out.item {
                cache.store(miss, item.clone());
            }
            return self.decode(out.item);
        }
        let request = self.request().map_err(|e| e.during("GetItem"))?;
        let sending = self.sending(self.consistent, Policy::READ)?;
        if E::__CHUNKED.is_empty() {
            let out = sending
                .send(exec!(sending, request))
                .await
                .map_err(|e| Error::service("GetItem", self.db.table_name(), e))?;
            return self.decode(out.item);
        }
        // An item with chunked fields: its chunks too (`crate::chunk`). Chunks missing or
        // not matching the manifest mean the value was replaced while being read: read
        // the item again.
        let mut attempt = 0;
        loop {
            attempt += 1;
            let out = sending
                .send(exec!(sending, request.clone()))
                .await
                .map_err(|e| Error::service("GetItem", self.db.table_name(), e))?;
            let Some(mut entity) = self.decode(out.item)? else {
                return Ok(None);
            };
            match super::chunks::load(&self.db, std::slice::from_mut(&mut entity)).await {
                Ok(()) => return Ok(Some(entity)),
                Err(Error::Decode(_)) if attempt < 3 => continue,
                Err(e) => return Err(e),
            }
        }
    }

    fn decode(&self, item: Option<crate::Item>) -> Result<Option<E>, Error> {
        match item {
            Some(item) if self.exclude_expired && super::is_expired::<E::Table>(&item) => Ok(None),
            Some(item) => Ok(Some(self.db.decode(item)?)),
            None => Ok(None),
        }
    }

    /// Sends, and sends again while the failure is transient (throttling, a 5xx, a lost
    /// connection: a read is safe to repeat), with backoff until `deadline`. For reads
    /// inside a retry loop of the crate's own (a read-modify-write), whose deadline
    /// bounds the whole.
    pub(crate) async fn send_until(
        self,
        policy: &crate::RetryPolicy,
        deadline: &crate::retry::Deadline,
    ) -> Result<Option<E>, Error> {
        let request = self.request().map_err(|e| e.during("GetItem"))?;
        let sending = self.sending(self.consistent, Policy::RETRIED_READ)?;
        let mut attempts =
            crate::request::exec::Attempts::new(Operation::GetItem, policy, deadline);
        let mut last = None;
        loop {
            use crate::request::exec::Attempt;
            let send = || Ok(exec!(sending, request.clone()));
            let service = |e| Error::service("GetItem", self.db.table_name(), e);
            match attempts.next(None, send).await? {
                Attempt::Answered(out, _) => return self.decode(out.item),
                Attempt::Retry(e) => last = Some(service(e)),
                Attempt::Refused(e) => return Err(service(e)),
                // The deadline bounds the whole read-modify-write: the last failure, or
                // the deadline itself when it cut the first attempt off.
                Attempt::NotSent | Attempt::CutOff => {
                    return Err(attempts.deadline_error(self.db.table_name(), last));
                }
            }
        }
    }
}

customizable!(
    impl[E: Entity] Get<E>,
    GetItemFluentBuilder,
    "before it is sent",
    "A hook that changes the key takes the request out of the crate's guarantees (the item is decoded as the entity of the key)."
);
crate::request::into_future!(impl[E: Entity] Get<E>, Option<E>);

impl<T: crate::Table> crate::Db<T> {
    /// Reads one item. Resolves to `Ok(None)` when there is no item under the key.
    ///
    /// Takes a [`Key`](crate::Key) or a generated key struct (`OrderKey { .. }`) directly.
    pub fn get<E: Entity<Table = T>>(&self, key: impl Into<crate::Key<E>>) -> Get<E> {
        Get::new(self, key.into())
    }
}
