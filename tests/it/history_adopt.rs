//! AWS's number-based version-control layout, adopted as another program wrote it: the
//! latest copy under `v0` holding the counter `Latest`, revision `k` under `v{k}` (unpadded,
//! nothing after the number) with no number attribute of its own. Rows are written first
//! with the raw SDK in the sample application's exact format, then read and continued
//! through `db.versions()` with no migration, while the application keeps writing in its
//! own ways: its transaction (update `v0` on the counter, put `v{N+1}`), its atomic counter
//! (`ADD Latest :1` on `v0`, then put `v{N}`) and its stream-driven variant (it writes `v0`
//! only; a stream consumer copies each new image of `v0` to `v{Latest}`).

use crate::common::*;
use aws_sdk_dynamodbstreams::types::ShardIteratorType;
use dynamo_model::aws_sdk_dynamodb::types::{
    Put, ReturnValue, StreamViewType, TransactWriteItem, Update,
};
use dynamo_model::history::Keep;
use dynamo_model::stream::StreamRecord;
use dynamo_model::{local, Db, DecodeErrorKind, Entity, Error, Item, Table};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The sample's table: the equipment's id, and `v0`, `v1`, … as the sort key.
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
pub struct Equipment;

/// One piece of equipment, in the sample's attributes (`Name`, `State`, `Latest` on `v0`).
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Equipment, identify = "keys", store_key_fields = false,
         pk = "Equipment#{id}", sk = "",
         history(width = 0, separator = "", counter_on_latest, numeric_order))]
pub struct Machine {
    pub id: String,
    #[dynamo(rename = "Name")]
    pub name: String,
    #[dynamo(rename = "State")]
    pub state: String,
    #[dynamo(version, rename = "Latest")]
    pub latest: u64,
}

pub(crate) fn pk(id: &str) -> String {
    format!("Equipment#{id}")
}

pub(crate) fn machine(id: &str, state: &str, latest: u64) -> Machine {
    Machine {
        id: id.into(),
        name: "Press".into(),
        state: state.into(),
        latest,
    }
}

/// The rows of machine `id` after the application wrote the states `s1` to `s{count}`:
/// `v0` at `count` first, then `v1` to `v{count}`.
fn app_rows(id: &str, count: u64) -> Vec<Item> {
    let mut rows = vec![app_row(id, 0, &format!("s{count}"), Some(count))];
    rows.extend((1..=count).map(|k| app_row(id, k, &format!("s{k}"), None)));
    rows
}

/// A row as the sample writes it: `v0` with `Latest`, a revision without.
pub(crate) fn app_row(id: &str, slot: u64, state: &str, latest: Option<u64>) -> Item {
    let mut item = Item::from([
        ("PK".to_owned(), s(&pk(id))),
        ("SK".to_owned(), s(&format!("v{slot}"))),
        ("Name".to_owned(), s("Press")),
        ("State".to_owned(), s(state)),
    ]);
    if let Some(latest) = latest {
        item.insert("Latest".into(), n(latest));
    }
    item
}

fn attr_s(item: &Item, name: &str) -> Option<String> {
    item.get(name).and_then(|v| v.as_s().ok()).cloned()
}

fn attr_n(item: &Item, name: &str) -> Option<u64> {
    item.get(name)
        .and_then(|v| v.as_n().ok())
        .and_then(|v| v.parse().ok())
}

/// The sample's read of the latest version: `GetItem` of `v0` (strongly consistent).
async fn app_get_latest(db: &Db<Equipment>, id: &str) -> Res<Option<Item>> {
    Ok(db
        .client()
        .get_item()
        .table_name(db.table_name())
        .set_key(Some(raw_key(&pk(id), "v0")))
        .consistent_read(true)
        .send()
        .await?
        .item)
}

