//! Fault injection for DynamoDB Local (feature `local`).
//!
//! DynamoDB Local never throttles, never answers with a 500 and always processes a whole
//! batch, so code that must survive those failures cannot be tested against it directly.
//! [`client_with_faults`] builds an SDK client whose HTTP calls still go to DynamoDB Local
//! through the SDK's own HTTPS/HTTP client, but pass through a [`Faults`] plan on the way:
//! call by call, the plan decides (deterministically, from a seed) whether to inject one
//! of the [`FaultKind`]s real DynamoDB produces, and counts what it did in [`FaultStats`].
//!
//! Faults are injected below the SDK's retry layer: every attempt the SDK makes is one
//! HTTP call here, so with [`RetryConfig::disabled`] a test sees every fault, and with
//! [`RetryConfig::standard`] the SDK retries the retryable ones (throttling, 500s) as it
//! would against DynamoDB.
//!
//! ```no_run
//! use dynamo_model::aws_sdk_dynamodb::config::retry::RetryConfig;
//! use dynamo_model::local::{self, faults::{client_with_faults, FaultKind, Faults}};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! let endpoint = tokio::task::spawn_blocking(local::shared_endpoint).await??;
//! let faults = Faults::new(42)
//!     .rate(0.3)
//!     .kinds([FaultKind::Throttle, FaultKind::PartialBatch])
//!     .operations(["BatchWriteItem"]);
//! let client = client_with_faults(&endpoint, &faults, RetryConfig::disabled());
//! // ... drive the code under test with `client` ...
//! println!("{:?}", faults.stats());
//! # Ok(()) }
//! ```

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_smithy_http_client::tls::{self, rustls_provider::CryptoMode};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::connector_metadata::ConnectorMetadata;
use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient,
    SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::{
    RuntimeComponents, RuntimeComponentsBuilder,
};
use aws_smithy_runtime_api::http::StatusCode;
use aws_smithy_types::body::SdkBody;
use aws_smithy_types::byte_stream::ByteStream;
use aws_smithy_types::config_bag::ConfigBag;
use serde_json::{Map, Value, json};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// The JSON 1.0 protocol's error-type namespace DynamoDB uses in `__type`.
const ERROR_NAMESPACE: &str = "com.amazonaws.dynamodb.v20120810";

/// A shared, cloneable fault plan: decides for each HTTP call whether to inject a fault.
///
/// Clones share everything: the configuration, the on/off switch, the random sequence
/// and the counters. Configure it with the builder methods, hand it to
/// [`client_with_faults`] (one plan may serve several clients), then read
/// [`stats`](Faults::stats) from any clone.
///
/// For each HTTP call (each attempt of each SDK call) the plan:
/// 1. counts it in [`FaultStats::calls`];
/// 2. lets it through untouched when injection is off ([`set_enabled`](Faults::set_enabled))
///    or the call's operation is not selected ([`operations`](Faults::operations));
/// 3. otherwise keeps the configured [`kinds`](Faults::kinds) that apply to the call
///    ([`FaultKind::PartialBatch`] only to a BatchWriteItem / BatchGetItem of at least two
///    items, [`FaultKind::TransactionConflict`] only to a TransactWriteItems, every other
///    kind to any call), and when there is one, faults the call with probability
///    [`rate`](Faults::rate), picking one of those kinds uniformly;
/// 4. keeps a copy of it when [`record`](Faults::record) was asked for, with the fault
///    chosen (read them with [`calls`](Faults::calls)).
///
/// The choices come from a small PRNG seeded by `seed`, so a test that makes the same
/// calls in the same order sees the same faults.
///
/// ```
/// use dynamo_model::local::faults::{FaultKind, FaultStats, Faults};
///
/// let faults = Faults::new(7).rate(0.5).kinds([FaultKind::Throttle, FaultKind::ServerError]);
/// faults.set_enabled(false); // e.g. while seeding the table
/// assert_eq!(faults.stats(), FaultStats::default());
/// ```
#[derive(Clone)]
pub struct Faults {
    shared: Arc<Shared>,
}

struct Shared {
    enabled: AtomicBool,
    recording: AtomicBool,
    calls: Mutex<Vec<Call>>,
    plan: Mutex<Plan>,
    rng: Mutex<SplitMix64>,
    stats: Mutex<FaultStats>,
    next_request_id: AtomicU64,
}

