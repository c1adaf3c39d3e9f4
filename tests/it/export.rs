//! Schema exports (`dynamo_model::export`): the CloudFormation resource uses only the
//! property names and types the `AWS::DynamoDB::Table` documentation lists and describes
//! exactly the table `create_table` makes on DynamoDB Local; the Workbench model has one
//! facet per entity with its key templates.

use crate::common::*;
use dynamo_model::export::Export;
use dynamo_model::{local, Entity, Table};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// What a property holds, per the CloudFormation resource reference.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Str,
    Bool,
    /// A whole number.
    Int,
    /// A list of strings.
    Strings,
    /// An object of the named property type.
    Object(&'static str),
    /// A list of objects of the named property type.
    Objects(&'static str),
}

/// `AWS::DynamoDB::Table` and the property types it uses, as documented
/// (AWS CloudFormation User Guide, "AWS::DynamoDB::Table" and its property types): every
/// property of each, with its type. Properties the crate never emits are listed too, so
/// the check is against the documentation, not against what the exporter happens to write.
fn documented() -> BTreeMap<&'static str, Vec<(&'static str, Kind)>> {
    use Kind::*;
    BTreeMap::from([
        (
            "AWS::DynamoDB::Table",
            vec![
                ("AttributeDefinitions", Objects("AttributeDefinition")),
                ("BillingMode", Str),
                (
                    "ContributorInsightsSpecification",
                    Object("ContributorInsightsSpecification"),
                ),
                ("DeletionProtectionEnabled", Bool),
                ("GlobalSecondaryIndexes", Objects("GlobalSecondaryIndex")),
                (
                    "ImportSourceSpecification",
                    Object("ImportSourceSpecification"),
                ),
                ("KeySchema", Objects("KeySchema")),
                (
                    "KinesisStreamSpecification",
                    Object("KinesisStreamSpecification"),
                ),
                ("LocalSecondaryIndexes", Objects("LocalSecondaryIndex")),
                ("OnDemandThroughput", Object("OnDemandThroughput")),
                (
                    "PointInTimeRecoverySpecification",
                    Object("PointInTimeRecoverySpecification"),
                ),
                ("ProvisionedThroughput", Object("ProvisionedThroughput")),
                ("ResourcePolicy", Object("ResourcePolicy")),
                ("SSESpecification", Object("SSESpecification")),
                ("StreamSpecification", Object("StreamSpecification")),
                ("TableClass", Str),
                ("TableName", Str),
                ("Tags", Objects("Tag")),
                ("TimeToLiveSpecification", Object("TimeToLiveSpecification")),
                ("WarmThroughput", Object("WarmThroughput")),
            ],
        ),
        (
            "AttributeDefinition",
            vec![("AttributeName", Str), ("AttributeType", Str)],
        ),
        ("KeySchema", vec![("AttributeName", Str), ("KeyType", Str)]),
        (
            "GlobalSecondaryIndex",
            vec![
                (
                    "ContributorInsightsSpecification",
                    Object("ContributorInsightsSpecification"),
                ),
                ("IndexName", Str),
                ("KeySchema", Objects("KeySchema")),
                ("OnDemandThroughput", Object("OnDemandThroughput")),
                ("Projection", Object("Projection")),
                ("ProvisionedThroughput", Object("ProvisionedThroughput")),
                ("WarmThroughput", Object("WarmThroughput")),
            ],
        ),
        (
            "LocalSecondaryIndex",
            vec![
                ("IndexName", Str),
                ("KeySchema", Objects("KeySchema")),
                ("Projection", Object("Projection")),
            ],
        ),
        (
            "Projection",
            vec![("NonKeyAttributes", Strings), ("ProjectionType", Str)],
        ),
        (
            "TimeToLiveSpecification",
            vec![("AttributeName", Str), ("Enabled", Bool)],
        ),
        (
            "ProvisionedThroughput",
            vec![("ReadCapacityUnits", Int), ("WriteCapacityUnits", Int)],
        ),
        (
            "StreamSpecification",
            vec![
                ("ResourcePolicy", Object("ResourcePolicy")),
                ("StreamViewType", Str),
            ],
        ),
    ])
}

