//! Stream records of revisions: recognised by their keys on every path (with and without
//! the entity-type attribute, with and without a number, with images or keys only), so
//! a handler decoding the entity meets no error, and decoded as revisions by
//! `decode_revision`: AWS's number-based layout as its sample application and its stream
//! consumer write it (no `_type`, no counter on revisions), beside the crate's writes.

use crate::common::*;
use crate::history_adopt::{app_row, machine, pk, Equipment, Machine};
use crate::stream::{keys_of, records_both_ways};
use dynamo_model::aws_sdk_dynamodb::types::StreamViewType;
use dynamo_model::local;
use dynamo_model::stream::{EventName, Image, StreamRecord, ViewType};

#[test]
fn a_revision_record_the_aws_stream_consumer_wrote_is_no_change_of_the_entity() -> TestResult {
    // The consumer's copy of `v0` under `v7` without the counter (the sample app's own
    // revision), and with it (a copy of the new image of `v0`, `Latest` its own number).
    for latest in [None, Some(7)] {
        let v7 = app_row("1", 7, "s7", latest);
        let records = [
            StreamRecord::new(EventName::Insert, keys_of(&v7)).with_new_image(v7.clone()),
            StreamRecord::new(EventName::Remove, keys_of(&v7)).with_old_image(v7.clone()),
            StreamRecord::new(EventName::Remove, keys_of(&v7)).with_view_type(ViewType::KeysOnly),
        ];
        for record in &records {
            assert!(record.decode::<Machine>()?.is_none(), "{record:?}");
            let change = record
                .decode_revision::<Machine>()?
                .ok_or("a revision's record")?;
            assert_eq!(change.revision(), 7);
            assert_eq!(change.key(), Machine::key("1"));
            assert_eq!(change.event, record.event);
            let image = match record.event {
                EventName::Insert => change.new_image()?,
                _ if record.old_image.is_none() => {
                    assert!(matches!(change.old, Image::NotInView));
                    continue;
                }
                _ => change.old_image()?,
            };
            let revision = image.ok_or("the revision's image")?;
            assert_eq!(revision.revision, 7);
            assert_eq!(revision.value, machine("1", "s7", 7));
            assert_eq!(revision.revised_at, None);
        }
    }
    // The latest copy is the entity's change, never a revision's.
    let v0 = app_row("1", 0, "s7", Some(7));
    let record = StreamRecord::new(EventName::Insert, keys_of(&v0)).with_new_image(v0);
    let change = record
        .decode::<Machine>()?
        .ok_or("the latest copy's record")?;
    assert_eq!(change.new_image()?, Some(&machine("1", "s7", 7)));
    assert!(record.decode_revision::<Machine>()?.is_none());
    Ok(())
}

#[tokio::test]
async fn revisions_from_the_stream_decode_as_revisions_whoever_wrote_them() -> TestResult {
    let db = local::fresh_table::<Equipment>().await?;
    let arn = enable_stream(&db, StreamViewType::NewAndOldImages).await?;
    // The application: v0 at 1 and its v1; then v0 at 2 and the consumer's copy as v2.
    put_raw(&db, app_row("1", 0, "s1", Some(1))).await?;
    put_raw(&db, app_row("1", 1, "s1", None)).await?;
    put_raw(&db, app_row("1", 0, "s2", Some(2))).await?;
    put_raw(&db, app_row("1", 2, "s2", Some(2))).await?;
    // The crate: revision 3 (v3 and v0), then the whole history deleted (4 revisions
    // and v0 removed).
    let history = db.history::<Machine>();
    history
        .revise(Machine::key("1"), |m| m.state = "s3".into())
        .await?;
    history.delete_all(Machine::key("1")).await?;
    for records in &records_both_ways(&arn, 10).await? {
        let mut latest = Vec::new();
        let mut revisions = Vec::new();
        for record in records.iter() {
            // A handler decoding the entity with `?` meets no error on any record.
            if let Some(change) = record.decode::<Machine>()? {
                assert_eq!(change.key(), Machine::key("1"));
                latest.push((change.event, change.new_image()?.map(|m| m.latest)));
            }
            if let Some(change) = record.decode_revision::<Machine>()? {
                let image = match change.event {
                    EventName::Remove => change.old_image()?,
                    _ => change.new_image()?,
                };
                let revision = image.ok_or("an image")?;
                assert_eq!(revision.revision, change.revision());
                assert_eq!(revision.value.latest, change.revision());
                assert_eq!(revision.value.id, "1");
                revisions.push((
                    change.event,
                    change.revision(),
                    revision.value.state.clone(),
                ));
            }
        }
        assert_eq!(
            latest,
            [
                (EventName::Insert, Some(1)),
                (EventName::Modify, Some(2)),
                (EventName::Modify, Some(3)),
                (EventName::Remove, None),
            ]
        );
        let mut inserted: Vec<_> = revisions
            .iter()
            .filter(|r| r.0 == EventName::Insert)
            .map(|r| (r.1, r.2.as_str()))
            .collect();
        inserted.sort();
        assert_eq!(inserted, [(1, "s1"), (2, "s2"), (3, "s3")]);
        let mut removed: Vec<u64> = revisions
            .iter()
            .filter(|r| r.0 == EventName::Remove)
            .map(|r| r.1)
            .collect();
        removed.sort();
        assert_eq!(removed, [1, 2, 3]);
    }
    assert!(raw_get(&db, &pk("1"), "v0").await.is_err());
    Ok(())
}