#[derive(Debug, Clone)]
struct Plan {
    rate: f64,
    kinds: Vec<FaultKind>,
    /// `None`: every operation is eligible.
    operations: Option<Vec<&'static str>>,
}

impl Faults {
    /// No faults until configured. `seed` makes the choice of calls deterministic.
    ///
    /// A new plan is enabled, has a [`rate`](Faults::rate) of 1.0, no
    /// [`kinds`](Faults::kinds) (so it injects nothing yet) and selects every operation.
    ///
    /// ```
    /// use dynamo_model::local::faults::{FaultKind, Faults};
    ///
    /// let every_call_throttled = Faults::new(1).kinds([FaultKind::Throttle]);
    /// # drop(every_call_throttled);
    /// ```
    pub fn new(seed: u64) -> Self {
        Faults {
            shared: Arc::new(Shared {
                enabled: AtomicBool::new(true),
                recording: AtomicBool::new(false),
                calls: Mutex::new(Vec::new()),
                plan: Mutex::new(Plan {
                    rate: 1.0,
                    kinds: Vec::new(),
                    operations: None,
                }),
                rng: Mutex::new(SplitMix64(seed)),
                stats: Mutex::new(FaultStats::default()),
                next_request_id: AtomicU64::new(0),
            }),
        }
    }

    /// Fraction (0.0..=1.0) of eligible calls that get a fault.
    ///
    /// Values outside the range are clamped; NaN counts as 0.0. The default is 1.0.
    ///
    /// ```
    /// use dynamo_model::local::faults::{FaultKind, Faults};
    ///
    /// let about_one_in_ten = Faults::new(3).rate(0.1).kinds([FaultKind::ServerError]);
    /// # drop(about_one_in_ten);
    /// ```
    pub fn rate(self, rate: f64) -> Self {
        let rate = if rate.is_nan() {
            0.0
        } else {
            rate.clamp(0.0, 1.0)
        };
        lock(&self.shared.plan).rate = rate;
        self
    }

    /// The fault kinds to choose from (uniformly) when a call is faulted.
    ///
    /// Replaces any kinds set before. Listing a kind twice doubles its weight.
    ///
    /// ```
    /// use dynamo_model::local::faults::{FaultKind, Faults};
    /// use std::time::Duration;
    ///
    /// let faults = Faults::new(9).kinds([
    ///     FaultKind::Throttle,
    ///     FaultKind::ServerErrorAfterApply,
    ///     FaultKind::Delay(Duration::from_millis(50)),
    /// ]);
    /// # drop(faults);
    /// ```
    pub fn kinds(self, kinds: impl IntoIterator<Item = FaultKind>) -> Self {
        lock(&self.shared.plan).kinds = kinds.into_iter().collect();
        self
    }

    /// Only calls of these DynamoDB operations are eligible (by the `X-Amz-Target` header
    /// suffix, e.g. "BatchWriteItem"); default: all.
    ///
    /// Replaces any selection made before; an empty list makes no call eligible.
    ///
    /// ```
    /// use dynamo_model::local::faults::{FaultKind, Faults};
    ///
    /// let faults = Faults::new(5)
    ///     .kinds([FaultKind::Throttle])
    ///     .operations(["BatchWriteItem", "BatchGetItem"]);
    /// # drop(faults);
    /// ```
    pub fn operations(self, ops: impl IntoIterator<Item = &'static str>) -> Self {
        lock(&self.shared.plan).operations = Some(ops.into_iter().collect());
        self
    }

    /// Turn injection on/off at run time (e.g. off while seeding, on while testing).
    ///
    /// Calls made while it is off are still counted in [`FaultStats::calls`], and do not
    /// advance the random sequence.
    ///
    /// ```
    /// use dynamo_model::local::faults::{FaultKind, Faults};
    ///
    /// let faults = Faults::new(0).kinds([FaultKind::Throttle]);
    /// faults.set_enabled(false);
    /// // ... seed the table through a client built with `faults` ...
    /// faults.set_enabled(true);
    /// ```
    pub fn set_enabled(&self, enabled: bool) {
        self.shared.enabled.store(enabled, Ordering::SeqCst);
    }

