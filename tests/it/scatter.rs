//! Scatter-gather (`db.scatter_query(partitions)`) against DynamoDB Local: the merged read
//! of many partitions is the reference (the items of all of them, sorted as DynamoDB sorts
//! one partition, ties in the order of the partitions) for every sort-key operator, both
//! directions, limits, filters and page after page through its one cursor; its cursor is
//! refused by any other read; a small limit does not read every page; faults and retries
//! change nothing in the result.

use crate::common::mixed::{tick_row, Mixed, Tick};
use crate::common::reference::{on_component, Op};
use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::config::retry::RetryConfig;
use dynamo_model::cursor::CursorError;
use dynamo_model::local::faults::{client_with_faults, FaultKind, Faults};
use dynamo_model::read::ScatterQuery;
use dynamo_model::{
    local, Db, Entity, Error, Item, KeySpace, Page, Table, Target, ValidationReason,
};
use futures_util::TryStreamExt;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "ByRank", pk = ["bucket"], sk = ["rank:N", "word"]),
         ttl = "expires")]
pub struct Shards;

/// An event of run `run` in shard `shard`: a string sort key on the table (`word`, then
/// `id`), a multi-attribute sort key on the index (the number `rank`, then `word`).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Shards, pk = "EV#{run}#{shard}", sk = "AT#{word}#{id}",
         index(ByRank, pk = [bucket], sk = [rank, word]))]
pub struct Ev {
    pub run: u32,
    pub shard: u8,
    pub word: String,
    pub id: u16,
    pub rank: i64,
    /// `{run}-{shard}`: the index partition of the shard.
    pub bucket: String,
    pub tag: u8,
}

/// Another entity of the same partitions, for collections.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Shards, pk = "EV#{run}#{shard}", sk = "NOTE#{word}")]
pub struct Note {
    pub run: u32,
    pub shard: u8,
    pub word: String,
    pub text: String,
}

#[derive(dynamo_model::Collection, Debug, Clone, PartialEq)]
pub enum Timeline {
    Ev(Ev),
    Note(Note),
}

fn ev(run: u32, shard: u8, word: &str, id: u16, rank: i64, tag: u8) -> Ev {
    Ev {
        run,
        shard,
        word: word.into(),
        id,
        rank,
        bucket: format!("{run}-{shard}"),
        tag,
    }
}

/// Shard `shard` of run `run`.
fn part(run: u32, shard: u8) -> dynamo_model::Partition<Ev> {
    Ev::partition(EvPartition { run, shard })
}

/// `(shard, word, id)`: an event's identity.
type Id = (u8, String, u16);

fn ids(items: &[Ev]) -> Vec<Id> {
    items
        .iter()
        .map(|e| (e.shard, e.word.clone(), e.id))
        .collect()
}

/// Every page of `query`, following cursors.
async fn paged<T: Target, K: KeySpace>(
    query: impl Fn() -> ScatterQuery<T, K>,
) -> Result<Vec<T>, Error> {
    let mut out = Vec::new();
    let mut cursor = None;
    for _ in 0..1000 {
        let page = query().page(cursor.as_ref()).await?;
        out.extend(page.items);
        match page.cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(out),
        }
    }
    panic!("more than 1000 pages");
}

/// The reference: `items` sorted as the merge must return them. `key` is the item's
/// position in its partition's order; ties across partitions by the partition's
/// position in `order` (the list given to the scatter query), reversed with `reverse`.
fn reference<S: Ord>(
    items: &[Ev],
    order: &[u8],
    key: impl Fn(&Ev) -> S,
    keep: impl Fn(&Ev) -> bool,
    reverse: bool,
) -> Vec<Id> {
    let position = |shard: u8| order.iter().position(|&s| s == shard);
    let mut kept: Vec<&Ev> = items.iter().filter(|e| keep(e)).collect();
    kept.sort_by(|a, b| {
        key(a)
            .cmp(&key(b))
            .then(position(a.shard).cmp(&position(b.shard)))
    });
    if reverse {
        kept.reverse();
    }
    kept.into_iter()
        .map(|e| (e.shard, e.word.clone(), e.id))
        .collect()
}

// ------------------------------------------------------------------ the property

