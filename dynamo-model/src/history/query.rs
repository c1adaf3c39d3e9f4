//! The queries of a history: the revisions of one item, and the revisions an index holds.

use super::Revision;
use crate::collection::Target;
use crate::keyspace::sort::{KeySpace, Primary, SortKeyOp, SortKeyRange};
use crate::read::{PartitionValue, Query, SortCondition};
use crate::{Db, Entity, Error};

impl<T: Target, K: KeySpace> Query<T, K> {
    /// Reads the revisions of a `#[dynamo(history)]` entity that this index holds
    /// instead of its latest copies: for an index the entity lets its revisions into
    /// (`history(revisions_in(GSI1))`), or one keyed on the table's keys or on plain
    /// attributes, which revisions carry too. Revisions of one item are read with
    /// [`History::revisions`](super::History::revisions).
    pub fn revisions(self) -> Query<Revision<T>, K>
    where
        T: Entity<Table = <T as Target>::Table>,
    {
        self.retarget()
    }
}

impl<E: Entity> Query<Revision<E>, Primary> {
    /// The revisions of one item of an entity with history: its partition, the sort keys
    /// between `low` and `high` (which hold every revision and never the latest copy),
    /// of those only the revisions over `rest` under `layout` (the range also holds other
    /// items' revisions).
    pub(crate) fn history_of(
        db: &Db<E::Table>,
        pk: String,
        (low, high): (String, String),
        revisions_of: Option<(crate::schema::history::HistoryLayout, String)>,
    ) -> Self {
        let mut range = SortKeyRange::op(SortKeyOp::Between(low, high));
        range.revisions_of = revisions_of;
        Query::with_key(
            db,
            None,
            Ok(PartitionValue::Rendered(pk)),
            SortCondition::Rendered(range),
            true,
        )
    }

    /// The same history read in revision order (see [`Query::collect_by_slot`]).
    pub(crate) fn sorted_by_slot(
        mut self,
        layout: &'static crate::schema::history::HistoryLayout,
    ) -> Self {
        self.by_slot = Some(layout);
        self
    }

    /// A history query that refuses to run, for `error` (reported when it is sent).
    pub(crate) fn refused(db: &Db<E::Table>, error: Error) -> Self {
        let (reason, message) = match error {
            Error::Validation {
                reason, message, ..
            } => (reason, message),
            other => (crate::ValidationReason::InvalidOption, other.to_string()),
        };
        let mut query = Self::history_of(db, String::new(), (String::new(), String::new()), None);
        query.refusal = Some((reason, message));
        query
    }
}
