//! What every example shares: where its table lives; and a service tested on the test
//! double ([`signup`]).

pub mod signup;

use dynamo_model::local::{self, BoxError, TempTable};
use dynamo_model::{Db, Table};

/// An example's table: on the DynamoDB the standard AWS environment names, or on a
/// DynamoDB Local this process starts.
pub enum ExampleTable<T: Table> {
    /// `AWS_ENDPOINT_URL_DYNAMODB` (or `AWS_ENDPOINT_URL`) was set: a table made through
    /// [`Db::from_env`], the production path, deleted when the example ends.
    Env(Db<T>),
    /// A fresh table on DynamoDB Local, deleted when the example ends.
    Local(TempTable<T>),
}

impl<T: Table> std::ops::Deref for ExampleTable<T> {
    type Target = Db<T>;

    fn deref(&self) -> &Db<T> {
        match self {
            ExampleTable::Env(db) => db,
            ExampleTable::Local(table) => table,
        }
    }
}

impl<T: Table> Drop for ExampleTable<T> {
    fn drop(&mut self) {
        let ExampleTable::Env(db) = self else {
            return; // a `TempTable` deletes itself
        };
        // Examples run on tokio's multi-threaded runtime: wait for the deletion on it.
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if handle.runtime_flavor() != tokio::runtime::RuntimeFlavor::MultiThread {
            return;
        }
        let deleted = tokio::task::block_in_place(|| handle.block_on(db.delete_table()));
        if let Err(e) = deleted {
            eprintln!("table {} not deleted: {e}", db.table_name());
        }
    }
}

/// A fresh, uniquely named table of schema `T` for the example `name`.
///
/// With `AWS_ENDPOINT_URL_DYNAMODB` or `AWS_ENDPOINT_URL` set (e.g.
/// `http://127.0.0.1:8000`, with `AWS_REGION` and credentials in the environment as for any
/// AWS program), the client comes from [`Db::from_env`], exactly as in production, and the
/// table is deleted when the example ends. Otherwise the example starts DynamoDB Local (or
/// uses `DYNAMODB_ENDPOINT`) through [`local::fresh_table`].
pub async fn table<T: Table>(name: &str) -> Result<ExampleTable<T>, BoxError> {
    let endpoint = ["AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL"]
        .into_iter()
        .find_map(std::env::var_os);
    if let Some(endpoint) = endpoint {
        let db = Db::<T>::from_env(local::unique_table_name(name)).await;
        db.create_table().await?;
        println!(
            "table {} at {} through Db::from_env",
            db.table_name(),
            endpoint.to_string_lossy()
        );
        return Ok(ExampleTable::Env(db));
    }
    Ok(ExampleTable::Local(local::fresh_table::<T>().await?))
}
