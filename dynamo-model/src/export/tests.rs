use super::*;
use crate::{Entity, Table};

#[derive(Table)]
#[dynamo(
        pk = "PK",
        sk = "SK",
        gsi(name = "ByOwner", pk = "GPK", sk = "GSK", projection(include = ["title"])),
        gsi(name = "ByCity", pk = ["city"]),
        lsi(name = "ByDate", sk = "LSK", projection = keys_only),
        ttl = "expires"
    )]
struct Shop;

#[derive(Entity)]
#[dynamo(table = Shop, pk = "SHOP#{id}", sk = "SHOP",
             index(ByOwner, pk = "OWNER#{owner}", sk = "SHOP#{id}"),
             index(ByCity, pk = [city]))]
struct Store {
    id: String,
    owner: String,
    city: String,
    title: String,
}

#[derive(Entity)]
#[dynamo(table = Shop, pk = "ITEM#{sku}", sk = "ITEM", history)]
struct Item {
    sku: String,
    #[dynamo(version)]
    version: u64,
}

/// Formatted fields, whose attributes are in their format's form.
#[cfg(feature = "time")]
#[derive(Entity)]
#[dynamo(table = Shop, pk = "LOG#{id}", sk = "{at}",
             index(ByOwner, pk = "OWNER#{id}", sk = "{seen}"))]
struct Reading {
    id: String,
    #[dynamo(key_format = "epoch_seconds")]
    at: time::OffsetDateTime,
    #[dynamo(key_format = "rfc3339(0, no_z)")]
    seen: time::OffsetDateTime,
}

/// The table lists a formatted field's attribute with the type its format stores (an
/// epoch format a number, whatever the field's type), not the field type's own.
#[cfg(feature = "time")]
#[test]
fn formatted_fields_are_listed_with_the_type_their_format_stores() {
    let model = Export::of::<Shop>("Shop").workbench("Shop");
    let attributes = model["DataModel"][0]["NonKeyAttributes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let type_of = |name: &str| {
        attributes
            .iter()
            .find(|a| a["AttributeName"] == name)
            .and_then(|a| a["AttributeType"].as_str().map(str::to_owned))
    };
    assert_eq!(type_of("at").as_deref(), Some("N"), "{attributes:?}");
    assert_eq!(type_of("seen").as_deref(), Some("S"), "{attributes:?}");
}

/// An online shop laid out as AWS's published Workbench model of one
/// (`aws-samples/amazon-dynamodb-design-patterns`, `AnOnlineShop`): two overloaded
/// GSIs, entities writing one, both or neither, a provisioned table.
#[derive(Table)]
#[dynamo(
        pk = "PK",
        sk = "SK",
        gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
        gsi(name = "GSI2", pk = "GSI2PK", sk = "GSI2SK", projection(include = ["quantity"])),
        billing = "provisioned",
        capacity(read = 5, write = 5),
        ttl = "expires"
    )]
struct OnlineShop;

#[derive(crate::Attribute, Debug, Clone, PartialEq)]
struct Address {
    city: String,
    zip: String,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = OnlineShop, pk = "c#{customer_id}", sk = "c#{customer_id}")]
struct Customer {
    customer_id: String,
    email: String,
    address: Address,
    tags: std::collections::BTreeSet<String>,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = OnlineShop, entity_type = "orderItem", pk = "o#{order_id}", sk = "p#{product_id}",
             index(GSI1, pk = "p#{product_id}", sk = "{placed}"),
             index(GSI2, pk = "c#{customer_id}", sk = "p#{placed}"))]
struct OrderItem {
    order_id: String,
    product_id: String,
    customer_id: String,
    placed: String,
    quantity: u32,
    gift: bool,
    note: Option<String>,
    lines: Vec<u32>,
    receipt: crate::Binary,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = OnlineShop, entity_type = "warehouseItem", pk = "p#{product_id}", sk = "w#{warehouse_id}",
             index(GSI2, pk = "w#{warehouse_id}", sk = "p#{product_id}"))]
struct WarehouseItem {
    product_id: String,
    warehouse_id: String,
    quantity: u32,
    /// Stored as given: its type comes from the samples.
    extra: AttributeValue,
}

