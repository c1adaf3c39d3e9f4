use super::*;

/// An SDK request of DynamoDB operation `op` with a JSON `body`.
fn request(op: &str, body: &str) -> HttpRequest {
    let mut request = HttpRequest::new(SdkBody::from(body.to_owned()));
    request
        .headers_mut()
        .insert("x-amz-target", format!("DynamoDB_20120810.{op}"));
    request
}

impl Action {
    fn is_forward(&self) -> bool {
        matches!(self, Action::Forward)
    }
}

/// A BatchWriteItem body with `n` puts.
fn batch_write(n: usize) -> String {
    let puts: Vec<Value> = (0..n)
        .map(|i| json!({"PutRequest": {"Item": {"PK": {"S": format!("k{i}")}}}}))
        .collect();
    json!({ "RequestItems": { "t": puts } }).to_string()
}

fn error_type(body: &str) -> Value {
    serde_json::from_str::<Value>(body).expect("json")["__type"].clone()
}

#[test]
fn only_selected_operations_are_faulted_and_only_while_enabled() {
    let faults = Faults::new(50)
        .kinds([FaultKind::Throttle])
        .operations(["BatchWriteItem"]);
    assert!(matches!(
        faults.decide(&request("PutItem", "{}")),
        Action::Forward
    ));
    assert!(matches!(
        faults.decide(&request("BatchWriteItem", &batch_write(1))),
        Action::Respond { status: 400, .. }
    ));
    faults.set_enabled(false);
    assert!(matches!(
        faults.decide(&request("BatchWriteItem", &batch_write(1))),
        Action::Forward
    ));
    faults.set_enabled(true);
    assert!(matches!(
        faults.decide(&request("BatchWriteItem", &batch_write(1))),
        Action::Respond { status: 400, .. }
    ));
    assert_eq!(
        faults.stats(),
        FaultStats {
            calls: 4,
            throttled: 2,
            ..FaultStats::default()
        }
    );
    assert!(
        Faults::new(0)
            .operations([])
            .kinds([FaultKind::Throttle])
            .decide(&request("PutItem", "{}"))
            .is_forward()
    );
}

#[test]
fn calls_made_while_disabled_do_not_shift_the_random_sequence() {
    let choices = |pause: bool| {
        let faults = Faults::new(7).rate(0.5).kinds([FaultKind::ServerError]);
        (0..40)
            .map(|i| {
                if pause && i == 10 {
                    faults.set_enabled(false);
                    for _ in 0..5 {
                        faults.decide(&request("PutItem", "{}"));
                    }
                    faults.set_enabled(true);
                }
                faults.decide(&request("PutItem", "{}")).is_forward()
            })
            .collect::<Vec<bool>>()
    };
    let plain = choices(false);
    assert_eq!(plain, choices(true));
    assert!(plain.contains(&true) && plain.contains(&false), "{plain:?}");
}

#[test]
fn batch_and_transaction_faults_apply_only_where_they_can() {
    let partial = Faults::new(51).kinds([FaultKind::PartialBatch]);
    assert!(partial.decide(&request("PutItem", "{}")).is_forward());
    assert!(
        partial
            .decide(&request("BatchWriteItem", &batch_write(1)))
            .is_forward(),
        "a batch of one item cannot be split"
    );
    assert!(matches!(
        partial.decide(&request("BatchWriteItem", &batch_write(2))),
        Action::PartialBatch { .. }
    ));
    let conflict = Faults::new(52).kinds([FaultKind::TransactionConflict]);
    assert!(
        conflict
            .decide(&request("BatchWriteItem", &batch_write(3)))
            .is_forward()
    );
    let transaction = json!({"TransactItems": [{}, {}, {}]}).to_string();
    assert!(matches!(
        conflict.decide(&request("TransactWriteItems", &transaction)),
        Action::Respond { status: 400, ref body } if error_type(body)
            == json!(format!("{ERROR_NAMESPACE}#TransactionCanceledException"))
    ));
    assert_eq!(partial.stats().partial_batches, 1);
    assert_eq!(conflict.stats().transaction_conflicts, 1);
}

#[test]
fn refusals_look_like_dynamodb_errors() {
    let throttle = Faults::new(1).kinds([FaultKind::Throttle]);
    let Action::Respond { status, body } = throttle.decide(&request("PutItem", "{}")) else {
        panic!("a throttle answers without forwarding");
    };
    assert_eq!(
        error_type(&body),
        json!("com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException")
    );
    let response = throttle.respond(status, body).expect("response");
    assert_eq!(response.status().as_u16(), 400);
    let headers = response.headers();
    assert_eq!(
        headers.get("content-type"),
        Some("application/x-amz-json-1.0")
    );
    assert!(headers.get("x-amzn-requestid").is_some());

    let server = Faults::new(2).kinds([FaultKind::ServerError]);
    let Action::Respond { status, body } = server.decide(&request("PutItem", "{}")) else {
        panic!("a 500 answers without forwarding");
    };
    assert_eq!(status, 500);
    assert_eq!(
        error_type(&body),
        json!(format!("{ERROR_NAMESPACE}#InternalServerError"))
    );
    let after = Faults::new(3).kinds([FaultKind::ServerErrorAfterApply]);
    assert!(matches!(
        after.decide(&request("PutItem", "{}")),
        Action::ReplaceWithServerError
    ));
    let delay = Duration::from_millis(300);
    let slow = Faults::new(4).kinds([FaultKind::Delay(delay)]);
    assert!(matches!(slow.decide(&request("PutItem", "{}")), Action::Delay(d) if d == delay));
}

