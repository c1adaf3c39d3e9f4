//! The fault injector (`dynamo_model::local::faults`) against DynamoDB Local, through the
//! raw SDK client: each fault must look to the SDK exactly like DynamoDB's, and apply
//! exactly what DynamoDB would have applied.

use crate::common::TestResult;
use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::operation::batch_write_item::BatchWriteItemError;
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType, KeysAndAttributes,
    Put, PutRequest, ScalarAttributeType, TransactWriteItem, WriteRequest,
};
use aws_sdk_dynamodb::Client;
use dynamo_model::local::faults::{client_with_faults, FaultKind, FaultStats, Faults};
use dynamo_model::local::{self, BoxError};
use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

/// The shared DynamoDB Local's endpoint (started on first use, off the async threads).
async fn endpoint() -> Result<String, BoxError> {
    Ok(tokio::task::spawn_blocking(local::shared_endpoint).await??)
}

/// A fresh PK/SK string table, created with the plain (fault-free) client.
async fn raw_table(plain: &Client) -> Result<String, BoxError> {
    let name = local::unique_table_name("faults");
    plain
        .create_table()
        .table_name(&name)
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("PK")
                .attribute_type(ScalarAttributeType::S)
                .build()?,
        )
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("SK")
                .attribute_type(ScalarAttributeType::S)
                .build()?,
        )
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("PK")
                .key_type(KeyType::Hash)
                .build()?,
        )
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("SK")
                .key_type(KeyType::Range)
                .build()?,
        )
        .send()
        .await?;
    Ok(name)
}

/// The plain client, a fresh table, and the endpoint for faulty clients.
async fn setup() -> Result<(String, Client, String), BoxError> {
    let endpoint = endpoint().await?;
    let plain = local::client_for(&endpoint);
    let table = raw_table(&plain).await?;
    Ok((endpoint, plain, table))
}

fn key(sk: &str) -> HashMap<String, AttributeValue> {
    HashMap::from([
        ("PK".to_owned(), AttributeValue::S("P".into())),
        ("SK".to_owned(), AttributeValue::S(sk.into())),
    ])
}

fn item(sk: &str) -> HashMap<String, AttributeValue> {
    let mut item = key(sk);
    item.insert("V".to_owned(), AttributeValue::S(format!("value {sk}")));
    item
}

fn sk_of(item: &HashMap<String, AttributeValue>) -> String {
    match item.get("SK") {
        Some(AttributeValue::S(sk)) => sk.clone(),
        other => panic!("item without a string SK: {other:?}"),
    }
}

fn put_request(sk: &str) -> Result<WriteRequest, BoxError> {
    Ok(WriteRequest::builder()
        .put_request(PutRequest::builder().set_item(Some(item(sk))).build()?)
        .build())
}

/// Standard SDK retries with a short backoff, so retried tests stay fast.
fn fast_retries(max_attempts: u32) -> RetryConfig {
    RetryConfig::standard()
        .with_max_attempts(max_attempts)
        .with_initial_backoff(Duration::from_millis(5))
        .with_max_backoff(Duration::from_millis(50))
}

async fn put(client: &Client, table: &str, sk: &str) -> Result<(), BoxError> {
    client
        .put_item()
        .table_name(table)
        .set_item(Some(item(sk)))
        .send()
        .await?;
    Ok(())
}

async fn exists(plain: &Client, table: &str, sk: &str) -> Result<bool, BoxError> {
    let got = plain
        .get_item()
        .table_name(table)
        .set_key(Some(key(sk)))
        .consistent_read(true)
        .send()
        .await?;
    Ok(got.item().is_some())
}

/// Every SK in the table.
async fn all_sks(plain: &Client, table: &str) -> Result<BTreeSet<String>, BoxError> {
    let mut sks = BTreeSet::new();
    let mut start = None;
    loop {
        let page = plain
            .scan()
            .table_name(table)
            .consistent_read(true)
            .set_exclusive_start_key(start)
            .send()
            .await?;
        sks.extend(page.items().iter().map(sk_of));
        start = page.last_evaluated_key().cloned();
        if start.is_none() {
            return Ok(sks);
        }
    }
}

