use super::{
    absent_or_entity, and, condition_failed, is_entity, item_exists, render, user_condition,
    version_guard, version_is, PreparedWrite, VersionCheck,
};
use crate::expr::Placeholders;
use crate::{Condition, Db, Entity, Error, Key};
use aws_sdk_dynamodb::operation::delete_item::DeleteItemError;
use aws_sdk_dynamodb::types::{ReturnValue, ReturnValuesOnConditionCheckFailure};

/// A `DeleteItem` request; see [`Db::delete`].
///
/// Deleting a key with no item succeeds (DynamoDB semantics) unless
/// [`must_exist`](Delete::must_exist) is set. An item of another entity type under the key
/// is never deleted: that fails with [`Error::ConditionFailed`].
#[must_use = "a request does nothing until it is sent or awaited"]
pub struct Delete<'a, E: Entity> {
    db: &'a Db<E::Table>,
    key: Key<E>,
    must_exist: bool,
    condition: Option<Condition<E>>,
    version: VersionCheck,
}

impl<'a, E: Entity> Delete<'a, E> {
    pub(crate) fn new(db: &'a Db<E::Table>, key: Key<E>) -> Self {
        Delete {
            db,
            key,
            must_exist: false,
            condition: None,
            version: VersionCheck::Unspecified,
        }
    }

    /// Optimistic locking: only delete if the stored item is at `version`; otherwise
    /// [`Error::VersionConflict`] with the current item.
    pub fn if_version(mut self, version: u64) -> Self {
        self.version = VersionCheck::Expect(version);
        self
    }

    /// Deletes a versioned entity whatever its version.
    pub fn any_version(mut self) -> Self {
        self.version = VersionCheck::Any;
        self
    }

    /// Fail with [`Error::NotFound`] when there is no item under the key.
    pub fn must_exist(mut self) -> Self {
        self.must_exist = true;
        self
    }

    /// Only delete if `condition` holds on the stored item.
    pub fn condition(mut self, condition: Condition<E>) -> Self {
        self.condition = Some(match self.condition.take() {
            Some(existing) => existing.and(condition),
            None => condition,
        });
        self
    }

    /// Also return the deleted entity (`ReturnValues=ALL_OLD`).
    pub fn return_old(self) -> DeleteReturningOld<'a, E> {
        DeleteReturningOld(self)
    }

    pub(crate) fn prepare(self) -> Result<PreparedWrite, Error> {
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
        let mut p = Placeholders::default();
        let condition = render::<E>(&mut p, &node)?;
        let (names, values) = p.finish();
        Ok(PreparedWrite {
            entity: E::ENTITY_TYPE,
            key: self.key.to_string(),
            key_item: self.key.to_item()?,
            item: None,
            update: None,
            condition,
            names,
            values,
            needs_item: self.must_exist,
            expected_version,
        })
    }

    async fn run(self, return_old: bool) -> Result<Option<E>, Error> {
        let db = self.db;
        let p = self.prepare().map_err(|e| e.during("DeleteItem"))?;
        let result = db
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
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .send()
            .await;
        match result {
            Ok(out) => match out.attributes {
                Some(item) if return_old && !item.is_empty() => Ok(Some(E::from_item(item)?)),
                _ => Ok(None),
            },
            Err(e) => match e.into_service_error() {
                DeleteItemError::ConditionalCheckFailedException(failed) => Err(
                    condition_failed::<E>(p.key, failed.item, p.needs_item, p.expected_version),
                ),
                other => Err(Error::service("DeleteItem", db.table_name(), other)),
            },
        }
    }

    /// Sends the request.
    pub async fn send(self) -> Result<(), Error> {
        self.run(false).await.map(|_| ())
    }
}

/// A delete that returns the deleted entity; see [`Delete::return_old`].
#[must_use = "a request does nothing until it is sent or awaited"]
pub struct DeleteReturningOld<'a, E: Entity>(Delete<'a, E>);

impl<E: Entity> DeleteReturningOld<'_, E> {
    /// Sends the request; `Ok(None)` when there was no item.
    pub async fn send(self) -> Result<Option<E>, Error> {
        self.0.run(true).await
    }
}

super::into_future!(Delete, ());
super::into_future!(DeleteReturningOld, Option<E>);
