//! The crate's own retry loop, for what the SDK cannot see: unprocessed batch items
//! (returned with HTTP 200), and retryable errors that outlasted the SDK's attempts.

use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use std::time::Duration;
use tokio::time::Instant;

/// How the crate retries batch work: exponential backoff with full jitter (AWS's
/// recommendation for concurrent clients), until the work is done or the deadline passes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// First backoff ceiling.
    pub base: Duration,
    /// Largest backoff ceiling.
    pub cap: Duration,
    /// Give up (and report what is left) after this long.
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
    /// The sleep before retry number `attempt` (1-based): uniform in `[0, min(cap, base·2^(attempt-1))]`.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let exp = self
            .base
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(20));
        let ceiling = exp.min(self.cap);
        ceiling.mul_f64(fastrand::f64())
    }
}

/// A deadline for one batch call.
/// `None`: no deadline (too far away to represent).
pub(crate) struct Deadline(Option<Instant>);

impl Deadline {
    pub(crate) fn after(d: Duration) -> Self {
        Deadline(Instant::now().checked_add(d))
    }

    /// Sleeps the backoff for `attempt` unless that would pass the deadline; `false` means
    /// give up.
    pub(crate) async fn backoff(&self, policy: &RetryPolicy, attempt: u32) -> bool {
        let wait = policy.backoff(attempt);
        if let (Some(deadline), Some(wake)) = (self.0, Instant::now().checked_add(wait)) {
            if wake >= deadline {
                return false;
            }
        }
        tokio::time::sleep(wait).await;
        true
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
}
