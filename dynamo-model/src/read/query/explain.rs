//! A query's [`Explain`]: its `params()` with what they mean and may cost.

use super::Query;
use crate::Error;
use crate::collection::Target;
use crate::insight::explain::Reading;
use crate::insight::{Explain, Fanout};
use crate::keyspace::sort::KeySpace;

impl<T: Target, K: KeySpace> Query<T, K> {
    /// What this query will send and what a page may cost, without sending anything: the
    /// input [`params`](Query::params) returns, the table and index, the key condition,
    /// filter and projection with their placeholders resolved, the items and read units of
    /// a page, and warnings (an index projection that takes a hydrate; with an
    /// [`Insight`](crate::insight::Insight) attached to the `Db`, a filter that dropped
    /// most of what it read, entity types a collection dropped). The same for a
    /// collection, a projection, keys and a history, which are queries too. Refused where
    /// `params()` is.
    pub fn explain(&self) -> Result<Explain, Error> {
        let source = self.source()?;
        let input = self.params_of(&source)?;
        let observed = crate::request::observations(&self.db);
        Ok(Explain::query(
            self.reading(),
            vec![input],
            Fanout::One,
            observed,
        ))
    }

    /// The target and index this query reads, for an explanation.
    pub(in crate::read) fn reading(&self) -> Reading {
        Reading::of::<T>(self.index).whole_history(self.by_slot.is_some())
    }
}
