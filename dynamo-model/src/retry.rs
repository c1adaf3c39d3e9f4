//! The crate's own retry loop, for what the SDK cannot see: unprocessed batch items
//! (returned with HTTP 200), and retryable errors that outlasted the SDK's attempts.

use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use std::time::Duration;
use tokio::time::Instant;

/// How the crate retries batch work: exponential backoff with full jitter (AWS's
/// recommendation for concurrent clients), until the work is done or the deadline passes.
///
/// ```
/// use dynamo_model::RetryPolicy;
/// use std::time::Duration;
///
/// let policy = RetryPolicy::default().deadline(Duration::from_secs(5));
/// assert_eq!(policy.deadline, Duration::from_secs(5));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// First backoff ceiling.
    pub base: Duration,
    /// Largest backoff ceiling.
    pub cap: Duration,
    /// Give up (and report what is left) after this long. It bounds the whole call: the
    /// backoff sleeps, and a request still in flight when it passes, which is cut off (its
    /// work is then reported as not confirmed; see the call's output).
    pub deadline: Duration,
}

impl Default for RetryPolicy {
    /// 50 ms doubling up to 5 s, for at most 60 s (AWS: a request still failing after about a
    /// minute is too large for the throughput, not too frequent).
    fn default() -> Self {
        RetryPolicy {
            base: Duration::from_millis(50),
            cap: Duration::from_secs(5),
            deadline: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// With `base` as the first backoff ceiling.
    pub fn base(mut self, base: Duration) -> Self {
        self.base = base;
        self
    }

    /// With `cap` as the largest backoff ceiling.
    pub fn cap(mut self, cap: Duration) -> Self {
        self.cap = cap;
        self
    }

    /// With `deadline` bounding the whole call.
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// The sleep before retry number `attempt` (1-based): uniform in `[0, min(cap, base·2^(attempt-1))]`.
    ///
    /// Never panics, whatever the durations: the exponent saturates, and the jitter is drawn
    /// in whole nanoseconds (a float product of `Duration::MAX` could round above it).
    pub fn backoff(&self, attempt: u32) -> Duration {
        let exp = self
            .base
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(20));
        let ceiling = exp.min(self.cap);
        let nanos = fastrand::u128(..=ceiling.as_nanos());
        // `nanos <= ceiling.as_nanos()`, so its whole seconds fit in a u64.
        let secs = u64::try_from(nanos / NANOS_PER_SEC).unwrap_or(u64::MAX);
        Duration::new(secs, (nanos % NANOS_PER_SEC) as u32)
    }
}

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// tokio's timers fire on whole milliseconds: a sleep can last up to this much longer than
/// it was asked to.
const TIMER_RESOLUTION: Duration = Duration::from_millis(1);

/// Whether a sleep of `wait` ends before `left` has passed, however the timer rounds it.
fn sleep_ends_before(wait: Duration, left: Duration) -> bool {
    wait.saturating_add(TIMER_RESOLUTION) < left
}

/// A deadline for one batch call or transaction.
/// `None`: no deadline (too far away to represent).
pub(crate) struct Deadline(Option<Instant>);

/// A request cut off by its deadline while in flight: it may have been applied.
#[derive(Debug)]
pub(crate) struct CutOff;

impl Deadline {
    pub(crate) fn after(d: Duration) -> Self {
        Deadline(Instant::now().checked_add(d))
    }

    /// No deadline: a request bounded by the SDK's own timeouts only.
    pub(crate) fn unbounded() -> Self {
        Deadline(None)
    }

    /// Whether the deadline has passed.
    pub(crate) fn passed(&self) -> bool {
        self.remaining().is_some_and(|left| left.is_zero())
    }

    /// Time left before the deadline (`None`: unbounded).
    fn remaining(&self) -> Option<Duration> {
        self.0
            .map(|deadline| deadline.saturating_duration_since(Instant::now()))
    }

    /// Sleeps the backoff for `attempt` unless that would reach the deadline; `false` means
    /// give up (nothing slept).
    pub(crate) async fn backoff(&self, policy: &RetryPolicy, attempt: u32) -> bool {
        let wait = policy.backoff(attempt);
        // Compared as durations: `now + wait` may not be representable (a `Duration::MAX`
        // backoff), and that must not skip the check.
        if self
            .remaining()
            .is_some_and(|left| !sleep_ends_before(wait, left))
        {
            return false;
        }
        tokio::time::sleep(wait).await;
        true
    }

