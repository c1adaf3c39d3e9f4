//! The single-table model shared by the tests.

pub mod intercept;
pub mod mixed;
pub mod raw;
pub mod reference;
pub mod spans;

pub use raw::*;

use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

pub type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// A test's fallible result.
pub type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// A multi-thread runtime for a synchronous test (a property test runs its cases on it).
pub fn runtime() -> Res<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

/// A property-test runner of `cases` cases that keeps no file of failures.
pub fn runner(cases: u32) -> proptest::test_runner::TestRunner {
    proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
        cases,
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    })
}

/// A property-test case failure saying `what`.
pub fn fail(what: impl std::fmt::Display) -> proptest::test_runner::TestCaseError {
    proptest::test_runner::TestCaseError::fail(what.to_string())
}

/// A [`runtime`] and a fresh table of `T` made on it, for a property test.
pub fn runtime_and_table<T: Table>(
) -> Res<(tokio::runtime::Runtime, dynamo_model::local::TempTable<T>)> {
    let runtime = runtime()?;
    let db = runtime.block_on(dynamo_model::local::fresh_table::<T>())?;
    Ok((runtime, db))
}

/// A fresh table holding `items`, put one by one in their order.
pub async fn table_with<E: Entity>(
    items: impl IntoIterator<Item = E>,
) -> Res<dynamo_model::local::TempTable<E::Table>> {
    let db = dynamo_model::local::fresh_table::<E::Table>().await?;
    for item in items {
        db.put(&item).await?;
    }
    Ok(db)
}

/// Runs `f` to completion from inside a synchronous closure (a migration's map) on a
/// multi-thread runtime.
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::task::block_in_place(|| tokio::runtime::Handle::current().block_on(f))
}

/// A migration's map that changes every item by `change` and keeps it.
pub fn each<E>(
    change: impl Fn(&mut E) + Send + Sync + 'static,
) -> impl Fn(E) -> Option<E> + Send + Sync + 'static {
    move |mut item| {
        change(&mut item);
        Some(item)
    }
}

/// Runs `migration` until its first progress report (a page done and its checkpoint
/// saved) and drops the run there; a run that finishes first is let finish.
pub async fn run_until_first_page<E: dynamo_model::Entity>(
    migration: dynamo_model::migrate::Migration<E>,
) {
    let kill = std::sync::Arc::new(tokio::sync::Notify::new());
    let signal = std::sync::Arc::clone(&kill);
    let run = migration.on_progress(move |_| signal.notify_one()).run();
    tokio::select! {
        _ = run => {}
        () = kill.notified() => {}
    }
}

/// A migration's map that changes every item by `change`; the first time it meets an item
/// `when` holds for, it first runs `interfere`: another writer's write between the
/// migration's read of the item and its write.
pub fn interfered_once<E>(
    when: impl Fn(&E) -> bool + Send + Sync + 'static,
    interfere: impl Fn() + Send + Sync + 'static,
    change: impl Fn(&mut E) + Send + Sync + 'static,
) -> impl Fn(E) -> Option<E> + Send + Sync + 'static {
    let done = std::sync::atomic::AtomicBool::new(false);
    move |mut item| {
        if when(&item) && !done.swap(true, std::sync::atomic::Ordering::SeqCst) {
            interfere();
        }
        change(&mut item);
        Some(item)
    }
}

/// What a test compares of a read: its items, each mapped.
pub trait Mapped<T> {
    /// `f` of every item, in the read's order.
    fn mapped<U>(self, f: impl FnMut(T) -> U) -> Vec<U>;
}

impl<T> Mapped<T> for dynamo_model::Page<T> {
    fn mapped<U>(self, f: impl FnMut(T) -> U) -> Vec<U> {
        self.items.into_iter().map(f).collect()
    }
}

/// The items of `query`, every page read.
pub async fn items_of<T: dynamo_model::Target, K: dynamo_model::KeySpace>(
    query: dynamo_model::read::Query<T, K>,
) -> Result<Vec<T>, dynamo_model::Error> {
    Ok(query.all().await?.items)
}

