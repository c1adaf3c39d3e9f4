//! The NoSQL Workbench data model: the table with every attribute its facets name, its
//! global indexes and capacity, and one facet per entity with its samples.

use super::*;

impl Export {
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

    /// The index key attributes `entity` writes: those of every index it has templates
    /// (or a key of its own attributes) for, except the table's own key attributes.
    fn index_key_attributes(&self, entity: &EntityRegistration) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for templates in entity.index_templates {
            if templates.inverted {
                continue;
            }
            let Some(index) = self.schema.index(templates.index) else {
                continue;
            };
            let pk = templates.pk.map(|_| index.pk).unwrap_or_default();
            let sk = templates.sk.map(|_| index.sk).unwrap_or_default();
            for attr in pk.iter().chain(sk) {
                if !self.schema.is_reserved_attribute(attr.name) && !out.contains(&attr.name) {
                    out.push(attr.name);
                }
            }
        }
        out
    }

    /// The attributes a facet lists (after its key attributes), in Workbench's order: the
    /// entity type, the index key attributes, then the fields' attributes.
    fn facet_attributes(&self, entity: &EntityRegistration) -> Vec<&'static str> {
        let schema = self.schema;
        let mut out: Vec<&'static str> = vec![schema.entity_type];
        let mut push = |name: &'static str| {
            if !schema.is_reserved_attribute(name) && !out.contains(&name) {
                out.push(name);
            }
        };
        self.index_key_attributes(entity)
            .into_iter()
            .for_each(&mut push);
        (entity.attribute_types)()
            .into_iter()
            .map(|(name, _)| name)
            .for_each(&mut push);
        out
    }

    /// The DynamoDB type of non-key attribute `name` in the table's attribute list.
    fn attribute_type(&self, name: &str) -> String {
        if let Some(def) = self.definition(name) {
            return scalar(def.ty).to_owned();
        }
        if name == self.schema.entity_type {
            return "S".to_owned();
        }
        if Some(name) == self.schema.ttl {
            return "N".to_owned();
        }
        let declared = self
            .entities
            .iter()
            .flat_map(|e| (e.attribute_types)())
            .filter(|(n, _)| *n == name)
            .find_map(|(_, ty)| ty);
        if let Some(ty) = declared {
            return ty.to_owned();
        }
        // A type that depends on the value (serde, chunked, raw): a sample's, else a map.
        self.samples
            .iter()
            .find_map(|(_, item)| item.get(name).and_then(dynamodb_type))
            .unwrap_or("M")
            .to_owned()
    }

    /// A NoSQL Workbench data model named `model_name` (format 3.0), laid out as Workbench
    /// saves a model with facets (compare the models AWS publishes in
    /// `aws-samples/amazon-dynamodb-design-patterns`):
    ///
    /// - the table's `KeyAttributes`, its global indexes, its `BillingMode` and, when
    ///   provisioned, `ProvisionedCapacitySettings`;
    /// - the table's `NonKeyAttributes`: every attribute a facet names, once, with its
    ///   DynamoDB type: index key attributes with their declared type, the entity type
    ///   (`S`), TTL (`N`), and each field with the type its Rust type is stored as. A
    ///   field whose type depends on the value (`#[dynamo(serde)]`, chunked, a raw
    ///   `AttributeValue`) takes the type of the first sample item that holds it, else
    ///   `M`; an attribute two entities store with different types takes the first one's;
    /// - one facet per entity: the key templates as key aliases, and as attributes the
    ///   entity type, the index key attributes the entity writes (Workbench's index views
    ///   show a facet's items only through these) and the fields' attributes; its
    ///   `TableData` is the samples added with [`add_sample`](Self::add_sample).
    ///
    /// The write token (`_wt`) and chunk items are not listed: they are the crate's
    /// bookkeeping, not part of the design.
    pub fn workbench(&self, model_name: &str) -> Value {
        let schema = self.schema;
        let key_names: Vec<&str> = self.layout.keys.iter().map(|(n, _)| *n).collect();
        let mut table_attributes: Vec<&'static str> = Vec::new();
        for index in &self.layout.indexes {
            for (name, _) in &index.keys {
                if !key_names.contains(name) && !table_attributes.contains(name) {
                    table_attributes.push(name);
                }
            }
        }
        let facet_attributes: Vec<Vec<&'static str>> = self
            .entities
            .iter()
            .map(|e| self.facet_attributes(e))
            .collect();
        let mut extra: Vec<&'static str> = vec![schema.entity_type];
        extra.extend(schema.ttl);
        for name in extra
            .into_iter()
            .chain(facet_attributes.iter().flatten().copied())
        {
            if !key_names.contains(&name) && !table_attributes.contains(&name) {
                table_attributes.push(name);
            }
        }
        let non_key: Vec<Value> = table_attributes
            .iter()
            .map(|name| json!({"AttributeName": name, "AttributeType": self.attribute_type(name)}))
            .collect();
        let facets: Vec<Value> = self
            .entities
            .iter()
            .zip(&facet_attributes)
            .map(|(e, attributes)| {
                let mut alias = Map::new();
                alias.insert("PartitionKeyAlias".into(), json!(e.pk_template));
                if let Some(sk) = e.sk_template {
                    alias.insert("SortKeyAlias".into(), json!(sk));
                }
                let data: Vec<Value> = self
                    .samples
                    .iter()
                    .filter(|(entity_type, _)| *entity_type == e.entity_type)
                    .map(|(_, item)| item_json(item))
                    .collect();
                json!({
                    "FacetName": e.entity_type,
                    "KeyAttributeAlias": alias,
                    "TableData": data,
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
        let mut table = Map::new();
        table.insert("TableName".into(), json!(self.table_name));
        table.insert(
            "KeyAttributes".into(),
            self.workbench_keys(&self.layout.keys),
        );
        table.insert("NonKeyAttributes".into(), Value::Array(non_key));
        table.insert("TableFacets".into(), Value::Array(facets));
        table.insert("GlobalSecondaryIndexes".into(), Value::Array(gsis));
        table.insert("TableData".into(), json!([]));
        table.insert("DataAccess".into(), json!({"MySql": {}}));
        table.insert("BillingMode".into(), json!(self.layout.billing.as_str()));
        if let Billing::Provisioned(t) = self.layout.billing {
            table.insert(
                "ProvisionedCapacitySettings".into(),
                json!({"ProvisionedThroughput": cfn_throughput(t)}),
            );
        }
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
            "DataModel": [Value::Object(table)],
        })
    }
}
