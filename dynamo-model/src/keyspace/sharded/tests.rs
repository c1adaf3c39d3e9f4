//! Computed key parts as `#[derive(Entity)]` generates them: keys from the source fields
//! only, every shard's partition, decoding that refuses a forged shard, index keys an
//! update recomputes, and key isolation from plain entities.
use crate::entity::{IndexChanges, Touch};
use crate::key::computed::{DayBucket, HourBucket, shard_of};
use crate::{DecodeErrorKind, Entity, Item, Key, Table, ValidationReason, registry};
use aws_sdk_dynamodb::types::AttributeValue;
use proptest::prelude::*;
use time::OffsetDateTime;
use time::macros::datetime;

#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
    lsi(name = "LSI1", sk = "LSI1SK")
)]
struct App;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "ORDERS#{created_at:date}#{order_id:shard(16)}",
         sk = "{created_at}#{order_id}",
         index(GSI1, pk = "STATUS#{status}#{order_id:shard(8)}", sk = "{created_at}"),
         index(LSI1, sk = "{total}"))]
struct Order {
    order_id: String,
    created_at: OffsetDateTime,
    status: String,
    total: u64,
    note: String,
}

/// The index reuses the table's random shard, which updates read back from the key.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "EVENTS#{at:hour}#{slot:random(10)}", sk = "{at}#{id}",
         index(GSI1, pk = "KIND#{kind}#{slot:random(10)}", sk = "{at}"))]
struct Event {
    id: String,
    at: OffsetDateTime,
    slot: u16,
    kind: String,
}

/// The shard source and the bucket source are ordinary (mutable) fields of the index.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "TICKET#{ticket_id}", sk = "TICKET",
         index(GSI1, pk = "QUEUE#{queue}#{assignee:shard(4)}", sk = "{opened_at:date}#{ticket_id}"))]
struct Ticket {
    ticket_id: String,
    queue: String,
    assignee: Option<String>,
    opened_at: OffsetDateTime,
}

/// A plain entity whose template starts like `Order`'s.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "ORDERS#{day}", sk = "{rest}")]
struct Plain {
    day: String,
    rest: String,
}

/// A plain entity with as many components as `Order`'s partition key, the last a
/// number (of another width than the shard's).
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "ORDERS#{day}#{n}", sk = "{rest}")]
struct Numbered {
    day: String,
    n: u8,
    rest: String,
}

const AT: OffsetDateTime = datetime!(2014-07-09 10:11:12 UTC);

fn order(id: &str) -> Order {
    Order {
        order_id: id.into(),
        created_at: AT,
        status: "PENDING".into(),
        total: 5,
        note: String::new(),
    }
}

fn s(item: &Item, attribute: &str) -> String {
    match item.get(attribute) {
        Some(AttributeValue::S(v)) => v.clone(),
        other => panic!("{attribute}: {other:?}"),
    }
}

#[test]
fn keys_are_computed_from_the_source_fields() {
    let key = Order::key(OrderKey {
        created_at: AT,
        order_id: "o-1",
    });
    let raw = key.raw().unwrap();
    assert_eq!(raw.pk, "ORDERS#2014-07-09#10"); // crc32("o-1") % 16 = 10
    assert_eq!(
        raw.sk.as_deref(),
        Some("2014-07-09T10:11:12.000000000Z#o-1")
    );
    assert_eq!(order("o-1").primary_key(), key);
    let item = order("o-1").to_item().unwrap();
    assert_eq!(s(&item, "PK"), "ORDERS#2014-07-09#10");
    assert_eq!(
        s(&item, "GSI1PK"),
        format!("STATUS#PENDING#{}", shard_of("o-1", 8))
    );
    assert_eq!(s(&item, "GSI1SK"), "2014-07-09T10:11:12.000000000Z");
    assert!(!item.contains_key("shard"));
    assert_eq!(Order::from_item(item).unwrap(), order("o-1"));
}

