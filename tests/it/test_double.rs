//! The test double (`dynamo_model::double`): scripted answers reach the caller as the
//! crate's typed errors and results, through the SDK's and the crate's retries, and every
//! request is recorded. No DynamoDB Local: each test runs in milliseconds.

use dynamo_model::aws_sdk_dynamodb::operation::batch_write_item::BatchWriteItemInput;
use dynamo_model::aws_sdk_dynamodb::operation::put_item::PutItemInput;
use dynamo_model::double::{Answer, Double, Operation};
use dynamo_model::transact::CancelReason;
use dynamo_model::{Db, Entity, Error, RawKey, Table};
use std::time::{Duration, Instant};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE")]
struct User {
    id: String,
    name: String,
    #[dynamo(default)]
    credits: u64,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "DOC#{id}", sk = "DOC")]
struct Doc {
    id: String,
    #[dynamo(version)]
    version: u64,
}

/// Many items in one partition.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "BOARD#{board}", sk = "NOTE#{n}")]
struct Note {
    board: String,
    n: u32,
}

fn user(id: &str) -> User {
    User {
        id: id.into(),
        name: format!("user {id}"),
        credits: 0,
    }
}

fn raw_key(pk: &str, sk: &str) -> RawKey {
    RawKey {
        pk: pk.into(),
        sk: Some(sk.into()),
    }
}

fn setup() -> (Double, Db<App>) {
    let double = Double::new();
    let db = double.db("app");
    (double, db)
}

/// A double answering `operation` with `answers`, in order, and a `Db` on it.
fn answering<const N: usize>(operation: Operation, answers: [Answer; N]) -> (Double, Db<App>) {
    let (double, db) = setup();
    answers
        .into_iter()
        .fold(double.on(operation), |script, answer| script.then(answer));
    (double, db)
}

#[tokio::test]
async fn a_failed_condition_is_condition_failed_with_the_current_item() -> TestResult {
    let (double, db) = setup();
    let stored = User {
        name: "the first Ann".into(),
        ..user("ann")
    };
    double
        .on(Operation::PutItem)
        .then(Answer::condition_failed_with(&stored));
    let err = db.put(&user("ann")).if_absent().await.unwrap_err();
    let Error::ConditionFailed { entity, key, .. } = &err else {
        panic!("not a failed condition: {err:?}");
    };
    assert_eq!((*entity, key.as_str()), ("User", "PK=USER#ann, SK=PROFILE"));
    assert_eq!(err.current::<User>().ok_or("no current item")??, stored);

    // What was sent: one PutItem of Ann, refused, asking for the item as stored.
    let [put] = double.calls().try_into().map_err(|c| format!("{c:?}"))?;
    assert_eq!((put.operation(), put.attempt()), (Operation::PutItem, 1));
    assert_eq!(put.table(), Some("app"));
    assert_eq!(put.entity(), Some("User"));
    assert_eq!(put.key(), Some(&raw_key("USER#ann", "PROFILE")));
    assert_eq!(put.items::<User>(), vec![user("ann")]);
    assert!(put.items::<Doc>().is_empty());
    let input = put.input::<PutItemInput>().ok_or("not a PutItemInput")?;
    assert!(input
        .condition_expression()
        .is_some_and(|c| c.contains("attribute_not_exists")));
    double.assert_done();
    Ok(())
}

#[tokio::test]
async fn an_update_of_no_item_is_not_found() -> TestResult {
    let (double, db) = answering(Operation::UpdateItem, [Answer::condition_failed()]);
    let added = db
        .update(User::key("nobody"))
        .add(User::fields().credits, 5);
    let outcome = added.await;
    assert!(
        matches!(outcome, Err(Error::NotFound { entity: "User", .. })),
        "{outcome:?}"
    );
    let [update] = double.calls().try_into().map_err(|c| format!("{c:?}"))?;
    assert_eq!(update.key(), Some(&raw_key("USER#nobody", "PROFILE")));
    Ok(())
}

