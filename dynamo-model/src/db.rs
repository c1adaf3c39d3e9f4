//! `Db`: a client bound to one table, the entry point of every operation.

use crate::{Error, Table};
use aws_sdk_dynamodb::Client;
use std::marker::PhantomData;
use std::sync::Arc;

/// A DynamoDB client bound to one table of schema `T`.
///
/// The schema is static; the table name is runtime configuration (stage, tenant, one
/// table per test). Cloning is cheap.
///
/// ```no_run
/// # use dynamo_model::{Db, Table};
/// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
/// # async fn demo(client: aws_sdk_dynamodb::Client) -> Result<(), dynamo_model::Error> {
/// let db: Db<App> = Db::new(client, "app-prod");
/// db.create_table().await?; // once, e.g. in a migration or a test
/// # Ok(()) }
/// ```
pub struct Db<T> {
    client: Client,
    table_name: Arc<str>,
    cursor_secret: Arc<[u8]>,
    /// Whether operation spans record keys (`Db::trace_keys`).
    trace_keys: bool,
    /// The read-through cache of gets by key (`Db::with_cache`).
    #[cfg(feature = "cache")]
    cache: Option<crate::cache::Cache>,
    /// The insight observing its calls (`Db::observed`).
    insight: Option<crate::insight::Insight>,
    /// Whether the client has an observer reading the records of calls
    /// (`crate::call::Observing`): without one, no record is built.
    observers: bool,
    /// The keys of encrypted fields (`Db::with_keys`).
    keys: Option<Arc<dyn crate::encrypt::KeyProvider>>,
    /// The retry policy of the calls the crate retries itself (`Db::with_retry`).
    retry: Option<crate::RetryPolicy>,
    _table: PhantomData<fn() -> T>,
}

impl<T> Clone for Db<T> {
    fn clone(&self) -> Self {
        Db {
            client: self.client.clone(),
            table_name: self.table_name.clone(),
            cursor_secret: self.cursor_secret.clone(),
            trace_keys: self.trace_keys,
            #[cfg(feature = "cache")]
            cache: self.cache.clone(),
            insight: self.insight.clone(),
            observers: self.observers,
            keys: self.keys.clone(),
            retry: self.retry,
            _table: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for Db<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("table_name", &self.table_name)
            .finish_non_exhaustive()
    }
}

impl<T: Table> Db<T> {
    /// Binds `client` to the table named `table_name`.
    pub fn new(client: Client, table_name: impl Into<Arc<str>>) -> Self {
        Db {
            observers: crate::call::observed(&client),
            client,
            table_name: table_name.into(),
            cursor_secret: Arc::from(Vec::new()),
            trace_keys: false,
            #[cfg(feature = "cache")]
            cache: None,
            insight: None,
            keys: None,
            retry: None,
            _table: PhantomData,
        }
    }

    /// Binds a client configured from the standard AWS environment to the table named
    /// `table_name` (feature `aws-config`): the one-liner for production.
    ///
    /// Region, credentials and endpoint come from `aws_config::load_defaults` with the
    /// latest behavior version: environment variables (`AWS_REGION`, `AWS_ACCESS_KEY_ID`,
    /// `AWS_PROFILE`, ...), the shared config and credentials files, web identity (EKS),
    /// ECS and EC2 instance roles. `AWS_ENDPOINT_URL_DYNAMODB` (or `AWS_ENDPOINT_URL`)
    /// points it at another endpoint, e.g. DynamoDB Local at `http://127.0.0.1:8000`.
    /// Nothing is sent here: a missing region or credentials surface as
    /// [`Error::Service`] on the first request.
    ///
    /// The crate enables only `aws-config`'s `rt-tokio` and `default-https-client`
    /// features; to sign in with AWS IAM Identity Center (SSO) or a credentials process,
    /// add `aws-config` with its `sso` or `credentials-process` feature to your own
    /// dependencies (Cargo merges the features). To configure the client yourself (retry,
    /// timeouts, a custom credentials provider), build the `SdkConfig` and use
    /// [`Db::new`]: `Db::new(aws_sdk_dynamodb::Client::new(&config), "app-prod")`.
    ///
    /// ```no_run
    /// # use dynamo_model::{Db, Table};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// # async fn demo() {
    /// let db: Db<App> = Db::from_env("app-prod").await;
    /// # }
    /// ```
    #[cfg(feature = "aws-config")]
    pub async fn from_env(table_name: impl Into<Arc<str>>) -> Self {
        let config = aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await;
        Db::new(Client::new(&config), table_name)
    }

