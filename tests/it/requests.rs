//! Requests you can see and adjust: `params()` returns exactly what `send` sends, a
//! `customize` hook reaches every request an operation sends, and builders own their
//! `Db`, so they and their futures and streams are `'static`.

use crate::common::{recorded, users, Account, App, Order, Res, TestResult, User};
use dynamo_model::aws_sdk_dynamodb::types::ReturnConsumedCapacity;
use dynamo_model::local;
use dynamo_model::local::faults::{Call, Faults};
use futures_util::StreamExt;
use serde_json::Value;
use std::future::IntoFuture;

fn body(call: &Call) -> Value {
    serde_json::from_str(&call.body).unwrap_or(Value::Null)
}

/// The string member `name` of a recorded request body.
fn text<'a>(body: &'a Value, name: &str) -> Option<&'a str> {
    body.get(name).and_then(Value::as_str)
}

/// `ExpressionAttributeNames` of a recorded body, as sorted pairs.
fn names_of(body: &Value) -> Vec<(String, String)> {
    let mut names: Vec<(String, String)> = body
        .get("ExpressionAttributeNames")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn sorted(names: Option<&std::collections::HashMap<String, String>>) -> Vec<(String, String)> {
    let mut names: Vec<(String, String)> = names
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    names.sort();
    names
}

/// The calls of `operation` recorded so far.
fn calls(faults: &Faults, operation: &str) -> Vec<Value> {
    faults
        .calls()
        .iter()
        .filter(|c| c.operation == operation)
        .map(body)
        .collect()
}

#[tokio::test]
async fn params_are_what_send_sends_for_every_single_item_operation() -> TestResult {
    let (_table, db, faults) = recorded_table().await?;
    let f = Account::fields();
    let account = Account {
        id: "a".into(),
        balance: 100,
        transfers: 0,
    };

    // Put: everything but the write token (a new one per put) is the same.
    let put = db.put(&account).if_absent().params()?;
    db.put(&account).if_absent().send().await?;
    let sent = calls(&faults, "PutItem").pop().ok_or("no PutItem sent")?;
    assert_eq!(text(&sent, "TableName"), put.table_name());
    assert_eq!(
        text(&sent, "ConditionExpression"),
        put.condition_expression()
    );
    assert_eq!(names_of(&sent), sorted(put.expression_attribute_names()));
    let item = put.item().ok_or("no item")?;
    let sent_item = sent
        .get("Item")
        .and_then(Value::as_object)
        .ok_or("no Item")?;
    let mut attributes: Vec<&String> = item.keys().collect();
    let mut sent_attributes: Vec<&String> = sent_item.keys().collect();
    attributes.sort();
    sent_attributes.sort();
    assert_eq!(attributes, sent_attributes);
    assert_eq!(
        sent_item["PK"]["S"].as_str(),
        item["PK"].as_s().ok().map(String::as_str)
    );

    // Update.
    let update = || {
        db.update(Account::key("a"))
            .add(f.balance, -10)
            .condition(f.balance.ge(10))
    };
    let params = update().params()?;
    update().send().await?;
    let sent = calls(&faults, "UpdateItem")
        .pop()
        .ok_or("no UpdateItem sent")?;
    assert_eq!(text(&sent, "UpdateExpression"), params.update_expression());
    assert_eq!(
        text(&sent, "ConditionExpression"),
        params.condition_expression()
    );
    assert_eq!(text(&sent, "ReturnValues"), Some("ALL_NEW"));
    assert_eq!(params.return_values().map(|r| r.as_str()), Some("ALL_NEW"));
    assert_eq!(names_of(&sent), sorted(params.expression_attribute_names()));

    // Get.
    let params = db.get(Account::key("a")).consistent().params()?;
    let got = db.get(Account::key("a")).consistent().send().await?;
    assert_eq!(got.map(|a| a.balance), Some(90));
    let sent = calls(&faults, "GetItem").pop().ok_or("no GetItem sent")?;
    assert_eq!(sent["ConsistentRead"].as_bool(), params.consistent_read());
    assert_eq!(
        sent["Key"]["SK"]["S"].as_str(),
        params
            .key()
            .and_then(|k| k["SK"].as_s().ok())
            .map(String::as_str)
    );

    // Delete.
    let params = db.delete(Account::key("a")).must_exist().params()?;
    db.delete(Account::key("a")).must_exist().send().await?;
    let sent = calls(&faults, "DeleteItem")
        .pop()
        .ok_or("no DeleteItem sent")?;
    assert_eq!(
        text(&sent, "ConditionExpression"),
        params.condition_expression()
    );
    assert_eq!(names_of(&sent), sorted(params.expression_attribute_names()));
    Ok(())
}

#[tokio::test]
async fn params_are_what_send_sends_for_queries_scans_batches_and_transactions() -> TestResult {
    let (_table, db, faults) = recorded_table().await?;
    let users = users(30);

    let batch = db.batch_write().puts(&users).params()?;
    assert_eq!(
        batch
            .iter()
            .map(|b| b.request_items().map_or(0, |r| r[db.table_name()].len()))
            .collect::<Vec<_>>(),
        [25, 5]
    );
    db.batch_write().puts(&users).send().await?;
    let sent = calls(&faults, "BatchWriteItem");
    let sizes: Vec<usize> = sent
        .iter()
        .map(|b| {
            b["RequestItems"][db.table_name()]
                .as_array()
                .map_or(0, Vec::len)
        })
        .collect();
    assert_eq!(sizes, [25, 5]);

    let keys = || users.iter().map(|u| User::key(&u.user_id));
    let params = db.batch_get::<User>().keys(keys()).params()?;
    assert_eq!(params.len(), 1);
    let got = db.batch_get::<User>().keys(keys()).send().await?;
    assert_eq!(got.items.len(), 30);
    let sent = calls(&faults, "BatchGetItem")
        .pop()
        .ok_or("no BatchGetItem")?;
    assert_eq!(
        sent["RequestItems"][db.table_name()]["Keys"]
            .as_array()
            .map(Vec::len),
        params[0]
            .request_items()
            .map(|r| r[db.table_name()].keys().len())
    );

    let query = || {
        db.query(Order::partition("u-1"))
            .reverse()
            .limit(10)
            .filter(Order::fields().total_cents.gt(5u64))
    };
    let params = query().params()?;
    query().all().await?;
    let sent = calls(&faults, "Query").pop().ok_or("no Query sent")?;
    assert_eq!(
        text(&sent, "KeyConditionExpression"),
        params.key_condition_expression()
    );
    assert_eq!(text(&sent, "FilterExpression"), params.filter_expression());
    assert_eq!(sent["Limit"].as_i64(), params.limit().map(i64::from));
    assert_eq!(
        sent["ScanIndexForward"].as_bool(),
        params.scan_index_forward()
    );
    assert_eq!(names_of(&sent), sorted(params.expression_attribute_names()));

    let params = db.scan::<User>().params()?;
    db.scan::<User>().all().await?;
    let sent = calls(&faults, "Scan").pop().ok_or("no Scan sent")?;
    assert_eq!(params.len(), 1);
    assert_eq!(
        text(&sent, "FilterExpression"),
        params[0].filter_expression()
    );

    let transfer = || {
        db.transact_write()
            .put(db.put(&Account {
                id: "x".into(),
                balance: 5,
                transfers: 0,
            }))
            .check(User::key("u00"), User::fields().login_count.eq(0u32))
            .token("tx-params")
    };
    let params = transfer().params()?;
    transfer().send().await?;
    let sent = calls(&faults, "TransactWriteItems")
        .pop()
        .ok_or("no TransactWriteItems")?;
    assert_eq!(text(&sent, "ClientRequestToken"), Some("tx-params"));
    assert_eq!(params.client_request_token(), Some("tx-params"));
    let sent_items = sent["TransactItems"].as_array().ok_or("no items")?;
    assert_eq!(sent_items.len(), params.transact_items().len());
    assert_eq!(
        sent_items[1]["ConditionCheck"]["ConditionExpression"].as_str(),
        params.transact_items()[1]
            .condition_check()
            .map(|c| c.condition_expression())
    );
    Ok(())
}

#[tokio::test]
async fn a_customize_hook_reaches_every_request_and_shows_in_params() -> TestResult {
    let (_table, db, faults) = recorded_table().await?;
    let users: Vec<User> = (0..12).map(|i| User::sample(&format!("c{i:02}"))).collect();
    db.batch_write()
        .puts(&users)
        .customize(|b| {
            b.return_item_collection_metrics(
                dynamo_model::aws_sdk_dynamodb::types::ReturnItemCollectionMetrics::Size,
            )
        })
        .send()
        .await?;
    let sent = calls(&faults, "BatchWriteItem");
    assert!(!sent.is_empty());
    assert!(sent
        .iter()
        .all(|b| text(b, "ReturnItemCollectionMetrics") == Some("SIZE")));

    // Every page of a scan, and the hooks in the order they were added.
    let scan = || {
        db.scan::<User>()
            .page_size(5)
            .customize(|b| b.return_consumed_capacity(ReturnConsumedCapacity::None))
            .customize(|b| b.return_consumed_capacity(ReturnConsumedCapacity::Indexes))
    };
    let params = scan().params()?;
    assert_eq!(
        params[0].return_consumed_capacity(),
        Some(&ReturnConsumedCapacity::Indexes)
    );
    let all = scan().all().await?;
    assert_eq!(all.items.len(), 12);
    let pages = calls(&faults, "Scan");
    assert!(pages.len() >= 3, "{} pages", pages.len());
    assert!(pages
        .iter()
        .all(|b| text(b, "ReturnConsumedCapacity") == Some("INDEXES")));

    // A single-item write.
    db.put(&User::sample("hooked"))
        .customize(|b| b.return_consumed_capacity(ReturnConsumedCapacity::Indexes))
        .send()
        .await?;
    let sent = calls(&faults, "PutItem").pop().ok_or("no PutItem")?;
    assert_eq!(text(&sent, "ReturnConsumedCapacity"), Some("INDEXES"));
    Ok(())
}

/// Compiles only if the future is `'static` (and `Send`): what `tokio::spawn` needs.
fn spawnable<F: std::future::Future + Send + 'static>(f: F) -> F {
    f
}

