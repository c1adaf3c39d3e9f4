//! The strongly consistent `GetItem` the crate sends for itself: the read that settles a
//! write whose response was lost, the one a migration reads again after its condition
//! failed, a chunked item's manifests, the orphan sweep's check of a parent, and a
//! revision of an item with history. One path for all of them: each is a request span
//! (`dynamodb.request`, with the items it found and the error kind) inside the operation
//! that sends it, or, for a read that is an operation of its own
//! ([`ConsistentGet::send_as_operation`]), the operation span with the entity and key.

use crate::call::{Action, Call, Operation, Policy, Target};
use crate::request::BoxFuture;
use crate::request::exec::{Sending, exec};
use crate::{Db, Error, Item, Table};
use std::collections::HashMap;

const OP: &str = "GetItem";

/// A strongly consistent read of the item under one key, the whole item or a projection.
pub(crate) struct ConsistentGet<'a, T: Table> {
    db: &'a Db<T>,
    key: Item,
    projection: Option<(String, Option<HashMap<String, String>>)>,
}

impl<'a, T: Table> ConsistentGet<'a, T> {
    /// The read of the item under `key` (its key attributes).
    pub(crate) fn new(db: &'a Db<T>, key: Item) -> Self {
        ConsistentGet {
            db,
            key,
            projection: None,
        }
    }

    /// Reads only `expression`, whose placeholders `names` resolves.
    pub(crate) fn project(
        mut self,
        expression: String,
        names: Option<HashMap<String, String>>,
    ) -> Self {
        self.projection = Some((expression, names));
        self
    }

    /// Sends the read as a request of the operation in progress. `Ok(None)` when there
    /// is no item under the key.
    ///
    /// Boxed: the read runs inside the futures of writes (settlement) that users' own
    /// async functions hold, and the SDK's future nested one level deeper there would
    /// exceed the compiler's query depth when it lays out such a function.
    pub(crate) fn send(self) -> BoxFuture<'a, Result<Option<Item>, Error>> {
        Box::pin(self.send_untraced())
    }

    /// Sends the read as an operation of its own on `entity`'s item: its span carries the
    /// entity, the consistency and (when the `Db` traces keys) the key `describe` renders.
    pub(crate) async fn send_as_operation(
        self,
        entity: &str,
        describe: impl FnOnce() -> Option<String>,
    ) -> Result<Option<Item>, Error> {
        let span = crate::trace::operation(OP, self.db.table_name(), entity);
        crate::trace::record(&span, "aws.dynamodb.consistent_read", true);
        crate::trace::key(&span, self.db.traces_keys(), describe);
        crate::request::page::traced_found(span, self.send()).await
    }

    async fn send_untraced(self) -> Result<Option<Item>, Error> {
        let mut request = self
            .db
            .client()
            .get_item()
            .table_name(self.db.table_name())
            .set_key(Some(self.key))
            .consistent_read(true);
        if let Some((expression, names)) = self.projection {
            request = request
                .projection_expression(expression)
                .set_expression_attribute_names(names);
        }
        let sending = Sending::new(self.db, Operation::GetItem, Policy::READ, || {
            let (schema, table) = (&T::SCHEMA, self.db.table_arc().clone());
            let target = Target::by_key(schema, table, Action::Get, request.get_key().as_ref());
            Call {
                consistent: true,
                projected: request.get_projection_expression().is_some(),
                whole_items: request.get_projection_expression().is_none(),
                ..Call::single(Operation::GetItem, target)
            }
        });
        let out = sending
            .send(exec!(sending, request))
            .await
            .map_err(|e| Error::service(OP, self.db.table_name(), e))?;
        Ok(out.item.filter(|item| !item.is_empty()))
    }
}
