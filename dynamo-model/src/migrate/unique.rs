//! Claiming the sentinels of unique values that items already hold
//! ([`Db::backfill_unique`]): a table adopted with its items, or a constraint added to an
//! entity that has items.

use crate::expr::Placeholders;
use crate::item::PreparedWrite;
use crate::item::unique::{sentinel_write, still_holds};
use crate::unique::{owner_of, sentinel_item, sentinel_key, value_text};
use crate::{Db, Entity, Error, Table};
use futures_util::StreamExt;

/// A value two items hold, found by [`Db::backfill_unique`]: one of them holds its
/// sentinel, the other was left without one.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UniqueConflict {
    /// The unique constraint.
    pub constraint: &'static str,
    /// The value, as its sentinel's key holds it.
    pub value: String,
    /// The key of the item the sentinel names, rendered as `PK=..., SK=...`.
    pub holder: String,
    /// The key of the item that holds the value too.
    pub item: String,
}

/// What [`Db::backfill_unique`] found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct UniqueBackfill {
    /// The entity's items read.
    pub items: u64,
    /// Values whose sentinel names their item now (claimed, or already there).
    pub claimed: u64,
    /// Values another item holds: to resolve by hand (change one item's value with
    /// `db.put` or `db.update`, then run the backfill again).
    pub conflicts: Vec<UniqueConflict>,
    /// Values whose item changed between the scan and the claim: the write that changed
    /// it kept its own values' sentinels; run the backfill again to check.
    pub changed: u64,
}

impl<T: Table> Db<T> {
    /// Claims the sentinel of every unique value (`#[dynamo(unique)]`) the items of `E`
    /// hold: for each item and constraint, one transaction of a check that the item still
    /// holds the value and a put of its sentinel, on condition that there is none or that
    /// it names this item. A value another item's sentinel names is reported as a
    /// [`UniqueConflict`], not written. Safe to run while the application writes, and to
    /// run again: a value already claimed costs its transaction and nothing changes.
    ///
    /// ```no_run
    /// # use dynamo_model::{Db, Entity, Table};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// # #[derive(Entity)] #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE")]
    /// # struct User { id: String, #[dynamo(unique)] email: String }
    /// # async fn demo(db: Db<App>) -> Result<(), dynamo_model::Error> {
    /// let report = db.backfill_unique::<User>().await?;
    /// for conflict in &report.conflicts {
    ///     eprintln!("{} {:?}: held by {} and {}", conflict.constraint, conflict.value, conflict.holder, conflict.item);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn backfill_unique<E: Entity<Table = T>>(&self) -> Result<UniqueBackfill, Error> {
        crate::unique::check_table(E::ENTITY_TYPE, &T::SCHEMA)?;
        let mut report = UniqueBackfill::default();
        let mut items = std::pin::pin!(self.scan::<E>().stream());
        while let Some(value) = items.next().await {
            let item = value?.to_item()?;
            report.items += 1;
            for constraint in E::__UNIQUE {
                self.claim::<E>(constraint, &item, &mut report).await?;
            }
        }
        Ok(report)
    }

    /// Claims the sentinel of `item`'s value of `constraint` (none: nothing to claim).
    async fn claim<E: Entity<Table = T>>(
        &self,
        constraint: &'static crate::unique::Constraint,
        item: &crate::Item,
        report: &mut UniqueBackfill,
    ) -> Result<(), Error> {
        let schema = &T::SCHEMA;
        let Some(value) = value_text(E::ENTITY_TYPE, constraint, item)? else {
            return Ok(());
        };
        let owner = crate::item::key_of_item::<E>(item)?;
        let key_item = owner.to_item(schema);
        let described = crate::schema::describe_item_key(schema, &key_item).unwrap_or_default();
        let holds = still_holds::<E>(&[constraint], None, Some(item));
        let check = PreparedWrite {
            needs_item: true,
            ..PreparedWrite::guarded::<E>(
                (described.clone(), key_item),
                Placeholders::default(),
                &holds,
            )?
        };
        let key = sentinel_key(schema, E::ENTITY_TYPE, constraint, &value)?;
        let sentinel = sentinel_item(schema, &key, &owner);
        let claim = sentinel_write::<T>(key, Some(sentinel), &owner)?;
        let sent = self
            .transact_write()
            .prepared_check(check)
            .prepared_put(claim)
            .send()
            .await;
        let operations = match sent {
            Ok(()) => {
                report.claimed += 1;
                return Ok(());
            }
            Err(Error::TransactionCanceled { operations }) => operations,
            Err(e) => return Err(e),
        };
        let failed = |index| operations.iter().find(|op| op.index == index);
        if failed(0).is_some() {
            report.changed += 1;
        } else if let Some(op) = failed(1) {
            let holder = op.current.as_deref().and_then(owner_of).and_then(|holder| {
                crate::schema::describe_item_key(schema, &holder.to_item(schema))
            });
            report.conflicts.push(UniqueConflict {
                constraint: constraint.name,
                value,
                holder: holder.unwrap_or_default(),
                item: described,
            });
        } else {
            return Err(Error::TransactionCanceled { operations });
        }
        Ok(())
    }
}
