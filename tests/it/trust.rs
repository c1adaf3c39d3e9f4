//! Regression tests for defects found when the crate was attacked with hostile input:
//! silent short results, builder-order surprises, requests sent only to be refused.

use crate::common::*;
use dynamo_model::local::faults::{FaultKind, Faults};
use dynamo_model::{local, Db, Entity, Error, Table, ValidationReason};
use serde::{Deserialize, Serialize};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// `table` seen through a client whose `operation` calls are all refused with a
/// non-retryable ValidationException (nothing forwarded).
async fn rejecting<T: Table>(table: &Db<T>, operation: &'static str) -> Result<Db<T>, BoxError> {
    let faults = Faults::new(1)
        .rate(1.0)
        .kinds([FaultKind::Reject])
        .operations([operation]);
    faulty(table, &faults).await
}

/// A fresh table, and a client of it that rejects every `operation` call (see
/// [`rejecting`]).
async fn rejecting_table<T: Table>(operation: &'static str) -> Res<(local::TempTable<T>, Db<T>)> {
    let db = local::fresh_table::<T>().await?;
    let refusing = rejecting(&db, operation).await?;
    Ok((db, refusing))
}

fn order(user: &str, n: u32, status: &str) -> Order {
    Order {
        user_id: user.into(),
        order_id: uuid::Uuid::from_u128(n.into()),
        created_at: time::macros::datetime!(2024-01-01 0:00 UTC) + time::Duration::days(n.into()),
        total_cents: 100,
        status: status.into(),
        note: None,
    }
}

#[tokio::test]
async fn hydrate_reports_a_failed_batch_get_instead_of_a_short_page() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    for n in 0..4 {
        db.put(&order("u", n, "open")).await?;
    }
    // The index query works; the batch get behind `hydrate` is refused.
    let flaky = rejecting(&db, "BatchGetItem").await?;
    let err = flaky
        .query(Order::gsi2_partition("open"))
        .keys_only()
        .hydrate(None)
        .await
        .unwrap_err();
    match &err {
        Error::Incomplete {
            entity,
            operation,
            missing,
            source,
            ..
        } => {
            assert_eq!(
                (*entity, *operation, *missing),
                ("Order", "BatchGetItem", 4)
            );
            assert!(
                matches!(source.as_deref(), Some(Error::Service { .. })),
                "{source:?}"
            );
        }
        other => panic!("expected Incomplete, got {other:?}"),
    }
    // Without the fault the same call returns every item.
    let page = db
        .query(Order::gsi2_partition("open"))
        .keys_only()
        .hydrate(None)
        .await?;
    assert_eq!(page.items.len(), 4);
    Ok(())
}

#[tokio::test]
async fn a_sort_key_condition_is_kept_whichever_side_of_collection_it_is_given() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    seed_purchase(&db, "p").await?;
    let before = items_of(
        db.query(PurchaseItem::partition("p"))
            .sk(PurchaseItem::sk().n().ge(2u8))
            .collection::<PurchaseDetails>(),
    )
    .await?;
    let after = items_of(
        db.query(PurchaseItem::partition("p"))
            .collection::<PurchaseDetails>()
            .sk(PurchaseItem::sk().n().ge(2u8)),
    )
    .await?;
    assert_eq!(before, after);
    let lines: Vec<u8> = before
        .iter()
        .map(|d| match d {
            PurchaseDetails::Item(i) => Ok(i.n),
            other => Err(format!("outside the range: {other:?}")),
        })
        .collect::<Result<_, _>>()?;
    assert_eq!(lines, [2, 3]);
    // A fixed sort key kept too: the purchase alone, not the whole partition.
    let alone = items_of(
        db.query(Purchase::partition("p"))
            .sk(Purchase::sk())
            .collection::<PurchaseDetails>(),
    )
    .await?;
    assert!(
        matches!(alone.as_slice(), [PurchaseDetails::Purchase(_)]),
        "{alone:?}"
    );
    // Without a condition the collection still reads the whole partition.
    let all = items_of(
        db.query(Purchase::partition("p"))
            .collection::<PurchaseDetails>(),
    )
    .await?;
    assert_eq!(all.len(), 5);
    Ok(())
}

/// An `INCLUDE` index that leaves out the entity-type attribute (and a field).
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK",
         gsi(name = "ByTotal", pk = "GSI1PK", sk = "GSI1SK",
             projection(include = ["orderId", "totalCents"])))]
pub struct Shop;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, pk = "ORDER#{order_id}", sk = "ORDER",
         index(ByTotal, pk = "TOTALS", sk = "{total_cents}"))]
#[serde(rename_all = "camelCase")]
pub struct ShopOrder {
    pub order_id: String,
    pub total_cents: u64,
    pub note: String,
}

