//! `explain()` on every read builder against DynamoDB Local: the inputs it shows are those
//! `params()` returns and those the SDK was handed when the read ran (recorded by an
//! interceptor on a copy of the client), for a get, a query, a collection, a history, a
//! scatter query over shards, a parallel scan, a batch get of more than 100 keys and a
//! query of an index that projects only keys.

use crate::common::intercept::{intercepted, Request};
use crate::common::*;
use crate::history::{article_revised_once, Article};
use dynamo_model::aws_sdk_dynamodb::operation::batch_get_item::BatchGetItemInput;
use dynamo_model::aws_sdk_dynamodb::operation::get_item::GetItemInput;
use dynamo_model::aws_sdk_dynamodb::operation::query::QueryInput;
use dynamo_model::aws_sdk_dynamodb::operation::scan::ScanInput;
use dynamo_model::capacity::read_units;
use dynamo_model::insight::{
    Explain, Fanout, Insight, Requests, SizeBasis, Warning, FREQUENT_READS_PER_MINUTE,
};
use dynamo_model::{local, Db};
use std::sync::{Arc, Mutex, PoisonError};
use time::OffsetDateTime;

/// Every read input the SDK was handed, in the order handed.
#[derive(Debug, Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Requests>>>);

impl Recorder {
    /// A `Db` on `db`'s table whose client records into this recorder.
    fn on(&self, db: &Db<App>) -> Db<App> {
        let recorder = self.clone();
        intercepted(db, "explain test recorder", move |request| {
            recorder.record(request);
            Ok(())
        })
    }

    /// A new recorder, and a `Db` on `db`'s table whose client records into it.
    fn attached(db: &Db<App>) -> (Recorder, Db<App>) {
        let recorder = Recorder::default();
        let recording = recorder.on(db);
        (recorder, recording)
    }

    /// Records `request` if it is a read.
    fn record(&self, request: &Request<'_>) {
        let input = request.input();
        let sent = if let Some(i) = input.downcast_ref::<GetItemInput>() {
            Requests::Get(i.clone())
        } else if let Some(i) = input.downcast_ref::<QueryInput>() {
            Requests::Query(vec![i.clone()])
        } else if let Some(i) = input.downcast_ref::<ScanInput>() {
            Requests::Scan(vec![i.clone()])
        } else if let Some(i) = input.downcast_ref::<BatchGetItemInput>() {
            Requests::BatchGet(vec![i.clone()])
        } else {
            return;
        };
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(sent);
    }

