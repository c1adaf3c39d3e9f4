//! Optimistic locking (`#[dynamo(version)]`) and TTL (`#[dynamo(ttl)]`).

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::{local, Db, Error};
use time::{Duration, OffsetDateTime};

fn conflict(err: Error) -> (u64, Option<u64>) {
    match err {
        Error::VersionConflict {
            expected, found, ..
        } => (expected, found),
        other => panic!("expected a version conflict, got {other:?}"),
    }
}

/// A fresh table holding document `d` (version 1) with `body`.
async fn with_doc(body: &str) -> Res<local::TempTable<App>> {
    let db = local::fresh_table::<App>().await?;
    db.put(&doc("d", body, 0)).await?;
    Ok(db)
}

/// The key of the document every test here writes.
fn doc_d() -> dynamo_model::Key<Doc> {
    Doc::key(DocKey { id: "d", rev: 1u32 })
}

#[tokio::test]
async fn puts_check_and_increment_the_version() -> TestResult {
    let db = with_doc("v1").await?;
    let stored = db.get(doc_d()).await?.ok_or("missing")?;
    assert_eq!(stored.version, 1);

    // A writer still holding version 0 (it thinks the doc is new) loses.
    let err = db.put(&doc("d", "stale", 0)).await.unwrap_err();
    let current: Doc = err.current().ok_or("no current item")??;
    assert_eq!(current.body, "v1");
    assert_eq!(conflict(err), (0, Some(1)));

    db.put(&Doc {
        body: "v2".into(),
        ..stored.clone()
    })
    .await?;
    let err = db
        .put(&Doc {
            body: "lost update".into(),
            ..stored
        })
        .await
        .unwrap_err();
    assert_eq!(conflict(err), (1, Some(2)));
    assert_eq!(
        db.get(doc_d()).await?.map(|d| (d.body, d.version)),
        Some(("v2".into(), 2))
    );
    Ok(())
}

#[tokio::test]
async fn updates_and_deletes_check_the_version_too() -> TestResult {
    let db = with_doc("v1").await?;
    let f = Doc::fields();

    let err = db.update(doc_d()).set(f.body, "x").await.unwrap_err();
    assert!(
        matches!(&err, Error::Validation { message, reason: dynamo_model::ValidationReason::VersionCheckRequired, .. } if message.contains("if_version")),
        "{err:?}"
    );
    let err = db
        .update(doc_d())
        .set(f.body, "x")
        .if_version(7)
        .await
        .unwrap_err();
    assert_eq!(conflict(err), (7, Some(1)));
    let updated = db.update(doc_d()).set(f.body, "v2").if_version(1).await?;
    assert_eq!((updated.body.as_str(), updated.version), ("v2", 2));
    let counted = db.update(doc_d()).set(f.body, "v3").any_version().await?;
    assert_eq!(counted.version, 3);

    refused(
        db.delete(doc_d()),
        dynamo_model::ValidationReason::VersionCheckRequired,
    )
    .await;
    let err = db.delete(doc_d()).if_version(2).await.unwrap_err();
    assert_eq!(conflict(err), (2, Some(3)));
    assert!(db.get(doc_d()).await?.is_some());
    db.delete(doc_d()).if_version(3).await?;
    assert!(db.get(doc_d()).await?.is_none());
    Ok(())
}

#[tokio::test]
async fn of_two_concurrent_writers_of_one_version_exactly_one_wins() -> TestResult {
    let db = with_doc("base").await?;
    let base = db.get(doc_d()).consistent().await?.ok_or("missing")?;
    let writers = (0..8).map(|i| {
        let db: Db<App> = db.clone();
        let mut mine = base.clone();
        mine.body = format!("writer {i}");
        tokio::spawn(async move { db.put(&mine).await })
    });
    let mut wins = 0;
    for w in writers {
        match w.await? {
            Ok(()) => wins += 1,
            Err(Error::VersionConflict { .. }) => {}
            Err(other) => return Err(other.into()),
        }
    }
    assert_eq!(wins, 1);
    assert_eq!(
        db.get(doc_d()).consistent().await?.map(|d| d.version),
        Some(2)
    );
    Ok(())
}

#[tokio::test]
async fn ttl_is_stored_as_epoch_seconds_and_expired_items_can_be_excluded() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let past = OffsetDateTime::now_utc() - Duration::hours(1);
    let future = OffsetDateTime::now_utc() + Duration::hours(1);
    let mut old = doc("d", "old", 0);
    old.expires = Some(past);
    let mut fresh = Doc {
        rev: 2,
        body: "fresh".into(),
        ..doc("d", "", 0)
    };
    fresh.expires = Some(future);
    let forever = Doc {
        rev: 3,
        ..doc("d", "forever", 0)
    };
    for d in [&old, &fresh, &forever] {
        db.put(d).await?;
    }

    let raw = db
        .client()
        .get_item()
        .table_name(db.table_name())
        .key("PK", AttributeValue::S("DOC#d".into()))
        .key(
            "SK",
            AttributeValue::S(doc_d().raw()?.sk.clone().ok_or("sk")?),
        )
        .send()
        .await?
        .item
        .ok_or("missing")?;
    // The table's TTL attribute, as a number of seconds (what DynamoDB's TTL reads).
    assert_eq!(
        raw.get("expires_at"),
        Some(&AttributeValue::N(past.unix_timestamp().to_string()))
    );

    // DynamoDB Local never deletes expired items; the real service does so lazily.
    assert!(db.get(doc_d()).await?.is_some());
    assert!(db.get(doc_d()).exclude_expired().await?.is_none());
    assert!(db
        .get(Doc::key(DocKey { id: "d", rev: 2u32 }))
        .exclude_expired()
        .await?
        .is_some());
    let live: Vec<u32> = db
        .query(Doc::partition("d"))
        .exclude_expired()
        .all()
        .await?
        .mapped(|d| d.rev);
    assert_eq!(live, [2, 3]);
    assert_eq!(
        db.scan::<Doc>().exclude_expired().all().await?.items.len(),
        2
    );
    assert_eq!(db.scan::<Doc>().all().await?.items.len(), 3);

    // Expiry conditions compare epoch seconds.
    let f = Doc::fields();
    let expiring = items_of(
        db.query(Doc::partition("d"))
            .filter(f.expires.lt(Some(future.into()))),
    )
    .await?;
    assert_eq!(expiring.iter().map(|d| d.rev).collect::<Vec<_>>(), [1]);
    Ok(())
}

#[tokio::test]
async fn versioned_entities_stay_out_of_batch_writes_and_vanished_items_conflict() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    refused(
        db.batch_write().put(&doc("d", "x", 0)),
        dynamo_model::ValidationReason::NotSupportedInBatch,
    )
    .await;

    db.put(&doc("d", "v1", 0)).await?;
    db.delete(doc_d()).if_version(1).await?;
    // A writer holding version 1 of an item that is gone meanwhile.
    let err = db.put(&doc("d", "late", 1)).await.unwrap_err();
    assert_eq!(conflict(err), (1, None));
    let err = db.delete(doc_d()).if_version(1).await.unwrap_err();
    assert_eq!(conflict(err), (1, None));
    Ok(())
}