/// The scatter query `q` with `op` on the table's `word` component.
fn on_word(op: &Op, q: ScatterQuery<Ev>) -> ScatterQuery<Ev> {
    q.sk(on_component!(op, Ev::sk().word()))
}

/// A sort-key operator on the index's number `rank`.
#[derive(Debug, Clone, Copy)]
enum RankOp {
    Eq(i64),
    Lt(i64),
    Le(i64),
    Gt(i64),
    Ge(i64),
    Between(i64, i64),
}

impl RankOp {
    fn holds(&self, r: i64) -> bool {
        match *self {
            RankOp::Eq(v) => r == v,
            RankOp::Lt(v) => r < v,
            RankOp::Le(v) => r <= v,
            RankOp::Gt(v) => r > v,
            RankOp::Ge(v) => r >= v,
            RankOp::Between(a, b) => a <= r && r <= b,
        }
    }
}

/// One case: events over `order.len()` shards (listed in that order).
#[derive(Debug, Clone)]
struct Case {
    order: Vec<u8>,
    events: Vec<(u8, String, u16, i64, u8)>,
    words: [String; 2],
    ranks: [i64; 2],
    tag_below: Option<u8>,
    page_size: usize,
    limit: usize,
}

fn case() -> impl Strategy<Value = Case> {
    (1u8..=8)
        .prop_flat_map(|n| {
            (
                Just((0..n).collect::<Vec<u8>>()).prop_shuffle(),
                prop::collection::vec((0..n, "([ab]|é){1,2}", 0u16..3, -4i64..5, 0u8..4), 0..32),
                ["([ab]|é){0,2}", "([ab]|é){0,2}"],
                [-5i64..6, -5i64..6],
                prop::option::of(1u8..4),
                1usize..5,
                1usize..6,
            )
        })
        .prop_map(
            |(order, events, words, ranks, tag_below, page_size, limit)| Case {
                order,
                events,
                words,
                ranks,
                tag_below,
                page_size,
                limit,
            },
        )
}

