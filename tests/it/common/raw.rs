//! Rows as another program reads and writes them: the raw SDK, and clients that suffer
//! faults. The tests reach DynamoDB around the crate only through these helpers.

use super::{Res, TestResult};
use dynamo_model::Table;

/// The same table seen through a client that suffers `faults`, with the SDK's own
/// retries off so that every fault reaches the library's loops.
pub async fn faulty<T: Table>(
    db: &dynamo_model::Db<T>,
    faults: &dynamo_model::local::faults::Faults,
) -> Result<dynamo_model::Db<T>, Box<dyn std::error::Error + Send + Sync>> {
    let endpoint = tokio::task::spawn_blocking(dynamo_model::local::shared_endpoint).await??;
    let retries = dynamo_model::aws_sdk_dynamodb::config::retry::RetryConfig::disabled();
    Ok(dynamo_model::Db::new(
        dynamo_model::local::faults::client_with_faults(&endpoint, faults, retries),
        db.table_name(),
    ))
}

/// The same table through a client that records every request it sends and injects
/// nothing, with the record.
pub async fn recorded<T: Table>(
    db: &dynamo_model::Db<T>,
) -> Res<(dynamo_model::Db<T>, dynamo_model::local::faults::Faults)> {
    let faults = dynamo_model::local::faults::Faults::new(0).record();
    let watched = faulty(db, &faults).await?;
    Ok((watched, faults))
}

/// The same table through a client that suffers `faults`, with the SDK's `retries` and
/// a retry quota of its own named `quota`: a retry that ends in a failed condition never
/// gives its quota tokens back, and the SDK's default quota is shared by every client of
/// the process, so tests that lose responses would drain it for the others.
pub async fn faulty_with<T: Table>(
    db: &dynamo_model::Db<T>,
    faults: &dynamo_model::local::faults::Faults,
    retries: dynamo_model::aws_sdk_dynamodb::config::retry::RetryConfig,
    quota: &str,
) -> Res<dynamo_model::Db<T>> {
    use dynamo_model::aws_sdk_dynamodb::config::retry::{RetryPartition, TokenBucket};
    let endpoint = tokio::task::spawn_blocking(dynamo_model::local::shared_endpoint).await??;
    let client = dynamo_model::local::faults::client_with_faults(&endpoint, faults, retries);
    let partition = RetryPartition::custom(quota.to_owned())
        .token_bucket(TokenBucket::unlimited())
        .build();
    let config = client
        .config()
        .to_builder()
        .retry_partition(partition)
        .build();
    Ok(dynamo_model::Db::new(
        dynamo_model::aws_sdk_dynamodb::Client::from_conf(config),
        db.table_name(),
    ))
}

/// Faults that let DynamoDB apply a call of `operation` and then answer it with HTTP 500,
/// with probability `rate`: the caller cannot tell it was applied.
pub fn applied_then_lost(
    seed: u64,
    rate: f64,
    operation: &'static str,
) -> dynamo_model::local::faults::Faults {
    use dynamo_model::local::faults::{FaultKind, Faults};
    Faults::new(seed)
        .rate(rate)
        .kinds([FaultKind::ServerErrorAfterApply])
        .operations([operation])
}

/// `db`'s table through a client whose `operation` calls are applied and then answered
/// with HTTP 500 with probability `rate`; the SDK resends them quickly (up to 40
/// attempts), on the retry quota `quota` (see [`faulty_with`]).
pub async fn lossy<T: Table>(
    db: &dynamo_model::Db<T>,
    seed: u64,
    rate: f64,
    operation: &'static str,
    quota: &str,
) -> Res<(dynamo_model::Db<T>, dynamo_model::local::faults::Faults)> {
    use dynamo_model::aws_sdk_dynamodb::config::retry::RetryConfig;
    let faults = applied_then_lost(seed, rate, operation);
    let retries = RetryConfig::standard()
        .with_max_attempts(40)
        .with_initial_backoff(std::time::Duration::from_millis(1))
        .with_max_backoff(std::time::Duration::from_millis(10));
    Ok((faulty_with(db, &faults, retries, quota).await?, faults))
}

