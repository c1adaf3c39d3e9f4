//! The one pager behind every paged read (query, scan, and reads spread over many
//! partitions): it asks a [`Source`] for responses, keeps the items a read wants, knows
//! where to continue, and, for parallel reads, merges segments under a capacity budget.
//!
//! [`Source`] is the seam: DynamoDB in production (`Query`, `Scan`), a fake in unit
//! tests, so the paging rules are tested without a network.
//!
//! In its terms, a [`Response`] is what DynamoDB returns to one `Query` or `Scan` request,
//! an [`Ask`] is what the pager asks a source for to get the next one, and a page is only
//! ever what a read returns to its caller ([`Page`](crate::Page)).

use crate::request::BoxFuture;
use crate::{Error, Item};
use futures_util::stream::{self, Stream, StreamExt};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;
use tokio::time::Instant;

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

/// Reads responses of one segment from `start` until `want` items were kept (or the
/// results end, or `max_requests` requests were made); `one_request` stops after the
/// first response when nothing in particular is wanted. `keep` decides what becomes of
/// each item read: `Ok(None)` leaves it out (not counted towards `want`).
///
/// When `want` is reached in the middle of a response, the read continues after the last
/// item kept, never after the response: the items left in it are not lost.
pub(crate) async fn collect<S: Source + ?Sized, T>(
    source: &S,
    reading: Reading<'_>,
    mut start: Option<Item>,
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
        let response = source
            .fetch(Ask {
                segment: None,
                start: start.take(),
                limit: limit.map(clamp),
            })
            .await?;
        response.count_in(&mut tally);
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
        let more_in_response = iter.len() > 0;
        if want.is_some_and(|w| items.len() >= w) {
            // Continue after the last kept item if this response had more, else after it.
            let next = if more_in_response {
                stopped_at.or(response.last_key)
            } else {
                response.last_key
            };
            return Ok(Collected { items, next, tally });
        }
        let Some(last) = response.last_key else {
            return Ok(Collected {
                items,
                next: None,
                tally,
            });
        };
        if (one_request && want.is_none())
            || reading
                .max_requests
                .is_some_and(|m| tally.counts.requests >= m)
        {
            return Ok(Collected {
                items,
                next: Some(last),
                tally,
            });
        }
        start = Some(last);
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

/// Keeps consumed read capacity under a per-second budget, across all segments: each
/// request waits until the capacity consumed so far fits in the time elapsed.
#[derive(Debug)]
pub(crate) struct Pacer {
    budget: f64,
    started: Instant,
    consumed: f64,
}

impl Pacer {
    pub(crate) fn new(budget: f64) -> Self {
        Pacer {
            budget,
            started: Instant::now(),
            consumed: 0.0,
        }
    }

    /// Records capacity consumed.
    pub(crate) fn spend(&mut self, units: f64) {
        self.consumed += units;
    }

    /// How long to wait before the next request.
    pub(crate) fn delay(&self) -> Duration {
        let seconds = self.consumed / self.budget;
        let due = if seconds.is_nan() || seconds <= 0.0 {
            // Nothing consumed, or no budget to speak of (callers refuse those).
            Duration::ZERO
        } else {
            // A tiny budget can make the due time unrepresentable: wait as long as possible.
            Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX)
        };
        due.saturating_sub(self.started.elapsed())
    }
}

/// Waits until the capacity consumed so far fits in `pacer`'s budget (no pacer: at once).
pub(crate) async fn pace(pacer: Option<&Mutex<Pacer>>) {
    if let Some(p) = pacer {
        let delay = p.lock().await.delay();
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
    }
}

/// Records capacity consumed in `pacer`, if there is one.
pub(crate) async fn spend(pacer: Option<&Mutex<Pacer>>, units: f64) {
    if let Some(p) = pacer {
        p.lock().await.spend(units);
    }
}

