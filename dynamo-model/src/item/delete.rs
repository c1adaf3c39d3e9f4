use super::ambiguous::{Settled, outcome_open, settle};
use super::{
    FailureContext, PreparedWrite, VersionCheck, absent_or_entity, and, condition_failed,
    is_entity, item_exists, user_condition, version_guard, version_is,
};
use crate::call::Operation;
use crate::expr::Placeholders;
use crate::request::exec::exec;
use crate::request::{Customize, customizable, input};
use crate::{Condition, Db, Entity, Error, Key};
use aws_sdk_dynamodb::operation::delete_item::builders::DeleteItemFluentBuilder;
use aws_sdk_dynamodb::operation::delete_item::{DeleteItemError, DeleteItemInput};
use aws_sdk_dynamodb::types::{ReturnValue, ReturnValuesOnConditionCheckFailure};

/// A `DeleteItem` request; see [`Db::delete`].
///
/// Deleting a key with no item succeeds (DynamoDB semantics) unless
/// [`must_exist`](Delete::must_exist) is set. An item of another entity type under the key
/// is never deleted: that fails with [`Error::ConditionFailed`].
///
/// # Ambiguous errors
///
/// DynamoDB may apply a delete and lose its response (an HTTP 500 or a timeout after the
/// write); the SDK then sends the same request again. The retry of a
/// [`must_exist`](Delete::must_exist), [versioned](Delete::if_version) or
/// [conditional](Delete::condition) delete then fails its condition: the item is gone.
/// A delete leaves no item to carry a token, so the delete watches its own attempts
/// instead: when its condition fails with no item under the key and an earlier attempt
/// of the same call ended ambiguously (HTTP 5xx, timeout, connection or I/O error), it
/// reports success ([`DeleteReturningOld`] fails with [`Error::ReturnValuesLost`]: the
/// deleted item was in the lost response).
///
/// When every attempt ends without an answer (the SDK gives up on 5xx errors or
/// timeouts), the delete reads the key, strongly consistent: an empty key is taken as the
/// delete's own (it reports success, or [`Error::ReturnValuesLost`] for
/// [`DeleteReturningOld`]); an item still there, or a read that fails too, is
/// [`Error::OutcomeUnknown`] (with no token: a delete stores none). Such a delete is
/// resent as it is.
///
/// What this proves, and what it does not: the key is empty, as a successful delete
/// leaves it, and the most likely remover is this call's own earlier attempt. But if there
/// was no item when that attempt ran, or another writer deleted it between the attempts,
/// the delete also reports success where it would otherwise have reported
/// [`Error::NotFound`], [`Error::VersionConflict`] or [`Error::ConditionFailed`]. Without
/// an ambiguous attempt (the usual case) those errors are reported as always, and a
/// condition that fails on an item that is still there is always reported.
#[must_use = "a request does nothing until it is sent or awaited"]
pub struct Delete<E: Entity> {
    db: Db<E::Table>,
    key: Key<E>,
    must_exist: bool,
    condition: Option<Condition<E>>,
    version: VersionCheck,
    customize: Customize<DeleteItemFluentBuilder>,
}

impl<E: Entity> Delete<E> {
    pub(crate) fn new(db: &Db<E::Table>, key: Key<E>) -> Self {
        Delete {
            db: db.clone(),
            key,
            must_exist: false,
            condition: None,
            version: VersionCheck::Unspecified,
            customize: Customize::default(),
        }
    }

    super::version_setters!(
        "Optimistic locking: only delete if the stored item is at `version`; otherwise \
         [`Error::VersionConflict`] with the current item.",
        "Deletes a versioned entity whatever its version."
    );

    crate::setters::setters! {
        /// Fail with [`Error::NotFound`] when there is no item under the key.
        must_exist() => must_exist = true;
    }

    /// Only delete if `condition` holds on the stored item.
    pub fn condition(mut self, condition: Condition<E>) -> Self {
        self.condition = Some(super::and_condition(self.condition.take(), condition));
        self
    }

    /// Also return the deleted entity (`ReturnValues=ALL_OLD`).
    pub fn return_old(self) -> DeleteReturningOld<E> {
        DeleteReturningOld(self)
    }

