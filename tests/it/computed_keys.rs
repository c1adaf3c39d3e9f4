//! Computed key parts against DynamoDB Local: sharded and bucketed keys rendered from the
//! entity's fields for every single-item operation, items spread over the shards and all
//! found again by querying every shard, index shards recomputed by updates, random
//! shards, and forged shard suffixes refused.

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::key::computed::{shard_of, DayBucket};
use dynamo_model::{local, Db, DecodeErrorKind, Entity, Error, Partition, Table, ValidationReason};
use std::collections::{BTreeMap, BTreeSet};
use time::macros::datetime;
use time::OffsetDateTime;

/// Its own table type: the registry of key templates is per table type, so these
/// entities never share a key space with the other tests' entities.
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
pub struct Sharded;

/// A day of orders over 16 shards by order id; by status over 8 index shards.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Sharded, pk = "ORDERS#{created_at:date}#{order_id:shard(16)}",
         sk = "{created_at}#{order_id}",
         index(GSI1, pk = "STATUS#{status}#{order_id:shard(8)}", sk = "{created_at}"))]
pub struct DayOrder {
    pub order_id: String,
    pub created_at: OffsetDateTime,
    pub status: String,
    pub total: u64,
}

/// Written once, read by every shard: the writer picks the shard.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Sharded, pk = "EVENTS#{at:hour}#{slot:random(10)}", sk = "{at}#{id}")]
pub struct Event {
    pub id: String,
    pub at: OffsetDateTime,
    pub slot: u16,
}

/// The index shard comes from a field updates change.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Sharded, pk = "TICKET#{ticket_id}", sk = "TICKET",
         index(GSI1, pk = "QUEUE#{queue}#{assignee:shard(4)}", sk = "{opened_at:date}#{ticket_id}"))]
pub struct Ticket {
    pub ticket_id: String,
    pub queue: String,
    pub assignee: String,
    pub opened_at: OffsetDateTime,
    pub title: String,
}

const DAY: OffsetDateTime = datetime!(2014-07-09 00:00 UTC);

fn order(n: u32, status: &str) -> DayOrder {
    DayOrder {
        order_id: format!("o-{n}"),
        created_at: DAY + time::Duration::seconds(i64::from(n) * 7),
        status: status.into(),
        total: u64::from(n),
    }
}

/// The union of every shard's items, each shard queried with today's `db.query`, and the
/// number of items per shard.
async fn every_shard<E: Entity<Table = Sharded>, K: dynamo_model::KeySpace>(
    db: &Db<Sharded>,
    shards: impl IntoIterator<Item = Partition<E, K>>,
) -> Result<(Vec<E>, Vec<usize>), Error> {
    let (mut all, mut counts) = (Vec::new(), Vec::new());
    for shard in shards {
        let items = items_of(db.query(shard)).await?;
        counts.push(items.len());
        all.extend(items);
    }
    Ok((all, counts))
}

async fn raw_item(
    db: &Db<Sharded>,
    key: dynamo_model::Key<impl Entity>,
) -> Res<Option<dynamo_model::Item>> {
    raw_find(db, key.to_item()?).await
}

fn string_at(item: &dynamo_model::Item, attribute: &str) -> String {
    match item.get(attribute) {
        Some(AttributeValue::S(v)) => v.clone(),
        other => panic!("{attribute}: {other:?}"),
    }
}

#[tokio::test]
async fn a_sharded_item_is_put_got_updated_and_deleted_by_its_fields_only() -> TestResult {
    let db = local::fresh_table::<Sharded>().await?;
    let o = order(1, "PENDING");
    db.put(&o).await?;
    // The key takes the source fields; the shard and the day are computed.
    let key = DayOrder::key(DayOrderKey {
        created_at: o.created_at,
        order_id: "o-1",
    });
    let stored = raw_item(&db, key.clone()).await?.ok_or("not stored")?;
    assert_eq!(
        string_at(&stored, "PK"),
        format!("ORDERS#2014-07-09#{:02}", shard_of("o-1", 16))
    );
    assert_eq!(
        string_at(&stored, "GSI1PK"),
        format!("STATUS#PENDING#{}", shard_of("o-1", 8))
    );
    assert_eq!(db.get(key.clone()).await?, Some(o.clone()));

    let f = DayOrder::fields();
    let updated = db
        .update(key.clone())
        .set(f.status, "SHIPPED")
        .set(f.total, 9u64)
        .await?;
    assert_eq!(updated.status, "SHIPPED");
    let stored = raw_item(&db, key.clone()).await?.ok_or("not stored")?;
    // The index key moved to the new status, same shard (the order id did not change).
    assert_eq!(
        string_at(&stored, "GSI1PK"),
        format!("STATUS#SHIPPED#{}", shard_of("o-1", 8))
    );
    let shipped = every_shard(&db, DayOrder::gsi1_partition("SHIPPED"))
        .await?
        .0;
    assert_eq!(shipped, [updated]);
    assert!(every_shard(&db, DayOrder::gsi1_partition("PENDING"))
        .await?
        .0
        .is_empty());

    db.delete(key.clone()).await?;
    assert_eq!(db.get(key).await?, None);
    Ok(())
}

