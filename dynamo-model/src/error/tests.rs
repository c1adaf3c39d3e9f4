//! The messages of every error: causes said once (in the message or as `source()`,
//! never both), keys only when the program opted in, values in words.

use super::*;
use aws_sdk_dynamodb::types::AttributeValue;

const SECRET: &str = "USER#ada@example.com";

fn key() -> String {
    format!("PK={SECRET}, SK=PROFILE")
}

fn item() -> Item {
    Item::from([("PK".to_owned(), AttributeValue::S(SECRET.to_owned()))])
}

fn service() -> aws_sdk_dynamodb::Error {
    use aws_sdk_dynamodb::types::error::ResourceNotFoundException;
    aws_sdk_dynamodb::Error::ResourceNotFoundException(
        ResourceNotFoundException::builder()
            .message("Requested resource not found")
            .build(),
    )
}

/// One error of every variant, each with its key, current item and cause where it has
/// them.
fn every_variant() -> Vec<Error> {
    let decode = DecodeError {
        entity: "User",
        key: Some(key()),
        attribute: Some("address".to_owned()),
        kind: DecodeErrorKind::Missing.at_member("city"),
    };
    let key_error = KeyError::ForbiddenChar {
        ch: '#',
        value: SECRET.to_owned(),
    };
    let errors = vec![
        Error::condition_failed("User", key()).with_current(item()),
        Error::other_entity_stored("User", key(), Some("Order")).with_current(item()),
        Error::version_conflict("User", key(), 7, Some(8)).with_current(item()),
        Error::not_found("User", key()),
        Error::ChunksNotLoaded {
            entity: "User",
            key: key(),
            attribute: "body",
        },
        Error::not_unique("User", [&key(), &key()]),
        Error::unique_value_taken("User", "email", "ada@example.com", key()),
        Error::Decode(decode),
        Error::rule(RuleViolation::field(
            "User",
            "name",
            Rule::Length {
                min: Some(1),
                max: Some(3),
            },
            "\"Ada Lovelace\"".to_owned(),
        )),
        Error::Stream(StreamError::UnknownEventName("X".to_owned())),
        Error::key("User", key_error),
        Error::Incomplete {
            entity: "User",
            operation: "BatchGetItem",
            missing: 2,
            source: Some(Box::new(Error::service("BatchGetItem", "app", service()))),
        },
        Error::UnexpectedResponse {
            entity: "User",
            operation: "PutItem",
            message: "no attributes".to_owned(),
        },
        Error::return_values_lost("User", "UpdateItem", key()).with_current(item()),
        Error::outcome_unknown(
            "User",
            "PutItem",
            key(),
            WriteToken::parse("AAAAAAAAAAAAAAAA"),
            Error::service("PutItem", "app", service()),
        ),
        Error::transaction_canceled(vec![
            CancelledOperation::new(0, "User", key(), CancelReason::ConditionalCheckFailed)
                .with_message("The conditional request failed")
                .with_current(item()),
        ]),
        Error::cursor("User", CursorError::Tampered),
        Error::deadline_exceeded("TransactWriteItems", "app"),
        Error::Io {
            context: "migration checkpoint /tmp/x".to_owned(),
            error: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        },
        Error::MigrationStopped {
            migration: "m".to_owned(),
            refusals: 3,
            last: Box::new(Error::service("UpdateItem", "app", service())),
        },
        Error::service("PutItem", "app", service()),
    ];
    errors
}