/// `db`'s table through a client whose every `operation` call is applied and then
/// answered with HTTP 500, with 3 SDK attempts a call: the SDK gives up on every call,
/// on the retry quota `quota` (see [`faulty_with`]).
pub async fn every_response_lost<T: Table>(
    db: &dynamo_model::Db<T>,
    seed: u64,
    operation: &'static str,
    quota: &str,
) -> Res<dynamo_model::Db<T>> {
    use dynamo_model::aws_sdk_dynamodb::config::retry::RetryConfig;
    let retries = RetryConfig::standard()
        .with_max_attempts(3)
        .with_initial_backoff(std::time::Duration::from_millis(1))
        .with_max_backoff(std::time::Duration::from_millis(2));
    let faults = applied_then_lost(seed, 1.0, operation);
    faulty_with(db, &faults, retries, quota).await
}

/// A row as another program writes it: `PK` = `pk`, `SK` = `sk` and the attributes `rest`.
pub fn raw_row(
    pk: &str,
    sk: &str,
    rest: &[(&str, dynamo_model::aws_sdk_dynamodb::types::AttributeValue)],
) -> dynamo_model::Item {
    let mut item = dynamo_model::Item::from([("PK".to_owned(), s(pk)), ("SK".to_owned(), s(sk))]);
    for (k, v) in rest {
        item.insert((*k).to_owned(), v.clone());
    }
    item
}

/// A string attribute.
pub fn s(v: &str) -> dynamo_model::aws_sdk_dynamodb::types::AttributeValue {
    dynamo_model::aws_sdk_dynamodb::types::AttributeValue::S(v.to_owned())
}

/// A number attribute.
pub fn n(v: u64) -> dynamo_model::aws_sdk_dynamodb::types::AttributeValue {
    dynamo_model::aws_sdk_dynamodb::types::AttributeValue::N(v.to_string())
}

/// A number attribute of the text `text`, as another program may write it (a valid
/// number or not).
pub fn num(text: &str) -> dynamo_model::aws_sdk_dynamodb::types::AttributeValue {
    dynamo_model::aws_sdk_dynamodb::types::AttributeValue::N(text.to_owned())
}

/// Writes `item` with the raw SDK, as another program would.
pub async fn put_raw<T: Table>(db: &dynamo_model::Db<T>, item: dynamo_model::Item) -> TestResult {
    db.client()
        .put_item()
        .table_name(db.table_name())
        .set_item(Some(item))
        .send()
        .await?;
    Ok(())
}

/// Writes every row of `rows` with the raw SDK, one put each, as another program would.
pub async fn put_raw_rows<T: Table>(
    db: &dynamo_model::Db<T>,
    rows: impl IntoIterator<Item = dynamo_model::Item>,
) -> TestResult {
    for row in rows {
        put_raw(db, row).await?;
    }
    Ok(())
}

/// Asserts that `item` holds every attribute of `expected` with its value.
#[track_caller]
pub fn assert_holds(
    item: &dynamo_model::Item,
    expected: &[(&str, dynamo_model::aws_sdk_dynamodb::types::AttributeValue)],
) {
    for (name, value) in expected {
        assert_eq!(item.get(*name), Some(value), "{name} in {item:?}");
    }
}

/// A fresh table of `T` holding `rows`, written with the raw SDK as another program would.
pub async fn with_rows<T: Table>(
    rows: impl IntoIterator<Item = dynamo_model::Item>,
) -> Res<dynamo_model::local::TempTable<T>> {
    let db = dynamo_model::local::fresh_table::<T>().await?;
    put_raw_rows(&db, rows).await?;
    Ok(db)
}

/// The key `PK` = `pk`, `SK` = `sk`.
pub fn raw_key(
    pk: &str,
    sk: &str,
) -> std::collections::HashMap<String, dynamo_model::aws_sdk_dynamodb::types::AttributeValue> {
    std::collections::HashMap::from([("PK".to_owned(), s(pk)), ("SK".to_owned(), s(sk))])
}

