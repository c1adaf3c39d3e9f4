//! Every operation of the crate attaches the record of its call, and the observers read
//! that record: here an observer that keeps them, on a client whose every request is
//! answered `{}` (no server).

use super::{Action, Call, Observer, Observing, Operation, Outcome};
use crate::{Db, Entity, Table};
use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use aws_smithy_runtime_api::client::http::{
    HttpConnector, HttpConnectorFuture, SharedHttpConnector, http_client_fn,
};
use aws_smithy_runtime_api::client::orchestrator::HttpRequest;
use aws_smithy_runtime_api::http::{Response, StatusCode};
use aws_smithy_types::body::SdkBody;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{user}", sk = "ORDER#{id}",
         index(GSI1, pk = "STATUS#{status}", sk = "{id}"))]
struct Order {
    user: String,
    id: String,
    status: String,
}

/// Answers every request with an empty JSON object.
#[derive(Debug)]
struct Empty;

impl HttpConnector for Empty {
    fn call(&self, _request: HttpRequest) -> HttpConnectorFuture {
        let ok = StatusCode::try_from(200_u16).map_err(|e| {
            aws_smithy_runtime_api::client::result::ConnectorError::other(e.into(), None)
        });
        HttpConnectorFuture::ready(ok.map(|status| Response::new(status, SdkBody::from("{}"))))
    }
}

/// Keeps the record of every call it sees.
#[derive(Debug, Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Call>>>);

impl Observer for Recorder {
    fn after(&self, call: &Call, _outcome: &Outcome<'_>) {
        if let Ok(mut calls) = self.0.lock() {
            calls.push(call.clone());
        }
    }
}

impl Recorder {
    fn take(&self) -> Vec<Call> {
        self.0
            .lock()
            .map(|mut c| std::mem::take(&mut *c))
            .unwrap_or_default()
    }
}

fn db(recorder: &Recorder) -> Db<App> {
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("id", "secret", None, None, "test"))
        .http_client(http_client_fn(|_, _| SharedHttpConnector::new(Empty)))
        .interceptor(Observing::new(recorder.clone(), &App::SCHEMA))
        .build();
    Db::new(aws_sdk_dynamodb::Client::from_conf(config), "app")
}

fn order() -> Order {
    Order {
        user: "u-1".into(),
        id: "o-1".into(),
        status: "open".into(),
    }
}

/// The one record of a call of `operation`, from the builder: it names the entity.
fn one(recorder: &Recorder, operation: Operation) -> Call {
    let mut calls = recorder.take();
    assert_eq!(calls.len(), 1, "{calls:?}");
    let call = calls.remove(0);
    assert_eq!(call.operation, operation);
    assert_eq!(&*call.table, "app");
    call
}

/// The actions of a call's targets, each of which names the entity `Order`.
fn order_actions(call: &Call) -> Vec<Action> {
    let entity = |t: &super::Target| t.entity.as_deref() == Some("Order");
    assert!(call.targets.iter().all(entity), "{call:?}");
    call.targets.iter().map(|t| t.action).collect()
}

fn target_entity(call: &Call) -> Option<&str> {
    call.targets.first().and_then(|t| t.entity.as_deref())
}

#[tokio::test]
async fn single_item_operations_attach_their_record() -> Result<(), crate::Error> {
    let recorder = Recorder::default();
    let db = db(&recorder);

    db.get(Order::key(OrderKey {
        user: "u-1",
        id: "o-1",
    }))
    .consistent()
    .await?;
    let get = one(&recorder, Operation::GetItem);
    assert!(get.consistent);
    assert_eq!(target_entity(&get), Some("Order"));
    assert_eq!(get.targets[0].action, Action::Get);
    let key = get.targets[0]
        .key
        .as_ref()
        .map(|k| (k.pk.as_str(), k.sk.as_deref()));
    assert_eq!(key, Some(("USER#u-1", Some("ORDER#o-1"))));

    db.put(&order()).await?;
    let put = one(&recorder, Operation::PutItem);
    assert_eq!(target_entity(&put), Some("Order"));
    let target = &put.targets[0];
    assert_eq!(target.action, Action::Put);
    assert!(target.size.is_some_and(|s| s > 0));
    assert_eq!(target.global, vec![("GSI1", "STATUS#open".to_owned())]);

    // `{}` holds no item for the update's `ALL_NEW`: the crate refuses the answer, after
    // the call completed.
    let refused = db
        .update(Order::key(OrderKey {
            user: "u-1",
            id: "o-1",
        }))
        .set(Order::fields().status, "shipped".to_owned())
        .await;
    assert!(refused.is_err());
    let update = one(&recorder, Operation::UpdateItem);
    assert_eq!(target_entity(&update), Some("Order"));
    assert_eq!(update.targets[0].action, Action::Update);

    db.delete(Order::key(OrderKey {
        user: "u-1",
        id: "o-1",
    }))
    .await?;
    let delete = one(&recorder, Operation::DeleteItem);
    assert_eq!(target_entity(&delete), Some("Order"));
    assert_eq!(delete.targets[0].action, Action::Delete);
    Ok(())
}

