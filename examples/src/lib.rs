//! What every example shares: where its table lives.

use dynamo_model::local::{self, BoxError, TempTable};
use dynamo_model::{Db, Table};

/// An example's table: on the DynamoDB the standard AWS environment names, or on a
/// DynamoDB Local this process starts.
pub enum ExampleTable<T: Table> {
    /// `AWS_ENDPOINT_URL_DYNAMODB` was set: a table made through [`Db::from_env`], the
    /// production path, kept when the example ends (its name is printed).
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

/// A fresh, uniquely named table of schema `T` for the example `name`.
///
/// With `AWS_ENDPOINT_URL_DYNAMODB` set (e.g. `http://127.0.0.1:8000`, with `AWS_REGION`
/// and credentials in the environment as for any AWS program), the client comes from
/// [`Db::from_env`], exactly as in production. Otherwise the example starts DynamoDB
/// Local (or uses `DYNAMODB_ENDPOINT`) through [`local::fresh_table`].
pub async fn table<T: Table>(name: &str) -> Result<ExampleTable<T>, BoxError> {
    if std::env::var_os("AWS_ENDPOINT_URL_DYNAMODB").is_some() {
        let db = Db::<T>::from_env(local::unique_table_name(name)).await;
        db.create_table().await?;
        println!("table {} (kept) through Db::from_env", db.table_name());
        return Ok(ExampleTable::Env(db));
    }
    Ok(ExampleTable::Local(local::fresh_table::<T>().await?))
}