/// Checks `value` as an object of property type `ty`: every key documented, with the
/// documented type; returns the number of properties checked.
fn check(ty: &str, value: &Value, docs: &BTreeMap<&str, Vec<(&str, Kind)>>) -> usize {
    let properties = docs
        .get(ty)
        .unwrap_or_else(|| panic!("{ty} is not documented here"));
    let object = value
        .as_object()
        .unwrap_or_else(|| panic!("{ty} must be an object: {value}"));
    let mut checked = 0;
    for (key, v) in object {
        let (_, kind) = properties
            .iter()
            .find(|(name, _)| name == key)
            .unwrap_or_else(|| panic!("{ty} has no documented property {key}"));
        checked += 1;
        match kind {
            Kind::Str => assert!(v.is_string(), "{ty}.{key} must be a string: {v}"),
            Kind::Bool => assert!(v.is_boolean(), "{ty}.{key} must be a boolean: {v}"),
            Kind::Int => assert!(v.is_u64(), "{ty}.{key} must be a whole number: {v}"),
            Kind::Strings => assert!(
                v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
                "{ty}.{key} must be a list of strings: {v}"
            ),
            Kind::Object(inner) => checked += check(inner, v, docs),
            Kind::Objects(inner) => {
                let items = v
                    .as_array()
                    .unwrap_or_else(|| panic!("{ty}.{key} must be a list: {v}"));
                for item in items {
                    checked += check(inner, item, docs);
                }
            }
        }
    }
    checked
}

