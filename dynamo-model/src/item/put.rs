use super::ambiguous::{Settled, WriteToken, outcome_open, settle};
use super::{
    FailureContext, PreparedWrite, absent_or_entity, and, condition_failed, is_entity, item_absent,
    next_version, render, user_condition, version_is,
};
use crate::call::Operation;
use crate::expr::Placeholders;
use crate::request::exec::{SdkError, Sending, exec};
use crate::request::{Customize, customizable, input};
use crate::{Condition, Db, Entity, Error, Item, Key};
use aws_sdk_dynamodb::operation::put_item::builders::PutItemFluentBuilder;
use aws_sdk_dynamodb::operation::put_item::{PutItemError, PutItemInput, PutItemOutput};
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_dynamodb::types::ReturnValuesOnConditionCheckFailure;

/// A `PutItem` request; see [`Db::put`].
///
/// By default the put replaces an item of the same entity type under the key and refuses
/// (with [`Error::ConditionFailed`]) to overwrite an item of another entity type.
///
/// For an entity with a `#[dynamo(version)]` field the put is optimistic-locked: it
/// expects the stored item at the entity's version (0: no item yet) and stores version + 1,
/// failing with [`Error::VersionConflict`] otherwise. The caller's value is not changed:
/// increment its version (or read the item again) before the next put.
///
/// # Ambiguous errors
///
/// DynamoDB may apply a put and lose its response (an HTTP 500 or a timeout after the
/// write); the SDK then sends the same request again, and the condition of an
/// `if_absent`, versioned or conditional put fails against the put's own item. The put
/// therefore stores a token unique to the call in the table's write-token attribute
/// ([`TableSchema::write_token`](crate::TableSchema::write_token), `_wt` by default), and
/// when a condition fails on an item carrying this call's token, it reports success: the
/// item is the one this call wrote. A put without conditions needs no such help: sent
/// twice, it stores the same item.
///
/// When every attempt ends without an answer (the SDK gives up on 5xx errors or
/// timeouts), the put reads the item, strongly consistent: if it carries this call's
/// token, the put was applied and reports success. Otherwise (the put was not applied,
/// another write replaced it since, or the read failed too) it fails with
/// [`Error::OutcomeUnknown`], which carries the token: resend the same put with
/// [`write_token`](Put::write_token) to settle it without writing it twice.
///
/// Not recognised: a write by another caller between the lost response and the SDK's
/// retry (or the read) replaces the token, so the put then reports the conflict with that
/// write ([`Error::VersionConflict`] / [`Error::ConditionFailed`]) or an unknown outcome,
/// although its own item was stored first, for a moment.
///
/// The entity is encoded when the builder is made, and the builder owns a clone of the
/// [`Db`], so it borrows nothing: it and its future are `'static`.
#[must_use = "a request does nothing until it is sent or awaited"]
pub struct Put<E: Entity> {
    db: Db<E::Table>,
    /// The encoded entity, or why it cannot be encoded (reported when sent).
    item: Result<Item, Error>,
    version: u64,
    if_absent: bool,
    condition: Option<Condition<E>>,
    customize: Customize<PutItemFluentBuilder>,
    /// Values of chunked fields to write to chunk items (`crate::chunk`).
    pending: Vec<super::chunks::Pending>,
    /// Set by the chunk protocol: the item's chunked fields are final, and the stored
    /// manifests they replace must be these (`None`: not a chunk-protocol put).
    chunk_conditions: Option<Vec<crate::expr::Node>>,
    /// The write token to send: one of an earlier call being resent, or `None` for a new
    /// one ([`Put::write_token`]).
    token: Option<WriteToken>,
}

impl<E: Entity> Put<E> {
    pub(crate) fn new(db: &Db<E::Table>, entity: &E) -> Self {
        Self::stamped(db, entity, Some(crate::entity::Stamp::now()))
    }

    /// A put of `entity` whose `updated` time is set to `stamp` (`None`: as it holds it).
    fn stamped(db: &Db<E::Table>, entity: &E, stamp: Option<crate::entity::Stamp>) -> Self {
        Put {
            db: db.clone(),
            item: crate::entity::write_item(entity, stamp, db.keys()),
            version: E::VERSION.map_or(0, |_| entity.version()),
            if_absent: false,
            condition: None,
            customize: Customize::default(),
            pending: super::chunks::pending(entity),
            chunk_conditions: None,
            token: None,
        }
    }

