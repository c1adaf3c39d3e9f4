//! AWS's published recurring-payments design (DynamoDB Developer Guide, "Recurring payments
//! schema design"), as its application writes it: generic `PK` / `SK`, subscriptions under
//! `SUB#{id}#SKU#{sku}`, receipts under `REC#{date}#SKU#{sku}` that expire by TTL, and two
//! GSIs named `GSI-1` and `GSI-2` (not Rust identifiers) keyed by the next reminder and
//! payment dates, each projecting a few named attributes and no entity-type attribute.
//! Dates are stored as `2024-01-15T18:00:00`. Rows are written with the raw SDK first;
//! every published access pattern then runs through the crate, and the rows the crate
//! writes (without an entity-type attribute or a write token) equal the app's, byte for
//! byte.

use crate::common::*;
use dynamo_model::{local, Entity, Item, Table};
use time::macros::datetime;
use time::PrimitiveDateTime;

#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    ttl = "ExpiryTime",
    // The crate's writes add nothing the design does not have: no entity-type attribute
    // (every entity is identified by its keys), no write token.
    identify = "keys",
    write_type = false,
    write_token = false,
    gsi(
        name = "GSI-1",
        pk = "NextReminderDate",
        sk = "LastReminderDate",
        projection(include = ["Email", "SKU"])
    ),
    gsi(
        name = "GSI-2",
        pk = "NextPaymentDate",
        sk = "LastPaymentDate",
        projection(include = ["PaymentAmount", "PaymentDetails", "SKU"])
    )
)]
pub struct Payments;

/// `PK = ACC#123`, `SK = SUB#456#SKU#999`.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Payments, identify = "keys", rename_all = "PascalCase",
         pk = "ACC#{account_id}", sk = "SUB#{subscription_id}#SKU#{sku}",
         index("GSI-1", pk = [next_reminder_date], sk = [last_reminder_date]),
         index("GSI-2", pk = [next_payment_date], sk = [last_payment_date]))]
pub struct Subscription {
    #[dynamo(key_only)]
    pub account_id: String,
    #[dynamo(key_only)]
    pub subscription_id: String,
    #[dynamo(rename = "SKU")]
    pub sku: String,
    pub email: String,
    pub payment_amount: u64,
    pub payment_details: String,
    #[dynamo(key_format = "rfc3339(0, no_z)")]
    pub next_reminder_date: PrimitiveDateTime,
    #[dynamo(key_format = "rfc3339(0, no_z)")]
    pub last_reminder_date: PrimitiveDateTime,
    #[dynamo(key_format = "rfc3339(0, no_z)")]
    pub next_payment_date: PrimitiveDateTime,
    #[dynamo(key_format = "rfc3339(0, no_z)")]
    pub last_payment_date: PrimitiveDateTime,
}

/// `PK = ACC#123`, `SK = REC#2024-01-15T18:00:00#SKU#999`, expiring by TTL.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Payments, identify = "keys", rename_all = "PascalCase",
         pk = "ACC#{account_id}", sk = "REC#{processed_date}#SKU#{sku}")]
pub struct Receipt {
    #[dynamo(key_only)]
    pub account_id: String,
    #[dynamo(key_format = "rfc3339(0, no_z)")]
    pub processed_date: PrimitiveDateTime,
    #[dynamo(rename = "SKU")]
    pub sku: String,
    pub payment_amount: u64,
    #[dynamo(ttl)]
    pub expiry_time: i64,
}

/// A view of a subscription through one of its indexes (`index`, keyed by the dates
/// `pk` and `sk`): the table's keys, the index's keys, `SKU` and the `fields` the index
/// projects besides. No entity-type attribute: the view is identified by its keys.
macro_rules! subscription_view {
    ($(#[$doc:meta])* $name:ident, $index:tt, [$pk:ident, $sk:ident], { $($field:ident: $ty:ty),* }) => {
        $(#[$doc])*
        #[derive(Entity, Debug, Clone, PartialEq)]
        #[dynamo(table = Payments, identify = "keys", rename_all = "PascalCase",
                 entity_type = "Subscription",
                 pk = "ACC#{account_id}", sk = "SUB#{subscription_id}#SKU#{sku}",
                 index($index, pk = [$pk], sk = [$sk]))]
        pub struct $name {
            #[dynamo(key_only)]
            pub account_id: String,
            #[dynamo(key_only)]
            pub subscription_id: String,
            #[dynamo(rename = "SKU")]
            pub sku: String,
            $(pub $field: $ty,)*
            #[dynamo(key_format = "rfc3339(0, no_z)")]
            pub $pk: PrimitiveDateTime,
            #[dynamo(key_format = "rfc3339(0, no_z)")]
            pub $sk: PrimitiveDateTime,
        }
    };
}