/// The items of every page of `query()` with `limit` (and `page_size`; newest first
/// when `reverse`), following the cursors; asserts that no page holds more than `limit`.
pub async fn all_pages<T: dynamo_model::Target, K: dynamo_model::KeySpace>(
    query: impl Fn() -> dynamo_model::read::Query<T, K>,
    limit: usize,
    page_size: Option<usize>,
    reverse: bool,
) -> Result<Vec<T>, dynamo_model::Error> {
    let mut items = Vec::new();
    let mut cursor = None;
    for _ in 0..100 {
        let mut q = query().limit(limit);
        if let Some(size) = page_size {
            q = q.page_size(size);
        }
        if reverse {
            q = q.reverse();
        }
        let page = q.page(cursor.as_ref()).await?;
        assert!(page.items.len() <= limit, "a page over its limit");
        items.extend(page.items);
        match page.cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(items),
        }
    }
    panic!("more than 100 pages");
}

/// Resubmits `unprocessed` (what a batch write of `total` users handed back) once
/// `faults` are off: every one is written, and all `total` users are stored.
pub async fn resubmit_all(
    db: &dynamo_model::Db<App>,
    flaky: &dynamo_model::Db<App>,
    faults: &dynamo_model::local::faults::Faults,
    unprocessed: Vec<dynamo_model::WriteOp>,
    total: usize,
) -> TestResult {
    faults.set_enabled(false);
    let again = flaky.batch_write().ops(unprocessed).await?;
    assert_eq!(again.written, total);
    assert_eq!(stored_ids(db).await?.len(), total);
    Ok(())
}

/// Quick backoff for writers contending on one item, with a generous deadline.
pub fn contention_policy() -> dynamo_model::RetryPolicy {
    dynamo_model::RetryPolicy::default()
        .base(std::time::Duration::from_millis(2))
        .cap(std::time::Duration::from_millis(40))
        .deadline(std::time::Duration::from_secs(60))
}

/// Every revision of `key` in `history`, oldest first, read strongly consistent.
pub async fn all_revisions<E: dynamo_model::history::Versioned>(
    history: &dynamo_model::history::History<E>,
    key: dynamo_model::Key<E>,
) -> Res<Vec<dynamo_model::history::Revision<E>>> {
    Ok(history.revisions(key).consistent().all().await?.items)
}

/// The numbers of `revisions`, in their order.
pub fn revision_numbers<E>(revisions: &[dynamo_model::history::Revision<E>]) -> Vec<u64> {
    revisions.iter().map(|r| r.revision).collect()
}

/// The operations whose cancellation refused a transaction with `err`; panics on any other
/// error.
#[track_caller]
pub fn cancelled(err: &dynamo_model::Error) -> &[dynamo_model::transact::CancelledOperation] {
    match err {
        dynamo_model::Error::TransactionCanceled { operations, .. } => operations,
        other => panic!("expected TransactionCanceled, got {other:?}"),
    }
}

/// The one operation whose cancellation refused a transaction with `err`.
#[track_caller]
pub fn the_one_cancelled(err: &dynamo_model::Error) -> &dynamo_model::transact::CancelledOperation {
    let operations = cancelled(err);
    assert_eq!(operations.len(), 1, "{operations:?}");
    &operations[0]
}

/// Asserts that `err` is a refusal before sending for exactly `reason`.
#[track_caller]
pub fn assert_refused(err: &dynamo_model::Error, reason: dynamo_model::ValidationReason) {
    if let Some(failure) = refusal_failure(err, reason) {
        panic!("{failure}");
    }
}

/// What is wrong with `err` as a refusal before sending for exactly `reason`, if anything.
fn refusal_failure(
    err: &dynamo_model::Error,
    reason: dynamo_model::ValidationReason,
) -> Option<String> {
    match err {
        dynamo_model::Error::Validation { reason: got, .. } if *got == reason => None,
        dynamo_model::Error::Validation { reason: got, .. } => Some(format!(
            "refused for another reason: {got:?}, not {reason:?}: {err}"
        )),
        other => Some(format!("expected a refusal ({reason}), got {other:?}")),
    }
}

