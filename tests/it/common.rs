//! The single-table model shared by the tests.

pub mod mixed;
pub mod spans;

use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

pub type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// The same table seen through a client that suffers `faults`, with the SDK's own
/// retries off so that every fault reaches the library's loops.
pub async fn faulty<T: Table>(
    db: &dynamo_model::Db<T>,
    faults: &dynamo_model::local::faults::Faults,
) -> Result<dynamo_model::Db<T>, Box<dyn std::error::Error + Send + Sync>> {
    let endpoint = tokio::task::spawn_blocking(dynamo_model::local::shared_endpoint).await??;
    let retries = dynamo_model::aws_sdk_dynamodb::config::retry::RetryConfig::disabled();
    Ok(dynamo_model::Db::new(
        dynamo_model::local::faults::client_with_faults(&endpoint, faults, retries),
        db.table_name(),
    ))
}

/// The same table through a client that suffers `faults`, with the SDK's `retries` and
/// a retry quota of its own named `quota`: a retry that ends in a failed condition never
/// gives its quota tokens back, and the SDK's default quota is shared by every client of
/// the process, so tests that lose responses would drain it for the others.
pub async fn faulty_with<T: Table>(
    db: &dynamo_model::Db<T>,
    faults: &dynamo_model::local::faults::Faults,
    retries: dynamo_model::aws_sdk_dynamodb::config::retry::RetryConfig,
    quota: &str,
) -> Res<dynamo_model::Db<T>> {
    use dynamo_model::aws_sdk_dynamodb::config::retry::{RetryPartition, TokenBucket};
    let endpoint = tokio::task::spawn_blocking(dynamo_model::local::shared_endpoint).await??;
    let client = dynamo_model::local::faults::client_with_faults(&endpoint, faults, retries);
    let partition = RetryPartition::custom(quota.to_owned())
        .token_bucket(TokenBucket::unlimited())
        .build();
    let config = client
        .config()
        .to_builder()
        .retry_partition(partition)
        .build();
    Ok(dynamo_model::Db::new(
        dynamo_model::aws_sdk_dynamodb::Client::from_conf(config),
        db.table_name(),
    ))
}

/// A row as another program writes it: `PK` = `pk`, `SK` = `sk` and the attributes `rest`.
pub fn raw_row(
    pk: &str,
    sk: &str,
    rest: &[(&str, dynamo_model::aws_sdk_dynamodb::types::AttributeValue)],
) -> dynamo_model::Item {
    let mut item = dynamo_model::Item::from([("PK".to_owned(), s(pk)), ("SK".to_owned(), s(sk))]);
    for (k, v) in rest {
        item.insert((*k).to_owned(), v.clone());
    }
    item
}

/// A test's fallible result.
pub type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// A string attribute.
pub fn s(v: &str) -> dynamo_model::aws_sdk_dynamodb::types::AttributeValue {
    dynamo_model::aws_sdk_dynamodb::types::AttributeValue::S(v.to_owned())
}

/// A number attribute.
pub fn n(v: u64) -> dynamo_model::aws_sdk_dynamodb::types::AttributeValue {
    dynamo_model::aws_sdk_dynamodb::types::AttributeValue::N(v.to_string())
}

/// Writes `item` with the raw SDK, as another program would.
pub async fn put_raw<T: Table>(db: &dynamo_model::Db<T>, item: dynamo_model::Item) -> TestResult {
    db.client()
        .put_item()
        .table_name(db.table_name())
        .set_item(Some(item))
        .send()
        .await?;
    Ok(())
}

/// The key `PK` = `pk`, `SK` = `sk`.
pub fn raw_key(
    pk: &str,
    sk: &str,
) -> std::collections::HashMap<String, dynamo_model::aws_sdk_dynamodb::types::AttributeValue> {
    std::collections::HashMap::from([("PK".to_owned(), s(pk)), ("SK".to_owned(), s(sk))])
}

/// The item under `pk`/`sk` as stored (strongly consistent, with the raw SDK).
pub async fn raw_get<T: Table>(
    db: &dynamo_model::Db<T>,
    pk: &str,
    sk: &str,
) -> Res<dynamo_model::Item> {
    Ok(db
        .client()
        .get_item()
        .table_name(db.table_name())
        .set_key(Some(raw_key(pk, sk)))
        .consistent_read(true)
        .send()
        .await?
        .item
        .ok_or("no item")?)
}