#[tokio::test]
async fn a_get_and_a_query_return_the_scripted_entities() -> TestResult {
    let (double, db) = answering(
        Operation::GetItem,
        [Answer::item(&user("ann")), Answer::ok()],
    );
    double
        .on(Operation::Query)
        .always(Answer::items(&[user("bob")]));
    assert_eq!(db.get(User::key("ann")).await?, Some(user("ann")));
    assert_eq!(db.get(User::key("zoe")).await?, None);
    let page = db.query(User::partition("bob")).all().await?;
    assert_eq!(page.items, vec![user("bob")]);
    let gets = double.calls_of(Operation::GetItem);
    let keys: Vec<_> = gets.iter().map(|c| c.key().cloned()).collect();
    assert_eq!(
        keys,
        [
            Some(raw_key("USER#ann", "PROFILE")),
            Some(raw_key("USER#zoe", "PROFILE"))
        ]
    );
    assert_eq!(double.calls_of(Operation::Query)[0].entity(), Some("User"));
    Ok(())
}

#[tokio::test]
async fn a_throttled_batch_write_is_retried_until_every_item_is_written() -> TestResult {
    let (double, db) = answering(
        Operation::BatchWriteItem,
        [
            Answer::throttled(),    // the SDK retries the request
            Answer::unprocessed(1), // the crate sends the last item again
            Answer::ok(),
        ],
    );
    let users = [user("a"), user("b"), user("c")];
    let out = db.batch_write().puts(&users).await?;
    assert_eq!((out.written, out.unprocessed.len()), (3, 0));

    let calls = double.calls_of(Operation::BatchWriteItem);
    let attempts: Vec<u32> = calls.iter().map(|c| c.attempt()).collect();
    assert_eq!(attempts, [1, 2, 1]);
    let sizes: Vec<usize> = calls
        .iter()
        .map(|c| {
            c.input::<BatchWriteItemInput>().map_or(0, |i| {
                i.request_items()
                    .map_or(0, |t| t.values().map(Vec::len).sum())
            })
        })
        .collect();
    assert_eq!(sizes, [3, 3, 1]);
    assert_eq!(calls[2].items::<User>(), vec![user("c")]);
    assert_eq!(calls[0].entity(), Some("User"));
    double.assert_done();
    Ok(())
}

#[tokio::test]
async fn a_batch_throttled_for_ever_gives_up_within_the_doubles_deadline() -> TestResult {
    let (double, db) = setup();
    double
        .on(Operation::BatchWriteItem)
        .always(Answer::throttled());
    let started = Instant::now();
    let out = db.batch_write().puts(&[user("a"), user("b")]).await?;
    assert!(started.elapsed() < Double::RETRY.deadline + Duration::from_secs(2));
    assert_eq!(out.written, 0);
    let failed: usize = out.failed.iter().map(|(ops, _)| ops.len()).sum();
    assert_eq!(out.unprocessed.len() + failed, 2, "{out:?}");
    assert!(
        double.calls().len() > 3,
        "the crate retried after the SDK gave up"
    );
    Ok(())
}

#[tokio::test]
async fn a_batch_get_reads_again_the_keys_left_unprocessed() -> TestResult {
    let (ann, bob) = (user("ann"), user("bob"));
    let both = || Answer::items([&ann, &bob]);
    let (double, db) = answering(
        Operation::BatchGetItem,
        [both().with_unprocessed(1), both()],
    );
    let out = db
        .batch_get::<User>()
        .keys([User::key("ann"), User::key("bob")])
        .keep_order()
        .await?;
    assert_eq!(out.items, vec![ann, bob]);
    assert!(out.not_found.is_empty() && out.unprocessed.is_empty());
    let calls = double.calls_of(Operation::BatchGetItem);
    let asked: Vec<usize> = calls.iter().map(|c| c.keys().len()).collect();
    assert_eq!(asked, [2, 1]);
    Ok(())
}

