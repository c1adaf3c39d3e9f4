//! Stream records in both shapes: AWS Lambda's JSON (as AWS documents it) and the
//! Streams SDK's `Record`s built with its builders.

use super::*;
use crate::{Attribute, Binary, Collection, Entity, Table};
use aws_lambda_events::event::dynamodb::Event;
use aws_sdk_dynamodbstreams::types as streams;
use proptest::prelude::*;
use std::collections::{BTreeSet, HashMap};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct Shop;

#[derive(Attribute, Debug, Clone, PartialEq)]
struct Line {
    sku: String,
    qty: u32,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, pk = "CUSTOMER#{customer}", sk = "ORDER#{order}")]
struct Order {
    customer: String,
    order: String,
    total_cents: u64,
    note: Option<String>,
    lines: Vec<Line>,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, pk = "CUSTOMER#{customer}", sk = "PROFILE")]
struct Customer {
    customer: String,
    name: String,
}

/// Its sort key template renders `PROFILE` too: a keys-only record under a customer's
/// key may be a note's.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, pk = "CUSTOMER#{customer}", sk = "{note}")]
struct Note {
    customer: String,
    note: String,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, pk = "INVOICE#{id}", sk = "INVOICE")]
struct Invoice {
    id: String,
    amount: u64,
}

/// Every attribute type, a compressed field and a free-form value.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, pk = "DOC#{id}", sk = "DOC#{rev}")]
struct Doc {
    id: String,
    rev: i64,
    title: String,
    flag: bool,
    ratio: f64,
    count: Option<u64>,
    tags: BTreeSet<String>,
    blob: Binary,
    lines: Vec<Line>,
    props: HashMap<String, i32>,
    extra: AttributeValue,
    #[dynamo(compress = "gzip")]
    body: String,
}

/// Versioned: its revisions share its partition (`crate::history`).
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, pk = "ARTICLE#{article}", sk = "ARTICLE", history)]
struct Article {
    article: String,
    text: String,
    #[dynamo(version)]
    version: u64,
}

#[derive(Collection, Debug, PartialEq)]
enum CustomerView {
    Customer(Customer),
    Order(Order),
}

fn order() -> Order {
    Order {
        customer: "c-1".into(),
        order: "o-7".into(),
        total_cents: 1250,
        note: Some("gift".into()),
        lines: vec![Line {
            sku: "A-1".into(),
            qty: 2,
        }],
    }
}

/// A Lambda event in the shape AWS documents
/// (<https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html>): an order inserted, then
/// modified, then removed from a `KEYS_ONLY` stream, and an invoice inserted.
const LAMBDA_EVENT: &str = include_str!("lambda_event.json");

fn lambda_records(json: &str) -> Vec<StreamRecord> {
    let event: Event = serde_json::from_str(json).unwrap();
    event
        .records
        .into_iter()
        .map(|r| StreamRecord::from_lambda(r).unwrap())
        .collect()
}