#[tokio::test]
async fn queries_and_scans_attach_their_record() -> Result<(), crate::Error> {
    let recorder = Recorder::default();
    let db = db(&recorder);

    db.query(Order::partition("u-1")).page(None).await?;
    let query = one(&recorder, Operation::Query);
    assert_eq!(query.entity, Some("Order"));
    assert_eq!(query.partition.as_deref(), Some("USER#u-1"));
    assert_eq!(query.index, None);
    assert!(query.shape.is_some());
    assert!(query.whole_items);

    db.query(Order::gsi1_partition("open")).page(None).await?;
    let by_status = one(&recorder, Operation::Query);
    assert_eq!(by_status.index.as_deref(), Some("GSI1"));
    assert_eq!(by_status.partition.as_deref(), Some("STATUS#open"));
    assert_ne!(by_status.shape, query.shape);

    db.scan::<Order>().page(None).await?;
    let scan = one(&recorder, Operation::Scan);
    assert_eq!(scan.entity, Some("Order"));
    assert_eq!(scan.partition, None);
    assert!(scan.shape.is_some());
    Ok(())
}

#[tokio::test]
async fn a_raw_call_is_recorded_from_its_request() -> Result<(), Box<dyn std::error::Error>> {
    let recorder = Recorder::default();
    let db = db(&recorder);
    let key = Order::key(OrderKey {
        user: "u-1",
        id: "o-1",
    })
    .to_item()?;
    db.client()
        .delete_item()
        .table_name("app")
        .set_key(Some(key))
        .send()
        .await?;
    let delete = one(&recorder, Operation::DeleteItem);
    // The request names no entity: only what it holds is known.
    assert_eq!(target_entity(&delete), None);
    let key = delete.targets[0].key.as_ref().map(|k| k.pk.as_str());
    assert_eq!(key, Some("USER#u-1"));
    Ok(())
}

fn key(id: &str) -> crate::Key<Order> {
    Order::key(OrderKey { user: "u-1", id })
}

#[tokio::test]
async fn batches_and_transactions_attach_their_record() -> Result<(), crate::Error> {
    let recorder = Recorder::default();
    let db = db(&recorder);

    db.batch_get::<Order>()
        .key(key("o-1"))
        .key(key("o-2"))
        .await?;
    let get = one(&recorder, Operation::BatchGetItem);
    assert_eq!(get.keys, 2);
    assert_eq!(order_actions(&get), [Action::Get, Action::Get]);

    db.batch_write().put(&order()).delete(key("o-2")).await?;
    let write = one(&recorder, Operation::BatchWriteItem);
    assert_eq!(order_actions(&write), [Action::Put, Action::Delete]);
    assert_eq!(
        write.targets[0].global,
        vec![("GSI1", "STATUS#open".to_owned())]
    );

    db.transact_write()
        .put(db.put(&order()))
        .delete(db.delete(key("o-2")))
        .await?;
    let transaction = one(&recorder, Operation::TransactWriteItems);
    assert_eq!(order_actions(&transaction), [Action::Put, Action::Delete]);

    db.transact_get::<Order>().key(key("o-1")).await?;
    let read = one(&recorder, Operation::TransactGetItems);
    assert_eq!(read.keys, 1);
    assert!(read.consistent);
    assert_eq!(read.targets[0].entity.as_deref(), Some("Order"));
    Ok(())
}

/// The crate's own strongly consistent read (settlement of a lost response, history,
/// chunk manifests, the orphan sweep) attaches its record too.
#[tokio::test]
async fn the_crates_own_reads_attach_their_record() -> Result<(), crate::Error> {
    let recorder = Recorder::default();
    let db = db(&recorder);
    let item = key("o-1").to_item()?;
    crate::item::consistent::ConsistentGet::new(&db, item)
        .send()
        .await?;
    let get = one(&recorder, Operation::GetItem);
    assert!(get.consistent);
    let pk = get.targets[0].key.as_ref().map(|k| k.pk.as_str());
    assert_eq!(pk, Some("USER#u-1"));
    Ok(())
}