/// The sample's read of every version: a `Query` of the partition, every page.
async fn app_query(db: &Db<Equipment>, id: &str) -> Res<Vec<Item>> {
    let mut items = Vec::new();
    let mut start = None;
    loop {
        let out = db
            .client()
            .query()
            .table_name(db.table_name())
            .key_condition_expression("PK = :pk AND begins_with(SK, :v)")
            .expression_attribute_values(":pk", s(&pk(id)))
            .expression_attribute_values(":v", s("v"))
            .set_exclusive_start_key(start)
            .consistent_read(true)
            .send()
            .await?;
        items.extend(out.items.unwrap_or_default());
        match out.last_evaluated_key.filter(|k| !k.is_empty()) {
            Some(k) => start = Some(k),
            None => return Ok(items),
        }
    }
}

/// `Latest` as `v0` holds it (0 before the first write), read as the sample reads it.
async fn app_latest(db: &Db<Equipment>, id: &str) -> Res<u64> {
    Ok(app_get_latest(db, id)
        .await?
        .and_then(|i| attr_n(&i, "Latest"))
        .unwrap_or(0))
}

/// The sample's condition on `v0`: the counter is still the one it read.
const ON_THE_COUNTER: &str = "attribute_not_exists(#latest) OR #latest = :latest";
/// The sample's update of `v0`: the next counter and the machine's attributes.
const SET_LATEST: &str = "SET #latest = :next, #name = :name, #state = :state";

/// The attribute names of [`ON_THE_COUNTER`] and [`SET_LATEST`].
fn latest_names() -> std::collections::HashMap<String, String> {
    [
        ("#latest", "Latest"),
        ("#name", "Name"),
        ("#state", "State"),
    ]
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .into()
}

/// The values of [`ON_THE_COUNTER`] and [`SET_LATEST`]: from `latest` to the next
/// version, with `state`.
fn latest_values(latest: u64, state: &str) -> Item {
    Item::from([
        (":latest".to_owned(), n(latest)),
        (":next".to_owned(), n(latest + 1)),
        (":name".to_owned(), s("Press")),
        (":state".to_owned(), s(state)),
    ])
}

/// The sample's update of `v0` from `latest` to the next version, on the counter, made
/// on `builder`: an `UpdateItem` or a transaction's `Update` (the same setters).
macro_rules! counter_update {
    ($builder:expr, $db:expr, $id:expr, $latest:expr, $state:expr) => {
        $builder
            .table_name($db.table_name())
            .set_key(Some(raw_key(&pk($id), "v0")))
            .condition_expression(ON_THE_COUNTER)
            .update_expression(SET_LATEST)
            .set_expression_attribute_names(Some(latest_names()))
            .set_expression_attribute_values(Some(latest_values($latest, $state)))
    };
}

/// The sample's loop around a write on the counter: `write(latest)` makes the write of
/// the version after `latest` (read from `v0`), sent again 3 ms later whenever `raced`
/// says another writer moved the counter first. The version written.
async fn retried_on_the_counter<T, E, F>(
    db: &Db<Equipment>,
    id: &str,
    write: impl Fn(u64) -> Res<F>,
    raced: impl Fn(&E) -> bool,
) -> Res<u64>
where
    F: std::future::Future<Output = Result<T, E>>,
    E: std::error::Error + Send + Sync + 'static,
{
    loop {
        let latest = app_latest(db, id).await?;
        match write(latest)?.await {
            Ok(_) => return Ok(latest + 1),
            Err(e) if raced(&e) => tokio::time::sleep(Duration::from_millis(3)).await,
            Err(e) => return Err(e.into()),
        }
    }
}

/// The sample's write: read `Latest` from `v0`, then one transaction that updates `v0`
/// on the counter (`attribute_not_exists(Latest) OR Latest = :latest`) and puts
/// `v{Latest + 1}`; again on a cancelled transaction. Returns the version written.
async fn app_write_transaction(db: &Db<Equipment>, id: &str, state: &str) -> Res<u64> {
    let write = |latest: u64| -> Res<_> {
        let update = counter_update!(Update::builder(), db, id, latest, state).build()?;
        let put = Put::builder()
            .table_name(db.table_name())
            .set_item(Some(app_row(id, latest + 1, state, None)))
            .build()?;
        Ok(db
            .client()
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().update(update).build())
            .transact_items(TransactWriteItem::builder().put(put).build())
            .send())
    };
    retried_on_the_counter(db, id, write, |e| {
        e.as_service_error()
            .is_some_and(|e| e.is_transaction_canceled_exception())
    })
    .await
}

