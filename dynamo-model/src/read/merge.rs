//! One read merged from many sorted sources: the partitions of a sharded key (a
//! `ScatterQuery`). Each source is read response by response through a [`Source`] (from
//! where it stands, as every read of the crate asks for a response: `pager::Segment`),
//! concurrently and no further than the merge needs, and the items of all of them come
//! out in one order: the order DynamoDB gives the items of one partition.
//!
//! The tables of a time series read over a range of periods (`PeriodTables`, feature
//! `time`) are merged in order too, with nothing to interleave: periods do not overlap,
//! so in the read's order (newest period first) every item of one table comes before
//! every item of the next, and their merge is one table's read after the other's, each
//! table read only once the merge reaches it.
//!
//! # The order
//!
//! DynamoDB returns a partition's items sorted by sort key: strings and binary by their
//! bytes (UTF-8 for strings), numbers by value, a multi-attribute key attribute by
//! attribute, in key order; descending with `ScanIndexForward=false` (Query docs). The
//! merge orders items by `(sort key, source position)`, or by the reverse of that when the
//! read is reversed, so a reversed read is exactly the forward read backwards, and items
//! with equal sort keys in several sources come in the order of their sources.
//!
//! # When an item is next
//!
//! Every source's items arrive in that order. An item at the head of one source's buffer
//! is next once every other source either has a buffered head that comes after it, or is
//! exhausted, or has read past a key that comes after it (its *bound*: the sort key of the
//! last item it read, or of its `LastEvaluatedKey`; whatever it returns later is at or
//! after the bound). Only a source for which none of that holds must be read before the
//! item can come out.
//!
//! # What is read
//!
//! A source is read when it must be, and ahead of time (so its next response is there when
//! the merge reaches it) while:
//! - no request of it is in flight, and its buffer holds items of its latest response only
//!   (so a source buffers at most two responses);
//! - with a limit of `n` more items: fewer than `n` items are known to come before its
//!   next unread item (its own buffered items, and the other sources' buffered items that
//!   come before its bound). Otherwise nothing it has not read yet can be among the `n`
//!   items, and it is not read again. Each request asks (`Limit`) for at most the items
//!   that could still be needed from it;
//! - at most `concurrency` requests are in flight, the sources that must be read first.
//!
//! Requests run as Tokio tasks, so they progress while the caller is busy with the items
//! already returned; dropping the merge aborts them.
//!
//! # Where it stands
//!
//! Each source's [`Position`] is the key right before its first buffered item (after the
//! last item the merge returned from it), or, with nothing buffered, where its next
//! request starts. A cursor of those positions continues the merged sequence exactly:
//! items read but not returned are read again.

use super::pager::{Response, Segment, Source};
use crate::cursor::Position;
use crate::{Error, Item};
use aws_sdk_dynamodb::types::AttributeValue;
use std::cmp::Ordering;
use std::collections::VecDeque;
use std::sync::Arc;
use tokio::task::JoinSet;

/// How a merged read proceeds.
pub(crate) struct Settings {
    /// The target, for errors.
    pub(crate) target: &'static str,
    /// The DynamoDB operation behind the responses, for errors.
    pub(crate) operation: &'static str,
    /// The sort key's attributes in key order (none: every item ties).
    pub(crate) sort_names: Vec<&'static str>,
    /// The attributes of `LastEvaluatedKey`, to continue after an item.
    pub(crate) cursor_names: Vec<&'static str>,
    /// Descending sort-key order.
    pub(crate) reverse: bool,
    /// A fixed `Limit` per request; without one a request asks for what may be needed.
    pub(crate) page_size: Option<usize>,
    /// At most this many requests in flight (at least one).
    pub(crate) concurrency: usize,
    /// At most this many requests per source over the merge's life.
    pub(crate) requests_per_source: Option<usize>,
}

/// What becomes of each item read: `Ok(None)` leaves it out.
pub(crate) type Keep<T> = Box<dyn FnMut(Item) -> Result<Option<T>, Error> + Send>;

/// One step of a merged read.
#[derive(Debug)]
pub(crate) enum Step<T> {
    /// The next item (or the error in its place: a read failed, or the item did not decode).
    Item(Result<T, Error>),
    /// Every source is exhausted.
    End,
    /// The next item needs a request that
    /// [`requests_per_source`](Settings::requests_per_source) does not allow.
    Stopped,
}

