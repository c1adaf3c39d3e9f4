//! The one pager behind every paged read (query, scan, and reads spread over many
//! partitions): it asks a [`Source`] for responses, keeps the items a read wants, knows
//! where to continue, and, for parallel reads, merges segments under a capacity budget.
//!
//! Two loops, one inside the other:
//! - [`Segment::next`] is how every read asks for a response: from where a segment (or
//!   partition) stands, paced when the read has a capacity budget, the response's
//!   `LastEvaluatedKey` becoming the segment's position. Queries and pages of a scan
//!   read one segment ([`Paged`]). Segments read in parallel under one budget are read
//!   one way, [`parallel`]: a scan's `all` and `stream` take its responses as they arrive
//!   ([`Merged`]), a migration migrates each segment's responses in turn. A scatter
//!   query's merge reads each partition through [`Segment::next`] too, but one request
//!   at a time, each with the `Limit` its sorted merge needs then, rather than each
//!   partition to its end: it keeps its own scheduling.
//! - [`read`] is the one loop over responses: it owns the counts and the capacity
//!   ([`Tally`]), the number of items wanted, the `Limit` of each request (growing when a
//!   filter drops items) and where the read continues. `all`, `page` and `one` of a query
//!   or scan, a query's and a scan's `stream` and the orphan sweep are views over it
//!   ([`collect`] for one segment); what it reads is a [`Responses`]: one segment
//!   ([`Paged`]), segments in parallel ([`Merged`]), or a history in revision order (a
//!   query's `SlotOrder`, every revision sorted by slot). A scatter query's items go
//!   through the sorted merge of `merge` instead, which decides item by item which
//!   partition to read next.
//!
//! [`Source`] is the seam: DynamoDB in production (`Query`, `Scan`), a fake in unit
//! tests, so the paging rules are tested without a network.
//!
//! In its terms, a [`Response`] is what DynamoDB returns to one `Query` or `Scan` request,
//! an [`Ask`] is what the pager asks a source for to get the next one, and a page is only
//! ever what a read returns to its caller ([`Page`](crate::Page)).

use crate::request::BoxFuture;
use crate::{Error, Item};
use futures_util::stream::{Stream, StreamExt};

/// One response of a Query or Scan, before decoding.
#[derive(Debug, Default)]
pub(crate) struct Response {
    pub(crate) items: Vec<Item>,
    /// `LastEvaluatedKey`: where the next request starts; `None` at the end.
    pub(crate) last_key: Option<Item>,
    pub(crate) consumed: f64,
    /// What the response's items cost by DynamoDB's rules (`crate::capacity`).
    pub(crate) estimated: f64,
    /// Items DynamoDB read for this response, before its filter (`ScannedCount`).
    pub(crate) evaluated: usize,
}

impl Response {
    /// Adds this response's figures to `tally`.
    pub(crate) fn count_in(&self, tally: &mut Tally) {
        tally.add(
            self.items.len(),
            self.evaluated,
            self.consumed,
            self.estimated,
        );
    }

    /// A response from the members of a `QueryOutput` or `ScanOutput` (its request span
    /// has its item count and capacity: `crate::request::exec`).
    pub(crate) fn from_output(
        items: Option<Vec<Item>>,
        last_evaluated_key: Option<Item>,
        consumed_capacity: Option<&aws_sdk_dynamodb::types::ConsumedCapacity>,
        scanned_count: i32,
        consistent: bool,
    ) -> Self {
        let items = items.unwrap_or_default();
        // The items of one response, summed and rounded once.
        let bytes: usize = items.iter().map(crate::item_size).sum();
        let consumed = consumed_capacity
            .and_then(|c| c.capacity_units)
            .unwrap_or(0.0);
        Response {
            estimated: crate::capacity::read_units(bytes, consistent),
            consumed,
            evaluated: scanned_count.max(0) as usize,
            items,
            last_key: last_evaluated_key.filter(|k| !k.is_empty()),
        }
    }
}

/// What the pager asks a source for.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ask {
    /// `(segment, total segments)` of a parallel scan.
    pub(crate) segment: Option<(u32, u32)>,
    /// `ExclusiveStartKey`.
    pub(crate) start: Option<Item>,
    /// `Limit`: items DynamoDB reads (before its filter) for this response.
    pub(crate) limit: Option<i32>,
}

