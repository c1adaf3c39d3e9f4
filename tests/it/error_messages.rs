//! What errors say: the real cause of an SDK failure (a refused connection, a timeout)
//! instead of the SDK's "unhandled error", the entity type stored under a key a write
//! was refused for, and no key in a message unless the program opted in.

use crate::common::*;
use aws_sdk_dynamodb::config::timeout::TimeoutConfig;
use aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::{Error, Item};
use std::time::Duration;

fn user(id: &str) -> User {
    User {
        user_id: id.into(),
        display_name: "Ada".into(),
        email: None,
        login_count: 0,
        labels: vec![],
    }
}

/// A client for `endpoint` that tries each request once, with a short attempt timeout.
fn impatient_client(endpoint: &str) -> aws_sdk_dynamodb::Client {
    let conf = dynamo_model::local::client_for(endpoint)
        .config()
        .to_builder()
        .retry_config(aws_sdk_dynamodb::config::retry::RetryConfig::disabled())
        .timeout_config(
            TimeoutConfig::builder()
                .operation_attempt_timeout(Duration::from_millis(300))
                .build(),
        )
        .build();
    aws_sdk_dynamodb::Client::from_conf(conf)
}

/// The error's message and every cause below it, as `{:#}` would print them.
fn chain(e: &Error) -> Vec<String> {
    let mut out = vec![e.to_string()];
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        out.push(s.to_string());
        source = s.source();
    }
    out
}

#[tokio::test]
async fn a_refused_connection_is_named_in_the_message() -> TestResult {
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let db =
        dynamo_model::Db::<App>::new(impatient_client(&format!("http://127.0.0.1:{port}")), "app");
    let err = db.get(User::key("u-1")).await.expect_err("nothing listens");
    let message = err.to_string();
    assert!(message.contains("refused"), "{message}");
    assert!(!message.contains("unhandled"), "{message}");
    assert!(!message.contains("USER#u-1"), "{message}");
    let causes = chain(&err);
    assert!(
        causes.len() > 1,
        "the SDK's error stays the source: {causes:?}"
    );
    for pair in causes.windows(2) {
        assert!(
            !pair[0].contains(&pair[1]),
            "a cause printed twice: {causes:?}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn an_sdk_timeout_is_named_in_the_message() -> TestResult {
    // Accepts connections and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    let silent = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let db =
        dynamo_model::Db::<App>::new(impatient_client(&format!("http://127.0.0.1:{port}")), "app");
    let err = db.get(User::key("u-1")).await.expect_err("no answer comes");
    silent.abort();
    let message = err.to_string();
    assert!(message.contains("timed out"), "{message}");
    assert!(!message.contains("unhandled"), "{message}");
    Ok(())
}

#[tokio::test]
async fn a_write_refused_by_the_entity_type_guard_names_the_type_stored() -> TestResult {
    let db = dynamo_model::local::fresh_table::<App>().await?;
    let stored = Item::from([
        ("PK".to_owned(), AttributeValue::S("USER#u-1".into())),
        ("SK".to_owned(), AttributeValue::S("PROFILE".into())),
        ("_type".to_owned(), AttributeValue::S("Invoice".into())),
    ]);
    put_raw(&db, stored.clone()).await?;
    let foreign = |err: Error| match err {
        Error::OtherEntityStored {
            entity: "User",
            stored: Some(stored),
            current: Some(current),
            ..
        } => {
            assert_eq!(stored, "Invoice");
            assert_eq!(
                current.get("_type"),
                Some(&AttributeValue::S("Invoice".into()))
            );
        }
        other => panic!("expected OtherEntityStored, got {other:?}"),
    };
    foreign(
        db.put(&user("u-1"))
            .await
            .expect_err("an Invoice is stored there"),
    );
    let f = User::fields();
    foreign(
        db.update(User::key("u-1"))
            .set(f.display_name, "Grace".to_owned())
            .await
            .expect_err("an Invoice is stored there"),
    );
    foreign(
        db.delete(User::key("u-1"))
            .await
            .expect_err("an Invoice is stored there"),
    );
    let err = db.put(&user("u-1")).await.expect_err("still there");
    assert_eq!(
        err.to_string(),
        "User: the key holds an item of entity type Invoice, which this write may not replace or change"
    );
    assert_eq!(
        raw_get(&db, "USER#u-1", "PROFILE").await?,
        stored,
        "nothing written"
    );
    Ok(())
}

#[tokio::test]
async fn no_region_and_no_credentials_are_named_in_the_message() -> TestResult {
    use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
    let get_with = |config: aws_sdk_dynamodb::config::Builder| async move {
        let client = aws_sdk_dynamodb::Client::from_conf(config.build());
        let db = dynamo_model::Db::<App>::new(client, "app");
        match db.get(User::key("u-1")).await {
            Err(e) => e.to_string(),
            Ok(found) => format!("answered: {found:?}"),
        }
    };
    let base = aws_sdk_dynamodb::Config::builder().behavior_version(BehaviorVersion::latest());
    let no_region = base
        .clone()
        .credentials_provider(Credentials::new("a", "b", None, None, "test"));
    let message = get_with(no_region).await;
    assert!(message.contains("region"), "{message}");
    let no_credentials = base
        .region(Region::new("us-east-1"))
        .endpoint_url("http://127.0.0.1:9");
    let message = get_with(no_credentials).await;
    assert!(message.contains("credentials"), "{message}");
    assert!(!message.contains("unhandled"), "{message}");
    Ok(())
}