/// The values of an item's sort-key attributes, in key order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SortValue(Vec<AttributeValue>);

impl SortValue {
    /// The sort key of `item`, or `None` when it lacks one of the attributes.
    pub(crate) fn of(item: &Item, names: &[&'static str]) -> Option<SortValue> {
        names
            .iter()
            .map(|n| item.get(*n).cloned())
            .collect::<Option<Vec<_>>>()
            .map(SortValue)
    }

    /// DynamoDB's order of sort keys: attribute by attribute, in key order.
    pub(crate) fn compare(&self, other: &SortValue) -> Ordering {
        for (a, b) in self.0.iter().zip(&other.0) {
            match compare_values(a, b) {
                Ordering::Equal => {}
                unequal => return unequal,
            }
        }
        self.0.len().cmp(&other.0.len())
    }
}

/// DynamoDB's order of two key attribute values: strings and binary by their bytes,
/// numbers by value. Key attributes of one key are of one type (the table or index
/// declares it); the order of mixed types is only there to keep the order total.
fn compare_values(a: &AttributeValue, b: &AttributeValue) -> Ordering {
    use AttributeValue::{B, N, S};
    match (a, b) {
        (S(a), S(b)) => a.as_bytes().cmp(b.as_bytes()),
        (N(a), N(b)) => compare_numbers(a, b),
        (B(a), B(b)) => a.as_ref().cmp(b.as_ref()),
        _ => rank(a).cmp(&rank(b)),
    }
}

fn rank(v: &AttributeValue) -> u8 {
    match v {
        AttributeValue::S(_) => 0,
        AttributeValue::N(_) => 1,
        AttributeValue::B(_) => 2,
        _ => 3,
    }
}

/// A DynamoDB number as `0.d₁d₂… × 10^exponent` (digits without leading or trailing
/// zeros; none for zero), so numbers of up to 38 digits and any exponent compare exactly.
#[derive(Debug, PartialEq)]
struct Decimal {
    negative: bool,
    digits: Vec<u8>,
    exponent: i64,
}

impl Decimal {
    /// `[+-]digits[.digits][(e|E)[+-]digits]`, the forms DynamoDB accepts and returns.
    fn parse(text: &str) -> Option<Decimal> {
        let (negative, rest) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        let (mantissa, exponent) = match rest.find(['e', 'E']) {
            Some(at) => (&rest[..at], rest[at + 1..].parse::<i64>().ok()?),
            None => (rest, 0),
        };
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if whole.is_empty() && fraction.is_empty()
            || !whole
                .bytes()
                .chain(fraction.bytes())
                .all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let mut exponent = exponent.checked_add(i64::try_from(whole.len()).ok()?)?;
        let mut digits: Vec<u8> = whole.bytes().chain(fraction.bytes()).collect();
        let leading = digits.iter().take_while(|&&d| d == b'0').count();
        digits.drain(..leading);
        exponent = exponent.checked_sub(i64::try_from(leading).ok()?)?;
        while digits.last() == Some(&b'0') {
            digits.pop();
        }
        if digits.is_empty() {
            return Some(Decimal {
                negative: false,
                digits,
                exponent: 0,
            });
        }
        Some(Decimal {
            negative,
            digits,
            exponent,
        })
    }

