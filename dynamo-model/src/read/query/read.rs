//! Reading a query: its responses collected through the read loop (a history in revision
//! order from its own source, sorted by slot), and `one`, `all`, `page`, `stream` and
//! `hydrate`.

use super::slots::SlotOrder;
use super::{Prepared, Query, QuerySource};
use crate::collection::Target;
use crate::cursor::{self, Cursor};
use crate::keyspace::sort::KeySpace;
use crate::read::pager::{self, Collected};
use crate::request::page::{Page, decode_target};
use crate::{Db, Entity, Error, Item, Key, Table};
use futures_util::stream::{self, Stream};
use std::collections::VecDeque;

impl<T: Target, K: KeySpace> Query<T, K> {
    fn start_key(
        &self,
        prepared: &Prepared,
        cursor: Option<&Cursor>,
    ) -> Result<Option<Item>, Error> {
        let Some(cursor) = cursor else {
            return Ok(None);
        };
        let key =
            cursor::decode(cursor, prepared.fingerprint, self.db.cursor_secret()).map_err(|e| {
                Error::Cursor {
                    target: T::NAME,
                    reason: e,
                }
            })?;
        // Even a well-formed cursor must stay in the queried partition.
        if !prepared
            .pk_check
            .iter()
            .all(|(attr, v)| key.get(*attr) == Some(v))
        {
            return Err(Error::Cursor {
                target: T::NAME,
                reason: cursor::CursorError::WrongQuery,
            });
        }
        Ok(Some(key))
    }