#[tokio::test]
async fn a_query_of_an_index_that_does_not_project_what_decoding_needs_is_refused() -> TestResult {
    let db = table_with([ShopOrder {
        order_id: "o".into(),
        total_cents: 5,
        note: "n".into(),
    }])
    .await?;
    // Nothing is sent: the same query through a client that refuses every Query still
    // fails with the refusal, not with the service error.
    let refusing = rejecting(&db, "Query").await?;
    let err = refusing
        .query(ShopOrder::by_total_partition())
        .all()
        .await
        .unwrap_err();
    assert_refused(&err, ValidationReason::IndexProjection);
    let message = err.to_string();
    assert!(
        message.contains("`_type`") && message.contains("`note`"),
        "{message}"
    );
    // Keys are what every index holds: still readable.
    let keys = items_of(db.query(ShopOrder::by_total_partition()).keys_only()).await?;
    assert_eq!(keys, [ShopOrder::key("o")]);
    Ok(())
}

#[tokio::test]
async fn a_partition_value_over_2048_bytes_is_refused_before_sending() -> TestResult {
    let (db, refusing) = rejecting_table::<App>("Query").await?;
    refused(
        refusing.query(Order::partition("x".repeat(2100))).all(),
        ValidationReason::KeyTooLong,
    )
    .await;
    // At the limit it is sent (and finds nothing).
    let prefix_len = Order::partition("").value()?.len();
    let fits = items_of(db.query(Order::partition("x".repeat(2048 - prefix_len)))).await?;
    assert!(fits.is_empty());
    Ok(())
}

#[tokio::test]
async fn floats_outside_the_number_range_are_refused_before_sending() -> TestResult {
    let (db, refusing) = rejecting_table::<Shop>("PutItem").await?;
    for bad in [
        f64::MAX,
        1e126,
        -1e126,
        5e-324,
        -1e-131,
        f64::NAN,
        f64::INFINITY,
    ] {
        refused(
            refusing.put(&Measure {
                id: "m".into(),
                value: bad,
            }),
            ValidationReason::InvalidNumber,
        )
        .await;
    }
    // The bounds DynamoDB accepts are stored and read back exactly.
    let largest = f64::from_bits(1e126_f64.to_bits() - 1);
    for good in [largest, -largest, 1e-130, -1e-130, 0.0, 1.5] {
        let m = Measure {
            id: format!("{good:e}"),
            value: good,
        };
        db.put(&m).await?;
        let back = db.get(Measure::key(m.id.as_str())).consistent().await?;
        assert_eq!(back.map(|b| b.value), Some(good));
    }
    Ok(())
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, pk = "MEASURE#{id}", sk = "MEASURE")]
pub struct Measure {
    pub id: String,
    pub value: f64,
}

#[tokio::test]
async fn a_temp_table_is_deleted_when_dropped_and_kept_on_request() -> TestResult {
    let table = local::fresh_table::<Shop>().await?;
    let name = table.table_name().to_owned();
    let client = table.client().clone();
    let exists = |name: String| {
        let client = client.clone();
        async move {
            match client.describe_table().table_name(name).send().await {
                Ok(_) => Ok(true),
                Err(e)
                    if e.as_service_error()
                        .is_some_and(|s| s.is_resource_not_found_exception()) =>
                {
                    Ok(false)
                }
                Err(e) => Err(e),
            }
        }
    };
    assert!(exists(name.clone()).await?);
    drop(table);
    assert!(!exists(name).await?);

    let kept = local::fresh_table::<Shop>().await?.keep();
    assert!(exists(kept.table_name().to_owned()).await?);
    kept.delete_table().await?;
    Ok(())
}