async fn check_case(db: &Db<Shards>, run: u32, case: &Case) -> Result<(), TestCaseError> {
    // One item per key, and one (rank, word) per shard (an index orders equal sort keys of
    // one partition in no documented way; across partitions they are the point).
    let mut stored: Vec<Ev> = Vec::new();
    for (shard, word, id, rank, tag) in &case.events {
        let e = ev(run, *shard, word, *id, *rank, *tag);
        if !stored
            .iter()
            .any(|s| s.shard == e.shard && s.word == e.word && (s.rank == e.rank || s.id == e.id))
        {
            stored.push(e);
        }
    }
    if !stored.is_empty() {
        let out = db.batch_write().puts(&stored).await.map_err(fail)?;
        prop_assert_eq!(out.written, stored.len());
    }
    let order = &case.order;
    let tag_ok = |e: &Ev| case.tag_below.is_none_or(|t| e.tag < t);
    let base = || {
        let q = db.scatter_query(order.iter().map(|&s| part(run, s)));
        match case.tag_below {
            Some(t) => q.filter(Ev::fields().tag.lt(t)),
            None => q,
        }
    };
    let table_key = |e: &Ev| (e.word.clone(), e.id);

    // Every operator, in turn by case (two a case), with words that may or may not be
    // stored.
    let [a, b] = case.words.clone();
    let ops = Op::every(&a, &b, &a);
    let turn = run as usize;
    for op in [&ops[turn % 7], &ops[(turn + 3) % 7]] {
        let q = || on_word(op, base());
        let keep = |e: &Ev| op.holds(&e.word) && tag_ok(e);
        let forward = reference(&stored, order, table_key, keep, false);
        let backward = reference(&stored, order, table_key, keep, true);

        let all = q().page_size(case.page_size).all().await.map_err(fail)?;
        prop_assert_eq!(ids(&all.items), forward.clone(), "{:?}", op);
        prop_assert!(all.cursor.is_none());
        let top = q().reverse().limit(case.limit).all().await.map_err(fail)?;
        let expected: Vec<Id> = backward.iter().take(case.limit).cloned().collect();
        prop_assert_eq!(ids(&top.items), expected, "{:?} reversed, limit", op);
        let pages = paged(|| q().limit(case.limit)).await.map_err(fail)?;
        prop_assert_eq!(ids(&pages), forward.clone(), "{:?} pages", op);
        let unlimited = paged(|| q().reverse().page_size(case.page_size))
            .await
            .map_err(fail)?;
        prop_assert_eq!(ids(&unlimited), backward, "{:?} reversed pages", op);
        let streamed: Vec<Ev> = q()
            .limit(case.limit)
            .stream()
            .try_collect()
            .await
            .map_err(fail)?;
        let expected: Vec<Id> = forward.iter().take(case.limit).cloned().collect();
        prop_assert_eq!(ids(&streamed), expected, "{:?} stream", op);
    }

    // The index's sort key: a number, then a string.
    let [x, y] = case.ranks;
    let rank_ops = [
        RankOp::Eq(x),
        RankOp::Lt(x),
        RankOp::Le(x),
        RankOp::Gt(x),
        RankOp::Ge(x),
        RankOp::Between(x.min(y), x.max(y)),
    ];
    let op = rank_ops[turn % 6];
    let on_index = || {
        let q = db.scatter_query(
            order
                .iter()
                .map(|&s| Ev::by_rank_partition(format!("{run}-{s}"))),
        );
        let q = match case.tag_below {
            Some(t) => q.filter(Ev::fields().tag.lt(t)),
            None => q,
        };
        let rank = || Ev::by_rank_sk().rank();
        match op {
            RankOp::Eq(v) => q.sk(rank().eq(v)),
            RankOp::Lt(v) => q.sk(rank().lt(v)),
            RankOp::Le(v) => q.sk(rank().le(v)),
            RankOp::Gt(v) => q.sk(rank().gt(v)),
            RankOp::Ge(v) => q.sk(rank().ge(v)),
            RankOp::Between(a, b) => q.sk(rank().between(a, b)),
        }
    };
    let keep = |e: &Ev| op.holds(e.rank) && tag_ok(e);
    let index_key = |e: &Ev| (e.rank, e.word.clone());
    let forward = reference(&stored, order, index_key, keep, false);
    let backward = reference(&stored, order, index_key, keep, true);
    let all = on_index().all().await.map_err(fail)?;
    prop_assert_eq!(ids(&all.items), forward, "{:?}", op);
    let pages = paged(|| on_index().reverse().limit(case.limit))
        .await
        .map_err(fail)?;
    prop_assert_eq!(ids(&pages), backward, "{:?} reversed pages", op);
    Ok(())
}

#[test]
fn scatter_gather_equals_the_sorted_reference_for_every_operator_direction_limit_and_page(
) -> TestResult {
    let runtime = runtime()?;
    let table = runtime.block_on(local::fresh_table::<Shards>())?;
    let db: Db<Shards> = Db::new(table.client().clone(), table.table_name());
    let runs = AtomicU32::new(0);
    let mut runner = runner(14);
    let outcome = runner.run(&case(), |case| {
        let run = runs.fetch_add(1, Ordering::Relaxed);
        runtime.block_on(check_case(&db, run, &case))
    });
    outcome.map_err(|e| e.to_string().into())
}

// ------------------------------------------------------------------ examples

/// Four shards whose events interleave, with equal sort keys across shards.
async fn four_shards(db: &Db<Shards>, run: u32) -> Result<Vec<Ev>, Error> {
    let mut events = Vec::new();
    for shard in 0..4u8 {
        for i in 0..6u16 {
            let word = ["a", "b", "c"][usize::from(i % 3)];
            events.push(ev(
                run,
                shard,
                word,
                i / 3,
                i64::from(shard) + 4 * i64::from(i),
                (i % 4) as u8,
            ));
        }
    }
    db.batch_write().puts(&events).await?;
    Ok(events)
}