    /// How the read loop reads `source`: at most `max_requests` requests.
    fn loop_reading<'a>(
        &self,
        source: &'a QuerySource<T::Table>,
        max_requests: Option<usize>,
    ) -> pager::Reading<'a> {
        pager::Reading {
            page_size: self.page_size,
            max_requests,
            cursor_names: &source.prepared.cursor_names,
        }
    }

    /// Reads until `want` items matched (or the results end, or `max_pages`), starting at
    /// `start`, through the one read loop. `one_request` stops after one request when no
    /// `want` is given. A history in revision order is read from its own source, every
    /// revision sorted by slot ([`SlotOrder`]).
    async fn collect(
        &self,
        source: &QuerySource<T::Table>,
        start: Option<Item>,
        want: Option<usize>,
        one_request: bool,
    ) -> Result<Collected<T>, Error> {
        let unknown = self.unknown;
        let keep = |item: Item| {
            if !source.prepared.admits(&item) {
                return Ok(None);
            }
            decode_target(item, unknown, self.db.keys())
        };
        let Some(layout) = self.by_slot else {
            let reading = self.loop_reading(source, self.max_pages);
            return pager::collect(source, reading, start, want, one_request, keep).await;
        };
        let sk = <T::Table as Table>::SCHEMA.sk.map(|a| a.name);
        let sorted = SlotOrder::after(
            source,
            &source.prepared,
            (layout, sk),
            self.page_size,
            self.reverse,
            start,
        )
        .ok_or(Error::Cursor {
            target: T::NAME,
            reason: cursor::CursorError::WrongQuery,
        })?;
        let reading = self.loop_reading(source, None);
        pager::read(sorted, reading, want, one_request, keep).await
    }

    fn make_page(&self, collected: Collected<T>, prepared: &Prepared) -> Page<T> {
        collected.into_page(prepared.fingerprint, self.db.cursor_secret())
    }

    /// The only matching item, or `None` when nothing matches; [`Error::NotUnique`] when
    /// more than one does. For reads that expect at most one item, such as a user by a
    /// unique email through an index (`db.query(User::by_email_partition(email)).one()`):
    /// a second match is reported, never silently dropped. Reads until two matching items
    /// are found or the results end (a `limit` is ignored).
    ///
    /// ```no_run
    /// # use dynamo_model::{Db, Entity, Table};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))] struct App;
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE",
    ///          index(GSI1, pk = "EMAIL#{email}", sk = "USER"))]
    /// struct User { id: String, email: String }
    ///
    /// # async fn demo(db: Db<App>) -> Result<(), dynamo_model::Error> {
    /// let user: Option<User> = db.query(User::gsi1_partition("ann@example.com")).one().await?;
    /// # Ok(()) }
    /// ```
    pub async fn one(mut self) -> Result<Option<T>, Error> {
        let span = self.span();
        self.limit = Some(2);
        crate::request::page::traced_found(span, self.one_untraced()).await
    }

    async fn one_untraced(self) -> Result<Option<T>, Error> {
        let source = self.source()?;
        let schema = &<T::Table as Table>::SCHEMA;
        let mut keys = Vec::with_capacity(2);
        let reading = self.loop_reading(&source, None);
        let unknown = self.unknown;
        let collected = pager::collect(&source, reading, None, Some(2), false, |item| {
            if !source.prepared.admits(&item) {
                return Ok(None);
            }
            let key = crate::schema::describe_item_key(schema, &item);
            let decoded = decode_target(item, unknown, self.db.keys())?;
            if decoded.is_some() {
                keys.push(key.unwrap_or_default());
            }
            Ok(decoded)
        })
        .await?;
        let mut items = collected.items.into_iter();
        match (items.next(), items.next()) {
            (first, None) => Ok(first),
            (Some(_), Some(_)) | (None, Some(_)) => {
                let mut keys = keys.into_iter();
                Err(Error::NotUnique {
                    target: T::NAME,
                    first: keys.next().unwrap_or_default(),
                    second: keys.next().unwrap_or_default(),
                })
            }
        }
    }

    /// The operation span of this query (see [`crate::trace`]).
    pub(in crate::read) fn span(&self) -> crate::trace::Span {
        let span = crate::request::page::read_span(
            "Query",
            self.db.table_name(),
            T::NAME,
            self.consistent,
            (self.page_size, self.limit),
        );
        if let Some(index) = self.index {
            crate::trace::record(&span, "aws.dynamodb.index_name", index.name);
        }
        crate::trace::record(&span, "aws.dynamodb.scan_forward", !self.reverse);
        span
    }

    /// All matching items (at most `limit`), sending as many requests as needed.
    pub async fn all(self) -> Result<Page<T>, Error> {
        crate::request::page::traced_page(self.span(), self.all_untraced()).await
    }

    async fn all_untraced(self) -> Result<Page<T>, Error> {
        let source = self.source()?;
        if self.limit == Some(0) {
            return Ok(Page::empty(None));
        }
        let collected = self.collect(&source, None, self.limit, false).await?;
        Ok(self.make_page(collected, &source.prepared))
    }

    /// One page: up to `limit` matching items (without a limit, those of one DynamoDB response),
    /// starting after `cursor` (from a previous page of the *same* query).
    pub async fn page(self, cursor: Option<&Cursor>) -> Result<Page<T>, Error> {
        crate::request::page::traced_page(self.span(), self.page_untraced(cursor)).await
    }

    async fn page_untraced(self, cursor: Option<&Cursor>) -> Result<Page<T>, Error> {
        let source = self.source()?;
        let prepared = &source.prepared;
        if self.limit == Some(0) {
            // Nothing asked for: stay where we are (a request would skip an item).
            self.start_key(prepared, cursor)?;
            return Ok(Page::empty(cursor.cloned()));
        }
        let start = self.start_key(prepared, cursor)?;
        let collected = self.collect(&source, start, self.limit, true).await?;
        Ok(self.make_page(collected, prepared))
    }

    /// Every matching item (at most `limit`) as a stream, sending requests as it is polled.
    pub fn stream(self) -> impl Stream<Item = Result<T, Error>> + Send + 'static
    where
        T: Send,
    {
        struct State<T: Target, K: KeySpace> {
            query: Query<T, K>,
            source: Option<QuerySource<T::Table>>,
            buffer: VecDeque<T>,
            next: Option<Item>,
            done: bool,
            yielded: usize,
        }
        let span = self.span();
        let state = State {
            query: self,
            source: None,
            buffer: VecDeque::new(),
            next: None,
            done: false,
            yielded: 0,
        };
        let items = stream::unfold(state, |mut s| async move {
            loop {
                if s.query.limit.is_some_and(|l| s.yielded >= l) {
                    return None;
                }
                if let Some(item) = s.buffer.pop_front() {
                    s.yielded += 1;
                    return Some((Ok(item), s));
                }
                if s.done {
                    return None;
                }
                if s.source.is_none() {
                    match s.query.source() {
                        Ok(source) => s.source = Some(source),
                        Err(e) => {
                            s.done = true;
                            return Some((Err(e), s));
                        }
                    }
                }
                let source = s.source.as_ref()?;
                let want = s.query.limit.map(|l| l - s.yielded);
                match s.query.collect(source, s.next.take(), want, true).await {
                    Ok(collected) => {
                        s.buffer.extend(collected.items);
                        s.next = collected.next;
                        s.done = s.next.is_none();
                    }
                    Err(e) => {
                        s.done = true;
                        return Some((Err(e), s));
                    }
                }
            }
        });
        crate::trace::stream(span, items)
    }
}

/// The whole items behind a page of keys, fetched with one batch get and returned in the
/// page's order; keys whose item vanished in between are left out.
pub(in crate::read) async fn hydrate_page<E: Entity>(
    db: &Db<E::Table>,
    consistent: bool,
    keys: Page<Key<E>>,
) -> Result<Page<E>, Error> {
    let mut get = db.batch_get::<E>().keys(keys.items).keep_order();
    if consistent {
        get = get.consistent();
    }
    let mut full = get.send().await?;
    let missing = full.unprocessed.len()
        + full
            .failed
            .iter()
            .map(|(keys, _)| keys.len())
            .sum::<usize>();
    if missing > 0 {
        return Err(Error::Incomplete {
            entity: E::ENTITY_TYPE,
            operation: "BatchGetItem",
            missing,
            source: full.failed.pop().map(|(_, e)| Box::new(e)),
        });
    }
    Ok(Page {
        items: full.items,
        cursor: keys.cursor,
        consumed_capacity: keys.consumed_capacity + full.consumed_capacity,
        estimated_capacity: keys.estimated_capacity + full.estimated_capacity,
        count: keys.count,
        scanned_count: keys.scanned_count,
        requests: keys.requests,
    })
}