#[test]
fn lambda_records_decode_into_entities() {
    let records = lambda_records(LAMBDA_EVENT);
    let before = Order {
        total_cents: 1000,
        note: None,
        ..order()
    };

    let insert = records[0].decode::<Order>().unwrap().unwrap();
    assert_eq!(insert.event, EventName::Insert);
    assert_eq!(insert.key(), order().primary_key());
    assert_eq!(insert.old, Image::Absent);
    assert_eq!(insert.old_image().unwrap(), None);
    assert_eq!(insert.new_image().unwrap(), Some(&before));
    assert_eq!(insert.entity_type.as_deref(), Some("Order"));
    assert_eq!(insert.view_type, Some(ViewType::NewAndOldImages));
    assert_eq!(
        insert.sequence_number.as_deref(),
        Some("13021600000000001596893679")
    );
    assert_eq!(
        insert.approximate_creation_time,
        Some(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1479499740))
    );
    assert_eq!(
        insert.event_id.as_deref(),
        Some("c4ca4238a0b923820dcc509a6f75849b")
    );
    assert!(!insert.by_ttl);

    let modify = records[1].decode::<Order>().unwrap().unwrap();
    assert_eq!(modify.event, EventName::Modify);
    assert_eq!(modify.old_image().unwrap(), Some(&before));
    assert_eq!(modify.new_image().unwrap(), Some(&order()));

    // A REMOVE with only keys (KEYS_ONLY), by TTL.
    let remove = records[2].decode::<Order>().unwrap().unwrap();
    assert_eq!(remove.event, EventName::Remove);
    assert_eq!(remove.key(), order().primary_key());
    assert_eq!(remove.new, Image::Absent);
    assert_eq!(remove.old, Image::NotInView);
    assert_eq!(remove.entity_type.as_deref(), Some("Order"));
    assert!(remove.by_ttl);
    match remove.old_image() {
        Err(Error::Stream(StreamError::ImageNotInView {
            entity: "Order",
            event: EventName::Remove,
            image: ImageKind::Old,
            view_type: Some(ViewType::KeysOnly),
        })) => {}
        other => panic!("{other:?}"),
    }

    // An invoice's record is no order's and no customer view's: a clear `None`.
    assert!(records[3].decode::<Order>().unwrap().is_none());
    assert!(records[3].decode::<CustomerView>().unwrap().is_none());
    assert_eq!(records[3].entity_type::<Shop>(), Some("Invoice"));
    let invoice = records[3].decode::<Invoice>().unwrap().unwrap();
    assert_eq!(
        invoice.new_image().unwrap(),
        Some(&Invoice {
            id: "i-1".into(),
            amount: 99
        })
    );
}

#[test]
fn collections_decode_their_members_and_nothing_else() {
    let records = lambda_records(LAMBDA_EVENT);
    let change = records[1].decode::<CustomerView>().unwrap().unwrap();
    assert_eq!(
        change.new.as_ref(),
        Some(&CustomerView::Order(order())),
        "{change:?}"
    );
    // Keys only: the key templates of an order render it, and no other type's.
    let removed = records[2].decode::<CustomerView>().unwrap().unwrap();
    assert_eq!(removed.entity_type.as_deref(), Some("Order"));
    assert_eq!(removed.old, Image::NotInView);

    let customer = Customer {
        customer: "c-1".into(),
        name: "Ada".into(),
    };
    let record = StreamRecord::new(EventName::Insert, Item::new())
        .with_new_image(customer.to_item().unwrap());
    let change = record.decode::<CustomerView>().unwrap().unwrap();
    assert_eq!(
        change.new.into_option(),
        Some(CustomerView::Customer(customer))
    );
}

#[test]
fn malformed_images_are_typed_decode_errors() {
    // The MODIFY record with a total that is not a number.
    let json = LAMBDA_EVENT.replacen(
        r#""total_cents": { "N": "1250" }"#,
        r#""total_cents": { "S": "lots" }"#,
        1,
    );
    let records = lambda_records(&json);
    match records[1].decode::<Order>() {
        Err(Error::Decode(e)) => {
            assert_eq!(e.entity, "Order");
            assert_eq!(e.attribute.as_deref(), Some("total_cents"));
            assert_eq!(e.key.as_deref(), Some("PK=CUSTOMER#c-1, SK=ORDER#o-7"));
            assert_eq!(
                e.kind,
                crate::DecodeErrorKind::WrongType {
                    expected: "N",
                    found: "S"
                }
            );
        }
        other => panic!("{other:?}"),
    }
    // An image whose fields claim another key than the record's: refused, as on a read.
    let json = LAMBDA_EVENT.replacen(
        r#""order": { "S": "o-7" }, "total_cents": { "N": "1000" }"#,
        r#""order": { "S": "o-8" }, "total_cents": { "N": "1000" }"#,
        1,
    );
    match lambda_records(&json)[0].decode::<Order>() {
        Err(Error::Decode(e)) => {
            assert_eq!(e.attribute.as_deref(), Some("SK"));
            assert!(matches!(e.kind, crate::DecodeErrorKind::KeyMismatch { .. }));
        }
        other => panic!("{other:?}"),
    }
    // An image under another key than the record's `Keys`.
    let json = LAMBDA_EVENT.replacen(
        r#""Keys": { "PK": { "S": "CUSTOMER#c-1" }, "SK": { "S": "ORDER#o-7" } }"#,
        r#""Keys": { "PK": { "S": "CUSTOMER#c-1" }, "SK": { "S": "ORDER#o-9" } }"#,
        1,
    );
    match lambda_records(&json)[0].decode::<Order>() {
        Err(Error::Decode(e)) => {
            assert_eq!(e.attribute.as_deref(), Some("SK"));
            assert_eq!(
                e.kind,
                crate::DecodeErrorKind::KeyMismatch {
                    expected: Some("ORDER#o-9".into()),
                    found: "ORDER#o-7".into()
                }
            );
        }
        other => panic!("{other:?}"),
    }
    // A key attribute of the wrong type.
    let json = LAMBDA_EVENT.replacen(
        r#""Keys": { "PK": { "S": "INVOICE#i-1" }"#,
        r#""Keys": { "PK": { "N": "1" }"#,
        1,
    );
    match lambda_records(&json)[3].decode::<Invoice>() {
        Err(Error::Decode(e)) => assert_eq!(e.attribute.as_deref(), Some("PK")),
        other => panic!("{other:?}"),
    }
    // An unknown event name is refused when the record is converted.
    let event: Event =
        serde_json::from_str(&LAMBDA_EVENT.replacen("\"INSERT\"", "\"UPSERT\"", 1)).unwrap();
    match StreamRecord::from_lambda(event.records[0].clone()) {
        Err(Error::Stream(StreamError::UnknownEventName(name))) => assert_eq!(name, "UPSERT"),
        other => panic!("{other:?}"),
    }
}