    /// A `Db` whose client has no region, endpoint or credentials: it builds requests but
    /// cannot send them (sending fails with [`Error::Service`]). For unit tests that check
    /// what an operation would send with `params()`, without DynamoDB Local:
    ///
    /// ```
    /// # use dynamo_model::{Db, Table};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// let db = Db::<App>::offline("app-test");
    /// assert_eq!(db.table_name(), "app-test");
    /// ```
    pub fn offline(table_name: impl Into<Arc<str>>) -> Self {
        let config = aws_sdk_dynamodb::Config::builder()
            .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
            .build();
        Db::new(Client::from_conf(config), table_name)
    }

    /// This `Db` with another client (same table, cursor secret and cache).
    pub(crate) fn with_client(&self, client: Client) -> Db<T> {
        Db {
            observers: crate::call::observed(&client),
            client,
            ..self.clone()
        }
    }

    /// This `Db` on another table of the same schema (same client, cursor secret and
    /// cache).
    #[cfg(feature = "time")]
    pub(crate) fn with_table_name(&self, table_name: &str) -> Db<T> {
        Db {
            table_name: Arc::from(table_name),
            ..self.clone()
        }
    }

    /// This `Db` with `cache` answering its gets.
    #[cfg(feature = "cache")]
    pub(crate) fn set_cache(mut self, cache: Option<crate::cache::Cache>) -> Db<T> {
        self.cache = cache;
        self
    }

    /// A `Db` on the same table whose gets may be answered by `cache`, and whose writes
    /// invalidate it (see [`crate::cache`]). Its client is a copy of this one's with one
    /// more interceptor: build it once, not per call.
    #[cfg(feature = "cache")]
    pub fn with_cache(&self, cache: &crate::cache::Cache) -> Db<T> {
        let client = crate::cache::invalidating(&self.client, cache, &T::SCHEMA);
        self.with_client(client).set_cache(Some(cache.clone()))
    }

    /// The cache answering gets, if any.
    #[cfg(feature = "cache")]
    pub(crate) fn cache(&self) -> Option<&crate::cache::Cache> {
        self.cache.as_ref()
    }

    /// The table name, shared.
    pub(crate) fn table_arc(&self) -> &Arc<str> {
        &self.table_name
    }

    /// Keys the checksum of pagination cursors with `secret`, so that clients holding
    /// cursors (e.g. in a public API) cannot forge them. Without a secret the checksum
    /// still detects altered cursors and cursors of other queries. Every service instance
    /// handing out and accepting cursors must use the same secret.
    pub fn with_cursor_secret(mut self, secret: impl AsRef<[u8]>) -> Self {
        self.cursor_secret = Arc::from(secret.as_ref());
        self
    }

    /// Encrypts and decrypts the entities' `#[dynamo(encrypt)]` fields with `keys` (see
    /// [`encrypt`](crate::encrypt)): the current key seals every value written, any key
    /// it holds opens what it sealed.
    pub fn with_keys(mut self, keys: impl crate::encrypt::KeyProvider) -> Self {
        self.keys = Some(Arc::new(keys));
        self
    }

    /// Retries with `policy` every call the crate retries itself, instead of each call's
    /// default: batch gets and writes (unprocessed items, throttling), transactions
    /// (conflicts; 10 s by default), history writes and the reads of chunked values. A
    /// call's own `.retry(..)` still takes precedence. The SDK's retries of each request
    /// are the client's (its `RetryConfig`).
    ///
    /// ```
    /// # use dynamo_model::{Db, RetryPolicy, Table};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// use std::time::Duration;
    ///
    /// // A request handler that must answer within 2 s gives up on throttled batches sooner.
    /// let db = Db::<App>::offline("app").with_retry(RetryPolicy::default().deadline(Duration::from_secs(2)));
    /// # let _ = db;
    /// ```
    pub fn with_retry(mut self, policy: crate::RetryPolicy) -> Self {
        self.retry = Some(policy);
        self
    }

    /// The retry policy of a call the crate retries itself: this `Db`'s
    /// ([`with_retry`](Self::with_retry)), else the call's `default`.
    pub(crate) fn retry_policy_or(&self, default: crate::RetryPolicy) -> crate::RetryPolicy {
        self.retry.unwrap_or(default)
    }

