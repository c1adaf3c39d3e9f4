//! Schema exports (feature `export`): the table and its entities, as the tools tables are
//! designed and deployed with see them.
//!
//! - [`Export::cloudformation`]: an AWS CloudFormation template with one
//!   `AWS::DynamoDB::Table` resource (JSON; [`Export::cloudformation_yaml`] for YAML);
//! - [`Export::cdk`]: the same table in AWS CDK's property names (`partitionKey`,
//!   `sortKey`, `billingMode`, `readCapacity`/`writeCapacity`, `stream`,
//!   `timeToLiveAttribute`, and `globalSecondaryIndexes` / `localSecondaryIndexes` as
//!   `TableV2` takes them, each GSI with its `readCapacity`/`writeCapacity` on a
//!   provisioned table). For `TableV2`, write `billing: Billing.onDemand()` (or
//!   `Billing.provisioned(..)`) in place of `billingMode` and the capacities, and
//!   `dynamoStream` in place of `stream`; for `Table`, add the indexes with
//!   `addGlobalSecondaryIndex` / `addLocalSecondaryIndex`;
//! - [`Export::workbench`]: a NoSQL Workbench data model (the JSON its data modeler
//!   imports, format version 3.0), laid out as Workbench itself saves a model with facets:
//!   the table with every attribute its facets name and its DynamoDB type, its global
//!   indexes, its billing mode and provisioned capacity, and one facet per entity whose key
//!   aliases are the entity's key templates and whose attributes include the index key
//!   attributes the entity writes (so Workbench's index views show its items). Sample
//!   items given with [`Export::add_sample`] are each facet's `TableData`, in DynamoDB
//!   JSON; [`workbench_items`] reads them back. Workbench's format has no place for a
//!   stream or a GSI's own capacity;
//! - [`Export::markdown`]: an access-pattern table, one row per entity: key templates,
//!   index templates, TTL and what else the crate stores for it.
//!
//! The table is exactly what [`Db::create_table`](crate::Db::create_table) creates (the
//! two are rendered from one description): the declared billing mode and capacity (on
//! demand unless declared; a GSI without its own units takes the table's), the stream,
//! the key schema, every key attribute defined once, global and local indexes with their
//! projections (a multi-attribute key lists each attribute), and TTL on the schema's TTL
//! attribute. [`Export::with_options`] renders another stage's capacity and stream, as
//! [`Db::create_table_with`](crate::Db::create_table_with) creates it.
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

use crate::registry::EntityRegistration;
use crate::schema::{
    Billing, IndexKind, IndexLayout, KeyAttribute, Layout, Projection, ScalarType, TableOptions,
    TableSchema, Throughput,
};
use crate::{Entity, Error, Item, Table, ValidationReason};
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value, json};
use std::any::TypeId;