#[test]
fn the_cloudformation_resource_uses_only_documented_properties() {
    let template = Export::of::<App>("app-prod").cloudformation();
    assert_eq!(template["AWSTemplateFormatVersion"], "2010-09-09");
    let resources = template["Resources"].as_object().expect("Resources");
    assert_eq!(resources.len(), 1);
    let resource = &resources["AppTable"];
    assert_eq!(resource["Type"], "AWS::DynamoDB::Table");
    let docs = documented();
    let checked = check("AWS::DynamoDB::Table", &resource["Properties"], &docs);
    assert!(checked > 40, "{checked} properties checked");
    // Documented values of the enumerations.
    let properties = &resource["Properties"];
    assert_eq!(properties["BillingMode"], "PAY_PER_REQUEST");
    for index in properties["GlobalSecondaryIndexes"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(
            properties["LocalSecondaryIndexes"]
                .as_array()
                .into_iter()
                .flatten(),
        )
    {
        let projection = index["Projection"]["ProjectionType"].as_str().unwrap_or("");
        assert!(
            ["ALL", "KEYS_ONLY", "INCLUDE"].contains(&projection),
            "{index}"
        );
        assert_eq!(
            index["Projection"].get("NonKeyAttributes").is_some(),
            projection == "INCLUDE"
        );
    }
    for key in properties["KeySchema"].as_array().into_iter().flatten() {
        assert!(["HASH", "RANGE"].contains(&key["KeyType"].as_str().unwrap_or("")));
    }
    // The YAML rendering holds the same names.
    let yaml = Export::of::<App>("app-prod").cloudformation_yaml();
    assert!(
        yaml.contains("\"Type\": \"AWS::DynamoDB::Table\""),
        "{yaml}"
    );
    assert!(yaml.contains("\"IndexName\": \"GSI3\""), "{yaml}");
}

/// A provisioned table with a stream: its capacity and stream properties are documented
/// ones with documented values.
#[test]
fn provisioned_capacity_and_the_stream_use_only_documented_properties() {
    let properties =
        Export::of::<crate::table_capacity::Provisioned>("app-prod").cloudformation_properties();
    let checked = check("AWS::DynamoDB::Table", &properties, &documented());
    assert!(checked > 40, "{checked} properties checked");
    assert_eq!(properties["BillingMode"], "PROVISIONED");
    assert!(properties["ProvisionedThroughput"].is_object());
    for index in properties["GlobalSecondaryIndexes"]
        .as_array()
        .into_iter()
        .flatten()
    {
        assert!(index["ProvisionedThroughput"].is_object(), "{index}");
    }
    assert!(
        ["KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES"].contains(
            &properties["StreamSpecification"]["StreamViewType"]
                .as_str()
                .unwrap_or("")
        ),
        "{properties}"
    );
}

/// Index name → (key schema, (projection type, non-key attributes)).
/// An index's key schema and projection.
type IndexShape = (Vec<(String, String)>, (String, BTreeSet<String>));
type Indexes = BTreeMap<String, IndexShape>;

fn key_schema(
    keys: &[dynamo_model::aws_sdk_dynamodb::types::KeySchemaElement],
) -> Vec<(String, String)> {
    keys.iter()
        .map(|k| {
            (
                k.attribute_name().to_owned(),
                k.key_type().as_str().to_owned(),
            )
        })
        .collect()
}

/// `(AttributeName, <second>)` of each entry of a CloudFormation list.
fn cfn_named(value: &Value, second: &str) -> Vec<(String, String)> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .map(|k| {
            (
                k["AttributeName"].as_str().unwrap_or("").to_owned(),
                k[second].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

fn cfn_key_schema(value: &Value) -> Vec<(String, String)> {
    cfn_named(value, "KeyType")
}

fn cfn_projection(value: &Value) -> (String, BTreeSet<String>) {
    (
        value["ProjectionType"].as_str().unwrap_or("").to_owned(),
        value["NonKeyAttributes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
    )
}

fn sdk_projection(
    p: Option<&dynamo_model::aws_sdk_dynamodb::types::Projection>,
) -> (String, BTreeSet<String>) {
    (
        p.and_then(|p| p.projection_type())
            .map_or(String::new(), |t| t.as_str().to_owned()),
        p.map(|p| p.non_key_attributes().iter().cloned().collect())
            .unwrap_or_default(),
    )
}

/// One index as `describe_table` tells it: name, keys, projection.
fn sdk_index(
    name: Option<&str>,
    keys: &[dynamo_model::aws_sdk_dynamodb::types::KeySchemaElement],
    projection: Option<&dynamo_model::aws_sdk_dynamodb::types::Projection>,
) -> (String, IndexShape) {
    (
        name.unwrap_or("").to_owned(),
        (key_schema(keys), sdk_projection(projection)),
    )
}

/// The indexes of a CloudFormation list (`GlobalSecondaryIndexes` or
/// `LocalSecondaryIndexes`): name, keys, projection.
fn cfn_indexes(value: &Value) -> Indexes {
    value
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| {
            (
                i["IndexName"].as_str().unwrap_or("").to_owned(),
                (
                    cfn_key_schema(&i["KeySchema"]),
                    cfn_projection(&i["Projection"]),
                ),
            )
        })
        .collect()
}

/// The exported resource describes the table `create_table` made: keys, attribute
/// definitions, every index with its keys and projection, TTL.
#[tokio::test]
async fn the_cloudformation_resource_is_the_table_create_table_makes() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let template = Export::of::<App>(db.table_name()).cloudformation();
    let properties = &template["Resources"]["AppTable"]["Properties"];
    let table = &describe(&db).await?;
    assert_eq!(properties["TableName"], db.table_name());
    assert_eq!(
        key_schema(table.key_schema()),
        cfn_key_schema(&properties["KeySchema"])
    );
    let definitions: BTreeSet<(String, String)> = table
        .attribute_definitions()
        .iter()
        .map(|d| {
            (
                d.attribute_name().to_owned(),
                d.attribute_type().as_str().to_owned(),
            )
        })
        .collect();
    let exported: BTreeSet<(String, String)> =
        cfn_named(&properties["AttributeDefinitions"], "AttributeType")
            .into_iter()
            .collect();
    assert_eq!(definitions, exported);
    let gsis: Indexes = table
        .global_secondary_indexes()
        .iter()
        .map(|g| sdk_index(g.index_name(), g.key_schema(), g.projection()))
        .collect();
    let lsis: Indexes = table
        .local_secondary_indexes()
        .iter()
        .map(|l| sdk_index(l.index_name(), l.key_schema(), l.projection()))
        .collect();
    for (made, exported) in [
        (&gsis, "GlobalSecondaryIndexes"),
        (&lsis, "LocalSecondaryIndexes"),
    ] {
        assert_eq!(made, &cfn_indexes(&properties[exported]), "{exported}");
    }
    assert_eq!(gsis.len(), 3);
    assert_eq!(
        ttl_attribute(&db).await?.as_deref(),
        properties["TimeToLiveSpecification"]["AttributeName"].as_str()
    );
    Ok(())
}

#[test]
fn the_workbench_model_has_a_facet_per_entity_with_its_templates() {
    let model = Export::of::<App>("app-prod").workbench("app");
    assert_eq!(model["ModelMetadata"]["Version"], "3.0");
    assert_eq!(model["ModelMetadata"]["AWSService"], "Amazon DynamoDB");
    let table = &model["DataModel"][0];
    assert_eq!(
        table["KeyAttributes"]["PartitionKey"]["AttributeName"],
        "PK"
    );
    assert_eq!(table["KeyAttributes"]["SortKey"]["AttributeName"], "SK");
    let facets = table["TableFacets"].as_array().expect("TableFacets");
    let facet = |name: &str| {
        facets
            .iter()
            .find(|f| f["FacetName"] == name)
            .unwrap_or_else(|| panic!("facet {name}"))
            .clone()
    };
    let user = facet("User");
    assert_eq!(
        user["KeyAttributeAlias"]["PartitionKeyAlias"],
        "USER#{user_id}"
    );
    assert_eq!(user["KeyAttributeAlias"]["SortKeyAlias"], "PROFILE");
    let attributes: Vec<&str> = user["NonKeyAttributes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for a in ["_type", "displayName", "email", "loginCount", "tags"] {
        assert!(attributes.contains(&a), "{a} in {attributes:?}");
    }
    let order = facet("Order");
    assert_eq!(
        order["KeyAttributeAlias"]["SortKeyAlias"],
        "ORDER#{created_at}#{order_id}"
    );
    // One facet per entity type of the table compiled into this program, no more.
    let names: Vec<&str> = facets
        .iter()
        .filter_map(|f| f["FacetName"].as_str())
        .collect();
    let unique: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(names.len(), unique.len(), "{names:?}");
    let registered: BTreeSet<&str> = dynamo_model::registry::entities_of::<App>()
        .iter()
        .map(|e| e.entity_type)
        .collect();
    assert_eq!(unique, registered);
    // Every GSI, with its key attributes.
    let gsis = table["GlobalSecondaryIndexes"].as_array().expect("GSIs");
    assert_eq!(gsis.len(), 3);
    assert_eq!(
        gsis[0]["KeyAttributes"]["PartitionKey"]["AttributeName"],
        "GSI1PK"
    );
}

// ------------------- CloudFormation, YAML and Workbench for tables of every key shape

#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "ByCategory", pk = ["category"], sk = ["score:N"]),
    gsi(name = "ByType", pk = "TPK", sk = "SK", projection = keys_only),
    lsi(name = "ByRank", sk = ["rank:N"], projection(include = ["title", "body"])),
    ttl = "expires"
)]
struct Exported;

#[derive(Entity, serde::Serialize, serde::Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Exported, pk = "POST#{id}", sk = "POST",
         index(ByCategory, pk = [category], sk = [score]),
         index(ByRank, sk = [rank]))]