fn customer(id: &str) -> Customer {
    Customer {
        customer_id: id.into(),
        email: format!("{id}@example.com"),
        address: Address {
            city: "Goteborg".into(),
            zip: "41111".into(),
        },
        tags: ["vip".to_owned(), "new".to_owned()].into(),
    }
}

fn order_item(product: &str, note: Option<&str>) -> OrderItem {
    OrderItem {
        order_id: "12345".into(),
        product_id: product.into(),
        customer_id: "12345".into(),
        placed: "2020-06-21T19:18:00".into(),
        quantity: 2,
        gift: note.is_some(),
        note: note.map(str::to_owned),
        lines: vec![1, 2],
        receipt: crate::Binary(vec![0, 159, 146, 150]),
    }
}

fn warehouse_item(product: &str) -> WarehouseItem {
    WarehouseItem {
        product_id: product.into(),
        warehouse_id: "w1".into(),
        quantity: 50,
        extra: AttributeValue::N("7".into()),
    }
}

fn shop_export() -> Result<Export, Error> {
    let mut export = Export::of::<OnlineShop>("OnlineShop");
    export
        .add_sample(&customer("12345"))?
        .add_sample(&order_item("p1", Some("wrap it")))?
        .add_sample(&order_item("p2", None))?
        .add_sample(&warehouse_item("p1"))?;
    Ok(export)
}

/// The whole model, as checked in (`tests/data/workbench_online_shop.json`): compared
/// by hand with AWS's `AnOnlineShop` model as Workbench saved it.
#[test]
fn the_workbench_model_of_a_representative_design_is_the_checked_in_one() -> Result<(), Error> {
    let model = shop_export()?.workbench("AnOnlineShop");
    let expected: Value = serde_json::from_str(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/workbench_online_shop.json"
    )))
    .map_err(|e| json_error(e.to_string()))?;
    assert_eq!(
        model,
        expected,
        "{}",
        serde_json::to_string_pretty(&model).unwrap_or_default()
    );
    Ok(())
}