    /// Counters of what happened so far.
    ///
    /// ```
    /// use dynamo_model::local::faults::Faults;
    ///
    /// let faults = Faults::new(0);
    /// assert_eq!(faults.stats().calls, 0);
    /// ```
    pub fn stats(&self) -> FaultStats {
        lock(&self.shared.stats).clone()
    }

    /// Keeps a copy of every call from now on (see [`calls`](Faults::calls)), faulted or
    /// not, whether injection is on or off: for tests that check what the code under test
    /// sent, and when.
    ///
    /// ```
    /// use dynamo_model::local::faults::Faults;
    ///
    /// let watched = Faults::new(0).record(); // no kinds: observes, injects nothing
    /// assert!(watched.calls().is_empty());
    /// ```
    pub fn record(self) -> Self {
        self.shared.recording.store(true, Ordering::SeqCst);
        self
    }

    /// The calls recorded so far (see [`record`](Faults::record)), in the order they were
    /// made.
    ///
    /// ```
    /// use dynamo_model::local::faults::Faults;
    ///
    /// let faults = Faults::new(0);
    /// assert!(faults.calls().is_empty(), "nothing is recorded unless asked");
    /// ```
    pub fn calls(&self) -> Vec<Call> {
        lock(&self.shared.calls).clone()
    }

    /// Decides what to do with one HTTP call, before it is sent, and records the call
    /// when recording is on.
    fn decide(&self, request: &HttpRequest) -> Action {
        let (action, fault) = self.choose(request);
        if self.shared.recording.load(Ordering::SeqCst) {
            let call = Call {
                operation: operation(request).to_owned(),
                body: request
                    .body()
                    .bytes()
                    .map(|bytes| String::from_utf8_lossy(bytes).into_owned())
                    .unwrap_or_default(),
                at: std::time::Instant::now(),
                fault,
            };
            lock(&self.shared.calls).push(call);
        }
        action
    }

    /// The action for one call, and the fault it injects (if any).
    fn choose(&self, request: &HttpRequest) -> (Action, Option<FaultKind>) {
        lock(&self.shared.stats).calls += 1;
        if !self.shared.enabled.load(Ordering::SeqCst) {
            return (Action::Forward, None);
        }
        let op = operation(request);
        let plan = lock(&self.shared.plan).clone();
        if let Some(ops) = &plan.operations
            && !ops.contains(&op)
        {
            return (Action::Forward, None);
        }
        if plan.kinds.is_empty() || plan.rate <= 0.0 {
            return (Action::Forward, None);
        }

        // Only the batch and transaction faults need the request body.
        let batch = BatchOp::of(op);
        let wants_body = plan.kinds.iter().any(|kind| match kind {
            FaultKind::PartialBatch => batch.is_some(),
            FaultKind::TransactionConflict => op == "TransactWriteItems",
            _ => false,
        });
        let body: Option<Value> = if wants_body {
            request
                .body()
                .bytes()
                .and_then(|bytes| serde_json::from_slice(bytes).ok())
        } else {
            None
        };
        let batch_items = match (batch, &body) {
            (Some(batch), Some(body)) => batch.count(body),
            _ => 0,
        };
        let transact_items = match &body {
            Some(body) if op == "TransactWriteItems" => transact_len(body),
            _ => 0,
        };
        let applicable: Vec<FaultKind> = plan
            .kinds
            .iter()
            .copied()
            .filter(|kind| match kind {
                FaultKind::PartialBatch => batch_items >= 2,
                FaultKind::TransactionConflict => transact_items >= 1,
                _ => true,
            })
            .collect();
        if applicable.is_empty() {
            return (Action::Forward, None);
        }

        let mut rng = lock(&self.shared.rng);
        if rng.next_f64() >= plan.rate {
            return (Action::Forward, None);
        }
        let Some(kind) = applicable.get(rng.below(applicable.len())).copied() else {
            return (Action::Forward, None);
        };
        let action = match kind {
            FaultKind::Throttle => Action::Respond {
                status: 400,
                body: error_body(
                    "ProvisionedThroughputExceededException",
                    "The level of configured provisioned throughput for the table was exceeded. \
                     Consider increasing your provisioning level with the UpdateTable API.",
                ),
            },
            FaultKind::ServerError => Action::Respond {
                status: 500,
                body: internal_error_body(),
            },
            FaultKind::ServerErrorAfterApply => Action::ReplaceWithServerError,
            FaultKind::Delay(delay) => Action::Delay(delay),
            FaultKind::PartialBatch => {
                let (Some(batch), Some(body)) = (batch, body) else {
                    return (Action::Forward, None);
                };
                match batch.split(body, &mut rng) {
                    Some((body, unprocessed)) => Action::PartialBatch {
                        batch,
                        body,
                        unprocessed,
                    },
                    None => return (Action::Forward, None),
                }
            }
            FaultKind::TransactionConflict => Action::Respond {
                status: 400,
                body: conflict_body(transact_items, rng.below(transact_items)),
            },
            FaultKind::Reject => Action::Respond {
                status: 400,
                body: error_body(
                    "ValidationException",
                    "One or more parameter values were invalid (injected)",
                ),
            },
        };
        drop(rng);

        let mut stats = lock(&self.shared.stats);
        match kind {
            FaultKind::Throttle => stats.throttled += 1,
            FaultKind::ServerError => stats.server_errors += 1,
            FaultKind::ServerErrorAfterApply => stats.server_errors_after_apply += 1,
            FaultKind::Delay(_) => stats.delayed += 1,
            FaultKind::PartialBatch => stats.partial_batches += 1,
            FaultKind::TransactionConflict => stats.transaction_conflicts += 1,
            FaultKind::Reject => stats.rejected += 1,
        }
        (action, Some(kind))
    }

