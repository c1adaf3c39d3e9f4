//! The strongly consistent reads the crate sends for itself go one way, with the spans a
//! user's own reads have: the read that settles a write whose response was lost is a
//! `GetItem` request inside the write's operation span, and a revision of an item with
//! history is a `GetItem` operation of the entity with its request inside.

use crate::common::mixed::{Doc, Mixed};
use crate::common::spans::{captured, field};
use crate::common::*;
use dynamo_model::local;
use dynamo_model::local::faults::{FaultKind, Faults};

#[tokio::test]
async fn a_settlement_read_is_a_request_of_the_write_it_settles() -> TestResult {
    let (cap, _guard, db) = captured(local::fresh_table::<App>()).await?;
    // Every put is applied and then answered with HTTP 500, and the SDK does not retry:
    // the put settles its outcome with one consistent read.
    let faults = Faults::new(37)
        .rate(1.0)
        .kinds([FaultKind::ServerErrorAfterApply])
        .operations(["PutItem"]);
    let lossy = faulty(&db, &faults).await?;
    cap.clear();
    lossy.put(&User::sample("settled")).await?;
    assert!(
        faults.stats().server_errors_after_apply > 0,
        "{:?}",
        faults.stats()
    );

    let puts = cap.operations("PutItem");
    let (put_id, put) = puts.first().ok_or("a PutItem span")?;
    assert_eq!(field(put, "dynamo_model.items"), "1");
    let reads = cap.requests("GetItem");
    let (_, read) = reads.first().ok_or("a GetItem request span")?;
    assert_eq!(read.parent, Some(*put_id), "{read:?}");
    assert_eq!(field(read, "dynamo_model.items"), "1");
    assert!(
        cap.operations("GetItem").is_empty(),
        "no operation of its own"
    );
    Ok(())
}

#[tokio::test]
async fn a_revision_read_is_an_operation_of_its_entity() -> TestResult {
    let (cap, _guard, table) = captured(local::fresh_table::<Mixed>()).await?;
    let db = (*table).clone().trace_keys(true);
    let history = db.history::<Doc>();
    let doc = Doc {
        id: "r-1".into(),
        title: "first".into(),
        version: 0,
    };
    history.create(&doc).await?;
    cap.clear();
    let revision = history.revision(Doc::key("r-1"), 1).await?;
    assert_eq!(revision.map(|r| r.value.title), Some("first".to_owned()));
    assert!(history.revision(Doc::key("r-1"), 2).await?.is_none());

    let reads = cap.operations("GetItem");
    assert_eq!(reads.len(), 2, "{reads:?}");
    for ((id, read), items) in reads.iter().zip(["1", "0"]) {
        assert_eq!(field(read, "dynamo_model.entity"), "Doc");
        assert_eq!(field(read, "aws.dynamodb.consistent_read"), "true");
        assert_eq!(field(read, "dynamo_model.items"), items);
        assert!(
            field(read, "dynamo_model.key").contains("DOC#r-1"),
            "{read:?}"
        );
        let requests = cap.children(*id);
        assert_eq!(requests.len(), 1, "{requests:?}");
        assert_eq!(field(&requests[0], "db.operation.name"), "GetItem");
        assert_eq!(field(&requests[0], "dynamo_model.items"), items);
    }
    Ok(())
}
