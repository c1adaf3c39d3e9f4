//! What a read returns: a page of typed results, and how items become results.

use crate::collection::{Decoded, Target};
use crate::cursor::Cursor;
use crate::expr::Node;
use crate::{Error, Item, Table};
use aws_sdk_dynamodb::types::AttributeValue;

/// What to do with items whose entity type is not part of a collection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum UnknownEntity {
    /// Leave them out of the results (default).
    #[default]
    Skip,
    /// Fail with [`DecodeErrorKind::WrongEntityType`](crate::DecodeErrorKind::WrongEntityType).
    Error,
}

/// A page of results.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Page<T> {
    /// The items, in key order (reversed with `reverse()`).
    pub items: Vec<T>,
    /// Where to continue, or `None` when the results are exhausted.
    pub cursor: Option<Cursor>,
    /// Read capacity units consumed by the requests behind this page, as DynamoDB
    /// reported them.
    pub consumed_capacity: f64,
    /// Read capacity units the page's items cost by DynamoDB's rules
    /// ([`crate::capacity`]): what a read of them costs at least (a filter's dropped
    /// items and, for a scan, every item evaluated are charged too).
    pub estimated_capacity: f64,
    /// Items DynamoDB returned to the requests behind this page (`Count`, summed: what
    /// matched the filter). It can exceed `items.len()`: items past a `limit` are read
    /// again by the next page, and items another entity type's are left out.
    pub count: usize,
    /// Items DynamoDB read for those requests before applying the filter
    /// (`ScannedCount`, summed): what the read was charged for.
    pub scanned_count: usize,
    /// Requests sent for this page (a page may need several: a filter dropping most
    /// items, a scatter read over many partitions). For a keys-only read's `hydrate`, the
    /// figures are the index read's; the batch get behind it is in the capacities only.
    pub requests: usize,
}

impl<T> Page<T> {
    /// A page for which nothing was sent.
    pub(crate) fn empty(cursor: Option<Cursor>) -> Self {
        Page {
            items: Vec::new(),
            cursor,
            consumed_capacity: 0.0,
            estimated_capacity: 0.0,
            count: 0,
            scanned_count: 0,
            requests: 0,
        }
    }

    /// A page of `items` read by requests whose figures are `tally`, continuing at
    /// `cursor`.
    pub(crate) fn read(items: Vec<T>, cursor: Option<Cursor>, tally: Tally) -> Self {
        Page {
            items,
            cursor,
            consumed_capacity: tally.consumed,
            estimated_capacity: tally.estimated,
            count: tally.counts.count,
            scanned_count: tally.counts.scanned,
            requests: tally.counts.requests,
        }
    }
}

/// Runs a read of at most one item under its operation span, and records in it whether
/// the item was found: what `get` and a query's `one` share.
pub(crate) async fn traced_found<T>(
    span: crate::trace::Span,
    read: impl std::future::Future<Output = Result<Option<T>, Error>>,
) -> Result<Option<T>, Error> {
    traced_read(span, read, |span, found| {
        crate::trace::record(span, "dynamo_model.items", u64::from(found.is_some()))
    })
    .await
}

/// Runs a read that returns a page under its operation span, and records the page's
/// figures in it: what `all` and `page` of queries, scans and scatter queries share.
pub(crate) async fn traced_page<T>(
    span: crate::trace::Span,
    read: impl std::future::Future<Output = Result<Page<T>, Error>>,
) -> Result<Page<T>, Error> {
    traced_read(span, read, trace_page).await
}

/// Runs `read` under its operation span and records what `figures` takes from its result.
async fn traced_read<R>(
    span: crate::trace::Span,
    read: impl std::future::Future<Output = Result<R, Error>>,
    figures: impl FnOnce(&crate::trace::Span, &R),
) -> Result<R, Error> {
    crate::trace::traced(span.clone(), async move {
        let result = read.await?;
        figures(&span, &result);
        Ok(result)
    })
    .await
}

/// The operation span of a paged read (`Query`, `Scan`) of `target`, with its consistency
/// and limits recorded.
pub(crate) fn read_span(
    operation: &'static str,
    table: &str,
    target: &'static str,
    consistent: bool,
    (page_size, limit): (Option<usize>, Option<usize>),
) -> crate::trace::Span {
    let span = crate::trace::operation(operation, table, target);
    crate::trace::record(&span, "aws.dynamodb.consistent_read", consistent);
    crate::trace::limits(&span, page_size, limit);
    span
}