/// The sample event of the Lambda documentation, verbatim: a table keyed by a number
/// `Id`. Not this model's table: a typed error, not a panic and not garbage.
#[test]
fn records_of_a_table_with_other_keys_are_refused() {
    let sample = r#"{"Records":[{"eventID":"1","eventVersion":"1.0","dynamodb":{"Keys":{"Id":{"N":"101"}},"NewImage":{"Message":{"S":"New item!"},"Id":{"N":"101"}},"StreamViewType":"NEW_AND_OLD_IMAGES","SequenceNumber":"111","SizeBytes":26},"awsRegion":"us-west-2","eventName":"INSERT","eventSourceARN":"arn:aws:dynamodb:us-west-2:111122223333:table/TestTable/stream/2015-05-11T21:21:33.291","eventSource":"aws:dynamodb"}]}"#;
    let records = lambda_records(sample);
    assert_eq!(records[0].approximate_creation_time, None);
    match records[0].decode::<Order>() {
        Err(Error::Stream(StreamError::MissingKey { attribute: "PK" })) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn keys_only_records_are_attributed_by_key_templates() {
    let keys = |pk: &str, sk: &str| {
        Item::from([
            ("PK".to_owned(), AttributeValue::S(pk.into())),
            ("SK".to_owned(), AttributeValue::S(sk.into())),
        ])
    };
    let removed = |pk, sk| StreamRecord::new(EventName::Remove, keys(pk, sk));
    // A customer's profile key is also a note's (`sk = "{note}"`): decoded, but the
    // entity type is not known.
    let profile = removed("CUSTOMER#c-1", "PROFILE");
    let change = profile.decode::<Customer>().unwrap().unwrap();
    assert_eq!(change.entity_type, None);
    assert_eq!(change.raw_key.sk.as_deref(), Some("PROFILE"));
    assert!(profile.decode::<Note>().unwrap().is_some());
    assert!(profile.decode::<Order>().unwrap().is_none());
    // With an image, the entity-type attribute decides.
    let note = Note {
        customer: "c-1".into(),
        note: "PROFILE".into(),
    };
    let with_image = removed("CUSTOMER#c-1", "PROFILE").with_old_image(note.to_item().unwrap());
    assert!(with_image.decode::<Customer>().unwrap().is_none());
    assert_eq!(
        with_image
            .decode::<Note>()
            .unwrap()
            .unwrap()
            .old_image()
            .unwrap(),
        Some(&note)
    );
    // No template renders it, or it is a chunk item of a chunked attribute.
    assert!(
        removed("INVOICE#i-1", "PROFILE")
            .decode::<Customer>()
            .unwrap()
            .is_none()
    );
    assert!(
        removed("_CHUNK#abc#000000", "_CHUNK")
            .decode::<Note>()
            .unwrap()
            .is_none()
    );
    // An INSERT from a KEYS_ONLY stream: the new image is the one missing.
    let inserted = StreamRecord::new(EventName::Insert, keys("CUSTOMER#c-1", "ORDER#o-7"))
        .with_view_type(ViewType::KeysOnly);
    let change = inserted.decode::<Order>().unwrap().unwrap();
    assert_eq!(change.old_image().unwrap(), None);
    let err = change.new_image().unwrap_err();
    assert!(err.to_string().contains("KEYS_ONLY"), "{err}");
}

/// A revision of a versioned entity is its history, not the entity: with keys only
/// (by its key templates) and with an image (by its entity type and sort key).
#[test]
fn revisions_are_not_the_entity() {
    let latest = Article::key("a-1").into_raw().unwrap();
    let latest_sk = latest.sk.clone().unwrap();
    assert!(
        latest_sk.starts_with("v00000000000000000000#"),
        "{latest_sk}"
    );
    let revision_sk = latest_sk.replacen("v00000000000000000000", "v00000000000000000003", 1);
    let keys = |sk: &str| {
        Item::from([
            ("PK".to_owned(), AttributeValue::S(latest.pk.clone())),
            ("SK".to_owned(), AttributeValue::S(sk.to_owned())),
        ])
    };
    let removed = |sk| StreamRecord::new(EventName::Remove, keys(sk));
    assert!(removed(&latest_sk).decode::<Article>().unwrap().is_some());
    assert!(removed(&revision_sk).decode::<Article>().unwrap().is_none());

    let article = Article {
        article: "a-1".into(),
        text: "t".into(),
        version: 3,
    };
    let mut revision = article.to_item().unwrap();
    revision.insert("SK".into(), AttributeValue::S(revision_sk.clone()));
    let inserted =
        StreamRecord::new(EventName::Insert, keys(&revision_sk)).with_new_image(revision);
    assert!(inserted.decode::<Article>().unwrap().is_none());
    let inserted = StreamRecord::new(EventName::Insert, keys(&latest_sk))
        .with_new_image(article.to_item().unwrap());
    assert_eq!(
        inserted
            .decode::<Article>()
            .unwrap()
            .unwrap()
            .new_image()
            .unwrap(),
        Some(&article)
    );
}

#[test]
fn an_image_of_another_type_under_the_key_is_not_decoded() {
    // A MODIFY that replaced a note with an order under the same key (written outside
    // the crate, whose puts check the stored type): for orders, it is an insert.
    let mut old = Note {
        customer: "c-1".into(),
        note: "x".into(),
    }
    .to_item()
    .unwrap();
    let new = order().to_item().unwrap();
    old.insert("SK".into(), new["SK"].clone());
    let record = StreamRecord::new(EventName::Modify, Item::new())
        .with_old_image(old)
        .with_new_image(new);
    let change = record.decode::<Order>().unwrap().unwrap();
    assert_eq!(change.old, Image::OtherEntity(Some("Note".into())));
    assert_eq!(change.old_image().unwrap(), None);
    assert_eq!(change.new_image().unwrap(), Some(&order()));
}

fn sdk_value(value: AttributeValue) -> streams::AttributeValue {
    use aws_sdk_dynamodbstreams::primitives::Blob;
    match value {
        AttributeValue::S(s) => streams::AttributeValue::S(s),
        AttributeValue::N(n) => streams::AttributeValue::N(n),
        AttributeValue::B(b) => streams::AttributeValue::B(Blob::new(b.into_inner())),
        AttributeValue::Bool(b) => streams::AttributeValue::Bool(b),
        AttributeValue::Null(n) => streams::AttributeValue::Null(n),
        AttributeValue::Ss(v) => streams::AttributeValue::Ss(v),
        AttributeValue::Ns(v) => streams::AttributeValue::Ns(v),
        AttributeValue::Bs(v) => {
            streams::AttributeValue::Bs(v.into_iter().map(|b| Blob::new(b.into_inner())).collect())
        }
        AttributeValue::L(v) => streams::AttributeValue::L(v.into_iter().map(sdk_value).collect()),
        AttributeValue::M(m) => {
            streams::AttributeValue::M(m.into_iter().map(|(k, v)| (k, sdk_value(v))).collect())
        }
        other => panic!("{other:?}"),
    }
}

fn sdk_item(item: &Item) -> HashMap<String, streams::AttributeValue> {
    item.iter()
        .map(|(k, v)| (k.clone(), sdk_value(v.clone())))
        .collect()
}

fn key_only(item: &Item) -> Item {
    item.iter()
        .filter(|(k, _)| *k == "PK" || *k == "SK")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn sdk_record(
    event: streams::OperationType,
    view: streams::StreamViewType,
    keys: &Item,
    old: Option<&Item>,
    new: Option<&Item>,
) -> streams::Record {
    streams::Record::builder()
        .event_id("e-1")
        .event_name(event)
        .event_source("aws:dynamodb")
        .aws_region("us-east-1")
        .dynamodb(
            streams::StreamRecord::builder()
                .set_keys(Some(sdk_item(keys)))
                .set_old_image(old.map(sdk_item))
                .set_new_image(new.map(sdk_item))
                .sequence_number("100")
                .size_bytes(10)
                .stream_view_type(view)
                .approximate_creation_date_time(aws_smithy_types::DateTime::from_secs(
                    1_700_000_000,
                ))
                .build(),
        )
        .build()
}

#[test]
fn sdk_records_decode_into_entities() {
    use streams::{OperationType as Op, StreamViewType as View};
    let after = order();
    let before = Order {
        total_cents: 10,
        ..order()
    };
    let (old, new) = (before.to_item().unwrap(), after.to_item().unwrap());
    let keys = key_only(&new);

    let record = sdk_record(
        Op::Modify,
        View::NewAndOldImages,
        &keys,
        Some(&old),
        Some(&new),
    );
    let change = StreamRecord::from_sdk(record)
        .unwrap()
        .decode::<Order>()
        .unwrap()
        .unwrap();
    assert_eq!(change.event, EventName::Modify);
    assert_eq!(change.old_image().unwrap(), Some(&before));
    assert_eq!(change.new_image().unwrap(), Some(&after));
    assert_eq!(change.sequence_number.as_deref(), Some("100"));
    assert_eq!(change.event_id.as_deref(), Some("e-1"));
    assert_eq!(
        change.approximate_creation_time,
        Some(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000))
    );

    // A MODIFY from a NEW_IMAGE stream: the old image is reported missing, by view type.
    let record = sdk_record(Op::Modify, View::NewImage, &keys, None, Some(&new));
    let change = StreamRecord::from_sdk(record)
        .unwrap()
        .decode::<Order>()
        .unwrap()
        .unwrap();
    assert_eq!(change.new_image().unwrap(), Some(&after));
    assert!(matches!(
        change.old_image(),
        Err(Error::Stream(StreamError::ImageNotInView {
            view_type: Some(ViewType::NewImage),
            image: ImageKind::Old,
            ..
        }))
    ));

    // A REMOVE (OLD_IMAGE view), deleted by TTL.
    let mut record = sdk_record(Op::Remove, View::OldImage, &keys, Some(&old), None);
    record.user_identity = Some(
        streams::Identity::builder()
            .r#type("Service")
            .principal_id("dynamodb.amazonaws.com")
            .build(),
    );
    let change = StreamRecord::from_sdk(record)
        .unwrap()
        .decode::<Order>()
        .unwrap()
        .unwrap();
    assert_eq!(change.event, EventName::Remove);
    assert!(change.by_ttl);
    assert_eq!(change.old_image().unwrap(), Some(&before));
    assert_eq!(change.new_image().unwrap(), None);

    // A REMOVE with keys only.
    let record = sdk_record(Op::Remove, View::KeysOnly, &keys, None, None);
    let change = StreamRecord::from_sdk(record)
        .unwrap()
        .decode::<Order>()
        .unwrap()
        .unwrap();
    assert_eq!(change.key(), after.primary_key());
    assert!(change.old_image().is_err());

    // Another entity type's record.
    let invoice = Invoice {
        id: "i-1".into(),
        amount: 5,
    }
    .to_item()
    .unwrap();
    let record = sdk_record(
        Op::Insert,
        View::NewAndOldImages,
        &key_only(&invoice),
        None,
        Some(&invoice),
    );
    let record = StreamRecord::from_sdk(record).unwrap();
    assert!(record.decode::<Order>().unwrap().is_none());
    assert!(record.decode::<CustomerView>().unwrap().is_none());

    // A malformed image: a line whose quantity is not a number.
    let mut bad = new.clone();
    bad.insert(
        "lines".into(),
        AttributeValue::L(vec![AttributeValue::M(HashMap::from([
            ("sku".to_owned(), AttributeValue::S("A-1".into())),
            ("qty".to_owned(), AttributeValue::Bool(true)),
        ]))]),
    );
    let record = sdk_record(Op::Insert, View::NewImage, &keys, None, Some(&bad));
    match StreamRecord::from_sdk(record).unwrap().decode::<Order>() {
        Err(Error::Decode(e)) => {
            assert_eq!(e.attribute.as_deref(), Some("lines[0].qty"));
        }
        other => panic!("{other:?}"),
    }

    // A record without its change section, or without an event name.
    let mut record = sdk_record(Op::Insert, View::NewImage, &keys, None, Some(&new));
    record.dynamodb = None;
    assert!(matches!(
        StreamRecord::from_sdk(record),
        Err(Error::Stream(StreamError::MissingChange))
    ));
    let mut record = sdk_record(Op::Insert, View::NewImage, &keys, None, Some(&new));
    record.event_name = None;
    assert!(matches!(
        StreamRecord::from_sdk(record),
        Err(Error::Stream(StreamError::UnknownEventName(_)))
    ));
}

/// The JSON Lambda delivers for a record with these images: serde_dynamo writes the
/// DynamoDB JSON (`{"S": ..}`, `{"B": base64}`, ...) Lambda uses.
fn lambda_json(event: &str, keys: &Item, old: Option<&Item>, new: Option<&Item>) -> String {
    let image = |item: &Item| serde_json::to_value(serde_dynamo::Item::from(item.clone())).unwrap();
    let mut change = serde_json::json!({
        "ApproximateCreationDateTime": 1_700_000_000,
        "Keys": image(keys),
        "SequenceNumber": "100",
        "SizeBytes": 10,
        "StreamViewType": "NEW_AND_OLD_IMAGES",
    });
    if let Some(old) = old {
        change["OldImage"] = image(old);
    }
    if let Some(new) = new {
        change["NewImage"] = image(new);
    }
    serde_json::json!({"Records": [{
        "eventID": "e-1", "eventName": event, "eventVersion": "1.1",
        "eventSource": "aws:dynamodb", "awsRegion": "us-east-1",
        "dynamodb": change,
    }]})
    .to_string()
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        (any::<i32>(), 0u32..1_000_000).prop_map(|(i, f)| format!("{i}.{f}")),
        Just("1E+125".to_owned()),
        Just("-0.000000001".to_owned()),
    ]
}

/// Any attribute value, nested up to three levels (also the encryption tests').
pub(crate) fn value() -> impl Strategy<Value = AttributeValue> {
    use aws_sdk_dynamodb::primitives::Blob;
    let leaf = prop_oneof![
        "\\PC{0,8}".prop_map(AttributeValue::S),
        number().prop_map(AttributeValue::N),
        proptest::collection::vec(any::<u8>(), 1..16).prop_map(|b| AttributeValue::B(Blob::new(b))),
        any::<bool>().prop_map(AttributeValue::Bool),
        Just(AttributeValue::Null(true)),
        proptest::collection::btree_set("\\PC{1,6}", 1..4)
            .prop_map(|s| AttributeValue::Ss(s.into_iter().collect())),
        proptest::collection::btree_set(any::<i32>(), 1..4)
            .prop_map(|s| AttributeValue::Ns(s.into_iter().map(|n| n.to_string()).collect())),
        proptest::collection::btree_set(proptest::collection::vec(any::<u8>(), 1..6), 1..4)
            .prop_map(|s| AttributeValue::Bs(s.into_iter().map(Blob::new).collect())),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(AttributeValue::L),
            proptest::collection::hash_map("\\PC{1,6}", inner, 0..4).prop_map(AttributeValue::M),
        ]
    })
}