/// Sets attributes of the stored item `pk`/`sk` as another program would (placeholders
/// for every name and value).
pub async fn raw_set<T: Table>(
    db: &dynamo_model::Db<T>,
    pk: &str,
    sk: &str,
    attrs: &[(&str, dynamo_model::aws_sdk_dynamodb::types::AttributeValue)],
) -> Res<()> {
    let mut names = std::collections::HashMap::new();
    let mut values = std::collections::HashMap::new();
    let mut sets = Vec::new();
    for (i, (name, value)) in attrs.iter().enumerate() {
        names.insert(format!("#a{i}"), (*name).to_owned());
        values.insert(format!(":a{i}"), value.clone());
        sets.push(format!("#a{i} = :a{i}"));
    }
    db.client()
        .update_item()
        .table_name(db.table_name())
        .set_key(Some(raw_key(pk, sk)))
        .update_expression(format!("SET {}", sets.join(", ")))
        .set_expression_attribute_names(Some(names))
        .set_expression_attribute_values(Some(values))
        .send()
        .await?;
    Ok(())
}

/// Deletes the item `pk`/`sk` with the raw SDK, as another program would.
pub async fn raw_delete<T: Table>(db: &dynamo_model::Db<T>, pk: &str, sk: &str) -> Res<()> {
    db.client()
        .delete_item()
        .table_name(db.table_name())
        .set_key(Some(raw_key(pk, sk)))
        .send()
        .await?;
    Ok(())
}

/// The item under the raw key `key`, as stored (strongly consistent, with the raw SDK).
pub async fn raw_find<T: Table>(
    db: &dynamo_model::Db<T>,
    key: dynamo_model::Item,
) -> Res<Option<dynamo_model::Item>> {
    Ok(db
        .client()
        .get_item()
        .table_name(db.table_name())
        .set_key(Some(key))
        .consistent_read(true)
        .send()
        .await?
        .item)
}

/// Every item under the partition key `PK` = `pk`, as stored (a strongly consistent raw
/// query).
pub async fn raw_partition<T: Table>(
    db: &dynamo_model::Db<T>,
    pk: &str,
) -> Res<Vec<dynamo_model::Item>> {
    let out = db
        .client()
        .query()
        .table_name(db.table_name())
        .key_condition_expression("PK = :p")
        .expression_attribute_values(":p", s(pk))
        .consistent_read(true)
        .send()
        .await?;
    Ok(out.items.unwrap_or_default())
}

/// Every item of a table, by its string keys (`PK`, `SK`).
pub type Rows = std::collections::BTreeMap<(String, String), dynamo_model::Item>;

/// Every item of the table as stored (a strongly consistent scan with the raw SDK).
pub async fn raw_table<T: Table>(db: &dynamo_model::Db<T>) -> Res<Rows> {
    let mut all = Rows::new();
    let mut start = None;
    loop {
        let out = db
            .client()
            .scan()
            .table_name(db.table_name())
            .set_exclusive_start_key(start)
            .consistent_read(true)
            .send()
            .await?;
        for item in out.items.unwrap_or_default() {
            let key = |k: &str| item.get(k).and_then(|v| v.as_s().ok()).cloned();
            all.insert(
                (key("PK").unwrap_or_default(), key("SK").unwrap_or_default()),
                item,
            );
        }
        match out.last_evaluated_key.filter(|k| !k.is_empty()) {
            Some(k) => start = Some(k),
            None => return Ok(all),
        }
    }
}

/// Runs `f` to completion from inside a synchronous closure (a migration's map) on a
/// multi-thread runtime.
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::task::block_in_place(|| tokio::runtime::Handle::current().block_on(f))
}

/// Asserts that `err` is a refusal before sending for exactly `reason`.
#[track_caller]
pub fn assert_refused(err: &dynamo_model::Error, reason: dynamo_model::ValidationReason) {
    match err {
        dynamo_model::Error::Validation { reason: got, .. } => {
            assert_eq!(*got, reason, "refused for another reason: {err}")
        }
        other => panic!("expected a refusal ({reason}), got {other:?}"),
    }
}

/// Puts purchase `p` with its three items and one invoice.
pub async fn seed_purchase(db: &dynamo_model::Db<App>, p: &str) -> TestResult {
    db.put(&Purchase {
        purchase_id: p.into(),
        buyer: "ada".into(),
    })
    .await?;
    for n in 1..=3u8 {
        db.put(&PurchaseItem {
            purchase_id: p.into(),
            n,
            sku: format!("sku-{n}"),
        })
        .await?;
    }
    db.put(&Invoice {
        purchase_id: p.into(),
        invoice_no: 9,
        amount_cents: 500,
    })
    .await?;
    Ok(())
}

/// A document at revision 1, without an expiry.
pub fn doc(id: &str, body: &str, version: u64) -> Doc {
    Doc {
        id: id.into(),
        rev: 1,
        body: body.into(),
        version,
        expires: None,
    }
}

/// Every attribute another program wrote is still there, byte for byte; the only others
/// are the crate's own (the entity type and the write token).
#[track_caller]
pub fn same_layout(before: &dynamo_model::Item, after: &dynamo_model::Item) {
    for (name, value) in before {
        assert_eq!(after.get(name), Some(value), "attribute {name} changed");
    }
    for name in after.keys() {
        assert!(
            before.contains_key(name) || name == "_type" || name == "_wt",
            "the crate added attribute {name}: {after:?}"
        );
    }
}

