//! The cause of an [`Error::Service`](super::Error::Service) in words, found in the
//! SDK's error: DynamoDB's error code, or what stopped the request before DynamoDB
//! answered (a timeout, a refused connection, no credentials, no endpoint). The SDK's
//! own message for the latter is "unhandled error"; the cause is deeper in its chain.

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_smithy_runtime_api::client::endpoint::error::ResolveEndpointError;
use aws_smithy_runtime_api::client::result::ConnectorError;
use std::error::Error as StdError;

/// What stopped a request, in words.
pub(super) fn describe(error: &aws_sdk_dynamodb::Error) -> String {
    if let Some(code) = code(error) {
        return format!("DynamoDB answered {code}");
    }
    let mut phase = None;
    let mut cause = StdError::source(error);
    while let Some(e) = cause {
        if let Some(words) = known(e) {
            return words.to_owned();
        }
        phase = phase.or_else(|| phase_of(&e.to_string()));
        cause = e.source();
    }
    phase
        .unwrap_or("the SDK failed before DynamoDB answered")
        .to_owned()
}

/// DynamoDB's error code: the one the response carried, else the name of the modeled
/// error (an error built in a test double has no response); `None` when the request got
/// no answer DynamoDB gave.
pub(super) fn code(error: &aws_sdk_dynamodb::Error) -> Option<String> {
    if let Some(code) = error.code() {
        return Some(code.to_owned());
    }
    // The modeled error's variant, named after its code (the SDK deprecates matching
    // on the variant of an unmodeled error).
    let name = format!("{error:?}");
    let name = &name[..name.find(['(', ' ', '{']).unwrap_or(name.len())];
    (name != "Unhandled").then(|| name.to_owned())
}

/// The words for an error of a kind that names the cause.
fn known(e: &(dyn StdError + 'static)) -> Option<&'static str> {
    if let Some(io) = e.downcast_ref::<std::io::Error>() {
        return Some(io_words(io.kind()));
    }
    if let Some(connector) = e.downcast_ref::<ConnectorError>() {
        if connector.is_timeout() {
            return Some("the connection timed out");
        }
        // An I/O failure of the connection with no `io::Error` below it: a connection
        // dropped mid-request (the request may have been received).
        if connector.is_io() && !chain_has_io(e) {
            return Some("the connection failed before an answer was received");
        }
    }
    if e.downcast_ref::<aws_credential_types::provider::error::CredentialsError>()
        .is_some()
    {
        return Some("no credentials could be loaded (see the AWS SDK's credential providers)");
    }
    if e.downcast_ref::<ResolveEndpointError>().is_some()
        || e.downcast_ref::<aws_smithy_http::endpoint::ResolveEndpointError>()
            .is_some()
    {
        return Some("no endpoint could be resolved (is a region or an endpoint URL set?)");
    }
    // The SDK's own (private) error when no credentials provider is configured at all.
    if e.to_string()
        .contains("there was no identity resolver for it")
    {
        return Some("no credentials provider is configured");
    }
    None
}

fn chain_has_io(e: &(dyn StdError + 'static)) -> bool {
    let mut cause = e.source();
    while let Some(c) = cause {
        if c.downcast_ref::<std::io::Error>().is_some() {
            return true;
        }
        cause = c.source();
    }
    false
}

fn io_words(kind: std::io::ErrorKind) -> &'static str {
    use std::io::ErrorKind::*;
    match kind {
        ConnectionRefused => "the connection was refused: nothing listens at the endpoint",
        ConnectionReset | ConnectionAborted | BrokenPipe => "the connection was closed",
        TimedOut => "the connection timed out",
        NotFound | AddrNotAvailable => "the endpoint's address could not be reached",
        _ => "the connection failed",
    }
}

/// The SDK's own words for the stage a request failed at (`SdkError`'s `Display`).
fn phase_of(text: &str) -> Option<&'static str> {
    Some(match text {
        "request has timed out" => "the request timed out (the SDK's operation timeout)",
        "dispatch failure" => "no answer was received (the request may not have been sent)",
        "response error" => "DynamoDB's response could not be read",
        "service error" => "DynamoDB answered with an error that names no code",
        "failed to construct request" => "the request could not be built",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_dynamodb::operation::get_item::GetItemError;
    use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
    use aws_smithy_runtime_api::client::result::SdkError;

    fn unhandled(e: SdkError<GetItemError, HttpResponse>) -> aws_sdk_dynamodb::Error {
        e.into()
    }

    #[test]
    fn service_errors_name_the_cause_not_unhandled_error() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let e = unhandled(SdkError::dispatch_failure(ConnectorError::io(
            refused.into(),
        )));
        assert_eq!(e.to_string(), "unhandled error", "the SDK's own words");
        assert!(describe(&e).contains("refused"), "{}", describe(&e));

        let timeout = unhandled(SdkError::timeout_error("deadline"));
        assert!(
            describe(&timeout).contains("timed out"),
            "{}",
            describe(&timeout)
        );

        let endpoint = aws_smithy_http::endpoint::ResolveEndpointError::message(
            "Invalid Configuration: Missing Region",
        );
        let e = unhandled(SdkError::dispatch_failure(ConnectorError::other(
            endpoint.into(),
            None,
        )));
        assert!(describe(&e).contains("region"), "{}", describe(&e));

        let missing = aws_credential_types::provider::error::CredentialsError::not_loaded("none");
        let e = unhandled(SdkError::dispatch_failure(ConnectorError::other(
            missing.into(),
            None,
        )));
        assert!(describe(&e).contains("credentials"), "{}", describe(&e));

        let e = unhandled(SdkError::construction_failure("bad"));
        assert_eq!(describe(&e), "the request could not be built");
    }
}
