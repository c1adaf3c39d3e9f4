//! Fields whose values live only in index key attributes: an online shop writes
//! `GSI2PK = c#123` on its orders but no `CustomerId` attribute. Such a field is read from
//! the index key when the plain attribute is absent (and checked against it when present),
//! and with `key_only` a crate write adds no plain attribute the other program does not
//! write. Rows are written with the raw SDK first, as the shop does.

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::{local, DecodeErrorKind, Entity, Error, Item, Table, ValidationReason};

/// The shop's table: two overloaded GSIs.
#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
    gsi(name = "GSI2", pk = "GSI2PK", sk = "GSI2SK")
)]
pub struct Shop;

/// `PK = c#123`, `SK = c#123`: the customer holds its own id in its key.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, identify = "keys", pk = "c#{customer_id}", sk = "c#{customer_id}")]
pub struct Customer {
    #[dynamo(key_only)]
    pub customer_id: String,
    #[dynamo(rename = "Name")]
    pub name: String,
}

/// `PK = o#456`, `SK = o#456`, `GSI2PK = c#123`, `GSI2SK = o#456`: the customer only in
/// the index key.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, identify = "keys", pk = "o#{order_id}", sk = "o#{order_id}",
         index(GSI2, pk = "c#{customer_id}", sk = "o#{order_id}"))]
pub struct Order {
    #[dynamo(key_only)]
    pub order_id: String,
    #[dynamo(key_only)]
    pub customer_id: String,
    #[dynamo(rename = "Status")]
    pub status: String,
}

/// `PK = o#456`, `SK = p#9`, `GSI1PK = p#9`, `GSI1SK = o#456`, `GSI2PK = c#123`,
/// `GSI2SK = i#9`: the customer only in `GSI2PK`.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, identify = "keys", pk = "o#{order_id}", sk = "p#{product_id}",
         index(GSI1, pk = "p#{product_id}", sk = "o#{order_id}"),
         index(GSI2, pk = "c#{customer_id}", sk = "i#{product_id}"))]
pub struct OrderItem {
    #[dynamo(key_only)]
    pub order_id: String,
    #[dynamo(key_only)]
    pub product_id: String,
    #[dynamo(key_only)]
    pub customer_id: String,
    #[dynamo(rename = "Quantity")]
    pub quantity: u32,
}

/// `PK = s#77`, `SK = s#77`, `GSI1PK = o#456`, `GSI1SK = s#77`: the order only in the
/// index key; a sparse `GSI2` (`GSI2PK = w#{warehouse}`, `GSI2SK = o#{order_id}`) only
/// while the shipment is assigned to a warehouse. This entity asks for the order id as a
/// plain attribute too (no `key_only`).
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, identify = "keys", pk = "s#{shipment_id}", sk = "s#{shipment_id}",
         index(GSI1, pk = "o#{order_id}", sk = "s#{shipment_id}"),
         index(GSI2, pk = "w#{warehouse}", sk = "o#{order_id}"))]
pub struct Shipment {
    #[dynamo(key_only)]
    pub shipment_id: String,
    #[dynamo(rename = "OrderId")]
    pub order_id: String,
    #[dynamo(key_only)]
    pub warehouse: Option<String>,
    #[dynamo(rename = "Address")]
    pub address: String,
}

/// `PK = t#1`, `SK = t#1`, `GSI1PK = r#{region}`, `GSI1SK = {zone}`: a key-only field
/// that only a sparse index holds, when `region` is absent, would be lost.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, identify = "keys", pk = "t#{id}", sk = "t#{id}",
         index(GSI1, pk = "r#{region}", sk = "{zone}"))]
pub struct Depot {
    #[dynamo(key_only)]
    pub id: String,
    #[dynamo(rename = "Region")]
    pub region: Option<String>,
    #[dynamo(key_only)]
    pub zone: String,
}

fn row(attributes: &[(&str, &str)], numbers: &[(&str, &str)]) -> Item {
    let mut item: Item = attributes
        .iter()
        .map(|(k, v)| ((*k).to_owned(), s(v)))
        .collect();
    item.extend(
        numbers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), AttributeValue::N((*v).to_owned()))),
    );
    item
}

/// The shop's rows, as it writes them.
fn shop_rows() -> Vec<Item> {
    vec![
        row(&[("PK", "c#123"), ("SK", "c#123"), ("Name", "Ann")], &[]),
        row(
            &[
                ("PK", "o#456"),
                ("SK", "o#456"),
                ("GSI2PK", "c#123"),
                ("GSI2SK", "o#456"),
                ("Status", "PLACED"),
            ],
            &[],
        ),
        row(
            &[
                ("PK", "o#456"),
                ("SK", "p#9"),
                ("GSI1PK", "p#9"),
                ("GSI1SK", "o#456"),
                ("GSI2PK", "c#123"),
                ("GSI2SK", "i#9"),
            ],
            &[("Quantity", "2")],
        ),
        row(
            &[
                ("PK", "o#456"),
                ("SK", "p#10"),
                ("GSI1PK", "p#10"),
                ("GSI1SK", "o#456"),
                ("GSI2PK", "c#123"),
                ("GSI2SK", "i#10"),
            ],
            &[("Quantity", "1")],
        ),
        row(
            &[
                ("PK", "s#77"),
                ("SK", "s#77"),
                ("GSI1PK", "o#456"),
                ("GSI1SK", "s#77"),
                ("GSI2PK", "w#east"),
                ("GSI2SK", "o#456"),
                ("Address", "1 Main St"),
            ],
            &[],
        ),
    ]
}