    /// Runs one request, cut off when the deadline passes. The retry loop's own sleeps stop
    /// at the deadline, and so must a request in flight: a stalled connection or the SDK's
    /// own retries (throttling backs off up to 20 s) would otherwise hold the call long
    /// past it.
    ///
    /// `Err(CutOff)` means the request may have reached DynamoDB and been applied: callers
    /// report its work as not confirmed (unprocessed), never as done or dropped.
    pub(crate) async fn run<F: std::future::Future>(
        &self,
        request: F,
    ) -> Result<F::Output, CutOff> {
        match self.0 {
            Some(deadline) => tokio::time::timeout_at(deadline, request)
                .await
                .map_err(|_| CutOff),
            None => Ok(request.await),
        }
    }
}

/// Error codes worth retrying once more after the SDK's own attempts (throttling, a
/// transient server error, an in-flight transaction with the same token).
const RETRYABLE_CODES: &[&str] = &[
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "InternalServerError",
    "ServiceUnavailable",
    "TransactionInProgressException",
    "LimitExceededException",
];

/// Whether a failed request may nevertheless have been applied: anything but a 4xx
/// answer (which DynamoDB gives before applying), except `TransactionInProgressException`,
/// which says an earlier attempt with the same token is still being applied.
pub(crate) fn may_have_applied<E: ProvideErrorMetadata>(
    err: &SdkError<E, aws_sdk_dynamodb::config::http::HttpResponse>,
) -> bool {
    match err {
        SdkError::ServiceError(service) => {
            service.err().code() == Some("TransactionInProgressException")
                || !(400..500).contains(&service.raw().status().as_u16())
        }
        _ => true,
    }
}

/// Whether an SDK error is transient: the same request may succeed later.
pub(crate) fn is_retryable<E: ProvideErrorMetadata, R>(err: &SdkError<E, R>) -> bool
where
    R: std::fmt::Debug,
{
    match err {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            true
        }
        SdkError::ServiceError(service) => {
            let code = service.err().code();
            code.is_some_and(|c| RETRYABLE_CODES.contains(&c))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn backoff_is_full_jitter_under_an_exponential_cap() {
        let p = RetryPolicy::default();
        for attempt in 1..30 {
            let ceiling = (p.base * 2u32.pow((attempt - 1).min(20))).min(p.cap);
            for _ in 0..50 {
                assert!(p.backoff(attempt) <= ceiling);
            }
        }
        // Jitter: not always the ceiling.
        let samples: Vec<Duration> = (0..50).map(|_| p.backoff(10)).collect();
        assert!(samples.iter().any(|d| *d < p.cap / 2));
    }

    #[tokio::test(start_paused = true)]
    async fn a_huge_backoff_gives_up_at_the_deadline_instead_of_sleeping() {
        let policy = RetryPolicy {
            base: Duration::MAX,
            cap: Duration::MAX,
            deadline: Duration::from_millis(300),
        };
        let started = Instant::now();
        let deadline = Deadline::after(policy.deadline);
        for attempt in [1, 2, 3, 21, 64, u32::MAX] {
            assert!(
                !deadline.backoff(&policy, attempt).await,
                "attempt {attempt}: a backoff of up to Duration::MAX cannot fit in 300 ms"
            );
        }
        assert_eq!(started.elapsed(), Duration::ZERO, "nothing was slept");
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_in_flight_is_cut_off_at_the_deadline() {
        let started = Instant::now();
        let deadline = Deadline::after(Duration::from_millis(500));
        let slow = deadline
            .run(tokio::time::sleep(Duration::from_secs(8)))
            .await;
        assert!(slow.is_err(), "an 8 s request must be cut off");
        assert_eq!(started.elapsed(), Duration::from_millis(500));
        // Past the deadline, a request that is not done at once is not waited for.
        assert!(deadline.run(std::future::pending::<()>()).await.is_err());
        assert_eq!(started.elapsed(), Duration::from_millis(500));

        let fresh = Deadline::after(Duration::from_secs(1));
        let quick = fresh.run(async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            7
        });
        assert_eq!(quick.await.ok(), Some(7));
        // No deadline at all (too far away to represent): nothing is cut off.
        let unbounded = Deadline::after(Duration::MAX);
        let long = unbounded.run(tokio::time::sleep(Duration::from_secs(3600)));
        assert!(long.await.is_ok());
    }

    /// A backoff less than a millisecond short of the deadline is not slept: the timer
    /// rounds the sleep up to the next millisecond, which would reach the deadline (found
    /// by `a_backoff_never_sleeps_past_the_deadline`: 163 ms slept of a 163 ms deadline).
    #[test]
    fn a_backoff_within_the_timer_resolution_of_the_deadline_is_not_slept() {
        let left = Duration::from_millis(163);
        assert!(!sleep_ends_before(Duration::from_micros(162_500), left));
        assert!(!sleep_ends_before(Duration::from_millis(162), left));
        assert!(sleep_ends_before(Duration::from_micros(161_999), left));
        assert!(!sleep_ends_before(Duration::MAX, left));
        assert!(!sleep_ends_before(Duration::ZERO, Duration::ZERO));
    }

    /// Durations from zero to `Duration::MAX`, with the edges and small values favoured.
    fn duration() -> impl Strategy<Value = Duration> {
        prop_oneof![
            Just(Duration::ZERO),
            Just(Duration::MAX),
            (0u64..2_000).prop_map(Duration::from_millis),
            any::<u64>().prop_map(Duration::from_nanos),
            (any::<u64>(), 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
        ]
    }

    proptest! {
        #[test]
        fn backoff_never_panics_and_stays_under_its_ceiling(
            base in duration(),
            cap in duration(),
            attempt in any::<u32>(),
        ) {
            let policy = RetryPolicy { base, cap, deadline: Duration::ZERO };
            let ceiling = base
                .saturating_mul(1u32 << attempt.saturating_sub(1).min(20))
                .min(cap);
            prop_assert!(policy.backoff(attempt) <= ceiling);
        }

        #[test]
        fn a_backoff_never_sleeps_past_the_deadline(
            base in duration(),
            cap in duration(),
            deadline in duration(),
            attempt in any::<u32>(),
        ) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let policy = RetryPolicy { base, cap, deadline };
            let (slept, elapsed) = runtime.block_on(async {
                let started = Instant::now();
                let slept = Deadline::after(deadline).backoff(&policy, attempt).await;
                (slept, started.elapsed())
            });
            if slept {
                prop_assert!(elapsed < deadline, "slept {elapsed:?} of a {deadline:?} deadline");
            } else {
                prop_assert_eq!(elapsed, Duration::ZERO, "gave up after sleeping");
            }
        }
    }
}
