//! Scans: one entity type or a collection out of a mixed table, pages, segments, budget.
//!
//! DynamoDB Local (3.x) splits a table into scan segments by key hash as DynamoDB does, so
//! a segmented scan is checked item by item and request by request (each segment's
//! requests are recorded through the fault connector and compared with a direct walk of
//! that segment).

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::local::faults::Faults;
use dynamo_model::{local, Cursor, Db, Error, UnknownEntity};
use futures_util::TryStreamExt;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// 30 users and 9 items of other entity types (39 items in all).
async fn mixed_table() -> Result<local::TempTable<App>, BoxError> {
    let db = local::fresh_table::<App>().await?;
    for i in 0..30 {
        let mut u = User::sample(&format!("u{i:02}"));
        u.login_count = i;
        db.put(&u).await?;
    }
    for p in 0..3 {
        let id = format!("p{p}");
        db.put(&Purchase {
            purchase_id: id.clone(),
            buyer: "b".into(),
        })
        .await?;
        db.put(&PurchaseItem {
            purchase_id: id.clone(),
            n: 1,
            sku: "s".into(),
        })
        .await?;
        db.put(&PurchaseNote {
            purchase_id: id,
            n: 1,
        })
        .await?;
    }
    Ok(db)
}

fn user_ids(users: &[User]) -> BTreeSet<String> {
    users.iter().map(|u| u.user_id.clone()).collect()
}

#[tokio::test]
async fn scans_return_only_the_target_entity() -> TestResult {
    let db = mixed_table().await?;
    let all = db.scan::<User>().all().await?;
    assert_eq!(all.items.len(), 30);
    assert!(all.consumed_capacity > 0.0);

    let f = User::fields();
    let busy = db
        .scan::<User>()
        .filter(f.login_count.ge(25u32))
        .page_size(4)
        .all()
        .await?;
    assert_eq!(
        user_ids(&busy.items),
        (25..30).map(|i| format!("u{i:02}")).collect()
    );

    assert_eq!(db.scan::<User>().limit(7).all().await?.items.len(), 7);
    let streamed: Vec<User> = db
        .scan::<User>()
        .page_size(3)
        .stream()
        .try_collect()
        .await?;
    assert_eq!(user_ids(&streamed), user_ids(&all.items));
    Ok(())
}

#[tokio::test]
async fn scan_pages_with_cursors() -> TestResult {
    let db = mixed_table().await?;
    let mut cursor: Option<Cursor> = None;
    let mut seen = Vec::new();
    let mut pages = 0;
    loop {
        let page = db.scan::<User>().page_size(8).page(cursor.as_ref()).await?;
        seen.extend(page.items);
        pages += 1;
        cursor = page.cursor;
        if cursor.is_none() || pages > 50 {
            break;
        }
    }
    assert_eq!(seen.len(), 30);
    assert!(pages >= 4, "{pages} pages");
    // A scan cursor is not a query cursor.
    let page = db.scan::<User>().page_size(8).page(None).await?;
    let err = db
        .query(User::partition("u00"))
        .page(page.cursor.as_ref())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Cursor { .. }), "{err:?}");
    Ok(())
}

#[tokio::test]
async fn collection_scans_skip_or_refuse_other_entity_types() -> TestResult {
    let db = mixed_table().await?;
    let details = db.scan::<PurchaseDetails>().all().await?.items;
    assert_eq!(details.len(), 6);
    assert_eq!(
        details
            .iter()
            .filter(|d| matches!(d, PurchaseDetails::Purchase(_)))
            .count(),
        3
    );
    let err = db
        .scan::<PurchaseDetails>()
        .on_unknown(UnknownEntity::Error)
        .all()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Decode(_)), "{err:?}");
    Ok(())
}

/// One Scan request as sent: its segment and where it started.
#[derive(Debug)]
struct ScanRequest {
    segment: Option<(i64, i64)>,
    start: Option<Value>,
}

/// The Scan requests recorded after the first `skip` calls.
fn scans(faults: &Faults, skip: usize) -> Result<Vec<ScanRequest>, BoxError> {
    let mut out = Vec::new();
    for call in faults.calls().into_iter().skip(skip) {
        if call.operation != "Scan" {
            continue;
        }
        let body: Value = serde_json::from_str(&call.body)?;
        let segment = match (body.get("Segment"), body.get("TotalSegments")) {
            (None, None) => None,
            (Some(s), Some(t)) => Some((
                s.as_i64().ok_or("Segment")?,
                t.as_i64().ok_or("TotalSegments")?,
            )),
            _ => return Err(format!("Segment without TotalSegments: {body}").into()),
        };
        out.push(ScanRequest {
            segment,
            start: body.get("ExclusiveStartKey").cloned(),
        });
    }
    Ok(out)
}

/// How many times each user came back.
fn counts(users: &[User]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for u in users {
        *counts.entry(u.user_id.clone()).or_default() += 1;
    }
    counts
}

/// Every one of the 30 users, `n` times.
fn each_user(n: usize) -> BTreeMap<String, usize> {
    (0..30).map(|i| (format!("u{i:02}"), n)).collect()
}

