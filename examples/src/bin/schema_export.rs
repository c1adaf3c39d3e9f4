//! Schema export: the single-table model of the examples (users, their orders, order
//! lines, an overloaded GSI, a sparse GSI of open orders, an LSI by status, TTL on
//! sessions) written out for the tools tables are designed and deployed with:
//!
//! - `table.cloudformation.json` and `table.cloudformation.yaml`: an
//!   `AWS::DynamoDB::Table` resource, exactly the table `Db::create_table` makes;
//! - `table.cdk.json`: the same as AWS CDK table properties;
//! - `model.workbench.json`: a NoSQL Workbench data model, one facet per entity;
//! - `access-patterns.md`: one row per entity, its key and index templates.
//!
//! Run: `cargo run -p examples --bin schema_export [DIR]` (default `target/schema-export`).

use dynamo_model::export::Export;
use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
    gsi(name = "OpenOrders", pk = "GSI2PK", sk = "GSI2SK", projection(include = ["total_cents"])),
    lsi(name = "ByStatus", sk = "LSI1SK"),
    ttl = "expires_at"
)]
struct Shop;

#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[dynamo(table = Shop, pk = "USER#{user_id}", sk = "PROFILE",
         index(GSI1, pk = "EMAIL#{email}", sk = "USER"))]
struct User {
    user_id: String,
    name: String,
    email: String,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[dynamo(table = Shop, pk = "USER#{user_id}", sk = "ORDER#{created_at}#{order_id}",
         index(GSI1, pk = "ORDERS", sk = "{created_at}#{order_id}"),
         index(OpenOrders, pk = "OPEN", sk = "{open_since}#{order_id}"),
         index(ByStatus, sk = "STATUS#{status}#{created_at}"))]
struct Order {
    user_id: String,
    order_id: Uuid,
    created_at: OffsetDateTime,
    status: String,
    total_cents: u64,
    open_since: Option<OffsetDateTime>,
    #[dynamo(version)]
    version: u64,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[dynamo(table = Shop, pk = "ORDER#{order_id}", sk = "LINE#{line}")]
struct OrderLine {
    order_id: Uuid,
    line: u32,
    sku: String,
    quantity: u32,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[dynamo(table = Shop, pk = "SESSION#{token}", sk = "SESSION")]
struct Session {
    token: String,
    user_id: String,
    #[dynamo(ttl)]
    expires_at: OffsetDateTime,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn main() -> Result<(), BoxError> {
    let dir = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from("target/schema-export"));
    std::fs::create_dir_all(&dir)?;
    let export = Export::of::<Shop>("shop");

    let cloudformation = export.cloudformation();
    let workbench = export.workbench("shop");
    let files = [
        (
            "table.cloudformation.json",
            serde_json::to_string_pretty(&cloudformation)?,
        ),
        ("table.cloudformation.yaml", export.cloudformation_yaml()),
        (
            "table.cdk.json",
            serde_json::to_string_pretty(&export.cdk())?,
        ),
        (
            "model.workbench.json",
            serde_json::to_string_pretty(&workbench)?,
        ),
        ("access-patterns.md", export.markdown()),
    ];
    for (name, text) in &files {
        let path = dir.join(name);
        std::fs::write(&path, text)?;
        println!("wrote {} ({} bytes)", path.display(), text.len());
    }

    // What it wrote, checked.
    let properties = &cloudformation["Resources"]["ShopTable"]["Properties"];
    let gsis = properties["GlobalSecondaryIndexes"]
        .as_array()
        .map_or(0, Vec::len);
    let lsis = properties["LocalSecondaryIndexes"]
        .as_array()
        .map_or(0, Vec::len);
    let facets: Vec<&str> = workbench["DataModel"][0]["TableFacets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["FacetName"].as_str())
        .collect();
    println!(
        "CloudFormation: {gsis} GSIs, {lsis} LSI, TTL on {}",
        properties["TimeToLiveSpecification"]["AttributeName"]
    );
    println!("Workbench facets: {}", facets.join(", "));
    assert_eq!((gsis, lsis), (2, 1));
    assert_eq!(facets, ["Order", "OrderLine", "Session", "User"]);
    assert!(export
        .markdown()
        .contains("| Order | `USER#{user_id}` | `ORDER#{created_at}#{order_id}` |"));
    println!("schema_export: 5 files");
    Ok(())
}