/// The sample's atomic-counter write: `ADD Latest :1` on `v0` (setting the item's
/// attributes with it) returns the new version `N`; then `v{N}` is put.
async fn app_write_atomic(db: &Db<Equipment>, id: &str, state: &str) -> Res<u64> {
    let out = db
        .client()
        .update_item()
        .table_name(db.table_name())
        .set_key(Some(raw_key(&pk(id), "v0")))
        .update_expression("ADD #latest :one SET #name = :name, #state = :state")
        .set_expression_attribute_names(Some(latest_names()))
        .expression_attribute_values(":one", n(1))
        .expression_attribute_values(":name", s("Press"))
        .expression_attribute_values(":state", s(state))
        .return_values(ReturnValue::UpdatedNew)
        .send()
        .await?;
    let version = out
        .attributes
        .as_ref()
        .and_then(|a| attr_n(a, "Latest"))
        .ok_or("no Latest returned")?;
    put_raw(db, app_row(id, version, state, None)).await?;
    Ok(version)
}

/// The stream-driven variant's write: only `v0` changes (on the counter, as in the
/// transaction); the stream consumer writes the revision.
async fn app_write_latest_only(db: &Db<Equipment>, id: &str, state: &str) -> Res<u64> {
    let write = |latest: u64| -> Res<_> {
        Ok(counter_update!(db.client().update_item(), db, id, latest, state).send())
    };
    retried_on_the_counter(db, id, write, |e| {
        e.as_service_error()
            .is_some_and(|e| e.is_conditional_check_failed_exception())
    })
    .await
}

#[tokio::test]
async fn the_aws_layout_written_by_the_app_is_read_and_continued_with_no_migration() -> TestResult {
    let id = "1";
    // The application's rows: v0 at 12, v1..v12 (v10 sorts before v2 as text).
    let db = with_rows::<Equipment>(app_rows(id, 12)).await?;
    let before = raw_table(&db).await?;
    let versions = db.history::<Machine>();
    let key = || Machine::key(id);

    assert_eq!(versions.latest(key()).await?, Some(machine(id, "s12", 12)));
    assert_eq!(db.get(key()).await?, Some(machine(id, "s12", 12)));
    for k in 1..=12 {
        let r = versions.revision(key(), k).await?.ok_or("revision")?;
        assert_eq!(
            (r.revision, &r.value),
            (k, &machine(id, &format!("s{k}"), k))
        );
        assert_eq!(r.revised_at, None);
    }
    assert!(versions.revision(key(), 13).await?.is_none());

    // Numeric order both ways, whole and through cursors, whatever the page sizes.
    let all = all_revisions(&versions, key()).await?;
    assert_eq!(revision_numbers(&all), (1..=12).collect::<Vec<_>>());
    for (k, r) in (1..=12).zip(&all) {
        assert_eq!(r.value, machine(id, &format!("s{k}"), k));
    }
    let reversed = versions.revisions(key()).reverse().all().await?.items;
    assert_eq!(
        revision_numbers(&reversed),
        (1..=12).rev().collect::<Vec<_>>()
    );
    for (limit, page_size, reverse) in [(5, None, false), (4, Some(3), true), (1, Some(1), false)] {
        let paged = revision_numbers(
            &all_pages(|| versions.revisions(key()), limit, page_size, reverse).await?,
        );
        let mut want: Vec<u64> = (1..=12).collect();
        if reverse {
            want.reverse();
        }
        assert_eq!(paged, want, "limit {limit}, page size {page_size:?}");
    }
    let streamed: Vec<u64> = {
        use futures_util::TryStreamExt;
        versions
            .revisions(key())
            .limit(10)
            .stream()
            .map_ok(|r| r.revision)
            .try_collect()
            .await?
    };
    assert_eq!(streamed, (1..=10).collect::<Vec<_>>());
    // Reading changed nothing.
    assert_eq!(raw_table(&db).await?, before);

    // The crate continues at 13 in the application's format: `v13`, no `Latest` on it,
    // `Latest` = 13 on `v0`.
    let next = versions.revise(key(), |m| m.state = "s13".into()).await?;
    assert_eq!((next.revision, &next.value), (13, &machine(id, "s13", 13)));
    let v13 = raw_get(&db, &pk(id), "v13").await?;
    assert_eq!(attr_s(&v13, "State").as_deref(), Some("s13"));
    assert_eq!(attr_s(&v13, "Name").as_deref(), Some("Press"));
    assert!(!v13.contains_key("Latest"), "{v13:?}");
    let v0 = app_get_latest(&db, id).await?.ok_or("v0")?;
    assert_eq!(attr_n(&v0, "Latest"), Some(13));
    assert_eq!(attr_s(&v0, "State").as_deref(), Some("s13"));
    // Key fields stay in the keys, as the application has them.
    assert!(!v0.contains_key("id") && !v13.contains_key("id"));

    // The application's own read and write go on over what the crate wrote.
    assert_eq!(app_write_transaction(&db, id, "s14").await?, 14);
    assert_eq!(app_write_atomic(&db, id, "s15").await?, 15);
    let rows = app_query(&db, id).await?;
    let slots: BTreeSet<String> = rows.iter().filter_map(|i| attr_s(i, "SK")).collect();
    assert_eq!(slots, (0..=15).map(|k| format!("v{k}")).collect());
    assert_eq!(versions.latest(key()).await?, Some(machine(id, "s15", 15)));
    let all = all_revisions(&versions, key()).await?;
    assert_eq!(revision_numbers(&all), (1..=15).collect::<Vec<_>>());
    assert_eq!(all[13].value, machine(id, "s14", 14));

    // Pruning and deleting work on revisions that hold no number.
    let removed = versions.prune(key(), Keep::Newest(3)).await?;
    assert_eq!(removed.revisions, (1..=12).collect::<Vec<_>>());
    assert_eq!(removed.kept, [13, 14, 15]);
    let removed = versions.delete_all(key()).await?;
    assert_eq!(
        (removed.revisions, removed.latest),
        (vec![13, 14, 15], true)
    );
    assert!(app_query(&db, id).await?.is_empty());
    Ok(())
}

