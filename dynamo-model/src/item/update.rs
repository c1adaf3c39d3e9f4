use super::ambiguous::{Settled, WriteToken, outcome_open, project, settle};
use super::{
    PreparedWrite, VersionCheck, absent_or_entity, and, condition_failed, is_entity, item_absent,
    item_exists, user_condition, version_guard, version_is,
};
use crate::call::Operation;
use crate::codec::{AttrValue, Numeric, Operand};
use crate::expr::{AttrPath, Placeholders, SettablePath, UpdatablePath, ValueError};
use crate::request::exec::exec;
use crate::request::{Customize, customizable, input};
use crate::{Condition, Db, Entity, Error, Item, Key};
use aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder;
use aws_sdk_dynamodb::operation::update_item::{UpdateItemError, UpdateItemInput};
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue, ReturnValuesOnConditionCheckFailure};

/// `SET path = f(path, value)` forms whose result DynamoDB computes.
#[derive(Debug, Clone, Copy)]
enum SetFn {
    /// `path - value`
    Subtract,
    /// `list_append(if_not_exists(path, []), value)`
    Append,
    /// `list_append(value, if_not_exists(path, []))`
    Prepend,
    /// `if_not_exists(path, value)`
    IfNotExists,
}

enum Action {
    Set(AttrPath, Result<AttributeValue, ValueError>),
    SetFn(AttrPath, SetFn, Result<AttributeValue, ValueError>),
    /// `SET path = <computed>`: a value DynamoDB computes from the item's attributes.
    Compute(AttrPath, crate::expr::SetNode),
    Remove(AttrPath),
    Add(AttrPath, Result<AttributeValue, ValueError>),
    Delete(AttrPath, Result<AttributeValue, ValueError>),
}

impl Action {
    /// The action that leaves no value at `path`: `REMOVE`, or `SET path = NULL` for an
    /// element of a list (which stores `None` as `NULL` and keeps its positions).
    fn cleared(path: AttrPath) -> Action {
        match path.steps().last() {
            Some(crate::expr::Step::Index(_)) => Action::Set(path, Ok(AttributeValue::Null(true))),
            _ => Action::Remove(path),
        }
    }

    fn path(&self) -> &AttrPath {
        match self {
            Action::Set(p, _)
            | Action::SetFn(p, ..)
            | Action::Compute(p, _)
            | Action::Remove(p)
            | Action::Add(p, _)
            | Action::Delete(p, _) => p,
        }
    }
}

/// What an update returns (`ReturnValues`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Returning {
    New,
    Old,
    Updated,
    Nothing,
}

