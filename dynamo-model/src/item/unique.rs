//! The writes of entities with unique values (see [`crate::unique`]): each put, update
//! or delete is one transaction of the item's own write and its sentinels'.
//!
//! The write reads what the item holds now (its unique values, strongly consistent), then
//! sends, all or nothing: the item's write, on its own conditions and on the item still
//! holding what was read; a claim of each new value (a put of its sentinel, on condition
//! that there is none or that it names this item); a release of each old value the write
//! takes away (a delete of its sentinel, on the same condition). When the item changed in
//! between, the transaction is cancelled, and the write reads again and starts over; a
//! claim that fails is [`Error::UniqueValueTaken`]; a failure of the write's own
//! conditions is the error the write would report alone. A lost response is settled by
//! the transaction itself (its retries carry one `ClientRequestToken`, which DynamoDB
//! applies at most once), and either every part of the write happened or none did.

use super::{PreparedWrite, item_absent, render};
use crate::expr::{Node, Placeholders};
use crate::key::RawKey;
use crate::unique::{
    Constraint, OWNER_PK, OWNER_SK, UNIQUE_TYPE, sentinel_item, sentinel_key, value_text,
};
use crate::{Db, Entity, Error, Item, Table};
use aws_sdk_dynamodb::types::AttributeValue;

/// How often a write reads the item again after it changed under the write.
const ATTEMPTS: usize = 8;

/// The item's own write in the transaction.
#[derive(Clone, Copy)]
pub(crate) enum ItemWrite {
    Put,
    Update,
    Delete,
}

/// What the item holds after the write, given what it holds before.
pub(crate) enum After {
    /// A put's item.
    Item(Item),
    /// An update's changes of unique attributes (`None`: removed).
    Changes(Vec<(&'static str, Option<AttributeValue>)>),
    /// Nothing (a delete).
    Gone,
}

impl After {
    /// The constraints the write may change: all for a put or a delete, those whose
    /// attributes an update changes.
    fn touches<E: Entity>(&self) -> Vec<&'static Constraint> {
        E::__UNIQUE
            .iter()
            .filter(|c| match self {
                After::Changes(changes) => changes.iter().any(|(a, _)| c.covers(a)),
                After::Item(_) | After::Gone => true,
            })
            .collect()
    }

    /// The item as it holds `attributes` after the write, from `stored` before it.
    fn item(&self, stored: Option<&Item>) -> Option<Item> {
        match self {
            After::Item(item) => Some(item.clone()),
            After::Changes(changes) => {
                let mut item = stored.cloned().unwrap_or_default();
                for (attribute, value) in changes {
                    match value {
                        Some(value) => item.insert((*attribute).to_owned(), value.clone()),
                        None => item.remove(*attribute),
                    };
                }
                Some(item)
            }
            After::Gone => None,
        }
    }
}

/// One write of an entity with unique values; see the module documentation.
pub(crate) struct UniqueWrite<'a, E: Entity> {
    pub(crate) db: &'a Db<E::Table>,
    /// The item's key: the owner its sentinels name.
    pub(crate) owner: RawKey,
    /// The item's own write, its own conditions rendered.
    pub(crate) write: PreparedWrite,
    pub(crate) kind: ItemWrite,
    pub(crate) after: After,
    /// Attributes the item must still hold as read besides the constraints' (a put's
    /// creation time), and how the write takes them from what was read.
    pub(crate) keep: Option<fn(&mut PreparedWrite, Option<&Item>)>,
    pub(crate) pinned: Option<&'static str>,
    /// What the item holds now, when the caller knows it (`Some(None)`: no item).
    pub(crate) stored: Option<Option<Item>>,
}

/// A sentinel operation of the transaction, after the item's write.
enum Role {
    Claim(&'static Constraint, String),
    Release(RawKey),
}

/// The role of a cancelled operation (`None`: the item's own write, at index 0).
fn role<'r>(roles: &'r [Role], op: &crate::error::CancelledOperation) -> Option<&'r Role> {
    op.index.checked_sub(1).and_then(|i| roles.get(i))
}

