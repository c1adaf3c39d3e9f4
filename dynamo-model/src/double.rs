//! A stand-in for DynamoDB in unit tests (feature `double`): every call is answered as the
//! test scripted it, and recorded for the test to assert on. No server, no Java, no
//! credentials, no network.
//!
//! A [`Double`] hands out [`Db`]s whose SDK client talks to it instead of DynamoDB. Each
//! request still goes through the whole crate and the whole SDK: the crate builds it, the
//! SDK signs it, the double answers it in DynamoDB's own wire format (JSON, the service's
//! error codes), and the SDK's deserializers, the SDK's retries and the crate's own
//! (unprocessed batch items, throttling, transaction conflicts, lost answers) run as they
//! do against the service. So a scripted `ConditionalCheckFailedException` reaches your
//! code as [`Error::ConditionFailed`](crate::Error::ConditionFailed), its current item
//! decodable with [`Error::current`](crate::Error), and a batch answered with unprocessed
//! items is sent again by the crate, as in production.
//!
//! The double does not store anything or evaluate expressions: it is not DynamoDB. A
//! `GetItem` returns what the test scripted, whatever was put before. Test what your code
//! does with each answer here; test that your keys, conditions and indexes do what you
//! mean against DynamoDB Local (`dynamo_model::local`, the guide's testing chapter).
//!
//! ```
//! use dynamo_model::double::{Answer, Double, Operation};
//! use dynamo_model::{Db, Entity, Error, Table};
//!
//! #[derive(Table)]
//! #[dynamo(pk = "PK", sk = "SK")]
//! struct App;
//!
//! #[derive(Entity, Debug, Clone, PartialEq)]
//! #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE")]
//! struct User {
//!     id: String,
//!     name: String,
//! }
//!
//! /// The code under test: a signup that must not replace an existing user.
//! async fn sign_up(db: &Db<App>, user: &User) -> Result<&'static str, Error> {
//!     match db.put(user).if_absent().await {
//!         Ok(()) => Ok("welcome"),
//!         Err(Error::ConditionFailed { .. }) => Ok("already registered"),
//!         Err(other) => Err(other),
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Error> {
//! let double = Double::new();
//! let db: Db<App> = double.db("app");
//! let ann = User { id: "u-1".into(), name: "Ann".into() };
//!
//! // The first PutItem succeeds, the second finds Ann already there.
//! double
//!     .on(Operation::PutItem)
//!     .then(Answer::ok())
//!     .then(Answer::condition_failed_with(&ann));
//! assert_eq!(sign_up(&db, &ann).await?, "welcome");
//! assert_eq!(sign_up(&db, &ann).await?, "already registered");
//!
//! // What was sent: two PutItems of Ann, on table `app`.
//! let puts = double.calls_of(Operation::PutItem);
//! assert_eq!(puts.len(), 2);
//! assert_eq!(puts[0].table(), Some("app"));
//! assert_eq!(puts[0].items::<User>(), vec![ann.clone()]);
//! assert_eq!(puts[1].key(), Some(User::key("u-1").raw()?));
//! double.assert_done(); // every scripted answer was used
//! # Ok(()) }
//! ```
//!
//! **Scripting.** [`Double::on`] scripts the answers to one operation, in order
//! ([`Script::then`]), then one answer for every later call of it ([`Script::always`]).
//! An [`Answer`] is typed where the crate knows the types: an entity as the item found
//! ([`Answer::item`]), as the current item of a failed condition
//! ([`Answer::condition_failed_with`]) or of a cancelled transaction
//! ([`Answer::canceled_with`]); a batch with some requests unprocessed
//! ([`Answer::unprocessed`]); throttling ([`Answer::throttled`]); any other DynamoDB error
//! ([`Answer::error`]) or response ([`Answer::json`]).
//!
//! **Unscripted calls** panic, naming the call and its key: a test sees every request it
//! did not expect. [`Double::otherwise`] answers them instead (e.g. with [`Answer::ok`],
//! for a test that only cares about some calls).
//!
//! **Recording.** [`Double::calls`] lists every request sent, in order, each attempt of a
//! request apart ([`Call::attempt`]): its [`Operation`], table, entity type and keys as
//! the crate knew them, the SDK input ([`Call::input`]) and the entities it writes
//! ([`Call::items`]).
//!
//! **Retries are instant.** The SDK's retries (3 attempts, as the SDK's default) do not
//! back off, and the `Db`s of a double retry batches and transactions with
//! [`Double::RETRY`] (1 to 8 ms between attempts, for at most 1 s) instead of the
//! production policy, so a call scripted to keep failing gives up within a second.

mod answer;
mod connector;
mod record;

pub use answer::Answer;
pub use record::Call;

use crate::{Db, RetryPolicy, Table};
use aws_sdk_dynamodb::config::retry::{RetryConfig, RetryPartition, TokenBucket};
use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// The [`Operation`] enum and its names, from one list: each variant with the API name
/// and what sends it.
macro_rules! operations {
    ($($op:ident: $doc:literal,)*) => {
        /// A DynamoDB API operation, as a script and the recorded calls name it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Operation {
            $(#[doc = concat!("`", stringify!($op), "`", $doc)] $op,)*
            /// Any other operation ([`Call::operation_name`] names it).
            Other,
        }

        impl Operation {
            /// The API name, e.g. `PutItem` (`Other` for an operation this enum does not
            /// list).
            pub fn name(self) -> &'static str {
                match self {
                    $(Operation::$op => stringify!($op),)*
                    Operation::Other => "Other",
                }
            }

            /// The operation of an API name (`Other` when this enum does not list it).
            pub fn from_name(name: &str) -> Operation {
                match name {
                    $(stringify!($op) => Operation::$op,)*
                    _ => Operation::Other,
                }
            }
        }
    };
}