/// Where responses come from: DynamoDB, or a fake in tests.
pub(crate) trait Source: Send + Sync + 'static {
    fn fetch(&self, ask: Ask) -> BoxFuture<'_, Result<Response, Error>>;
}

/// How a read proceeds from response to response.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Reading<'a> {
    /// A fixed `Limit` per request; without one the pager asks for what it still wants.
    pub(crate) page_size: Option<usize>,
    /// At most this many requests per call.
    pub(crate) max_requests: Option<usize>,
    /// The attributes of `LastEvaluatedKey`, to continue after an item in the middle of a
    /// response.
    pub(crate) cursor_names: &'a [&'static str],
}

/// What one [`collect`] read: the items and where to continue.
#[derive(Debug)]
pub(crate) struct Collected<T> {
    pub(crate) items: Vec<T>,
    /// Where to continue (the key after which the next read starts), `None` at the end.
    pub(crate) next: Option<Item>,
    /// What the requests cost, and what DynamoDB said of them: items returned (`Count`,
    /// after its filter) and items read (`ScannedCount`, before it), summed.
    pub(crate) tally: Tally,
}

pub(crate) use crate::request::page::Tally;

impl<T> Collected<T> {
    /// The page of what was collected, its cursor (where to continue) bound to
    /// `fingerprint` and signed with `secret`.
    pub(crate) fn into_page(
        self,
        fingerprint: crate::cursor::Fingerprint,
        secret: &[u8],
    ) -> crate::request::page::Page<T> {
        let cursor = self
            .next
            .map(|key| crate::cursor::encode(fingerprint, &key, secret));
        crate::request::page::Page::read(self.items, cursor, self.tally)
    }
}

fn clamp(n: usize) -> i32 {
    n.clamp(1, i32::MAX as usize) as i32
}

/// The `Limit` of a read's first request: the page size, else the number of items wanted.
pub(crate) fn first_limit(page_size: Option<usize>, want: Option<usize>) -> Option<i32> {
    page_size.or(want).map(clamp)
}

/// Where the read loop's responses come from, one after the other: one segment read from
/// where it stands ([`Paged`]), or segments read in parallel ([`Merged`]).
pub(crate) trait Responses: Send {
    /// The next response, asking for `limit` items (a reader with its own page size
    /// ignores it); `None` once there are no more.
    fn next(
        &mut self,
        limit: Option<i32>,
    ) -> impl std::future::Future<Output = Option<Result<Response, Error>>> + Send;
    /// Adds what `response` (one of this reader's) cost and counted to `tally`: one
    /// request's figures, unless the reader made several requests for it.
    fn count(&self, response: &Response, tally: &mut Tally) {
        response.count_in(tally);
    }
    /// Whether nothing is left to read.
    fn done(&self) -> bool;
    /// Continues after `key` (the item a read stopped at in the middle of a response)
    /// rather than after the last response.
    fn stop_after(&mut self, key: Item);
    /// Where the read continues: `None` at the end, or when there is no one place to
    /// continue from (segments read in parallel).
    fn into_next(self) -> Option<Item>;
}

/// One segment's responses from where it stands, not paced: what a query or a page of a
/// scan reads.
pub(crate) struct Paged<'a, S: ?Sized> {
    source: &'a S,
    segment: Segment,
}

impl<'a, S: Source + ?Sized> Paged<'a, S> {
    /// The responses of `source` after `start` (from the beginning without one).
    pub(crate) fn after(source: &'a S, start: Option<Item>) -> Self {
        let at = start.map_or(
            crate::cursor::Position::Start,
            crate::cursor::Position::After,
        );
        Paged {
            source,
            segment: Segment::new(None, at),
        }
    }
}

impl<S: Source + ?Sized> Responses for Paged<'_, S> {
    fn next(
        &mut self,
        limit: Option<i32>,
    ) -> impl std::future::Future<Output = Option<Result<Response, Error>>> + Send {
        self.segment.next(self.source, limit, None)
    }

    fn done(&self) -> bool {
        self.segment.is_done()
    }

    fn stop_after(&mut self, key: Item) {
        self.segment.stop_after(key);
    }

    fn into_next(self) -> Option<Item> {
        match self.segment.into_position() {
            crate::cursor::Position::After(key) => Some(key),
            crate::cursor::Position::Start | crate::cursor::Position::Done => None,
        }
    }
}

/// Responses of segments read in parallel ([`parallel`]), in the order they
/// arrive: a read of them has no one place to continue from.
pub(crate) struct Merged<St> {
    responses: St,
    over: bool,
}