fn line() -> impl Strategy<Value = Line> {
    ("\\PC{0,6}", any::<u32>()).prop_map(|(sku, qty)| Line { sku, qty })
}

fn doc() -> impl Strategy<Value = Doc> {
    (
        (
            "\\PC{1,8}",
            any::<i64>(),
            "\\PC{0,12}",
            any::<bool>(),
            -1e9f64..1e9,
        ),
        (
            proptest::option::of(any::<u64>()),
            proptest::collection::btree_set("\\PC{1,6}", 0..4),
            proptest::collection::vec(any::<u8>(), 0..32),
            proptest::collection::vec(line(), 0..3),
            proptest::collection::hash_map("\\PC{1,6}", any::<i32>(), 0..3),
            value(),
            "\\PC{0,64}",
        ),
    )
        .prop_map(
            |((id, rev, title, flag, ratio), (count, tags, blob, lines, props, extra, body))| Doc {
                id,
                rev,
                title,
                flag,
                ratio,
                count,
                tags,
                blob: Binary(blob),
                lines,
                props,
                extra,
                body,
            },
        )
}

fn any_order() -> impl Strategy<Value = Order> {
    (
        "\\PC{1,8}",
        "\\PC{1,8}",
        any::<u64>(),
        proptest::option::of("\\PC{0,8}"),
        proptest::collection::vec(line(), 0..3),
    )
        .prop_map(|(customer, order, total_cents, note, lines)| Order {
            customer,
            order,
            total_cents,
            note,
            lines,
        })
}