/// `n` sample users, `u00`, `u01`, …
pub fn users(n: usize) -> Vec<User> {
    (0..n).map(|i| User::sample(&format!("u{i:02}"))).collect()
}

/// The ids of the users stored (a consistent scan).
pub async fn stored_ids(db: &dynamo_model::Db<App>) -> Res<std::collections::BTreeSet<String>> {
    Ok(db
        .scan::<User>()
        .consistent()
        .all()
        .await?
        .items
        .into_iter()
        .map(|u| u.user_id)
        .collect())
}

/// Turns the table's stream on with `view` and returns its ARN.
pub async fn enable_stream<T: Table>(
    db: &dynamo_model::Db<T>,
    view: dynamo_model::aws_sdk_dynamodb::types::StreamViewType,
) -> Res<String> {
    use dynamo_model::aws_sdk_dynamodb::types::StreamSpecification;
    db.client()
        .update_table()
        .table_name(db.table_name())
        .stream_specification(
            StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(view)
                .build()?,
        )
        .send()
        .await?;
    let table = db
        .client()
        .describe_table()
        .table_name(db.table_name())
        .send()
        .await?
        .table;
    Ok(table.and_then(|t| t.latest_stream_arn).ok_or("no stream")?)
}

/// A DynamoDB Streams client on DynamoDB Local.
pub async fn streams_client() -> Res<aws_sdk_dynamodbstreams::Client> {
    use aws_sdk_dynamodbstreams::config::{BehaviorVersion, Credentials, Region};
    let endpoint = tokio::task::spawn_blocking(dynamo_model::local::shared_endpoint).await??;
    Ok(aws_sdk_dynamodbstreams::Client::from_conf(
        aws_sdk_dynamodbstreams::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-east-1"))
            .endpoint_url(endpoint)
            .credentials_provider(Credentials::new("dynamomodel", "local", None, None, "test"))
            .build(),
    ))
}

#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
    gsi(name = "GSI2", pk = "GSI2PK", sk = "GSI2SK", projection = keys_only),
    gsi(name = "GSI3", pk = "GSI3PK", sk = "GSI3SK",
        projection(include = ["_type", "userId", "orderId", "createdAt", "totalCents"])),
    lsi(name = "LSI1", sk = "LSI1SK"),
    ttl = "expires_at"
)]
pub struct App;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "PROFILE",
         index(GSI1, pk = "EMAIL#{email}", sk = "USER"))]
#[serde(rename_all = "camelCase")]
pub struct User {
    pub user_id: String,
    pub display_name: String,
    pub email: Option<String>,
    pub login_count: u32,
    #[serde(rename = "tags")]
    pub labels: Vec<String>,
}

impl User {
    pub fn sample(id: &str) -> Self {
        User {
            user_id: id.into(),
            display_name: format!("User {id}"),
            email: None,
            login_count: 0,
            labels: vec!["new".into()],
        }
    }
}

/// A second declaration of `App`'s table, for [`Impostor`]: read and write it through
/// [`twin`] on an `App` table.
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
pub struct Twin;

/// Shares `User`'s key shape on purpose: reading one as the other must be a typed error,
/// and writing one must never replace or remove the other. It is bound to `Twin`, not
/// `App`: on `App`, every `User` key would also be an `Impostor` key, and batch writes
/// (which cannot check the stored type) refuse such keys, so no test could batch-write
/// users. The stored-type conditions of single-item writes do not depend on that.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Twin, pk = "USER#{user_id}", sk = "PROFILE", entity_type = "Impostor")]
pub struct Impostor {
    pub user_id: String,
}

/// The `App` table `db` is bound to, as a `Twin` (for [`Impostor`]).
pub fn twin(db: &dynamo_model::Db<App>) -> dynamo_model::Db<Twin> {
    dynamo_model::Db::new(db.client().clone(), db.table_name())
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{created_at}#{order_id}",
         index(LSI1, sk = "STATUS#{status}"),
         index(GSI2, pk = "STATUS#{status}", sk = "{created_at}#{order_id}"),
         index(GSI3, pk = "BY_TOTAL", sk = "{total_cents}#{order_id}"))]
#[serde(rename_all = "camelCase")]
pub struct Order {
    pub user_id: String,
    pub order_id: Uuid,
    pub created_at: OffsetDateTime,
    pub total_cents: u64,
    pub status: String,
    pub note: Option<String>,
}

/// Field names that are DynamoDB reserved words: every expression must alias them.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "THING#{name}", sk = "THING")]
pub struct Thing {
    pub name: String,
    pub status: String,
    pub data: Option<String>,
    pub ttl: Option<i64>,
    pub r#type: String,
    pub size: i32,
}