operations! {
    GetItem: ": [`Db::get`].",
    PutItem: ": [`Db::put`], [`Db::create`].",
    UpdateItem: ": [`Db::update`].",
    DeleteItem: ": [`Db::delete`].",
    Query: ": [`Db::query`] and the reads built on it.",
    Scan: ": [`Db::scan`].",
    BatchGetItem: ": [`Db::batch_get`].",
    BatchWriteItem: ": [`Db::batch_write`].",
    TransactGetItems: ": [`Db::transact_get`].",
    TransactWriteItems: ": [`Db::transact_write`], and single-item writes of entities \
        with unique values or history.",
    ExecuteStatement: " (PartiQL).",
    BatchExecuteStatement: " (PartiQL).",
    ExecuteTransaction: " (PartiQL).",
    CreateTable: ": [`Db::create_table`].",
    DeleteTable: ": [`Db::delete_table`].",
    DescribeTable: ": [`Db::check_table`], and the wait of [`Db::create_table`].",
    UpdateTimeToLive: ": [`Db::create_table`] of a table with a TTL attribute.",
    DescribeTimeToLive: ": [`Db::check_table`].",
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The scripted answers of one operation.
#[derive(Debug, Default)]
struct Queue {
    /// Answered in order, each once.
    next: VecDeque<Answer>,
    /// Once `next` is empty: the answer of every later call.
    always: Option<Answer>,
}

/// What a double holds: the script and the calls seen.
#[derive(Debug, Default)]
struct State {
    scripts: HashMap<Operation, Queue>,
    /// The answer of a call nothing scripted (`None`: such a call panics).
    otherwise: Option<Answer>,
    calls: Vec<Call>,
}

/// An in-process stand-in for DynamoDB: answers each call as scripted, records it. See the
/// [module](self) for an example.
///
/// Cloning is cheap: clones share one script and one record, so a test keeps one while the
/// code under test holds the `Db`s made from it.
#[derive(Debug, Clone, Default)]
pub struct Double {
    state: Arc<Mutex<State>>,
}

impl Double {
    /// The retry policy of the `Db`s a double makes ([`Db::with_retry`]): 1 to 8 ms between
    /// attempts, for at most 1 s, so tests never wait on production backoff.
    pub const RETRY: RetryPolicy = RetryPolicy {
        base: Duration::from_millis(1),
        cap: Duration::from_millis(8),
        deadline: Duration::from_secs(1),
    };

    /// A double with nothing scripted and no call recorded.
    pub fn new() -> Double {
        Double::default()
    }

    /// A `Db` on the table named `table_name` whose requests this double answers, retrying
    /// with [`Double::RETRY`]. Any number of `Db`s, of any schemas, can share one double.
    pub fn db<T: Table>(&self, table_name: impl Into<Arc<str>>) -> Db<T> {
        let client = aws_sdk_dynamodb::Client::from_conf(self.config::<T>().build());
        Db::new(client, table_name).with_retry(Double::RETRY)
    }

    /// The SDK client configuration of [`db`](Self::db), to adjust before building the
    /// client yourself (`Db::new(Client::from_conf(config.build()), ..)`), e.g. with
    /// another `RetryConfig` or an interceptor of your own. It has a region and fixed
    /// test credentials, and the SDK's retries (3 attempts) without backoff.
    pub fn config<T: Table>(&self) -> aws_sdk_dynamodb::config::Builder {
        aws_sdk_dynamodb::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-east-1"))
            .credentials_provider(Credentials::new("double", "double", None, None, "double"))
            .retry_config(
                RetryConfig::standard()
                    .with_initial_backoff(Duration::ZERO)
                    .with_max_backoff(Duration::ZERO),
            )
            // A bucket of its own, never empty: the SDK's default one is shared by every
            // client of the process, so a test's retries would depend on the others'.
            .retry_partition(
                RetryPartition::custom("dynamo-model-double")
                    .token_bucket(TokenBucket::unlimited())
                    .build(),
            )
            .http_client(connector::client(self.clone()))
            // The crate's record of each call (entity, keys) and its input, on each attempt.
            .interceptor(crate::call::Observing::new(record::Recording, &T::SCHEMA))
    }

    /// Scripts the answers to `operation`.
    pub fn on(&self, operation: Operation) -> Script<'_> {
        Script {
            double: self,
            operation,
        }
    }

    /// Answers every call nothing scripted with `answer`, instead of panicking.
    pub fn otherwise(&self, answer: Answer) -> &Double {
        self.lock().otherwise = Some(answer);
        self
    }

    /// Every call answered so far, in order; each attempt of a request is a call.
    pub fn calls(&self) -> Vec<Call> {
        self.lock().calls.clone()
    }

    /// The calls of `operation`, in order.
    pub fn calls_of(&self, operation: Operation) -> Vec<Call> {
        let state = self.lock();
        let calls = state.calls.iter().filter(|c| c.operation() == operation);
        calls.cloned().collect()
    }

    /// Forgets the calls recorded so far (the script is kept).
    pub fn clear_calls(&self) {
        self.lock().calls.clear();
    }

    /// The answers scripted with [`Script::then`] and not used yet, by operation.
    pub fn unused(&self) -> Vec<(Operation, usize)> {
        let state = self.lock();
        let mut unused: Vec<(Operation, usize)> = state
            .scripts
            .iter()
            .filter(|(_, queue)| !queue.next.is_empty())
            .map(|(op, queue)| (*op, queue.next.len()))
            .collect();
        unused.sort_by_key(|(op, _)| op.name());
        unused
    }

    /// Panics, listing them, if answers scripted with [`Script::then`] were not used: the
    /// code under test made fewer calls than the test expects.
    #[track_caller]
    pub fn assert_done(&self) {
        let unused = self.unused();
        if !unused.is_empty() {
            let list: Vec<String> = unused.iter().map(|(op, n)| format!("{op} ×{n}")).collect();
            panic!("scripted answers never used: {}", list.join(", "));
        }
    }

    /// The next answer to `operation` (`None`: nothing scripted), with `call` recorded.
    fn answer_for(&self, call: Call) -> Option<Answer> {
        let mut state = self.lock();
        let queue = state.scripts.get_mut(&call.operation());
        let scripted = queue.and_then(|q| q.next.pop_front().or_else(|| q.always.clone()));
        let answer = scripted.or_else(|| state.otherwise.clone());
        state.calls.push(call);
        answer
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A test that panicked while holding it left nothing half-written worth refusing.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The answers to one operation, in order: from [`Double::on`].
#[derive(Debug)]
pub struct Script<'a> {
    double: &'a Double,
    operation: Operation,
}

impl Script<'_> {
    /// Answers the next call of the operation with `answer` (after the answers scripted
    /// before it).
    pub fn then(self, answer: Answer) -> Self {
        let mut state = self.double.lock();
        let queue = state.scripts.entry(self.operation).or_default();
        queue.next.push_back(answer);
        drop(state);
        self
    }

    /// Answers every call of the operation with `answer`, once the answers given with
    /// [`then`](Self::then) are used.
    pub fn always(self, answer: Answer) {
        let mut state = self.double.lock();
        state.scripts.entry(self.operation).or_default().always = Some(answer);
    }
}
