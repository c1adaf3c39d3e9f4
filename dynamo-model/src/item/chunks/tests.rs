use super::*;

/// Only a refusal before sending or a 4xx answer proves a put was not applied.
#[test]
fn only_refusals_and_4xx_answers_prove_a_put_was_not_applied() {
    use aws_sdk_dynamodb::error::ErrorMetadata;
    let service = |source: aws_sdk_dynamodb::Error| Error::Service {
        operation: "PutItem",
        table: "t".into(),
        source: Box::new(source),
    };
    let unhandled = |code: Option<&str>| {
        let mut meta = ErrorMetadata::builder();
        if let Some(code) = code {
            meta = meta.code(code);
        }
        aws_sdk_dynamodb::Error::from(
            aws_sdk_dynamodb::operation::put_item::PutItemError::generic(meta.build()),
        )
    };
    let throttled = aws_sdk_dynamodb::Error::ProvisionedThroughputExceededException(
        aws_sdk_dynamodb::types::error::ProvisionedThroughputExceededException::builder()
            .meta(
                ErrorMetadata::builder()
                    .code("ProvisionedThroughputExceededException")
                    .build(),
            )
            .build(),
    );
    let internal = aws_sdk_dynamodb::Error::InternalServerError(
        aws_sdk_dynamodb::types::error::InternalServerError::builder()
            .meta(ErrorMetadata::builder().code("InternalServerError").build())
            .build(),
    );
    assert!(not_applied(&Error::invalid(
        "E",
        crate::ValidationReason::ItemTooLarge,
        "x"
    )));
    assert!(not_applied(&service(throttled)));
    assert!(not_applied(&service(unhandled(Some(
        "ValidationException"
    )))));
    assert!(!not_applied(&service(internal)));
    assert!(!not_applied(&service(unhandled(Some(
        "ServiceUnavailable"
    )))));
    // A timeout or a lost connection has no code: perhaps applied.
    assert!(!not_applied(&service(unhandled(None))));
    assert!(!not_applied(&Error::DeadlineExceeded {
        operation: "PutItem",
        table: "t".into(),
        client_request_token: None,
    }));
}