#[test]
fn a_sharded_partition_lists_every_shard() {
    // By the day's bucket or by any instant of the day.
    let by_day = Order::partition(DayBucket::new(2014, 7, 9).unwrap());
    let by_instant = Order::partition(datetime!(2014-07-09 23:59 UTC));
    assert_eq!(by_day.count(), 16);
    let values: Vec<String> = by_day
        .shards()
        .map(|p| p.value().unwrap().to_owned())
        .collect();
    let expected: Vec<String> = (0..16)
        .map(|i| format!("ORDERS#2014-07-09#{i:02}"))
        .collect();
    assert_eq!(values, expected);
    let again: Vec<String> = by_instant
        .into_shards()
        .iter()
        .map(|p| p.value().unwrap().to_owned())
        .collect();
    assert_eq!(again, expected);
    // Every item's partition is one of them.
    let pk = order("o-7").primary_key().into_raw().unwrap().pk;
    assert!(expected.contains(&pk));
    // One shard, for tooling; out of range is refused when used.
    assert_eq!(by_day.shard(3).value().unwrap(), "ORDERS#2014-07-09#03");
    let bad = by_day.shard(16);
    assert_eq!(
        bad.value().unwrap_err().validation_reason(),
        Some(ValidationReason::KeyEncoding)
    );
    // The index and the LSI (the table's partition key) are sharded too.
    let status = Order::gsi1_partition("PENDING");
    assert_eq!(status.count(), 8);
    assert_eq!(status.shard(7).value().unwrap(), "STATUS#PENDING#7");
    assert_eq!(Order::lsi1_partition(AT).count(), 16);
    // A random shard is enumerated like a computed one.
    let hour = Event::partition(HourBucket::new(2014, 7, 9, 10).unwrap());
    assert_eq!(hour.count(), 10);
    assert_eq!(hour.shard(9).value().unwrap(), "EVENTS#2014-07-09T10#9");
}

#[test]
fn a_forged_shard_or_bucket_never_decodes() {
    let item = order("o-1").to_item().unwrap();
    for (attribute, forged) in [
        ("PK", "ORDERS#2014-07-09#11"),
        ("PK", "ORDERS#2014-07-10#10"),
        ("PK", "ORDERS#2014-07-09#010"),
        ("GSI1PK", "STATUS#PENDING#0"),
    ] {
        assert_ne!(s(&item, attribute), forged);
        let mut bad = item.clone();
        bad.insert(attribute.into(), AttributeValue::S(forged.into()));
        let error = Order::from_item(bad).unwrap_err();
        assert_eq!(error.attribute.as_deref(), Some(attribute), "{forged}");
        assert!(
            matches!(error.kind, DecodeErrorKind::KeyMismatch { .. }),
            "{error:?}"
        );
    }
    // A random shard: the stored field and the key must agree.
    let event = Event {
        id: "e".into(),
        at: AT,
        slot: 4,
        kind: "click".into(),
    };
    let item = event.to_item().unwrap();
    assert_eq!(s(&item, "PK"), "EVENTS#2014-07-09T10#4");
    assert_eq!(Event::from_item(item.clone()).unwrap(), event);
    let mut moved = item.clone();
    moved.insert("slot".into(), AttributeValue::N("5".into()));
    assert!(matches!(
        Event::from_item(moved).unwrap_err().kind,
        DecodeErrorKind::KeyMismatch { .. }
    ));
    let mut out_of_range = item;
    out_of_range.insert("slot".into(), AttributeValue::N("10".into()));
    assert!(Event::from_item(out_of_range).is_err());
    let too_big = Event { slot: 10, ..event };
    assert_eq!(
        too_big.to_item().unwrap_err().validation_reason(),
        Some(ValidationReason::KeyEncoding)
    );
}

#[test]
fn a_random_shard_is_taken_explicitly_by_the_key() {
    for _ in 0..100 {
        assert!(Event::random_slot() < 10);
    }
    let event = Event {
        id: "e".into(),
        at: AT,
        slot: Event::random_slot(),
        kind: "click".into(),
    };
    let key = Event::key(EventKey {
        at: AT,
        slot: event.slot,
        id: "e",
    });
    assert_eq!(event.primary_key(), key);
}