fn names(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("item-{i:02}")).collect()
}

#[tokio::test]
async fn throttle_without_retries_fails_and_applies_nothing() -> TestResult {
    let (endpoint, plain, table) = setup().await?;
    let faults = Faults::new(1).kinds([FaultKind::Throttle]);
    let client = client_with_faults(&endpoint, &faults, RetryConfig::disabled());

    let Err(err) = put(&client, &table, "a").await else {
        panic!("a throttled put must fail");
    };
    let err = err
        .downcast::<aws_sdk_dynamodb::error::SdkError<PutItemError>>()
        .map_err(|e| format!("not an SdkError: {e}"))?;
    assert_eq!(err.raw_response().map(|r| r.status().as_u16()), Some(400));
    let service = err.as_service_error().ok_or("not a service error")?;
    assert!(
        matches!(
            service,
            PutItemError::ProvisionedThroughputExceededException(_)
        ),
        "{service:?}"
    );
    assert_eq!(
        service.code(),
        Some("ProvisionedThroughputExceededException")
    );
    assert!(service.message().is_some_and(|m| m.contains("throughput")));
    assert!(!exists(&plain, &table, "a").await?);
    assert_eq!(
        faults.stats(),
        FaultStats {
            calls: 1,
            throttled: 1,
            ..FaultStats::default()
        }
    );
    Ok(())
}

#[tokio::test]
async fn throttle_is_retried_by_the_sdk() -> TestResult {
    let (endpoint, plain, table) = setup().await?;

    // Always throttled: the SDK classifies it as retryable and makes all its attempts.
    let always = Faults::new(2).kinds([FaultKind::Throttle]);
    let client = client_with_faults(&endpoint, &always, fast_retries(3));
    assert!(put(&client, &table, "never").await.is_err());
    assert_eq!(always.stats().calls, 3);
    assert_eq!(always.stats().throttled, 3);
    assert!(!exists(&plain, &table, "never").await?);

    // Half the attempts throttled: with 10 attempts the put eventually succeeds.
    for (seed, sk) in [(3, "a"), (4, "b"), (5, "c"), (6, "d")] {
        let half = Faults::new(seed).rate(0.5).kinds([FaultKind::Throttle]);
        let client = client_with_faults(&endpoint, &half, fast_retries(10));
        put(&client, &table, sk).await?;
        assert!(exists(&plain, &table, sk).await?);
        let stats = half.stats();
        // Every attempt but the last was throttled.
        assert_eq!(stats.calls, stats.throttled + 1, "{stats:?}");
    }
    Ok(())
}

#[tokio::test]
async fn server_error_is_not_applied_and_is_retried() -> TestResult {
    let (endpoint, plain, table) = setup().await?;
    let faults = Faults::new(7).kinds([FaultKind::ServerError]);

    let client = client_with_faults(&endpoint, &faults, RetryConfig::disabled());
    let Err(err) = client
        .put_item()
        .table_name(&table)
        .set_item(Some(item("a")))
        .send()
        .await
    else {
        panic!("a put answered by a 500 must fail");
    };
    assert_eq!(err.raw_response().map(|r| r.status().as_u16()), Some(500));
    assert!(
        matches!(
            err.as_service_error(),
            Some(PutItemError::InternalServerError(_))
        ),
        "{err:?}"
    );
    assert!(!exists(&plain, &table, "a").await?);
    assert_eq!(faults.stats().server_errors, 1);

    // A 500 is transient for the SDK: it makes all its attempts.
    let retried = Faults::new(8).kinds([FaultKind::ServerError]);
    let client = client_with_faults(&endpoint, &retried, fast_retries(3));
    assert!(put(&client, &table, "b").await.is_err());
    assert_eq!(
        retried.stats(),
        FaultStats {
            calls: 3,
            server_errors: 3,
            ..FaultStats::default()
        }
    );
    Ok(())
}