    pub(crate) fn db(&self) -> &Db<E::Table> {
        &self.db
    }

    pub(crate) fn take_pending(&mut self) -> Vec<super::chunks::Pending> {
        std::mem::take(&mut self.pending)
    }

    pub(crate) fn take_item(&mut self) -> Result<Item, Error> {
        std::mem::replace(&mut self.item, Ok(Item::new()))
    }

    pub(crate) fn restore_item(mut self, item: Item) -> Self {
        self.item = Ok(item);
        self
    }

    /// The chunk protocol's conditions on the stored manifests (see `super::chunks::put`).
    pub(crate) fn chunk_conditions(mut self, conditions: Vec<crate::expr::Node>) -> Self {
        self.chunk_conditions = Some(conditions);
        self
    }

    crate::setters::setters! {
        /// Only write if no item exists under the key; otherwise fail with
        /// [`Error::ConditionFailed`] carrying the existing item.
        if_absent() => if_absent = true;
        /// Resends a put whose outcome was unknown ([`Error::OutcomeUnknown`]) with its
        /// token: if the first put was applied, this one recognises the stored item as its
        /// own (a failed `if_absent`, version or other condition reports success). Send the
        /// same entity with the same conditions as the first put; see
        /// [ambiguous errors](Put#ambiguous-errors).
        write_token(token: crate::item::WriteToken) => token = Some(token);
    }

    /// Only write if `condition` holds on the stored item (evaluated against an empty
    /// item when there is none). Combined with `if_absent` by AND.
    pub fn condition(mut self, condition: Condition<E>) -> Self {
        self.condition = Some(super::and_condition(self.condition.take(), condition));
        self
    }

    /// The put as a transaction item: no write token (a transaction is made idempotent
    /// by its `ClientRequestToken`).
    pub(crate) fn prepare(self) -> Result<PreparedWrite, Error> {
        self.prepare_with(None)
    }

    /// The put, storing `token` in the write-token attribute when there is one.
    fn prepare_with(self, token: Option<&WriteToken>) -> Result<PreparedWrite, Error> {
        super::refuse_history::<E>("put")?;
        let kept_created = self.kept_created();
        // Chunked fields are written by `send` alone (chunks, then the item, then the old
        // chunks): a transaction or `params` would store or show an incomplete item.
        if self.chunk_conditions.is_none() {
            crate::chunk::refuse(
                E::ENTITY_TYPE,
                E::__CHUNKED,
                "single request (a transaction, or params())",
            )?;
        }
        let mut item = self.item?;
        // The key as the item holds it (rendered once, by `to_item`).
        let key: Key<E> = Key::from_raw(super::key_of_item::<E>(&item)?);
        if let Some(token) = token.filter(|_| E::__WRITES_TOKEN) {
            item.insert(
                <E::Table as crate::Table>::SCHEMA.write_token.to_owned(),
                token.value(),
            );
        }
        // Optimistic locking: version 0 is a new item; otherwise the stored item must be
        // at this version. The put writes the next version.
        let expected_version = E::VERSION.map(|attr| (attr, self.version));
        let mut version_guard = None;
        if let Some((attr, v)) = expected_version {
            let next = next_version::<E>(v)?;
            item.insert(attr.to_owned(), AttributeValue::N(next.to_string()));
            version_guard = Some(if v == 0 {
                item_absent::<E>()
            } else {
                and(version_is(attr, v), Some(is_entity::<E>()))
            });
        }
        // The token counts against the 400 KB limit like any attribute.
        crate::size::check_item_size::<E>(&item)?;
        let chunks = self.chunk_conditions.unwrap_or_default();
        let (condition, names, values) = match (self.if_absent, version_guard, self.condition) {
            // A plain put (most puts): its guard is the same text for every item of `E`.
            (false, None, None) if chunks.is_empty() => super::absent_or_entity_rendered::<E>(),
            (if_absent, version_guard, condition) => {
                let guard = match (if_absent, version_guard) {
                    (true, _) => item_absent::<E>(),
                    (false, Some(guard)) => guard,
                    (false, None) => absent_or_entity::<E>(),
                };
                let mut node = and(guard, user_condition(condition));
                for chunk in chunks {
                    node = and(node, Some(chunk));
                }
                let mut p = Placeholders::default();
                let condition = render::<E>(&mut p, &node)?;
                let (names, values) = p.finish();
                (condition, names, values)
            }
        };
        let (mut condition, mut names, mut values) = (condition, names, values);
        if let Some(attribute) = kept_created {
            created::guard(
                attribute,
                item.get(attribute),
                &mut condition,
                &mut names,
                &mut values,
            );
        }
        Ok(PreparedWrite {
            entity: E::ENTITY_TYPE,
            key: key.to_string(),
            key_item: key.to_item()?,
            item: Some(item),
            update: None,
            condition,
            names,
            values,
            needs_item: false,
            expected_version,
        })
    }