/// Records a page's figures in its operation span.
pub(crate) fn trace_page<T>(span: &crate::trace::Span, page: &Page<T>) {
    crate::trace::record(span, "dynamo_model.items", page.items.len() as u64);
    crate::trace::record(span, "aws.dynamodb.count", page.count as u64);
    crate::trace::record(
        span,
        "aws.dynamodb.scanned_count",
        page.scanned_count as u64,
    );
    crate::trace::record(span, "dynamo_model.requests", page.requests as u64);
    crate::trace::record(
        span,
        "aws.dynamodb.consumed_capacity",
        page.consumed_capacity,
    );
}

/// `_type IN (..)`: only items of the target's entity types.
/// One entity type is `_type = :v`, the form DynamoDB evaluates most simply.
pub(crate) fn entity_type_filter<T: Target>() -> Node {
    let path = <T::Table as Table>::SCHEMA.entity_type;
    let typed = typed_filter::<T>(path);
    if !T::IDENTIFIED_BY_KEYS {
        return typed;
    }
    // Untyped items may be the target's: decoding tells them apart by their keys.
    Node::either(typed, Node::absent(path))
}

fn typed_filter<T: Target>(path: &'static str) -> Node {
    match T::ENTITY_TYPES {
        [only] => Node::equals(path, AttributeValue::S((*only).to_owned())),
        types => Node::one_of(
            path,
            types
                .iter()
                .map(|t| AttributeValue::S((*t).to_owned()))
                .collect(),
        ),
    }
}

/// Decodes an item into the target, applying the unknown-entity policy.
pub(crate) fn decode_target<T: Target>(
    mut item: Item,
    unknown: UnknownEntity,
    keys: Option<&dyn crate::encrypt::KeyProvider>,
) -> Result<Option<T>, Error> {
    // A revision of a versioned entity is history, not an item of its own: reads other
    // than the history's see the latest copy only (a collection over the partition, a
    // scan, an index whose keys revisions also carry).
    // Only a versioned entity or a collection (whose members may be versioned) can meet
    // a revision; for every other target the check costs nothing (constants).
    let may_meet_revisions = T::HISTORY.is_some() || T::IS_COLLECTION;
    if !T::READS_REVISIONS && may_meet_revisions && crate::registry::is_revision::<T::Table>(&item)
    {
        return Ok(None);
    }
    crate::collection::open::<T>(keys, &mut item)?;
    match T::decode(item)? {
        Decoded::Item(t) => Ok(Some(t)),
        Decoded::Unknown(found) if unknown == UnknownEntity::Error => {
            Err(Error::Decode(crate::DecodeError {
                entity: T::NAME,
                key: None,
                attribute: None,
                kind: crate::DecodeErrorKind::WrongEntityType {
                    expected: T::NAME,
                    found,
                },
            }))
        }
        Decoded::Unknown(_) => Ok(None),
    }
}

/// What the requests behind a page cost and counted, summed over their responses: every
/// loop that reads responses keeps one.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Tally {
    /// Read capacity consumed, as DynamoDB reported it.
    pub(crate) consumed: f64,
    /// Read capacity by DynamoDB's rules, from the items' sizes.
    pub(crate) estimated: f64,
    /// The requests, and DynamoDB's counts of them.
    pub(crate) counts: Counts,
}

impl Tally {
    /// Counts one more response, which returned `items` items of `scanned` read, for
    /// `consumed` units (`estimated` by the rules).
    pub(crate) fn add(&mut self, items: usize, scanned: usize, consumed: f64, estimated: f64) {
        self.counts.add(items, scanned);
        self.consumed += consumed;
        self.estimated += estimated;
    }
}

/// Requests behind a page, and DynamoDB's `Count` and `ScannedCount` of them, summed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) requests: usize,
    pub(crate) count: usize,
    pub(crate) scanned: usize,
}

impl Counts {
    /// Counts one more response, which returned `items` items of `scanned` read.
    pub(crate) fn add(&mut self, items: usize, scanned: usize) {
        self.requests += 1;
        self.count += items;
        self.scanned += scanned;
    }
}