impl<St> Merged<St> {
    pub(crate) fn new(responses: St) -> Self {
        Merged {
            responses,
            over: false,
        }
    }
}

impl<St> Merged<St> {
    /// Whether every segment is read to its end.
    pub(crate) fn is_over(&self) -> bool {
        self.over
    }
}

impl<St: Stream<Item = Result<Response, Error>> + Unpin + Send> Responses for &mut Merged<St> {
    async fn next(&mut self, _limit: Option<i32>) -> Option<Result<Response, Error>> {
        let next = self.responses.next().await;
        self.over = next.is_none();
        next
    }

    fn done(&self) -> bool {
        self.over
    }

    fn stop_after(&mut self, _key: Item) {}

    fn into_next(self) -> Option<Item> {
        None
    }
}

/// Reads responses of one segment from `start` through [`read`].
pub(crate) async fn collect<S: Source + ?Sized, T>(
    source: &S,
    reading: Reading<'_>,
    start: Option<Item>,
    want: Option<usize>,
    one_request: bool,
    keep: impl FnMut(Item) -> Result<Option<T>, Error>,
) -> Result<Collected<T>, Error> {
    read(
        Paged::after(source, start),
        reading,
        want,
        one_request,
        keep,
    )
    .await
}

/// The one read loop: takes `responses` until `want` items were kept (or the responses
/// end, or `max_requests` requests were made), counting what they cost; `one_request`
/// stops after the first response when nothing in particular is wanted. `keep` decides
/// what becomes of each item read: `Ok(None)` leaves it out (not counted towards `want`).
/// Without a fixed page size, each request asks for what is still wanted, and for more
/// once a filter dropped items.
///
/// When `want` is reached in the middle of a response, the read continues after the last
/// item kept, never after the response: the items left in it are not lost.
pub(crate) async fn read<R: Responses, T>(
    mut responses: R,
    reading: Reading<'_>,
    want: Option<usize>,
    one_request: bool,
    mut keep: impl FnMut(Item) -> Result<Option<T>, Error>,
) -> Result<Collected<T>, Error> {
    let mut items = Vec::new();
    let mut tally = Tally::default();
    let mut grown_limit = reading.page_size.or(want).map(|n| n.max(1));
    loop {
        let remaining = want.map(|w| w - items.len());
        let limit = match (reading.page_size, remaining, grown_limit) {
            (Some(size), _, _) => Some(size),
            (None, Some(r), Some(l)) => Some(l.max(r)),
            (None, _, l) => l,
        };
        let Some(response) = responses.next(limit.map(clamp)).await else {
            return Ok(Collected {
                items,
                next: None,
                tally,
            });
        };
        let response = response?;
        responses.count(&response, &mut tally);
        let returned = response.items.len();
        let mut iter = response.items.into_iter();
        let mut stopped_at: Option<Item> = None;
        while want.is_none_or(|w| items.len() < w) {
            let Some(item) = iter.next() else { break };
            // Only the item that fills the request is copied, for the cursor.
            let fills = want.is_some_and(|w| items.len() + 1 == w);
            let key = fills.then(|| key_of(&item, reading.cursor_names));
            if let Some(t) = keep(item)? {
                items.push(t);
                stopped_at = key.or(stopped_at);
            }
        }
        let full = want.is_some_and(|w| items.len() >= w);
        if full && iter.len() > 0 {
            // Continue after the last kept item: this response had more.
            if let Some(key) = stopped_at {
                responses.stop_after(key);
            }
        }
        if full
            || responses.done()
            || (one_request && want.is_none())
            || reading
                .max_requests
                .is_some_and(|m| tally.counts.requests >= m)
        {
            return Ok(Collected {
                items,
                next: responses.into_next(),
                tally,
            });
        }
        // A filter dropped items: read more per request next time, up to 1,000.
        if returned < response.evaluated {
            grown_limit = grown_limit.map(|l| (l * 2).min(1000));
        }
    }
}

/// The `LastEvaluatedKey`-shaped key of an item.
pub(super) fn key_of(item: &Item, names: &[&'static str]) -> Item {
    names
        .iter()
        .filter_map(|n| item.get(*n).map(|v| ((*n).to_owned(), v.clone())))
        .collect()
}

mod segments;

pub(crate) use segments::{Pacer, Segment, pace, parallel, spend};

#[cfg(test)]
mod tests;