/// A write's transaction, the roles of its sentinel operations, and what an error of the
/// item's own write reports (see [`Failed`]).
type Transaction<T> = (crate::item::TransactWrite<T>, Vec<Role>, Failed);

/// What the item's write reports when its own conditions fail: its key, whether it needs
/// the item, the version it expected.
struct Failed {
    key: String,
    needs_item: bool,
    expected_version: Option<(&'static str, u64)>,
}

impl<E: Entity> UniqueWrite<'_, E> {
    /// Sends the write; see the module documentation.
    pub(crate) async fn send(mut self) -> Result<(), Error> {
        crate::unique::check_table(E::ENTITY_TYPE, &<E::Table as Table>::SCHEMA)?;
        let touched = self.after.touches::<E>();
        // Sentinels another item owns, which this one held without (data written before
        // the constraint existed): not released.
        let mut foreign: Vec<RawKey> = Vec::new();
        let mut last = None;
        for _ in 0..ATTEMPTS {
            let stored = match self.stored.take() {
                Some(stored) => stored,
                None => self.read(&touched).await?,
            };
            let (tx, roles, failed) = self.transaction(&touched, stored.as_ref(), &foreign)?;
            let operations = match tx.send().await {
                Ok(()) => return Ok(()),
                Err(Error::TransactionCanceled { operations }) => operations,
                Err(e) => return Err(e),
            };
            // A claim that failed: the value is another item's.
            for op in operations.iter().filter(|op| is_condition(op)) {
                if let Some(Role::Claim(constraint, value)) = role(&roles, op) {
                    return Err(taken::<E>(constraint, value, op.current.as_deref()));
                }
            }
            let mut again = false;
            for op in &operations {
                match role(&roles, op) {
                    Some(Role::Release(key)) if is_condition(op) => {
                        foreign.push(key.clone());
                        again = true;
                    }
                    None if op.index == 0 && is_condition(op) => {
                        let current = op.current.as_deref();
                        if holds_as_read(&touched, self.pinned, stored.as_ref(), current) {
                            // The item is as read: the write's own conditions failed.
                            return Err(super::condition_failed::<E>(
                                failed.key,
                                current.cloned(),
                                failed.needs_item,
                                failed.expected_version,
                            ));
                        }
                        self.stored = Some(current.cloned());
                        again = true;
                    }
                    _ => {}
                }
            }
            let error = Error::TransactionCanceled { operations };
            if !again {
                return Err(error);
            }
            last = Some(error);
        }
        Err(last.unwrap_or(Error::TransactionCanceled {
            operations: Vec::new(),
        }))
    }

