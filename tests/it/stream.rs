//! DynamoDB Streams against DynamoDB Local's own stream: the records of the crate's
//! writes (versioned history, chunked and compressed attributes, several entity types in
//! one table) decode, in both shapes, into exactly the changes of each entity.

use crate::chunk::Message;
use crate::common::*;
use crate::history::Article;
use aws_lambda_events::event::dynamodb::{Event, EventRecord};
use aws_sdk_dynamodbstreams::types::{Record, ShardIteratorType};
use dynamo_model::aws_sdk_dynamodb::types::{StreamSpecification, StreamViewType};
use dynamo_model::stream::{Change, EventName, StreamRecord};
use dynamo_model::{local, Db, Entity};
use std::time::{Duration, Instant};

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "NOTE#{note_id}", sk = "NOTE")]
pub struct Note {
    pub note_id: String,
    pub subject: String,
    #[dynamo(compress = "gzip")]
    pub body: String,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Turns the table's stream on and returns its ARN.
async fn enable_stream(db: &Db<App>, view: StreamViewType) -> Result<String, BoxError> {
    db.client()
        .update_table()
        .table_name(db.table_name())
        .stream_specification(
            StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(view)
                .build()?,
        )
        .send()
        .await?;
    let table = db
        .client()
        .describe_table()
        .table_name(db.table_name())
        .send()
        .await?
        .table;
    Ok(table.and_then(|t| t.latest_stream_arn).ok_or("no stream")?)
}

/// Every record of the stream, once `expected` are in (DynamoDB Local serves them at once;
/// the deadline only bounds a failing test).
async fn read_stream(arn: &str, expected: usize) -> Result<Vec<Record>, BoxError> {
    use aws_sdk_dynamodbstreams::config::{BehaviorVersion, Credentials, Region};
    let endpoint = tokio::task::spawn_blocking(local::shared_endpoint).await??;
    let client = aws_sdk_dynamodbstreams::Client::from_conf(
        aws_sdk_dynamodbstreams::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-east-1"))
            .endpoint_url(endpoint)
            .credentials_provider(Credentials::new("dynamomodel", "local", None, None, "test"))
            .build(),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let shards = client
        .describe_stream()
        .stream_arn(arn)
        .send()
        .await?
        .stream_description
        .map(|d| d.shards.unwrap_or_default())
        .unwrap_or_default();
    let mut records = Vec::new();
    for shard in shards {
        let Some(shard_id) = shard.shard_id else {
            continue;
        };
        let mut iterator = client
            .get_shard_iterator()
            .stream_arn(arn)
            .shard_id(shard_id)
            .shard_iterator_type(ShardIteratorType::TrimHorizon)
            .send()
            .await?
            .shard_iterator;
        while let Some(current) = iterator {
            let page = client.get_records().shard_iterator(current).send().await?;
            let empty = page.records().is_empty();
            records.extend(page.records().iter().cloned());
            iterator = page.next_shard_iterator;
            if empty && (records.len() >= expected || Instant::now() > deadline) {
                break;
            }
            if empty {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
    Ok(records)
}

/// The record in AWS Lambda's shape: the JSON the Lambda service delivers, parsed.
fn as_lambda(record: &StreamRecord) -> Result<StreamRecord, BoxError> {
    let mut lambda = EventRecord::default();
    lambda.event_id = record.event_id.clone().unwrap_or_default();
    lambda.event_name = record.event.as_str().to_owned();
    lambda.change.keys = record.keys.clone().into();
    lambda.change.old_image = record.old_image.clone().unwrap_or_default().into();
    lambda.change.new_image = record.new_image.clone().unwrap_or_default().into();
    lambda.change.sequence_number = record.sequence_number.clone();
    let mut event = Event::default();
    event.records.push(lambda);
    let event: Event = serde_json::from_str(&serde_json::to_string(&event)?)?;
    Ok(StreamRecord::from_lambda(event.records[0].clone())?)
}

/// The changes of `E` among the records, and how many records were not `E`'s.
fn changes<E: Entity>(records: &[StreamRecord]) -> Result<(Vec<Change<E>>, usize), BoxError> {
    let mut changes = Vec::new();
    let mut others = 0;
    for record in records {
        match record.decode::<E>()? {
            Some(change) => changes.push(change),
            None => others += 1,
        }
    }
    Ok((changes, others))
}

#[tokio::test]
async fn the_crates_writes_decode_from_the_stream_in_both_shapes() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let arn = enable_stream(&db, StreamViewType::NewAndOldImages).await?;

    // A versioned entity: each change writes the latest copy and a revision (4 records).
    let versions = db.versions::<Article>();
    let article = Article {
        article_id: "a-1".into(),
        author: "ann".into(),
        title: "t1".into(),
        version: 0,
    };
    versions.create(&article).await?;
    versions
        .revise(Article::key("a-1"), |a| a.title = "t2".into())
        .await?;
    // Chunked values: the message and its chunk items (1 + 1 + 3 records).
    let body = "b".repeat(3000);
    let attachment: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8).collect();
    let message = Message {
        owner: "ann".into(),
        msg_id: "m-1".into(),
        subject: "s".into(),
        body: body.clone().into(),
        attachment: attachment.clone().into(),
    };
    db.put(&message).await?;
    // A compressed value: put, updated, deleted (3 records).
    let note = Note {
        note_id: "n-1".into(),
        subject: "first".into(),
        body: "lorem ipsum ".repeat(500),
    };
    db.put(&note).await?;
    db.update(note.primary_key())
        .set(Note::fields().subject, "second")
        .await?;
    db.delete(note.primary_key()).await?;
    // Another entity type (1 record).
    let user = User {
        user_id: "u-1".into(),
        display_name: "Ann".into(),
        email: None,
        login_count: 0,
        labels: vec![],
    };
    db.put(&user).await?;

    let raw = read_stream(&arn, 13).await?;
    assert_eq!(raw.len(), 13, "{raw:#?}");
    let from_sdk: Vec<StreamRecord> = raw
        .into_iter()
        .map(StreamRecord::from_sdk)
        .collect::<Result<_, _>>()?;
    let from_lambda: Vec<StreamRecord> =
        from_sdk.iter().map(as_lambda).collect::<Result<_, _>>()?;

    for records in [&from_sdk, &from_lambda] {
        // The latest copy's changes only: revisions are history, not the entity.
        let (articles, others) = changes::<Article>(records)?;
        assert_eq!(others, 11);
        let events: Vec<_> = articles.iter().map(|c| c.event).collect();
        assert_eq!(events, [EventName::Insert, EventName::Modify]);
        let modified = &articles[1];
        assert_eq!(modified.old_image()?.map(|a| a.title.as_str()), Some("t1"));
        assert_eq!(
            modified.new_image()?.map(|a| (a.title.as_str(), a.version)),
            Some(("t2", 2))
        );
        assert_eq!(modified.key(), Article::key("a-1"));

        // The message, not its chunk items; its chunked values as a query returns them.
        let (messages, _) = changes::<Message>(records)?;
        assert_eq!(messages.len(), 1);
        let mut new = messages[0].new_image()?.cloned().ok_or("no new image")?;
        assert!(new.body.get().is_none() && new.body.manifest().is_some());
        db.load_chunks(std::slice::from_mut(&mut new)).await?;
        assert_eq!(new.body.get(), Some(&body));
        assert_eq!(new.attachment.get(), Some(&attachment));

        // The compressed field is decoded as on any read.
        let (notes, _) = changes::<Note>(records)?;
        let events: Vec<_> = notes.iter().map(|c| c.event).collect();
        assert_eq!(
            events,
            [EventName::Insert, EventName::Modify, EventName::Remove]
        );
        assert_eq!(notes[0].new_image()?, Some(&note));
        assert_eq!(
            notes[1].new_image()?.map(|n| n.subject.as_str()),
            Some("second")
        );
        assert_eq!(
            notes[2].old_image()?.map(|n| n.body.as_str()),
            Some(note.body.as_str())
        );
        assert_eq!(notes[2].new_image()?, None);

        let (users, _) = changes::<User>(records)?;
        assert_eq!(users.len(), 1);
        assert_eq!(users[0].new_image()?, Some(&user));
    }
    // Both shapes carry the same keys, images and sequence numbers.
    for (sdk, lambda) in from_sdk.iter().zip(&from_lambda) {
        assert_eq!(
            (
                &sdk.keys,
                &sdk.old_image,
                &sdk.new_image,
                &sdk.sequence_number
            ),
            (
                &lambda.keys,
                &lambda.old_image,
                &lambda.new_image,
                &lambda.sequence_number
            )
        );
    }
    Ok(())
}

/// A `KEYS_ONLY` stream: a REMOVE (and every other record) carries the key only; the key
/// templates attribute it, and asking for an image says why there is none.
#[tokio::test]
async fn keys_only_streams_give_typed_keys() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let arn = enable_stream(&db, StreamViewType::KeysOnly).await?;
    let note = Note {
        note_id: "n-1".into(),
        subject: "s".into(),
        body: "b".into(),
    };
    db.put(&note).await?;
    db.delete(note.primary_key()).await?;
    let records: Vec<StreamRecord> = read_stream(&arn, 2)
        .await?
        .into_iter()
        .map(StreamRecord::from_sdk)
        .collect::<Result<_, _>>()?;
    let (notes, others) = changes::<Note>(&records)?;
    assert_eq!((notes.len(), others), (2, 0));
    let removed = &notes[1];
    assert_eq!(removed.event, EventName::Remove);
    assert_eq!(removed.key(), note.primary_key());
    assert_eq!(removed.entity_type.as_deref(), Some("Note"));
    let err = removed.old_image().unwrap_err();
    assert!(err.to_string().contains("KEYS_ONLY"), "{err}");
    assert_eq!(removed.new_image()?, None);
    // Not a user's, nor an article's.
    assert_eq!(changes::<User>(&records)?.0.len(), 0);
    assert_eq!(changes::<Article>(&records)?.0.len(), 0);
    Ok(())
}