    /// The request with `token`, rendered into the SDK's builder and customized, with
    /// what reading its failure needs.
    fn request(
        mut self,
        token: &WriteToken,
    ) -> Result<(PutItemFluentBuilder, FailureContext), Error> {
        crate::unique::refuse(E::ENTITY_TYPE, E::__UNIQUE, "single PutItem request")?;
        let db = self.db.clone();
        let customize = std::mem::take(&mut self.customize);
        let p = self.prepare_with(Some(token))?;
        let request = db
            .client()
            .put_item()
            .table_name(db.table_name())
            .set_item(p.item)
            .condition_expression(p.condition)
            .set_expression_attribute_names(p.names)
            .set_expression_attribute_values(p.values)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        let failure = FailureContext {
            key: p.key,
            needs_item: false,
            expected_version: p.expected_version,
        };
        Ok((customize.apply(request), failure))
    }

    /// The `PutItem` input this request would send, instead of sending it (like
    /// ElectroDB's `.params()`). Each put draws a new write token when it is sent or
    /// rendered, so the token attribute differs from one put to the next.
    ///
    /// ```
    /// # use dynamo_model::{Entity, Table};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// # #[derive(Entity, serde::Serialize, serde::Deserialize)]
    /// # #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # let db = dynamo_model::Db::<App>::offline("app");
    /// let user = User { id: "u-1".into() };
    /// let input = db.put(&user).if_absent().params()?;
    /// assert_eq!(input.condition_expression(), Some("attribute_not_exists(#n0)"));
    /// assert_eq!(input.item().unwrap()["PK"].as_s().unwrap(), "USER#u-1");
    /// # Ok::<(), dynamo_model::Error>(())
    /// ```
    pub fn params(mut self) -> Result<PutItemInput, Error> {
        let token = self.token.take().unwrap_or_else(WriteToken::new);
        let (request, _) = self.request(&token).map_err(|e| e.during("PutItem"))?;
        input("PutItem", request.as_input().clone().build())
    }

    /// The size of the item this put sends, as DynamoDB counts it against its 400 KB
    /// limit: the encoded entity plus what the put adds (the write token, the next
    /// version) and the item's entries in local secondary indexes. This is the figure the
    /// put is checked against before sending; [`item_size`](crate::item_size) of
    /// [`Entity::to_item`] counts the entity alone and is smaller.
    ///
    /// Fails as [`params`](Self::params) does: with
    /// [`ValidationReason::ItemTooLarge`](crate::ValidationReason::ItemTooLarge) (its
    /// message gives the size) when the item is over the limit, and for an entity with
    /// chunked fields, whose item holds manifests only once its chunks are written.
    ///
    /// ```
    /// # use dynamo_model::{Entity, Table};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// # #[derive(Entity, serde::Serialize, serde::Deserialize)]
    /// # #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE")]
    /// # struct User { id: String, bio: String }
    /// # let db = dynamo_model::Db::<App>::offline("app");
    /// let user = User { id: "u-1".into(), bio: "hello".into() };
    /// let sent = db.put(&user).size()?;
    /// assert!(sent > dynamo_model::item_size(&user.to_item()?));
    /// assert!(sent <= dynamo_model::MAX_ITEM_BYTES);
    /// # Ok::<(), dynamo_model::Error>(())
    /// ```
    pub fn size(self) -> Result<usize, Error> {
        let input = self.params()?;
        let item = input.item().cloned().unwrap_or_default();
        Ok(crate::item_size(&item)
            + crate::local_index_bytes(&<E::Table as crate::Table>::SCHEMA, &item))
    }