/// An `UpdateItem` request; see [`Db::update`].
///
/// The item must exist and be of entity type `E` (otherwise [`Error::NotFound`] or
/// [`Error::ConditionFailed`]; in a transaction,
/// [`CancelReason::NotFound`](crate::error::CancelReason::NotFound) or
/// [`CancelReason::ConditionalCheckFailed`](crate::error::CancelReason::ConditionalCheckFailed)),
/// unless the update is an [`upsert`](Update::upsert), which creates a missing item. Fields of
/// the primary key templates cannot be updated (their paths have no update methods: the
/// item would have to move to another key). Resolves to the entity as stored after the
/// update.
///
/// # Ambiguous errors
///
/// DynamoDB may apply an update and lose its response (an HTTP 500 or a timeout after the
/// write); the SDK then sends the same request again. So that the retry neither applies
/// the update twice (an `add` counted twice) nor reports a conflict with its own write,
/// every update stores a token unique to the call in the table's write-token attribute
/// ([`TableSchema::write_token`](crate::TableSchema::write_token), `_wt` by default) and
/// is conditioned on that token not being stored yet. When the condition fails on an item
/// carrying this call's token, the update was applied by this very call and reports
/// success:
/// - [`send`](Update::send) returns the item DynamoDB returned with the failure: the item
///   as stored now: the state this update produced, plus whatever a transaction, a batch
///   write or a writer outside this crate changed since without replacing the token;
/// - [`send_returning_updated`](Update::send_returning_updated) returns the updated
///   attributes taken from that item;
/// - [`send_returning_nothing`](Update::send_returning_nothing) returns `Ok(())`;
/// - [`send_returning_old`](Update::send_returning_old) cannot: the values from before the
///   update were in the lost response. It fails with [`Error::ReturnValuesLost`], which
///   says the update *was* applied (do not send it again).
///
/// When every attempt ends without an answer (the SDK gives up on 5xx errors or
/// timeouts), the update reads the item, strongly consistent: if it carries this call's
/// token, the update was applied and reports success as above (the item read is the item
/// as stored now). Otherwise (the update was not applied, another write replaced the token
/// since, or the read failed too) it fails with [`Error::OutcomeUnknown`], which carries
/// the token: resend the same update with [`write_token`](Update::write_token) to settle
/// it; the token condition keeps it from being applied twice.
///
/// Not recognised: a single-item put or update by another caller between the lost
/// response and the SDK's retry (or the read) replaces the token, so the update then
/// reports the conflict with that write ([`Error::VersionConflict`] /
/// [`Error::ConditionFailed`]) or an unknown outcome although it was applied before it. A transaction update or an outside writer in that
/// window leaves the token in place: the update reports success, with a state that
/// includes that other write. An update without a condition of its own is applied once all the same: the token
/// condition stops the retry.
///
/// ```no_run
/// # use dynamo_model::{Db, Entity, Table};
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[dynamo(table = App, pk = "ACCOUNT#{id}", sk = "ACCOUNT")]
/// # struct Account { id: String, status: String, balance: i64, note: Option<String> }
/// # async fn demo(db: Db<App>) -> Result<(), dynamo_model::Error> {
/// let f = Account::fields();
/// let account = db
///     .update(Account::key("a-1"))
///     .add(f.balance, -25)
///     .set(f.status, "open")
///     .remove(f.note)
///     .condition(f.balance.ge(25))
///     .await?;
/// # Ok(()) }
/// ```
#[must_use = "a request does nothing until it is sent or awaited"]
pub struct Update<E: Entity> {
    db: Db<E::Table>,
    key: Key<E>,
    actions: Vec<Action>,
    condition: Option<Condition<E>>,
    version: VersionCheck,
    customize: Customize<UpdateItemFluentBuilder>,
    /// The write token to send: one of an earlier call being resent, or `None` for a new
    /// one ([`Update::write_token`]).
    token: Option<WriteToken>,
    /// Create the item when there is none ([`Update::upsert`]).
    upsert: bool,
    /// The first rule a value it sets breaks ([`crate::validate`]), reported when sent.
    refused: Option<Error>,
}

impl<E: Entity> Update<E> {
    pub(crate) fn new(db: &Db<E::Table>, key: Key<E>) -> Self {
        Update {
            db: db.clone(),
            key,
            actions: Vec::new(),
            condition: None,
            version: VersionCheck::Unspecified,
            customize: Customize::default(),
            token: None,
            upsert: false,
            refused: None,
        }
    }

    crate::setters::setters! {
        /// Resends an update whose outcome was unknown ([`Error::OutcomeUnknown`]) with its
        /// token: the update is conditioned on the token not being stored yet, so if the
        /// first update was applied, this one is not applied again and reports success (with
        /// the item as stored now). Send the same actions with the same version or condition
        /// as the first update; see [ambiguous errors](Update#ambiguous-errors).
        write_token(token: crate::item::WriteToken) => token = Some(token);
    }