#[tokio::test]
async fn a_cancelled_transaction_names_the_failed_operation_and_its_item() -> TestResult {
    let (double, db) = setup();
    let stored = Doc {
        id: "d".into(),
        version: 7,
    };
    double
        .on(Operation::TransactWriteItems)
        .then(Answer::canceled(0, "TransactionConflict")) // retried by the crate
        .then(Answer::canceled_with(1, &stored));
    let err = db
        .transact_write()
        .put(db.put(&user("ann")))
        .put(db.put(&Doc {
            id: "d".into(),
            version: 1,
        }))
        .await
        .unwrap_err();
    let Error::TransactionCanceled { operations, .. } = &err else {
        panic!("not a cancellation: {err:?}");
    };
    let [op] = operations.as_slice() else {
        panic!("{operations:?}");
    };
    assert_eq!((op.index, op.entity), (1, "Doc"));
    assert_eq!(op.reason, CancelReason::ConditionalCheckFailed);
    assert_eq!(op.current::<Doc>().ok_or("no current item")??, stored);
    let calls = double.calls_of(Operation::TransactWriteItems);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1].items::<User>(), vec![user("ann")]);
    assert_eq!(calls[1].keys().len(), 2);
    Ok(())
}

#[tokio::test]
async fn a_server_error_is_retried_by_the_sdk_as_a_second_attempt() -> TestResult {
    let (double, db) = answering(Operation::PutItem, [Answer::server_error(), Answer::ok()]);
    db.put(&user("ann")).await?;
    let attempts: Vec<u32> = double.calls().iter().map(|c| c.attempt()).collect();
    assert_eq!(attempts, [1, 2]);
    Ok(())
}

#[tokio::test]
async fn any_dynamodb_error_reaches_the_caller_with_its_code() -> TestResult {
    let refusal = Answer::error(
        "ValidationException",
        "The provided key element does not match",
    );
    let (_double, db) = answering(Operation::GetItem, [refusal]);
    let err = db.get(User::key("ann")).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Service {
                operation: "GetItem",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("ValidationException"), "{err}");
    Ok(())
}

#[tokio::test]
#[should_panic(
    expected = "no answer scripted for DeleteItem (attempt 1) on table `app`, entity User"
)]
async fn an_unscripted_call_panics_naming_it() {
    let (_double, db) = setup();
    let _ = db.delete(User::key("ann")).await;
}

#[tokio::test]
async fn otherwise_answers_the_calls_nothing_scripted() -> TestResult {
    let (double, db) = setup();
    double.otherwise(Answer::ok());
    db.delete(User::key("ann")).await?;
    db.put(&user("ann")).await?;
    let ops: Vec<Operation> = double.calls().iter().map(|c| c.operation()).collect();
    assert_eq!(ops, [Operation::DeleteItem, Operation::PutItem]);
    double.clear_calls();
    assert!(double.calls().is_empty());
    Ok(())
}

#[test]
#[should_panic(expected = "scripted answers never used: GetItem ×1")]
fn assert_done_lists_the_answers_never_used() {
    let double = Double::new();
    double.on(Operation::GetItem).then(Answer::ok());
    double.assert_done();
}

#[tokio::test]
async fn a_query_answered_with_items_reads_them_as_pages() -> TestResult {
    let (double, db) = setup();
    let all: Vec<Note> = (1..=5)
        .map(|n| Note {
            board: "b".into(),
            n,
        })
        .collect();
    double.on(Operation::Query).always(Answer::items(&all));
    let notes = || db.query(Note::partition("b"));

    // Two at a time: each page continues after the last item of the one before.
    let first = notes().limit(2).page(None).await?;
    assert_eq!(first.items, all[..2]);
    let cursor = first.cursor.ok_or("items are left after the first page")?;
    let second = notes().limit(2).page(Some(&cursor)).await?;
    assert_eq!(second.items, all[2..4]);
    let cursor = second
        .cursor
        .ok_or("an item is left after the second page")?;
    let last = notes().limit(2).page(Some(&cursor)).await?;
    assert_eq!(last.items, all[4..]);
    assert!(last.cursor.is_none(), "no item is left");

    // A read of everything, two items a request: three requests, every item once.
    double.clear_calls();
    let read = notes().page_size(2).all().await?;
    assert_eq!(read.items, all);
    let calls = double.calls_of(Operation::Query);
    assert_eq!(calls.len(), 3);
    assert!(
        calls.iter().all(|c| c.body().contains(r#""Limit":2"#)),
        "{:?}",
        calls.iter().map(|c| c.body()).collect::<Vec<_>>()
    );
    Ok(())
}