struct Post {
    id: String,
    title: String,
    body: String,
    category: String,
    score: i64,
    rank: i64,
    #[dynamo(ttl)]
    expires: i64,
}

#[derive(Table)]
#[dynamo(pk = "PK")]
struct Flat;

#[derive(Entity, serde::Serialize, serde::Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Flat, pk = "{id}")]
struct FlatThing {
    id: String,
    yes: bool,
}

fn names(value: &Value, key: &str) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v[key].as_str().map(str::to_owned))
        .collect()
}

/// CloudFormation's rules for `AWS::DynamoDB::Table`: every attribute of a key schema
/// (table or index) defined exactly once, no definition unused, an LSI on the table's
/// partition key, INCLUDE with its non-key attributes, KEYS_ONLY without.
fn check_cloudformation(props: &Value) {
    let defined = names(&props["AttributeDefinitions"], "AttributeName");
    let unique: BTreeSet<&String> = defined.iter().collect();
    assert_eq!(unique.len(), defined.len(), "defined twice: {defined:?}");
    let mut used: BTreeSet<String> = names(&props["KeySchema"], "AttributeName")
        .into_iter()
        .collect();
    for property in ["GlobalSecondaryIndexes", "LocalSecondaryIndexes"] {
        for index in props[property].as_array().into_iter().flatten() {
            used.extend(names(&index["KeySchema"], "AttributeName"));
            let projection = &index["Projection"];
            match projection["ProjectionType"].as_str() {
                Some("INCLUDE") => {
                    assert!(projection["NonKeyAttributes"]
                        .as_array()
                        .is_some_and(|a| !a.is_empty()))
                }
                Some("ALL" | "KEYS_ONLY") => {
                    assert!(projection.get("NonKeyAttributes").is_none(), "{projection}")
                }
                other => panic!("projection {other:?}"),
            }
            if property == "LocalSecondaryIndexes" {
                assert_eq!(
                    index["KeySchema"][0]["AttributeName"],
                    props["KeySchema"][0]["AttributeName"]
                );
                assert_eq!(index["KeySchema"][0]["KeyType"], "HASH");
            }
        }
    }
    let defined: BTreeSet<String> = defined.into_iter().collect();
    assert_eq!(defined, used, "definitions and key schemas differ");
}

