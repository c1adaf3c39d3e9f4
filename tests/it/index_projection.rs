//! Reading an index whose `INCLUDE` projection leaves out the entity-type attribute (the
//! recurring-payments design's GSIs project a few named attributes, not `_type`): read
//! where the items can be recognised without it (by their keys), refused otherwise with
//! the attribute, the index and the change that makes the read possible.

use crate::common::*;
use dynamo_model::{local, Entity, Table, ValidationReason};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK",
         gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK",
             projection(include = ["amount", "dueDate"])))]
pub struct Payments;

/// A recurring payment, recognised by its keys (`identify = "keys"`).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Payments, identify = "keys", store_key_fields = false,
         pk = "ACC#{account}", sk = "SUB#{subscription}",
         index(GSI1, pk = "DUE#{due_date}", sk = "ACC#{account}#SUB#{subscription}"))]
#[serde(rename_all = "camelCase")]
pub struct Subscription {
    pub account: String,
    pub subscription: String,
    pub due_date: String,
    pub amount: u64,
    pub sku: String,
}

/// What `GSI1` projects of a subscription.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Payments, identify = "keys", store_key_fields = false,
         entity_type = "Subscription", pk = "ACC#{account}", sk = "SUB#{subscription}")]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionDue {
    pub account: String,
    pub subscription: String,
    pub due_date: String,
    pub amount: u64,
}

/// An invoice in the same index partitions, recognised by its entity-type attribute only.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Payments, store_key_fields = false,
         pk = "ACC#{account}", sk = "INV#{invoice}",
         index(GSI1, pk = "DUE#{due_date}", sk = "ACC#{account}#INV#{invoice}"))]
#[serde(rename_all = "camelCase")]
pub struct Invoice {
    pub account: String,
    pub invoice: String,
    pub due_date: String,
    pub amount: u64,
}

/// What `GSI1` projects of an invoice.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Payments, store_key_fields = false, entity_type = "Invoice",
         pk = "ACC#{account}", sk = "INV#{invoice}")]
#[serde(rename_all = "camelCase")]
pub struct InvoiceDue {
    pub account: String,
    pub invoice: String,
    pub due_date: String,
    pub amount: u64,
}

const DUE: &str = "2026-12-01";

async fn payments() -> Res<local::TempTable<Payments>> {
    let db = local::fresh_table::<Payments>().await?;
    for (account, subscription, due) in [
        ("a1", "s1", DUE),
        ("a2", "s2", DUE),
        ("a3", "s3", "2027-01-01"),
    ] {
        db.put(&Subscription {
            account: account.into(),
            subscription: subscription.into(),
            due_date: due.into(),
            amount: 100,
            sku: "gym".into(),
        })
        .await?;
    }
    db.put(&Invoice {
        account: "a1".into(),
        invoice: "i1".into(),
        due_date: DUE.into(),
        amount: 7,
    })
    .await?;
    Ok(db)
}

#[tokio::test]
async fn an_index_without_the_entity_type_is_read_through_a_view_of_an_entity_identified_by_its_keys(
) -> TestResult {
    let db = payments().await?;
    let due = items_of(
        db.query(Subscription::gsi1_partition(DUE))
            .project::<SubscriptionDue>(),
    )
    .await?;
    // The two subscriptions due that day, decoded from the index; the invoice in the same
    // index partition is not a subscription (its keys are not a subscription's).
    let found: BTreeSet<(String, String, u64)> = due
        .into_iter()
        .map(|s| (s.account, s.due_date, s.amount))
        .collect();
    assert_eq!(
        found,
        [("a1", DUE, 100), ("a2", DUE, 100)]
            .map(|(a, d, n)| (a.to_owned(), d.to_owned(), n))
            .into()
    );
    // A scan of the index reads the same way.
    let scanned = db
        .scan::<Subscription>()
        .index::<PaymentsGsi1>()
        .project::<SubscriptionDue>()
        .all()
        .await?;
    assert_eq!(scanned.items.len(), 3);
    Ok(())
}

#[tokio::test]
async fn an_index_without_the_entity_type_is_refused_naming_the_attribute_the_index_and_the_fix(
) -> TestResult {
    let db = payments().await?;
    // Through a view already: the refusal does not recommend a view again.
    let err = db
        .query(Invoice::gsi1_partition(DUE))
        .project::<InvoiceDue>()
        .all()
        .await
        .unwrap_err();
    assert_refused(&err, ValidationReason::IndexProjection);
    let message = err.to_string();
    for part in ["`_type`", "`GSI1`", "identify = \"keys\""] {
        assert!(message.contains(part), "{part} missing from: {message}");
    }
    assert!(!message.contains("project::<"), "{message}");

    // The whole entity, where only a field is missing: a view is the fix.
    let err = db
        .query(Subscription::gsi1_partition(DUE))
        .all()
        .await
        .unwrap_err();
    assert_refused(&err, ValidationReason::IndexProjection);
    let message = err.to_string();
    assert!(message.contains("`sku`"), "{message}");
    assert!(!message.contains("`_type`"), "{message}");
    assert!(message.contains(".project::<View>()"), "{message}");
    Ok(())
}
