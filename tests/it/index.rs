//! Secondary-index queries: typed partitions and sort keys per index, sparse entries.

use crate::common::*;
use dynamo_model::{local, Error};

#[tokio::test]
async fn a_sparse_gsi_holds_only_items_whose_template_fields_are_present() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let mut with_email = User::sample("u-1");
    with_email.email = Some("ada@example.com".into());
    db.put(&with_email).await?;
    db.put(&User::sample("u-2")).await?; // no email: not in GSI1

    let found = db
        .query(User::gsi1_partition("ada@example.com"))
        .all()
        .await?
        .items;
    assert_eq!(found, [with_email.clone()]);
    let exact = db
        .query(User::gsi1_partition("ada@example.com"))
        .sk(User::gsi1_sk())
        .all()
        .await?
        .items;
    assert_eq!(exact, [with_email]);
    assert!(db
        .query(User::gsi1_partition("nobody@example.com"))
        .all()
        .await?
        .items
        .is_empty());

    // Writing the entity again without the field takes it out of the index.
    db.put(&User::sample("u-1")).await?;
    assert!(db
        .query(User::gsi1_partition("ada@example.com"))
        .all()
        .await?
        .items
        .is_empty());

    // GSIs are eventually consistent only: refused before sending.
    let err = db
        .query(User::gsi1_partition("x"))
        .consistent()
        .all()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Validation { .. }), "{err:?}");
    Ok(())
}