fn updates<E: Entity>(
    key: &Key<E>,
    touches: &[(&str, Touch<'_>)],
) -> Result<Vec<(&'static str, Option<AttributeValue>)>, crate::Error> {
    let lookup = |attribute: &str| {
        touches
            .iter()
            .find(|(a, _)| *a == attribute)
            .map_or(Touch::Untouched, |(_, t)| *t)
    };
    E::__index_updates(key.raw()?, &IndexChanges { lookup: &lookup })
}

/// The `GSI1` key attributes of `item`, as an update that changes both writes them.
fn gsi1_keys(item: &Item) -> Vec<(&'static str, Option<AttributeValue>)> {
    ["GSI1PK", "GSI1SK"]
        .map(|attribute| (attribute, item.get(attribute).cloned()))
        .into()
}

/// The shard source is a key field (read back from the sort key): an update of the
/// status recomputes the index key with the same shard; one that touches neither
/// leaves it.
#[test]
fn index_updates_recompute_shards_from_key_fields() {
    let key = order("o-1").primary_key();
    let shipped = AttributeValue::S("SHIPPED".into());
    let out = updates(&key, &[("status", Touch::Set(&shipped))]).unwrap();
    assert_eq!(
        out,
        vec![
            (
                "GSI1PK",
                Some(AttributeValue::S(format!(
                    "STATUS#SHIPPED#{}",
                    shard_of("o-1", 8)
                )))
            ),
            (
                "GSI1SK",
                Some(AttributeValue::S("2014-07-09T10:11:12.000000000Z".into()))
            ),
        ]
    );
    let mut stored = order("o-1");
    stored.status = "SHIPPED".into();
    let item = stored.to_item().unwrap();
    assert_eq!(out[0].1, item.get("GSI1PK").cloned());
    let note = AttributeValue::S("gift".into());
    assert_eq!(
        updates(&key, &[("note", Touch::Set(&note))]).unwrap(),
        vec![]
    );
}

/// A random shard of the table, reused by an index: an update of the index's other
/// field reads it back from the partition key.
#[test]
fn index_updates_read_a_random_shard_back_from_the_key() {
    let event = Event {
        id: "e".into(),
        at: AT,
        slot: 7,
        kind: "view".into(),
    };
    let click = AttributeValue::S("click".into());
    let out = updates(&event.primary_key(), &[("kind", Touch::Set(&click))]).unwrap();
    let expected = Event {
        kind: "click".into(),
        ..event
    }
    .to_item()
    .unwrap();
    assert_eq!(s(&expected, "GSI1PK"), "KIND#click#7");
    assert_eq!(out, gsi1_keys(&expected));
    // A crafted key whose shard is out of range is refused, not re-rendered.
    let crafted = Key::<Event>::from_raw(crate::RawKey {
        pk: "EVENTS#2014-07-09T10#12".into(),
        sk: Some("2014-07-09T10:11:12.000000000Z#e".into()),
    });
    assert!(updates(&crafted, &[("kind", Touch::Set(&click))]).is_err());
}

/// The shard and bucket sources are stored fields the update changes: the new values
/// give a new shard and day; changing one without the others is refused; removing the
/// optional source takes the item out of the sparse index.
#[test]
fn index_updates_recompute_shards_and_buckets_from_new_values() {
    let key = Ticket::key("t-1");
    let (queue, bob, day) = (
        AttributeValue::S("ops".into()),
        AttributeValue::S("bob".into()),
        AttributeValue::S("2024-02-29T23:00:00.000000000Z".into()),
    );
    let out = updates(
        &key,
        &[
            ("queue", Touch::Set(&queue)),
            ("assignee", Touch::Set(&bob)),
            ("opened_at", Touch::Set(&day)),
        ],
    )
    .unwrap();
    let expected = Ticket {
        ticket_id: "t-1".into(),
        queue: "ops".into(),
        assignee: Some("bob".into()),
        opened_at: datetime!(2024-02-29 23:00 UTC),
    }
    .to_item()
    .unwrap();
    assert_eq!(
        s(&expected, "GSI1PK"),
        format!("QUEUE#ops#{}", shard_of("bob", 4))
    );
    assert_eq!(s(&expected, "GSI1SK"), "2024-02-29#t-1");
    assert_eq!(out, gsi1_keys(&expected));
    let partial = updates(&key, &[("assignee", Touch::Set(&bob))]).unwrap_err();
    assert_eq!(
        partial.validation_reason(),
        Some(ValidationReason::IncompleteIndexTemplate)
    );
    let removed = updates(&key, &[("assignee", Touch::Removed)]).unwrap();
    assert_eq!(removed, vec![("GSI1PK", None), ("GSI1SK", None)]);
    // A value that is no time cannot be bucketed: refused before sending.
    let junk = AttributeValue::S("yesterday".into());
    let refused = updates(
        &key,
        &[
            ("queue", Touch::Set(&queue)),
            ("assignee", Touch::Set(&bob)),
            ("opened_at", Touch::Set(&junk)),
        ],
    );
    assert!(refused.is_err());
}

#[test]
fn bucket_levels_of_a_sort_key_take_buckets() {
    #[derive(Entity)]
    #[dynamo(table = App, pk = "LOG#{source}", sk = "{at:hour}#{id}")]
    struct Log {
        source: String,
        at: OffsetDateTime,
        id: String,
    }
    let hour = HourBucket::new(2014, 7, 9, 10).unwrap();
    let level = Log::sk().at().eq(hour);
    let cond = crate::read::IntoSortKey::<Log, crate::Primary>::into_sort_key(level).unwrap();
    let crate::SortCondition::Rendered(range) = cond else {
        panic!("{cond:?}")
    };
    assert_eq!(
        range.op,
        crate::keyspace::sort::SortKeyOp::BeginsWith("2014-07-09T10#".into())
    );
    let key = Log::key(LogKey {
        source: "s",
        at: AT,
        id: "i",
    });
    assert_eq!(key.raw().unwrap().sk.as_deref(), Some("2014-07-09T10#i"));
}

#[test]
fn only_the_owner_renders_a_sharded_key() {
    let pk = |raw: &str| crate::RawKey {
        pk: raw.into(),
        sk: Some("2014-07-09T10:11:12.000000000Z#o-1".into()),
    };
    assert_eq!(
        registry::entity_types_of_key::<App>(&pk("ORDERS#2014-07-09#10")),
        ["Order"]
    );
    // A plain value that looks like a day and a shard is escaped: another key.
    let lookalike = Plain::key(PlainKey {
        day: "2014-07-09#10",
        rest: "2014-07-09T10:11:12.000000000Z#o-1",
    });
    assert_eq!(lookalike.raw().unwrap().pk, "ORDERS#2014-07-09%2310");
    for foreign in [
        "ORDERS#2014-07-09#16",
        "ORDERS#2014-07-09#1",
        "ORDERS#2014-7-09#10",
    ] {
        assert_eq!(
            registry::entity_types_of_key::<App>(&pk(foreign)),
            Vec::<&str>::new(),
            "{foreign}"
        );
    }
}

proptest! {
    /// A sharded entity and a plain entity whose template starts alike never render
    /// the same key, and each key belongs to its own entity only.
    #[test]
    fn sharded_and_plain_keys_never_meet(id in "\\PC{0,8}", day in "[0-9#-]{0,12}", rest in "\\PC{1,40}", secs in 0i64..4_000_000_000) {
        let at = OffsetDateTime::from_unix_timestamp(secs).unwrap();
        let sharded = Order::key(OrderKey { created_at: at, order_id: id.as_str() }).into_raw().unwrap();
        let plain = Plain::key(PlainKey { day: day.as_str(), rest: rest.as_str() }).into_raw().unwrap();
        let numbered = Numbered::key(NumberedKey { day: day.as_str(), n: (secs % 256) as u8, rest: rest.as_str() }).into_raw().unwrap();
        prop_assert_ne!(&sharded, &plain);
        prop_assert_ne!(&sharded, &numbered);
        prop_assert_eq!(registry::entity_types_of_key::<App>(&sharded), vec!["Order"]);
        prop_assert_eq!(registry::entity_types_of_key::<App>(&plain), vec!["Plain"]);
        prop_assert_eq!(registry::entity_types_of_key::<App>(&numbered), vec!["Numbered"]);
        // And the shard is the one the pinned function gives.
        let mut encoded = String::new();
        crate::KeyPart::encode_key(&id, &mut encoded).unwrap();
        let suffix = format!("#{:02}", shard_of(&encoded, 16));
        prop_assert!(sharded.pk.ends_with(&suffix));
    }
}
