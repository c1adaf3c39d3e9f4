//! The HTTP client the SDK is handed: it sends nothing, and answers each request with the
//! double's scripted answer in DynamoDB's wire format.

use super::{Call, Double};
use aws_smithy_runtime_api::client::http::{
    HttpConnector, HttpConnectorFuture, SharedHttpClient, SharedHttpConnector, http_client_fn,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::http::StatusCode;
use aws_smithy_types::body::SdkBody;

/// The SDK's HTTP client: every connection is the double.
pub(super) fn client(double: Double) -> SharedHttpClient {
    http_client_fn(move |_settings, _components| {
        SharedHttpConnector::new(Connector(double.clone()))
    })
}

#[derive(Debug)]
struct Connector(Double);

impl HttpConnector for Connector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        HttpConnectorFuture::ready(self.0.respond(&request))
    }
}

impl Double {
    /// The response to one attempt: its scripted answer, rendered for its request.
    ///
    /// Panics when nothing answers the call: a test must see every call it did not
    /// script. The panic unwinds through the SDK's future into the test.
    fn respond(&self, request: &HttpRequest) -> Result<HttpResponse, ConnectorError> {
        // `DynamoDB_20120810.PutItem` → `PutItem`.
        let target = request.headers().get("x-amz-target").unwrap_or_default();
        let name = target.rsplit('.').next().unwrap_or_default();
        let body = request.body().bytes().unwrap_or_default();
        let call = Call::new(name, request.extension::<crate::call::Sent>(), body);
        let Some(answer) = self.answer_for(call.clone()) else {
            panic!("{}", unscripted(&call));
        };
        let (status, body) = answer.render(call.operation(), &call.json());
        respond(status, body)
    }
}

/// The panic message of a call nothing answers.
fn unscripted(call: &Call) -> String {
    let op = call.operation_name();
    let mut about = format!("{op} (attempt {})", call.attempt());
    if let Some(table) = call.table() {
        about += &format!(" on table `{table}`");
    }
    if let Some(entity) = call.entity() {
        about += &format!(", entity {entity}");
    }
    match call.keys().as_slice() {
        [] => {}
        [key] => about += &format!(", key {key:?}"),
        keys => about += &format!(", {} keys", keys.len()),
    }
    format!(
        "dynamo_model::double: no answer scripted for {about}; script it with \
         `double.on(Operation::{op}).then(..)`, or answer every unscripted call with \
         `double.otherwise(..)`"
    )
}

/// An HTTP response as DynamoDB sends it.
fn respond(status: u16, body: String) -> Result<HttpResponse, ConnectorError> {
    let status =
        StatusCode::try_from(status).map_err(|err| ConnectorError::other(Box::new(err), None))?;
    let len = body.len();
    let mut response = HttpResponse::new(status, SdkBody::from(body));
    let headers = response.headers_mut();
    // Constant, valid header names and values: these cannot fail.
    let _ = headers.try_insert("content-type", "application/x-amz-json-1.0");
    let _ = headers.try_insert("content-length", len.to_string());
    let _ = headers.try_insert("x-amzn-requestid", "DOUBLE");
    Ok(response)
}