    pub(crate) fn prepare(self) -> Result<PreparedWrite, Error> {
        super::refuse_history::<E>("delete")?;
        let expected_version = version_guard::<E>(self.version, "delete")?;
        let guard = if self.must_exist || expected_version.is_some() {
            and(item_exists::<E>(), Some(is_entity::<E>()))
        } else {
            absent_or_entity::<E>()
        };
        let guard = match expected_version {
            Some((attr, v)) => and(guard, Some(version_is(attr, v))),
            None => guard,
        };
        let node = and(guard, user_condition(self.condition));
        Ok(PreparedWrite {
            needs_item: self.must_exist,
            expected_version,
            ..PreparedWrite::guarded::<E>(
                (self.key.to_string(), self.key.to_item()?),
                Placeholders::default(),
                &node,
            )?
        })
    }

    /// The request rendered into the SDK's builder and customized, with what reading its
    /// failure needs: the key (for errors), whether an item was required, the version.
    fn request(
        mut self,
        return_old: bool,
    ) -> Result<(DeleteItemFluentBuilder, FailureContext), Error> {
        crate::unique::refuse(E::ENTITY_TYPE, E::__UNIQUE, "single DeleteItem request")?;
        let db = self.db.clone();
        let customize = std::mem::take(&mut self.customize);
        let p = self.prepare()?;
        let request = db
            .client()
            .delete_item()
            .table_name(db.table_name())
            .set_key(Some(p.key_item))
            .condition_expression(p.condition)
            .set_expression_attribute_names(p.names)
            .set_expression_attribute_values(p.values)
            .return_values(if return_old {
                ReturnValue::AllOld
            } else {
                ReturnValue::None
            })
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        let failure = FailureContext {
            key: p.key,
            needs_item: p.needs_item,
            expected_version: p.expected_version,
        };
        Ok((customize.apply(request), failure))
    }

    /// The `DeleteItem` input this request would send, instead of sending it (like
    /// ElectroDB's `.params()`).
    ///
    /// ```
    /// # use dynamo_model::{Entity, Table};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// # #[derive(Entity, serde::Serialize, serde::Deserialize)]
    /// # #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # let db = dynamo_model::Db::<App>::offline("app");
    /// let input = db.delete(User::key("u-1")).must_exist().params()?;
    /// assert_eq!(input.key().unwrap()["SK"].as_s().unwrap(), "PROFILE");
    /// # Ok::<(), dynamo_model::Error>(())
    /// ```
    pub fn params(self) -> Result<DeleteItemInput, Error> {
        let (request, _) = self.request(false).map_err(|e| e.during("DeleteItem"))?;
        input("DeleteItem", request.as_input().clone().build())
    }

    async fn run(self, return_old: bool) -> Result<Option<E>, Error> {
        let span = crate::trace::operation("DeleteItem", self.db.table_name(), E::ENTITY_TYPE);
        crate::trace::key(&span, self.db.traces_keys(), || Some(self.key.to_string()));
        if !E::__UNIQUE.is_empty() {
            return crate::trace::traced_write(span, self.run_unique(return_old)).await;
        }
        crate::trace::traced_write(span, self.run_untraced(return_old)).await
    }