#[tokio::test]
async fn a_collection_is_merged_across_shards_in_sort_key_order() -> TestResult {
    let db = local::fresh_table::<Shards>().await?;
    let events = four_shards(&db, 1).await?;
    let notes: Vec<Note> = (0..4u8)
        .flat_map(|shard| {
            ["a", "m"].map(|word| Note {
                run: 1,
                shard,
                word: word.into(),
                text: format!("{word} of {shard}"),
            })
        })
        .collect();
    db.batch_write().puts(&notes).await?;

    // The reference: every item by its stored sort key, ties by shard.
    let mut expected: Vec<(String, u8)> = events
        .iter()
        .map(|e| Ok((sort_key(e.primary_key().to_item()?), e.shard)))
        .chain(
            notes
                .iter()
                .map(|n| Ok((sort_key(n.primary_key().to_item()?), n.shard))),
        )
        .collect::<Result<_, Error>>()?;
    expected.sort();
    let q = || {
        db.scatter_query((0..4u8).map(|s| part(1u32, s)))
            .collection::<Timeline>()
    };
    let got = |items: Vec<Timeline>| -> Result<Vec<(String, u8)>, Error> {
        items
            .into_iter()
            .map(|t| match t {
                Timeline::Ev(e) => Ok((sort_key(e.primary_key().to_item()?), e.shard)),
                Timeline::Note(n) => Ok((sort_key(n.primary_key().to_item()?), n.shard)),
            })
            .collect()
    };
    assert_eq!(got(q().all().await?.items)?, expected);
    assert_eq!(got(paged(|| q().limit(5)).await?)?, expected);
    let mut reversed = expected.clone();
    reversed.reverse();
    assert_eq!(got(paged(|| q().reverse().limit(7)).await?)?, reversed);
    // A condition of a member narrows the collection (the notes only).
    let only_notes = q().sk(Note::sk().word().ge("")).all().await?.items;
    assert_eq!(only_notes.len(), notes.len());
    assert!(only_notes.iter().all(|t| matches!(t, Timeline::Note(_))));
    Ok(())
}

fn sort_key(item: dynamo_model::Item) -> String {
    item.get("SK")
        .and_then(|v| v.as_s().ok())
        .cloned()
        .unwrap_or_default()
}

#[tokio::test]
async fn projections_keys_and_hydration_work_across_shards() -> TestResult {
    let db = local::fresh_table::<Shards>().await?;
    let events = four_shards(&db, 2).await?;
    let order = [3u8, 0, 2, 1];
    let q = || db.scatter_query(order.iter().map(|&s| part(2u32, s)));
    let expected = reference(&events, &order, |e| (e.word.clone(), e.id), |_| true, false);

    let keys = q().keys_only().limit(9).page(None).await?;
    assert_eq!(keys.items.len(), 9);
    let whole = q().keys_only().limit(9).hydrate(None).await?;
    assert_eq!(ids(&whole.items), expected[..9]);
    let next = q()
        .keys_only()
        .limit(9)
        .hydrate(whole.cursor.as_ref())
        .await?;
    assert_eq!(ids(&next.items), expected[9..18]);

    let views = q().project::<EvTag>().all().await?.items;
    assert_eq!(
        views
            .iter()
            .map(|v| (v.shard, v.word.clone(), v.id))
            .collect::<Vec<_>>(),
        expected
    );
    // Capacity is the sum over the partitions' requests.
    let merged = q().all().await?;
    let mut one_by_one = 0.0;
    for s in order {
        one_by_one += db.query(part(2u32, s)).all().await?.consumed_capacity;
    }
    assert!(merged.consumed_capacity > 0.0);
    assert!((merged.consumed_capacity - one_by_one).abs() < 1e-9);
    assert!(merged.estimated_capacity > 0.0);
    Ok(())
}

/// A view of [`Ev`] without its rank.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Shards, pk = "EV#{run}#{shard}", sk = "AT#{word}#{id}", entity_type = "Ev")]
pub struct EvTag {
    pub run: u32,
    pub shard: u8,
    pub word: String,
    pub id: u16,
    pub tag: u8,
}

