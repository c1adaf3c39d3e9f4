use super::*;

fn put(pk: &str) -> Value {
    json!({"PutRequest": {"Item": {"PK": {"S": pk}, "SK": {"S": "S"}}}})
}

fn key(pk: &str) -> Value {
    json!({"PK": {"S": pk}, "SK": {"S": "S"}})
}

fn item(pk: &str) -> Item {
    use aws_sdk_dynamodb::types::AttributeValue as Av;
    Item::from([
        ("PK".to_owned(), Av::S(pk.to_owned())),
        ("SK".to_owned(), Av::S("S".to_owned())),
        ("name".to_owned(), Av::S(format!("item {pk}"))),
    ])
}

#[test]
fn a_batch_write_leaves_its_last_requests_unprocessed_across_tables() {
    let request = json!({"RequestItems": {"a": [put("a1"), put("a2")], "b": [put("b1")]}});
    let answer = |n| found(Operation::BatchWriteItem, &request, &[], n);
    assert_eq!(answer(0), json!({"UnprocessedItems": {}}));
    assert_eq!(answer(1), json!({"UnprocessedItems": {"b": [put("b1")]}}));
    let all = json!({"UnprocessedItems": {"a": [put("a1"), put("a2")], "b": [put("b1")]}});
    assert_eq!(
        answer(2),
        json!({"UnprocessedItems": {"a": [put("a2")], "b": [put("b1")]}})
    );
    assert_eq!(answer(3), all);
    assert_eq!(answer(usize::MAX), all);
}

#[test]
fn a_batch_get_returns_only_the_items_of_keys_it_processed() {
    let asked = json!({"Keys": [key("k1"), key("k2"), key("k3")], "ConsistentRead": true});
    let request = json!({"RequestItems": {"t": asked}});
    let items = [item("k1"), item("k3"), item("other")];
    let answer = found(Operation::BatchGetItem, &request, &items, 1);
    let found: Vec<&Value> = answer["Responses"]["t"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(found, [&item_json(&item("k1"))]);
    let left = &answer["UnprocessedKeys"]["t"];
    assert_eq!(left["Keys"], json!([key("k3")]));
    assert_eq!(left["ConsistentRead"], json!(true));
}

#[test]
fn a_transaction_get_answers_each_get_with_the_item_of_its_key() {
    let get = |pk| json!({"Get": {"TableName": "t", "Key": key(pk)}});
    let request = json!({"TransactItems": [get("k2"), get("k1")]});
    let answer = found(Operation::TransactGetItems, &request, &[item("k1")], 0);
    let expected = json!({"Responses": [{}, {"Item": item_json(&item("k1"))}]});
    assert_eq!(answer, expected);
}

#[test]
fn a_cancellation_names_one_operation_and_carries_its_item() {
    let request = json!({"TransactItems": [{}, {}, {}]});
    let (status, body) = Answer(Kind::Canceled {
        index: 1,
        code: "ConditionalCheckFailed".into(),
        item: Some(item("k")),
    })
    .render(Operation::TransactWriteItems, &request);
    let body: Value = serde_json::from_str(&body).unwrap_or_default();
    assert_eq!(status, 400);
    assert_eq!(
        body["__type"],
        json!(format!("{NAMESPACE}#TransactionCanceledException"))
    );
    let codes: Vec<&Value> = (0..3)
        .map(|i| &body["CancellationReasons"][i]["Code"])
        .collect();
    assert_eq!(
        codes,
        [
            &json!("None"),
            &json!("ConditionalCheckFailed"),
            &json!("None")
        ]
    );
    assert_eq!(
        body["CancellationReasons"][1]["Item"],
        item_json(&item("k"))
    );
}

#[test]
#[should_panic(expected = "answers a transaction of 2 operation(s)")]
fn a_cancellation_of_an_operation_the_transaction_lacks_panics() {
    let request = json!({"TransactItems": [{}, {}]});
    Answer::canceled(2, "TransactionConflict").render(Operation::TransactWriteItems, &request);
}

#[test]
fn single_item_answers_take_their_operations_shape() {
    let one = [item("k")];
    let of = |op| found(op, &json!({}), &one, 0);
    assert_eq!(of(Operation::GetItem), json!({"Item": item_json(&one[0])}));
    assert_eq!(
        of(Operation::UpdateItem),
        json!({"Attributes": item_json(&one[0])})
    );
    assert_eq!(of(Operation::Query)["Count"], json!(1));
    assert_eq!(found(Operation::GetItem, &json!({}), &[], 0), json!({}));
    let (status, body) = Answer::throttled().render(Operation::PutItem, &json!({}));
    assert_eq!(status, 400);
    assert!(
        body.contains("#ProvisionedThroughputExceededException"),
        "{body}"
    );
}