subscription_view!(
    /// What `GSI-1` projects of a subscription: the keys, `Email` and `SKU`.
    Reminder,
    "GSI-1",
    [next_reminder_date, last_reminder_date],
    { email: String }
);

subscription_view!(
    /// What `GSI-2` projects of a subscription: the keys, `PaymentAmount`,
    /// `PaymentDetails` and `SKU`.
    DuePayment,
    "GSI-2",
    [next_payment_date, last_payment_date],
    { payment_amount: u64, payment_details: String }
);

fn subscription_row(account: &str, id: &str, sku: &str, reminder: &str, payment: &str) -> Item {
    raw_row(
        &format!("ACC#{account}"),
        &format!("SUB#{id}#SKU#{sku}"),
        &[
            ("SKU", s(sku)),
            ("Email", s(&format!("{account}@example.com"))),
            ("PaymentAmount", n(1999)),
            ("PaymentDetails", s("card ending 4242")),
            ("NextReminderDate", s(reminder)),
            ("LastReminderDate", s("2024-01-08T00:00:00")),
            ("NextPaymentDate", s(payment)),
            ("LastPaymentDate", s("2024-01-15T00:00:00")),
        ],
    )
}

fn receipt_row(account: &str, processed: &str, sku: &str, expiry: u64) -> Item {
    raw_row(
        &format!("ACC#{account}"),
        &format!("REC#{processed}#SKU#{sku}"),
        &[
            ("SKU", s(sku)),
            ("PaymentAmount", n(1999)),
            ("ProcessedDate", s(processed)),
            ("ExpiryTime", n(expiry)),
        ],
    )
}

async fn seeded() -> Res<local::TempTable<Payments>> {
    let db = local::fresh_table::<Payments>().await?;
    let rows = [
        subscription_row(
            "123",
            "456",
            "999",
            "2024-02-08T00:00:00",
            "2024-02-15T00:00:00",
        ),
        subscription_row(
            "123",
            "457",
            "555",
            "2024-02-01T00:00:00",
            "2024-02-08T00:00:00",
        ),
        subscription_row(
            "124",
            "458",
            "999",
            "2024-02-08T00:00:00",
            "2024-02-15T00:00:00",
        ),
        receipt_row("123", "2024-01-15T18:00:00", "999", 1_900_000_000),
        receipt_row("123", "2023-12-15T18:00:00", "999", 1_900_000_000),
    ];
    put_raw_rows(&db, rows).await?;
    Ok(db)
}

#[tokio::test]
async fn payments_design_reads_the_apps_rows_by_every_published_pattern() -> TestResult {
    let db = seeded().await?;

    // getSubscriptionsByAccount and getReceiptsByAccount: the same partition, each entity
    // by its own sort-key prefix.
    let subscriptions = items_of(db.query(Subscription::partition("123"))).await?;
    let ids: Vec<&str> = subscriptions
        .iter()
        .map(|s| s.subscription_id.as_str())
        .collect();
    assert_eq!(ids, ["456", "457"]);
    assert_eq!(
        subscriptions[0].next_payment_date,
        datetime!(2024-02-15 00:00:00)
    );
    let receipts = items_of(db.query(Receipt::partition("123")).reverse()).await?;
    let dates: Vec<PrimitiveDateTime> = receipts.iter().map(|r| r.processed_date).collect();
    assert_eq!(
        dates,
        [
            datetime!(2024-01-15 18:00:00),
            datetime!(2023-12-15 18:00:00)
        ]
    );

    // The generated names of `GSI-1` and `GSI-2`: `gsi_1_*`, `gsi_2_*`.
    let input = db
        .query(Subscription::gsi_1_partition(
            datetime!(2024-02-08 00:00:00),
        ))
        .keys_only()
        .params()?;
    assert_eq!(input.index_name(), Some("GSI-1"));
    let input = db
        .query(Subscription::gsi_2_partition(
            datetime!(2024-02-15 00:00:00),
        ))
        .sk(Subscription::gsi_2_sk()
            .last_payment_date()
            .le(datetime!(2024-01-31 00:00:00)))
        .keys_only()
        .params()?;
    assert_eq!(input.index_name(), Some("GSI-2"));
    let values = input.expression_attribute_values().ok_or("no values")?;
    assert!(values.values().any(|v| v == &s("2024-02-15T00:00:00")));

    // getDueRemindersByDate: `GSI-1` projects no entity-type attribute; a view of what it
    // projects, identified by its keys, reads it.
    let due = items_of(
        db.query(Subscription::gsi_1_partition(
            datetime!(2024-02-08 00:00:00),
        ))
        .project::<Reminder>(),
    )
    .await?;
    let ids: Vec<(&str, &str)> = due
        .iter()
        .map(|r| (r.account_id.as_str(), r.subscription_id.as_str()))
        .collect();
    assert_eq!(ids.len(), 2);
    assert!(ids.contains(&("123", "456")) && ids.contains(&("124", "458")));
    assert!(due.iter().all(|r| r.email.ends_with("@example.com")));

    // getDuePaymentsByDate, through `GSI-2`, likewise.
    let payments = items_of(
        db.query(Subscription::gsi_2_partition(
            datetime!(2024-02-08 00:00:00),
        ))
        .project::<DuePayment>(),
    )
    .await?;
    assert_eq!(payments.len(), 1);
    assert_eq!(payments[0].subscription_id, "457");
    assert_eq!(payments[0].payment_amount, 1999);
    assert_eq!(
        payments[0].last_payment_date,
        datetime!(2024-01-15 00:00:00)
    );

    // The whole entity cannot be read from `GSI-1`: the refusal names what is missing.
    let refused = db
        .query(Subscription::gsi_1_partition(
            datetime!(2024-02-08 00:00:00),
        ))
        .params()
        .err()
        .ok_or("a whole subscription read from GSI-1")?;
    let message = refused.to_string();
    assert!(
        message.contains("GSI-1") && message.contains("PaymentAmount"),
        "{message}"
    );
    Ok(())
}

