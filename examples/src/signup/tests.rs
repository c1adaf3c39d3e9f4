//! The signup service on the test double: each test scripts DynamoDB's answers, runs the
//! service and checks its answer and the requests it sent.

use super::*;
use dynamo_model::aws_sdk_dynamodb::operation::put_item::PutItemInput;
use dynamo_model::double::{Answer, Double, Operation};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

fn account(email: &str, name: &str) -> Account {
    Account {
        email: email.into(),
        name: name.into(),
    }
}

#[tokio::test]
async fn a_new_email_creates_the_account() -> TestResult {
    let double = Double::new();
    let db: Db<Accounts> = double.db("accounts");
    double.on(Operation::PutItem).then(Answer::ok());

    assert_eq!(
        sign_up(&db, "ann@example.com", "Ann").await?,
        Signup::Created
    );

    // One conditional PutItem of the account, on the service's table.
    let [put] = double.calls().try_into().map_err(|c| format!("{c:?}"))?;
    assert_eq!(put.operation(), Operation::PutItem);
    assert_eq!(put.table(), Some("accounts"));
    assert_eq!(
        put.items::<Account>(),
        vec![account("ann@example.com", "Ann")]
    );
    let key = Account::key("ann@example.com");
    let key = key.raw()?;
    assert_eq!(put.key(), Some(key));
    let input = put.input::<PutItemInput>().ok_or("not a PutItem")?;
    let condition = input.condition_expression().unwrap_or_default();
    assert!(condition.contains("attribute_not_exists"), "{condition}");
    double.assert_done();
    Ok(())
}

#[tokio::test]
async fn a_taken_email_reports_the_account_stored() -> TestResult {
    let double = Double::new();
    let db: Db<Accounts> = double.db("accounts");
    let stored = account("ann@example.com", "Ann Original");
    double
        .on(Operation::PutItem)
        .then(Answer::condition_failed_with(&stored));

    let outcome = sign_up(&db, "ann@example.com", "Someone Else").await?;
    assert_eq!(
        outcome,
        Signup::AlreadyRegistered {
            name: "Ann Original".into()
        }
    );
    // Refused once, not retried, and no read to find the stored account.
    assert_eq!(double.calls().len(), 1);
    Ok(())
}

#[tokio::test]
async fn a_throttled_import_is_retried_until_every_account_is_written() -> TestResult {
    let double = Double::new();
    let db: Db<Accounts> = double.db("accounts");
    double
        .on(Operation::BatchWriteItem)
        .then(Answer::throttled()) // the SDK retries the whole request
        .then(Answer::unprocessed(2)) // DynamoDB wrote 1 of 3: the crate sends the rest
        .then(Answer::ok());
    let accounts = [
        account("a@example.com", "A"),
        account("b@example.com", "B"),
        account("c@example.com", "C"),
    ];

    assert_eq!(import(&db, &accounts).await?, 3);

    let batches = double.calls_of(Operation::BatchWriteItem);
    let sent: Vec<(u32, usize)> = batches
        .iter()
        .map(|c| (c.attempt(), c.items::<Account>().len()))
        .collect();
    assert_eq!(sent, [(1, 3), (2, 3), (1, 2)]);
    assert_eq!(batches[2].items::<Account>(), accounts[1..].to_vec());
    double.assert_done();
    Ok(())
}

#[tokio::test]
async fn an_import_still_throttled_when_retries_run_out_reports_what_is_left() -> TestResult {
    let double = Double::new();
    let db: Db<Accounts> = double.db("accounts");
    double
        .on(Operation::BatchWriteItem)
        .always(Answer::throttled());
    let accounts = [account("a@example.com", "A")];
    let err = import(&db, &accounts).await.unwrap_err();
    assert!(
        matches!(err, ImportError::Incomplete(1) | ImportError::Db(_)),
        "{err}"
    );
    Ok(())
}
