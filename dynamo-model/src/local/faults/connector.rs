//! The HTTP client and connector the SDK is handed: each call is matched against the plan
//! and answered by DynamoDB Local, by a fault, or by both (the call applied, its answer lost).
use super::*;

/// The [`HttpClient`] handed to the SDK: wraps each connector of the real client.
#[derive(Debug)]
pub(super) struct FaultClient {
    pub(super) inner: SharedHttpClient,
    pub(super) faults: Faults,
}

impl HttpClient for FaultClient {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        SharedHttpConnector::new(FaultConnector {
            inner: self.inner.http_connector(settings, components),
            faults: self.faults.clone(),
        })
    }

    fn validate_base_client_config(
        &self,
        runtime_components: &RuntimeComponentsBuilder,
        cfg: &ConfigBag,
    ) -> Result<(), BoxError> {
        self.inner
            .validate_base_client_config(runtime_components, cfg)
    }

    fn validate_final_config(
        &self,
        runtime_components: &RuntimeComponents,
        cfg: &ConfigBag,
    ) -> Result<(), BoxError> {
        self.inner.validate_final_config(runtime_components, cfg)
    }

    fn connector_metadata(&self) -> Option<ConnectorMetadata> {
        self.inner.connector_metadata()
    }
}

#[derive(Debug)]
pub(super) struct FaultConnector {
    inner: SharedHttpConnector,
    faults: Faults,
}

impl HttpConnector for FaultConnector {
    fn call(&self, mut request: HttpRequest) -> HttpConnectorFuture {
        // Decided here, synchronously, so the order of decisions is the order of calls.
        let action = self.faults.decide(&request);
        let inner = self.inner.clone();
        let faults = self.faults.clone();
        HttpConnectorFuture::new(async move {
            match action {
                Action::Forward => inner.call(request).await,
                Action::Respond { status, body } => faults.respond(status, body),
                Action::ReplaceWithServerError => {
                    let response = inner.call(request).await?;
                    // Drain the real response: it was applied; only its answer is lost.
                    let _ = ByteStream::new(response.into_body()).collect().await;
                    faults.respond(500, internal_error_body())
                }
                Action::Delay(delay) => {
                    let (mut response, body) = buffer(inner.call(request).await?).await?;
                    *response.body_mut() = SdkBody::from(body);
                    tokio::time::sleep(delay).await;
                    Ok(response)
                }
                Action::PartialBatch {
                    batch,
                    body,
                    unprocessed,
                } => {
                    let len = body.len();
                    *request.body_mut() = SdkBody::from(body);
                    let _ = request
                        .headers_mut()
                        .try_insert("content-length", len.to_string());
                    let (mut response, body) = buffer(inner.call(request).await?).await?;
                    let merged = if response.status().as_u16() == 200 {
                        batch.merge(&body, unprocessed)
                    } else {
                        None
                    };
                    match merged {
                        Some(merged) => {
                            let headers = response.headers_mut();
                            let _ = headers.try_insert("content-length", merged.len().to_string());
                            // Its checksum was of the original body.
                            headers.remove("x-amz-crc32");
                            *response.body_mut() = SdkBody::from(merged);
                        }
                        None => *response.body_mut() = SdkBody::from(body),
                    }
                    Ok(response)
                }
            }
        })
    }
}

/// What the connector does with one call.
pub(super) enum Action {
    /// Send it as it is.
    Forward,
    /// Answer without sending it.
    Respond { status: u16, body: String },
    /// Send it, then answer with a 500 instead of the real response.
    ReplaceWithServerError,
    /// Send it, then hold the response back this long.
    Delay(Duration),
    /// Send `body` instead (the batch without the removed entries), then add `unprocessed`
    /// to the response.
    PartialBatch {
        batch: BatchOp,
        body: Vec<u8>,
        unprocessed: Map<String, Value>,
    },
}

/// The two batch operations [`FaultKind::PartialBatch`] splits.
#[derive(Debug, Clone, Copy)]
pub(super) enum BatchOp {
    /// `RequestItems: {table: [WriteRequest]}`, `UnprocessedItems` of the same shape.
    Write,
    /// `RequestItems: {table: {Keys: [key], ...}}`, `UnprocessedKeys` of the same shape.
    Get,
}

impl BatchOp {
    pub(super) fn of(op: &str) -> Option<Self> {
        match op {
            "BatchWriteItem" => Some(BatchOp::Write),
            "BatchGetItem" => Some(BatchOp::Get),
            _ => None,
        }
    }