    /// Sends the request. For an entity with chunked fields, this is the chunk protocol
    /// of [`crate::chunk`]: several requests.
    pub async fn send(self) -> Result<(), Error> {
        let span = crate::trace::operation("PutItem", self.db.table_name(), E::ENTITY_TYPE);
        crate::trace::key(&span, self.db.traces_keys(), || {
            let item = self.item.as_ref().ok()?;
            crate::schema::describe_item_key(&<E::Table as crate::Table>::SCHEMA, item)
        });
        crate::trace::traced_write(span, async move {
            if !E::__CHUNKED.is_empty() && self.chunk_conditions.is_none() {
                return chunked::put(self).await;
            }
            if !E::__UNIQUE.is_empty() {
                return self.send_unique().await;
            }
            self.send_item().await
        })
        .await
    }

    /// Sends the `PutItem` request.
    pub(crate) async fn send_item(self) -> Result<(), Error> {
        self.ready()?.send_keeping_created().await.map(|_| ())
    }

    /// The `PutItem` request, validated and rendered (nothing sent yet): the chunk
    /// protocol renders it before it writes any chunk, so a put refused here leaves
    /// nothing behind.
    pub(crate) fn ready(mut self) -> Result<ReadyPut<E>, Error> {
        let token = self.token.take().unwrap_or_else(WriteToken::new);
        let db = self.db.clone();
        let kept_created = self.kept_created();
        let (request, failure) = self.request(&token).map_err(|e| e.during("PutItem"))?;
        Ok(ReadyPut {
            db,
            token,
            request,
            failure,
            timeout: None,
            kept_created,
            _entity: std::marker::PhantomData,
        })
    }
}

/// How a [`ReadyPut`] that succeeded knows it: the item it sent is stored, or the item
/// stored carries the call's write token (which item that is, the caller reads from it).
pub(crate) enum Sent {
    /// `PutItem` answered success: the item sent is stored.
    Written,
    /// The stored item carries the call's token: a failed condition returned it, or a
    /// read after the SDK gave up found it. An earlier attempt of this call, or an earlier
    /// call resent with this token, stored it: it may hold other values than those sent.
    Found(Item),
}

/// A rendered `PutItem` request and what reading its answer needs ([`Put::ready`]).
pub(crate) struct ReadyPut<E: Entity> {
    db: Db<E::Table>,
    token: WriteToken,
    request: PutItemFluentBuilder,
    failure: FailureContext,
    timeout: Option<std::time::Duration>,
    /// The creation-time attribute the put keeps ([`created`]).
    kept_created: Option<&'static str>,
    _entity: std::marker::PhantomData<fn() -> E>,
}