/// Signed integer and bool key parts.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "READING#{sensor}", sk = "{delta}#{valid}")]
pub struct Reading {
    pub sensor: String,
    pub delta: i64,
    pub valid: bool,
}

/// `ORDER#1` vs `ORDER#10`: whole-component prefixes must not collide.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "SHOP#{shop}", sk = "ORDER#{order_no}#{line}")]
pub struct Line {
    pub shop: String,
    pub order_no: String,
    pub line: u16,
    pub qty: u32,
    pub status: String,
}

/// Hierarchical sort key, queryable at every level.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "STORES", sk = "{country}#{region}#{state}#{city}")]
pub struct Store {
    pub country: String,
    pub region: String,
    pub state: String,
    pub city: String,
}

/// Members of one order partition, for collection queries.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "PURCHASE#{purchase_id}", sk = "A#PURCHASE")]
pub struct Purchase {
    pub purchase_id: String,
    pub buyer: String,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "PURCHASE#{purchase_id}", sk = "ITEM#{n}")]
pub struct PurchaseItem {
    pub purchase_id: String,
    pub n: u8,
    pub sku: String,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "PURCHASE#{purchase_id}", sk = "INVOICE#{invoice_no}")]
pub struct Invoice {
    pub purchase_id: String,
    pub invoice_no: u32,
    pub amount_cents: u64,
}

/// Shares the partition but is not part of `PurchaseDetails`.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "PURCHASE#{purchase_id}", sk = "NOTE#{n}")]
pub struct PurchaseNote {
    pub purchase_id: String,
    pub n: u8,
}

#[derive(dynamo_model::Collection, Debug, Clone, PartialEq)]
pub enum PurchaseDetails {
    Purchase(Purchase),
    Item(PurchaseItem),
    Invoice(Invoice),
}

/// GSI1 is overloaded: teams, their members and badges share a `TEAM#..` partition there
/// (and users sit under `EMAIL#..`).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "TEAM#{team}", sk = "TEAM", index(GSI1, pk = "TEAM#{team}", sk = "A#TEAM"))]
pub struct Team {
    pub team: String,
    pub motto: String,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "MEMBER#{id}", sk = "MEMBER",
         index(GSI1, pk = "TEAM#{team}", sk = "M#{level}#{nick}"))]
pub struct Member {
    pub id: String,
    pub team: Option<String>,
    pub level: u32,
    pub nick: String,
    pub points: u64,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "BADGE#{badge}", sk = "TEAM#{team}",
         index(GSI1, pk = "TEAM#{team}", sk = "B#{badge}"))]
pub struct Badge {
    pub badge: String,
    pub team: String,
}

#[derive(dynamo_model::Collection, Debug, Clone, PartialEq)]
pub enum TeamView {
    Team(Team),
    Member(Member),
    Badge(Badge),
}

/// A partial view of `Order` over the INCLUDE projection of GSI3: same entity type and
/// templates, only the projected fields. Read it; never put it.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{created_at}#{order_id}",
         entity_type = "Order", index(GSI3, pk = "BY_TOTAL", sk = "{total_cents}#{order_id}"))]
#[serde(rename_all = "camelCase")]
pub struct OrderTotal {
    pub user_id: String,
    pub order_id: Uuid,
    pub created_at: OffsetDateTime,
    pub total_cents: u64,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "ACCOUNT#{id}", sk = "ACCOUNT")]
pub struct Account {
    pub id: String,
    pub balance: i64,
    pub transfers: u32,
}

/// Optimistic locking and TTL.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "DOC#{id}", sk = "DOC#{rev}")]
pub struct Doc {
    pub id: String,
    pub rev: u32,
    pub body: String,
    #[dynamo(version)]
    pub version: u64,
    #[dynamo(ttl)]
    pub expires: Option<OffsetDateTime>,
}

/// Lists, sets and counters for update expressions.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "PROFILE#{id}", sk = "PROFILE")]
pub struct Profile {
    pub id: String,
    pub credits: u32,
    pub tags: Vec<String>,
    pub roles: std::collections::BTreeSet<String>,
    pub nickname: Option<String>,
}

/// Map attributes and a serde document, for nested paths.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "PREFS#{id}", sk = "PREFS")]
pub struct Prefs {
    pub id: String,
    pub settings: std::collections::HashMap<String, String>,
    pub counters: std::collections::BTreeMap<String, u64>,
    #[dynamo(serde)]
    pub address: Address,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Address {
    pub city: String,
    pub zip: String,
}

/// An index partition key made of one field: an empty value would render an empty key.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "TAG#{id}", sk = "TAG", index(GSI1, pk = "{label}", sk = "TAG"))]
pub struct Tag {
    pub id: String,
    pub label: String,
}