#[tokio::test]
async fn payments_design_writes_keep_the_apps_layout() -> TestResult {
    let db = seeded().await?;
    let f = Subscription::fields();
    let key = || {
        Subscription::key(SubscriptionKey {
            account_id: "123",
            subscription_id: "456",
            sku: "999",
        })
    };

    // updateSubscription after a payment: both index keys move, in the design's format.
    let updated = db
        .update(key())
        .set(f.last_payment_date, datetime!(2024-02-15 00:00:00))
        .set(f.next_payment_date, datetime!(2024-03-15 00:00:00))
        .set(f.next_reminder_date, datetime!(2024-03-08 00:00:00))
        .condition(f.next_payment_date.eq(datetime!(2024-02-15 00:00:00)))
        .await?;
    assert_eq!(updated.next_payment_date, datetime!(2024-03-15 00:00:00));
    let raw = raw_find(&db, raw_key("ACC#123", "SUB#456#SKU#999"))
        .await?
        .ok_or("gone")?;
    assert_eq!(raw.get("NextPaymentDate"), Some(&s("2024-03-15T00:00:00")));
    assert_eq!(raw.get("LastPaymentDate"), Some(&s("2024-02-15T00:00:00")));

    // createReceipt: the crate's row has the app's layout, its TTL included.
    let receipt = Receipt {
        account_id: "123".into(),
        processed_date: datetime!(2024-02-15 18:00:00),
        sku: "999".into(),
        payment_amount: 1999,
        expiry_time: 1_900_000_000,
    };
    db.put(&receipt).if_absent().await?;
    let raw = raw_find(&db, raw_key("ACC#123", "REC#2024-02-15T18:00:00#SKU#999"))
        .await?
        .ok_or("no receipt")?;
    assert_eq!(
        raw,
        receipt_row("123", "2024-02-15T18:00:00", "999", 1_900_000_000)
    );

    // createSubscription: likewise.
    let new = Subscription {
        account_id: "125".into(),
        subscription_id: "460".into(),
        sku: "777".into(),
        email: "125@example.com".into(),
        payment_amount: 1999,
        payment_details: "card ending 4242".into(),
        next_reminder_date: datetime!(2024-02-08 00:00:00),
        last_reminder_date: datetime!(2024-01-08 00:00:00),
        next_payment_date: datetime!(2024-02-15 00:00:00),
        last_payment_date: datetime!(2024-01-15 00:00:00),
    };
    db.put(&new).if_absent().await?;
    let raw = raw_find(&db, raw_key("ACC#125", "SUB#460#SKU#777"))
        .await?
        .ok_or("no row")?;
    same_layout(
        &subscription_row(
            "125",
            "460",
            "777",
            "2024-02-08T00:00:00",
            "2024-02-15T00:00:00",
        ),
        &raw,
    );
    Ok(())
}
