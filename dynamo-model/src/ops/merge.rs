//! One read merged from many sorted sources: the partitions of a sharded key (a
//! [`ScatterQuery`](super::ScatterQuery)), and in the same way the tables of a time series
//! queried over a range of periods. Each source is read page by page through a
//! [`PageSource`], concurrently and no further than the merge needs, and the items of all
//! of them come out in one order: the order DynamoDB gives the items of one partition.
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
//! A source is read when it must be, and ahead of time (so its next page is there when
//! the merge reaches it) while:
//! - no request of it is in flight, and its buffer holds items of its latest page only (so
//!   a source buffers at most two pages);
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

use super::pager::{PageRequest, PageSource, RawPage};
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
    /// The DynamoDB operation behind the pages, for errors.
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
    /// The number of the page it came in (counted per source, from 1).
    page: u64,
    value: Result<T, Error>,
}

/// One source's state.
struct Source<T> {
    pages: Arc<dyn PageSource>,
    buffer: VecDeque<Entry<T>>,
    /// The position right before the buffer's first item.
    before_head: Position,
    /// Where the next request starts.
    next: Position,
    /// Every item the source returns from now on is at or after this sort key (in the
    /// read's direction); `None` while unknown.
    bound: Option<SortValue>,
    in_flight: bool,
    /// Pages arrived.
    arrived: u64,
    requests: usize,
    /// The `Limit` of the last request.
    last_limit: Option<usize>,
    /// A larger `Limit`, after a filter dropped items of a page.
    grown: Option<usize>,
    /// Nothing the source has not read can be among the items still wanted (a limit).
    out_of_reach: bool,
}

