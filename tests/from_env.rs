//! `Db::from_env` honours the standard AWS environment: with `AWS_ENDPOINT_URL_DYNAMODB`
//! pointing at DynamoDB Local it talks to DynamoDB Local (without it, the request would go
//! to the real service and fail here, where there is no network and no credentials).
//!
//! A test binary of its own (`harness = false`): it sets process environment variables,
//! which is sound only before any other thread runs.

use dynamo_model::{local, Db, Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, serde::Serialize, serde::Deserialize, Debug, PartialEq)]
#[dynamo(table = App, pk = "NOTE#{id}", sk = "NOTE")]
struct Note {
    id: String,
    text: String,
}

fn main() -> Result<(), local::BoxError> {
    let endpoint = local::shared_endpoint()?;
    // No thread has started yet: setting the environment is sound here.
    for (name, value) in [
        ("AWS_ENDPOINT_URL_DYNAMODB", endpoint.as_str()),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ACCESS_KEY_ID", "dynamomodel"),
        ("AWS_SECRET_ACCESS_KEY", "local"),
    ] {
        std::env::set_var(name, value);
    }
    for name in ["AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_SESSION_TOKEN"] {
        std::env::remove_var(name);
    }
    tokio::runtime::Runtime::new()?.block_on(async {
        let db: Db<App> = Db::from_env(local::unique_table_name("from-env")).await;
        db.create_table().await?;
        let note = Note {
            id: "n-1".into(),
            text: "configured from the environment".into(),
        };
        let result = async {
            db.put(&note).if_absent().await?;
            let read = db.get(Note::key("n-1")).consistent().await?;
            assert_eq!(read.as_ref(), Some(&note));
            Ok::<(), local::BoxError>(())
        }
        .await;
        db.delete_table().await?;
        result
    })?;
    println!("from_env: a put and a get through AWS_ENDPOINT_URL_DYNAMODB={endpoint}: ok");
    Ok(())
}