#[tokio::test]
async fn builders_own_their_db_so_their_futures_and_streams_can_be_spawned() -> TestResult {
    let db = local::fresh_table::<crate::common::App>().await?;
    let handles: Vec<_> = (0..4)
        .map(|i| {
            // The entity and the `Db` are dropped before the task runs.
            let user = User::sample(&format!("s{i}"));
            let put = db.put(&user).send();
            drop(user);
            tokio::spawn(spawnable(put))
        })
        .collect();
    for handle in handles {
        handle.await??;
    }
    let get = spawnable(db.get(User::key("s1")).into_future());
    assert_eq!(
        tokio::spawn(get).await??.map(|u| u.user_id),
        Some("s1".into())
    );
    let stream = db.scan::<User>().stream();
    let scanned = tokio::spawn(stream.collect::<Vec<_>>()).await?;
    assert_eq!(scanned.len(), 4);
    let query = db.query(User::partition("s2")).stream();
    let queried = tokio::spawn(query.collect::<Vec<_>>()).await?;
    assert_eq!(queried.len(), 1);
    let batch = spawnable(db.batch_get::<User>().key(User::key("s3")).into_future());
    assert_eq!(tokio::spawn(batch).await??.items.len(), 1);
    let tx = spawnable(
        db.transact_write()
            .delete(db.delete(User::key("s0")))
            .into_future(),
    );
    tokio::spawn(tx).await??;
    assert!(db.get(User::key("s0")).await?.is_none());
    Ok(())
}

