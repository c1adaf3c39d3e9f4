//! The tables of a batch write: the operations ([`WriteOp`]), the table each goes to
//! ([`TableRef`]), a chunk's `RequestItems` grouped by table, and its `UnprocessedItems`
//! mapped back to the operations, table by table.

use crate::call::{Action, Target};
use crate::schema::raw_key_of;
use crate::{Db, Error, Item, RawKey, Table, TableSchema};
use aws_sdk_dynamodb::types::{DeleteRequest, PutRequest, WriteRequest};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The check of an operation's key against the entity types of its table type
/// (`registry::check_unconditional_write`, monomorphized for that table type).
type Check = fn(&'static str, &RawKey, Option<&Item>) -> Result<(), Error>;

/// The table an operation of a batch write goes to: its name, its schema and the table
/// type's registry of entity types, taken from the [`Db`] given to
/// [`BatchWrite::put_to`](crate::batch::BatchWrite::put_to) or
/// [`BatchWrite::delete_from`](crate::batch::BatchWrite::delete_from). Carried by each
/// [`WriteOp`], so that unprocessed operations go back to their own tables when resubmitted.
#[derive(Clone)]
pub struct TableRef {
    name: Arc<str>,
    schema: &'static TableSchema,
    check: Check,
}

impl TableRef {
    /// The table of `db`.
    pub fn of<X: Table>(db: &Db<X>) -> TableRef {
        TableRef {
            name: db.table_arc().clone(),
            schema: &X::SCHEMA,
            check: crate::registry::check_unconditional_write::<X>,
        }
    }

    /// The table's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The table's schema.
    pub fn schema(&self) -> &'static TableSchema {
        self.schema
    }

    /// The table's name, shared (for the record of a call).
    pub(crate) fn arc(&self) -> &Arc<str> {
        &self.name
    }

    /// Refuses a write whose key another entity type of the table's type can own (see
    /// [`BatchWrite`](crate::batch::BatchWrite)).
    pub(super) fn check(&self, op: &WriteOp) -> Result<(), Error> {
        let item = match op {
            WriteOp::Put { item, .. } => Some(item),
            WriteOp::Delete { .. } => None,
        };
        (self.check)(op.entity(), op.key(), item)
    }
}

impl std::fmt::Debug for TableRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("TableRef").field(&self.name).finish()
    }
}

/// Two references to one table: same name, same schema.
impl PartialEq for TableRef {
    fn eq(&self, other: &TableRef) -> bool {
        self.name == other.name && self.schema == other.schema
    }
}

/// One put or delete of a batch write.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum WriteOp {
    /// Put this item.
    Put {
        /// Entity type of the item.
        entity: &'static str,
        /// The item's key.
        key: RawKey,
        /// The whole item.
        item: Item,
        /// The table it goes to; `None` for the table of the batch it is added to.
        table: Option<TableRef>,
    },
    /// Delete the item under this key.
    Delete {
        /// Entity type of the key.
        entity: &'static str,
        /// The key.
        key: RawKey,
        /// The table it goes to; `None` for the table of the batch it is added to.
        table: Option<TableRef>,
    },
}

impl WriteOp {
    /// The key the operation writes.
    pub fn key(&self) -> &RawKey {
        match self {
            WriteOp::Put { key, .. } | WriteOp::Delete { key, .. } => key,
        }
    }

    /// The table the operation goes to; `None` for the table of the batch it is added to.
    pub fn table(&self) -> Option<&TableRef> {
        match self {
            WriteOp::Put { table, .. } | WriteOp::Delete { table, .. } => table.as_ref(),
        }
    }