/// The exports of one table: see the [module documentation](self).
#[derive(Debug, Clone)]
pub struct Export {
    table_name: String,
    schema: &'static TableSchema,
    table: TypeId,
    layout: Layout,
    entities: Vec<&'static EntityRegistration>,
    /// Sample items for the Workbench model, with their entity types.
    samples: Vec<(&'static str, Item)>,
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
            table: TypeId::of::<T>(),
            layout: crate::schema::layout(schema),
            entities,
            samples: Vec::new(),
        }
    }

    /// These exports with another stage's capacity and stream in place of the declared
    /// ones (see [`TableOptions`]); options DynamoDB would refuse are refused
    /// ([`ValidationReason::InvalidOption`]).
    ///
    /// ```
    /// # use dynamo_model::{Table, export::Export};
    /// use dynamo_model::schema::{StreamView, TableOptions, Throughput};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// let prod = TableOptions::declared(&App::SCHEMA)
    ///     .provisioned(Throughput { read: 20, write: 10 })
    ///     .stream(Some(StreamView::NewAndOldImages));
    /// let export = Export::of::<App>("app-prod").with_options(&prod)?;
    /// let table = export.cloudformation_properties();
    /// assert_eq!(table["BillingMode"], "PROVISIONED");
    /// assert_eq!(table["StreamSpecification"]["StreamViewType"], "NEW_AND_OLD_IMAGES");
    /// # Ok::<(), dynamo_model::Error>(())
    /// ```
    pub fn with_options(mut self, options: &TableOptions) -> Result<Export, Error> {
        self.layout = crate::schema::layout_with(self.schema, options)?;
        Ok(self)
    }

    /// Adds `entity` as a sample item of its facet in the [Workbench](Self::workbench)
    /// model: the item a put would write (keys, index keys, entity type and fields), in
    /// DynamoDB JSON. Refuses an entity of another table
    /// ([`ValidationReason::WrongKeySpace`]) or one that does not encode.
    ///
    /// ```
    /// # use dynamo_model::{Entity, Table, export::{Export, workbench_items}};
    /// # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
    /// #[derive(Entity, Debug, PartialEq)]
    /// #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE")]
    /// struct User { id: String, age: u32 }
    ///
    /// let mut export = Export::of::<App>("app");
    /// export.add_sample(&User { id: "u1".into(), age: 42 })?;
    /// let model = export.workbench("app");
    /// let user = &model["DataModel"][0]["TableFacets"][0]["TableData"][0];
    /// assert_eq!(user["PK"], serde_json::json!({"S": "USER#u1"}));
    /// assert_eq!(user["age"], serde_json::json!({"N": "42"}));
    /// // Sample data reads back.
    /// let items = workbench_items(&model)?;
    /// assert_eq!(User::from_item(items[0].clone())?, User { id: "u1".into(), age: 42 });
    /// # Ok::<(), dynamo_model::Error>(())
    /// ```
    pub fn add_sample<E: Entity>(&mut self, entity: &E) -> Result<&mut Export, Error> {
        if TypeId::of::<E::Table>() != self.table {
            return Err(Error::invalid(
                E::ENTITY_TYPE,
                ValidationReason::WrongKeySpace,
                format!(
                    "a sample of {} belongs to another table than {}",
                    E::ENTITY_TYPE,
                    self.schema.type_name
                ),
            ));
        }
        let item = entity.to_item()?;
        self.samples.push((E::ENTITY_TYPE, item));
        Ok(self)
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

    /// Inserts the global indexes as an array under `global`, the local ones under `local`
    /// (each as `index` writes it, in the layout's order); a kind with no index is left out.
    fn insert_indexes(
        &self,
        out: &mut Map<String, Value>,
        [global, local]: [&str; 2],
        index: impl Fn(&IndexLayout) -> Value,
    ) {
        for (kind, property) in [(IndexKind::Global, global), (IndexKind::Local, local)] {
            let indexes: Vec<Value> = self
                .layout
                .indexes
                .iter()
                .filter(|i| i.kind == kind)
                .map(&index)
                .collect();
            if !indexes.is_empty() {
                out.insert(property.into(), Value::Array(indexes));
            }
        }
    }

    /// The table's `AWS::DynamoDB::Table` properties.
    pub fn cloudformation_properties(&self) -> Value {
        let mut properties = Map::new();
        properties.insert("TableName".into(), json!(self.table_name));
        properties.insert("BillingMode".into(), json!(self.layout.billing.as_str()));
        if let Billing::Provisioned(t) = self.layout.billing {
            properties.insert("ProvisionedThroughput".into(), cfn_throughput(t));
        }
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
        let properties_of = ["GlobalSecondaryIndexes", "LocalSecondaryIndexes"];
        self.insert_indexes(&mut properties, properties_of, |i| {
            let mut index = json!({
                "IndexName": i.name,
                "KeySchema": Self::key_schema(&i.keys),
                "Projection": Self::cfn_projection(i.projection),
            });
            if let (Some(t), Value::Object(map)) = (i.throughput, &mut index) {
                map.insert("ProvisionedThroughput".into(), cfn_throughput(t));
            }
            index
        });
        if let Some(ttl) = self.layout.ttl {
            properties.insert(
                "TimeToLiveSpecification".into(),
                json!({"AttributeName": ttl, "Enabled": true}),
            );
        }
        if let Some(view) = self.layout.stream {
            properties.insert(
                "StreamSpecification".into(),
                json!({"StreamViewType": view.as_str()}),
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
    /// `partitionKeys`/`sortKeys`). `billingMode`, `readCapacity`, `writeCapacity` and
    /// `stream` are `Table`'s properties: `TableV2` takes `billing` and `dynamoStream`
    /// instead (see the module docs).
    pub fn cdk(&self) -> Value {
        let mut table = Map::new();
        table.insert("tableName".into(), json!(self.table_name));
        self.cdk_keys(&mut table, &self.layout.keys, false);
        table.insert("billingMode".into(), json!(self.layout.billing.as_str()));
        if let Billing::Provisioned(t) = self.layout.billing {
            table.insert("readCapacity".into(), json!(t.read));
            table.insert("writeCapacity".into(), json!(t.write));
        }
        if let Some(view) = self.layout.stream {
            table.insert("stream".into(), json!(view.as_str()));
        }
        if let Some(ttl) = self.layout.ttl {
            table.insert("timeToLiveAttribute".into(), json!(ttl));
        }
        let properties_of = ["globalSecondaryIndexes", "localSecondaryIndexes"];
        self.insert_indexes(&mut table, properties_of, |i| {
            let mut index = Map::new();
            index.insert("indexName".into(), json!(i.name));
            self.cdk_keys(&mut index, &i.keys, i.kind == IndexKind::Local);
            index.insert(
                "projectionType".into(),
                json!(projection_type(i.projection)),
            );
            if let Projection::Include(attrs) = i.projection {
                index.insert("nonKeyAttributes".into(), json!(attrs));
            }
            if let Some(t) = i.throughput {
                index.insert("readCapacity".into(), json!(t.read));
                index.insert("writeCapacity".into(), json!(t.write));
            }
            Value::Object(index)
        });
        Value::Object(table)
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
        match self.layout.billing {
            Billing::Provisioned(t) => {
                out.push_str(&format!("; provisioned, {} RCU / {} WCU", t.read, t.write))
            }
            _ => out.push_str("; on demand"),
        }
        if let Some(view) = self.layout.stream {
            out.push_str(&format!("; stream {}", view.as_str()));
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

fn cfn_throughput(t: Throughput) -> Value {
    json!({"ReadCapacityUnits": t.read, "WriteCapacityUnits": t.write})
}

mod json;
mod workbench;

pub use json::workbench_items;
use json::*;

#[cfg(test)]
mod tests;