#[tokio::test]
async fn a_revision_holding_another_number_is_refused_one_holding_its_own_is_read() -> TestResult {
    let db = local::fresh_table::<Equipment>().await?;
    put_raw(&db, app_row("2", 0, "s3", Some(3))).await?;
    put_raw(&db, app_row("2", 1, "s1", None)).await?;
    // A copy of v0 (as a stream consumer writes it): `Latest` is its own number.
    put_raw(&db, app_row("2", 2, "s2", Some(2))).await?;
    put_raw(&db, app_row("2", 3, "s3", Some(2))).await?;
    let versions = db.history::<Machine>();
    let r = versions.revision(Machine::key("2"), 2).await?.ok_or("v2")?;
    assert_eq!(r.value, machine("2", "s2", 2));
    match versions.revision(Machine::key("2"), 3).await {
        Err(Error::Decode(e)) => {
            assert_eq!(e.attribute.as_deref(), Some("Latest"));
            assert!(matches!(e.kind, DecodeErrorKind::Invalid(_)), "{e:?}");
        }
        other => panic!("expected a decode error, got {other:?}"),
    }
    Ok(())
}

/// What the race's writers were told they wrote: a marker and a version.
type Told = Vec<(String, u64)>;

async fn crate_writer(db: Db<Equipment>, id: String, w: usize, steps: usize) -> Res<Told> {
    let versions = db.history::<Machine>().retry(contention_policy());
    let mut told = Vec::new();
    for step in 0..steps {
        let marker = format!("crate{w}-{step}");
        let m = marker.clone();
        let r = versions
            .revise(Machine::key(id.as_str()), move |doc| doc.state = m.clone())
            .await?;
        assert_eq!(r.value.state, marker);
        told.push((marker, r.revision));
    }
    Ok(told)
}

#[derive(Clone, Copy)]
enum AppWay {
    Transaction,
    Atomic,
    LatestOnly,
}

