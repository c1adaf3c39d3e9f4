//! The reading of a batch get: distinct keys of one or more tables, chunked by 100 (a
//! chunk may span tables: one `BatchGetItem` names each table it reads), `concurrency`
//! chunks at once, unprocessed keys and transient errors retried until the deadline, and
//! every key accounted for: found, not found, unprocessed or failed.

use super::super::MAX_BATCH_GET;
use crate::call::{Action, Call, Operation, Policy, Target as CallTarget};
use crate::request::Customize;
use crate::request::exec::{Attempt, Attempts, Sending, exec};
use crate::retry::{Deadline, RetryPolicy};
use crate::schema::raw_key_of;
use crate::{Db, Error, Item, RawKey, Table, TableSchema};
use aws_sdk_dynamodb::operation::batch_get_item::builders::BatchGetItemFluentBuilder;
use aws_sdk_dynamodb::operation::batch_get_item::{BatchGetItemInput, BatchGetItemOutput};
use aws_sdk_dynamodb::types::{KeysAndAttributes, ReturnConsumedCapacity};
use futures_util::stream::{self, StreamExt};
use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::sync::Arc;

/// One table a batch get reads, and where its keys sit among the batch's positions.
#[derive(Debug, Clone)]
pub(in crate::batch) struct GetTable {
    pub(in crate::batch) name: Arc<str>,
    pub(in crate::batch) schema: &'static TableSchema,
    /// The entity type read, for the record of each call (`None` for a collection).
    pub(in crate::batch) entity: Option<&'static str>,
    pub(in crate::batch) consistent: bool,
    /// The positions of the table's keys among all the keys read.
    pub(in crate::batch) positions: Range<usize>,
}

/// How the keys of several tables are read: the `Db` whose client sends (and whose
/// observers see) every request, the tables, and the hooks applied to every request.
pub(in crate::batch) struct Reading<'a, X: Table> {
    pub(in crate::batch) db: &'a Db<X>,
    pub(in crate::batch) tables: &'a [GetTable],
    pub(in crate::batch) customize: &'a [Customize<BatchGetItemFluentBuilder>],
    pub(in crate::batch) policy: RetryPolicy,
    pub(in crate::batch) concurrency: usize,
}

/// What reading the keys of several tables found, and what became of every key (by its
/// position among the keys read).
#[derive(Debug, Default)]
pub(in crate::batch) struct TablesRead {
    /// Items, with the position of their requested key (in no particular order;
    /// `usize::MAX` for an item whose key was not asked for, changed by a hook).
    pub(in crate::batch) found: Vec<(usize, Item)>,
    /// Keys with no item, in the requested keys' order.
    pub(in crate::batch) not_found: Vec<(usize, RawKey)>,
    /// Keys not read before the deadline.
    pub(in crate::batch) unprocessed: Vec<(usize, RawKey)>,
    /// Keys of one table refused with a non-retryable error: the table's index.
    pub(in crate::batch) failed: Vec<(usize, Vec<RawKey>, Error)>,
    /// Read units DynamoDB reported, table by table.
    pub(in crate::batch) consumed: Vec<f64>,
    /// Requests sent, and how many of them were sent again (unprocessed keys, errors).
    pub(in crate::batch) requests: usize,
    pub(in crate::batch) retries: usize,
}