#[tokio::test]
async fn server_error_after_apply_fails_but_the_write_is_there() -> TestResult {
    let (endpoint, plain, table) = setup().await?;
    let faults = Faults::new(9).kinds([FaultKind::ServerErrorAfterApply]);
    let client = client_with_faults(&endpoint, &faults, RetryConfig::disabled());

    let Err(err) = client
        .put_item()
        .table_name(&table)
        .set_item(Some(item("a")))
        .send()
        .await
    else {
        panic!("a put answered by a 500 must fail");
    };
    let status = err.raw_response().map(|r| r.status());
    assert!(status.is_some_and(|s| s.is_server_error()), "{status:?}");
    assert!(
        matches!(
            err.as_service_error(),
            Some(PutItemError::InternalServerError(_))
        ),
        "{err:?}"
    );
    assert!(exists(&plain, &table, "a").await?);
    assert_eq!(
        faults.stats(),
        FaultStats {
            calls: 1,
            server_errors_after_apply: 1,
            ..FaultStats::default()
        }
    );
    Ok(())
}

#[tokio::test]
async fn partial_batch_write_applies_exactly_the_processed_items() -> TestResult {
    let endpoint = endpoint().await?;
    let plain = local::client_for(&endpoint);
    let all = names(0..25);
    for seed in [10, 11, 12] {
        let table = raw_table(&plain).await?;
        let faults = Faults::new(seed).kinds([FaultKind::PartialBatch]);
        let client = client_with_faults(&endpoint, &faults, RetryConfig::disabled());

        let requests = all
            .iter()
            .map(|sk| put_request(sk))
            .collect::<Result<Vec<_>, _>>()?;
        let out = client
            .batch_write_item()
            .request_items(&table, requests)
            .send()
            .await?;
        let unprocessed: Vec<WriteRequest> = out
            .unprocessed_items()
            .and_then(|u| u.get(&table))
            .cloned()
            .unwrap_or_default();
        assert!(!unprocessed.is_empty(), "seed {seed}: nothing unprocessed");
        assert!(
            unprocessed.len() < all.len(),
            "seed {seed}: nothing processed"
        );
        let unprocessed_sks: BTreeSet<String> = unprocessed
            .iter()
            .filter_map(|w| w.put_request())
            .map(|p| sk_of(p.item()))
            .collect();
        assert_eq!(unprocessed_sks.len(), unprocessed.len(), "duplicates");

        let in_table = all_sks(&plain, &table).await?;
        let expected: BTreeSet<String> = all
            .iter()
            .filter(|sk| !unprocessed_sks.contains(*sk))
            .cloned()
            .collect();
        assert_eq!(in_table, expected, "seed {seed}");

        // Re-sending what came back completes the set.
        faults.set_enabled(false);
        let again = client
            .batch_write_item()
            .request_items(&table, unprocessed)
            .send()
            .await?;
        assert!(again
            .unprocessed_items()
            .is_none_or(|u| u.values().all(Vec::is_empty)));
        assert_eq!(
            all_sks(&plain, &table).await?,
            all.iter().cloned().collect::<BTreeSet<_>>()
        );
        assert_eq!(
            faults.stats(),
            FaultStats {
                calls: 2,
                partial_batches: 1,
                ..FaultStats::default()
            }
        );
    }
    Ok(())
}

