//! A history in revision order under an unpadded layout (`v9` before `v10`, which the key
//! order does not give): a source of the read loop like any other, whose one response is
//! every revision of the item, sorted by slot.

use super::Prepared;
use crate::read::pager::{Paged, Response, Responses, Source, Tally};
use crate::schema::history::HistoryLayout;
use crate::{Error, Item};

/// Where a revision sorts: by slot, then (should the key condition admit another rest's
/// revisions) by sort key, so no two items share a position and a cursor resumes after
/// exactly one.
type SlotPosition = (u64, String);

/// Every revision the query reads, in slot order (descending when reversed), after the
/// revision of a cursor's key: read in full (every response; a `max_pages` is not
/// applied) on the loop's first request, and handed to it as one response. The read
/// loop then keeps what it wants of it and continues after the last item it kept when
/// more follow, as it does in any response; what the requests cost is counted
/// request by request.
pub(super) struct SlotOrder<'a, S: ?Sized> {
    paged: Paged<'a, S>,
    layout: &'static HistoryLayout,
    sk: Option<&'static str>,
    prepared: &'a Prepared,
    /// `Limit` of every request: the page size (none: DynamoDB's own).
    limit: Option<i32>,
    after: Option<SlotPosition>,
    reverse: bool,
    /// The responses read (their items handed on), for what they cost.
    read: Vec<Response>,
    done: bool,
    next: Option<Item>,
}

impl<'a, S: Source + ?Sized> SlotOrder<'a, S> {
    /// The revisions `source` returns in slot order after the revision of `start` (a
    /// cursor's key), `sk` naming the sort key; `None` when `start` is no revision under
    /// `layout`.
    pub(super) fn after(
        source: &'a S,
        prepared: &'a Prepared,
        (layout, sk): (&'static HistoryLayout, Option<&'static str>),
        page_size: Option<usize>,
        reverse: bool,
        start: Option<Item>,
    ) -> Option<Self> {
        let after = match &start {
            Some(key) => Some(position_of(layout, sk, key)?),
            None => None,
        };
        Some(SlotOrder {
            paged: Paged::after(source, None),
            layout,
            sk,
            prepared,
            limit: crate::read::pager::first_limit(page_size, None),
            after,
            reverse,
            read: Vec::new(),
            done: false,
            next: None,
        })
    }

    /// Every revision, sorted, after the cursor's.
    async fn sorted(&mut self) -> Result<Vec<Item>, Error> {
        let mut revisions: Vec<(SlotPosition, Item)> = Vec::new();
        while let Some(response) = self.paged.next(self.limit).await {
            let mut response = response?;
            for item in std::mem::take(&mut response.items) {
                // A decoded revision's key parses (its decoding checks it).
                if !self.prepared.admits(&item) {
                    continue;
                }
                if let Some(position) = position_of(self.layout, self.sk, &item) {
                    revisions.push((position, item));
                }
            }
            self.read.push(response);
        }
        revisions.sort_by(|(a, _), (b, _)| a.cmp(b));
        if self.reverse {
            revisions.reverse();
        }
        let reverse = self.reverse;
        revisions.retain(|(position, _)| match &self.after {
            Some(a) if reverse => position < a,
            Some(a) => position > a,
            None => true,
        });
        Ok(revisions.into_iter().map(|(_, item)| item).collect())
    }
}

fn position_of(
    layout: &HistoryLayout,
    sk: Option<&'static str>,
    item: &Item,
) -> Option<SlotPosition> {
    let sk = sk.and_then(|a| item.get(a)).and_then(|v| v.as_s().ok())?;
    layout.parse(sk).map(|(slot, _)| (slot, sk.clone()))
}

impl<S: Source + ?Sized> Responses for SlotOrder<'_, S> {
    async fn next(&mut self, _limit: Option<i32>) -> Option<Result<Response, Error>> {
        if std::mem::replace(&mut self.done, true) {
            return None;
        }
        Some(self.sorted().await.map(|items| Response {
            items,
            ..Response::default()
        }))
    }

    fn count(&self, _response: &Response, tally: &mut Tally) {
        for response in &self.read {
            response.count_in(tally);
        }
    }

    fn done(&self) -> bool {
        self.done
    }

    fn stop_after(&mut self, key: Item) {
        self.next = Some(key);
    }

    fn into_next(self) -> Option<Item> {
        self.next
    }
}