    async fn run_untraced(self, return_old: bool) -> Result<Option<E>, Error> {
        let db = self.db.clone();
        // An item with chunked fields names chunks to delete after it (`crate::chunk`).
        let chunked = !E::__CHUNKED.is_empty();
        let (request, p) = self
            .request(return_old || chunked)
            .map_err(|e| e.during("DeleteItem"))?;
        // The key as sent (a `customize` hook may have changed it), for the settling read.
        let key_item = request.get_key().clone();
        let sending = super::write_sending::<E>(
            &db,
            Operation::DeleteItem,
            true,
            key_item.as_ref(),
            request.get_return_values().as_ref(),
        );
        let result = sending.send(exec!(sending, request)).await;
        let ambiguous = sending.ambiguous();
        let values_lost = |key: String| Error::ReturnValuesLost {
            entity: E::ENTITY_TYPE,
            operation: "DeleteItem",
            key,
            current: None,
        };
        // The key is empty after an attempt that may have removed the item: see
        // "Ambiguous errors" on `Delete` for what this does and does not prove.
        let gone = |key: String| {
            if return_old {
                Err(values_lost(key))
            } else {
                Ok(None)
            }
        };
        if let (true, Ok(out)) = (chunked, &result)
            && let Some(old) = &out.attributes
        {
            // The item is gone; chunks left behind (a failure here) are orphans that
            // nothing reads.
            let _ = super::chunks::after_delete::<E>(&db, old).await;
        }
        let e = match result {
            Ok(out) => {
                return match out.attributes {
                    Some(item) if return_old && !item.is_empty() => Ok(Some(db.decode(item)?)),
                    // Nothing deleted now, but an earlier attempt may have deleted the item
                    // and taken it away with its response: "there was no item" would be a
                    // guess.
                    _ if return_old && ambiguous => Err(values_lost(p.key)),
                    _ => Ok(None),
                };
            }
            Err(e) => e,
        };
        let open = outcome_open(ambiguous, &e);
        let error = match e.into_service_error() {
            DeleteItemError::ConditionalCheckFailedException(failed)
                if failed.item.as_ref().is_none_or(|item| item.is_empty()) && ambiguous =>
            {
                return gone(p.key);
            }
            DeleteItemError::ConditionalCheckFailedException(failed) => {
                return Err(condition_failed::<E>(
                    p.key,
                    failed.item,
                    p.needs_item,
                    p.expected_version,
                ));
            }
            other => Error::service("DeleteItem", db.table_name(), other),
        };
        let Some(key_item) = key_item.filter(|_| open) else {
            return Err(error);
        };
        // The SDK gave up after an attempt that may have been applied. The deleted item's
        // chunks, if it had any, were named in the lost response: they are orphans now.
        let current = match settle(&db, key_item).await {
            Settled::Read(None) => return gone(p.key),
            Settled::Read(item) => item.map(Box::new),
            Settled::Unread => None,
        };
        Err(Error::OutcomeUnknown {
            entity: E::ENTITY_TYPE,
            operation: "DeleteItem",
            key: p.key,
            token: None,
            current,
            source: Box::new(error),
        })
    }

    /// Sends the request.
    pub async fn send(self) -> Result<(), Error> {
        self.run(false).await.map(|_| ())
    }
}

/// A delete that returns the deleted entity; see [`Delete::return_old`].
#[must_use = "a request does nothing until it is sent or awaited"]
pub struct DeleteReturningOld<E: Entity>(Delete<E>);

impl<E: Entity> DeleteReturningOld<E> {
    /// The `DeleteItem` input this request would send (with `ReturnValues=ALL_OLD`),
    /// instead of sending it.
    pub fn params(self) -> Result<DeleteItemInput, Error> {
        let (request, _) = self.0.request(true).map_err(|e| e.during("DeleteItem"))?;
        input("DeleteItem", request.as_input().clone().build())
    }

    /// Adjusts the SDK request before it is sent; see [`Delete::customize`].
    pub fn customize(
        self,
        hook: impl Fn(DeleteItemFluentBuilder) -> DeleteItemFluentBuilder + Send + Sync + 'static,
    ) -> Self {
        DeleteReturningOld(self.0.customize(hook))
    }

    /// Sends the request; `Ok(None)` when there was no item.
    ///
    /// When an attempt of the delete ended ambiguously and the SDK's retry finds the key
    /// empty (see [ambiguous errors](Delete#ambiguous-errors)), the deleted item, if there
    /// was one, went with the lost response: this fails with [`Error::ReturnValuesLost`]
    /// rather than guess `Ok(None)`.
    pub async fn send(self) -> Result<Option<E>, Error> {
        self.0.run(true).await
    }
}

customizable!(impl[E: Entity] Delete<E>, DeleteItemFluentBuilder, write -> ());
crate::request::into_future!(impl[E: Entity] DeleteReturningOld<E>, Option<E>);

impl<T: crate::Table> super::TransactWrite<T> {
    /// Adds a delete, with its conditions. It writes the table of the `Db` it was built on
    /// and its `customize` hooks do not apply, as for [`put`](super::TransactWrite::put).
    pub fn delete<E: Entity>(self, delete: Delete<E>) -> Self {
        let db = delete.db.clone();
        let prepared = crate::chunk::refuse(E::ENTITY_TYPE, E::__CHUNKED, "transaction")
            .and_then(|()| crate::unique::refuse(E::ENTITY_TYPE, E::__UNIQUE, "transaction"))
            .and_then(|()| delete.prepare());
        self.push_on(&db, super::transaction::Kind::Delete, prepared)
    }
}

impl<T: crate::Table> crate::Db<T> {
    /// Deletes one item.
    pub fn delete<E: Entity<Table = T>>(&self, key: impl Into<crate::Key<E>>) -> Delete<E> {
        Delete::new(self, key.into())
    }
}

mod unique;