#[tokio::test]
async fn partial_batch_get_covers_every_key_exactly_once() -> TestResult {
    let (endpoint, plain, table) = setup().await?;
    let all = names(0..25);
    let requests = all
        .iter()
        .map(|sk| put_request(sk))
        .collect::<Result<Vec<_>, _>>()?;
    plain
        .batch_write_item()
        .request_items(&table, requests)
        .send()
        .await?;

    for seed in [20, 21, 22] {
        let faults = Faults::new(seed).kinds([FaultKind::PartialBatch]);
        let client = client_with_faults(&endpoint, &faults, RetryConfig::disabled());
        let keys = KeysAndAttributes::builder()
            .set_keys(Some(all.iter().map(|sk| key(sk)).collect()))
            .consistent_read(true)
            .projection_expression("PK, SK, #v")
            .expression_attribute_names("#v", "V")
            .build()?;
        let out = client
            .batch_get_item()
            .request_items(&table, keys)
            .send()
            .await?;
        let returned: Vec<String> = out
            .responses()
            .and_then(|r| r.get(&table))
            .map(|items| items.iter().map(sk_of).collect())
            .unwrap_or_default();
        let unprocessed = out
            .unprocessed_keys()
            .and_then(|u| u.get(&table))
            .cloned()
            .ok_or("no UnprocessedKeys for the table")?;
        assert_eq!(unprocessed.consistent_read(), Some(true));
        assert_eq!(unprocessed.projection_expression(), Some("PK, SK, #v"));
        let pending: Vec<String> = unprocessed.keys().iter().map(sk_of).collect();
        assert!(!returned.is_empty() && !pending.is_empty(), "seed {seed}");

        let mut covered: Vec<String> = returned.iter().chain(&pending).cloned().collect();
        covered.sort();
        assert_eq!(covered, all, "seed {seed}: every key exactly once");

        // Re-sending the unprocessed keys returns exactly the rest.
        faults.set_enabled(false);
        let again = client
            .batch_get_item()
            .request_items(&table, unprocessed)
            .send()
            .await?;
        let mut rest: Vec<String> = again
            .responses()
            .and_then(|r| r.get(&table))
            .map(|items| items.iter().map(sk_of).collect())
            .unwrap_or_default();
        rest.sort();
        let mut pending = pending;
        pending.sort();
        assert_eq!(rest, pending);
        assert_eq!(faults.stats().partial_batches, 1);
    }
    Ok(())
}

#[tokio::test]
async fn transaction_conflict_cancels_the_whole_transaction() -> TestResult {
    let (endpoint, plain, table) = setup().await?;
    let faults = Faults::new(30).kinds([FaultKind::TransactionConflict]);
    // Standard retries: a cancelled transaction must not be retried by the SDK.
    let client = client_with_faults(&endpoint, &faults, fast_retries(3));

    let items = ["a", "b", "c"]
        .into_iter()
        .map(|sk| -> Result<TransactWriteItem, BoxError> {
            Ok(TransactWriteItem::builder()
                .put(
                    Put::builder()
                        .table_name(&table)
                        .set_item(Some(item(sk)))
                        .build()?,
                )
                .build())
        })
        .collect::<Result<Vec<_>, _>>()?;
    let Err(err) = client
        .transact_write_items()
        .set_transact_items(Some(items))
        .send()
        .await
    else {
        panic!("a conflicted transaction must fail");
    };
    assert_eq!(err.raw_response().map(|r| r.status().as_u16()), Some(400));
    let Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) =
        err.as_service_error()
    else {
        panic!("expected TransactionCanceledException, got {err:?}");
    };
    let codes: Vec<Option<&str>> = cancelled
        .cancellation_reasons()
        .iter()
        .map(|r| r.code())
        .collect();
    assert_eq!(codes.len(), 3, "{codes:?}");
    assert_eq!(
        codes
            .iter()
            .filter(|c| **c == Some("TransactionConflict"))
            .count(),
        1
    );
    assert_eq!(codes.iter().filter(|c| **c == Some("None")).count(), 2);
    let listed = codes
        .iter()
        .map(|c| c.unwrap_or("?"))
        .collect::<Vec<_>>()
        .join(", ");
    assert_eq!(
        cancelled.message(),
        Some(
            format!(
                "Transaction cancelled, please refer cancellation reasons for specific reasons \
                 [{listed}]"
            )
            .as_str()
        )
    );
    assert!(all_sks(&plain, &table).await?.is_empty(), "nothing applied");
    assert_eq!(
        faults.stats(),
        FaultStats {
            calls: 1,
            transaction_conflicts: 1,
            ..FaultStats::default()
        }
    );

    // The same style as DynamoDB Local's own cancellation (here a failed condition).
    put(&plain, &table, "a").await?;
    let Err(real) = plain
        .transact_write_items()
        .transact_items(
            TransactWriteItem::builder()
                .put(
                    Put::builder()
                        .table_name(&table)
                        .set_item(Some(item("a")))
                        .condition_expression("attribute_not_exists(PK)")
                        .build()?,
                )
                .build(),
        )
        .transact_items(
            TransactWriteItem::builder()
                .put(
                    Put::builder()
                        .table_name(&table)
                        .set_item(Some(item("b")))
                        .build()?,
                )
                .build(),
        )
        .send()
        .await
    else {
        panic!("the condition must fail");
    };
    let Some(TransactWriteItemsError::TransactionCanceledException(real)) = real.as_service_error()
    else {
        panic!("expected TransactionCanceledException, got {real:?}");
    };
    assert_eq!(
        real.message(),
        Some(
            "Transaction cancelled, please refer cancellation reasons for specific reasons \
             [ConditionalCheckFailed, None]"
        )
    );
    let real_codes: Vec<Option<&str>> = real
        .cancellation_reasons()
        .iter()
        .map(|r| r.code())
        .collect();
    assert_eq!(real_codes, [Some("ConditionalCheckFailed"), Some("None")]);
    Ok(())
}

