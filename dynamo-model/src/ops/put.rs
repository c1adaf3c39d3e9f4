use super::{
    absent_or_entity, and, condition_failed, is_entity, item_absent, next_version, render,
    user_condition, version_is, PreparedWrite,
};
use crate::expr::Placeholders;
use crate::{Condition, Db, Entity, Error};
use aws_sdk_dynamodb::operation::put_item::PutItemError;
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
#[must_use = "a request does nothing until it is sent or awaited"]
pub struct Put<'a, E: Entity> {
    db: &'a Db<E::Table>,
    entity: &'a E,
    if_absent: bool,
    condition: Option<Condition<E>>,
}

impl<'a, E: Entity> Put<'a, E> {
    pub(crate) fn new(db: &'a Db<E::Table>, entity: &'a E) -> Self {
        Put {
            db,
            entity,
            if_absent: false,
            condition: None,
        }
    }

    /// Only write if no item exists under the key; otherwise fail with
    /// [`Error::ConditionFailed`] carrying the existing item.
    pub fn if_absent(mut self) -> Self {
        self.if_absent = true;
        self
    }

    /// Only write if `condition` holds on the stored item (evaluated against an empty
    /// item when there is none). Combined with `if_absent` by AND.
    pub fn condition(mut self, condition: Condition<E>) -> Self {
        self.condition = Some(match self.condition.take() {
            Some(existing) => existing.and(condition),
            None => condition,
        });
        self
    }

    pub(crate) fn prepare(self) -> Result<PreparedWrite, Error> {
        let mut item = self.entity.to_item()?;
        // Optimistic locking: version 0 is a new item; otherwise the stored item must be
        // at this version. The put writes the next version.
        let expected_version = E::VERSION.map(|attr| (attr, self.entity.version()));
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
        crate::size::check_item_size::<E>(&item)?;
        let guard = match (self.if_absent, version_guard) {
            (true, _) => item_absent::<E>(),
            (false, Some(guard)) => guard,
            (false, None) => absent_or_entity::<E>(),
        };
        let node = and(guard, user_condition(self.condition));
        let mut p = Placeholders::default();
        let condition = render::<E>(&mut p, &node)?;
        let (names, values) = p.finish();
        Ok(PreparedWrite {
            entity: E::ENTITY_TYPE,
            key: self.entity.primary_key().to_string(),
            key_item: self.entity.primary_key().to_item()?,
            item: Some(item),
            update: None,
            condition,
            names,
            values,
            needs_item: false,
            expected_version,
        })
    }

    /// Sends the request.
    pub async fn send(self) -> Result<(), Error> {
        let db = self.db;
        let p = self.prepare().map_err(|e| e.during("PutItem"))?;
        let result = db
            .client()
            .put_item()
            .table_name(db.table_name())
            .set_item(p.item)
            .condition_expression(p.condition)
            .set_expression_attribute_names(p.names)
            .set_expression_attribute_values(p.values)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e) => match e.into_service_error() {
                PutItemError::ConditionalCheckFailedException(failed) => Err(
                    condition_failed::<E>(p.key, failed.item, false, p.expected_version),
                ),
                other => Err(Error::service("PutItem", db.table_name(), other)),
            },
        }
    }
}

super::into_future!(Put, ());
