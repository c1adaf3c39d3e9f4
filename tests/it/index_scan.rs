//! Scans of an index (`db.scan::<E>().index::<Space>()`): a sparse GSI read whole ("all
//! escalated complaints"), in parallel segments, page by page with cursors, and refused
//! before sending where the index's projection cannot answer the read.

use crate::common::*;
use dynamo_model::{local, Cursor, Entity, Table, ValidationReason};
use futures_util::TryStreamExt;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// A complaint desk (AWS's complaint-management design): `Escalated` is sparse (only
/// escalated complaints carry its keys), `ByAgent` holds keys only, `Summary` projects a
/// few attributes.
#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "Escalated", pk = "EPK", sk = "ESK"),
    gsi(name = "ByAgent", pk = "APK", sk = "ASK", projection = keys_only),
    gsi(name = "Summary", pk = "SPK", sk = "SSK",
        projection(include = ["_type", "id", "severity"]))
)]
pub struct Desk;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Desk, pk = "COMPLAINT#{id}", sk = "COMPLAINT",
         index(Escalated, pk = "ESCALATED#{escalated_to}", sk = "{id}"),
         index(ByAgent, pk = "AGENT#{agent}", sk = "{id}"),
         index(Summary, pk = "SEVERITY", sk = "{severity}#{id}"))]
pub struct Complaint {
    pub id: String,
    pub agent: String,
    pub severity: u32,
    pub escalated_to: Option<String>,
    pub text: String,
}

/// What the `Summary` index projects of a complaint.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Desk, pk = "COMPLAINT#{id}", sk = "COMPLAINT", entity_type = "Complaint")]
pub struct ComplaintSeverity {
    pub id: String,
    pub severity: u32,
}

/// Another entity type in the sparse index (an overloaded GSI): never a complaint.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Desk, pk = "MANAGER#{name}", sk = "MANAGER",
         index(Escalated, pk = "ESCALATED#{name}", sk = "MANAGER"))]
pub struct Manager {
    pub name: String,
}

/// 40 complaints, every fourth one escalated (ids `c00`..`c39`), and one manager.
async fn desk() -> Res<local::TempTable<Desk>> {
    let db = local::fresh_table::<Desk>().await?;
    for i in 0..40u32 {
        db.put(&Complaint {
            id: format!("c{i:02}"),
            agent: format!("a{}", i % 3),
            severity: i % 5,
            escalated_to: (i % 4 == 0).then(|| format!("m{}", (i / 4) % 2)),
            text: "the parcel never came".into(),
        })
        .await?;
    }
    db.put(&Manager { name: "m0".into() }).await?;
    Ok(db)
}

fn escalated_ids() -> BTreeSet<String> {
    (0..40).step_by(4).map(|i| format!("c{i:02}")).collect()
}

fn ids<'a>(items: impl IntoIterator<Item = &'a Complaint>) -> BTreeSet<String> {
    items.into_iter().map(|c| c.id.clone()).collect()
}

#[tokio::test]
async fn an_index_scan_reads_only_the_items_of_a_sparse_index() -> TestResult {
    let db = desk().await?;
    let escalated = db
        .scan::<Complaint>()
        .index::<DeskEscalated>()
        .all()
        .await?;
    assert_eq!(escalated.items.len(), 10);
    assert_eq!(ids(&escalated.items), escalated_ids());
    // Whole items, decoded: the sparse index projects everything.
    assert!(escalated
        .items
        .iter()
        .all(|c| c.escalated_to.is_some() && c.text == "the parcel never came"));
    // The index holds 11 entries (10 complaints and the manager): a scan of the index reads
    // those, never the 41 items of the table.
    assert_eq!(escalated.scanned_count, 11);

    // Filters and streams work as on the table.
    let f = Complaint::fields();
    let to_m1: Vec<Complaint> = db
        .scan::<Complaint>()
        .index::<DeskEscalated>()
        .filter(f.escalated_to.eq(Some("m1".to_owned())))
        .page_size(3)
        .stream()
        .try_collect()
        .await?;
    assert_eq!(
        ids(&to_m1),
        ["c04", "c12", "c20", "c28", "c36"].map(String::from).into()
    );

    // What is sent names the index.
    let inputs = db.scan::<Complaint>().index::<DeskEscalated>().params()?;
    assert_eq!(inputs[0].index_name(), Some("Escalated"));
    let explained = db.scan::<Complaint>().index::<DeskEscalated>().explain()?;
    assert_eq!(explained.index.as_deref(), Some("Escalated"));
    Ok(())
}

