//! A query's request: the DynamoDB request prepared once that every request of the query
//! sends (its [`Source`], around the `Request` of `read::dynamodb`), and the input of the
//! first (`params`).

use super::{Query, QuerySource};
use crate::BoxFuture;
use crate::collection::Target;
use crate::key::KeyError;
use crate::keyspace::sort::KeySpace;
use crate::read::dynamodb::{QueryOp, Reads, Request};
use crate::read::key_condition::PartitionValue;
use crate::read::pager::{self, Ask, Response, Source};
use crate::{Error, Table};
use aws_sdk_dynamodb::operation::query::QueryInput;

impl<T: Target, K: KeySpace> Query<T, K> {
    /// The prepared request as a [`Source`]: what every request of this query sends.
    pub(super) fn source(&self) -> Result<QuerySource<T::Table>, Error> {
        self.source_with(&self.pk)
    }

    /// What every request of this query on partition `pk` sends.
    pub(in crate::read) fn source_with(
        &self,
        pk: &Result<PartitionValue, KeyError>,
    ) -> Result<QuerySource<T::Table>, Error> {
        let mut prepared = self.prepare_with(pk).map_err(|e| e.during("Query"))?;
        Ok(QuerySource {
            request: Request {
                db: self.db.clone(),
                expressions: std::mem::take(&mut prepared.expressions),
                consistent: self.consistent,
                operation: QueryOp {
                    index: self.index.map(|i| i.name),
                    forward: !self.reverse,
                    customize: self.customize.clone(),
                },
                reads: Reads {
                    entity: crate::collection::single_entity::<T>(),
                    partition: pk.as_ref().ok().and_then(PartitionValue::text),
                },
            },
            prepared,
        })
    }

    /// The `Query` input of the first request, instead of sending it (like ElectroDB's
    /// `.params()`). Later requests send the same input with `ExclusiveStartKey` set (and,
    /// after a filter dropped items, a larger `Limit`).
    ///
    /// A query that sends nothing (no item can match, e.g. `between("b", "a")`, or
    /// `limit(0)`) has no params: an error with
    /// [`ValidationReason::InvalidOption`](crate::ValidationReason).
    ///
    /// ```
    /// # use dynamo_model::{Entity, Table};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// # #[derive(Entity, serde::Serialize, serde::Deserialize)]
    /// # #[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{order_id}")]
    /// # struct Order { user_id: String, order_id: String }
    /// # let db = dynamo_model::Db::<App>::offline("app");
    /// let input = db.query(Order::partition("u-1")).reverse().limit(10).params()?;
    /// assert_eq!(input.key_condition_expression(), Some("#n0 = :v0 AND begins_with(#n1, :v1)"));
    /// assert_eq!(input.scan_index_forward(), Some(false));
    /// assert_eq!(input.limit(), Some(10));
    /// # Ok::<(), dynamo_model::Error>(())
    /// ```
    pub fn params(self) -> Result<QueryInput, Error> {
        let source = self.source()?;
        self.params_of(&source)
    }

    /// The input of the first request `source` (this query on one partition) sends.
    pub(in crate::read) fn params_of(
        &self,
        source: &QuerySource<T::Table>,
    ) -> Result<QueryInput, Error> {
        if self.limit == Some(0) {
            return Err(Error::invalid(
                T::NAME,
                crate::ValidationReason::InvalidOption,
                "limit(0) asks for nothing, so the query sends no request",
            )
            .during("Query"));
        }
        if source.prepared.nothing {
            return Err(Error::invalid(
                T::NAME,
                crate::ValidationReason::InvalidOption,
                "no item can match this query's sort-key condition, so it sends no request",
            )
            .during("Query"));
        }
        let request = source.request.builder(Ask {
            segment: None,
            start: None,
            limit: pager::first_limit(self.page_size, self.limit),
        });
        crate::request::input("Query", request.as_input().clone().build())
    }
}

impl<X: Table> Source for QuerySource<X> {
    fn fetch(&self, ask: Ask) -> BoxFuture<'_, Result<Response, Error>> {
        // No sort key can match, and DynamoDB would refuse every way to say so.
        if self.prepared.nothing {
            return Box::pin(async { Ok(Response::default()) });
        }
        self.request.fetch(ask)
    }
}