#[tokio::test]
async fn a_cursor_is_refused_by_every_other_read() -> TestResult {
    let db = local::fresh_table::<Shards>().await?;
    four_shards(&db, 3).await?;
    let shards =
        |list: &[u8]| db.scatter_query(list.iter().map(|&s| part(3u32, s)).collect::<Vec<_>>());
    let q = || shards(&[0, 1, 2, 3]).sk(Ev::sk().word().ge("a"));
    let page = q().limit(3).page(None).await?;
    let cursor = page.cursor.ok_or("more pages")?;
    // The same read continues.
    assert_eq!(q().limit(3).page(Some(&cursor)).await?.items.len(), 3);

    let wrong_query = |what: &str, err: Error| match err {
        Error::Cursor { reason, .. } => assert_eq!(reason, CursorError::WrongQuery, "{what}"),
        other => panic!("{what}: expected a cursor of another query, got {other:?}"),
    };
    let others: Vec<(&str, ScatterQuery<Ev>)> = vec![
        (
            "three shards",
            shards(&[0, 1, 2]).sk(Ev::sk().word().ge("a")),
        ),
        (
            "five shards",
            shards(&[0, 1, 2, 3, 4]).sk(Ev::sk().word().ge("a")),
        ),
        (
            "another order",
            shards(&[1, 0, 2, 3]).sk(Ev::sk().word().ge("a")),
        ),
        (
            "another shard",
            shards(&[0, 1, 2, 5]).sk(Ev::sk().word().ge("a")),
        ),
        (
            "another condition",
            shards(&[0, 1, 2, 3]).sk(Ev::sk().word().ge("b")),
        ),
        ("reversed", q().reverse()),
        ("filtered", q().filter(Ev::fields().tag.lt(2u8))),
        ("another filter value", q().filter(Ev::fields().tag.lt(3u8))),
    ];
    for (what, other) in others {
        wrong_query(what, other.limit(3).page(Some(&cursor)).await.unwrap_err());
    }
    // A filter given the cursor's own way is the same read.
    let filtered = || q().filter(Ev::fields().tag.lt(2u8)).limit(2);
    let first = filtered().page(None).await?;
    filtered().page(first.cursor.as_ref()).await?;
    // Expired items left out: the filter's time moves on, the read stays the same.
    let fresh = || q().exclude_expired().limit(5);
    assert_eq!(paged(fresh).await?.len(), 24);

    // A query's cursor, and a scatter cursor given to a query.
    let single = db.query(part(3u32, 0)).limit(2).page(None).await?;
    wrong_query(
        "a query's cursor",
        q().page(single.cursor.as_ref()).await.unwrap_err(),
    );
    wrong_query(
        "given to a query",
        db.query(part(3u32, 0))
            .sk(Ev::sk().word().ge("a"))
            .page(Some(&cursor))
            .await
            .unwrap_err(),
    );

    // Altered: every character changed in turn is refused (mostly as tampered).
    let text = cursor.to_string();
    for at in [0, text.len() / 2, text.len() - 1] {
        let mut altered: Vec<char> = text.chars().collect();
        altered[at] = if altered[at] == 'A' { 'B' } else { 'A' };
        let altered: String = altered.into_iter().collect();
        let err = q().page(Some(&altered.as_str().into())).await.unwrap_err();
        assert!(matches!(err, Error::Cursor { .. }), "{err:?}");
    }
    // With a secret, a cursor made without it is refused as altered.
    let secret = db.clone().with_cursor_secret("s3cret");
    let err = secret
        .scatter_query((0..4u8).map(|s| part(3u32, s)))
        .sk(Ev::sk().word().ge("a"))
        .page(Some(&cursor))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Cursor {
                reason: CursorError::Tampered,
                ..
            }
        ),
        "{err:?}"
    );
    Ok(())
}

#[tokio::test]
async fn no_partition_or_one_partition_twice_is_refused_before_sending() -> TestResult {
    let db = local::fresh_table::<Shards>().await?;
    let none: Vec<dynamo_model::Partition<Ev>> = Vec::new();
    refused(
        db.scatter_query(none).all(),
        ValidationReason::InvalidOption,
    )
    .await;
    refused(
        db.scatter_query([0u8, 1, 0].map(|s| part(1u32, s))).all(),
        ValidationReason::DuplicateKey,
    )
    .await;
    // What a query of one partition refuses, a scatter query refuses too.
    refused(
        db.scatter_query((0..2u8).map(|s| Ev::by_rank_partition(format!("1-{s}"))))
            .consistent()
            .all(),
        ValidationReason::ConsistentIndexRead,
    )
    .await;
    Ok(())
}

// ------------------------------------------------------------------ requests