/// Runs `op` and asserts that it is refused before sending for exactly `reason`.
///
/// Not an `async fn`: the caller's line is taken when `refused` is called (an `async fn`
/// cannot track its caller), so a failure names the test's line.
#[track_caller]
pub fn refused<T: std::fmt::Debug>(
    op: impl std::future::IntoFuture<Output = Result<T, dynamo_model::Error>>,
    reason: dynamo_model::ValidationReason,
) -> impl std::future::Future<Output = ()> {
    let caller = std::panic::Location::caller();
    async move {
        let failure = match op.await {
            Ok(value) => format!("expected a refusal ({reason}), got {value:?}"),
            Err(err) => match refusal_failure(&err, reason) {
                Some(failure) => failure,
                None => return,
            },
        };
        panic!("at {caller}: {failure}");
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

/// Accounts `a0`, `a1`, … with the balances `balances`, no transfers yet.
pub async fn accounts(db: &dynamo_model::Db<App>, balances: &[i64]) -> TestResult {
    for (i, b) in balances.iter().enumerate() {
        db.put(&Account {
            id: format!("a{i}"),
            balance: *b,
            transfers: 0,
        })
        .await?;
    }
    Ok(())
}

/// The balance of account `id` (a consistent read).
pub async fn balance(db: &dynamo_model::Db<App>, id: &str) -> Res<i64> {
    Ok(db
        .get(Account::key(id))
        .consistent()
        .await?
        .ok_or("no account")?
        .balance)
}

/// A fresh table holding accounts `a0` (100) and `a1` (0), and a client on it that
/// suffers `faults` (see [`faulty`]).
pub async fn two_accounts(
    faults: &dynamo_model::local::faults::Faults,
) -> Res<(dynamo_model::local::TempTable<App>, dynamo_model::Db<App>)> {
    let db = with_accounts(&[100, 0]).await?;
    let flaky = faulty(&db, faults).await?;
    Ok((db, flaky))
}

/// A fresh table holding accounts `a0`, `a1`, … with `balances`.
pub async fn with_accounts(balances: &[i64]) -> Res<dynamo_model::local::TempTable<App>> {
    let db = dynamo_model::local::fresh_table::<App>().await?;
    accounts(&db, balances).await?;
    Ok(db)
}

/// The balances of accounts `a0` and `a1`.
pub async fn balances(db: &dynamo_model::Db<App>) -> Res<(i64, i64)> {
    Ok((balance(db, "a0").await?, balance(db, "a1").await?))
}

/// A transaction moving `amount` from account `from` to account `to` (if `from` holds it),
/// counting a transfer on both.
pub fn transfer(
    db: &dynamo_model::Db<App>,
    from: &str,
    to: &str,
    amount: i64,
) -> dynamo_model::transact::TransactWrite<App> {
    let f = Account::fields();
    db.transact_write()
        .update(
            db.update(Account::key(from))
                .add(f.balance, -amount)
                .add(f.transfers, 1)
                .condition(f.balance.ge(amount)),
        )
        .update(
            db.update(Account::key(to))
                .add(f.balance, amount)
                .add(f.transfers, 1),
        )
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

/// `n` bytes that do not compress (xorshift noise from `seed`).
pub fn noise(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// `n` sample users, `u00`, `u01`, …
pub fn users(n: usize) -> Vec<User> {
    (0..n).map(|i| User::sample(&format!("u{i:02}"))).collect()
}

/// A fresh table holding `User::sample(id)`, and that user.
pub async fn with_user(id: &str) -> Res<(dynamo_model::local::TempTable<App>, User)> {
    let db = dynamo_model::local::fresh_table::<App>().await?;
    let user = User::sample(id);
    db.put(&user).await?;
    Ok((db, user))
}

/// The ids of the users stored (a consistent scan).
pub async fn stored_ids(db: &dynamo_model::Db<App>) -> Res<std::collections::BTreeSet<String>> {
    Ok(db
        .scan::<User>()
        .consistent()
        .all()
        .await?
        .mapped(|u| u.user_id)
        .into_iter()
        .collect())
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

    /// A user of about 400 KiB of labels: over DynamoDB's item size limit.
    pub fn oversized(id: &str) -> Self {
        let mut user = Self::sample(id);
        user.labels = vec!["x".repeat(1024); 400];
        user
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
