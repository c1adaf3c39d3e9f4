//! Quickstart: one table, two entity types, every single-item operation, against
//! DynamoDB Local (started automatically unless `DYNAMODB_ENDPOINT` is set).
//!
//! Run: `cargo run -p examples --bin quickstart`

use dynamo_model::{Entity, Error, Table};
use serde::{Deserialize, Serialize};
use time::macros::datetime;
use time::OffsetDateTime;
use uuid::Uuid;

/// One table for the whole application: generic key names, one overloaded GSI.
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct App;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "PROFILE",
         index(GSI1, pk = "EMAIL#{email}", sk = "USER"))]
struct User {
    user_id: String,
    name: String,
    email: String,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{created_at}#{order_id}")]
struct Order {
    user_id: String,
    order_id: Uuid,
    created_at: OffsetDateTime,
    total_cents: u64,
    status: String,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    // A fresh, uniquely named table on DynamoDB Local, or, with AWS_ENDPOINT_URL_DYNAMODB
    // set, through `Db::from_env(name)`: the production path (README, "Going to production").
    let db = examples::table::<App>("quickstart").await?;
    println!("table: {}", db.table_name());

    let ada = User {
        user_id: "ada".into(),
        name: "Ada Lovelace".into(),
        email: "ada@example.com".into(),
    };
    db.put(&ada).if_absent().await?;
    println!("put    {}  {ada:?}", ada.primary_key());

    let created_at = datetime!(2024-05-01 09:30:00 UTC);
    let order = Order {
        user_id: "ada".into(),
        order_id: Uuid::from_u128(0x1234),
        created_at,
        total_cents: 4_200,
        status: "PENDING".into(),
    };
    db.put(&order).await?;
    println!("put    {}  {order:?}", order.primary_key());

    let read = db.get(User::key("ada")).await?;
    println!("get    {}  {read:?}", User::key("ada"));
    assert_eq!(read.as_ref(), Some(&ada));

    // A second `if_absent` put is refused, and the error carries what is stored.
    match db.put(&ada).if_absent().await {
        Err(e @ Error::ConditionFailed { .. }) => println!("put    refused: {e}"),
        other => return Err(format!("expected ConditionFailed, got {other:?}").into()),
    }

    // Typed, conditional update; the key fields themselves cannot be updated.
    let f = Order::fields();
    let key = Order::key(OrderKey {
        user_id: "ada",
        created_at,
        order_id: order.order_id,
    });
    let shipped = db
        .update(key.clone())
        .set(f.status, "SHIPPED")
        .add(f.total_cents, 500)
        .condition(f.status.eq("PENDING"))
        .await?;
    println!("update {key}  {shipped:?}");
    assert_eq!(
        (shipped.status.as_str(), shipped.total_cents),
        ("SHIPPED", 4_700)
    );

    // Reading an item as the wrong entity type is a typed error, not garbage.
    #[derive(Entity, Serialize, Deserialize, Debug)]
    #[dynamo(table = App, pk = "USER#{user_id}", sk = "PROFILE", entity_type = "Admin")]
    struct Admin {
        user_id: String,
    }
    match db.get(Admin::key("ada")).await {
        Err(Error::Decode(e)) => println!("get    as Admin: {e}"),
        other => return Err(format!("expected a decode error, got {other:?}").into()),
    }

    let old = db.delete(key.clone()).return_old().await?;
    println!("delete {key}  returned {old:?}");
    assert_eq!(old, Some(shipped));
    assert_eq!(db.get(key).await?, None);

    println!("quickstart: all assertions passed");
    Ok(())
}
