//! Schema exports (feature `export`): the table and its entities, as the tools tables are
//! designed and deployed with see them.
//!
//! - [`Export::cloudformation`]: an AWS CloudFormation template with one
//!   `AWS::DynamoDB::Table` resource (JSON; [`Export::cloudformation_yaml`] for YAML);
//! - [`Export::cdk`]: the same table in AWS CDK's property names (`partitionKey`,
//!   `sortKey`, `billingMode`, `timeToLiveAttribute`, and `globalSecondaryIndexes` /
//!   `localSecondaryIndexes` as `TableV2` takes them). For `TableV2`, write
//!   `billing: Billing.onDemand()` in place of `billingMode`; for `Table`, add the
//!   indexes with `addGlobalSecondaryIndex` / `addLocalSecondaryIndex`;
//! - [`Export::workbench`]: a NoSQL Workbench data model (the JSON its data modeler
//!   imports, format version 3.0): the table, its indexes, and one facet per entity whose
//!   key aliases are the entity's key templates;
//! - [`Export::markdown`]: an access-pattern table, one row per entity: key templates,
//!   index templates, TTL and what else the crate stores for it.
//!
//! The table is exactly what [`Db::create_table`](crate::Db::create_table) creates (the
//! two are rendered from one description): on-demand billing, the key schema, every key
//! attribute defined once, global and local indexes with their projections (a
//! multi-attribute key lists each attribute), and TTL on the schema's TTL attribute.
//!
//! Entities come from the registrations the derive submits: those compiled into the
//! program, for the table's type.
//!
//! ```
//! use dynamo_model::export::Export;
//! use dynamo_model::{Entity, Table};
//!
//! #[derive(Table)]
//! #[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"), ttl = "expires")]
//! struct App;
//!
//! #[derive(Entity)]
//! #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE", index(GSI1, pk = "EMAIL#{email}", sk = "USER"))]
//! struct User { id: String, email: String }
//!
//! let export = Export::of::<App>("app-prod");
//! let template = export.cloudformation();
//! let table = &template["Resources"]["AppTable"]["Properties"];
//! assert_eq!(table["TableName"], "app-prod");
//! assert_eq!(table["GlobalSecondaryIndexes"][0]["IndexName"], "GSI1");
//! let model = export.workbench("app");
//! assert_eq!(model["DataModel"][0]["TableFacets"][0]["KeyAttributeAlias"]["PartitionKeyAlias"], "USER#{id}");
//! assert!(export.markdown().contains("| User | `USER#{id}` | `PROFILE` |"));
//! ```

use crate::Table;
use crate::registry::EntityRegistration;
use crate::schema::{IndexKind, KeyAttribute, Layout, Projection, ScalarType, TableSchema};
use serde_json::{Map, Value, json};

/// The exports of one table: see the [module documentation](self).
#[derive(Debug, Clone)]
pub struct Export {
    table_name: String,
    schema: &'static TableSchema,
    layout: Layout,
    entities: Vec<&'static EntityRegistration>,
}

fn scalar(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::S => "S",
        ScalarType::N => "N",
        ScalarType::B => "B",
    }
}

fn projection_type(p: Projection) -> &'static str {
    match p {
        Projection::All => "ALL",
        Projection::KeysOnly => "KEYS_ONLY",
        Projection::Include(_) => "INCLUDE",
    }
}

impl Export {
    /// The exports of table `T` deployed under `table_name`.
    pub fn of<T: Table>(table_name: impl Into<String>) -> Export {
        let schema = &T::SCHEMA;
        // One facet per entity type: a view (`entity_type = ".."` on a partial struct)
        // shares its entity's type; the declaration with the most attributes stands for it.
        let mut entities: Vec<&'static EntityRegistration> = Vec::new();
        for entity in crate::registry::entities_of::<T>() {
            match entities
                .iter_mut()
                .find(|e| e.entity_type == entity.entity_type)
            {
                Some(kept) if kept.attributes.len() < entity.attributes.len() => *kept = entity,
                Some(_) => {}
                None => entities.push(entity),
            }
        }
        Export {
            table_name: table_name.into(),
            schema,
            layout: crate::schema::layout(schema),
            entities,
        }
    }

    fn definition(&self, name: &str) -> Option<&KeyAttribute> {
        self.layout.definitions.iter().find(|d| d.name == name)
    }

    /// A CloudFormation logical id for the table: the table type's name (letters and
    /// digits only) and `Table`.
    pub fn logical_id(&self) -> String {
        let base: String = self
            .schema
            .type_name
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect();
        format!("{base}Table")
    }