async fn app_writer(
    db: Db<Equipment>,
    id: String,
    w: usize,
    steps: usize,
    way: AppWay,
) -> Res<Told> {
    let mut told = Vec::new();
    for step in 0..steps {
        let marker = format!("app{w}-{step}");
        let version = match way {
            AppWay::Transaction => app_write_transaction(&db, &id, &marker).await?,
            AppWay::Atomic => app_write_atomic(&db, &id, &marker).await?,
            AppWay::LatestOnly => app_write_latest_only(&db, &id, &marker).await?,
        };
        told.push((marker, version));
    }
    Ok(told)
}

/// Runs the writers together and returns what each was told, all of them.
async fn race(
    db: &Db<Equipment>,
    id: &str,
    app: &[AppWay],
    crate_writers: usize,
    steps: usize,
) -> Res<Told> {
    let mut tasks = Vec::new();
    for w in 0..crate_writers {
        tasks.push(tokio::spawn(crate_writer(
            db.clone(),
            id.to_owned(),
            w,
            steps,
        )));
    }
    for (w, way) in app.iter().enumerate() {
        tasks.push(tokio::spawn(app_writer(
            db.clone(),
            id.to_owned(),
            w,
            steps,
            *way,
        )));
    }
    let mut told = Vec::new();
    for task in tasks {
        told.extend(task.await??);
    }
    Ok(told)
}

/// After a race from version `seeded`: every version from 1 to the last exactly once,
/// each holding the marker of the writer told it wrote it; `v0` at the last, equal to it;
/// the crate's history and the application's reads agree.
async fn check_after_race(db: &Db<Equipment>, id: &str, seeded: u64, told: &Told) -> TestResult {
    let total = seeded + told.len() as u64;
    let by_version: BTreeMap<u64, &str> = told.iter().map(|(m, v)| (*v, m.as_str())).collect();
    assert_eq!(
        by_version.len(),
        told.len(),
        "two writers told the same version: {told:?}"
    );
    assert_eq!(
        by_version.keys().copied().collect::<Vec<_>>(),
        (seeded + 1..=total).collect::<Vec<_>>(),
        "a gap"
    );

    // The application's reads: `v0`, then `v{Latest}`; the partition.
    let v0 = app_get_latest(db, id).await?.ok_or("v0")?;
    assert_eq!(attr_n(&v0, "Latest"), Some(total));
    let rows = app_query(db, id).await?;
    let rows: BTreeMap<String, &Item> = rows
        .iter()
        .filter_map(|i| Some((attr_s(i, "SK")?, i)))
        .collect();
    assert_eq!(
        rows.keys().cloned().collect::<BTreeSet<_>>(),
        (0..=total)
            .map(|k| format!("v{k}"))
            .collect::<BTreeSet<_>>()
    );
    let top = rows.get(&format!("v{total}")).ok_or("top")?;
    assert_eq!(attr_s(top, "State"), attr_s(&v0, "State"));
    assert_eq!(attr_s(top, "Name"), attr_s(&v0, "Name"));
    for (version, marker) in &by_version {
        let row = rows.get(&format!("v{version}")).ok_or("row")?;
        assert_eq!(attr_s(row, "State").as_deref(), Some(*marker), "v{version}");
        // A revision holds no number, or (a copy of v0) its own.
        assert!(
            attr_n(row, "Latest").is_none_or(|l| l == *version),
            "{row:?}"
        );
    }

    // The crate's reads.
    let versions = db.history::<Machine>();
    let latest = versions.latest(Machine::key(id)).await?.ok_or("latest")?;
    assert_eq!(latest.latest, total);
    assert_eq!(Some(latest.state.as_str()), by_version.get(&total).copied());
    let history = all_revisions(&versions, Machine::key(id)).await?;
    assert_eq!(revision_numbers(&history), (1..=total).collect::<Vec<_>>());
    for r in &history {
        assert_eq!(r.value.latest, r.revision);
        if let Some(marker) = by_version.get(&r.revision) {
            assert_eq!(r.value.state, *marker);
        }
    }
    Ok(())
}