    /// A canned DynamoDB-style JSON 1.0 response.
    fn respond(&self, status: u16, body: String) -> Result<HttpResponse, ConnectorError> {
        let status = StatusCode::try_from(status)
            .map_err(|err| ConnectorError::other(Box::new(err), None))?;
        let id = self.shared.next_request_id.fetch_add(1, Ordering::Relaxed);
        let len = body.len();
        let mut response = HttpResponse::new(status, SdkBody::from(body));
        let headers = response.headers_mut();
        // Constant, valid header names and values: these cannot fail.
        let _ = headers.try_insert("content-type", "application/x-amz-json-1.0");
        let _ = headers.try_insert("content-length", len.to_string());
        let _ = headers.try_insert("x-amzn-requestid", format!("FAULTINJECTED{id:040}"));
        Ok(response)
    }
}

impl fmt::Debug for Faults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plan = lock(&self.shared.plan).clone();
        f.debug_struct("Faults")
            .field("enabled", &self.shared.enabled.load(Ordering::SeqCst))
            .field("rate", &plan.rate)
            .field("kinds", &plan.kinds)
            .field("operations", &plan.operations)
            .field("stats", &self.stats())
            .finish()
    }
}

/// A failure [`Faults`] can inject into one HTTP call.
///
/// ```
/// use dynamo_model::local::faults::FaultKind;
/// use std::time::Duration;
///
/// let kinds = [FaultKind::Throttle, FaultKind::Delay(Duration::from_millis(300))];
/// assert_ne!(kinds[0], kinds[1]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum FaultKind {
    /// HTTP 400 `ProvisionedThroughputExceededException`, returned WITHOUT forwarding the
    /// request (nothing applied). The SDK's retry classifier treats it as throttling
    /// (retryable).
    Throttle,
    /// HTTP 500 `InternalServerError`, returned without forwarding (nothing applied).
    /// Retryable for the SDK (a transient 500).
    ServerError,
    /// The request IS forwarded and applied by DynamoDB Local, then its response is replaced
    /// by an HTTP 500: the ambiguous write every retry loop must survive.
    ServerErrorAfterApply,
    /// The request is forwarded; the response is delayed by this long before being
    /// returned.
    Delay(Duration),
    /// BatchWriteItem / BatchGetItem only (other operations pass through untouched): a
    /// random non-empty proper subset of the request's WriteRequests / Keys is removed from
    /// the request before forwarding, and returned in the response's `UnprocessedItems` /
    /// `UnprocessedKeys` (merged with any the real response already had), exactly as
    /// DynamoDB does when it processes only part of a batch (HTTP 200).
    ///
    /// A batch of a single item cannot be split, so it is not eligible. If DynamoDB Local
    /// rejects the reduced request, its error response is returned unchanged.
    PartialBatch,
    /// TransactWriteItems only: returned without forwarding, HTTP 400
    /// `TransactionCanceledException` with one `CancellationReasons` entry per TransactItems
    /// element, code `TransactionConflict` for one randomly chosen element and `None` for
    /// the others, message "Transaction cancelled, please refer cancellation reasons for
    /// specific reasons [None, TransactionConflict]" in the same style DynamoDB uses.
    TransactionConflict,
    /// HTTP 400 `ValidationException`, returned without forwarding (nothing applied): a
    /// refusal no retry can overcome, to test that callers report it rather than drop the
    /// work it concerned.
    Reject,
}