/// 400 orders of one day and 40 of the next over 16 shards: every shard holds some, and
/// querying every shard of the day (with `db.query`, one shard at a time) returns exactly
/// the day's orders; the same through the sharded index by status and time range.
#[tokio::test]
async fn querying_every_shard_returns_exactly_what_was_written() -> TestResult {
    let db = local::fresh_table::<Sharded>().await?;
    let day: Vec<DayOrder> = (0..400)
        .map(|n| order(n, if n % 3 == 0 { "PENDING" } else { "PAID" }))
        .collect();
    let next: Vec<DayOrder> = (0..40)
        .map(|n| {
            let mut o = order(1000 + n, "PENDING");
            o.created_at = DAY + time::Duration::days(1);
            o
        })
        .collect();
    db.bulk_load().puts(day.iter().chain(&next)).await?;

    let partition = DayOrder::partition(DayBucket::new(2014, 7, 9)?);
    assert_eq!(partition.count(), 16);
    let (found, counts) = every_shard(&db, partition).await?;
    let by_id = |items: &[DayOrder]| -> BTreeMap<String, DayOrder> {
        items
            .iter()
            .map(|o| (o.order_id.clone(), o.clone()))
            .collect()
    };
    assert_eq!(found.len(), day.len(), "no duplicates, nothing missing");
    assert_eq!(by_id(&found), by_id(&day));
    // Spread: every shard has items, none has more than twice its share (25).
    assert!(counts.iter().all(|&n| (1..=50).contains(&n)), "{counts:?}");
    println!("400 orders over 16 shards: {counts:?}");
    // The next day's partition holds the next day's orders only.
    let (tomorrow, _) =
        every_shard(&db, DayOrder::partition(DAY + time::Duration::days(1))).await?;
    assert_eq!(by_id(&tomorrow), by_id(&next));

    // Through the index: the pending orders of the first hour, over all 8 index shards.
    let mut pending = Vec::new();
    for shard in DayOrder::gsi1_partition("PENDING") {
        let page = db
            .query(shard)
            .sk(DayOrder::gsi1_sk()
                .created_at()
                .lt(DAY + time::Duration::hours(1)))
            .all()
            .await?;
        pending.extend(page.items);
    }
    let expected: Vec<DayOrder> = day
        .iter()
        .chain(&next)
        .filter(|o| o.status == "PENDING" && o.created_at < DAY + time::Duration::hours(1))
        .cloned()
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(by_id(&pending), by_id(&expected));
    Ok(())
}

/// An update that changes the shard's source field moves the item to another index shard;
/// one that does not touch it leaves the index key alone; changing part of the template
/// is refused.
#[tokio::test]
async fn an_update_recomputes_the_index_shard_from_the_new_value() -> TestResult {
    let ticket = Ticket {
        ticket_id: "t-1".into(),
        queue: "ops".into(),
        assignee: "ann".into(),
        opened_at: datetime!(2024-02-29 23:30 UTC),
        title: "disk full".into(),
    };
    let db = table_with([ticket.clone()]).await?;
    let before = raw_item(&db, Ticket::key("t-1"))
        .await?
        .ok_or("not stored")?;
    assert_eq!(
        string_at(&before, "GSI1PK"),
        format!("QUEUE#ops#{}", shard_of("ann", 4))
    );
    assert_eq!(string_at(&before, "GSI1SK"), "2024-02-29#t-1");
    // Pick a new assignee on another shard.
    let new = (0..)
        .map(|i| format!("user-{i}"))
        .find(|a| shard_of(a, 4) != shard_of("ann", 4))
        .ok_or("no other shard")?;
    let f = Ticket::fields();
    db.update(Ticket::key("t-1"))
        .set(f.queue, "ops")
        .set(f.assignee, new.clone())
        .set(f.opened_at, datetime!(2024-03-01 00:30 UTC))
        .await?;
    let after = raw_item(&db, Ticket::key("t-1"))
        .await?
        .ok_or("not stored")?;
    assert_eq!(
        string_at(&after, "GSI1PK"),
        format!("QUEUE#ops#{}", shard_of(&new, 4))
    );
    assert_eq!(string_at(&after, "GSI1SK"), "2024-03-01#t-1");
    let queue = Ticket::gsi1_partition("ops");
    let old_shard = items_of(db.query(queue.shard(shard_of("ann", 4)))).await?;
    let new_shard = items_of(db.query(queue.shard(shard_of(&new, 4)))).await?;
    assert!(old_shard.is_empty());
    assert_eq!(new_shard.len(), 1);
    assert_eq!(new_shard[0].assignee, new);

    // Not touching the template leaves the index key as it is.
    db.update(Ticket::key("t-1"))
        .set(f.title, "disk fuller")
        .await?;
    let untouched = raw_item(&db, Ticket::key("t-1"))
        .await?
        .ok_or("not stored")?;
    assert_eq!(untouched.get("GSI1PK"), after.get("GSI1PK"));
    assert_eq!(untouched.get("GSI1SK"), after.get("GSI1SK"));

    // Changing the shard's source without the rest of the template: refused, nothing sent.
    refused(
        db.update(Ticket::key("t-1")).set(f.assignee, "ann"),
        ValidationReason::IncompleteIndexTemplate,
    )
    .await;
    assert_eq!(
        db.get(Ticket::key("t-1")).await?.map(|t| t.assignee),
        Some(new)
    );
    Ok(())
}

