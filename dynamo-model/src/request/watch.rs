//! What the send path adds to each request it sends: one interceptor ([`Watch`]) that puts
//! the record of the call in the config bag for the `Db`'s observers and notes whether an
//! attempt ended without a definite answer, and the retry classifier of a write whose
//! retry could not be recognised ([`NoAmbiguousRetry`]).

use crate::call::{Call, Recorded};
use aws_sdk_dynamodb::config::interceptors::{
    BeforeSerializationInterceptorContextRef, FinalizerInterceptorContextMut, InterceptorContext,
};
use aws_sdk_dynamodb::config::retry::{ClassifyRetry, RetryAction};
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::error::BoxError;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The interceptor of one request: attaches its [`Call`] (when the client has an observer
/// to read it) and records whether any attempt of the request ended without a definite
/// answer, so that DynamoDB may or may not have applied it.
///
/// Ambiguous: an HTTP 5xx response (DynamoDB: "a 500 on a write may have been applied"),
/// a timeout, a connection or I/O error, or a response that could not be read. Not
/// ambiguous: a 4xx response (throttling, a failed condition, a validation error: the
/// write was not applied) and a success. A connection error before the request left the
/// machine also counts as ambiguous: the connector does not always say when it failed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Watch {
    call: Option<Arc<Call>>,
    ambiguous: Arc<AtomicBool>,
}

impl Watch {
    /// A watch attaching `call` (`None`: nothing reads it).
    pub(crate) fn new(call: Option<Call>) -> Watch {
        Watch {
            call: call.map(Arc::new),
            ambiguous: Arc::default(),
        }
    }

    /// Whether an attempt of the request ended ambiguously.
    pub(crate) fn ambiguous(&self) -> bool {
        self.ambiguous.load(Ordering::SeqCst)
    }
}

impl Intercept for Watch {
    fn name(&self) -> &'static str {
        "dynamo_model::request::Watch"
    }

    fn read_before_execution(
        &self,
        _context: &BeforeSerializationInterceptorContextRef<'_>,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if let Some(call) = &self.call {
            cfg.interceptor_state().store_put(Recorded(call.clone()));
        }
        Ok(())
    }

    fn modify_before_attempt_completion(
        &self,
        context: &mut FinalizerInterceptorContextMut<'_>,
        _runtime_components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if may_have_been_applied(context.inner()) {
            self.ambiguous.store(true, Ordering::SeqCst);
        }
        Ok(())
    }
}

/// Whether the attempt in `context` ended without a definite answer (see [`Watch`]): an
/// HTTP 5xx, a timeout, an unreadable response, or a connection error the caller did not
/// cause.
fn may_have_been_applied(context: &InterceptorContext) -> bool {
    let server_error = context
        .response()
        .is_some_and(|response| response.status().is_server_error());
    let transport = match context.output_or_error() {
        Some(Err(e)) => {
            e.is_timeout_error()
                || e.is_response_error()
                || e.as_connector_error().is_some_and(|c| !c.is_user())
        }
        _ => false,
    };
    server_error || transport
}

/// A retry classifier that forbids the SDK to retry an attempt that may have been
/// applied (a 5xx, a timeout, a lost connection; the cases [`Watch`] records): for a
/// write that stores no write token, whose retry could apply it twice (an `add`) or fail
/// its condition against its own write, with nothing to tell. Errors that say the write
/// was not applied (throttling) are left to the SDK's other classifiers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NoAmbiguousRetry;

impl ClassifyRetry for NoAmbiguousRetry {
    fn classify_retry(&self, ctx: &InterceptorContext) -> RetryAction {
        if may_have_been_applied(ctx) {
            RetryAction::RetryForbidden
        } else {
            RetryAction::NoActionIndicated
        }
    }

    fn name(&self) -> &'static str {
        "dynamo_model::NoAmbiguousRetry"
    }
}