/// The partition value a recorded `Query` call was for.
fn partition_of(call: &dynamo_model::local::faults::Call) -> Option<String> {
    let body: serde_json::Value = serde_json::from_str(&call.body).ok()?;
    body["ExpressionAttributeValues"]
        .as_object()?
        .values()
        .filter_map(|v| v["S"].as_str())
        .find(|v| v.starts_with("EV#"))
        .map(str::to_owned)
}

fn limit_of(call: &dynamo_model::local::faults::Call) -> Option<u64> {
    let body: serde_json::Value = serde_json::from_str(&call.body).ok()?;
    body["Limit"].as_u64()
}

#[tokio::test]
async fn a_small_limit_reads_a_page_of_each_shard_not_every_page() -> TestResult {
    let table = local::fresh_table::<Shards>().await?;
    let (db, faults) = recorded(&table).await?;
    // 8 shards of 60 interleaved events.
    let mut events = Vec::new();
    for shard in 0..8u8 {
        for i in 0..60u16 {
            events.push(ev(1, shard, "w", i, i64::from(i), 0));
        }
    }
    table.batch_write().puts(&events).await?;
    let q = || db.scatter_query((0..8u8).map(|s| part(1u32, s)));

    let before = faults.calls().len();
    let top = q().limit(5).all().await?;
    let calls = &faults.calls()[before..];
    assert_eq!(
        ids(&top.items),
        [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)].map(|(s, i)| (s, "w".to_owned(), i))
    );
    // One request of at most 5 items per shard: the 5 first of each are enough.
    assert_eq!(calls.len(), 8, "{calls:?}");
    assert!(calls.iter().all(|c| limit_of(c).is_some_and(|l| l <= 5)));

    // Every item of the run sits in shard 0 below the others: with pages of 5, shard 0
    // is read 4 times for 20 items, every other shard once.
    let mut low = Vec::new();
    for i in 0..50u16 {
        low.push(ev(2, 0, "a", i, 0, 0));
    }
    for shard in 1..8u8 {
        for i in 0..50u16 {
            low.push(ev(2, shard, "b", i, 0, 0));
        }
    }
    table.batch_write().puts(&low).await?;
    let before = faults.calls().len();
    let first = db
        .scatter_query((0..8u8).map(|s| part(2u32, s)))
        .page_size(5)
        .limit(20)
        .all()
        .await?;
    assert_eq!(first.items.len(), 20);
    assert!(first.items.iter().all(|e| e.shard == 0));
    let mut per_shard = std::collections::BTreeMap::new();
    for call in &faults.calls()[before..] {
        *per_shard
            .entry(partition_of(call).ok_or("a query")?)
            .or_insert(0) += 1;
    }
    let counts: Vec<i32> = per_shard.values().copied().collect();
    assert_eq!(per_shard.len(), 8);
    assert_eq!(
        per_shard.get(part(2, 0).value()?),
        Some(&4),
        "{per_shard:?}"
    );
    assert_eq!(counts.iter().sum::<i32>(), 4 + 7, "{per_shard:?}");
    Ok(())
}

#[tokio::test]
async fn throttling_and_server_errors_retried_by_the_sdk_change_nothing_in_the_result() -> TestResult
{
    let table = local::fresh_table::<Shards>().await?;
    let mut events = Vec::new();
    for shard in 0..6u8 {
        for i in 0..25u16 {
            let word = ["a", "b", "c", "d"][usize::from((i + u16::from(shard)) % 4)];
            events.push(ev(1, shard, word, i, i64::from(i), (i % 3) as u8));
        }
    }
    table.batch_write().puts(&events).await?;
    let order = [2u8, 5, 0, 1, 4, 3];
    let expected = reference(
        &events,
        &order,
        |e| (e.word.clone(), e.id),
        |e| e.tag < 2,
        true,
    );

    let faults = Faults::new(1207).rate(0.35).kinds([
        FaultKind::Throttle,
        FaultKind::ServerError,
        FaultKind::Delay(Duration::from_millis(15)),
    ]);
    let endpoint = tokio::task::spawn_blocking(local::shared_endpoint).await??;
    let retries = RetryConfig::standard()
        .with_max_attempts(12)
        .with_initial_backoff(Duration::from_millis(2))
        .with_max_backoff(Duration::from_millis(20));
    let db: Db<Shards> = Db::new(
        client_with_faults(&endpoint, &faults, retries),
        table.table_name(),
    );
    let q = || {
        db.scatter_query(order.iter().map(|&s| part(1u32, s)))
            .filter(Ev::fields().tag.lt(2u8))
            .reverse()
            .page_size(7)
            .concurrency(3)
    };
    let all: Page<Ev> = q().all().await?;
    assert_eq!(ids(&all.items), expected);
    assert_eq!(ids(&paged(|| q().limit(9)).await?), expected);
    let streamed: Vec<Ev> = q().stream().try_collect().await?;
    assert_eq!(ids(&streamed), expected);
    let stats = faults.stats();
    assert!(
        stats.throttled > 0 && stats.server_errors > 0 && stats.delayed > 0,
        "{stats:?}"
    );
    Ok(())
}