/// A read merged from many sources; see the [module docs](self).
pub(crate) struct Merge<T> {
    settings: Settings,
    sources: Vec<Source<T>>,
    tasks: JoinSet<(usize, Result<RawPage, Error>)>,
    runtime: tokio::runtime::Handle,
    keep: Keep<T>,
    /// A failure to report before anything else.
    failed: Option<Error>,
    /// Whether a request may be startable (something changed since the last look).
    dirty: bool,
    /// Read capacity consumed by the pages that arrived, as DynamoDB reported it.
    pub(crate) consumed: f64,
    /// What the items of the pages that arrived cost by DynamoDB's rules.
    pub(crate) estimated: f64,
    /// The requests whose pages arrived, and DynamoDB's counts of them.
    pub(crate) counts: super::pager::Counts,
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
    /// A merged read of `sources`, each from its position.
    ///
    /// Its requests run as tasks of the current Tokio runtime (the SDK's default
    /// client needs one too): outside one, this is refused.
    pub(crate) fn new(
        sources: Vec<(Arc<dyn PageSource>, Position)>,
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
            .map(|(pages, position)| Source {
                pages,
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
            consumed: 0.0,
            estimated: 0.0,
            counts: super::pager::Counts::default(),
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
        let startable = |s: &Source<T>| {
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
                    !candidates.contains(i) && s.buffer.front().is_none_or(|e| e.page == s.arrived)
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
        let start = match &s.next {
            Position::After(key) => Some(key.clone()),
            Position::Start | Position::Done => None,
        };
        s.in_flight = true;
        s.requests += 1;
        s.last_limit = limit;
        let pages = Arc::clone(&s.pages);
        let request = PageRequest {
            segment: None,
            start,
            limit: limit.map(|l| l.clamp(1, i32::MAX as usize) as i32),
        };
        // The request's span is a child of the operation's, whichever thread runs it.
        let task = async move { (i, pages.fetch(request).await) };
        self.tasks.spawn_on(
            crate::trace::Instrument::instrument(task, crate::trace::current()),
            &self.runtime,
        );
    }

    fn arrive(&mut self, done: Result<(usize, Result<RawPage, Error>), tokio::task::JoinError>) {
        self.dirty = true;
        let (i, page) = match done {
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
            consumed,
            estimated,
            counts,
            ..
        } = self;
        let s = &mut sources[i];
        s.in_flight = false;
        let page = match page {
            Ok(page) => page,
            Err(e) => {
                *failed = Some(e);
                return;
            }
        };
        *consumed += page.consumed;
        *estimated += page.estimated;
        counts.add(page.items.len(), page.evaluated);
        if s.buffer.is_empty() {
            s.before_head = s.next.clone();
        }
        s.arrived += 1;
        let returned = page.items.len();
        for item in page.items {
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
                page: s.arrived,
                value,
            });
        }
        match page.last_key {
            Some(last) => {
                if let Some(sort) = SortValue::of(&last, &settings.sort_names) {
                    s.bound = Some(sort);
                }
                s.next = Position::After(last);
            }
            None => s.next = Position::Done,
        }
        // A filter dropped items: ask for more per request next time, up to 1,000.
        if returned < page.evaluated {
            s.grown = s.last_limit.map(|l| (l * 2).min(1000));
        }
    }

    fn pop(&mut self, i: usize) -> Option<Result<T, Error>> {
        let s = &mut self.sources[i];
        let entry = s.buffer.pop_front()?;
        // The source's buffer now holds its latest page only, or nothing: it may read.
        if s.buffer.front().is_none_or(|next| next.page != entry.page) {
            self.dirty = true;
        }
        s.before_head = Position::After(entry.key);
        Some(entry.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::BoxFuture;
    use proptest::prelude::*;
    use std::sync::Mutex;
    use std::time::Duration;

    /// How the fake sources' items are keyed.
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Shape {
        /// One string attribute.
        Str,
        /// One number attribute.
        Num,
        /// A number, then a string (a multi-attribute key).
        Pair,
    }

    /// The reference order of a key: what DynamoDB's order is for the shape.
    type RefKey = (i64, String);

    fn sort_names(shape: Shape) -> Vec<&'static str> {
        match shape {
            Shape::Str => vec!["S"],
            Shape::Num => vec!["N"],
            Shape::Pair => vec!["N", "S"],
        }
    }

    fn reference_key(shape: Shape, (n, s): &RefKey) -> RefKey {
        match shape {
            Shape::Str => (0, s.clone()),
            Shape::Num => (*n, String::new()),
            Shape::Pair => (*n, s.clone()),
        }
    }

    /// A sorted partition: its items (by reference key), which pass the server-side
    /// filter, at most `max_page` items read per request (DynamoDB's 1 MB), and a delay
    /// per request so that responses arrive in shuffled order.
    struct Fake {
        id: usize,
        shape: Shape,
        keys: Vec<RefKey>,
        passes: Vec<bool>,
        reverse: bool,
        max_page: usize,
        delays: Vec<u64>,
        /// Each request's `Limit` and how many items the source had read before it.
        requests: Mutex<Vec<(Option<i32>, usize)>>,
        fail_at: Option<usize>,
    }

    fn n(i: usize) -> AttributeValue {
        AttributeValue::N(i.to_string())
    }

    impl Fake {
        fn item(&self, i: usize) -> Item {
            let (num, s) = &self.keys[i];
            let mut item = Item::from([("P".to_owned(), n(self.id)), ("I".to_owned(), n(i))]);
            if self.shape != Shape::Str {
                item.insert("N".into(), AttributeValue::N(num.to_string()));
            }
            if self.shape != Shape::Num {
                item.insert("S".into(), AttributeValue::S(s.clone()));
            }
            item
        }

        /// The indices in read order.
        fn order(&self) -> Vec<usize> {
            let mut order: Vec<usize> = (0..self.keys.len()).collect();
            if self.reverse {
                order.reverse();
            }
            order
        }
    }

    impl PageSource for Fake {
        fn fetch(&self, request: PageRequest) -> BoxFuture<'_, Result<RawPage, Error>> {
            let order = self.order();
            let from = match &request.start {
                None => 0,
                Some(key) => {
                    let at: usize = key["I"].as_n().unwrap().parse().unwrap();
                    order.iter().position(|&i| i == at).unwrap() + 1
                }
            };
            let number = {
                let mut requests = self.requests.lock().unwrap_or_else(|e| e.into_inner());
                requests.push((request.limit, from));
                requests.len()
            };
            let limit = request.limit.map_or(usize::MAX, |l| l as usize);
            let to = from
                .saturating_add(limit.min(self.max_page))
                .min(order.len());
            let read = &order[from..to];
            let items = read
                .iter()
                .filter(|&&i| self.passes[i])
                .map(|&i| self.item(i))
                .collect();
            let last_key = (to < order.len()).then(|| {
                let mut key = self.item(order[to - 1]);
                key.remove("P");
                key.insert("P".into(), n(self.id));
                key
            });
            let delay = self.delays[number % self.delays.len()];
            let fail = self.fail_at == Some(number);
            let evaluated = read.len();
            Box::pin(async move {
                tokio::time::sleep(Duration::from_millis(delay)).await;
                if fail {
                    return Err(Error::UnexpectedResponse {
                        entity: "Fake",
                        operation: "Query",
                        message: "injected".into(),
                    });
                }
                Ok(RawPage {
                    evaluated,
                    items,
                    last_key,
                    consumed: 0.5,
                    estimated: 0.5,
                })
            })
        }
    }

    /// One read's sources and what they hold.
    #[derive(Debug, Clone)]
    struct Case {
        shape: Shape,
        /// Per source: its items' keys (sorted), whether each passes the filter.
        sources: Vec<Vec<(RefKey, bool)>>,
        reverse: bool,
        page_size: Option<usize>,
        max_page: usize,
        concurrency: usize,
        delays: Vec<u64>,
        /// Items whose index is a multiple of this are dropped client-side (`keep`).
        client_drop: usize,
    }

    impl Case {
        fn fakes(&self) -> Vec<Arc<Fake>> {
            self.sources
                .iter()
                .enumerate()
                .map(|(id, items)| {
                    Arc::new(Fake {
                        id,
                        shape: self.shape,
                        keys: items.iter().map(|(k, _)| k.clone()).collect(),
                        passes: items.iter().map(|(_, p)| *p).collect(),
                        reverse: self.reverse,
                        max_page: self.max_page,
                        delays: self
                            .delays
                            .iter()
                            .map(|d| d * (id as u64 % 3 + 1))
                            .collect(),
                        requests: Mutex::new(Vec::new()),
                        fail_at: None,
                    })
                })
                .collect()
        }

        /// The merged sequence: `(source, index)` in DynamoDB's order, ties by source.
        fn reference(&self) -> Vec<(usize, usize)> {
            let mut all: Vec<(RefKey, usize, usize)> = Vec::new();
            for (p, items) in self.sources.iter().enumerate() {
                for (i, (key, passes)) in items.iter().enumerate() {
                    if *passes && i % self.client_drop != self.client_drop - 1 {
                        all.push((reference_key(self.shape, key), p, i));
                    }
                }
            }
            all.sort();
            if self.reverse {
                all.reverse();
            }
            all.into_iter().map(|(_, p, i)| (p, i)).collect()
        }

        fn merge(
            &self,
            fakes: &[Arc<Fake>],
            positions: Vec<Position>,
            requests_per_source: Option<usize>,
        ) -> Merge<(usize, usize)> {
            let drop = self.client_drop;
            let keep: Keep<(usize, usize)> = Box::new(move |item: Item| {
                let number = |a: &str| -> usize { item[a].as_n().unwrap().parse().unwrap() };
                let (p, i) = (number("P"), number("I"));
                Ok((i % drop != drop - 1).then_some((p, i)))
            });
            let settings = Settings {
                target: "Fake",
                operation: "Query",
                sort_names: sort_names(self.shape),
                cursor_names: vec!["P", "I", "N", "S"],
                reverse: self.reverse,
                page_size: self.page_size,
                concurrency: self.concurrency,
                requests_per_source,
            };
            let sources = fakes
                .iter()
                .map(|f| Arc::clone(f) as Arc<dyn PageSource>)
                .zip(positions)
                .collect();
            Merge::new(sources, settings, keep).expect("inside a runtime")
        }
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a runtime")
    }

    /// Reads up to `limit` items (all without one) from `positions`.
    async fn read(merge: &mut Merge<(usize, usize)>, limit: Option<usize>) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        while limit.is_none_or(|l| out.len() < l) {
            match merge.next(limit.map(|l| l - out.len())).await {
                Step::Item(item) => out.push(item.expect("no failure injected")),
                Step::End | Step::Stopped => break,
            }
        }
        out
    }