/// The item under `pk`/`sk` as stored (strongly consistent, with the raw SDK).
pub async fn raw_get<T: Table>(
    db: &dynamo_model::Db<T>,
    pk: &str,
    sk: &str,
) -> Res<dynamo_model::Item> {
    Ok(db
        .client()
        .get_item()
        .table_name(db.table_name())
        .set_key(Some(raw_key(pk, sk)))
        .consistent_read(true)
        .send()
        .await?
        .item
        .ok_or("no item")?)
}

/// Sets attributes of the stored item `pk`/`sk` as another program would (placeholders
/// for every name and value).
pub async fn raw_set<T: Table>(
    db: &dynamo_model::Db<T>,
    pk: &str,
    sk: &str,
    attrs: &[(&str, dynamo_model::aws_sdk_dynamodb::types::AttributeValue)],
) -> Res<()> {
    let mut names = std::collections::HashMap::new();
    let mut values = std::collections::HashMap::new();
    let mut sets = Vec::new();
    for (i, (name, value)) in attrs.iter().enumerate() {
        names.insert(format!("#a{i}"), (*name).to_owned());
        values.insert(format!(":a{i}"), value.clone());
        sets.push(format!("#a{i} = :a{i}"));
    }
    db.client()
        .update_item()
        .table_name(db.table_name())
        .set_key(Some(raw_key(pk, sk)))
        .update_expression(format!("SET {}", sets.join(", ")))
        .set_expression_attribute_names(Some(names))
        .set_expression_attribute_values(Some(values))
        .send()
        .await?;
    Ok(())
}

/// Deletes the item `pk`/`sk` with the raw SDK, as another program would.
pub async fn raw_delete<T: Table>(db: &dynamo_model::Db<T>, pk: &str, sk: &str) -> Res<()> {
    db.client()
        .delete_item()
        .table_name(db.table_name())
        .set_key(Some(raw_key(pk, sk)))
        .send()
        .await?;
    Ok(())
}

/// The item under the raw key `key`, as stored (strongly consistent, with the raw SDK).
pub async fn raw_find<T: Table>(
    db: &dynamo_model::Db<T>,
    key: dynamo_model::Item,
) -> Res<Option<dynamo_model::Item>> {
    Ok(db
        .client()
        .get_item()
        .table_name(db.table_name())
        .set_key(Some(key))
        .consistent_read(true)
        .send()
        .await?
        .item)
}

/// Every item under the partition key `PK` = `pk`, as stored (a strongly consistent raw
/// query).
pub async fn raw_partition<T: Table>(
    db: &dynamo_model::Db<T>,
    pk: &str,
) -> Res<Vec<dynamo_model::Item>> {
    let out = db
        .client()
        .query()
        .table_name(db.table_name())
        .key_condition_expression("PK = :p")
        .expression_attribute_values(":p", s(pk))
        .consistent_read(true)
        .send()
        .await?;
    Ok(out.items.unwrap_or_default())
}

/// The sort keys under the partition key `PK` = `pk`, in the order DynamoDB returns them.
pub async fn raw_sort_keys<T: Table>(db: &dynamo_model::Db<T>, pk: &str) -> Res<Vec<String>> {
    Ok(raw_partition(db, pk)
        .await?
        .iter()
        .filter_map(|i| i.get("SK").and_then(|v| v.as_s().ok()).cloned())
        .collect())
}

/// Every item of a table, by its string keys (`PK`, `SK`).
pub type Rows = std::collections::BTreeMap<(String, String), dynamo_model::Item>;