impl<E: Entity> ReadyPut<E> {
    /// Gives the call (retries included) at most `timeout`.
    pub(crate) fn within(mut self, timeout: std::time::Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sends the request.
    ///
    /// After an ambiguous attempt, a failed condition on an item carrying the call's
    /// token, or a read of the item once the SDK gave up that finds it, is the call's own
    /// write: success ([`Sent::Found`], with that item). A read that does not is
    /// [`Error::OutcomeUnknown`].
    pub(crate) async fn send(self) -> Result<Sent, Error> {
        self.send_watched().await.0
    }

    /// [`send`](Self::send), and whether an attempt ended without a definite answer.
    pub(crate) async fn send_watched(self) -> (Result<Sent, Error>, bool) {
        let ReadyPut {
            db,
            token,
            request,
            failure,
            timeout,
            ..
        } = self;
        // The key as sent (a `customize` hook may have changed it), for the settling read.
        let key_item = request.get_item().as_ref().and_then(|item| {
            crate::schema::raw_key_of(&<E::Table as crate::Table>::SCHEMA, item)
                .map(|key| key.to_item(&<E::Table as crate::Table>::SCHEMA))
        });
        let mut sending = super::write_sending::<E>(
            &db,
            Operation::PutItem,
            E::__WRITES_TOKEN,
            request.get_item().as_ref(),
            request.get_return_values().as_ref(),
        );
        if let Some(timeout) = timeout {
            sending = sending.timeout(timeout);
        }
        let sent = sending.send(exec!(sending, request)).await;
        let result = Self::answer(db, token, failure, key_item, &sending, sent).await;
        (result, sending.ambiguous())
    }

    /// What the answer `sent` of the put means; an ambiguous failure is settled by a read.
    async fn answer(
        db: Db<E::Table>,
        token: WriteToken,
        failure: FailureContext,
        key_item: Option<Item>,
        sending: &Sending,
        sent: Result<PutItemOutput, SdkError<PutItemError>>,
    ) -> Result<Sent, Error> {
        let attribute = <E::Table as crate::Table>::SCHEMA.write_token;
        match sent {
            Ok(_) => Ok(Sent::Written),
            Err(e) => {
                let open = outcome_open(sending.ambiguous(), &e);
                match e.into_service_error() {
                    PutItemError::ConditionalCheckFailedException(failed) => {
                        if let Some(item) = failed
                            .item
                            .as_ref()
                            .filter(|item| token.written_in(Some(item), attribute))
                        {
                            // An earlier attempt of this call (or a call resent with its
                            // token) stored the item; its response was lost and the
                            // SDK's retry found it.
                            return Ok(Sent::Found(item.clone()));
                        }
                        Err(condition_failed::<E>(
                            failure.key,
                            failed.item,
                            failure.needs_item,
                            failure.expected_version,
                        ))
                    }
                    other => {
                        let error = Error::service("PutItem", db.table_name(), other);
                        let Some(key_item) = key_item.filter(|_| open) else {
                            return Err(error);
                        };
                        // The SDK gave up after an attempt that may have been applied.
                        let current = match settle(&db, key_item).await {
                            Settled::Read(Some(item))
                                if token.written_in(Some(&item), attribute) =>
                            {
                                return Ok(Sent::Found(item));
                            }
                            Settled::Read(item) => item.map(Box::new),
                            Settled::Unread => None,
                        };
                        Err(Error::OutcomeUnknown {
                            entity: E::ENTITY_TYPE,
                            operation: "PutItem",
                            key: failure.key,
                            // No token stored: resending with it would settle nothing.
                            token: Some(token).filter(|_| E::__WRITES_TOKEN),
                            current,
                            source: Box::new(error),
                        })
                    }
                }
            }
        }
    }
}

customizable!(impl[E: Entity] Put<E>, PutItemFluentBuilder, write -> ());

impl<T: crate::Table> super::TransactWrite<T> {
    /// Adds a put, with its conditions (`if_absent`, `condition`), to the table of the
    /// `Db` it was built on: this transaction's table, another table, or another of the
    /// period tables (`PeriodTables::db_at`, feature `period`), in the
    /// same account and region (another region is refused when the transaction is sent).
    /// Its [`customize`](Put::customize) hooks do not apply (they are made for a
    /// `PutItem`; customize the transaction with
    /// [`TransactWrite::customize`](super::TransactWrite::customize)), nor does its `Db`'s
    /// client: the transaction is sent through its own.
    pub fn put<E: Entity>(self, put: Put<E>) -> Self {
        let db = put.db.clone();
        let prepared = crate::unique::refuse(E::ENTITY_TYPE, E::__UNIQUE, "transaction")
            .and_then(|()| put.prepare());
        self.push_on(&db, super::transaction::Kind::Put, prepared)
    }
}

impl<T: crate::Table> crate::Db<T> {
    /// Writes a whole entity, replacing any item of the same entity type under its key.
    pub fn put<E: Entity<Table = T>>(&self, entity: &E) -> Put<E> {
        Put::new(self, entity)
    }

    /// Creates the item of `value`: first its unset generated ids are made and its
    /// `created` and `updated` times set to now, in `value` itself (see
    /// [`auto`](crate::auto)), then it is put [`if_absent`](Put::if_absent): an item
    /// already under the key is [`Error::ConditionFailed`]. `value` holds what was
    /// written; resending it (with [`write_token`](Put::write_token) after
    /// [`Error::OutcomeUnknown`]) keeps its ids.
    pub fn create<E: Entity<Table = T>>(&self, value: &mut E) -> Put<E> {
        let now = std::time::SystemTime::now();
        crate::entity::EntityInternals::__stamp(value, now, true);
        Put::stamped(self, value, None).if_absent()
    }
}

mod chunked;
mod created;
mod unique;

#[cfg(test)]
mod tests {
    use super::WriteToken;
    use crate::{Db, Entity, MAX_ITEM_BYTES, Table, ValidationReason};
    use serde::{Deserialize, Serialize};