/// `before` → `after` as a MODIFY in both shapes, decoded back.
fn round_trip<E: Entity + Clone + PartialEq + std::fmt::Debug>(
    before: &E,
    after: &E,
) -> Result<(), TestCaseError> {
    let (old, new) = (before.to_item().unwrap(), after.to_item().unwrap());
    let keys = key_only(&new);
    let mut old_keyed = old.clone();
    // One key for both images (a MODIFY does not move an item).
    old_keyed.extend(keys.clone());
    // The callers give both versions the same key fields: the images share the key.
    let before = E::from_item(old_keyed.clone()).unwrap();

    let json = lambda_json("MODIFY", &keys, Some(&old_keyed), Some(&new));
    let event: Event = serde_json::from_str(&json).unwrap();
    let from_lambda = StreamRecord::from_lambda(event.records[0].clone()).unwrap();
    prop_assert_eq!(from_lambda.new_image.as_ref(), Some(&new));
    let change = from_lambda.decode::<E>().unwrap().unwrap();
    prop_assert_eq!(change.old_image().unwrap(), Some(&before));
    prop_assert_eq!(change.new_image().unwrap(), Some(after));
    prop_assert_eq!(change.key(), after.primary_key());

    let record = sdk_record(
        streams::OperationType::Modify,
        streams::StreamViewType::NewAndOldImages,
        &keys,
        Some(&old_keyed),
        Some(&new),
    );
    let from_sdk = StreamRecord::from_sdk(record).unwrap();
    prop_assert_eq!(from_sdk.new_image.as_ref(), Some(&new));
    let change = from_sdk.decode::<E>().unwrap().unwrap();
    prop_assert_eq!(change.old_image().unwrap(), Some(&before));
    prop_assert_eq!(change.new_image().unwrap(), Some(after));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any item the crate writes comes back from a stream record, in either shape, as
    /// the entity it was written from (every attribute type, nested values, a compressed
    /// field, any value of a free-form attribute).
    #[test]
    fn written_items_round_trip_through_both_shapes(before in doc(), after in doc(), o1 in any_order(), o2 in any_order()) {
        let before = Doc { id: after.id.clone(), rev: after.rev, ..before };
        round_trip(&before, &after)?;
        let o1 = Order { customer: o2.customer.clone(), order: o2.order.clone(), ..o1 };
        round_trip(&o1, &o2)?;
    }

    /// Any value converts between the Streams SDK's and the DynamoDB SDK's types without
    /// loss, however nested.
    #[test]
    fn streams_values_convert_without_loss(v in value()) {
        let converted = sdk::convert_value(sdk_value(v.clone()), &mut String::new).unwrap();
        prop_assert_eq!(converted, v);
    }
}

