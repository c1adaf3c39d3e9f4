//! DynamoDB Streams against DynamoDB Local's own stream: the records of the crate's
//! writes (versioned history, chunked and compressed attributes, several entity types in
//! one table) decode, in both shapes, into exactly the changes of each entity.

use crate::chunk::Message;
use crate::common::*;
use crate::history::{article_revised_once, Article};
use aws_lambda_events::event::dynamodb::{Event, EventRecord};
use aws_sdk_dynamodbstreams::types::{Record, ShardIteratorType};
use dynamo_model::aws_sdk_dynamodb::types::{AttributeValue, StreamViewType};
use dynamo_model::stream::{Change, EventName, Image, StreamRecord, ViewType};
use dynamo_model::{local, Entity, Item};
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

/// Every record of the stream, once `expected` are in (DynamoDB Local serves them at once;
/// the deadline only bounds a failing test).
pub(crate) async fn read_stream(arn: &str, expected: usize) -> Result<Vec<Record>, BoxError> {
    let client = streams_client().await?;
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

/// The first `count` records of the stream `arn` (exactly that many), as the stream
/// client gives them and as a Lambda handler receives them.
pub(crate) async fn records_both_ways(arn: &str, count: usize) -> Res<[Vec<StreamRecord>; 2]> {
    let raw = read_stream(arn, count).await?;
    assert_eq!(raw.len(), count, "{raw:#?}");
    let from_sdk: Vec<StreamRecord> = raw
        .into_iter()
        .map(StreamRecord::from_sdk)
        .collect::<Result<_, _>>()?;
    let from_lambda = from_sdk.iter().map(as_lambda).collect::<Result<_, _>>()?;
    Ok([from_sdk, from_lambda])
}

/// The record in AWS Lambda's shape: the JSON the Lambda service delivers, parsed.
pub(crate) fn as_lambda(record: &StreamRecord) -> Result<StreamRecord, BoxError> {
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
    article_revised_once(&db, "a-1").await?;
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

    let [from_sdk, from_lambda] = records_both_ways(&arn, 13).await?;

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

// ----------------------------------------------------------- decoding hostile records

fn user_item(id: &str) -> Result<Item, dynamo_model::Error> {
    User::sample(id).to_item()
}

/// The table key attributes (`PK`, `SK`) of `item`: what a stream record's `Keys` holds.
pub fn keys_of(item: &Item) -> Item {
    item.iter()
        .filter(|(k, _)| *k == "PK" || *k == "SK")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// An image that lacks the key attributes but whose fields are another item's: decoding
/// it under the record's key would make `Change::key` name an item other than the one
/// decoded. It must be refused (or decoded as the record's item) — never a mismatch.
#[test]
fn an_image_without_keys_is_not_decoded_under_another_key() {
    let Ok(a) = user_item("a") else {
        panic!("item")
    };
    let Ok(mut b) = user_item("b") else {
        panic!("item")
    };
    b.remove("PK");
    b.remove("SK");
    let record = StreamRecord::new(EventName::Modify, keys_of(&a))
        .with_old_image(a.clone())
        .with_new_image(b);
    match record.decode::<User>() {
        Err(_) => {}
        Ok(None) => {}
        Ok(Some(change)) => {
            let key = change.key();
            if let Ok(Some(new)) = change.new_image() {
                assert_eq!(new.primary_key(), key, "decoded {new:?} under {key:?}");
            }
        }
    }
}

/// Hostile values: key attributes of the wrong type, numbers out of range or not
/// numbers, an entity type that is not a string, a list where a string is: each a typed
/// error or `None`, never a panic, never a wrong value.
#[test]
fn hostile_images_are_errors_not_panics() {
    let Ok(good) = user_item("h") else {
        panic!("item")
    };
    let keys = keys_of(&good);
    let mut cases: Vec<(&str, Item)> = Vec::new();
    for (name, attribute, value) in [
        ("huge count", "loginCount", num("99999999999999999999999")),
        ("negative count", "loginCount", num("-1")),
        ("exponent count", "loginCount", num("1e400")),
        ("fraction count", "loginCount", num("1.5")),
        ("nan count", "loginCount", num("NaN")),
        ("string count", "loginCount", s("3")),
        ("list name", "displayName", AttributeValue::L(vec![s("x")])),
        ("number type", "_type", num("1")),
        ("null id", "userId", AttributeValue::Null(true)),
        ("set tags", "tags", AttributeValue::Ns(vec!["1".into()])),
    ] {
        let mut item = good.clone();
        item.insert(attribute.to_owned(), value);
        cases.push((name, item));
    }
    let mut pk_number = good.clone();
    pk_number.insert("PK".into(), num("1"));
    cases.push(("number pk in image", pk_number));
    for (name, image) in cases {
        let record = StreamRecord::new(EventName::Insert, keys.clone())
            .with_new_image(image)
            .with_view_type(ViewType::NewImage);
        let outcome = std::panic::catch_unwind(|| record.decode::<User>());
        match outcome {
            Err(_) => panic!("{name}: panicked"),
            Ok(Err(_)) | Ok(Ok(None)) => {}
            Ok(Ok(Some(change))) => match &change.new {
                Image::Present(user) => {
                    // Only the number-typed `_type` could be accepted (by its key); the
                    // value must then be what was written.
                    assert_eq!(name, "number type", "{name}: decoded {user:?}");
                    assert_eq!(user, &User::sample("h"));
                }
                other => {
                    let _ = other;
                }
            },
        }
    }
    // Keys of the wrong type: an error, no panic.
    let mut bad_keys = keys.clone();
    bad_keys.insert("SK".into(), AttributeValue::Bool(true));
    let record = StreamRecord::new(EventName::Remove, bad_keys);
    assert!(record.decode::<User>().is_err());
}

/// A REMOVE with neither keys nor images is refused; a REMOVE with keys only (no view
/// type named) decodes to the key and an old image "not in view", never a guess.
#[test]
fn a_remove_with_keys_only_decodes_its_key_and_no_guessed_image() {
    let record = StreamRecord::new(EventName::Remove, Item::new());
    assert!(record.decode::<User>().is_err());
    let Ok(item) = user_item("r") else {
        panic!("item")
    };
    let record = StreamRecord::new(EventName::Remove, keys_of(&item));
    let Ok(Some(change)) = record.decode::<User>() else {
        panic!("a user's key")
    };
    assert_eq!(change.key(), User::key("r"));
    assert!(matches!(change.old, Image::NotInView));
    assert!(matches!(change.new, Image::Absent));
    assert!(change.old_image().is_err());
    assert!(matches!(change.new_image(), Ok(None)));
    // The same record is not an order's.
    assert!(matches!(record.decode::<Order>(), Ok(None)));
}

/// An image under the record's key whose entity type says `User` but which the record's
/// `Keys` put under an order's key: refused, not decoded as either.
#[test]
fn images_and_keys_that_disagree_are_refused() {
    let Ok(user) = user_item("d") else {
        panic!("item")
    };
    let order_keys: Item = [
        ("PK".to_owned(), s("USER#d")),
        ("SK".to_owned(), s("ORDER#2024-01-01T00:00:00Z#o1")),
    ]
    .into_iter()
    .collect();
    let record = StreamRecord::new(EventName::Insert, order_keys).with_new_image(user);
    assert!(record.decode::<User>().is_err());
    assert!(!matches!(record.decode::<Order>(), Ok(Some(_))));
}

/// Lambda records of hostile shapes: unknown event names, a record of a table with other
/// key names: errors, not panics.
#[test]
fn lambda_records_of_hostile_shapes_are_errors_not_panics() {
    use aws_lambda_events::event::dynamodb::Event;
    let event = |name: &str, keys: &str| -> Event {
        let json = format!(
            r#"{{"Records": [{{"eventID": "1", "eventName": "{name}", "eventVersion": "1.1",
            "eventSource": "aws:dynamodb", "awsRegion": "us-east-1",
            "dynamodb": {{"Keys": {keys}, "SequenceNumber": "1", "SizeBytes": 1,
            "StreamViewType": "KEYS_ONLY"}}}}]}}"#
        );
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
    };
    let ok_keys = r#"{"PK": {"S": "USER#l"}, "SK": {"S": "PROFILE"}}"#;
    for bad in ["insert", "DELETE", ""] {
        let record = event(bad, ok_keys).records.remove(0);
        assert!(StreamRecord::from_lambda(record).is_err(), "{bad}");
    }
    let other = event(
        "REMOVE",
        r#"{"pk": {"S": "USER#l"}, "sk": {"S": "PROFILE"}}"#,
    );
    let record = StreamRecord::from_lambda(other.records[0].clone());
    let decoded = record.map(|r| r.decode::<User>());
    assert!(matches!(decoded, Ok(Err(_))), "{decoded:?}");
    let numbers = event("REMOVE", r#"{"PK": {"N": "1"}, "SK": {"S": "PROFILE"}}"#);
    let decoded = StreamRecord::from_lambda(numbers.records[0].clone()).map(|r| r.decode::<User>());
    assert!(matches!(decoded, Ok(Err(_))), "{decoded:?}");
    let good = event("REMOVE", ok_keys);
    let decoded = StreamRecord::from_lambda(good.records[0].clone())
        .map(|r| r.decode::<User>().map(|c| c.map(|c| c.key())));
    assert!(
        matches!(decoded, Ok(Ok(Some(ref k))) if *k == User::key("l")),
        "{decoded:?}"
    );
}