    #[derive(Table)]
    #[dynamo(pk = "PK", sk = "SK", write_token = "tok")]
    struct App;

    #[derive(Entity, Serialize, Deserialize)]
    #[dynamo(table = App, pk = "N#{id}", sk = "N")]
    struct Note {
        id: String,
        text: String,
    }

    fn db() -> Db<App> {
        crate::db::offline()
    }

    /// The written-out guard of a plain put is exactly what the renderer makes of
    /// `absent_or_entity` (a divergence would send another condition than the one tested).
    #[test]
    fn the_plain_put_guard_is_the_rendered_absent_or_entity_condition() {
        let mut p = crate::expr::Placeholders::default();
        let rendered =
            super::super::render::<Note>(&mut p, &super::super::absent_or_entity::<Note>())
                .unwrap();
        let (names, values) = p.finish();
        assert_eq!(
            super::super::absent_or_entity_rendered::<Note>(),
            (rendered, names, values)
        );
        // And a plain put sends it.
        let note = Note {
            id: "n".into(),
            text: "t".into(),
        };
        let input = db().put(&note).params().unwrap();
        assert_eq!(
            input.condition_expression(),
            Some("attribute_not_exists(#n0) OR #n1 = :v0")
        );
        assert_eq!(input.expression_attribute_names().unwrap()["#n0"], "PK");
        assert_eq!(input.expression_attribute_names().unwrap()["#n1"], "_type");
        assert_eq!(
            input.expression_attribute_values().unwrap()[":v0"],
            aws_sdk_dynamodb::types::AttributeValue::S("Note".into())
        );
    }

    #[test]
    fn a_resent_put_sends_the_token_it_is_given() {
        let note = Note {
            id: "n".into(),
            text: "t".into(),
        };
        let token = WriteToken::parse("abcdefghijklmnop").expect("a token");
        let input = db()
            .put(&note)
            .if_absent()
            .write_token(token.clone())
            .params()
            .unwrap();
        assert_eq!(input.item().unwrap()["tok"], token.value());
        // Without one, each put draws its own.
        let fresh = db().put(&note).params().unwrap();
        assert_ne!(fresh.item().unwrap()["tok"], token.value());
    }

    #[test]
    fn the_write_token_is_stored_under_the_tables_name_and_counts_in_the_item_size() {
        let db = db();
        let mut note = Note {
            id: "n".into(),
            text: String::new(),
        };
        let bare = crate::item_size(&note.to_item().expect("item"));
        note.text = "x".repeat(MAX_ITEM_BYTES - bare);
        assert_eq!(
            crate::item_size(&note.to_item().expect("item")),
            MAX_ITEM_BYTES
        );

        // Exactly at the limit without a token (a transaction item): accepted.
        let in_transaction = db.put(&note).prepare().expect("at the limit");
        assert!(!in_transaction.item.expect("item").contains_key("tok"));
        // The single-item put adds "tok" + 16 characters: 19 bytes over.
        let err = db
            .put(&note)
            .prepare_with(Some(&WriteToken::new()))
            .err()
            .expect("over the limit");
        assert_eq!(
            err.validation_reason(),
            Some(ValidationReason::ItemTooLarge)
        );
        assert!(
            err.to_string()
                .contains(&format!("{}", MAX_ITEM_BYTES + 19)),
            "{err}"
        );

        note.text.truncate(note.text.len() - 19);
        let token = WriteToken::new();
        let put = db
            .put(&note)
            .prepare_with(Some(&token))
            .expect("fits with the token");
        let item = put.item.expect("item");
        assert_eq!(crate::item_size(&item), MAX_ITEM_BYTES);
        assert_eq!(item.get("tok"), Some(&token.value()));
        assert!(!item.contains_key("_wt"));
    }
}
