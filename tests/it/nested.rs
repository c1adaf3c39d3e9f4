//! Entities without serde derives, with nested `#[derive(Attribute)]` values, through
//! DynamoDB Local.

use crate::common::*;
use dynamo_model::{local, Attribute, Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct Shop;

#[derive(Attribute, Debug, Clone, PartialEq)]
#[dynamo(rename_all = "camelCase")]
struct Address {
    street_line: String,
    postal_code: Option<String>,
}

#[derive(Attribute, Debug, Clone, PartialEq)]
struct Line {
    sku: String,
    qty: u32,
    price_cents: Option<u64>,
}

#[derive(Attribute, Debug, Clone, PartialEq)]
enum Status {
    Pending,
    Paid(u64),
    Shipped {
        carrier: String,
        tracking: Option<String>,
    },
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, pk = "ORDER#{id}", sk = "ORDER")]
struct Order {
    id: String,
    ship_to: Address,
    lines: Vec<Line>,
    status: Status,
    #[dynamo(rename = "prev")]
    history: Vec<Status>,
}

#[tokio::test]
async fn nested_attribute_types_round_trip_through_put_and_get() -> TestResult {
    let db = local::fresh_table::<Shop>().await?;
    let orders = [
        Order {
            id: "o-1".into(),
            ship_to: Address {
                street_line: "1 Main St".into(),
                postal_code: None,
            },
            lines: vec![
                Line {
                    sku: "A".into(),
                    qty: 2,
                    price_cents: Some(250),
                },
                Line {
                    sku: "B".into(),
                    qty: 1,
                    price_cents: None,
                },
            ],
            status: Status::Shipped {
                carrier: "DHL".into(),
                tracking: None,
            },
            history: vec![Status::Pending, Status::Paid(500)],
        },
        Order {
            id: "o-2".into(),
            ship_to: Address {
                street_line: String::new(),
                postal_code: Some("1234".into()),
            },
            lines: Vec::new(),
            status: Status::Pending,
            history: Vec::new(),
        },
    ];
    for order in &orders {
        db.put(order).await?;
    }
    for order in &orders {
        assert_eq!(db.get(order.primary_key()).await?.as_ref(), Some(order));
    }

    // Typed paths reach into derived values: a whole enum, a member of a struct.
    let f = Order::fields();
    let updated = db
        .update(orders[0].primary_key())
        .set(f.status, Status::Paid(700))
        .set(f.ship_to.fields().street_line, "2 Side St")
        .condition(f.ship_to.fields().street_line.eq("1 Main St"))
        .await?;
    assert_eq!(updated.status, Status::Paid(700));
    assert_eq!(updated.ship_to.street_line, "2 Side St");
    assert_eq!(updated.lines, orders[0].lines);
    assert_eq!(db.get(orders[0].primary_key()).await?, Some(updated));
    Ok(())
}
