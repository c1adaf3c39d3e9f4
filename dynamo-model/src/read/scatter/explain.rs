//! A scatter query's [`Explain`]: every shard's `params()` with what they mean and may cost.

use super::ScatterQuery;
use crate::Error;
use crate::collection::Target;
use crate::insight::{Explain, Fanout};
use crate::keyspace::sort::KeySpace;

impl<T: Target, K: KeySpace> ScatterQuery<T, K> {
    /// What this scatter query will send and what a page may cost, without sending
    /// anything (see [`Query::explain`](super::Query::explain)): one input per shard, as
    /// [`params`](ScatterQuery::params) returns them, and a page's items and read units
    /// summed over the shards. With an [`Insight`](crate::insight::Insight) attached to
    /// the `Db`, also how often a read of this shape runs. Refused where `params()` is.
    pub fn explain(&self) -> Result<Explain, Error> {
        let plan = self.plan()?;
        let inputs = plan
            .sources
            .iter()
            .map(|source| self.query.params_of(source))
            .collect::<Result<Vec<_>, Error>>()?;
        let observed = crate::request::observations(&self.query.db);
        Ok(Explain::query(
            self.query.reading(),
            inputs,
            Fanout::Shards(plan.sources.len()),
            observed,
        ))
    }
}