    /// The keys of encrypted fields, if any.
    pub(crate) fn keys(&self) -> Option<&dyn crate::encrypt::KeyProvider> {
        self.keys.as_deref()
    }

    /// `item` decoded as `E`, its encrypted fields (`#[dynamo(encrypt)]`) decrypted first
    /// with this `Db`'s keys: what every read of one whole entity returns. For items read
    /// otherwise (the current item an [`Error`] carries, a stream image, an item read with
    /// the SDK), which [`Entity::from_item`](crate::Entity::from_item) cannot decrypt.
    pub fn decode<E: crate::Entity<Table = T>>(&self, mut item: crate::Item) -> Result<E, Error> {
        crate::collection::open::<E>(self.keys(), &mut item)?;
        Ok(E::from_item(item)?)
    }

    /// The keys of encrypted fields, shared (for readers that outlive the borrow).
    pub(crate) fn shared_keys(&self) -> Option<Arc<dyn crate::encrypt::KeyProvider>> {
        self.keys.clone()
    }

    /// Records the key of each single-item operation in its tracing span
    /// (`dynamo_model.key`; see [`crate::trace`]). Off by default: keys can hold personal
    /// data. Attribute values are never recorded.
    pub fn trace_keys(mut self, on: bool) -> Self {
        self.trace_keys = on;
        self
    }

    /// A `Db` on the same table whose calls are recorded in `meter` (see
    /// [`Meter`](crate::capacity::Meter)). Its client is a copy of this one's with one more
    /// interceptor: build it once per meter, not per call.
    pub fn metered(&self, meter: &crate::capacity::Meter) -> Db<T> {
        let config = self
            .client()
            .config()
            .to_builder()
            .interceptor(crate::call::Observing::new(
                crate::capacity::Metering(meter.clone()),
                &T::SCHEMA,
            ))
            .build();
        self.with_client(Client::from_conf(config))
    }

    /// A `Db` on the same table whose calls `insight` observes: hot partitions, and the
    /// read shapes and item sizes `explain()` draws on (see [`crate::insight`]). Its client
    /// is a copy of this one's with one more interceptor: build it once, not per call.
    pub fn observed(&self, insight: &crate::insight::Insight) -> Db<T> {
        let observing = crate::insight::Observing::new::<T>(insight, self.table_name.clone());
        let config = self
            .client()
            .config()
            .to_builder()
            .interceptor(crate::call::Observing::new(observing, &T::SCHEMA))
            .build();
        Db {
            insight: Some(insight.clone()),
            ..self.with_client(Client::from_conf(config))
        }
    }

    /// Whether the client has an observer reading the records of calls.
    pub(crate) fn has_observers(&self) -> bool {
        self.observers
    }

    /// The insight observing this `Db`'s calls, if any.
    pub(crate) fn insight(&self) -> Option<&crate::insight::Insight> {
        self.insight.as_ref()
    }

    /// Whether operation spans record keys.
    pub(crate) fn traces_keys(&self) -> bool {
        self.trace_keys
    }

    pub(crate) fn cursor_secret(&self) -> &[u8] {
        &self.cursor_secret
    }

    /// The underlying SDK client, for anything this crate does not cover.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The table name.
    pub fn table_name(&self) -> &str {
        &self.table_name
    }

    /// Creates the table from the schema (keys, indexes, and the declared capacity and
    /// stream: on demand and no stream unless declared), waits until it is active, and
    /// enables TTL when the schema declares a TTL attribute.
    pub async fn create_table(&self) -> Result<(), Error> {
        crate::schema::create_table(&self.client, &self.table_name, &T::SCHEMA).await
    }

    /// [`create_table`](Self::create_table) with another stage's capacity and stream
    /// (see [`TableOptions`](crate::schema::TableOptions)); options DynamoDB would refuse
    /// are refused before anything is sent.
    ///
    /// ```no_run
    /// # use dynamo_model::{Db, Table};
    /// use dynamo_model::schema::{TableOptions, Throughput};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// # async fn demo(db: Db<App>) -> Result<(), dynamo_model::Error> {
    /// let prod = TableOptions::declared(&App::SCHEMA).provisioned(Throughput { read: 50, write: 20 });
    /// db.create_table_with(&prod).await?;
    /// # Ok(()) }
    /// ```
    pub async fn create_table_with(
        &self,
        options: &crate::schema::TableOptions,
    ) -> Result<(), Error> {
        crate::schema::create_table_with(&self.client, &self.table_name, &T::SCHEMA, options).await
    }