    /// Creates the item when there is none under the key, as DynamoDB's own `UpdateItem`
    /// does (ElectroDB's, DynamoDB-Toolbox's and PynamoDB's `upsert`): the first like of a
    /// post starts its counter, `ADD like# :1` on no item making `like# = 1`.
    ///
    /// An item the update creates holds what a put of the entity would hold besides the
    /// update's own values: the key, the stored key fields, the entity-type attribute and
    /// the keys of the indexes built from key fields and literals alone (each written
    /// with `if_not_exists`, so an item that is there keeps its own). An item of another
    /// entity type under the key is still refused ([`Error::ConditionFailed`] with it);
    /// a [`condition`](Update::condition) holds or fails against an empty item when there
    /// is none (so `f.likes.lt(100)` fails on no item: DynamoDB compares nothing to 100).
    ///
    /// The created item has only the fields the update sets: set every field the entity
    /// needs to decode (fields that are not `Option`s or `default`) when the item may be
    /// missing, or [`send`](Update::send) fails to decode what it wrote (use
    /// [`send_returning_nothing`](Update::send_returning_nothing) or
    /// [`send_returning_updated`](Update::send_returning_updated) for a partial item).
    ///
    /// Versioned entities (a `#[dynamo(version)]` field) still say which version they
    /// expect: [`any_version`](Update::any_version) creates the item at version 1 (`ADD`
    /// on no version), [`if_version(0)`](Update::if_version) creates it at version 1 and
    /// fails with [`Error::VersionConflict`] when an item is there, and `if_version(v)`
    /// for `v > 0` needs the item at `v`, as without `upsert`. Entities with history
    /// (`#[dynamo(history)]`) are refused, as for every plain update
    /// ([`ValidationReason::KeepsHistory`](crate::ValidationReason::KeepsHistory)): their
    /// revisions are written by [`Db::history`](crate::Db::history).
    ///
    /// A lost response is settled by the write token as for every update (see
    /// [ambiguous errors](Update#ambiguous-errors)): the like is counted once.
    ///
    /// ```
    /// # use dynamo_model::{Entity, Table};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct Social;
    /// #[derive(Entity, serde::Serialize, serde::Deserialize)]
    /// #[dynamo(table = Social, pk = "p#{post_id}", sk = "likecount")]
    /// struct LikeCount { post_id: String, #[dynamo(rename = "like#")] likes: u64 }
    ///
    /// # let db = dynamo_model::Db::<Social>::offline("social");
    /// let f = LikeCount::fields();
    /// let input = db.update(LikeCount::key("12345")).upsert().add(f.likes, 1).params()?;
    /// assert!(input.condition_expression().unwrap().starts_with("(attribute_not_exists(#n"));
    /// # Ok::<(), dynamo_model::Error>(())
    /// ```
    pub fn upsert(mut self) -> Self {
        self.upsert = true;
        self
    }

    super::version_setters!(
        "Optimistic locking: only update if the stored item is at `version` (it becomes \
         `version + 1`); otherwise [`Error::VersionConflict`] with the current item.",
        "Updates a versioned entity whatever its version (still incrementing it), e.g. for \
         commutative changes such as counters."
    );