#[test]
fn a_recording_plan_keeps_every_call_with_its_fault() {
    let faults = Faults::new(5)
        .kinds([FaultKind::Throttle])
        .operations(["BatchWriteItem"])
        .record();
    let body = batch_write(2);
    faults.decide(&request("PutItem", "{\"a\":1}"));
    faults.decide(&request("BatchWriteItem", &body));
    let calls = faults.calls();
    let seen: Vec<(&str, &str, Option<FaultKind>)> = calls
        .iter()
        .map(|c| (c.operation.as_str(), c.body.as_str(), c.fault))
        .collect();
    assert_eq!(
        seen,
        [
            ("PutItem", "{\"a\":1}", None),
            ("BatchWriteItem", body.as_str(), Some(FaultKind::Throttle)),
        ]
    );
    assert!(calls[0].at <= calls[1].at);

    let quiet = Faults::new(5).kinds([FaultKind::Throttle]);
    quiet.decide(&request("PutItem", "{}"));
    assert!(quiet.calls().is_empty(), "nothing is recorded unless asked");
}

#[test]
fn below_stays_in_range_and_is_deterministic() {
    let mut a = SplitMix64(11);
    let mut b = SplitMix64(11);
    for n in 1..200 {
        let x = a.below(n);
        assert!(x < n);
        assert_eq!(x, b.below(n));
    }
    assert_eq!(a.below(0), 0);
    let f = a.next_f64();
    assert!((0.0..1.0).contains(&f));
}

#[test]
fn batch_write_split_is_a_proper_partition() {
    let request = json!({
        "RequestItems": {
            "a": (0..5).map(|i| json!({"PutRequest": {"Item": {"PK": {"S": format!("a{i}")}}}})).collect::<Vec<_>>(),
            "b": (0..3).map(|i| json!({"DeleteRequest": {"Key": {"PK": {"S": format!("b{i}")}}}})).collect::<Vec<_>>(),
        }
    });
    for seed in 0..200 {
        let mut rng = SplitMix64(seed);
        let (body, unprocessed) = BatchOp::Write
            .split(request.clone(), &mut rng)
            .expect("splits");
        let reduced: Value = serde_json::from_slice(&body).expect("json");
        let kept = BatchOp::Write.count(&reduced);
        let gone: usize = unprocessed
            .values()
            .filter_map(|t| BatchOp::Write.entries(t))
            .map(Vec::len)
            .sum();
        assert!(kept >= 1 && gone >= 1, "seed {seed}");
        assert_eq!(kept + gone, 8);
        for table in reduced["RequestItems"]
            .as_object()
            .expect("object")
            .values()
        {
            assert!(!table.as_array().expect("array").is_empty());
        }
    }
}

#[test]
fn batch_get_split_keeps_table_options_and_merges() {
    let request = json!({
        "RequestItems": {
            "t": {
                "Keys": (0..4).map(|i| json!({"PK": {"S": format!("k{i}")}})).collect::<Vec<_>>(),
                "ConsistentRead": true,
                "ProjectionExpression": "#a",
                "ExpressionAttributeNames": {"#a": "A"},
            }
        }
    });
    let mut rng = SplitMix64(3);
    let (body, unprocessed) = BatchOp::Get.split(request, &mut rng).expect("splits");
    let reduced: Value = serde_json::from_slice(&body).expect("json");
    let gone = &unprocessed["t"];
    assert_eq!(gone["ConsistentRead"], json!(true));
    assert_eq!(gone["ProjectionExpression"], json!("#a"));
    let kept_n = reduced["RequestItems"]["t"]["Keys"]
        .as_array()
        .map_or(0, Vec::len);
    let gone_n = gone["Keys"].as_array().map_or(0, Vec::len);
    assert_eq!(kept_n + gone_n, 4);

    let real = json!({
        "Responses": {"t": []},
        "UnprocessedKeys": {"t": {"Keys": [{"PK": {"S": "other"}}], "ConsistentRead": true}}
    });
    let merged = BatchOp::Get
        .merge(&serde_json::to_vec(&real).expect("json"), unprocessed)
        .expect("merges");
    let merged: Value = serde_json::from_slice(&merged).expect("json");
    assert_eq!(
        merged["UnprocessedKeys"]["t"]["Keys"]
            .as_array()
            .map_or(0, Vec::len),
        gone_n + 1
    );
    assert_eq!(BatchOp::Get.merge(b"not json", Map::new()), None);
}

#[test]
fn conflict_body_lists_reasons_in_dynamodb_style() {
    let body: Value = serde_json::from_str(&conflict_body(2, 1)).expect("json");
    assert_eq!(
        body["Message"],
        json!(
            "Transaction cancelled, please refer cancellation reasons for specific reasons [None, TransactionConflict]"
        )
    );
    assert_eq!(body["CancellationReasons"][0]["Code"], json!("None"));
    assert_eq!(
        body["CancellationReasons"][1]["Code"],
        json!("TransactionConflict")
    );
}
