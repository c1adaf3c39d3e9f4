//! Reading segments: the one way a read asks a source for a segment's next response,
//! paced under a read-capacity budget shared by every segment ([`Segment::next`]), and
//! the one way segments are read in parallel under such a budget ([`parallel`]): a scan's
//! responses merged as they arrive, a migration's segments each migrated in turn.

use super::{Ask, Response, Source};
use crate::cursor::Position;
use crate::{Error, Item};
use futures_util::stream::{self, Stream};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;
use tokio::time::Instant;

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

/// Where one segment (or partition) of a read stands, and how its next response is
/// asked for.
#[derive(Debug)]
pub(crate) struct Segment {
    /// `(segment, total segments)` of a parallel scan.
    segment: Option<(u32, u32)>,
    at: Position,
}

impl Segment {
    /// Segment `segment` of a read (`None`: the read is not split), from `at`.
    pub(crate) fn new(segment: Option<(u32, u32)>, at: Position) -> Self {
        Segment { segment, at }
    }

    /// Segment `index` of `total` (no segment at all when `total` is 1), from `at`.
    pub(crate) fn of(index: u32, total: u32, at: Position) -> Self {
        Segment::new((total > 1).then_some((index, total)), at)
    }

    /// Where the segment stands: where its next response starts.
    pub(crate) fn position(&self) -> &Position {
        &self.at
    }

    /// Where the segment stands.
    pub(crate) fn into_position(self) -> Position {
        self.at
    }

    /// Whether the segment is read to its end.
    pub(crate) fn is_done(&self) -> bool {
        self.at == Position::Done
    }

    /// Continues after `key` rather than after the last response.
    pub(crate) fn stop_after(&mut self, key: Item) {
        self.at = Position::After(key);
    }

    /// The segment's next response from where it stands, asking for `limit` items, once
    /// the capacity consumed so far fits in `pacer`'s budget (no pacer: at once), its own
    /// cost then recorded there; `None` once the segment is read to its end. The
    /// response's `LastEvaluatedKey` becomes the segment's position (taken out of the
    /// response); after a failure there is nothing more to read.
    pub(crate) async fn next<S: Source + ?Sized>(
        &mut self,
        source: &S,
        limit: Option<i32>,
        pacer: Option<&Mutex<Pacer>>,
    ) -> Option<Result<Response, Error>> {
        let start = match std::mem::replace(&mut self.at, Position::Done) {
            Position::Done => return None,
            Position::Start => None,
            Position::After(key) => Some(key),
        };
        pace(pacer).await;
        let ask = Ask {
            segment: self.segment,
            start,
            limit,
        };
        let mut response = match source.fetch(ask).await {
            Ok(response) => response,
            Err(e) => return Some(Err(e)),
        };
        spend(pacer, response.consumed).await;
        if let Some(key) = response.last_key.take() {
            self.at = Position::After(key);
        }
        Some(Ok(response))
    }
}

/// The one way segments are read in parallel: each segment of `starts` (segment `i` of
/// `starts.len()`, from its position there) read response by response through
/// [`Segment::next`], asking for `page_size` items, all of them paced under one budget of
/// `budget` read units per second (none: nothing waits). Each response goes through
/// `then` (with its segment and the segment's position after it) before that segment asks
/// for its next one, so a segment never reads ahead of what is done with its responses;
/// the segments' results come out in the order they are ready.
///
/// A scan's `all` and `stream` take its responses as they are (`then` hands them on); a
/// migration migrates and checkpoints each segment's responses in `then`, its segments
/// doing that concurrently. After a failed request a segment reads nothing more.
pub(crate) fn parallel<S, F, Fut, X>(
    source: Arc<S>,
    starts: Vec<Position>,
    page_size: Option<usize>,
    budget: Option<f64>,
    then: F,
) -> impl Stream<Item = Result<X, Error>> + Unpin
where
    S: Source + ?Sized,
    F: Fn(usize, &Position, Response) -> Fut + Clone,
    Fut: Future<Output = Result<X, Error>>,
{
    let pacer = budget.map(|b| Arc::new(Mutex::new(Pacer::new(b))));
    let limit = page_size.map(super::clamp);
    let total = u32::try_from(starts.len()).unwrap_or(u32::MAX);
    let segments = starts.into_iter().enumerate().map(move |(i, at)| {
        let segment = Segment::of(i as u32, total, at);
        let (source, pacer, then) = (Arc::clone(&source), pacer.clone(), then.clone());
        Box::pin(stream::unfold(segment, move |mut segment| {
            let (source, pacer, then) = (Arc::clone(&source), pacer.clone(), then.clone());
            async move {
                let step = match segment.next(&*source, limit, pacer.as_deref()).await? {
                    Ok(response) => then(i, segment.position(), response).await,
                    Err(e) => Err(e),
                };
                Some((step, segment))
            }
        }))
    });
    stream::select_all(segments)
}