    /// The transaction for the item as `stored` holds it; its sentinel operations' roles
    /// (in order, after the item's write); what its own write's failure reports.
    fn transaction(
        &self,
        touched: &[&'static Constraint],
        stored: Option<&Item>,
        foreign: &[RawKey],
    ) -> Result<Transaction<E::Table>, Error> {
        let schema = &<E::Table as Table>::SCHEMA;
        let mut write = self.write.clone();
        if let Some(keep) = self.keep {
            keep(&mut write, stored);
        }
        and_condition::<E>(&mut write, &still_holds::<E>(touched, self.pinned, stored))?;
        let failed = Failed {
            key: write.key.clone(),
            needs_item: write.needs_item,
            expected_version: write.expected_version,
        };
        let mut tx = self.db.transact_write();
        tx = match self.kind {
            ItemWrite::Put => tx.prepared_put(write),
            ItemWrite::Update => tx.prepared_update(write),
            ItemWrite::Delete => tx.prepared_delete(write),
        };
        let after = self.after.item(stored);
        let mut roles = Vec::new();
        for constraint in touched {
            // An old value that can have no sentinel (a list, a text too long for a key:
            // stored before the constraint existed) has none to release.
            let old = stored.and_then(|item| value_text(E::ENTITY_TYPE, constraint, item).ok());
            let old = old
                .flatten()
                .filter(|old| sentinel_key(schema, E::ENTITY_TYPE, constraint, old).is_ok());
            let new = match &after {
                Some(item) => value_text(E::ENTITY_TYPE, constraint, item)?,
                None => None,
            };
            if let Some(new) = &new {
                let key = sentinel_key(schema, E::ENTITY_TYPE, constraint, new)?;
                let item = sentinel_item(schema, &key, &self.owner);
                tx = tx.prepared_put(sentinel_write::<E::Table>(key, Some(item), &self.owner)?);
                roles.push(Role::Claim(constraint, new.clone()));
            }
            if let Some(old) = old.filter(|old| Some(old) != new.as_ref()) {
                let key = sentinel_key(schema, E::ENTITY_TYPE, constraint, &old)?;
                if !foreign.contains(&key) {
                    let delete = sentinel_write::<E::Table>(key.clone(), None, &self.owner)?;
                    tx = tx.prepared_delete(delete);
                    roles.push(Role::Release(key));
                }
            }
        }
        Ok((tx, roles, failed))
    }

    /// What the item holds now of the constraints' attributes and the pinned ones
    /// (`None`: no item).
    async fn read(&self, touched: &[&'static Constraint]) -> Result<Option<Item>, Error> {
        let schema = &<E::Table as Table>::SCHEMA;
        let mut p = Placeholders::default();
        let attributes = std::iter::once(schema.pk.name)
            .chain(touched.iter().flat_map(|c| c.attributes.iter().copied()))
            .chain(self.pinned);
        let projection = p.projection(attributes);
        let (names, _) = p.finish();
        super::consistent::ConsistentGet::new(self.db, self.owner.to_item(schema))
            .project(projection, names)
            .send()
            .await
    }
}

/// Whether a cancelled operation failed on its condition.
fn is_condition(op: &crate::error::CancelledOperation) -> bool {
    use crate::error::CancelReason;
    matches!(
        op.reason,
        CancelReason::ConditionalCheckFailed
            | CancelReason::NotFound
            | CancelReason::OtherEntityStored(_)
    )
}

/// The item still holds what was read (`stored`) of the constraints' attributes and the
/// pinned ones; no item when none was read.
pub(crate) fn still_holds<E: Entity>(
    touched: &[&'static Constraint],
    pinned: Option<&'static str>,
    stored: Option<&Item>,
) -> Node {
    let Some(stored) = stored else {
        return item_absent::<E>();
    };
    let attributes = touched
        .iter()
        .flat_map(|c| c.attributes.iter().copied())
        .chain(pinned);
    attributes.fold(super::item_exists::<E>(), |node, attribute| {
        let held = match stored.get(attribute) {
            Some(value) => Node::equals(attribute, value.clone()),
            None => Node::absent(attribute),
        };
        Node::all(node, [held])
    })
}

/// Whether `current` (the item a cancelled write found) holds what `stored` held of the
/// attributes [`still_holds`] checks.
fn holds_as_read(
    touched: &[&'static Constraint],
    pinned: Option<&'static str>,
    stored: Option<&Item>,
    current: Option<&Item>,
) -> bool {
    let (Some(stored), Some(current)) = (stored, current) else {
        return stored.is_none() && current.is_none();
    };
    touched
        .iter()
        .flat_map(|c| c.attributes.iter().copied())
        .chain(pinned)
        .all(|attribute| stored.get(attribute) == current.get(attribute))
}

/// Adds `node` to the write's condition (AND), in its own placeholders.
fn and_condition<E: Entity>(write: &mut PreparedWrite, node: &Node) -> Result<(), Error> {
    let mut p = Placeholders::resume(write.names.take(), write.values.take());
    let extra = render::<E>(&mut p, node)?;
    write.condition = if write.condition.is_empty() {
        extra
    } else {
        format!("({}) AND ({extra})", write.condition)
    };
    (write.names, write.values) = p.finish();
    Ok(())
}

/// A put (`item`) or delete (`None`) of the sentinel under `key`, on condition that it is
/// not there or names `owner`.
pub(crate) fn sentinel_write<T: Table>(
    key: RawKey,
    item: Option<Item>,
    owner: &RawKey,
) -> Result<PreparedWrite, Error> {
    let schema = &T::SCHEMA;
    let owned = Node::owned_by(
        (schema.entity_type, UNIQUE_TYPE),
        (OWNER_PK, OWNER_SK),
        owner,
        [],
    );
    let node = Node::either(Node::absent(schema.pk.name), owned);
    let key_item = key.to_item(schema);
    let described = crate::schema::describe_item_key(schema, &key_item).unwrap_or_default();
    let write = PreparedWrite::guarded_for(
        UNIQUE_TYPE,
        (described, key_item),
        Placeholders::default(),
        &node,
    )?;
    Ok(PreparedWrite { item, ..write })
}

/// Refuses a write of `E` with `customize` hooks: they were made for a single request,
/// not for the transaction a write of unique values sends.
pub(crate) fn refuse_hooks<E: Entity>(hooked: bool) -> Result<(), Error> {
    if !hooked {
        return Ok(());
    }
    let message = "a write of an entity's unique values is a transaction, which the hooks of a single request do not fit: customize it through db.transact_write() instead, or leave the hooks out";
    Err(Error::invalid(
        E::ENTITY_TYPE,
        crate::ValidationReason::UniqueValue,
        message,
    ))
}

/// The refusal of a write of `E` that would return values (`instead`: what to do): a
/// write of unique values is a transaction, which returns none.
pub(crate) fn returns_no_values<E: Entity>(instead: &str) -> Error {
    let message = format!(
        "a write of an entity's unique values is a transaction, which returns no values: {instead}"
    );
    Error::invalid(
        E::ENTITY_TYPE,
        crate::ValidationReason::UniqueValue,
        message,
    )
}

/// The error of a claim that failed: the sentinel `current` names another owner.
fn taken<E: Entity>(constraint: &Constraint, value: &str, current: Option<&Item>) -> Error {
    let schema = &<E::Table as Table>::SCHEMA;
    let owner = current
        .and_then(crate::unique::owner_of)
        .map(|owner| crate::schema::describe_item_key(schema, &owner.to_item(schema)))
        .unwrap_or_default()
        .unwrap_or_else(|| "unknown".to_owned());
    Error::UniqueValueTaken {
        entity: E::ENTITY_TYPE,
        constraint: constraint.name,
        value: value.to_owned(),
        owner,
    }
}

impl<T: Table> Db<T> {
    /// The item holding the value `lookup` names (made by the derive's
    /// `Entity::by_<name>(..)` for each unique constraint), or `None` when no item holds
    /// it: the value's sentinel read, then the item it names, both strongly consistent.
    /// An item that no longer holds the value (changed between the two reads) is `None`.
    ///
    /// ```no_run
    /// # use dynamo_model::{Db, Entity, Table};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// #[derive(Entity, serde::Serialize, serde::Deserialize)]
    /// #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE")]
    /// struct User {
    ///     id: String,
    ///     #[dynamo(unique)]
    ///     email: String,
    /// }
    /// # async fn demo(db: Db<App>) -> Result<(), dynamo_model::Error> {
    /// let user = db.get_unique(User::by_email(&"ada@example.com".into())).await?;
    /// # Ok(()) }
    /// ```
    pub async fn get_unique<E: Entity<Table = T>>(
        &self,
        lookup: crate::unique::Lookup<E>,
    ) -> Result<Option<E>, Error> {
        let schema = &T::SCHEMA;
        crate::unique::check_table(E::ENTITY_TYPE, schema)?;
        let entity = E::ENTITY_TYPE;
        let field_error = |e: crate::codec::EncodeError| {
            Error::invalid(entity, crate::ValidationReason::UniqueValue, e.to_string())
        };
        let item = lookup.item.map_err(field_error)?;
        let Some(text) = value_text(entity, lookup.constraint, &item)? else {
            return Ok(None);
        };
        let key = sentinel_key(schema, entity, lookup.constraint, &text)?;
        let read = |key: RawKey| {
            super::consistent::ConsistentGet::new(self, key.to_item(schema))
                .send_as_operation(entity, || None)
        };
        let Some(owner) = read(key).await?.as_ref().and_then(crate::unique::owner_of) else {
            return Ok(None);
        };
        let Some(item) = read(owner).await? else {
            return Ok(None);
        };
        if value_text(entity, lookup.constraint, &item)?.as_deref() != Some(text.as_str()) {
            return Ok(None);
        }
        Ok(Some(self.decode::<E>(item)?))
    }
}