    /// `SET path = value`. Setting `None` (or an empty set) removes the attribute. A
    /// compressed field's value is compressed exactly as a put stores it.
    pub fn set<V: 'static>(
        mut self,
        path: impl SettablePath<E, V>,
        value: impl Operand<V>,
    ) -> Self {
        let name = path.attribute();
        let value = value.into_operand();
        self.check_rules(&name, &value);
        self.actions.push(match path.__encode(&value) {
            Ok(Some(av)) => Action::Set(name, Ok(av)),
            Ok(None) => Action::cleared(name),
            Err(source) => {
                let path = name.to_string();
                Action::Set(name, Err(ValueError { path, source }))
            }
        });
        self
    }

    /// `REMOVE path`: clears an optional field (an element of a list is set to `NULL`,
    /// as a list stores `None`, instead: removing it would move the elements after it).
    pub fn remove<V>(mut self, path: impl SettablePath<E, Option<V>>) -> Self {
        self.actions.push(Action::cleared(path.attribute()));
        self
    }

    /// `REMOVE path` for an entry of a map attribute, a member of a document or an element
    /// of a list (the elements after it move up one place).
    pub fn remove_at<V>(
        mut self,
        path: impl Into<crate::expr::NestedPath<E, V, crate::expr::Mutable>>,
    ) -> Self {
        let path = path.into();
        self.actions
            .push(Action::Remove(UpdatablePath::<E, V>::attribute(&path)));
        self
    }

    /// `ADD path delta`: atomic increment (negative deltas decrement); a missing
    /// attribute counts as zero.
    pub fn add<V: Numeric>(self, path: impl UpdatablePath<E, V>, delta: V::Delta) -> Self {
        self.push_value(path.attribute(), &delta, Action::Add)
    }

    fn push_value<V: AttrValue>(
        mut self,
        path: AttrPath,
        value: &V,
        make: impl FnOnce(AttrPath, Result<AttributeValue, ValueError>) -> Action,
    ) -> Self {
        let encoded = value.to_attr().map_err(|source| ValueError {
            path: path.to_string(),
            source,
        });
        self.actions.push(make(path, encoded));
        self
    }

    /// `SET path = path - amount`: decrement without going through a negative `ADD`
    /// (which unsigned types cannot express). Combine with a condition such as
    /// `path.ge(amount)` to keep unsigned values from going below zero.
    pub fn subtract<V: Numeric>(self, path: impl UpdatablePath<E, V>, amount: V::Delta) -> Self {
        self.push_value(path.attribute(), &amount, |p, v| {
            Action::SetFn(p, SetFn::Subtract, v)
        })
    }

    /// `SET path = if_not_exists(path, value)`: set only when the attribute is absent.
    pub fn set_if_absent<V: AttrValue + 'static>(
        mut self,
        path: impl UpdatablePath<E, V>,
        value: impl Operand<V>,
    ) -> Self {
        let (path, value) = (path.attribute(), value.into_operand());
        self.check_rules(&path, &value);
        self.push_value(path, &value, |p, v| Action::SetFn(p, SetFn::IfNotExists, v))
    }

    /// Only update if `condition` holds on the stored item.
    pub fn condition(mut self, condition: Condition<E>) -> Self {
        self.condition = Some(super::and_condition(self.condition.take(), condition));
        self
    }

    /// The update as a transaction item: no write token (a transaction is made idempotent
    /// by its `ClientRequestToken`).
    pub(crate) fn prepare(self) -> Result<PreparedWrite, Error> {
        if !self.unique_changes()?.is_empty() {
            crate::unique::refuse(E::ENTITY_TYPE, E::__UNIQUE, "transaction")?;
        }
        self.prepare_with(None).map(|(prepared, _)| prepared)
    }

    /// The update, storing `token` in the write-token attribute and conditioned on it not
    /// being stored yet, when there is one. Also returns the paths the update sets (what
    /// `ReturnValues=UPDATED_NEW` returns), without the token.
    fn prepare_with(
        mut self,
        token: Option<&WriteToken>,
    ) -> Result<(PreparedWrite, Vec<AttrPath>), Error> {
        super::refuse_history::<E>("update")?;
        self.check_ruled_changes()?;
        self.seal_encrypted()?;
        self.check_computed()?;
        self.validate()?;
        let expected_version = version_guard::<E>(self.version, "update")?;
        if let Some(attr) = E::VERSION {
            self.actions.push(match expected_version {
                Some((_, v)) => Action::Set(
                    attr.into(),
                    Ok(AttributeValue::N(super::next_version::<E>(v)?.to_string())),
                ),
                None => Action::Add(attr.into(), Ok(AttributeValue::N("1".into()))),
            });
        }
        // An upsert that may create the item: a version above 0 needs the item there.
        let creates = self.upsert && !matches!(expected_version, Some((_, v)) if v > 0);
        if creates {
            self.creation_actions()?;
        }
        self.stamp_actions(creates)?;
        let index = self.index_actions()?;
        let updated: Vec<AttrPath> = self
            .actions
            .iter()
            .chain(&index)
            .filter(|a| !matches!(a, Action::Remove(_)))
            .map(|a| a.path().clone())
            .collect();
        let mut guard = match (creates, expected_version) {
            // Version 0: created only where there is no item.
            (true, Some(_)) => item_absent::<E>(),
            (true, None) => absent_or_entity::<E>(),
            (false, _) => and(item_exists::<E>(), Some(is_entity::<E>())),
        };
        if let (false, Some((attr, v))) = (creates, expected_version) {
            guard = and(guard, Some(version_is(attr, v)));
        }
        if let Some(token) = token.filter(|_| E::__WRITES_TOKEN) {
            let attr = <E::Table as crate::Table>::SCHEMA.write_token;
            self.actions
                .push(Action::Set(attr.into(), Ok(token.value())));
            guard = and(guard, Some(super::ambiguous::not_written(token, attr)));
        }
        let key_item = self.key.to_item()?;
        let mut p = Placeholders::default();
        let update = self.render_actions(&mut p, &index)?;
        let node = and(guard, user_condition(self.condition));
        let prepared = PreparedWrite {
            update: Some(update),
            needs_item: !creates,
            expected_version,
            ..PreparedWrite::guarded::<E>((self.key.to_string(), key_item), p, &node)?
        };
        Ok((prepared, updated))
    }

    /// What an upsert writes besides its own actions when it creates the item, each with
    /// `if_not_exists` (an item there keeps its own): the entity-type attribute, the
    /// stored key fields and the index keys built from key fields and literals alone.
    fn creation_actions(&mut self) -> Result<(), Error> {
        let schema = &<E::Table as crate::Table>::SCHEMA;
        let raw = self.key.raw()?;
        let mut created = Vec::new();
        if E::__WRITES_ENTITY_TYPE {
            created.push((
                schema.entity_type,
                AttributeValue::S(E::ENTITY_TYPE.to_owned()),
            ));
        }
        created.extend(E::__key_fields(&raw.to_item(schema))?);
        created.extend(crate::key::template::key_field_index_keys(
            E::ENTITY_TYPE,
            raw,
            E::__INDEX_TEMPLATES,
        )?);
        for (attribute, value) in created {
            let path = AttrPath::Top(attribute);
            // A value the update sets itself wins (an index key its fields recompute).
            if !self.actions.iter().any(|a| a.path().overlaps(&path)) {
                self.actions
                    .push(Action::SetFn(path, SetFn::IfNotExists, Ok(value)));
            }
        }
        Ok(())
    }

    /// The request with `token`, rendered into the SDK's builder and customized, with
    /// what reading its outcome needs: the key and version (for errors) and the paths
    /// the update sets.
    #[allow(clippy::type_complexity)]
    fn request(
        mut self,
        token: &WriteToken,
        returning: Returning,
    ) -> Result<(UpdateItemFluentBuilder, PreparedWrite, Vec<AttrPath>), Error> {
        if !self.unique_changes()?.is_empty() {
            crate::unique::refuse(E::ENTITY_TYPE, E::__UNIQUE, "single UpdateItem request")?;
        }
        let db = self.db.clone();
        let customize = std::mem::take(&mut self.customize);
        let (mut p, updated) = self.prepare_with(Some(token))?;
        let request = db
            .client()
            .update_item()
            .table_name(db.table_name())
            .set_key(Some(std::mem::take(&mut p.key_item)))
            .set_update_expression(p.update.take())
            .condition_expression(std::mem::take(&mut p.condition))
            .set_expression_attribute_names(p.names.take())
            .set_expression_attribute_values(p.values.take())
            .return_values(match returning {
                Returning::New => ReturnValue::AllNew,
                Returning::Old => ReturnValue::AllOld,
                Returning::Updated => ReturnValue::UpdatedNew,
                Returning::Nothing => ReturnValue::None,
            })
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        Ok((customize.apply(request), p, updated))
    }

    /// The `UpdateItem` input [`send`](Self::send) would send (`ReturnValues=ALL_NEW`),
    /// instead of sending it (like ElectroDB's `.params()`). Each update draws a new write
    /// token when it is sent or rendered.
    ///
    /// ```
    /// # use dynamo_model::{Entity, Table};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// # #[derive(Entity, serde::Serialize, serde::Deserialize)]
    /// # #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE")]
    /// # struct User { id: String, visits: u64 }
    /// # let db = dynamo_model::Db::<App>::offline("app");
    /// let input = db.update(User::key("u-1")).add(User::fields().visits, 1).params()?;
    /// // The SET is the write token (see "Ambiguous errors").
    /// assert!(input.update_expression().unwrap().ends_with("ADD #n0 :v0"), "{input:?}");
    /// # Ok::<(), dynamo_model::Error>(())
    /// ```
    pub fn params(mut self) -> Result<UpdateItemInput, Error> {
        let token = self.token.take().unwrap_or_else(WriteToken::new);
        let (request, _, _) = self
            .request(&token, Returning::New)
            .map_err(|e| e.during("UpdateItem"))?;
        input("UpdateItem", request.as_input().clone().build())
    }

    async fn run(self, returning: Returning) -> Result<Option<Item>, Error> {
        let span = crate::trace::operation("UpdateItem", self.db.table_name(), E::ENTITY_TYPE);
        crate::trace::key(&span, self.db.traces_keys(), || Some(self.key.to_string()));
        let changes = self.unique_changes()?;
        if !changes.is_empty() {
            return crate::trace::traced_write(span, self.run_unique(changes, returning)).await;
        }
        crate::trace::traced_write(span, self.run_untraced(returning)).await
    }

    async fn run_untraced(mut self, returning: Returning) -> Result<Option<Item>, Error> {
        let db = self.db.clone();
        let token = self.token.take().unwrap_or_else(WriteToken::new);
        let token_attr = <E::Table as crate::Table>::SCHEMA.write_token;
        let (request, p, updated) = self
            .request(&token, returning)
            .map_err(|e| e.during("UpdateItem"))?;
        // The key as sent (a `customize` hook may have changed it), for the settling read.
        let key_item = request.get_key().clone();
        let sending = super::write_sending::<E>(
            &db,
            Operation::UpdateItem,
            E::__WRITES_TOKEN,
            key_item.as_ref(),
            request.get_return_values().as_ref(),
        );
        let result = sending.send(exec!(sending, request)).await;
        let ambiguous = sending.ambiguous();
        // The token is the crate's bookkeeping, not a value the caller asked for.
        let without_token = |mut item: Item| {
            item.remove(token_attr);
            item
        };
        // What the call returns once its own write is found in `item` (an earlier attempt
        // applied the update; its response was lost).
        let own_write = |item: Item| match returning {
            Returning::New => Ok(Some(without_token(item))),
            Returning::Updated => Ok(Some(project(&item, &updated))),
            Returning::Nothing => Ok(None),
            Returning::Old => Err(Error::ReturnValuesLost {
                entity: E::ENTITY_TYPE,
                operation: "UpdateItem",
                key: p.key.clone(),
                current: Some(Box::new(item)),
            }),
        };
        let e = match result {
            Ok(out) => return Ok(out.attributes.map(without_token)),
            Err(e) => e,
        };
        let open = outcome_open(ambiguous, &e);
        let error = match e.into_service_error() {
            UpdateItemError::ConditionalCheckFailedException(failed) => {
                return match failed.item {
                    // The SDK's retry found the call's token.
                    Some(item) if token.written_in(Some(&item), token_attr) => own_write(item),
                    current => Err(condition_failed::<E>(
                        p.key,
                        current,
                        true,
                        p.expected_version,
                    )),
                };
            }
            other => Error::service("UpdateItem", db.table_name(), other),
        };
        let Some(key_item) = key_item.filter(|_| open) else {
            return Err(error);
        };
        // The SDK gave up after an attempt that may have been applied.
        let current = match settle(&db, key_item).await {
            Settled::Read(Some(item)) if token.written_in(Some(&item), token_attr) => {
                return own_write(item);
            }
            Settled::Read(item) => item.map(Box::new),
            Settled::Unread => None,
        };
        Err(Error::OutcomeUnknown {
            entity: E::ENTITY_TYPE,
            operation: "UpdateItem",
            key: p.key,
            // No token stored: resending with it would settle nothing.
            token: Some(token).filter(|_| E::__WRITES_TOKEN),
            current,
            source: Box::new(error),
        })
    }

    /// Sends the request and returns the entity as stored after the update
    /// (`ReturnValues=ALL_NEW`).
    pub async fn send(self) -> Result<E, Error> {
        self.run_entity(Returning::New, "ALL_NEW").await
    }

    /// Sends the request and returns the entity as it was before the update
    /// (`ReturnValues=ALL_OLD`).
    ///
    /// When the response of an applied update is lost and the SDK's retry finds the
    /// update's own write, the values from before it are gone: this fails with
    /// [`Error::ReturnValuesLost`] (the update *was* applied; see
    /// [ambiguous errors](Update#ambiguous-errors)).
    pub async fn send_returning_old(self) -> Result<E, Error> {
        self.run_entity(Returning::Old, "ALL_OLD").await
    }

    /// [`run`](Self::run) for a whole item (`ReturnValues` `values`), decoded.
    async fn run_entity(self, returning: Returning, values: &str) -> Result<E, Error> {
        let db = self.db.clone();
        match self.run(returning).await? {
            Some(item) => db.decode(item),
            None => Err(Error::UnexpectedResponse {
                entity: E::ENTITY_TYPE,
                operation: "UpdateItem",
                message: format!("no attributes for ReturnValues={values}"),
            }),
        }
    }

    /// Sends the request and returns only the updated attributes, new values
    /// (`ReturnValues=UPDATED_NEW`), e.g. the value of a counter after `add`. The write
    /// token is not among them.
    pub async fn send_returning_updated(self) -> Result<Item, Error> {
        Ok(self.run(Returning::Updated).await?.unwrap_or_default())
    }

    /// Sends the request and returns nothing (`ReturnValues=NONE`: the least data back).
    pub async fn send_returning_nothing(self) -> Result<(), Error> {
        self.run(Returning::Nothing).await.map(|_| ())
    }
}