fn key_of(item: &Item) -> Res<(String, String)> {
    let get = |k: &str| {
        item.get(k)
            .and_then(|v| v.as_s().ok())
            .cloned()
            .ok_or("no key")
    };
    Ok((get("PK")?, get("SK")?))
}

fn order_item(product: &str, quantity: u32) -> OrderItem {
    OrderItem {
        order_id: "456".into(),
        product_id: product.into(),
        customer_id: "123".into(),
        quantity,
    }
}

#[tokio::test]
async fn fields_held_only_by_index_keys_decode_query_and_write_back_byte_for_byte() -> TestResult {
    let db = local::fresh_table::<Shop>().await?;
    put_raw_rows(&db, shop_rows()).await?;

    // Decoded: the customer from GSI2PK, the order from GSI1PK.
    let order = db.get(Order::key("456")).consistent().await?;
    let order = order.ok_or("order not read")?;
    assert_eq!(
        order,
        Order {
            order_id: "456".into(),
            customer_id: "123".into(),
            status: "PLACED".into()
        }
    );
    let items = items_of(db.query(OrderItem::partition("456"))).await?;
    assert_eq!(items, vec![order_item("10", 1), order_item("9", 2)]);
    let shipment = db.get(Shipment::key("77")).consistent().await?;
    let shipment = shipment.ok_or("shipment not read")?;
    assert_eq!(
        shipment,
        Shipment {
            shipment_id: "77".into(),
            order_id: "456".into(),
            warehouse: Some("east".into()),
            address: "1 Main St".into()
        }
    );
    let customer = db.get(Customer::key("123")).consistent().await?;
    assert_eq!(customer.map(|c| c.name), Some("Ann".to_owned()));

    // Queried through the overloaded indexes.
    let of_customer = items_of(
        db.query(OrderItem::gsi2_partition("123"))
            .sk(OrderItem::gsi2_sk().product_id().eq("9")),
    )
    .await?;
    assert_eq!(of_customer, vec![order_item("9", 2)]);
    let orders = items_of(db.query(Order::gsi2_partition("123"))).await?;
    assert_eq!(orders, vec![order.clone()]);
    let of_product = items_of(db.query(OrderItem::gsi1_partition("10"))).await?;
    assert_eq!(of_product, vec![order_item("10", 1)]);
    let shipments = items_of(db.query(Shipment::gsi1_partition("456"))).await?;
    assert_eq!(shipments, vec![shipment.clone()]);
    let in_east = items_of(db.query(Shipment::gsi2_partition("east"))).await?;
    assert_eq!(in_east, vec![shipment.clone()]);

    // Written back by the crate: byte for byte what the shop wrote, except where the
    // entity asks for a plain attribute (the shipment's `OrderId`).
    db.put(&order).await?;
    for item in &items {
        db.put(item).await?;
    }
    db.put(&shipment).await?;
    let now = raw_table(&db).await?;
    for before in shop_rows() {
        let after = now.get(&key_of(&before)?).ok_or("row gone")?;
        if before.get("PK") == Some(&s("s#77")) {
            let mut expected = before.clone();
            expected.insert("OrderId".into(), s("456"));
            same_layout(&expected, after);
        } else {
            same_layout(&before, after);
        }
    }

    // A new order item, written by the crate, in the shop's format; the shop's own
    // query (by GSI2PK) finds it.
    db.put(&order_item("11", 5)).await?;
    let now = raw_table(&db).await?;
    let expected = row(
        &[
            ("PK", "o#456"),
            ("SK", "p#11"),
            ("GSI1PK", "p#11"),
            ("GSI1SK", "o#456"),
            ("GSI2PK", "c#123"),
            ("GSI2SK", "i#11"),
        ],
        &[("Quantity", "5")],
    );
    same_layout(
        &expected,
        now.get(&key_of(&expected)?).ok_or("not written")?,
    );
    let raw = db
        .client()
        .query()
        .table_name(db.table_name())
        .index_name("GSI2")
        .key_condition_expression("GSI2PK = :c AND begins_with(GSI2SK, :i)")
        .expression_attribute_values(":c", s("c#123"))
        .expression_attribute_values(":i", s("i#"))
        .send()
        .await?;
    assert_eq!(raw.items.map(|i| i.len()), Some(3));

    // An update of another field leaves the index key (and the missing attribute) alone.
    db.update(order.primary_key())
        .set(Order::fields().status, "SHIPPED".to_owned())
        .await?;
    let now = raw_table(&db).await?;
    let after = now
        .get(&("o#456".to_owned(), "o#456".to_owned()))
        .ok_or("order gone")?;
    assert!(!after.contains_key("CustomerId"), "{after:?}");
    assert_eq!(after.get("GSI2PK"), Some(&s("c#123")));
    Ok(())
}