impl<X: Table> Reading<'_, X> {
    /// The index of the table a key's position belongs to (the first table for a key
    /// no table asked for).
    fn table_of(&self, position: usize) -> usize {
        self.tables
            .iter()
            .position(|t| t.positions.contains(&position))
            .unwrap_or(0)
    }

    /// `keys` grouped by table, tables in their order.
    fn by_table<K>(
        &self,
        keys: impl IntoIterator<Item = (usize, K)>,
    ) -> BTreeMap<usize, Vec<(usize, K)>> {
        let mut groups: BTreeMap<usize, Vec<(usize, K)>> = BTreeMap::new();
        for (position, key) in keys {
            groups
                .entry(self.table_of(position))
                .or_default()
                .push((position, key));
        }
        groups
    }

    /// Reads the distinct keys, each with its position (within the positions of its
    /// table).
    pub(in crate::batch) async fn read(
        &self,
        keys: impl IntoIterator<Item = (usize, RawKey)>,
    ) -> Result<TablesRead, Error> {
        let deadline = Deadline::after(self.policy.deadline);
        // The keys move into their chunk, not copied.
        let mut keys = keys.into_iter();
        let chunks: Vec<Vec<(usize, RawKey)>> = std::iter::from_fn(|| {
            let chunk: Vec<_> = keys.by_ref().take(MAX_BATCH_GET).collect();
            (!chunk.is_empty()).then_some(chunk)
        })
        .collect();
        let results: Vec<Result<TablesRead, Error>> = stream::iter(chunks)
            .map(|chunk| self.chunk(chunk, &deadline))
            .buffer_unordered(self.concurrency.max(1))
            .collect()
            .await;
        let mut read = TablesRead {
            consumed: vec![0.0; self.tables.len()],
            ..TablesRead::default()
        };
        for r in results {
            let r = r?;
            read.requests += r.requests;
            read.retries += r.retries;
            for (total, units) in read.consumed.iter_mut().zip(r.consumed) {
                *total += units;
            }
            read.failed.extend(r.failed);
            read.found.extend(r.found);
            read.not_found.extend(r.not_found);
            read.unprocessed.extend(r.unprocessed);
        }
        // Chunks finish in any order: `not_found` follows the requested keys' order.
        read.not_found.sort_by_key(|(position, _)| *position);
        Ok(read)
    }

    /// Reads one chunk of keys: sent again while DynamoDB hands keys back, until the
    /// deadline. A chunk spanning tables that DynamoDB refuses is split by table and each
    /// part sent on its own, so that a refusal is reported with the keys of the table it
    /// concerns and the other tables' keys are still read.
    async fn chunk(
        &self,
        keys: Vec<(usize, RawKey)>,
        deadline: &Deadline,
    ) -> Result<TablesRead, Error> {
        let mut out = TablesRead {
            consumed: vec![0.0; self.tables.len()],
            ..TablesRead::default()
        };
        let mut attempts = Attempts::new(Operation::BatchGetItem, &self.policy, deadline);
        let mut pending = vec![keys];
        while let Some(mut keys) = pending.pop() {
            while !keys.is_empty() {
                let request = || {
                    let sending = self.sending(&keys);
                    let request = self.request(keys.iter().map(|(p, k)| (*p, k)))?;
                    Ok(exec!(sending, request))
                };
                match attempts.next(Some(keys.len()), request).await? {
                    // Not started before the deadline, or cut off by it: not read.
                    Attempt::NotSent | Attempt::CutOff => {
                        out.unprocessed.append(&mut keys);
                    }
                    Attempt::Answered(resp, span) => {
                        keys = self.settle(resp, &span, keys, &mut out)
                    }
                    // The whole chunk again.
                    Attempt::Retry(_) => {}
                    Attempt::Refused(e) => {
                        let mut groups = self.by_table(std::mem::take(&mut keys));
                        if groups.len() > 1 {
                            pending.extend(groups.into_values());
                        } else if let Some((table, keys)) = groups.pop_first() {
                            let name = &self.tables[table].name;
                            let e = Error::service("BatchGetItem", name, e);
                            let keys = keys.into_iter().map(|(_, k)| k).collect();
                            out.failed.push((table, keys, e));
                        }
                    }
                }
            }
        }
        out.requests = attempts.sent() as usize;
        out.retries = out.requests.saturating_sub(1);
        Ok(out)
    }

    /// Accounts for every key of one answer, table by table (see [`settle`]); returns
    /// the keys to ask again.
    fn settle(
        &self,
        mut resp: BatchGetItemOutput,
        span: &crate::trace::Span,
        keys: Vec<(usize, RawKey)>,
        out: &mut TablesRead,
    ) -> Vec<(usize, RawKey)> {
        for reported in resp.consumed_capacity.iter().flatten() {
            let table = self
                .tables
                .iter()
                .position(|t| reported.table_name.as_deref() == Some(&*t.name));
            out.consumed[table.unwrap_or(0)] += reported.capacity_units.unwrap_or(0.0);
        }
        let mut again = Vec::new();
        let mut handed_back = 0;
        for (table, asked) in self.by_table(keys) {
            let GetTable { name, schema, .. } = &self.tables[table];
            let items = resp
                .responses
                .as_mut()
                .and_then(|r| r.remove(&**name))
                .unwrap_or_default();
            let unprocessed = resp
                .unprocessed_keys
                .as_mut()
                .and_then(|u| u.remove(&**name))
                .map(|ka| ka.keys)
                .unwrap_or_default();
            handed_back += unprocessed.len();
            let settled = settle(schema, asked, items, &unprocessed);
            out.found.extend(settled.found);
            out.not_found.extend(settled.not_found);
            again.extend(settled.unprocessed);
        }
        crate::trace::record(span, "dynamo_model.unprocessed", handed_back as u64);
        again
    }

    /// The `BatchGetItem` input of each chunk of 100 of `keys`, instead of sending them.
    pub(in crate::batch) fn inputs<'k>(
        &self,
        keys: impl IntoIterator<Item = (usize, &'k RawKey)>,
    ) -> Result<Vec<BatchGetItemInput>, Error> {
        let keys: Vec<_> = keys.into_iter().collect();
        keys.chunks(MAX_BATCH_GET)
            .map(|chunk| {
                let request = self.request(chunk.iter().copied())?;
                crate::request::input("BatchGetItem", request.as_input().clone().build())
            })
            .collect()
    }

    /// One `BatchGetItem` request of `keys`, each table's keys under its name, rendered
    /// into the SDK's builder, every hook applied in order.
    pub(in crate::batch) fn request<'k>(
        &self,
        keys: impl IntoIterator<Item = (usize, &'k RawKey)>,
    ) -> Result<BatchGetItemFluentBuilder, Error> {
        let mut request = self
            .db
            .client()
            .batch_get_item()
            .return_consumed_capacity(ReturnConsumedCapacity::Total);
        for (table, keys) in self.by_table(keys) {
            let GetTable {
                name,
                schema,
                consistent,
                ..
            } = &self.tables[table];
            let read = KeysAndAttributes::builder()
                .set_keys(Some(keys.iter().map(|(_, k)| k.to_item(schema)).collect()))
                .consistent_read(*consistent)
                .build()
                .map_err(|e| Error::request_build("BatchGetItem", e))?;
            request = request.request_items(&**name, read);
        }
        Ok(self.customize.iter().fold(request, |r, c| c.apply(r)))
    }

    /// How a `BatchGetItem` of `keys` is sent, with the record of its call
    /// (`crate::call`): each key under its own table.
    fn sending(&self, keys: &[(usize, RawKey)]) -> Sending {
        Sending::new(self.db, Operation::BatchGetItem, Policy::BATCH, || {
            let first = keys.first().map_or(0, |(p, _)| self.table_of(*p));
            let targets = keys.iter().map(|(position, key)| {
                let table = &self.tables[self.table_of(*position)];
                CallTarget::key(table.name.clone(), Action::Get, table.entity, key)
            });
            Call {
                targets: targets.collect(),
                keys: keys.len(),
                consistent: self.tables[first].consistent,
                ..Call::new(Operation::BatchGetItem, self.tables[first].name.clone())
            }
        })
    }
}