/// A table another program writes: no entity-type attribute, entities identified by
/// their key templates.
#[derive(Table)]
#[dynamo(pk = "DeviceID", sk = "Reading")]
struct Devices;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Devices, identify = "keys", store_key_fields = false,
         pk = "d#{device}", sk = "R#{at}")]
struct Reading {
    #[dynamo(key_format = "unpadded")]
    device: u64,
    #[dynamo(key_format = "unpadded")]
    at: u64,
    value: i64,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Devices, identify = "keys", store_key_fields = false,
         pk = "d#{device}", sk = "PROFILE")]
struct Device {
    #[dynamo(key_format = "unpadded")]
    device: u64,
    name: String,
}

/// Untyped images of entities identified by their keys decode as what their keys say;
/// an untyped image under a key no template renders is nobody's, in both shapes.
#[test]
fn untyped_images_are_identified_by_their_keys() {
    let row = |pk: &str, sk: &str, extra: (&str, AttributeValue)| {
        Item::from([
            ("DeviceID".to_owned(), AttributeValue::S(pk.into())),
            ("Reading".to_owned(), AttributeValue::S(sk.into())),
            (extra.0.to_owned(), extra.1),
        ])
    };
    let keys = |item: &Item| -> Item {
        item.iter()
            .filter(|(k, _)| *k == "DeviceID" || *k == "Reading")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    let reading = row(
        "d#12",
        "R#1700000000",
        ("value", AttributeValue::N("-3".into())),
    );
    let profile = row(
        "d#12",
        "PROFILE",
        ("name", AttributeValue::S("pump".into())),
    );
    let foreign = row("x#12", "R#1", ("value", AttributeValue::N("1".into())));
    let expected = Reading {
        device: 12,
        at: 1_700_000_000,
        value: -3,
    };
    for (item, is_reading, is_device) in [
        (&reading, true, false),
        (&profile, false, true),
        (&foreign, false, false),
    ] {
        let records = [
            lambda_records(&lambda_json("INSERT", &keys(item), None, Some(item))).remove(0),
            StreamRecord::from_sdk(sdk_record(
                streams::OperationType::Insert,
                streams::StreamViewType::NewAndOldImages,
                &keys(item),
                None,
                Some(item),
            ))
            .unwrap(),
        ];
        for record in records {
            let as_reading = record.decode::<Reading>().unwrap();
            assert_eq!(as_reading.is_some(), is_reading, "{item:?}");
            if let Some(change) = as_reading {
                assert_eq!(change.new_image().unwrap(), Some(&expected));
            }
            assert_eq!(
                record.decode::<Device>().unwrap().is_some(),
                is_device,
                "{item:?}"
            );
        }
    }
    // Keys only (a REMOVE from a KEYS_ONLY stream): the templates decide.
    let removed = StreamRecord::new(EventName::Remove, keys(&reading));
    let change = removed.decode::<Reading>().unwrap().unwrap();
    assert_eq!(change.entity_type.as_deref(), Some("Reading"));
    assert!(removed.decode::<Device>().unwrap().is_none());
}

#[test]
fn the_record_names_keep_their_paths_and_spellings() {
    // Defined below `error`, reachable at both public paths as the same types.
    let events: [dynamo_model::error::EventName; 3] =
        [EventName::Insert, EventName::Modify, EventName::Remove];
    let views: [dynamo_model::error::ViewType; 4] = [
        ViewType::KeysOnly,
        ViewType::NewImage,
        ViewType::OldImage,
        ViewType::NewAndOldImages,
    ];
    let images: [dynamo_model::error::ImageKind; 2] = [ImageKind::Old, ImageKind::New];
    let names = |names: &[String]| names.join(" ");
    assert_eq!(
        names(&events.map(|e| e.to_string())),
        "INSERT MODIFY REMOVE"
    );
    assert_eq!(
        names(&views.map(|v| v.to_string())),
        "KEYS_ONLY NEW_IMAGE OLD_IMAGE NEW_AND_OLD_IMAGES"
    );
    assert_eq!(names(&images.map(|i| i.to_string())), "old new");
    for event in events {
        assert_eq!(EventName::parse(event.as_str()), Some(event));
    }
    for view in views {
        assert_eq!(ViewType::parse(view.as_str()), Some(view));
    }
    assert_eq!(EventName::parse("insert"), None);
    assert_eq!(ViewType::parse("NEW_AND_OLD"), None);
}