#[tokio::test]
async fn a_plain_attribute_that_disagrees_with_the_index_key_is_refused() -> TestResult {
    let db = local::fresh_table::<Shop>().await?;
    let mut shipment = shop_rows().remove(4);
    shipment.insert("OrderId".into(), s("999"));
    put_raw(&db, shipment).await?;
    let err = db
        .get(Shipment::key("77"))
        .consistent()
        .await
        .expect_err("OrderId is not what GSI1PK holds");
    match &err {
        Error::Decode(e) => {
            assert!(
                matches!(e.kind, DecodeErrorKind::KeyMismatch { .. }),
                "{err}"
            );
            assert_eq!(e.attribute.as_deref(), Some("GSI1PK"));
        }
        other => panic!("expected a decode error, got {other:?}"),
    }

    // An absent sparse index key leaves an optional field absent.
    let db = local::fresh_table::<Shop>().await?;
    let mut unassigned = shop_rows().remove(4);
    unassigned.remove("GSI2PK");
    unassigned.remove("GSI2SK");
    put_raw(&db, unassigned).await?;
    let got = db.get(Shipment::key("77")).consistent().await?;
    assert_eq!(got.and_then(|s| s.warehouse), None);
    // A required field no key holds is missing, as a plain attribute would be.
    put_raw(
        &db,
        row(&[("PK", "s#78"), ("SK", "s#78"), ("Address", "x")], &[]),
    )
    .await?;
    let err = db
        .get(Shipment::key("78"))
        .consistent()
        .await
        .expect_err("no order id anywhere");
    assert!(err.to_string().contains("OrderId"), "{err}");
    Ok(())
}

#[tokio::test]
async fn a_key_only_field_no_written_key_would_hold_is_refused_before_sending() -> TestResult {
    let db = local::fresh_table::<Shop>().await?;
    let depot = Depot {
        id: "1".into(),
        region: None,
        zone: "z9".into(),
    };
    let err = db.put(&depot).await.expect_err("zone would be lost");
    assert_refused(&err, ValidationReason::IncompleteIndexTemplate);
    assert!(raw_table(&db).await?.is_empty());
    let err = db
        .batch_write()
        .put(&depot)
        .await
        .expect_err("zone would be lost");
    assert_refused(&err, ValidationReason::IncompleteIndexTemplate);
    // With the region, the index key holds the zone.
    let placed = Depot {
        region: Some("eu".into()),
        ..depot
    };
    db.put(&placed).await?;
    assert_eq!(
        db.get(placed.primary_key()).consistent().await?,
        Some(placed)
    );
    Ok(())
}

/// A migration repairs rows whose fields live only in index keys: `map` and `rewrite`
/// decode them (the customer from `GSI2PK`), write the change, and leave the index keys
/// and the absence of a plain `CustomerId` as the shop wrote them.
#[tokio::test]
async fn a_migration_decodes_fields_held_only_by_index_keys() -> TestResult {
    let db = local::fresh_table::<Shop>().await?;
    put_raw_rows(&db, shop_rows()).await?;
    let report = db
        .migration::<OrderItem>("more")
        .map(each(|i: &mut OrderItem| i.quantity += 1))
        .run()
        .await?;
    assert_eq!(
        (report.progress.changed, report.progress.failed),
        (2, 0),
        "{:?}",
        report.failures
    );
    let report = db.migration::<Order>("typed").rewrite().run().await?;
    assert_eq!(report.progress.failed, 0, "{:?}", report.failures);

    let rows = raw_table(&db).await?;
    let item = &rows[&("o#456".to_owned(), "p#9".to_owned())];
    assert_holds(
        item,
        &[
            ("Quantity", num("3")),
            ("GSI2PK", s("c#123")),
            ("GSI1PK", s("p#9")),
        ],
    );
    let order = &rows[&("o#456".to_owned(), "o#456".to_owned())];
    for row in [item, order] {
        assert!(
            !row.contains_key("CustomerId") && !row.contains_key("customer_id"),
            "no plain customer attribute added: {row:?}"
        );
    }
    assert_eq!(order.get("GSI2PK"), Some(&s("c#123")));
    let got = db
        .get(OrderItem::key(OrderItemKey {
            order_id: "456",
            product_id: "9",
        }))
        .await?
        .ok_or("still decodes")?;
    assert_eq!((got.customer_id.as_str(), got.quantity), ("123", 3));
    Ok(())
}