/// What Workbench needs to show a facet's items in the table and in each index view:
/// every attribute a facet names is defined by the table with a type; every attribute
/// a sample item of the facet holds (index keys included) is named by the facet or is a
/// table key, with the table's type; every GSI key attribute an entity's templates
/// write is named by its facet.
#[test]
fn every_facet_attribute_is_defined_with_a_type_and_every_written_index_key_is_listed()
-> Result<(), Error> {
    let model = shop_export()?.workbench("AnOnlineShop");
    let table = &model["DataModel"][0];
    let key_names: Vec<&str> = ["PartitionKey", "SortKey"]
        .iter()
        .filter_map(|k| table["KeyAttributes"][k]["AttributeName"].as_str())
        .collect();
    let defined: std::collections::HashMap<&str, &str> = table["NonKeyAttributes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|a| Some((a["AttributeName"].as_str()?, a["AttributeType"].as_str()?)))
        .collect();
    let types = ["S", "N", "B", "BOOL", "NULL", "L", "M", "SS", "NS", "BS"];
    for ty in defined.values() {
        assert!(types.contains(ty), "{ty}");
    }
    let facets = table["TableFacets"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    assert_eq!(facets.len(), 3);
    for facet in facets {
        let name = facet["FacetName"].as_str().unwrap_or("");
        let listed: Vec<&str> = facet["NonKeyAttributes"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        for attribute in &listed {
            assert!(
                defined.contains_key(attribute),
                "{name}: {attribute} undefined"
            );
        }
        let data = facet["TableData"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        assert!(!data.is_empty(), "{name} has samples");
        for item in data {
            for (attribute, value) in item.as_object().into_iter().flatten() {
                if key_names.contains(&attribute.as_str()) {
                    continue;
                }
                assert!(
                    listed.contains(&attribute.as_str()),
                    "{name}: {attribute} not listed"
                );
                let ty = value
                    .as_object()
                    .and_then(|v| v.keys().next())
                    .map(String::as_str);
                assert_eq!(
                    ty,
                    defined.get(attribute.as_str()).copied(),
                    "{name}: {attribute}"
                );
            }
        }
    }
    let listed = |facet: &str| -> Vec<String> {
        facets
            .iter()
            .find(|f| f["FacetName"] == facet)
            .and_then(|f| f["NonKeyAttributes"].as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let order = listed("orderItem");
    for attribute in ["GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK"] {
        assert!(order.iter().any(|a| a == attribute), "{order:?}");
    }
    let warehouse = listed("warehouseItem");
    assert!(warehouse.iter().any(|a| a == "GSI2PK"), "{warehouse:?}");
    assert!(!warehouse.iter().any(|a| a == "GSI1PK"), "{warehouse:?}");
    assert!(!listed("Customer").iter().any(|a| a.starts_with("GSI")));
    Ok(())
}

/// The sample data reads back into the entities it was made of.
#[test]
fn workbench_sample_data_round_trips() -> Result<(), Error> {
    let model = shop_export()?.workbench("AnOnlineShop");
    // Through text, as a saved model is read.
    let text = serde_json::to_string(&model).map_err(|e| json_error(e.to_string()))?;
    let model: Value = serde_json::from_str(&text).map_err(|e| json_error(e.to_string()))?;
    let items = workbench_items(&model)?;
    assert_eq!(items.len(), 4);
    let mut customers = Vec::new();
    let mut orders = Vec::new();
    let mut warehouse = Vec::new();
    for item in items {
        match item.get("_type") {
            Some(AttributeValue::S(t)) if t == "Customer" => {
                customers.push(Customer::from_item(item)?)
            }
            Some(AttributeValue::S(t)) if t == "orderItem" => {
                orders.push(OrderItem::from_item(item)?)
            }
            _ => warehouse.push(WarehouseItem::from_item(item)?),
        }
    }
    assert_eq!(customers, vec![customer("12345")]);
    assert_eq!(
        orders,
        vec![order_item("p1", Some("wrap it")), order_item("p2", None)]
    );
    assert_eq!(warehouse, vec![warehouse_item("p1")]);
    // Every value type survives, bit for bit.
    let all = AttributeValue::M(
        [
            ("s".to_owned(), AttributeValue::S("x".into())),
            ("b".to_owned(), AttributeValue::B(Blob::new(vec![0u8, 255]))),
            (
                "bs".to_owned(),
                AttributeValue::Bs(vec![Blob::new(vec![1u8])]),
            ),
            (
                "ns".to_owned(),
                AttributeValue::Ns(vec!["1".into(), "2.5".into()]),
            ),
            ("null".to_owned(), AttributeValue::Null(true)),
            (
                "l".to_owned(),
                AttributeValue::L(vec![AttributeValue::Bool(false)]),
            ),
        ]
        .into(),
    );
    assert_eq!(json_value(&value_json(&all), "v")?, all);
    Ok(())
}

#[test]
fn workbench_items_refuses_what_is_not_dynamodb_json() {
    for data in [
        json!([{"a": {"S": 1}}]),
        json!([{"a": {"X": "1"}}]),
        json!([{"a": {"B": "not base64!"}}]),
        json!([{"a": {"S": "1", "N": "1"}}]),
        json!(["item"]),
    ] {
        let model = json!({"DataModel": [{"TableData": data}]});
        let err = workbench_items(&model).map(|_| ()).err();
        assert_eq!(
            err.and_then(|e| e.validation_reason()),
            Some(ValidationReason::InvalidValue),
            "{model}"
        );
    }
}

#[test]
fn a_sample_of_another_table_is_refused() {
    let mut export = Export::of::<Shop>("shops");
    let err = export.add_sample(&customer("1")).map(|_| ()).err();
    assert_eq!(
        err.and_then(|e| e.validation_reason()),
        Some(ValidationReason::WrongKeySpace)
    );
}

#[test]
fn capacity_and_stream_reach_every_export() -> Result<(), Error> {
    let export = Export::of::<OnlineShop>("shop");
    let cfn = export.cloudformation_properties();
    assert_eq!(cfn["BillingMode"], "PROVISIONED");
    assert_eq!(
        cfn["ProvisionedThroughput"],
        json!({"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
    );
    assert_eq!(
        cfn["GlobalSecondaryIndexes"][1]["ProvisionedThroughput"],
        json!({"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
    );
    assert!(cfn.get("StreamSpecification").is_none());
    let cdk = export.cdk();
    assert_eq!(cdk["billingMode"], "PROVISIONED");
    assert_eq!(
        (cdk["readCapacity"].clone(), cdk["writeCapacity"].clone()),
        (json!(5), json!(5))
    );
    assert_eq!(cdk["globalSecondaryIndexes"][0]["readCapacity"], 5);
    let wb = export.workbench("m");
    assert_eq!(wb["DataModel"][0]["BillingMode"], "PROVISIONED");
    assert_eq!(
        wb["DataModel"][0]["ProvisionedCapacitySettings"]["ProvisionedThroughput"],
        json!({"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
    );
    assert!(export.markdown().contains("; provisioned, 5 RCU / 5 WCU."));

    let stage = TableOptions::declared(&OnlineShop::SCHEMA)
        .index_throughput("GSI1", Throughput { read: 7, write: 3 })
        .stream(Some(crate::schema::StreamView::NewAndOldImages));
    let export = export.with_options(&stage)?;
    let cfn = export.cloudformation_properties();
    assert_eq!(
        cfn["StreamSpecification"],
        json!({"StreamViewType": "NEW_AND_OLD_IMAGES"})
    );
    assert_eq!(
        cfn["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"],
        json!({"ReadCapacityUnits": 7, "WriteCapacityUnits": 3})
    );
    let cdk = export.cdk();
    assert_eq!(cdk["stream"], "NEW_AND_OLD_IMAGES");
    assert_eq!(cdk["globalSecondaryIndexes"][0]["writeCapacity"], 3);
    assert!(export.markdown().contains("; stream NEW_AND_OLD_IMAGES."));

    // On demand: no units anywhere.
    let export = export.with_options(&TableOptions::declared(&OnlineShop::SCHEMA).on_demand())?;
    let cfn = export.cloudformation_properties();
    assert_eq!(cfn["BillingMode"], "PAY_PER_REQUEST");
    assert!(cfn.get("ProvisionedThroughput").is_none());
    assert!(
        cfn["GlobalSecondaryIndexes"][0]
            .get("ProvisionedThroughput")
            .is_none()
    );
    assert!(export.cdk().get("readCapacity").is_none());
    assert!(
        export.workbench("m")["DataModel"][0]
            .get("ProvisionedCapacitySettings")
            .is_none()
    );
    Ok(())
}

#[test]
fn markdown_has_a_row_per_entity_and_index() {
    let md = Export::of::<Shop>("shops").markdown();
    assert!(
        md.contains("| ByOwner | GSI | `GPK` HASH, `GSK` RANGE | INCLUDE title |"),
        "{md}"
    );
    assert!(md.contains("| ByCity | GSI | `city` HASH | ALL |"), "{md}");
    assert!(
        md.contains("| ByDate | LSI | `PK` HASH, `LSK` RANGE | KEYS_ONLY |"),
        "{md}"
    );
    assert!(
            md.contains("| Store | `SHOP#{id}` | `SHOP` | ByOwner: `OWNER#{owner}` / `SHOP#{id}`<br>ByCity: `[city]` / - | - | - |"),
            "{md}"
        );
    assert!(
        md.contains(
            "| Item | `ITEM#{sku}` | `ITEM` | - | - | versioned history, optimistic locking |"
        ),
        "{md}"
    );
}

#[test]
fn yaml_is_the_json_in_block_style() {
    let value = json!({"a": [{"b": 1, "c": "x: y"}, 2], "d": {}, "e": [], "f": true});
    let mut out = String::new();
    yaml(&value, 0, &mut out);
    assert_eq!(
        out,
        "\"a\":\n  - \"b\": 1\n    \"c\": \"x: y\"\n  - 2\n\"d\": {}\n\"e\": []\n\"f\": true\n"
    );
}

#[test]
fn cdk_lists_a_multi_attribute_key_and_omits_an_lsis_partition_key() {
    let cdk = Export::of::<Shop>("shops").cdk();
    assert_eq!(cdk["partitionKey"], json!({"name": "PK", "type": "STRING"}));
    assert_eq!(cdk["timeToLiveAttribute"], "expires");
    let gsis = cdk["globalSecondaryIndexes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(gsis[0]["nonKeyAttributes"], json!(["title"]));
    assert_eq!(
        gsis[1]["partitionKey"],
        json!({"name": "city", "type": "STRING"})
    );
    let lsi = &cdk["localSecondaryIndexes"][0];
    assert_eq!(lsi["sortKey"], json!({"name": "LSK", "type": "STRING"}));
    assert!(lsi.get("partitionKey").is_none());
}