    fn key_schema(keys: &[(&'static str, crate::schema::KeyRole)]) -> Value {
        Value::Array(
            keys.iter()
                .map(|(name, role)| json!({"AttributeName": name, "KeyType": role.as_str()}))
                .collect(),
        )
    }

    fn cfn_projection(p: Projection) -> Value {
        match p {
            Projection::Include(attrs) => {
                json!({"ProjectionType": "INCLUDE", "NonKeyAttributes": attrs})
            }
            other => json!({"ProjectionType": projection_type(other)}),
        }
    }

    /// The table's `AWS::DynamoDB::Table` properties.
    pub fn cloudformation_properties(&self) -> Value {
        let mut properties = Map::new();
        properties.insert("TableName".into(), json!(self.table_name));
        properties.insert("BillingMode".into(), json!("PAY_PER_REQUEST"));
        properties.insert(
            "AttributeDefinitions".into(),
            Value::Array(
                self.layout
                    .definitions
                    .iter()
                    .map(|d| json!({"AttributeName": d.name, "AttributeType": scalar(d.ty)}))
                    .collect(),
            ),
        );
        properties.insert("KeySchema".into(), Self::key_schema(&self.layout.keys));
        for (kind, property) in [
            (IndexKind::Global, "GlobalSecondaryIndexes"),
            (IndexKind::Local, "LocalSecondaryIndexes"),
        ] {
            let indexes: Vec<Value> = self
                .layout
                .indexes
                .iter()
                .filter(|i| i.kind == kind)
                .map(|i| {
                    json!({
                        "IndexName": i.name,
                        "KeySchema": Self::key_schema(&i.keys),
                        "Projection": Self::cfn_projection(i.projection),
                    })
                })
                .collect();
            if !indexes.is_empty() {
                properties.insert(property.into(), Value::Array(indexes));
            }
        }
        if let Some(ttl) = self.layout.ttl {
            properties.insert(
                "TimeToLiveSpecification".into(),
                json!({"AttributeName": ttl, "Enabled": true}),
            );
        }
        Value::Object(properties)
    }

    /// A CloudFormation template holding the table as one `AWS::DynamoDB::Table`
    /// resource (under [`logical_id`](Self::logical_id)).
    pub fn cloudformation(&self) -> Value {
        let mut resources = Map::new();
        resources.insert(
            self.logical_id(),
            json!({"Type": "AWS::DynamoDB::Table", "Properties": self.cloudformation_properties()}),
        );
        json!({
            "AWSTemplateFormatVersion": "2010-09-09",
            "Description": format!("Table {} of dynamo-model's {}", self.table_name, self.schema.type_name),
            "Resources": resources,
        })
    }

    /// [`cloudformation`](Self::cloudformation) as YAML.
    pub fn cloudformation_yaml(&self) -> String {
        let mut out = String::new();
        yaml(&self.cloudformation(), 0, &mut out);
        out
    }

    fn cdk_key(&self, name: &str) -> Value {
        let ty = match self.definition(name).map(|d| d.ty) {
            Some(ScalarType::N) => "NUMBER",
            Some(ScalarType::B) => "BINARY",
            _ => "STRING",
        };
        json!({"name": name, "type": ty})
    }

    fn cdk_keys(
        &self,
        out: &mut Map<String, Value>,
        keys: &[(&'static str, crate::schema::KeyRole)],
        skip_pk: bool,
    ) {
        use crate::schema::KeyRole;
        for (role, one, many) in [
            (KeyRole::Hash, "partitionKey", "partitionKeys"),
            (KeyRole::Range, "sortKey", "sortKeys"),
        ] {
            if skip_pk && role == KeyRole::Hash {
                continue;
            }
            let of_role: Vec<Value> = keys
                .iter()
                .filter(|(_, r)| *r == role)
                .map(|(name, _)| self.cdk_key(name))
                .collect();
            match of_role.len() {
                0 => {}
                1 => {
                    out.insert(
                        one.into(),
                        of_role.into_iter().next().unwrap_or(Value::Null),
                    );
                }
                _ => {
                    out.insert(many.into(), Value::Array(of_role));
                }
            }
        }
    }

    /// The table in AWS CDK's property names (JSON; a multi-attribute index key as
    /// `partitionKeys`/`sortKeys`). `billingMode` is `Table`'s property: `TableV2` takes
    /// `billing: Billing.onDemand()` instead (see the module docs).
    pub fn cdk(&self) -> Value {
        let mut table = Map::new();
        table.insert("tableName".into(), json!(self.table_name));
        self.cdk_keys(&mut table, &self.layout.keys, false);
        table.insert("billingMode".into(), json!("PAY_PER_REQUEST"));
        if let Some(ttl) = self.layout.ttl {
            table.insert("timeToLiveAttribute".into(), json!(ttl));
        }
        for (kind, property) in [
            (IndexKind::Global, "globalSecondaryIndexes"),
            (IndexKind::Local, "localSecondaryIndexes"),
        ] {
            let indexes: Vec<Value> = self
                .layout
                .indexes
                .iter()
                .filter(|i| i.kind == kind)
                .map(|i| {
                    let mut index = Map::new();
                    index.insert("indexName".into(), json!(i.name));
                    self.cdk_keys(&mut index, &i.keys, kind == IndexKind::Local);
                    index.insert(
                        "projectionType".into(),
                        json!(projection_type(i.projection)),
                    );
                    if let Projection::Include(attrs) = i.projection {
                        index.insert("nonKeyAttributes".into(), json!(attrs));
                    }
                    Value::Object(index)
                })
                .collect();
            if !indexes.is_empty() {
                table.insert(property.into(), Value::Array(indexes));
            }
        }
        Value::Object(table)
    }

    fn workbench_key(&self, name: &str) -> Value {
        let ty = self.definition(name).map_or("S", |d| scalar(d.ty));
        json!({"AttributeName": name, "AttributeType": ty})
    }

    fn workbench_keys(&self, keys: &[(&'static str, crate::schema::KeyRole)]) -> Value {
        use crate::schema::KeyRole;
        let mut out = Map::new();
        // Workbench keys have one attribute a side: a multi-attribute key shows its first.
        if let Some((name, _)) = keys.iter().find(|(_, r)| *r == KeyRole::Hash) {
            out.insert("PartitionKey".into(), self.workbench_key(name));
        }
        if let Some((name, _)) = keys.iter().find(|(_, r)| *r == KeyRole::Range) {
            out.insert("SortKey".into(), self.workbench_key(name));
        }
        Value::Object(out)
    }

    /// A NoSQL Workbench data model named `model_name` (format 3.0, as the data
    /// modeler exports it): the table, its global indexes, and one facet per entity
    /// with its key templates as the key aliases and its attributes. Attribute types
    /// are known for key attributes, the entity type (`S`) and TTL (`N`) only: the
    /// table's other non-key attributes are listed in the facets, by name.
    pub fn workbench(&self, model_name: &str) -> Value {
        let schema = self.schema;
        let key_names: Vec<&str> = self.layout.keys.iter().map(|(n, _)| *n).collect();
        let mut non_key: Vec<Value> = self
            .layout
            .definitions
            .iter()
            .filter(|d| !key_names.contains(&d.name))
            .map(|d| json!({"AttributeName": d.name, "AttributeType": scalar(d.ty)}))
            .collect();
        non_key.push(json!({"AttributeName": schema.entity_type, "AttributeType": "S"}));
        if let Some(ttl) = schema.ttl {
            non_key.push(json!({"AttributeName": ttl, "AttributeType": "N"}));
        }
        let facets: Vec<Value> = self
            .entities
            .iter()
            .map(|e| {
                let mut alias = Map::new();
                alias.insert("PartitionKeyAlias".into(), json!(e.pk_template));
                if let Some(sk) = e.sk_template {
                    alias.insert("SortKeyAlias".into(), json!(sk));
                }
                let mut attributes: Vec<&str> = vec![schema.entity_type];
                attributes.extend(
                    e.attributes
                        .iter()
                        .copied()
                        .filter(|a| !key_names.contains(a)),
                );
                json!({
                    "FacetName": e.entity_type,
                    "KeyAttributeAlias": alias,
                    "TableData": [],
                    "NonKeyAttributes": attributes,
                    "DataAccess": {"MySql": {}},
                })
            })
            .collect();
        let gsis: Vec<Value> = self
            .layout
            .indexes
            .iter()
            .filter(|i| i.kind == IndexKind::Global)
            .map(|i| {
                let mut projection = Map::new();
                projection.insert(
                    "ProjectionType".into(),
                    json!(projection_type(i.projection)),
                );
                if let Projection::Include(attrs) = i.projection {
                    projection.insert("NonKeyAttributes".into(), json!(attrs));
                }
                json!({
                    "IndexName": i.name,
                    "KeyAttributes": self.workbench_keys(&i.keys),
                    "Projection": projection,
                })
            })
            .collect();
        json!({
            "ModelName": model_name,
            "ModelMetadata": {
                "Author": "dynamo-model",
                "DateCreated": "",
                "DateLastModified": "",
                "Description": format!("{} (exported from dynamo-model's {})", self.table_name, schema.type_name),
                "AWSService": "Amazon DynamoDB",
                "Version": "3.0",
            },
            "DataModel": [{
                "TableName": self.table_name,
                "KeyAttributes": self.workbench_keys(&self.layout.keys),
                "NonKeyAttributes": non_key,
                "TableFacets": facets,
                "GlobalSecondaryIndexes": gsis,
                "TableData": [],
                "DataAccess": {"MySql": {}},
                "BillingMode": "PAY_PER_REQUEST",
            }],
        })
    }

    /// An access-pattern table in Markdown: one row per entity.
    pub fn markdown(&self) -> String {
        let schema = self.schema;
        let mut out = format!("## Table `{}` ({})\n\n", self.table_name, schema.type_name);
        let sk = schema
            .sk
            .map_or(String::new(), |sk| format!(", sort key `{}`", sk.name));
        out.push_str(&format!(
            "Partition key `{}`{sk}; entity type in `{}`",
            schema.pk.name, schema.entity_type
        ));
        if let Some(ttl) = schema.ttl {
            out.push_str(&format!("; TTL `{ttl}`"));
        }
        out.push_str(".\n\n| index | kind | keys | projection |\n| --- | --- | --- | --- |\n");
        for index in &self.layout.indexes {
            let keys: Vec<String> = index
                .keys
                .iter()
                .map(|(name, role)| format!("`{name}` {}", role.as_str()))
                .collect();
            let projection = match index.projection {
                Projection::Include(attrs) => format!("INCLUDE {}", attrs.join(", ")),
                other => projection_type(other).to_owned(),
            };
            let kind = match index.kind {
                IndexKind::Global => "GSI",
                IndexKind::Local => "LSI",
            };
            out.push_str(&format!(
                "| {} | {kind} | {} | {projection} |\n",
                index.name,
                keys.join(", ")
            ));
        }
        out.push_str("\n| entity | partition key | sort key | indexes | TTL | notes |\n| --- | --- | --- | --- | --- | --- |\n");
        for e in &self.entities {
            let indexes: Vec<String> = e
                .index_templates
                .iter()
                .map(|i| {
                    if i.inverted {
                        return format!("{}: (the table's keys, swapped)", i.index);
                    }
                    let side = |t: Option<&str>| t.map_or("-".to_owned(), |t| format!("`{t}`"));
                    format!("{}: {} / {}", i.index, side(i.pk), side(i.sk))
                })
                .collect();
            let mut notes: Vec<&str> = Vec::new();
            if e.history.is_some() {
                notes.push("versioned history");
            }
            if e.versioned {
                notes.push("optimistic locking");
            }
            if e.identify_by_keys {
                notes.push("identified by its keys");
            }
            out.push_str(&format!(
                "| {} | `{}` | {} | {} | {} | {} |\n",
                e.entity_type,
                e.pk_template,
                e.sk_template.map_or("-".to_owned(), |t| format!("`{t}`")),
                if indexes.is_empty() {
                    "-".to_owned()
                } else {
                    indexes.join("<br>")
                },
                if e.ttl { "yes" } else { "-" },
                if notes.is_empty() {
                    "-".to_owned()
                } else {
                    notes.join(", ")
                },
            ));
        }
        out
    }
}

/// Appends `value` as YAML at `indent` spaces (block style; strings in JSON's quoting,
/// which YAML's double-quoted scalars accept).
fn yaml(value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, v) in map {
                out.push_str(&pad);
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                inline_or_block(v, indent, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for v in items {
                out.push_str(&pad);
                out.push('-');
                match v {
                    Value::Object(map) if !map.is_empty() => {
                        // The first key on the dash's line, the others under it.
                        let mut first = true;
                        for (key, inner) in map {
                            if first {
                                out.push(' ');
                                first = false;
                            } else {
                                out.push_str(&" ".repeat(indent + 2));
                            }
                            out.push_str(&Value::String(key.clone()).to_string());
                            out.push(':');
                            inline_or_block(inner, indent + 2, out);
                        }
                    }
                    other => inline_or_block(other, indent, out),
                }
            }
        }
        scalar => {
            out.push_str(&pad);
            out.push_str(&scalar.to_string());
            out.push('\n');
        }
    }
}

fn inline_or_block(value: &Value, indent: usize, out: &mut String) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            yaml(value, indent + 2, out);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            yaml(value, indent + 2, out);
        }
        // Scalars, `[]` and `{}` are JSON, which is also YAML flow style.
        scalar => {
            out.push(' ');
            out.push_str(&scalar.to_string());
            out.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
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
    #[dynamo(table = Shop, pk = "ITEM#{sku}", sk = "ITEM", versioned)]
    struct Item {
        sku: String,
        #[dynamo(version)]
        version: u64,
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
}