#[tokio::test]
async fn an_index_scan_runs_in_parallel_segments() -> TestResult {
    let db = desk().await?;
    let scan = || db.scan::<Complaint>().index::<DeskEscalated>().segments(3);
    let inputs = scan().params()?;
    assert_eq!(inputs.len(), 3);
    for (i, input) in inputs.iter().enumerate() {
        assert_eq!(input.index_name(), Some("Escalated"));
        assert_eq!(
            (input.segment(), input.total_segments()),
            (Some(i as i32), Some(3))
        );
    }
    let all = scan().page_size(2).all().await?;
    // Every segment holds its share of the index: each escalated complaint exactly once.
    assert_eq!(all.items.len(), 10);
    assert_eq!(ids(&all.items), escalated_ids());
    let streamed: Vec<Complaint> = scan().stream().try_collect().await?;
    assert_eq!(streamed.len(), 10);
    assert_eq!(ids(&streamed), escalated_ids());
    Ok(())
}

#[tokio::test]
async fn an_index_scan_resumes_from_its_cursor() -> TestResult {
    let db = desk().await?;
    let scan = || db.scan::<Complaint>().index::<DeskEscalated>().page_size(3);
    let mut seen = Vec::new();
    let mut cursor: Option<Cursor> = None;
    let mut pages = 0;
    loop {
        let page = scan().page(cursor.as_ref()).await?;
        seen.extend(page.items.into_iter().map(|c| c.id));
        pages += 1;
        cursor = page.cursor;
        if cursor.is_none() {
            break;
        }
        assert!(pages < 10, "the scan must end");
    }
    assert_eq!(seen.len(), 10, "no complaint twice: {seen:?}");
    assert_eq!(seen.into_iter().collect::<BTreeSet<_>>(), escalated_ids());

    // A cursor of the index scan continues only that scan: not a scan of the table.
    let first = scan().page(None).await?;
    let cursor = first.cursor.expect("more pages");
    let err = db
        .scan::<Complaint>()
        .page(Some(&cursor))
        .await
        .unwrap_err();
    assert!(matches!(err, dynamo_model::Error::Cursor { .. }), "{err}");
    Ok(())
}

#[tokio::test]
async fn an_index_scan_is_refused_where_the_projection_lacks_what_decoding_needs() -> TestResult {
    let db = desk().await?;
    // KEYS_ONLY: whole complaints refused before sending, their keys read.
    let by_agent = || db.scan::<Complaint>().index::<DeskByAgent>();
    let err = by_agent().all().await.unwrap_err();
    assert_refused(&err, ValidationReason::IndexProjection);
    assert!(err.to_string().contains("ByAgent"), "{err}");
    let keys = by_agent().keys_only().all().await?;
    assert_eq!(keys.items.len(), 40);

    // INCLUDE: the whole entity is refused (naming what is missing), a view is read.
    let summary = || db.scan::<Complaint>().index::<DeskSummary>();
    let err = summary().all().await.unwrap_err();
    assert_refused(&err, ValidationReason::IndexProjection);
    assert!(err.to_string().contains("`text`"), "{err}");
    let severities = summary().project::<ComplaintSeverity>().all().await?;
    assert_eq!(severities.items.len(), 40);
    assert!(severities
        .items
        .iter()
        .all(|s| s.severity == s.id[1..].parse::<u32>().unwrap_or(99) % 5));

    // A GSI is eventually consistent only.
    let err = db
        .scan::<Complaint>()
        .index::<DeskEscalated>()
        .consistent()
        .all()
        .await
        .unwrap_err();
    assert_refused(&err, ValidationReason::ConsistentIndexRead);
    Ok(())
}
