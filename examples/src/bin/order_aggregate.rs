//! Materialized aggregates from a DynamoDB stream (seed 000, "使用全局二级索引进行具体化聚合查询"):
//! a Lambda-style handler keeps each customer's order count and order total in a summary
//! item, from the stream of order changes, so reading the totals costs one `GetItem`
//! instead of a query over every order.
//!
//! Run locally on the example's own writes: the table gets a stream
//! (`NEW_AND_OLD_IMAGES`), orders are placed, changed and deleted through the crate, the
//! shard's records are read with the DynamoDB Streams API (DynamoDB Local serves it on
//! the same endpoint), turned into the event AWS Lambda would deliver
//! (`aws_lambda_events::event::dynamodb::Event`, through its JSON), and handed to
//! `handler` in batches, one of them twice (streams deliver at least once). The
//! aggregates must equal what a query of the orders computes.
//!
//! Run: `cargo run -p examples --bin order_aggregate`

use aws_lambda_events::event::dynamodb::{Event, EventRecord, StreamViewType as LambdaView};
use aws_sdk_dynamodb::types::{StreamSpecification, StreamViewType};
use aws_sdk_dynamodbstreams::types::ShardIteratorType;
use dynamo_model::stream::{EventName, StreamRecord};
use dynamo_model::transact::CancelReason;
use dynamo_model::{Db, Entity, Error, Table};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct Shop;

/// An order, in its customer's partition.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, pk = "CUSTOMER#{customer}", sk = "ORDER#{order_id}")]
struct Order {
    customer: String,
    order_id: u32,
    total_cents: i64,
    status: String,
}

/// A customer's profile: in the same partition and the same stream, ignored by the
/// handler (its records decode as no order).
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, pk = "CUSTOMER#{customer}", sk = "PROFILE")]
struct Customer {
    customer: String,
    name: String,
}

/// The materialized aggregate: one item per customer.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, pk = "CUSTOMER#{customer}", sk = "TOTALS")]
struct CustomerTotals {
    customer: String,
    order_count: i64,
    total_cents: i64,
}