#[tokio::test]
async fn crate_writers_race_the_apps_transaction_and_atomic_counter_writers() -> TestResult {
    let id = "race";
    let db = with_rows::<Equipment>(app_rows(id, 3)).await?;
    let app = [
        AppWay::Transaction,
        AppWay::Transaction,
        AppWay::Atomic,
        AppWay::Atomic,
    ];
    let told = race(&db, id, &app, 4, 4).await?;
    assert_eq!(told.len(), 32);
    check_after_race(&db, id, 3, &told).await
}

/// The sample's stream consumer: every new image of a `v0` is put under `v{Latest}`, in
/// stream order, until `stop` is set and the stream is drained. `copies` counts the
/// images copied so far.
async fn stream_consumer(
    db: Db<Equipment>,
    arn: String,
    stop: Arc<AtomicBool>,
    copies: Arc<AtomicUsize>,
) -> Res<usize> {
    let client = streams_client().await?;
    let shards = client
        .describe_stream()
        .stream_arn(&arn)
        .send()
        .await?
        .stream_description
        .and_then(|d| d.shards)
        .unwrap_or_default();
    let shard_id = shards
        .into_iter()
        .find_map(|s| s.shard_id)
        .ok_or("no shard")?;
    let mut iterator = client
        .get_shard_iterator()
        .stream_arn(&arn)
        .shard_id(shard_id)
        .shard_iterator_type(ShardIteratorType::TrimHorizon)
        .send()
        .await?
        .shard_iterator;
    let mut copied = 0;
    while let Some(current) = iterator {
        let stopping = stop.load(Ordering::SeqCst);
        let page = client.get_records().shard_iterator(current).send().await?;
        let empty = page.records().is_empty();
        for record in page.records().iter().cloned() {
            let record = StreamRecord::from_sdk(record)?;
            let Some(mut image) = record.new_image else {
                continue;
            };
            if attr_s(&image, "SK").as_deref() != Some("v0") {
                continue;
            }
            let latest = attr_n(&image, "Latest").ok_or("v0 without Latest")?;
            image.insert("SK".into(), s(&format!("v{latest}")));
            put_raw(&db, image).await?;
            copied += 1;
            copies.store(copied, Ordering::SeqCst);
        }
        iterator = page.next_shard_iterator;
        if empty {
            if stopping {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    Ok(copied)
}

#[tokio::test]
async fn crate_writers_race_the_apps_stream_driven_writers() -> TestResult {
    let db = local::fresh_table::<Equipment>().await?;
    let arn = enable_stream(&db, StreamViewType::NewImage).await?;
    let id = "streamed";
    // The application's first write: v0 only; the consumer writes v1. (It starts after
    // this first record: DynamoDB Local refuses to read an empty shard from its horizon.)
    assert_eq!(app_write_latest_only(&db, id, "s1").await?, 1);
    let stop = Arc::new(AtomicBool::new(false));
    let copies = Arc::new(AtomicUsize::new(0));
    let consumer = tokio::spawn(stream_consumer(
        db.clone(),
        arn,
        stop.clone(),
        copies.clone(),
    ));
    let app = [AppWay::LatestOnly, AppWay::LatestOnly, AppWay::LatestOnly];
    let told = race(&db, id, &app, 3, 4).await?;
    assert_eq!(told.len(), 24);

    // Let the consumer catch up: until it copied every change of v0 and every revision
    // is stored, or it ended, or a generous deadline (a slow machine still passes; a
    // failing test still ends).
    let deadline = Instant::now() + Duration::from_secs(120);
    let total = 1 + told.len();
    while !consumer.is_finished() && Instant::now() < deadline {
        if copies.load(Ordering::SeqCst) >= total && app_query(&db, id).await?.len() > total {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.store(true, Ordering::SeqCst);
    let copied = consumer.await??;
    // Every change of v0 was copied: the application's and the crate's.
    assert_eq!(copied, total);
    let mut told = told;
    told.push(("s1".into(), 1));
    check_after_race(&db, id, 0, &told).await?;
    // The crate's latest copy carries no write time for the consumer to copy: a copy
    // never claims the time of another revision.
    let v0 = app_get_latest(&db, id).await?.ok_or("v0")?;
    assert!(!v0.contains_key("_vt"), "{v0:?}");
    Ok(())
}