#[tokio::test]
async fn a_refused_transaction_operation_keeps_its_reason_and_source() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let big = User::oversized("big");
    let err = db
        .transact_write()
        .put(db.put(&User::sample("ok")))
        .put(db.put(&big))
        .await
        .unwrap_err();
    match &err {
        Error::Validation {
            entity,
            operation,
            reason,
            message,
            ..
        } => {
            assert_eq!(
                (*entity, *operation, *reason),
                (
                    Some("User"),
                    Some("TransactWriteItems"),
                    ValidationReason::ItemTooLarge
                )
            );
            assert!(message.starts_with("operation 1: "), "{message}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    // A key that cannot be encoded keeps the KeyError as its cause.
    let far = time::macros::datetime!(9999-12-31 23:30 -01:00); // year 10000 in UTC
    let err = db
        .transact_write()
        .delete(db.delete(Order::key(OrderKey {
            user_id: "u",
            created_at: far,
            order_id: uuid::Uuid::nil(),
        })))
        .await
        .unwrap_err();
    assert_refused(&err, ValidationReason::KeyEncoding);
    let cause = match &err {
        Error::Validation { cause, message, .. } => {
            assert!(message.contains("cannot be encoded in a key"), "{message}");
            cause.as_ref().map(|c| c.to_string())
        }
        other => panic!("expected a refusal, got {other:?}"),
    };
    assert!(
        cause
            .as_deref()
            .is_some_and(|s| s.contains("cannot be encoded in a key")),
        "{cause:?}"
    );
    // Nothing was written.
    assert!(db.get(User::key("ok")).consistent().await?.is_none());
    Ok(())
}

#[tokio::test]
async fn a_sort_key_bound_over_1024_bytes_is_refused_before_sending() -> TestResult {
    let (db, refusing) = rejecting_table::<App>("Query").await?;
    refused(
        refusing
            .query(Store::partition())
            .sk(Store::sk().country().ge("x".repeat(1100)))
            .all(),
        ValidationReason::KeyTooLong,
    )
    .await;
    // Within the limit the query is sent (and finds nothing).
    let within = Store::sk().country().ge("x".repeat(1000));
    let none = items_of(db.query(Store::partition()).sk(within)).await?;
    assert!(none.is_empty());
    Ok(())
}

#[tokio::test]
async fn empty_values_on_a_multi_attribute_index_key_mean_everything_or_nothing() -> TestResult {
    use crate::index::{Arena, Match, MatchByRegionPartition};
    let db = local::fresh_table::<Arena>().await?;
    for (i, player) in ["ann", "bob"].into_iter().enumerate() {
        db.put(&Match {
            match_id: i as u32,
            tournament: "worlds".into(),
            region: Some("EU".into()),
            score: 10,
            player: player.into(),
        })
        .await?;
    }
    // Through a client that refuses every Query: an answer proves nothing was sent.
    let refusing = rejecting(&db, "Query").await?;
    let q = || {
        refusing.query(Match::by_region_partition(MatchByRegionPartition {
            tournament: "worlds",
            region: "EU",
        }))
    };
    let sk = || Match::by_region_sk().score().eq(10u32);
    for nothing in [sk().player().lt(""), sk().player().le("")] {
        assert!(q().sk(nothing).all().await?.items.is_empty());
    }
    assert!(q().sk(sk().player().eq("")).all().await?.items.is_empty());
    let players = |items: Vec<Match>| items.into_iter().map(|m| m.player).collect::<Vec<_>>();
    let q = || {
        db.query(Match::by_region_partition(MatchByRegionPartition {
            tournament: "worlds",
            region: "EU",
        }))
    };
    for everything in [
        sk().player().ge(""),
        sk().player().gt(""),
        sk().player().begins_with(""),
    ] {
        assert_eq!(
            players(q().sk(everything).all().await?.items),
            ["ann", "bob"]
        );
    }
    refused(
        db.query(Match::by_region_partition(MatchByRegionPartition {
            tournament: "",
            region: "EU",
        }))
        .all(),
        ValidationReason::EmptyKeyValue,
    )
    .await;
    Ok(())
}

#[tokio::test]
async fn no_batch_write_path_bypasses_the_version_check() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let newer = doc("d", "newer", 0);
    db.put(&newer).await?; // stored at version 1
    let mut stale = newer.clone();
    stale.body = "stale".into();
    stale.version = 7;
    // An operation list (as resubmitted from `unprocessed`) carrying a versioned item.
    let put = dynamo_model::WriteOp::Put {
        entity: "Doc",
        key: stale.primary_key().into_raw()?,
        item: stale.to_item()?,
        table: None,
    };
    refused(
        db.batch_write().ops([put]),
        ValidationReason::NotSupportedInBatch,
    )
    .await;
    refused(
        db.batch_write().delete(newer.primary_key()),
        ValidationReason::NotSupportedInBatch,
    )
    .await;
    refused(
        db.bulk_load().delete(newer.primary_key()),
        ValidationReason::NotSupportedInBatch,
    )
    .await;
    let stored = db.get(newer.primary_key()).consistent().await?;
    assert_eq!(
        stored.map(|d| (d.body, d.version)),
        Some(("newer".into(), 1))
    );
    Ok(())
}

/// A feed index that projects the posts' fields but not the comments' bodies.
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK",
         gsi(name = "Feed", pk = "GSI1PK", sk = "GSI1SK",
             projection(include = ["_type", "post_id", "title", "comment_id"])))]
pub struct Blog;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Blog, pk = "POST#{post_id}", sk = "POST",
         index(Feed, pk = "FEED", sk = "P#{post_id}"))]
pub struct Post {
    pub post_id: String,
    pub title: String,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Blog, pk = "POST#{post_id}", sk = "C#{comment_id}",
         index(Feed, pk = "FEED", sk = "C#{comment_id}"))]
pub struct Comment {
    pub post_id: String,
    pub comment_id: String,
    pub body: String,
}

#[derive(dynamo_model::Collection, Debug, Clone, PartialEq)]
pub enum FeedItem {
    Post(Post),
    Comment(Comment),
}

#[tokio::test]
async fn a_collection_query_of_an_index_missing_a_members_fields_is_refused() -> TestResult {
    let db = local::fresh_table::<Blog>().await?;
    let post = Post {
        post_id: "p".into(),
        title: "t".into(),
    };
    db.put(&post).await?;
    db.put(&Comment {
        post_id: "p".into(),
        comment_id: "c".into(),
        body: "b".into(),
    })
    .await?;
    let refusing = rejecting(&db, "Query").await?;
    let err = refusing
        .query(Post::feed_partition())
        .collection::<FeedItem>()
        .all()
        .await
        .unwrap_err();
    assert_refused(&err, ValidationReason::IndexProjection);
    assert!(err.to_string().contains("`body`"), "{err}");
    // The member whose fields the index holds reads fine on its own.
    let posts = items_of(db.query(Post::feed_partition())).await?;
    assert_eq!(posts, [post]);
    Ok(())
}