/// Whether the variant's message names a key when keys are shown; exhaustive, so a new
/// variant fails to compile here until it is listed (and added to [`every_variant`]).
fn names_key(e: &Error) -> bool {
    match e {
        Error::ConditionFailed { .. }
        | Error::OtherEntityStored { .. }
        | Error::VersionConflict { .. }
        | Error::NotFound { .. }
        | Error::ChunksNotLoaded { .. }
        | Error::NotUnique { .. }
        | Error::Decode(_)
        | Error::Validation { .. }
        | Error::ReturnValuesLost { .. }
        | Error::OutcomeUnknown { .. }
        | Error::TransactionCanceled { .. } => true,
        Error::UniqueValueTaken { .. }
        | Error::Rule(_)
        | Error::Stream(_)
        | Error::Incomplete { .. }
        | Error::UnexpectedResponse { .. }
        | Error::Cursor { .. }
        | Error::DeadlineExceeded { .. }
        | Error::Io { .. }
        | Error::MigrationStopped { .. }
        | Error::Service { .. } => false,
    }
}

#[test]
fn no_message_repeats_its_source_and_none_names_a_key_unless_keys_are_shown() {
    for e in every_variant() {
        let mut error: &dyn std::error::Error = &e;
        loop {
            let text = error.to_string();
            assert!(!text.contains(SECRET), "a key in {text:?} ({e:?})");
            assert!(!text.contains("Some("), "an Option in {text:?}");
            let Some(source) = error.source() else { break };
            let cause = source.to_string();
            assert!(
                !text.contains(&cause),
                "{text:?} repeats its source's {cause:?}"
            );
            error = source;
        }
    }
    // Keys shown on this thread only: the tests beside this one see the default.
    let shown: Vec<String> =
        shown::with_keys_shown(|| every_variant().iter().map(Error::to_string).collect());
    for (text, e) in shown.iter().zip(every_variant()) {
        assert_eq!(text.contains(SECRET), names_key(&e), "{text}");
    }
}

#[test]
fn messages_speak_in_words() {
    let e = Error::version_conflict("User", key(), 7, Some(8));
    assert_eq!(
        e.to_string(),
        "version conflict on User: expected version 7, found version 8"
    );
    let e = Error::version_conflict("User", key(), 7, None);
    assert!(e.to_string().ends_with("found no version"), "{e}");
    let e = Error::invalid("User", ValidationReason::ItemTooLarge, "big");
    assert_eq!(
        ValidationReason::ItemTooLarge.to_string(),
        "the item is over DynamoDB's 400 KB limit"
    );
    assert_eq!(e.to_string(), "invalid DynamoDB request for User: big");
    let e = Error::transaction_canceled(vec![
        CancelledOperation::new(2, "User", key(), CancelReason::TransactionConflict)
            .with_message("Transaction is ongoing for the item"),
    ]);
    assert_eq!(
        e.to_string(),
        "transaction cancelled: operation 2 (User): another transaction was in progress on the item (Transaction is ongoing for the item)"
    );
    let e = Error::other_entity_stored("User", key(), Some("Order"));
    assert_eq!(
        e.to_string(),
        "User: the key holds an item of entity type Order, which this write may not replace or change"
    );
    let e = Error::service("PutItem", "app", service());
    assert_eq!(
        e.to_string(),
        "PutItem on table app failed: DynamoDB answered ResourceNotFoundException"
    );
}

#[test]
fn throttling_is_recognised_in_service_errors_and_transactions() {
    use aws_sdk_dynamodb::types::error::ProvisionedThroughputExceededException;
    let throttled = aws_sdk_dynamodb::Error::ProvisionedThroughputExceededException(
        ProvisionedThroughputExceededException::builder().build(),
    );
    assert!(Error::service("PutItem", "app", throttled).is_throttling());
    assert!(!Error::service("PutItem", "app", service()).is_throttling());
    let op = |reason| CancelledOperation::new(0, "User", key(), reason);
    assert!(Error::transaction_canceled(vec![op(CancelReason::ThrottlingError)]).is_throttling());
    assert!(
        !Error::transaction_canceled(vec![
            op(CancelReason::ThrottlingError),
            op(CancelReason::ConditionalCheckFailed)
        ])
        .is_throttling()
    );
    assert!(!Error::transaction_canceled(Vec::new()).is_throttling());
}