    /// The entity type the operation writes.
    pub(super) fn entity(&self) -> &'static str {
        match self {
            WriteOp::Put { entity, .. } | WriteOp::Delete { entity, .. } => entity,
        }
    }

    /// The operation's table: its own, or the batch's (`own`).
    pub(super) fn table_or<'a>(&'a self, own: &'a TableRef) -> &'a TableRef {
        self.table().unwrap_or(own)
    }

    /// What the operation writes, for the record of its call (`crate::call`).
    pub(in crate::batch) fn target(&self, own: &TableRef) -> Target {
        let table = self.table_or(own);
        match self {
            WriteOp::Put { entity, item, .. } => {
                Target::put(table.schema, table.arc().clone(), item).of(entity)
            }
            WriteOp::Delete { entity, key, .. } => {
                Target::key(table.arc().clone(), Action::Delete, Some(*entity), key)
            }
        }
    }

    fn request(&self, schema: &TableSchema) -> Result<WriteRequest, Error> {
        const OP: &str = "BatchWriteItem";
        Ok(match self {
            WriteOp::Put { item, .. } => WriteRequest::builder()
                .put_request(
                    PutRequest::builder()
                        .set_item(Some(item.clone()))
                        .build()
                        .map_err(|e| Error::request_build(OP, e))?,
                )
                .build(),
            WriteOp::Delete { key, .. } => WriteRequest::builder()
                .delete_request(
                    DeleteRequest::builder()
                        .set_key(Some(key.to_item(schema)))
                        .build()
                        .map_err(|e| Error::request_build(OP, e))?,
                )
                .build(),
        })
    }
}

/// The `RequestItems` of a call writing `ops`: each table's requests, in the order of
/// the operations.
pub(in crate::batch) fn request_items(
    ops: &[WriteOp],
    own: &TableRef,
) -> Result<HashMap<String, Vec<WriteRequest>>, Error> {
    let mut items: HashMap<String, Vec<WriteRequest>> = HashMap::new();
    for op in ops {
        let table = op.table_or(own);
        let request = op.request(table.schema)?;
        match items.get_mut(table.name()) {
            Some(requests) => requests.push(request),
            None => {
                items.insert(table.name().to_owned(), vec![request]);
            }
        }
    }
    Ok(items)
}

/// Keeps the operations of `ops` that DynamoDB returned as `UnprocessedItems`, each
/// matched by its table and its key (read with that table's schema); returns how many
/// were written.
pub(in crate::batch) fn keep_unprocessed(
    ops: &mut Vec<WriteOp>,
    unprocessed: HashMap<String, Vec<WriteRequest>>,
    own: &TableRef,
) -> usize {
    let schemas: HashMap<&str, &'static TableSchema> = ops
        .iter()
        .map(|op| op.table_or(own))
        .map(|t| (t.name(), t.schema))
        .collect();
    let left: HashMap<String, HashSet<RawKey>> = unprocessed
        .into_iter()
        .filter_map(|(name, requests)| {
            let schema = *schemas.get(name.as_str())?;
            let keys = requests
                .iter()
                .filter_map(|w| {
                    let item = match (&w.put_request, &w.delete_request) {
                        (Some(p), _) => &p.item,
                        (None, Some(d)) => &d.key,
                        (None, None) => return None,
                    };
                    raw_key_of(schema, item)
                })
                .collect();
            Some((name, keys))
        })
        .collect();
    let before = ops.len();
    ops.retain(|op| {
        left.get(op.table_or(own).name())
            .is_some_and(|keys| keys.contains(op.key()))
    });
    before - ops.len()
}

/// `ops` grouped by the table each writes, tables in the order first named, each
/// group's operations in their order.
pub(in crate::batch) fn by_table(ops: Vec<WriteOp>, own: &TableRef) -> Vec<Vec<WriteOp>> {
    let mut groups: Vec<(Arc<str>, Vec<WriteOp>)> = Vec::new();
    for op in ops {
        let name = op.table_or(own).arc().clone();
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some((_, group)) => group.push(op),
            None => groups.push((name, vec![op])),
        }
    }
    groups.into_iter().map(|(_, group)| group).collect()
}