    fn unprocessed_field(self) -> &'static str {
        match self {
            BatchOp::Write => "UnprocessedItems",
            BatchOp::Get => "UnprocessedKeys",
        }
    }

    /// The list of entries (WriteRequests or Keys) of one table's value.
    pub(super) fn entries(self, table: &Value) -> Option<&Vec<Value>> {
        match self {
            BatchOp::Write => table.as_array(),
            BatchOp::Get => table.get("Keys")?.as_array(),
        }
    }

    fn entries_mut(self, table: &mut Value) -> Option<&mut Vec<Value>> {
        match self {
            BatchOp::Write => table.as_array_mut(),
            BatchOp::Get => table.get_mut("Keys")?.as_array_mut(),
        }
    }

    /// How many entries the request holds, over all its tables.
    pub(super) fn count(self, request: &Value) -> usize {
        request
            .get("RequestItems")
            .and_then(Value::as_object)
            .map_or(0, |tables| {
                tables
                    .values()
                    .filter_map(|table| self.entries(table))
                    .map(Vec::len)
                    .sum()
            })
    }

    /// Removes a random non-empty proper subset of the entries: returns the reduced request
    /// and the removed entries in the shape of `UnprocessedItems` / `UnprocessedKeys`.
    pub(super) fn split(
        self,
        mut request: Value,
        rng: &mut SplitMix64,
    ) -> Option<(Vec<u8>, Map<String, Value>)> {
        let n = self.count(&request);
        if n < 2 {
            return None;
        }
        let removed_count = 1 + rng.below(n - 1);
        let mut order: Vec<usize> = (0..n).collect();
        for i in 0..removed_count {
            let j = i + rng.below(n - i);
            order.swap(i, j);
        }
        let mut removed = vec![false; n];
        for &i in order.iter().take(removed_count) {
            if let Some(flag) = removed.get_mut(i) {
                *flag = true;
            }
        }

        let tables = request.get_mut("RequestItems")?.as_object_mut()?;
        let mut unprocessed = Map::new();
        let mut emptied = Vec::new();
        let mut position = 0;
        for (name, table) in tables.iter_mut() {
            let Some(entries) = self.entries_mut(table) else {
                continue;
            };
            let mut kept = Vec::new();
            let mut gone = Vec::new();
            for entry in std::mem::take(entries) {
                if removed.get(position).copied().unwrap_or(false) {
                    gone.push(entry);
                } else {
                    kept.push(entry);
                }
                position += 1;
            }
            if kept.is_empty() {
                // DynamoDB rejects a table with an empty list.
                emptied.push(name.clone());
            }
            *entries = kept;
            if !gone.is_empty() {
                let entry = match self {
                    BatchOp::Write => Value::Array(gone),
                    BatchOp::Get => {
                        // Same ProjectionExpression, ConsistentRead, ... as requested.
                        let mut keys_and_attributes = table.clone();
                        if let Some(object) = keys_and_attributes.as_object_mut() {
                            object.insert("Keys".to_owned(), Value::Array(gone));
                        }
                        keys_and_attributes
                    }
                };
                unprocessed.insert(name.clone(), entry);
            }
        }
        for name in emptied {
            tables.remove(&name);
        }
        let body = serde_json::to_vec(&request).ok()?;
        Some((body, unprocessed))
    }

    /// Adds `unprocessed` to the response body's `UnprocessedItems` / `UnprocessedKeys`;
    /// `None` when the body is not a JSON object.
    pub(super) fn merge(self, response: &[u8], unprocessed: Map<String, Value>) -> Option<Vec<u8>> {
        let mut response: Value = serde_json::from_slice(response).ok()?;
        let field = response
            .as_object_mut()?
            .entry(self.unprocessed_field())
            .or_insert_with(|| Value::Object(Map::new()));
        if !field.is_object() {
            *field = Value::Object(Map::new());
        }
        let target = field.as_object_mut()?;
        for (name, mut extra) in unprocessed {
            let existing = target.get_mut(&name);
            match existing.and_then(|table| self.entries_mut(table)) {
                Some(entries) => {
                    if let Some(more) = self.entries_mut(&mut extra) {
                        entries.append(more);
                    }
                }
                None => {
                    target.insert(name, extra);
                }
            }
        }
        serde_json::to_vec(&response).ok()
    }
}

/// The DynamoDB operation of a request: the `X-Amz-Target` suffix after the last `.`
/// (`DynamoDB_20120810.PutItem` → `PutItem`), or "" without one.
pub(super) fn operation(request: &HttpRequest) -> &str {
    request
        .headers()
        .get("x-amz-target")
        .and_then(|target| target.rsplit('.').next())
        .unwrap_or("")
}

pub(super) fn transact_len(request: &Value) -> usize {
    request
        .get("TransactItems")
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}

/// A DynamoDB JSON 1.0 error body.
pub(super) fn error_body(error_type: &str, message: &str) -> String {
    json!({ "__type": format!("{ERROR_NAMESPACE}#{error_type}"), "message": message }).to_string()
}

pub(super) fn internal_error_body() -> String {
    error_body("InternalServerError", "Internal server error")
}

/// A `TransactionCanceledException` for `len` items, item `conflicted` in conflict.
pub(super) fn conflict_body(len: usize, conflicted: usize) -> String {
    let codes: Vec<&str> = (0..len)
        .map(|i| {
            if i == conflicted {
                "TransactionConflict"
            } else {
                "None"
            }
        })
        .collect();
    let reasons: Vec<Value> = codes
        .iter()
        .map(|&code| match code {
            "None" => json!({ "Code": "None" }),
            code => json!({ "Code": code, "Message": "Transaction is ongoing for the item" }),
        })
        .collect();
    json!({
        "__type": format!("{ERROR_NAMESPACE}#TransactionCanceledException"),
        "Message": format!(
            "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]",
            codes.join(", ")
        ),
        "CancellationReasons": reasons,
    })
    .to_string()
}

/// Reads the whole response body.
async fn buffer(mut response: HttpResponse) -> Result<(HttpResponse, Vec<u8>), ConnectorError> {
    let body = ByteStream::new(response.take_body())
        .collect()
        .await
        .map_err(|err| ConnectorError::io(Box::new(err)))?
        .to_vec();
    Ok((response, body))
}