/// The page chain of segment `segment` of `total` read in pages of `limit`, straight
/// from DynamoDB Local: where each request starts (`None` for the first), and the
/// table keys the segment holds.
async fn reference_segment(
    db: &Db<App>,
    segment: i32,
    total: i32,
    limit: i32,
) -> Result<(Vec<Option<Value>>, BTreeSet<String>), BoxError> {
    let client = local::client().await?;
    let (mut chain, mut keys) = (Vec::new(), BTreeSet::new());
    let mut start = None;
    loop {
        chain.push(start.as_ref().map(json_key));
        let page = client
            .scan()
            .table_name(db.table_name())
            .segment(segment)
            .total_segments(total)
            .limit(limit)
            .set_exclusive_start_key(start)
            .send()
            .await?;
        keys.extend(page.items().iter().map(|item| json_key(item).to_string()));
        start = page.last_evaluated_key().cloned();
        if start.is_none() {
            return Ok((chain, keys));
        }
    }
}

/// A table key as the SDK writes it in a request: `{"PK":{"S":"…"},"SK":{"S":"…"}}`.
fn json_key(key: &std::collections::HashMap<String, AttributeValue>) -> Value {
    let attr = |name: &str| match key.get(name) {
        Some(AttributeValue::S(s)) => serde_json::json!({ "S": s }),
        other => serde_json::json!({ "unexpected": format!("{other:?}") }),
    };
    serde_json::json!({ "PK": attr("PK"), "SK": attr("SK") })
}

#[tokio::test]
async fn each_segment_sends_its_own_segment_and_reads_it_to_the_end() -> TestResult {
    let db = mixed_table().await?;
    // What DynamoDB Local holds in each of 3 segments (it splits the table by key hash),
    // and the requests that read each segment in pages of 5.
    let mut reference = Vec::new();
    let mut all_keys = 0;
    for segment in 0..3 {
        let (chain, keys) = reference_segment(&db, segment, 3, 5).await?;
        all_keys += keys.len();
        reference.push(chain);
    }
    assert_eq!(all_keys, 39, "the segments split the table");
    assert!(
        reference.iter().all(|chain| chain.len() >= 2),
        "every segment needs several pages: {reference:?}"
    );

    let (watched, faults) = recorded(&db).await?;
    let segmented = watched
        .scan::<User>()
        .segments(3)
        .page_size(5)
        .all()
        .await?;
    // Every user exactly once: a segment lost, cut short or read twice changes a count.
    assert_eq!(counts(&segmented.items), each_user(1));
    // Each segment sent its own Segment (of TotalSegments 3) and walked its own pages
    // to the end: from no start key, never repeating or skipping a page.
    let requests = scans(&faults, 0)?;
    for (segment, expected) in reference.iter().enumerate() {
        let sent: Vec<Option<Value>> = requests
            .iter()
            .filter(|r| r.segment == Some((segment as i64, 3)))
            .map(|r| r.start.clone())
            .collect();
        assert_eq!(&sent, expected, "segment {segment}");
    }
    let expected: usize = reference.iter().map(Vec::len).sum();
    assert_eq!(requests.len(), expected, "no other requests: {requests:?}");
    Ok(())
}

#[tokio::test]
async fn a_read_capacity_budget_paces_a_scan_across_its_segments() -> TestResult {
    let db = mixed_table().await?;
    // The dearest page of 5: every page of a segment costs at most this much.
    let mut dearest: f64 = 0.0;
    let mut cursor: Option<Cursor> = None;
    loop {
        let page = db.scan::<User>().page_size(5).page(cursor.as_ref()).await?;
        dearest = dearest.max(page.consumed_capacity);
        cursor = page.cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert!(
        dearest > 0.0,
        "DynamoDB Local reports the capacity a scan consumes"
    );

    for segments in [1, 3] {
        let scan = || db.scan::<User>().segments(segments).page_size(5);
        let unpaced = scan().all().await?;
        assert_eq!(counts(&unpaced.items), each_user(1));
        let cost = unpaced.consumed_capacity;

        // A budget of one second for the whole scan, shared by its segments. A page's
        // cost is known only from its response, so each segment's last page may run ahead
        // of it: the scan takes at least (cost - segments × the dearest page) / budget.
        let budget = cost;
        let least = (cost - f64::from(segments) * dearest) / budget;
        assert!(least > 0.5, "a budget that binds: {least} s");
        let started = Instant::now();
        let paced = scan().max_read_units_per_second(budget).all().await?;
        let took = started.elapsed();
        assert!(
            took >= Duration::from_secs_f64(least),
            "{segments} segment(s): {cost} RCU at {budget} RCU/s took {took:?}, \
             at least {least:.3} s expected"
        );
        assert_eq!(counts(&paced.items), each_user(1));
        assert_eq!(paced.consumed_capacity, cost, "the same pages were read");
    }
    refused(
        db.scan::<User>().segments(2).page(None),
        dynamo_model::ValidationReason::InvalidOption,
    )
    .await;
    Ok(())
}