/// Random shards: the writer picks them, every shard query finds them all, and a point
/// read or delete names the shard (from the decoded item, or explicitly).
#[tokio::test]
async fn random_shards_spread_writes_and_every_shard_finds_them() -> TestResult {
    let db = local::fresh_table::<Sharded>().await?;
    let hour = datetime!(2026-11-03 10:00 UTC);
    let events: Vec<Event> = (0..200)
        .map(|i| Event {
            id: format!("e-{i:03}"),
            at: hour + time::Duration::seconds(i),
            slot: Event::random_slot(),
        })
        .collect();
    db.bulk_load().puts(&events).await?;
    let partition = Event::partition(hour);
    assert_eq!(partition.count(), 10);
    let (found, counts) = every_shard(&db, partition).await?;
    let ids: BTreeSet<&str> = found.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(found.len(), 200);
    assert_eq!(ids, events.iter().map(|e| e.id.as_str()).collect());
    assert!(counts.iter().all(|&n| n > 0), "{counts:?}");

    // A point read names the shard; a wrong one finds nothing.
    let e = &events[7];
    let key = |slot| {
        Event::key(EventKey {
            at: e.at,
            slot,
            id: e.id.as_str(),
        })
    };
    assert_eq!(db.get(key(e.slot)).await?.as_ref(), Some(e));
    assert_eq!(db.get(key((e.slot + 1) % 10)).await?, None);
    // A shard out of range is refused before anything is sent.
    assert_refused(
        &db.get(key(10)).await.unwrap_err(),
        ValidationReason::KeyEncoding,
    );
    // A decoded item knows its key.
    let read = found.iter().find(|x| x.id == "e-042").ok_or("missing")?;
    db.delete(read.primary_key()).await?;
    assert_eq!(db.get(read.primary_key()).await?, None);
    Ok(())
}

/// An item stored under one shard whose fields give another (written by hand or forged)
/// never decodes: not by a point read, not by a query of its shard.
#[tokio::test]
async fn a_forged_shard_suffix_never_decodes() -> TestResult {
    let db = local::fresh_table::<Sharded>().await?;
    let real = order(1, "PENDING");
    // The item of order o-1 under the key of order o-2's shard (and o-2's id).
    let mut item = real.to_item()?;
    let mut other = real.clone();
    other.order_id = "o-2".into();
    assert_ne!(shard_of("o-1", 16), shard_of("o-2", 16));
    let forged_key = other.primary_key();
    let raw = forged_key.raw()?;
    item.insert(
        "SK".into(),
        AttributeValue::S(raw.sk.clone().ok_or("no sk")?),
    );
    item.insert("order_id".into(), AttributeValue::S("o-2".into()));
    // PK still says o-1's shard, the fields say o-2.
    let pk = string_at(&item, "PK");
    assert_ne!(pk, raw.pk);
    put_raw(&db, item).await?;
    let shard = DayOrder::partition(DAY).shard(shard_of("o-1", 16));
    let err = db.query(shard).all().await.unwrap_err();
    match &err {
        Error::Decode(e) => {
            assert_eq!(e.attribute.as_deref(), Some("PK"), "{e}");
            assert!(matches!(e.kind, DecodeErrorKind::KeyMismatch { .. }), "{e}");
        }
        other => panic!("{other:?}"),
    }
    // Under o-2's real key there is nothing.
    assert_eq!(db.get(forged_key).await?, None);
    Ok(())
}