customizable!(impl[E: Entity] Update<E>, UpdateItemFluentBuilder, write -> E);

/// The older attribute names of `E`'s field stored under `path`'s top-level attribute.
fn aliases_of<E: Entity>(path: &AttrPath) -> &'static [&'static str] {
    let top = path.top();
    E::__ALIASES
        .iter()
        .find(|(name, _)| *name == top)
        .map_or(&[], |(_, aliases)| aliases)
}

impl<T: crate::Table> super::TransactWrite<T> {
    /// Adds an update, with its changes and conditions: the item must exist (otherwise the
    /// operation's reason is [`CancelReason::NotFound`](crate::error::CancelReason::NotFound)) unless the update is an
    /// [`upsert`](Update::upsert), which creates it. It writes the table of the `Db` it was
    /// built on and its `customize` hooks do not apply, as for
    /// [`put`](super::TransactWrite::put).
    pub fn update<E: Entity>(self, update: Update<E>) -> Self {
        let db = update.db.clone();
        let prepared = update.prepare();
        self.push_on(&db, super::transaction::Kind::Update, prepared)
    }
}

impl<T: crate::Table> crate::Db<T> {
    /// Changes some attributes of an existing item and returns the updated entity.
    pub fn update<E: Entity<Table = T>>(&self, key: impl Into<crate::Key<E>>) -> Update<E> {
        Update::new(self, key.into())
    }
}

mod collections;
mod computed;
mod encrypted;
mod render;
mod rules;
mod stamps;
mod unique;

#[cfg(test)]
mod tests;