    /// Compares the table DynamoDB describes with the declaration: key schema, key
    /// attribute types, indexes (keys, kind, projection, capacity), billing mode and
    /// capacity, stream and TTL. Returns every difference (empty when the table is as
    /// declared); an undeclared index the table has is one too. Sends `DescribeTable` and
    /// `DescribeTimeToLive`.
    ///
    /// ```no_run
    /// # use dynamo_model::{Db, Table};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// # async fn demo(db: Db<App>) -> Result<(), dynamo_model::Error> {
    /// for difference in db.check_table().await? {
    ///     eprintln!("table {}: {difference}", db.table_name());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn check_table(&self) -> Result<Vec<crate::schema::TableDifference>, Error> {
        self.check_table_with(&crate::schema::TableOptions::declared(&T::SCHEMA))
            .await
    }

    /// [`check_table`](Self::check_table) against another stage's capacity and stream.
    pub async fn check_table_with(
        &self,
        options: &crate::schema::TableOptions,
    ) -> Result<Vec<crate::schema::TableDifference>, Error> {
        let layout = crate::schema::layout_with(&T::SCHEMA, options)?;
        crate::schema::check_table(&self.client, &self.table_name, T::SCHEMA.type_name, &layout)
            .await
    }

    /// Deletes the table (and every item in it). DynamoDB deletes it in the background;
    /// the call returns once the deletion is accepted.
    pub async fn delete_table(&self) -> Result<(), Error> {
        self.client
            .delete_table()
            .table_name(self.table_name.as_ref())
            .send()
            .await
            .map_err(|e| Error::service("DeleteTable", &self.table_name, e))?;
        Ok(())
    }
}

// A budget's checks of a block take a `Db`, which sits above `capacity`: they live here,
// with `Db::metered`; the counting is `capacity::budget`'s.
impl crate::capacity::Budget {
    /// Runs `block` with a metered clone of `db`, and returns the block's output if the
    /// calls it made through that clone are within the budget. Calls through another
    /// `Db` are not counted; gets answered by a cache send none.
    ///
    /// ```no_run
    /// # use dynamo_model::{Db, Entity, Table, capacity::Budget};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// # #[derive(Entity, Debug, Clone)]
    /// # #[dynamo(table = App, pk = "USER#{user}", sk = "ORDER#{id}")]
    /// # struct Order { user: String, id: String }
    /// # async fn demo(db: Db<App>) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// // Order history: one request per page, whatever the page holds.
    /// let page = Budget::new()
    ///     .requests(1)
    ///     .check(&db, |db| async move { db.query(Order::partition("u-1")).limit(50).page(None).await })
    ///     .await??;
    /// # let _ = page;
    /// # Ok(()) }
    /// ```
    pub async fn check<T, F, Fut, R>(
        &self,
        db: &Db<T>,
        block: F,
    ) -> Result<R, crate::capacity::BudgetExceeded>
    where
        T: Table,
        F: FnOnce(Db<T>) -> Fut,
        Fut: Future<Output = R>,
    {
        // Every call of the block is kept, however many.
        let meter = crate::capacity::Meter::with_history(usize::MAX);
        let output = block(db.metered(&meter)).await;
        self.check_meter(&meter).map(|_| output)
    }

    /// [`check`](Self::check), panicking with the [`BudgetExceeded`] message (every limit
    /// exceeded and every call) and the caller's location: the one-line form for a test.
    ///
    /// [`BudgetExceeded`]: crate::capacity::BudgetExceeded
    #[track_caller]
    pub fn assert<'a, T, F, Fut, R>(
        &'a self,
        db: &'a Db<T>,
        block: F,
    ) -> impl Future<Output = R> + 'a
    where
        T: Table,
        F: FnOnce(Db<T>) -> Fut + 'a,
        Fut: Future<Output = R> + 'a,
    {
        // `#[track_caller]` does not reach into an async body: take the location here.
        let caller = std::panic::Location::caller();
        async move {
            match self.check(db, block).await {
                Ok(output) => output,
                Err(exceeded) => panic!("{exceeded}\n(budget asserted at {caller})"),
            }
        }
    }
}

/// A `Db` whose client is never used to send: for unit tests that build requests.
#[cfg(test)]
pub(crate) fn offline<T: Table>() -> Db<T> {
    Db::offline("t")
}