    /// What was recorded so far, and forgets it.
    fn take(&self) -> Vec<Requests> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The recorded requests (all of one kind) as one `Requests`, in the order sent.
fn joined(recorded: Vec<Requests>) -> Res<Requests> {
    let mut out: Option<Requests> = None;
    for r in recorded {
        out = Some(match (out, r) {
            (None, r) => r,
            (Some(Requests::Query(mut a)), Requests::Query(b)) => {
                a.extend(b);
                Requests::Query(a)
            }
            (Some(Requests::Scan(mut a)), Requests::Scan(b)) => {
                a.extend(b);
                Requests::Scan(a)
            }
            (Some(Requests::BatchGet(mut a)), Requests::BatchGet(b)) => {
                a.extend(b);
                Requests::BatchGet(a)
            }
            (a, b) => return Err(format!("mixed requests: {a:?} then {b:?}").into()),
        });
    }
    out.ok_or_else(|| "nothing was sent".into())
}

/// Whether `sent` holds exactly the inputs of `planned`, in any order (concurrent
/// requests of shards, segments and batches are sent in no particular order).
fn same_inputs(planned: &Requests, sent: &Requests) -> bool {
    fn same<T: PartialEq>(a: &[T], b: &[T]) -> bool {
        a.len() == b.len() && a.iter().all(|x| b.contains(x)) && b.iter().all(|x| a.contains(x))
    }
    match (planned, sent) {
        (Requests::Get(a), Requests::Get(b)) => a == b,
        (Requests::Query(a), Requests::Query(b)) => same(a, b),
        (Requests::Scan(a), Requests::Scan(b)) => same(a, b),
        (Requests::BatchGet(a), Requests::BatchGet(b)) => same(a, b),
        _ => false,
    }
}

/// `explain` shows what `params` returns and what was sent.
fn check(plan: &Explain, params: Requests, sent: &Requests) {
    assert_eq!(plan.requests, params, "explain() and params()");
    assert!(
        same_inputs(&plan.requests, sent),
        "explain() and the requests sent:\n{:#?}\n{sent:#?}",
        plan.requests
    );
}

/// `explain` shows what `params` returns and what `recorder` recorded since it was last
/// taken.
fn check_recorded(plan: &Explain, params: Requests, recorder: &Recorder) -> TestResult {
    check(plan, params, &joined(recorder.take())?);
    Ok(())
}

fn order(user: &str, i: u128, status: &str) -> Order {
    Order {
        user_id: user.into(),
        order_id: uuid::Uuid::from_u128(i),
        created_at: OffsetDateTime::UNIX_EPOCH + time::Duration::days(i as i64),
        total_cents: 100 * i as u64,
        status: status.into(),
        note: None,
    }
}

#[tokio::test]
async fn a_get_explains_the_request_it_sends() -> TestResult {
    let table = table_with([User::sample("ada")]).await?;
    let (recorder, db) = Recorder::attached(&table);
    let get = || db.get(User::key("ada")).consistent();
    let plan = get().explain()?;
    assert!(get().send().await?.is_some());
    check_recorded(&plan, Requests::Get(get().params()?), &recorder)?;
    assert_eq!(plan.keys, [r#"PK = "USER#ada" AND SK = "PROFILE""#]);
    Ok(())
}

#[tokio::test]
async fn a_query_and_a_collection_explain_the_requests_they_send() -> TestResult {
    let table = table_with((0..5).map(|i| order("ada", i, "open"))).await?;
    seed_purchase(&table, "p1").await?;
    let (recorder, db) = Recorder::attached(&table);

    let query = || {
        db.query(Order::partition("ada"))
            .filter(Order::fields().total_cents.ge(200u64))
            .reverse()
            .page_size(50)
    };
    let plan = query().explain()?;
    assert_eq!(query().all().await?.items.len(), 3);
    check_recorded(&plan, Requests::Query(vec![query().params()?]), &recorder)?;
    let key = plan.key_condition.as_ref().map(|k| k.resolved.as_str());
    assert_eq!(
        key,
        Some(r#"PK = "USER#ada" AND begins_with(SK, "ORDER#")"#)
    );

    let collection = || {
        db.query(Purchase::partition("p1"))
            .collection::<PurchaseDetails>()
    };
    let plan = collection().explain()?;
    assert_eq!(collection().all().await?.items.len(), 5);
    check_recorded(
        &plan,
        Requests::Query(vec![collection().params()?]),
        &recorder,
    )?;
    assert_eq!(plan.entity_types, ["Purchase", "PurchaseItem", "Invoice"]);
    Ok(())
}

#[tokio::test]
async fn a_history_explains_the_request_it_sends() -> TestResult {
    let table = local::fresh_table::<App>().await?;
    article_revised_once(&table, "a").await?;
    let (recorder, db) = Recorder::attached(&table);
    let history = || db.history::<Article>().revisions(Article::key("a"));
    let plan = history().explain()?;
    assert_eq!(history().all().await?.items.len(), 2);
    check_recorded(&plan, Requests::Query(vec![history().params()?]), &recorder)?;
    Ok(())
}

#[tokio::test]
async fn a_scatter_query_explains_one_request_per_shard() -> TestResult {
    let table = local::fresh_table::<App>().await?;
    let users = ["a", "b", "c", "d"];
    for (i, user) in users.iter().enumerate() {
        table.put(&order(user, i as u128, "open")).await?;
    }
    let (recorder, db) = Recorder::attached(&table);
    let scatter = || db.scatter_query(users.map(Order::partition)).limit(10);
    let plan = scatter().explain()?;
    assert_eq!(plan.fanout, Fanout::Shards(4));
    assert_eq!(scatter().all().await?.items.len(), 4);
    check_recorded(&plan, Requests::Query(scatter().params()?), &recorder)?;
    Ok(())
}

#[tokio::test]
async fn a_parallel_scan_explains_one_request_per_segment() -> TestResult {
    let table = table_with((0..6).map(|i| User::sample(&format!("u{i}")))).await?;
    let (recorder, db) = Recorder::attached(&table);
    let scan = || db.scan::<User>().segments(3).page_size(100);
    let plan = scan().explain()?;
    assert_eq!(plan.fanout, Fanout::Segments(3));
    assert_eq!(scan().all().await?.items.len(), 6);
    check_recorded(&plan, Requests::Scan(scan().params()?), &recorder)?;
    Ok(())
}

#[tokio::test]
async fn a_batch_get_of_more_than_100_keys_explains_every_chunk() -> TestResult {
    let table = table_with((0..3).map(|i| User::sample(&format!("u{i}")))).await?;
    let (recorder, db) = Recorder::attached(&table);
    let batch = || {
        db.batch_get::<User>()
            .keys((0..150).map(|i| User::key(format!("u{i}"))))
    };
    let plan = batch().explain()?;
    assert_eq!(
        plan.fanout,
        Fanout::Batches {
            requests: 2,
            keys: 150
        }
    );
    assert_eq!(batch().send().await?.items.len(), 3);
    check_recorded(&plan, Requests::BatchGet(batch().params()?), &recorder)?;
    Ok(())
}

#[tokio::test]
async fn an_index_projecting_keys_explains_the_query_and_its_hydrate() -> TestResult {
    let table = table_with((0..4).map(|i| order("ada", i, "open"))).await?;
    let (recorder, db) = Recorder::attached(&table);
    let keys = || db.query(Order::gsi2_partition("open")).keys_only();
    let plan = keys().explain()?;
    assert_eq!(plan.index.as_deref(), Some("GSI2"));
    assert_eq!(
        plan.warnings,
        [Warning::Hydrate {
            index: "GSI2",
            projection: "KEYS_ONLY"
        }]
    );
    assert_eq!(keys().hydrate(None).await?.items.len(), 4);
    // The query, then the batch get of its keys.
    let mut sent = recorder.take().into_iter();
    let query = sent.next().ok_or("no query sent")?;
    check(&plan, Requests::Query(vec![keys().params()?]), &query);
    assert!(matches!(sent.next(), Some(Requests::BatchGet(_))));

    // A view of an INCLUDE projection reads no more than it needs: nothing to warn of.
    let view = || db.query(OrderTotal::gsi3_partition()).limit(2);
    let plan = view().explain()?;
    assert_eq!(view().all().await?.items.len(), 2);
    check_recorded(&plan, Requests::Query(vec![view().params()?]), &recorder)?;
    assert!(plan.warnings.is_empty());
    Ok(())
}

#[tokio::test]
async fn observed_runs_warn_of_a_wasteful_filter_and_not_of_a_tight_query() -> TestResult {
    let table = local::fresh_table::<App>().await?;
    for i in 0..20 {
        let status = if i % 10 == 0 { "shipped" } else { "open" };
        table.put(&order("ada", i, status)).await?;
    }
    let insight = Insight::new();
    let db = table.observed(&insight);
    let wasteful = || {
        db.query(Order::partition("ada"))
            .filter(Order::fields().status.eq("shipped"))
    };
    let tight = || db.query(Order::partition("ada")).limit(5);
    // Before any run: nothing observed, nothing to warn of, sizes unknown.
    let before = wasteful().explain()?;
    assert!(before.warnings.is_empty());
    assert_eq!(before.estimate.sizes, SizeBasis::Unknown);
    for _ in 0..3 {
        assert_eq!(wasteful().all().await?.items.len(), 2);
        assert_eq!(tight().all().await?.items.len(), 5);
    }
    let plan = wasteful().explain()?;
    match plan.warnings.as_slice() {
        [Warning::FilterDiscards { discarded, calls }] => {
            assert_eq!((*discarded, *calls), (0.9, 3));
        }
        other => return Err(format!("{other:?}").into()),
    }
    assert!(plan
        .to_string()
        .contains("discarded 90 % of the items read in 3 observed calls"));
    // The 20 orders read were measured: a page of them has an estimate.
    let SizeBasis::Observed { mean_bytes, .. } = plan.estimate.sizes else {
        return Err(format!("no sizes observed: {plan}").into());
    };
    // A page sums its items' sizes and rounds once.
    let page = |items: usize| read_units(items * mean_bytes.ceil() as usize, false);
    assert_eq!(plan.estimate.items, Some(20));
    assert_eq!(plan.estimate.read_units, Some(page(20)));
    let plan = tight().explain()?;
    assert!(plan.warnings.is_empty(), "{plan}");
    assert_eq!(plan.estimate.read_units, Some(page(5)));
    Ok(())
}

#[tokio::test]
async fn observed_runs_warn_of_dropped_entity_types_and_frequent_scans() -> TestResult {
    let table = local::fresh_table::<App>().await?;
    seed_purchase(&table, "p1").await?;
    table
        .put(&PurchaseNote {
            purchase_id: "p1".into(),
            n: 1,
        })
        .await?;
    let insight = Insight::new();
    let db = table.observed(&insight);
    let collection = || {
        db.query(Purchase::partition("p1"))
            .collection::<PurchaseDetails>()
    };
    assert_eq!(collection().all().await?.items.len(), 5);
    let plan = collection().explain()?;
    assert_eq!(
        plan.warnings,
        [Warning::DroppedEntityTypes {
            types: vec![("PurchaseNote".into(), 1)]
        }]
    );

    let scan = || db.scan::<Purchase>();
    for _ in 0..12 {
        scan().all().await?;
    }
    let plan = scan().explain()?;
    assert!(
        plan.warnings
            .iter()
            .any(|w| matches!(w, Warning::Frequent { read: "scan", per_minute } if *per_minute >= FREQUENT_READS_PER_MINUTE)),
        "{plan}"
    );
    Ok(())
}