#[test]
fn cloudformation_is_valid_for_tables_of_every_key_shape() {
    let export = Export::of::<Exported>("exported");
    let props = export.cloudformation_properties();
    check_cloudformation(&props);
    let defs: BTreeMap<String, String> = props["AttributeDefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            (
                d["AttributeName"].as_str().unwrap_or_default().to_owned(),
                d["AttributeType"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(defs["score"], "N");
    assert_eq!(defs["rank"], "N");
    assert_eq!(defs["SK"], "S");
    assert_eq!(props["TimeToLiveSpecification"]["AttributeName"], "expires");
    let flat = Export::of::<Flat>("flat");
    let props = flat.cloudformation_properties();
    check_cloudformation(&props);
    assert_eq!(props["KeySchema"].as_array().map(Vec::len), Some(1));
    assert!(props.get("TimeToLiveSpecification").is_none());
    assert!(props.get("LocalSecondaryIndexes").is_none());
    assert_eq!(flat.logical_id(), "FlatTable");
    // The Markdown has no sort key for the flat table, a row for the entity.
    let md = flat.markdown();
    assert!(md.contains("Partition key `PK`; entity"), "{md}");
    assert!(md.contains("| FlatThing | `{id}` | - |"), "{md}");
}

/// A table name YAML would read as something else (a boolean, a number, a comment, a
/// flow collection) stays a string in the YAML template; the YAML is the JSON.
#[test]
fn yaml_quotes_table_names_yaml_would_misread() {
    for name in [
        "yes",
        "null",
        "0x10",
        "1e3",
        "# not a comment",
        "[a]",
        "a: b",
        "- x",
        "\"q\"\\",
        "tab\there",
    ] {
        let yaml = Export::of::<Exported>(name).cloudformation_yaml();
        let quoted = serde_json::to_string(name).unwrap_or_default();
        assert!(
            yaml.contains(&format!("\"TableName\": {quoted}\n")),
            "{name}: {yaml}"
        );
    }
    let yaml = Export::of::<Exported>("t").cloudformation_yaml();
    // Every line is `key: value`, `key:` or a `- ` item, indented by even spaces.
    for line in yaml.lines() {
        let trimmed = line.trim_start();
        assert_eq!((line.len() - trimmed.len()) % 2, 0, "{line}");
        assert!(
            trimmed.starts_with('"') || trimmed.starts_with("- "),
            "{line}"
        );
    }
    assert!(yaml.contains("\"NonKeyAttributes\":\n"), "{yaml}");
}

/// Workbench facets: one per entity, key aliases the templates; keys are not non-key
/// attributes; the LSI's key and the GSI's key attributes keep their types.
#[test]
fn workbench_facets_alias_the_templates_and_keep_key_types() {
    let model = Export::of::<Exported>("exported").workbench("m");
    let table = &model["DataModel"][0];
    let facets = table["TableFacets"].as_array().cloned().unwrap_or_default();
    assert_eq!(facets.len(), 1);
    assert_eq!(facets[0]["FacetName"], "Post");
    assert_eq!(
        facets[0]["KeyAttributeAlias"]["PartitionKeyAlias"],
        "POST#{id}"
    );
    let attrs: Vec<&str> = facets[0]["NonKeyAttributes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        !attrs.contains(&"PK") && !attrs.contains(&"SK"),
        "{attrs:?}"
    );
    let gsis = table["GlobalSecondaryIndexes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let expiry = gsis
        .iter()
        .find(|g| g["IndexName"] == "ByCategory")
        .cloned()
        .unwrap_or_default();
    assert_eq!(expiry["KeyAttributes"]["SortKey"]["AttributeType"], "N");
    let cdk = Export::of::<Exported>("exported").cdk();
    let lsi = &cdk["localSecondaryIndexes"][0];
    assert_eq!(lsi["sortKey"]["type"], "NUMBER");
    assert_eq!(
        lsi["nonKeyAttributes"],
        serde_json::json!(["title", "body"])
    );
}