/// One segment's responses, one after the other, paced.
fn segment_responses<S: Source>(
    source: Arc<S>,
    segment: Option<(u32, u32)>,
    page_size: Option<usize>,
    pacer: Option<Arc<Mutex<Pacer>>>,
) -> impl Stream<Item = Result<Response, Error>> + Send {
    // State: the key to start from; `None` once the segment is exhausted.
    stream::unfold(Some(None::<Item>), move |state| {
        let (source, pacer) = (Arc::clone(&source), pacer.clone());
        async move {
            let start = state?;
            pace(pacer.as_deref()).await;
            let ask = Ask {
                segment,
                start,
                limit: page_size.map(clamp),
            };
            match source.fetch(ask).await {
                Ok(response) => {
                    spend(pacer.as_deref(), response.consumed).await;
                    let next = response.last_key.clone().map(Some);
                    Some((Ok(response), next))
                }
                Err(e) => Some((Err(e), None)),
            }
        }
    })
}

/// All segments' responses, read concurrently and merged in the order they arrive, keeping
/// consumed capacity under `budget` read units per second across all of them.
pub(crate) fn merged_responses<S: Source>(
    source: Arc<S>,
    segments: u32,
    page_size: Option<usize>,
    budget: Option<f64>,
) -> impl Stream<Item = Result<Response, Error>> + Send {
    let pacer = budget.map(|b| Arc::new(Mutex::new(Pacer::new(b))));
    let streams = (0..segments).map(|i| {
        let segment = (segments > 1).then_some((i, segments));
        segment_responses(Arc::clone(&source), segment, page_size, pacer.clone()).boxed()
    });
    stream::select_all(streams)
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_dynamodb::types::AttributeValue;
    use std::sync::Mutex as StdMutex;

    /// A sorted partition of `n` items numbered from 0, of which those for which `matches`
    /// holds pass the (server-side) filter; responses hold up to `Limit` items read.
    struct Partition {
        n: usize,
        matches: fn(usize) -> bool,
        asks: StdMutex<Vec<Ask>>,
    }

    fn item(i: usize) -> Item {
        Item::from([("K".to_owned(), AttributeValue::N(i.to_string()))])
    }

    fn number(item: &Item) -> usize {
        item.get("K")
            .and_then(|v| v.as_n().ok())
            .and_then(|n| n.parse().ok())
            .unwrap_or(usize::MAX)
    }

    impl Source for Partition {
        fn fetch(&self, ask: Ask) -> BoxFuture<'_, Result<Response, Error>> {
            self.asks
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(ask.clone());
            let from = ask.start.as_ref().map_or(0, |k| number(k) + 1);
            let limit = ask.limit.map_or(usize::MAX, |l| l as usize);
            let to = from.saturating_add(limit).min(self.n);
            let items = (from..to)
                .filter(|&i| (self.matches)(i))
                .map(item)
                .collect();
            let last_key = (to < self.n).then(|| item(to - 1));
            Box::pin(async move {
                Ok(Response {
                    items,
                    last_key,
                    consumed: 0.5,
                    estimated: 0.5,
                    evaluated: to - from,
                })
            })
        }
    }

    fn partition(n: usize, matches: fn(usize) -> bool) -> Partition {
        Partition {
            n,
            matches,
            asks: StdMutex::new(Vec::new()),
        }
    }

    const NAMES: &[&str] = &["K"];

    async fn read(
        source: &Partition,
        reading: Reading<'_>,
        start: Option<Item>,
        want: Option<usize>,
        one_request: bool,
    ) -> Collected<usize> {
        collect(source, reading, start, want, one_request, |i| {
            Ok(Some(number(&i)))
        })
        .await
        .expect("a fake response")
    }

    fn reading() -> Reading<'static> {
        Reading {
            cursor_names: NAMES,
            ..Reading::default()
        }
    }

    #[tokio::test]
    async fn a_limit_counts_kept_items_and_the_cursor_continues_after_the_last_one() {
        // Every third item passes the filter.
        let source = partition(100, |i| i % 3 == 0);
        let first = read(&source, reading(), None, Some(5), true).await;
        assert_eq!(first.items, [0, 3, 6, 9, 12]);
        let next = first.next.expect("more to read");
        // The response that filled the request read up to 14; 13 and 14 do not match.
        assert_eq!(number(&next), 14, "continues after what was read");
        let second = read(&source, reading(), Some(next), Some(5), true).await;
        assert_eq!(second.items, [15, 18, 21, 24, 27]);
        // The filter dropped items, so later requests ask DynamoDB for more.
        let limits: Vec<Option<i32>> = source
            .asks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|r| r.limit)
            .collect();
        assert_eq!(limits[0], Some(5));
        assert!(limits.windows(2).any(|w| w[1] > w[0]), "{limits:?}");
    }

    #[tokio::test]
    async fn a_request_filled_in_the_middle_of_a_response_continues_after_its_last_item() {
        let source = partition(100, |_| true);
        let reading = Reading {
            page_size: Some(8),
            ..reading()
        };
        let first = read(&source, reading, None, Some(5), true).await;
        assert_eq!(first.items, [0, 1, 2, 3, 4]);
        let next = first.next.expect("more to read");
        assert_eq!(number(&next), 4, "5, 6 and 7 were read but not returned");
        let second = read(&source, reading, Some(next), Some(5), true).await;
        assert_eq!(second.items, [5, 6, 7, 8, 9]);
    }

    fn every_kept_item_once(n: usize, modulus: usize, want: usize, size: Option<usize>) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        let matches: fn(usize) -> bool = match modulus {
            1 => |_| true,
            2 => |i| i % 2 == 1,
            3 => |i| i % 3 == 0,
            _ => |i| i % 7 == 3,
        };
        let source = partition(n, matches);
        let reading = Reading {
            page_size: size,
            ..reading()
        };
        let mut seen = Vec::new();
        let mut start = None;
        runtime.block_on(async {
            loop {
                let page = read(&source, reading, start, Some(want), true).await;
                assert!(page.items.len() <= want);
                seen.extend(page.items);
                match page.next {
                    Some(next) => start = Some(next),
                    None => break,
                }
            }
        });
        let expected: Vec<usize> = (0..n).filter(|&i| matches(i)).collect();
        assert_eq!(seen, expected, "n={n} want={want} size={size:?}");
    }

    proptest::proptest! {
        /// Reading page after page, each continuing at the last one's cursor, returns
        /// every matching item exactly once, in order, whatever the page size and limit.
        #[test]
        fn pages_read_in_turn_return_every_kept_item_once(
            n in 0usize..80,
            modulus in 1usize..5,
            want in 1usize..12,
            size in proptest::option::of(1usize..12),
        ) {
            every_kept_item_once(n, modulus, want, size);
        }
    }

    #[tokio::test]
    async fn without_a_limit_one_request_reads_once_and_max_requests_bounds_the_rest() {
        let source = partition(30, |_| true);
        let one = read(
            &source,
            Reading {
                page_size: Some(4),
                ..reading()
            },
            None,
            None,
            true,
        )
        .await;
        assert_eq!(one.items, [0, 1, 2, 3]);
        let bounded = read(
            &source,
            Reading {
                page_size: Some(4),
                max_requests: Some(2),
                ..reading()
            },
            None,
            None,
            false,
        )
        .await;
        assert_eq!(bounded.items, (0..8).collect::<Vec<_>>());
        assert_eq!(bounded.next.as_ref().map(number), Some(7));
        let all = read(&source, reading(), None, None, false).await;
        assert_eq!(all.items.len(), 30);
        assert!(all.next.is_none());
        assert_eq!(all.tally.consumed, 0.5);
        assert_eq!(all.tally.estimated, 0.5);
    }

    #[tokio::test]
    async fn items_left_out_by_keep_do_not_count() {
        let source = partition(20, |_| true);
        let odd = collect(&source, reading(), None, Some(3), true, |i| {
            let n = number(&i);
            Ok((n % 2 == 1).then_some(n))
        })
        .await
        .expect("a fake response");
        assert_eq!(odd.items, [1, 3, 5]);
    }

    #[tokio::test]
    async fn an_error_of_keep_stops_the_read() {
        let source = partition(20, |_| true);
        let result = collect(&source, reading(), None, None, false, |i| {
            if number(&i) == 2 {
                Err(Error::invalid_request(
                    "Query",
                    crate::ValidationReason::InvalidValue,
                    "bad",
                ))
            } else {
                Ok(Some(()))
            }
        })
        .await;
        assert!(result.is_err());
    }

    // ---- parallel segments and the capacity budget

    mod segments {
        use super::super::*;
        use aws_sdk_dynamodb::types::AttributeValue;
        use std::sync::atomic::{AtomicUsize, Ordering};

        /// A table of `per_segment × segments` numbered items, served in responses of
        /// `per_response`, each costing `cost` read units.
        struct Fake {
            segments: u32,
            per_segment: usize,
            per_response: usize,
            cost: f64,
            requests: AtomicUsize,
        }

        impl Source for Fake {
            fn fetch(&self, ask: Ask) -> BoxFuture<'_, Result<Response, Error>> {
                let (segment, start) = (ask.segment, ask.start);
                self.requests.fetch_add(1, Ordering::SeqCst);
                let seg = segment.map(|s| s.0).unwrap_or(0) as usize;
                assert_eq!(segment.map(|s| s.1).unwrap_or(1), self.segments);
                let from = start
                    .and_then(|k| {
                        k.get("i")
                            .and_then(|v| v.as_n().ok())
                            .and_then(|n| n.parse::<usize>().ok())
                    })
                    .map(|i| i + 1)
                    .unwrap_or(seg * self.per_segment);
                let end = ((seg + 1) * self.per_segment).min(from + self.per_response);
                let items: Vec<Item> = (from..end)
                    .map(|i| Item::from([("i".to_string(), AttributeValue::N(i.to_string()))]))
                    .collect();
                let last_key = (end < (seg + 1) * self.per_segment)
                    .then(|| items.last().cloned())
                    .flatten();
                let cost = self.cost;
                Box::pin(async move {
                    Ok(Response {
                        evaluated: items.len(),
                        items,
                        last_key,
                        consumed: cost,
                        estimated: cost,
                    })
                })
            }
        }

        async fn read_all(fake: Arc<Fake>, budget: Option<f64>) -> Vec<usize> {
            let segments = fake.segments;
            let mut seen: Vec<usize> = merged_responses(fake, segments, None, budget)
                .map(|r| r.unwrap().items)
                .flat_map(stream::iter)
                .map(|i| i["i"].as_n().unwrap().parse::<usize>().unwrap())
                .collect()
                .await;
            seen.sort_unstable();
            seen
        }

        #[tokio::test]
        async fn segments_are_read_to_the_end_and_merged_without_loss_or_duplicates() {
            let fake = Arc::new(Fake {
                segments: 4,
                per_segment: 23,
                per_response: 5,
                cost: 0.0,
                requests: AtomicUsize::new(0),
            });
            let seen = read_all(Arc::clone(&fake), None).await;
            assert_eq!(seen, (0..92).collect::<Vec<_>>());
            // ceil(23 / 5) responses per segment.
            assert_eq!(fake.requests.load(Ordering::SeqCst), 4 * 5);
        }

        #[tokio::test(start_paused = true)]
        async fn a_budget_paces_consumed_capacity_across_segments() {
            // 3 segments × 10 responses × 2.5 RCU = 75 RCU at 10 RCU/s, on tokio's paused
            // clock. A request's cost is known only from its response, so each segment's last
            // request may run ahead of the budget: at least (75 - 3 × 2.5) / 10 = 6.75 s.
            let fake = Arc::new(Fake {
                segments: 3,
                per_segment: 50,
                per_response: 5,
                cost: 2.5,
                requests: AtomicUsize::new(0),
            });
            let started = Instant::now();
            let seen = read_all(fake, Some(10.0)).await;
            assert_eq!(seen.len(), 150);
            let elapsed = started.elapsed();
            assert!(elapsed >= Duration::from_millis(6_750), "{elapsed:?}");
            assert!(elapsed <= Duration::from_secs(8), "{elapsed:?}");
        }

        #[tokio::test(start_paused = true)]
        async fn without_a_budget_nothing_waits() {
            let fake = Arc::new(Fake {
                segments: 2,
                per_segment: 50,
                per_response: 5,
                cost: 100.0,
                requests: AtomicUsize::new(0),
            });
            let started = Instant::now();
            read_all(fake, None).await;
            assert_eq!(started.elapsed(), Duration::ZERO);
        }
    }
}