// ---------------------------------------------- untyped rows identified by their keys

/// Scatter-gather over rows another program wrote (no entity type, fields in the keys),
/// with a filter and a small page size, read page by page through cursors: every matching
/// row exactly once, in sort-key order, foreign rows skipped.
#[tokio::test]
async fn scatter_over_untyped_rows_with_filter_and_cursors() -> TestResult {
    let db = local::fresh_table::<Mixed>().await?;
    let mut expected: BTreeMap<(u32, u8), u8> = BTreeMap::new();
    for shard in 0..4u8 {
        for i in 0..15u32 {
            let n = i * 4 + u32::from(shard);
            let tag = ((n * 7) % 3) as u8;
            put_raw(&db, tick_row(shard, n, tag)).await?;
            if tag == 1 {
                expected.insert((n, shard), tag);
            }
        }
        // A row of another shape in the same partition.
        put_raw(
            &db,
            Item::from([
                ("PK".to_owned(), s(&format!("TK#{shard}"))),
                ("SK".to_owned(), s("N#meta")),
                ("tag".to_owned(), n(1)),
            ]),
        )
        .await?;
    }
    let f = Tick::fields();
    let q = || {
        db.scatter_query((0..4u8).map(Tick::partition))
            .filter(f.tag.eq(1u8))
            .page_size(3)
            .limit(5)
    };
    let mut got = Vec::new();
    let mut cursor = None;
    for _ in 0..100 {
        let page = q().page(cursor.as_ref()).await?;
        assert!(page.items.len() <= 5);
        got.extend(page.items.iter().map(|t| (t.n, t.shard, t.tag)));
        cursor = page.cursor;
        if cursor.is_none() {
            break;
        }
    }
    let want: Vec<(u32, u8, u8)> = expected.iter().map(|(&(n, s), &t)| (n, s, t)).collect();
    assert_eq!(got, want);
    // And in one read, without a limit.
    let all = db
        .scatter_query((0..4u8).map(Tick::partition))
        .filter(f.tag.eq(1u8))
        .page_size(3)
        .all()
        .await?
        .items;
    let all: Vec<(u32, u8, u8)> = all.iter().map(|t| (t.n, t.shard, t.tag)).collect();
    assert_eq!(all, want);
    Ok(())
}

/// Keys-only scatter over untyped rows, hydrated page by page through cursors: the
/// typed items, every row once, in order.
#[tokio::test]
async fn hydrated_scatter_over_untyped_rows_pages_through_cursors() -> TestResult {
    let db = local::fresh_table::<Mixed>().await?;
    let mut want = Vec::new();
    for shard in 0..3u8 {
        for i in 0..7u32 {
            let n = i * 3 + u32::from(shard);
            put_raw(&db, tick_row(shard, n, (n % 2) as u8)).await?;
            want.push((n, shard, (n % 2) as u8));
        }
    }
    want.sort();
    let q = || {
        db.scatter_query((0..3u8).map(Tick::partition))
            .keys_only()
            .limit(4)
    };
    let mut got = Vec::new();
    let mut cursor = None;
    for _ in 0..50 {
        let page = q().hydrate(cursor.as_ref()).await?;
        got.extend(page.items.iter().map(|t: &Tick| (t.n, t.shard, t.tag)));
        cursor = page.cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(got, want);
    Ok(())
}