#[test]
fn a_generated_key_struct_is_taken_where_a_key_is() -> TestResult {
    use crate::common::OrderKey;
    let db = dynamo_model::Db::<crate::common::App>::offline("t");
    let order_id = uuid::Uuid::from_u128(7);
    let created_at = time::macros::datetime!(2024-05-01 09:30 UTC);
    let named = || OrderKey {
        user_id: "u-1",
        created_at,
        order_id,
    };
    let direct = db.get(named()).params()?;
    let through_key = db.get(Order::key(named())).params()?;
    assert_eq!(direct.key(), through_key.key());
    assert_eq!(
        db.delete(named()).params()?.key(),
        db.update(named())
            .set(Order::fields().note, Some("n".to_owned()))
            .params()?
            .key()
    );
    Ok(())
}

#[tokio::test]
async fn a_scan_page_is_one_bounded_request_and_a_query_of_nothing_has_no_params() -> TestResult {
    let (_table, db, faults) = recorded_table().await?;
    let users: Vec<User> = (0..20).map(|i| User::sample(&format!("p{i:02}"))).collect();
    db.batch_write().puts(&users).send().await?;
    // A filter nothing matches: the page still costs one request of at most 3 items.
    let page = db
        .scan::<User>()
        .filter(User::fields().login_count.gt(1_000u32))
        .page_size(50)
        .limit(3)
        .page(None)
        .await?;
    assert!(page.items.is_empty());
    assert!(page.cursor.is_some(), "more of the table is left to read");
    let scans = calls(&faults, "Scan");
    assert_eq!(scans.len(), 1);
    assert_eq!(scans[0]["Limit"].as_i64(), Some(3));

    let err = db
        .query(User::partition("p00"))
        .limit(0)
        .params()
        .err()
        .ok_or("a query of nothing rendered params")?;
    crate::common::assert_refused(&err, dynamo_model::ValidationReason::InvalidOption);
    Ok(())
}

/// A fresh table, seen through a client that records every request it sends.
async fn recorded_table() -> Res<(local::TempTable<App>, dynamo_model::Db<App>, Faults)> {
    let table = local::fresh_table::<App>().await?;
    let (db, faults) = recorded(&table).await?;
    Ok((table, db, faults))
}