#[tokio::test]
async fn delay_holds_the_response_back() -> TestResult {
    let (endpoint, plain, table) = setup().await?;
    let faults = Faults::new(40).kinds([FaultKind::Delay(Duration::from_millis(300))]);
    let client = client_with_faults(&endpoint, &faults, RetryConfig::disabled());

    let started = Instant::now();
    put(&client, &table, "a").await?;
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(300), "took {took:?}");
    assert!(exists(&plain, &table, "a").await?);
    assert_eq!(
        faults.stats(),
        FaultStats {
            calls: 1,
            delayed: 1,
            ..FaultStats::default()
        }
    );
    Ok(())
}

#[tokio::test]
async fn operations_filter_enable_switch_and_stats() -> TestResult {
    let (endpoint, plain, table) = setup().await?;
    let faults = Faults::new(50)
        .kinds([FaultKind::Throttle])
        .operations(["BatchWriteItem"]);
    let client = client_with_faults(&endpoint, &faults, RetryConfig::disabled());

    // Not a selected operation: untouched.
    put(&client, &table, "a").await?;
    assert!(exists(&plain, &table, "a").await?);

    // A selected one: throttled.
    let Err(err) = client
        .batch_write_item()
        .request_items(&table, vec![put_request("b")?])
        .send()
        .await
    else {
        panic!("a throttled batch must fail");
    };
    assert!(
        matches!(
            err.as_service_error(),
            Some(BatchWriteItemError::ProvisionedThroughputExceededException(
                _
            ))
        ),
        "{err:?}"
    );
    assert!(!exists(&plain, &table, "b").await?);

    // Switched off: everything passes.
    faults.set_enabled(false);
    client
        .batch_write_item()
        .request_items(&table, vec![put_request("b")?])
        .send()
        .await?;
    assert!(exists(&plain, &table, "b").await?);

    // Switched on again; a kind that does not apply to an operation leaves it untouched.
    faults.set_enabled(true);
    let partial_only = Faults::new(51).kinds([FaultKind::PartialBatch]);
    let other = client_with_faults(&endpoint, &partial_only, RetryConfig::disabled());
    put(&other, &table, "c").await?;
    let single = other
        .batch_write_item()
        .request_items(&table, vec![put_request("d")?])
        .send()
        .await?;
    assert!(single
        .unprocessed_items()
        .is_none_or(|u| u.values().all(Vec::is_empty)));
    assert_eq!(
        all_sks(&plain, &table).await?,
        ["a", "b", "c", "d"].map(String::from).into()
    );

    assert_eq!(
        faults.stats(),
        FaultStats {
            calls: 3,
            throttled: 1,
            ..FaultStats::default()
        }
    );
    assert_eq!(
        partial_only.stats(),
        FaultStats {
            calls: 2,
            ..FaultStats::default()
        }
    );
    Ok(())
}