/// A stream record already applied (by its event id), written in the same transaction as
/// the aggregate's update so a redelivered record is applied once. (In production, give
/// these items a TTL a little longer than the stream's 24-hour retention.)
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, pk = "APPLIED#{event_id}", sk = "APPLIED")]
struct Applied {
    event_id: String,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What a handler reports: records applied, and records skipped (other entity types, or
/// already applied).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Handled {
    applied: usize,
    duplicates: usize,
    ignored: usize,
}

/// The Lambda function's body: for every order change in the batch, add its difference
/// (count and total, new image minus old image) to the customer's aggregate, exactly once.
async fn handler(event: Event, db: &Db<Shop>) -> Result<Handled, BoxError> {
    let mut handled = Handled::default();
    for record in event.records {
        let record = StreamRecord::from_lambda(record)?;
        let Some(change) = record.decode::<Order>()? else {
            handled.ignored += 1; // not an order: a profile, an aggregate, a marker
            continue;
        };
        // The table's view type is NEW_AND_OLD_IMAGES: a missing image is an error here.
        let (old, new) = (change.old_image()?, change.new_image()?);
        let count = i64::from(new.is_some()) - i64::from(old.is_some());
        let total = new.map_or(0, |o| o.total_cents) - old.map_or(0, |o| o.total_cents);
        if count == 0 && total == 0 {
            handled.ignored += 1; // a status change: nothing to aggregate
            continue;
        }
        let Some(event_id) = change.event_id.clone() else {
            return Err(
                "a stream record without an event id cannot be applied exactly once".into(),
            );
        };
        let customer = change
            .key()
            .raw()?
            .pk
            .trim_start_matches("CUSTOMER#")
            .to_owned();
        let customer = new.or(old).map_or(customer, |o| o.customer.clone());
        if apply(db, &customer, &event_id, count, total).await? {
            handled.applied += 1;
        } else {
            handled.duplicates += 1;
        }
    }
    Ok(handled)
}

/// Adds `count` and `total` to the customer's aggregate and records `event_id`, in one
/// transaction; `false` when the event was applied before.
async fn apply(
    db: &Db<Shop>,
    customer: &str,
    event_id: &str,
    count: i64,
    total: i64,
) -> Result<bool, Error> {
    // An update needs the item: create an empty aggregate the first time.
    let empty = CustomerTotals {
        customer: customer.to_owned(),
        order_count: 0,
        total_cents: 0,
    };
    match db.put(&empty).if_absent().await {
        Ok(()) | Err(Error::ConditionFailed { .. }) => {}
        Err(e) => return Err(e),
    }
    let f = CustomerTotals::fields();
    let marker = Applied {
        event_id: event_id.to_owned(),
    };
    let result = db
        .transact_write()
        .put(db.put(&marker).if_absent())
        .update(
            db.update(CustomerTotals::key(customer))
                .add(f.order_count, count)
                .add(f.total_cents, total),
        )
        .await;
    match result {
        Ok(()) => Ok(true),
        // The marker exists: this record was applied by an earlier delivery.
        Err(Error::TransactionCanceled { operations, .. })
            if operations
                .iter()
                .all(|o| o.index == 0 && o.reason == CancelReason::ConditionalCheckFailed) =>
        {
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// A Streams API client where the table is: from the standard AWS environment (as in
/// production), or for the DynamoDB Local this process started (same endpoint, the dummy
/// credentials it accepts).
async fn streams_client(
    table: &examples::ExampleTable<Shop>,
) -> Result<aws_sdk_dynamodbstreams::Client, BoxError> {
    use aws_sdk_dynamodbstreams::config::{BehaviorVersion, Credentials, Region};
    Ok(match table {
        examples::ExampleTable::Env(_) => aws_sdk_dynamodbstreams::Client::new(
            &aws_config::load_defaults(BehaviorVersion::latest()).await,
        ),
        examples::ExampleTable::Local(_) => {
            let endpoint =
                tokio::task::spawn_blocking(dynamo_model::local::shared_endpoint).await??;
            aws_sdk_dynamodbstreams::Client::from_conf(
                aws_sdk_dynamodbstreams::Config::builder()
                    .behavior_version(BehaviorVersion::latest())
                    .region(Region::new("us-east-1"))
                    .endpoint_url(endpoint)
                    .credentials_provider(Credentials::new(
                        "dynamomodel",
                        "local",
                        None,
                        None,
                        "example",
                    ))
                    .build(),
            )
        }
    })
}

/// Every record of the stream's shards, oldest first, once `expected` have arrived (the
/// real service makes records readable within about a second; DynamoDB Local at once).
async fn read_stream(
    client: &aws_sdk_dynamodbstreams::Client,
    stream_arn: &str,
    expected: usize,
) -> Result<Vec<aws_sdk_dynamodbstreams::types::Record>, BoxError> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let description = client
        .describe_stream()
        .stream_arn(stream_arn)
        .send()
        .await?;
    let shards = description
        .stream_description()
        .map(|d| d.shards().to_vec())
        .unwrap_or_default();
    let mut records = Vec::new();
    for shard in shards {
        let Some(shard_id) = shard.shard_id() else {
            continue;
        };
        let mut iterator = client
            .get_shard_iterator()
            .stream_arn(stream_arn)
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
            // An open shard never ends: stop at its first empty page once everything
            // expected is in.
            if empty && (records.len() >= expected || Instant::now() > deadline) {
                break;
            }
            if empty {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
    Ok(records)
}

/// The event AWS Lambda would deliver for these records: the same fields, as the JSON the
/// Lambda service sends (serialized and parsed again, as the Lambda runtime does).
fn lambda_event(
    records: &[aws_sdk_dynamodbstreams::types::Record],
    arn: &str,
) -> Result<Event, BoxError> {
    let mut event = Event::default();
    for record in records {
        let decoded = StreamRecord::from_sdk(record.clone())?;
        let mut lambda = EventRecord::default();
        lambda.event_id = decoded.event_id.clone().unwrap_or_default();
        lambda.event_name = decoded.event.as_str().to_owned();
        lambda.event_source = Some("aws:dynamodb".to_owned());
        lambda.event_version = record.event_version.clone();
        lambda.aws_region = record.aws_region.clone().unwrap_or_default();
        lambda.event_source_arn = Some(arn.to_owned());
        let change = &mut lambda.change;
        change.keys = decoded.keys.clone().into();
        change.old_image = decoded.old_image.clone().unwrap_or_default().into();
        change.new_image = decoded.new_image.clone().unwrap_or_default().into();
        change.sequence_number = decoded.sequence_number.clone();
        change.size_bytes = record
            .dynamodb
            .as_ref()
            .and_then(|d| d.size_bytes)
            .unwrap_or(0);
        change.stream_view_type = Some(LambdaView::NewAndOldImages);
        if let Some(time) = decoded.approximate_creation_time {
            change.approximate_creation_date_time = time.into();
        }
        event.records.push(lambda);
    }
    Ok(serde_json::from_str(&serde_json::to_string(&event)?)?)
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let db = examples::table::<Shop>("order-aggregate").await?;

    // The table's stream: every change, with the item before and after it.
    db.client()
        .update_table()
        .table_name(db.table_name())
        .stream_specification(
            StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(StreamViewType::NewAndOldImages)
                .build()?,
        )
        .send()
        .await?;
    let stream_arn = db
        .client()
        .describe_table()
        .table_name(db.table_name())
        .send()
        .await?
        .table
        .and_then(|t| t.latest_stream_arn)
        .ok_or("the table has no stream")?;

    // Writes through the crate: 4 customers' profiles, 24 orders placed, 8 repriced,
    // 4 shipped (a status change only), 5 cancelled (deleted).
    let mut writes = 0;
    for c in 0..4 {
        let customer = Customer {
            customer: format!("c-{c}"),
            name: format!("Customer {c}"),
        };
        db.put(&customer).if_absent().await?;
        writes += 1;
    }
    let mut orders = Vec::new();
    for n in 0..24u32 {
        let order = Order {
            customer: format!("c-{}", n % 4),
            order_id: n,
            total_cents: 1_000 + i64::from(n) * 137,
            status: "PLACED".to_owned(),
        };
        db.put(&order).if_absent().await?;
        orders.push(order);
        writes += 1;
    }
    let f = Order::fields();
    for order in orders.iter().filter(|o| o.order_id % 3 == 0) {
        db.update(order.primary_key())
            .add(f.total_cents, 250)
            .await?;
        writes += 1;
    }
    for order in orders.iter().filter(|o| o.order_id % 6 == 1) {
        db.update(order.primary_key())
            .set(f.status, "SHIPPED")
            .await?;
        writes += 1;
    }
    for order in orders.iter().filter(|o| o.order_id % 5 == 2) {
        db.delete(order.primary_key()).await?;
        writes += 1;
    }
    println!("{writes} writes: 4 profiles, 24 orders placed, 8 repriced, 4 shipped, 5 deleted");

    let streams = streams_client(&db).await?;
    let records = read_stream(&streams, &stream_arn, writes).await?;
    println!("read {} stream records", records.len());
    if records.len() != writes {
        return Err(format!("expected {writes} stream records, read {}", records.len()).into());
    }
    // Both shapes decode to the same order changes.
    let from_sdk: Vec<_> = records
        .iter()
        .map(|r| StreamRecord::from_sdk(r.clone())?.into_change::<Order>())
        .collect::<Result<_, _>>()?;
    let inserts = from_sdk
        .iter()
        .flatten()
        .filter(|c| c.event == EventName::Insert)
        .count();
    assert_eq!(inserts, 24);

    // Lambda's batches of 10; the first one delivered twice.
    let mut total = Handled::default();
    let batches: Vec<_> = records.chunks(10).collect();
    for (i, batch) in batches.iter().enumerate() {
        let event = lambda_event(batch, &stream_arn)?;
        let lambda_changes: Vec<_> = event
            .records
            .iter()
            .map(|r| StreamRecord::from_lambda(r.clone())?.into_change::<Order>())
            .collect::<Result<_, _>>()?;
        assert_eq!(lambda_changes, from_sdk[i * 10..i * 10 + batch.len()]);
        let handled = handler(event, &db).await?;
        total.applied += handled.applied;
        total.duplicates += handled.duplicates;
        total.ignored += handled.ignored;
    }
    let again = handler(lambda_event(batches[0], &stream_arn)?, &db).await?;
    println!(
        "handler: {} records applied, {} ignored (profiles, status changes); redelivered batch: {} applied, {} duplicates",
        total.applied, total.ignored, again.applied, again.duplicates
    );
    assert_eq!(again.applied, 0);

    // The truth, from the orders themselves.
    let mut truth: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for c in 0..4 {
        let customer = format!("c-{c}");
        let orders = db
            .query(Order::partition(customer.as_str()))
            .all()
            .await?
            .items;
        truth.insert(
            customer,
            (
                orders.len() as i64,
                orders.iter().map(|o| o.total_cents).sum(),
            ),
        );
    }
    for (customer, (count, cents)) in &truth {
        let totals = db
            .get(CustomerTotals::key(customer.as_str()))
            .consistent()
            .await?
            .ok_or("no aggregate")?;
        println!(
            "{customer}: {} orders, {:>6} cents (query of the orders: {count}, {cents})",
            totals.order_count, totals.total_cents
        );
        if (totals.order_count, totals.total_cents) != (*count, *cents) {
            return Err(format!("{customer}: the aggregate differs from the orders").into());
        }
    }
    println!("order_aggregate: every aggregate equals its orders");
    Ok(())
}