/// Counters of a [`Faults`] plan: HTTP calls seen and faults injected, by kind.
///
/// A fault is counted when the plan chooses it for a call, before the call completes.
///
/// ```
/// use dynamo_model::local::faults::FaultStats;
///
/// let stats = FaultStats { calls: 3, throttled: 1, ..FaultStats::default() };
/// assert_eq!(stats.server_errors, 0);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultStats {
    /// HTTP calls that went through the plan (every SDK attempt is one), faulted or not,
    /// including those made while injection was off.
    pub calls: u64,
    /// [`FaultKind::Throttle`] faults injected.
    pub throttled: u64,
    /// [`FaultKind::ServerError`] faults injected.
    pub server_errors: u64,
    /// [`FaultKind::ServerErrorAfterApply`] faults injected.
    pub server_errors_after_apply: u64,
    /// [`FaultKind::Reject`] faults injected.
    pub rejected: u64,
    /// [`FaultKind::Delay`] faults injected.
    pub delayed: u64,
    /// [`FaultKind::PartialBatch`] faults injected.
    pub partial_batches: u64,
    /// [`FaultKind::TransactionConflict`] faults injected.
    pub transaction_conflicts: u64,
}

/// One HTTP call as a recording [`Faults`] plan saw it (see [`Faults::record`]).
///
/// ```
/// use dynamo_model::local::faults::Call;
///
/// fn scans(calls: &[Call]) -> usize {
///     calls.iter().filter(|c| c.operation == "Scan").count()
/// }
/// # assert_eq!(scans(&[]), 0);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Call {
    /// The DynamoDB operation (the `X-Amz-Target` suffix, e.g. `Scan`).
    pub operation: String,
    /// The request body (JSON) as the SDK sent it, before any fault changed it.
    pub body: String,
    /// When the call reached the connector.
    pub at: std::time::Instant,
    /// The fault injected into the call, if any.
    pub fault: Option<FaultKind>,
}

/// An SDK client for `endpoint` (same dummy credentials/region as
/// [`client_for`](super::client_for)) whose HTTP calls pass through `faults`.
///
/// `retries`: the SDK's own retry config to use (e.g.
/// [`RetryConfig::disabled()`] to see every fault, or [`RetryConfig::standard()`]).
///
/// The real transport is the SDK's hyper-based client with rustls (aws-lc), the same
/// stack the SDK uses by default, without a proxy; it speaks plain HTTP to DynamoDB
/// Local as well as HTTPS.
///
/// ```no_run
/// use dynamo_model::aws_sdk_dynamodb::config::retry::RetryConfig;
/// use dynamo_model::local::{self, faults::{client_with_faults, FaultKind, Faults}};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// let endpoint = tokio::task::spawn_blocking(local::shared_endpoint).await??;
/// let faults = Faults::new(1).kinds([FaultKind::Throttle]);
/// let client = client_with_faults(&endpoint, &faults, RetryConfig::disabled());
/// let err = client.list_tables().send().await.unwrap_err();
/// assert_eq!(faults.stats().throttled, 1);
/// # drop(err); Ok(()) }
/// ```
pub fn client_with_faults(endpoint: &str, faults: &Faults, retries: RetryConfig) -> Client {
    let transport = aws_smithy_http_client::Builder::new()
        .tls_provider(tls::Provider::Rustls(CryptoMode::AwsLc))
        .build_https();
    let config = super::config_for(endpoint)
        .retry_config(retries)
        .http_client(FaultClient {
            inner: transport,
            faults: faults.clone(),
        })
        .build();
    Client::from_conf(config)
}

mod connector;
use connector::*;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while holding these locks; a poisoned one is still consistent.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// splitmix64: tiny, fast, good enough to pick calls and subsets.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

#[cfg(test)]
mod tests;
