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
    use crate::cursor::Position;
    use aws_sdk_dynamodb::types::AttributeValue;
    use futures_util::stream::{self, StreamExt};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;
    use tokio::time::Instant;

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
        let mut seen: Vec<usize> = parallel(
            fake,
            vec![Position::Start; segments as usize],
            None,
            budget,
            |_, _, response| std::future::ready(Ok(response)),
        )
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

    #[tokio::test(start_paused = true)]
    async fn each_segment_waits_for_its_responses_to_be_handled_the_segments_concurrently() {
        // 3 segments × 2 responses, each handled in 1 s: 2 s in all, the segments side by
        // side, and a segment asks for its next response only once its last is handled.
        let fake = Arc::new(Fake {
            segments: 3,
            per_segment: 10,
            per_response: 5,
            cost: 0.0,
            requests: AtomicUsize::new(0),
        });
        let handled = Arc::new(AtomicUsize::new(0));
        let then = {
            let (fake, handled) = (Arc::clone(&fake), Arc::clone(&handled));
            move |_, position: &Position, response: Response| {
                let (fake, handled) = (Arc::clone(&fake), Arc::clone(&handled));
                let last = *position == Position::Done;
                async move {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    // Never more requests than responses handled and one in flight per
                    // segment.
                    let before = handled.fetch_add(1, Ordering::SeqCst);
                    assert!(fake.requests.load(Ordering::SeqCst) <= before + 3);
                    Ok((response.items.len(), last))
                }
            }
        };
        let started = Instant::now();
        let steps: Vec<(usize, bool)> = parallel(
            Arc::clone(&fake),
            vec![Position::Start; 3],
            None,
            None,
            then,
        )
        .map(|step| step.unwrap())
        .collect()
        .await;
        assert_eq!(started.elapsed(), Duration::from_secs(2));
        assert_eq!(steps.len(), 6);
        assert_eq!(steps.iter().map(|s| s.0).sum::<usize>(), 30);
        assert_eq!(steps.iter().filter(|s| s.1).count(), 3);
    }
}