    fn sign(&self) -> i8 {
        match (self.digits.is_empty(), self.negative) {
            (true, _) => 0,
            (false, true) => -1,
            (false, false) => 1,
        }
    }
}

/// Numeric order of two DynamoDB numbers; text that is not a number (DynamoDB never
/// returns one) comes after every number, by its bytes.
fn compare_numbers(a: &str, b: &str) -> Ordering {
    match (Decimal::parse(a), Decimal::parse(b)) {
        (Some(x), Some(y)) => {
            let by_sign = x.sign().cmp(&y.sign());
            if by_sign != Ordering::Equal || x.sign() == 0 {
                return by_sign;
            }
            let magnitude = x
                .exponent
                .cmp(&y.exponent)
                .then_with(|| x.digits.cmp(&y.digits));
            if x.negative {
                magnitude.reverse()
            } else {
                magnitude
            }
        }
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.as_bytes().cmp(b.as_bytes()),
    }
}

/// One item read and kept, waiting for its turn.
struct Entry<T> {
    sort: SortValue,
    /// Its `LastEvaluatedKey`-shaped key: where its source continues once it is returned.
    key: Item,
    /// The number of the response it came in (counted per source, from 1).
    response: u64,
    value: Result<T, Error>,
}

/// One source's state in the merge.
struct SourceState<T> {
    source: Arc<dyn Source>,
    buffer: VecDeque<Entry<T>>,
    /// The position right before the buffer's first item.
    before_head: Position,
    /// Where the next request starts.
    next: Position,
    /// Every item the source returns from now on is at or after this sort key (in the
    /// read's direction); `None` while unknown.
    bound: Option<SortValue>,
    in_flight: bool,
    /// Responses arrived.
    arrived: u64,
    requests: usize,
    /// The `Limit` of the last request.
    last_limit: Option<usize>,
    /// A larger `Limit`, after a filter dropped items of a response.
    grown: Option<usize>,
    /// Nothing the source has not read can be among the items still wanted (a limit).
    out_of_reach: bool,
}

/// What a request's task hands back: its source, the source's position after the
/// response, and the response.
type Arrival = (usize, Position, Result<Response, Error>);

/// A read merged from many sources; see the [module docs](self).
pub(crate) struct Merge<T> {
    settings: Settings,
    sources: Vec<SourceState<T>>,
    tasks: JoinSet<Arrival>,
    runtime: tokio::runtime::Handle,
    keep: Keep<T>,
    /// A failure to report before anything else.
    failed: Option<Error>,
    /// Whether a request may be startable (something changed since the last look).
    dirty: bool,
    /// What the responses that arrived cost, and DynamoDB's counts of them.
    pub(crate) tally: super::pager::Tally,
}

/// What the merge can do now.
enum Decision {
    /// Return the head of this source.
    Emit(usize),
    /// Every source is exhausted.
    End,
    /// These sources must be read first.
    Wait(Vec<usize>),
}

impl<T> Merge<T> {
    /// A merged read of `sources`, each from its position in `positions`.
    ///
    /// Its requests run as tasks of the current Tokio runtime (the SDK's default
    /// client needs one too): outside one, this is refused.
    pub(crate) fn new<S: Source>(
        sources: impl IntoIterator<Item = Arc<S>>,
        positions: Vec<Position>,
        mut settings: Settings,
        keep: Keep<T>,
    ) -> Result<Self, Error> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            Error::invalid_request(
                settings.operation,
                crate::ValidationReason::InvalidOption,
                "a read merged from several partitions sends its requests as Tokio tasks: run it inside a Tokio runtime",
            )
        })?;
        settings.concurrency = settings.concurrency.max(1);
        let sources = sources
            .into_iter()
            .zip(positions)
            .map(|(source, position)| SourceState {
                source: source as Arc<dyn Source>,
                buffer: VecDeque::new(),
                bound: match &position {
                    Position::After(key) => SortValue::of(key, &settings.sort_names),
                    Position::Start | Position::Done => None,
                },
                before_head: position.clone(),
                next: position,
                in_flight: false,
                arrived: 0,
                requests: 0,
                last_limit: None,
                grown: None,
                out_of_reach: false,
            })
            .collect();
        Ok(Merge {
            settings,
            sources,
            tasks: JoinSet::new(),
            runtime,
            keep,
            failed: None,
            dirty: true,
            tally: super::pager::Tally::default(),
        })
    }

    /// The next item in merged order; `want` is how many items the caller still takes,
    /// this one included (`None`: all of them).
    pub(crate) async fn next(&mut self, want: Option<usize>) -> Step<T> {
        loop {
            if let Some(e) = self.failed.take() {
                return Step::Item(Err(e));
            }
            while let Some(done) = self.tasks.try_join_next() {
                self.arrive(done);
            }
            if self.failed.is_some() {
                continue;
            }
            if self.dirty {
                self.start(want);
            }
            match self.decide() {
                Decision::Emit(i) => {
                    if let Some(item) = self.pop(i) {
                        return Step::Item(item);
                    }
                }
                Decision::End => return Step::End,
                Decision::Wait(blockers) => {
                    self.start(want);
                    let cap = self.settings.requests_per_source;
                    let capped = blockers.iter().any(|&i| {
                        let s = &self.sources[i];
                        !s.in_flight && cap.is_some_and(|c| s.requests >= c)
                    });
                    if capped {
                        return Step::Stopped;
                    }
                    match self.tasks.join_next().await {
                        Some(done) => self.arrive(done),
                        // Nothing in flight and nothing startable: cannot happen while a
                        // blocker is neither capped nor in flight; stop rather than spin.
                        None => return Step::Stopped,
                    }
                }
            }
        }
    }

    /// Where each source stands: what a cursor holds.
    pub(crate) fn positions(&self) -> Vec<Position> {
        self.sources
            .iter()
            .map(|s| {
                if s.buffer.is_empty() {
                    s.next.clone()
                } else {
                    s.before_head.clone()
                }
            })
            .collect()
    }

    /// Whether every item of every source has been returned.
    pub(crate) fn exhausted(&self) -> bool {
        self.sources
            .iter()
            .all(|s| s.buffer.is_empty() && s.next == Position::Done)
    }

    /// Whether item `a` of source `i` comes before item `b` of source `j` (`i != j`).
    fn before(&self, i: usize, a: &SortValue, j: usize, b: &SortValue) -> bool {
        let order = a.compare(b).then(i.cmp(&j));
        if self.settings.reverse {
            order == Ordering::Greater
        } else {
            order == Ordering::Less
        }
    }

    fn decide(&self) -> Decision {
        let mut best: Option<(usize, &SortValue)> = None;
        for (i, s) in self.sources.iter().enumerate() {
            if let Some(head) = s.buffer.front()
                && best.is_none_or(|(j, b)| self.before(i, &head.sort, j, b))
            {
                best = Some((i, &head.sort));
            }
        }
        let blockers: Vec<usize> = self
            .sources
            .iter()
            .enumerate()
            .filter(|(i, s)| {
                s.buffer.is_empty()
                    && s.next != Position::Done
                    && !matches!((best, &s.bound), (Some((j, head)), Some(bound)) if self.before(j, head, *i, bound))
            })
            .map(|(i, _)| i)
            .collect();
        match (best, blockers.is_empty()) {
            (Some((i, _)), true) => Decision::Emit(i),
            (None, true) => Decision::End,
            (_, false) => Decision::Wait(blockers),
        }
    }

    /// Items known to come before source `i`'s next unread item.
    fn preceding(&self, i: usize) -> usize {
        let own = self.sources[i].buffer.len();
        let Some(bound) = &self.sources[i].bound else {
            return own;
        };
        let others: usize = self
            .sources
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            // A source's buffer is in read order, so the items before the bound lead it.
            .map(|(j, s)| {
                s.buffer
                    .partition_point(|e| self.before(j, &e.sort, i, bound))
            })
            .sum();
        own + others
    }

    /// Starts the requests that must be made now (for the next item), then those that
    /// may be needed later (reads ahead).
    fn start(&mut self, want: Option<usize>) {
        self.dirty = false;
        let mut free = self.settings.concurrency.saturating_sub(self.tasks.len());
        if free == 0 {
            // The next arrival frees a place, and looks again.
            return;
        }
        let cap = self.settings.requests_per_source;
        let startable = |s: &SourceState<T>| {
            !s.in_flight
                && !s.out_of_reach
                && s.next != Position::Done
                && cap.is_none_or(|c| s.requests < c)
        };
        let mut candidates: Vec<usize> = match self.decide() {
            Decision::Wait(blockers) => blockers,
            Decision::Emit(_) | Decision::End => Vec::new(),
        };
        // With a limit, reading ahead waits until every source has been read once: a
        // source not read yet may hold every item still wanted.
        let all_known = self
            .sources
            .iter()
            .all(|s| s.bound.is_some() || s.next == Position::Done);
        if want.is_none() || all_known {
            let ahead: Vec<usize> = (0..self.sources.len())
                .filter(|i| {
                    let s = &self.sources[*i];
                    !candidates.contains(i)
                        && s.buffer.front().is_none_or(|e| e.response == s.arrived)
                })
                .collect();
            candidates.extend(ahead);
        }
        for i in candidates {
            if free == 0 {
                // The next arrival frees a place, and looks again.
                break;
            }
            if !startable(&self.sources[i]) {
                continue;
            }
            let needed = match want {
                None => None,
                Some(want) => {
                    let preceding = self.preceding(i);
                    if preceding >= want {
                        // For good: the items still wanted only shrink, and those known
                        // to come first only grow, until the source reads again.
                        self.sources[i].out_of_reach = true;
                        continue;
                    }
                    Some(want - preceding)
                }
            };
            self.fetch(i, needed);
            free -= 1;
        }
    }

    fn fetch(&mut self, i: usize, needed: Option<usize>) {
        let s = &mut self.sources[i];
        let limit = match (self.settings.page_size, needed) {
            (Some(size), _) => Some(size),
            (None, Some(n)) => Some(n.max(s.grown.unwrap_or(0))),
            (None, None) => None,
        };
        // The crate's one way to read a source from where it stands; the task hands the
        // source's new position back with the response.
        let mut segment = Segment::new(None, s.next.clone());
        s.in_flight = true;
        s.requests += 1;
        s.last_limit = limit;
        let source = Arc::clone(&s.source);
        let limit = limit.map(|l| l.clamp(1, i32::MAX as usize) as i32);
        // The request's span is a child of the operation's, whichever thread runs it.
        let task = async move {
            let response = segment.next(&*source, limit, None).await;
            // A source read to its end is never fetched: nothing more to read.
            let response = response.unwrap_or_else(|| Ok(Response::default()));
            (i, segment.into_position(), response)
        };
        self.tasks.spawn_on(
            crate::trace::Instrument::instrument(task, crate::trace::current()),
            &self.runtime,
        );
    }

    fn arrive(&mut self, done: Result<Arrival, tokio::task::JoinError>) {
        self.dirty = true;
        let (i, position, response) = match done {
            Ok(done) => done,
            // A request's task panicked: the panic is the caller's, as if it had run here.
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            // Tasks are aborted only when the merge is dropped.
            Err(_) => return,
        };
        let Merge {
            settings,
            sources,
            keep,
            failed,
            tally,
            ..
        } = self;
        let s = &mut sources[i];
        s.in_flight = false;
        let response = match response {
            Ok(response) => response,
            Err(e) => {
                *failed = Some(e);
                return;
            }
        };
        response.count_in(tally);
        if s.buffer.is_empty() {
            s.before_head = s.next.clone();
        }
        s.arrived += 1;
        let returned = response.items.len();
        for item in response.items {
            let Some(sort) = SortValue::of(&item, &settings.sort_names) else {
                *failed = Some(Error::UnexpectedResponse {
                    entity: settings.target,
                    operation: settings.operation,
                    message: format!(
                        "an item without its sort-key attributes ({})",
                        settings.sort_names.join(", ")
                    ),
                });
                return;
            };
            s.bound = Some(sort.clone());
            let key = super::pager::key_of(&item, &settings.cursor_names);
            let value = match keep(item) {
                Ok(None) => continue,
                Ok(Some(t)) => Ok(t),
                Err(e) => Err(e),
            };
            s.buffer.push_back(Entry {
                sort,
                key,
                response: s.arrived,
                value,
            });
        }
        if let Position::After(last) = &position
            && let Some(sort) = SortValue::of(last, &settings.sort_names)
        {
            s.bound = Some(sort);
        }
        s.next = position;
        // A filter dropped items: ask for more per request next time, up to 1,000.
        if returned < response.evaluated {
            s.grown = s.last_limit.map(|l| (l * 2).min(1000));
        }
    }

    fn pop(&mut self, i: usize) -> Option<Result<T, Error>> {
        let s = &mut self.sources[i];
        let entry = s.buffer.pop_front()?;
        // The source's buffer now holds its latest response only, or nothing: it may read.
        if s.buffer
            .front()
            .is_none_or(|next| next.response != entry.response)
        {
            self.dirty = true;
        }
        s.before_head = Position::After(entry.key);
        Some(entry.value)
    }
}

#[cfg(test)]
mod tests;