/// Where one response leaves the keys it answered.
#[derive(Debug, Default, PartialEq)]
pub(in crate::batch) struct Settled {
    pub(in crate::batch) found: Vec<(usize, Item)>,
    pub(in crate::batch) not_found: Vec<(usize, RawKey)>,
    /// To be asked again.
    pub(in crate::batch) unprocessed: Vec<(usize, RawKey)>,
}

/// Accounts for every key of one table in one `BatchGetItem` response: each requested
/// key is found (an item came back under it), unprocessed (DynamoDB handed it back), or
/// else not found (DynamoDB answers every key it processed). Keys are compared borrowed
/// from the items and the requested keys: nothing is copied, each key hashed once.
pub(in crate::batch) fn settle(
    schema: &TableSchema,
    asked: Vec<(usize, RawKey)>,
    items: Vec<Item>,
    unprocessed: &[Item],
) -> Settled {
    const NOT_FOUND: u8 = 0;
    const FOUND: u8 = 1;
    const UNPROCESSED: u8 = 2;
    let mut state = vec![NOT_FOUND; asked.len()];
    let mut found = Vec::with_capacity(items.len());
    let mut strays = Vec::new();
    {
        let index: HashMap<(&str, Option<&str>), usize> = asked
            .iter()
            .enumerate()
            .map(|(i, (_, k))| ((k.pk.as_str(), k.sk.as_deref()), i))
            .collect();
        let lookup = |item: &Item| {
            let pk = item.get(schema.pk.name)?.as_s().ok()?;
            let sk = match schema.sk {
                Some(attr) => Some(item.get(attr.name)?.as_s().ok()?.as_str()),
                None => None,
            };
            index.get(&(pk.as_str(), sk)).copied()
        };
        for item in items {
            let position = match lookup(&item) {
                Some(i) => {
                    state[i] = FOUND;
                    asked[i].0
                }
                None => usize::MAX,
            };
            found.push((position, item));
        }
        for key in unprocessed {
            match lookup(key) {
                Some(i) if state[i] == NOT_FOUND => state[i] = UNPROCESSED,
                Some(_) => {}
                // Not a key this request asked for (a hook changed the keys): asked
                // again all the same, so it is not dropped.
                None => strays.extend(raw_key_of(schema, key).map(|k| (usize::MAX, k))),
            }
        }
    }
    let mut settled = Settled {
        found,
        not_found: Vec::new(),
        unprocessed: strays,
    };
    for (key, state) in asked.into_iter().zip(state) {
        match state {
            FOUND => {}
            UNPROCESSED => settled.unprocessed.push(key),
            _ => settled.not_found.push(key),
        }
    }
    settled
}