    fn shape() -> impl Strategy<Value = Shape> {
        prop_oneof![Just(Shape::Str), Just(Shape::Num), Just(Shape::Pair)]
    }

    /// Up to 8 sources of up to 25 items with keys from small ranges, so that equal keys
    /// occur across sources and, for the pair shape, within one.
    fn case() -> impl Strategy<Value = Case> {
        let key = (-4i64..4, "[ab]{0,2}|é|z");
        let source = prop::collection::vec((key, prop::bool::weighted(0.8)), 0..25);
        (
            shape(),
            prop::collection::vec(source, 1..9),
            any::<bool>(),
            prop::option::of(1usize..7),
            1usize..9,
            1usize..10,
            prop::collection::vec(0u64..20, 1..5),
            2usize..6,
        )
            .prop_map(
                |(shape, mut sources, reverse, page_size, max_page, concurrency, delays, drop)| {
                    for items in &mut sources {
                        items.sort_by(|a, b| {
                            reference_key(shape, &a.0).cmp(&reference_key(shape, &b.0))
                        });
                        // A partition's sort keys are unique (except on an index): keep
                        // duplicates only for the pair shape, standing for an index.
                        if shape != Shape::Pair {
                            items.dedup_by(|a, b| {
                                reference_key(shape, &a.0) == reference_key(shape, &b.0)
                            });
                        }
                    }
                    Case {
                        shape,
                        sources,
                        reverse,
                        page_size,
                        max_page,
                        concurrency,
                        delays,
                        client_drop: drop,
                    }
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        /// The whole read is the reference sequence, whatever the page sizes, the order in
        /// which responses arrive and the concurrency.
        #[test]
        fn the_merge_is_the_sorted_union_of_the_sources(case in case()) {
            let fakes = case.fakes();
            let got = runtime().block_on(async {
                let mut merge = case.merge(&fakes, vec![Position::Start; fakes.len()], None);
                let got = read(&mut merge, None).await;
                prop_assert!(merge.exhausted());
                Ok(got)
            })?;
            prop_assert_eq!(got, case.reference());
        }

        /// A limit returns the first items of the reference, and no source asks for more
        /// items than could still be needed from it: without a filter or a page size, a
        /// request's `Limit` and the items its source read before add up to at most the
        /// limit.
        #[test]
        fn a_limit_returns_the_first_items_and_asks_for_no_more_than_needed(
            case in case(),
            limit in 1usize..30,
        ) {
            let mut case = case;
            case.page_size = None;
            for items in &mut case.sources {
                for (_, passes) in items.iter_mut() {
                    *passes = true;
                }
            }
            case.client_drop = usize::MAX;
            let fakes = case.fakes();
            let got = runtime().block_on(async {
                let mut merge = case.merge(&fakes, vec![Position::Start; fakes.len()], None);
                read(&mut merge, Some(limit)).await
            });
            let expected: Vec<_> = case.reference().into_iter().take(limit).collect();
            prop_assert_eq!(got, expected);
            for fake in &fakes {
                for (asked, read_before) in fake.requests.lock().unwrap().iter() {
                    let asked = asked.expect("a limit asks for a number of items") as usize;
                    prop_assert!(
                        asked + read_before <= limit,
                        "source {} asked for {asked} after reading {read_before}, limit {limit}",
                        fake.id
                    );
                }
            }
        }

        /// Page after page, each merge starting where the last one stood, gives exactly the
        /// reference sequence: with a limit, and without one (one request per source and
        /// page).
        #[test]
        fn pages_from_positions_give_the_reference_without_loss_or_duplicates(
            case in case(),
            limit in prop::option::of(1usize..7),
        ) {
            let fakes = case.fakes();
            let got = runtime().block_on(async {
                let mut positions = vec![Position::Start; fakes.len()];
                let mut got = Vec::new();
                let requests = || -> Vec<usize> {
                    fakes.iter().map(|f| f.requests.lock().unwrap().len()).collect()
                };
                for _ in 0..1000 {
                    let before = requests();
                    let mut merge = case.merge(&fakes, positions, limit.is_none().then_some(1));
                    let page = read(&mut merge, limit).await;
                    match limit {
                        Some(l) => prop_assert!(page.len() <= l),
                        None => {
                            for (b, a) in before.iter().zip(requests()) {
                                prop_assert!(a - b <= 1, "a page without a limit reads a source once");
                            }
                        }
                    }
                    got.extend(page);
                    if merge.exhausted() {
                        return Ok(got);
                    }
                    positions = merge.positions();
                }
                Err(TestCaseError::fail("more than 1000 pages"))
            })?;
            prop_assert_eq!(got, case.reference());
        }
    }

    fn skewed() -> Case {
        // Source 0 holds the 50 smallest keys; sources 1..8 interleave above them.
        let mut sources = vec![
            (0..50)
                .map(|i| ((i, String::new()), true))
                .collect::<Vec<_>>(),
        ];
        for p in 1..8 {
            sources.push(
                (0..50)
                    .map(|i| ((1000 + 7 * i + p, String::new()), true))
                    .collect(),
            );
        }
        Case {
            shape: Shape::Num,
            sources,
            reverse: false,
            page_size: Some(5),
            max_page: usize::MAX,
            concurrency: 16,
            delays: vec![1],
            client_drop: usize::MAX,
        }
    }

    #[test]
    fn a_source_whose_next_item_cannot_be_among_the_limit_is_not_read_again() {
        let case = skewed();
        let fakes = case.fakes();
        let got = runtime().block_on(async {
            let mut merge = case.merge(&fakes, vec![Position::Start; fakes.len()], None);
            read(&mut merge, Some(20)).await
        });
        assert_eq!(got, (0..20).map(|i| (0, i)).collect::<Vec<_>>());
        let requests: Vec<usize> = fakes
            .iter()
            .map(|f| f.requests.lock().unwrap().len())
            .collect();
        // Source 0: the four pages of 5 that hold the 20 items; every other source: its
        // first page only (its items come after 35 others already read).
        assert_eq!(requests, [4, 1, 1, 1, 1, 1, 1, 1]);
    }

    #[test]
    fn without_a_limit_each_source_reads_ahead_while_the_merge_returns_items() {
        // 8 sources of 3 pages each.
        let mut case = skewed();
        case.sources.truncate(8);
        for items in &mut case.sources {
            items.truncate(15);
        }
        case.delays = vec![10];
        let fakes = case.fakes();
        let rt = runtime();
        let elapsed = rt.block_on(async {
            let started = tokio::time::Instant::now();
            let mut merge = case.merge(&fakes, vec![Position::Start; fakes.len()], None);
            let got = read(&mut merge, None).await;
            assert_eq!(got, case.reference());
            started.elapsed()
        });
        // The fake's delays are 10, 20 or 30 ms by source: 3 rounds of the slowest is
        // 90 ms. Reading a source only when the merge waits for it takes 330 ms.
        assert!(elapsed <= Duration::from_millis(100), "{elapsed:?}");
    }

    #[test]
    fn a_failed_request_ends_the_read_with_its_error() {
        let case = skewed();
        let mut fakes = case.fakes();
        if let Some(fake) = Arc::get_mut(&mut fakes[3]) {
            fake.fail_at = Some(1);
        }
        runtime().block_on(async {
            let mut merge = case.merge(&fakes, vec![Position::Start; fakes.len()], None);
            loop {
                match merge.next(None).await {
                    Step::Item(Ok(_)) => {}
                    Step::Item(Err(e)) => {
                        assert!(e.to_string().contains("injected"), "{e}");
                        break;
                    }
                    other => panic!("the read ended without its error: {other:?}"),
                }
            }
        });
    }

    #[test]
    fn an_item_without_its_sort_key_is_an_unexpected_response() {
        let mut case = skewed();
        case.shape = Shape::Str; // the fake writes "N", the merge looks for "S"
        let fakes = case.fakes();
        let mut wrong = case.clone();
        wrong.shape = Shape::Num;
        let fakes_num = wrong.fakes();
        runtime().block_on(async {
            let mut merge = case.merge(&fakes_num, vec![Position::Start; fakes.len()], None);
            match merge.next(None).await {
                Step::Item(Err(Error::UnexpectedResponse { message, .. })) => {
                    assert!(message.contains("sort-key"), "{message}")
                }
                other => panic!("expected an unexpected response, got {other:?}"),
            }
        });
    }

    #[test]
    fn outside_a_tokio_runtime_a_merge_is_refused() {
        let case = skewed();
        let fakes = case.fakes();
        let keep: Keep<()> = Box::new(|_| Ok(None));
        let settings = Settings {
            target: "Fake",
            operation: "Query",
            sort_names: vec!["N"],
            cursor_names: vec![],
            reverse: false,
            page_size: None,
            concurrency: 1,
            requests_per_source: None,
        };
        let sources = fakes
            .iter()
            .map(|f| (Arc::clone(f) as Arc<dyn PageSource>, Position::Start))
            .collect();
        match Merge::new(sources, settings, keep) {
            Err(Error::Validation { reason, .. }) => {
                assert_eq!(reason, crate::ValidationReason::InvalidOption)
            }
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("a merge outside a runtime"),
        }
    }

    #[test]
    fn numbers_compare_by_value_in_every_form_dynamodb_accepts() {
        let ascending = [
            "-1e126", "-100", "-9.5", "-1", "-0.001", "0", "1e-130", "0.0001", "0.5", "1", "1.5",
            "9.999", "10", "99", "100", "1e126",
        ];
        for (i, a) in ascending.iter().enumerate() {
            for (j, b) in ascending.iter().enumerate() {
                assert_eq!(compare_numbers(a, b), i.cmp(&j), "{a} vs {b}");
            }
        }
        for equal in [
            ["1", "1.0"],
            ["1", "10e-1"],
            ["100", "1E2"],
            ["0", "-0"],
            ["0", "0.000"],
            ["-2.5", "-25e-1"],
            ["7", "+7"],
            ["0.5", ".5"],
        ] {
            assert_eq!(
                compare_numbers(equal[0], equal[1]),
                Ordering::Equal,
                "{equal:?}"
            );
        }
        // Text that is not a number sorts after every number, and never panics.
        for text in [
            "",
            "-",
            ".",
            "e5",
            "1e",
            "1.2.3",
            "abc",
            "1e99999999999999999999",
        ] {
            assert_eq!(compare_numbers("5", text), Ordering::Less, "{text:?}");
        }
    }

    proptest! {
        #[test]
        fn numbers_compare_like_integers_whatever_their_form(
            a in any::<i64>(),
            b in any::<i64>(),
            shift_a in 0u32..5,
            shift_b in 0u32..5,
        ) {
            // `a` written as a × 10^shift × 10^-shift, e.g. 12 as "1200e-2".
            let form = |n: i64, shift: u32| format!("{}e-{shift}", i128::from(n) * 10i128.pow(shift));
            prop_assert_eq!(compare_numbers(&form(a, shift_a), &form(b, shift_b)), a.cmp(&b));
            prop_assert_eq!(compare_numbers(&a.to_string(), &b.to_string()), a.cmp(&b));
        }

        #[test]
        fn numbers_with_fractions_compare_like_their_values(a in -1e6f64..1e6, b in -1e6f64..1e6) {
            let (x, y) = (format!("{a:.3}"), format!("{b:.3}"));
            let (xv, yv): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
            prop_assert_eq!(compare_numbers(&x, &y), xv.partial_cmp(&yv).unwrap());
        }

        #[test]
        fn comparing_arbitrary_text_as_numbers_never_panics(a in "\\PC{0,12}", b in "[-+0-9.eE]{0,12}") {
            let _ = compare_numbers(&a, &b);
            prop_assert_eq!(compare_numbers(&b, &b), Ordering::Equal);
        }
    }
}
