//! Computed key parts in every position the derive accepts them: a shard and a bucket in
//! the table's partition key, a bucket in a sort key, sharded and bucketed index keys over
//! optional (sparse) fields, a random shard, an LSI and an inverted index over a sharded
//! partition key, and constructor arguments by value, by reference or as buckets.

use dynamo_model::key::computed::{DayBucket, HourBucket, MonthBucket, shard_of};
use dynamo_model::{Entity, Key, ShardedPartition, Table};
use time::OffsetDateTime;
use time::macros::datetime;

#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
    gsi(name = "Inverted", pk = "SK", sk = "PK"),
    lsi(name = "LSI1", sk = "LSI1SK")
)]
struct App;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "ORDERS#{created_at:date}#{order_id:shard(16)}",
         sk = "{created_at}#{order_id}",
         index(GSI1, pk = "REGION#{region}#{customer:shard(4)}", sk = "{shipped_at:month}#{order_id}"),
         index(LSI1, sk = "{total}"),
         index(Inverted))]
struct Order {
    order_id: String,
    created_at: OffsetDateTime,
    region: Option<String>,
    customer: Option<String>,
    shipped_at: Option<OffsetDateTime>,
    total: u64,
}

/// A field named like a bucket type (`day_bucket` → `DayBucket`): the generated type
/// parameter must not shadow it.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "READINGS#{day_bucket:hour}#{slot:random(1000)}", sk = "{sensor}")]
struct Reading {
    day_bucket: OffsetDateTime,
    slot: u16,
    sensor: String,
}

/// One source field: the constructors stay positional.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "HOT#{id:shard(1)}", sk = "{id}")]
struct Hot {
    id: String,
}

pub fn run() {
    let at = datetime!(2014-07-09 10:11:12 UTC);
    let order = Order {
        order_id: "o-1".into(),
        created_at: at,
        region: Some("EU".into()),
        customer: Some("c-9".into()),
        shipped_at: Some(datetime!(2014-08-01 00:00 UTC)),
        total: 3,
    };
    // By value, by reference, `&str` for a `String` field.
    let key: Key<Order> = OrderKey {
        created_at: &at,
        order_id: "o-1",
    }
    .into();
    assert_eq!(key, order.primary_key());
    let raw = key.into_raw().unwrap();
    assert_eq!(
        raw.pk,
        format!("ORDERS#2014-07-09#{:02}", shard_of("o-1", 16))
    );

    let item = order.to_item().unwrap();
    assert_eq!(Order::from_item(item.clone()).unwrap(), order);
    let gsi1pk = item.get("GSI1PK").and_then(|v| v.as_s().ok()).cloned();
    assert_eq!(gsi1pk, Some(format!("REGION#EU#{}", shard_of("c-9", 4))));
    // Sparse: no customer, no index entry.
    let unindexed = Order {
        customer: None,
        ..order.clone()
    }
    .to_item()
    .unwrap();
    assert!(!unindexed.contains_key("GSI1PK"));

    let day: ShardedPartition<Order> = Order::partition(DayBucket::new(2014, 7, 9).unwrap());
    assert_eq!(day.count(), 16);
    let by_ref: &OffsetDateTime = &at;
    assert_eq!(
        Order::partition(by_ref).shard(0).value().unwrap(),
        "ORDERS#2014-07-09#00"
    );
    assert_eq!(Order::gsi1_partition("EU").count(), 4);
    assert_eq!(Order::lsi1_partition(at).count(), 16);
    let _ = Order::gsi1_sk()
        .shipped_at()
        .eq(MonthBucket::new(2014, 8).unwrap());
    // The inverted index is partitioned by the sort key (no shard) and sorted by the
    // sharded partition key, whose chain stops at the shard.
    let _ = Order::inverted_partition(OrderInvertedPartition {
        created_at: at,
        order_id: "o-1",
    })
    .value()
    .unwrap();
    let _ = Order::inverted_sk()
        .created_at()
        .eq(DayBucket::new(2014, 7, 9).unwrap());

    let reading = Reading {
        day_bucket: at,
        slot: Reading::random_slot(),
        sensor: "s".into(),
    };
    assert!(reading.slot < 1000);
    let key = Reading::key(ReadingKey {
        day_bucket: HourBucket::new(2014, 7, 9, 10).unwrap(),
        slot: reading.slot,
        sensor: "s",
    });
    assert_eq!(key, reading.primary_key());
    assert_eq!(Reading::partition(at).count(), 1000);

    assert_eq!(Hot::key("h").into_raw().unwrap().pk, "HOT#0");
    assert_eq!(Hot::partition().count(), 1);
}