/// Every item of the table as stored (a strongly consistent scan with the raw SDK).
pub async fn raw_table<T: Table>(db: &dynamo_model::Db<T>) -> Res<Rows> {
    let mut all = Rows::new();
    let mut start = None;
    loop {
        let out = db
            .client()
            .scan()
            .table_name(db.table_name())
            .set_exclusive_start_key(start)
            .consistent_read(true)
            .send()
            .await?;
        for item in out.items.unwrap_or_default() {
            let key = |k: &str| item.get(k).and_then(|v| v.as_s().ok()).cloned();
            all.insert(
                (key("PK").unwrap_or_default(), key("SK").unwrap_or_default()),
                item,
            );
        }
        match out.last_evaluated_key.filter(|k| !k.is_empty()) {
            Some(k) => start = Some(k),
            None => return Ok(all),
        }
    }
}

/// Turns the table's stream on with `view` and returns its ARN.
pub async fn enable_stream<T: Table>(
    db: &dynamo_model::Db<T>,
    view: dynamo_model::aws_sdk_dynamodb::types::StreamViewType,
) -> Res<String> {
    use dynamo_model::aws_sdk_dynamodb::types::StreamSpecification;
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
    Ok(describe(db).await?.latest_stream_arn.ok_or("no stream")?)
}

/// A DynamoDB Streams client on DynamoDB Local.
pub async fn streams_client() -> Res<aws_sdk_dynamodbstreams::Client> {
    use aws_sdk_dynamodbstreams::config::{BehaviorVersion, Credentials, Region};
    let endpoint = tokio::task::spawn_blocking(dynamo_model::local::shared_endpoint).await??;
    Ok(aws_sdk_dynamodbstreams::Client::from_conf(
        aws_sdk_dynamodbstreams::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-east-1"))
            .endpoint_url(endpoint)
            .credentials_provider(Credentials::new("dynamomodel", "local", None, None, "test"))
            .build(),
    ))
}

/// The table as DynamoDB describes it (`DescribeTable`).
pub async fn describe<T: Table>(
    db: &dynamo_model::Db<T>,
) -> Res<dynamo_model::aws_sdk_dynamodb::types::TableDescription> {
    let out = db
        .client()
        .describe_table()
        .table_name(db.table_name())
        .send()
        .await?;
    Ok(out.table.ok_or("no table")?)
}

/// The table's TTL attribute as DynamoDB describes it (`DescribeTimeToLive`).
pub async fn ttl_attribute<T: Table>(db: &dynamo_model::Db<T>) -> Res<Option<String>> {
    let out = db
        .client()
        .describe_time_to_live()
        .table_name(db.table_name())
        .send()
        .await?;
    let description = out.time_to_live_description.ok_or("no TTL description")?;
    Ok(description.attribute_name)
}

/// Every item of the table as stored, in key order (see [`raw_table`]).
pub async fn raw_items<T: Table>(db: &dynamo_model::Db<T>) -> Res<Vec<dynamo_model::Item>> {
    Ok(raw_table(db).await?.into_values().collect())
}

/// Every item one page of a raw scan of `index` returns (what DynamoDB indexed there).
pub async fn raw_index_items<T: Table>(
    db: &dynamo_model::Db<T>,
    index: &str,
) -> Res<Vec<dynamo_model::Item>> {
    let out = db
        .client()
        .scan()
        .table_name(db.table_name())
        .index_name(index)
        .send()
        .await?;
    Ok(out.items.unwrap_or_default())
}

/// Table `name` through a client like `db`'s that reaches DynamoDB in another region
/// (`eu-west-3`).
pub fn in_another_region<T: Table, X: Table>(
    db: &dynamo_model::Db<T>,
    name: &str,
) -> dynamo_model::Db<X> {
    let config = db
        .client()
        .config()
        .to_builder()
        .region(dynamo_model::aws_sdk_dynamodb::config::Region::new(
            "eu-west-3",
        ))
        .build();
    dynamo_model::Db::new(
        dynamo_model::aws_sdk_dynamodb::Client::from_conf(config),
        name,
    )
}

/// Retries of a few milliseconds, given up after 600 ms: for faults at every call.
pub fn quick_retry() -> dynamo_model::RetryPolicy {
    dynamo_model::RetryPolicy::default()
        .base(std::time::Duration::from_millis(2))
        .cap(std::time::Duration::from_millis(10))
        .deadline(std::time::Duration::from_millis(600))
}
