//! A stage's table options (billing, capacity, stream) and the table layout DynamoDB is
//! asked to create, with the checks DynamoDB would otherwise make.
use super::*;

/// Capacity and stream settings of a table, for one deployment: the declaration's
/// ([`TableOptions::declared`]) or another stage's. The table name is runtime
/// configuration; these are the rest of what differs between stages.
///
/// Checked where they are used ([`Db::create_table_with`](crate::Db::create_table_with),
/// [`Db::check_table_with`](crate::Db::check_table_with),
/// [`Export::with_options`](dynamo_model::export::Export::with_options)): zero units, units for
/// an index the schema does not declare or for an LSI (which shares the table's
/// capacity), and index units on an on-demand table are refused with
/// [`ValidationReason::InvalidOption`] before anything is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableOptions {
    billing: Billing,
    /// Units of global secondary indexes, by name (the declared ones first).
    indexes: Vec<(String, Throughput)>,
    stream: Option<StreamView>,
}

impl TableOptions {
    /// The settings the schema declares.
    pub fn declared(schema: &TableSchema) -> TableOptions {
        TableOptions {
            billing: schema.billing,
            indexes: schema
                .indexes
                .iter()
                .filter_map(|i| i.throughput.map(|t| (i.name.to_owned(), t)))
                .collect(),
            stream: schema.stream,
        }
    }

    /// On-demand billing (drops any index units).
    pub fn on_demand(mut self) -> TableOptions {
        self.billing = Billing::OnDemand;
        self.indexes.clear();
        self
    }

    /// Provisioned billing with `table` units for the table (and for each global
    /// secondary index not given its own with [`index_throughput`](Self::index_throughput)).
    pub fn provisioned(mut self, table: Throughput) -> TableOptions {
        self.billing = Billing::Provisioned(table);
        self
    }

    /// The provisioned units of the global secondary index `index`.
    pub fn index_throughput(mut self, index: &str, throughput: Throughput) -> TableOptions {
        match self.indexes.iter_mut().find(|(name, _)| name == index) {
            Some(slot) => slot.1 = throughput,
            None => self.indexes.push((index.to_owned(), throughput)),
        }
        self
    }

    /// The stream's view type, or `None` for no stream.
    pub fn stream(mut self, view: Option<StreamView>) -> TableOptions {
        self.stream = view;
        self
    }

    /// The billing mode and the table's units.
    pub fn billing(&self) -> Billing {
        self.billing
    }

    /// The stream's view type, if the table has a stream.
    pub fn stream_view(&self) -> Option<StreamView> {
        self.stream
    }

    /// The units given to index `index` with
    /// [`index_throughput`](Self::index_throughput) or in the declaration (not the table's
    /// units it falls back to).
    pub fn index_throughput_of(&self, index: &str) -> Option<Throughput> {
        self.indexes
            .iter()
            .find(|(name, _)| name == index)
            .map(|(_, t)| *t)
    }

    /// Refuses settings DynamoDB would refuse, or that name no index of `schema`.
    fn validate(&self, schema: &TableSchema) -> Result<(), Error> {
        let refuse = |message: String| {
            Err(Error::invalid_request(
                "CreateTable",
                ValidationReason::InvalidOption,
                message,
            ))
        };
        let zero = |t: Throughput| t.read == 0 || t.write == 0;
        if let Billing::Provisioned(t) = self.billing
            && zero(t)
        {
            return refuse(format!(
                "table {}: provisioned read and write capacity are at least 1 unit each (got read {}, write {})",
                schema.type_name, t.read, t.write
            ));
        }
        for (name, t) in &self.indexes {
            match schema.index(name) {
                None => {
                    return refuse(format!(
                        "table {} declares no index `{name}` to give capacity to",
                        schema.type_name
                    ));
                }
                Some(index) if index.kind == IndexKind::Local => {
                    return refuse(format!(
                        "index `{name}` is an LSI: it shares the table's capacity and has none of its own"
                    ));
                }
                Some(_) => {}
            }
            if self.billing == Billing::OnDemand {
                return refuse(format!(
                    "index `{name}` is given provisioned capacity but the table is billed on demand"
                ));
            }
            if zero(*t) {
                return refuse(format!(
                    "index `{name}`: provisioned read and write capacity are at least 1 unit each (got read {}, write {})",
                    t.read, t.write
                ));
            }
        }
        Ok(())
    }
}

/// One index as [`create_table`] creates it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct IndexLayout {
    pub(crate) name: &'static str,
    pub(crate) kind: IndexKind,
    /// In key-schema order: the partition key attribute(s), then the sort key's.
    pub(crate) keys: Vec<(&'static str, KeyRole)>,
    pub(crate) projection: Projection,
    /// A GSI's units on a provisioned table (its own or the table's); `None` otherwise.
    pub(crate) throughput: Option<Throughput>,
}

/// What [`create_table`] creates for a schema; the schema exports
/// (`dynamo_model::export`) render the same description, so the two never disagree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Layout {
    /// Every key attribute of the table and its indexes, once, in first-use order.
    pub(crate) definitions: Vec<KeyAttribute>,
    pub(crate) keys: Vec<(&'static str, KeyRole)>,
    pub(crate) indexes: Vec<IndexLayout>,
    pub(crate) ttl: Option<&'static str>,
    pub(crate) billing: Billing,
    pub(crate) stream: Option<StreamView>,
}

/// The table [`create_table`] creates for `schema` as declared (the derive refuses a
/// declaration DynamoDB would refuse, so it needs no check here). Used by the exports.
#[cfg_attr(not(feature = "export"), allow(dead_code))]
pub(crate) fn layout(schema: &TableSchema) -> Layout {
    layout_of(schema, &TableOptions::declared(schema))
}

/// The table [`create_table`] creates for `schema` with `options`, checked.
pub(crate) fn layout_with(schema: &TableSchema, options: &TableOptions) -> Result<Layout, Error> {
    options.validate(schema)?;
    Ok(layout_of(schema, options))
}

pub(super) fn layout_of(schema: &TableSchema, options: &TableOptions) -> Layout {
    let mut definitions: Vec<KeyAttribute> = Vec::new();
    let mut define = |attr: KeyAttribute| {
        if !definitions.iter().any(|d| d.name == attr.name) {
            definitions.push(attr);
        }
    };
    define(schema.pk);
    schema.sk.into_iter().for_each(&mut define);
    for index in schema.indexes {
        index
            .pk
            .iter()
            .chain(index.sk)
            .copied()
            .for_each(&mut define);
    }
    let mut keys = vec![(schema.pk.name, KeyRole::Hash)];
    keys.extend(schema.sk.map(|sk| (sk.name, KeyRole::Range)));
    let indexes = schema
        .indexes
        .iter()
        .map(|index| {
            let pk: Vec<(&'static str, KeyRole)> = match index.kind {
                // An LSI shares the table's partition key (DynamoDB rule).
                IndexKind::Local => vec![(schema.pk.name, KeyRole::Hash)],
                IndexKind::Global => index.pk.iter().map(|a| (a.name, KeyRole::Hash)).collect(),
            };
            let throughput = match (options.billing, index.kind) {
                (Billing::Provisioned(table), IndexKind::Global) => {
                    Some(options.index_throughput_of(index.name).unwrap_or(table))
                }
                _ => None,
            };
            IndexLayout {
                name: index.name,
                kind: index.kind,
                keys: pk
                    .into_iter()
                    .chain(index.sk.iter().map(|a| (a.name, KeyRole::Range)))
                    .collect(),
                projection: index.projection,
                throughput,
            }
        })
        .collect();
    Layout {
        definitions,
        keys,
        indexes,
        ttl: schema.ttl,
        billing: options.billing,
        stream: options.stream,
    }
}

pub(super) fn throughput(t: Throughput) -> Result<ProvisionedThroughput, Error> {
    ProvisionedThroughput::builder()
        .read_capacity_units(i64::from(t.read))
        .write_capacity_units(i64::from(t.write))
        .build()
        .map_err(|e| Error::request_build("CreateTable", e))
}

/// Creates a table for `schema` under `table_name` with the capacity and stream the
/// schema declares, waits until it is `ACTIVE`, and enables TTL on the schema's TTL
/// attribute.
///
/// Most code calls [`Db::create_table`](crate::Db::create_table) instead.
pub async fn create_table(
    client: &Client,
    table_name: &str,
    schema: &TableSchema,
) -> Result<(), Error> {
    create_table_with(client, table_name, schema, &TableOptions::declared(schema)).await
}

/// [`create_table`] with `options` in place of the declared capacity and stream.
pub async fn create_table_with(
    client: &Client,
    table_name: &str,
    schema: &TableSchema,
    options: &TableOptions,
) -> Result<(), Error> {
    const OP: &str = "CreateTable";
    let layout = layout_with(schema, options)?;
    let mut request = client.create_table().table_name(table_name);
    request = match layout.billing {
        Billing::OnDemand => request.billing_mode(BillingMode::PayPerRequest),
        Billing::Provisioned(t) => request
            .billing_mode(BillingMode::Provisioned)
            .provisioned_throughput(throughput(t)?),
    };
    if let Some(view) = layout.stream {
        request = request.stream_specification(
            StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(view.sdk())
                .build()
                .map_err(|e| Error::request_build(OP, e))?,
        );
    }
    request = request.set_key_schema(Some(key_schema(&layout.keys)?));
    for def in &layout.definitions {
        request = request.attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name(def.name)
                .attribute_type(sdk_type(def.ty))
                .build()
                .map_err(|e| Error::request_build(OP, e))?,
        );
    }
    for index in &layout.indexes {
        match index.kind {
            IndexKind::Global => {
                let mut gsi = GlobalSecondaryIndex::builder()
                    .index_name(index.name)
                    .set_key_schema(Some(key_schema(&index.keys)?))
                    .projection(projection(index.projection));
                if let Some(t) = index.throughput {
                    gsi = gsi.provisioned_throughput(throughput(t)?);
                }
                request = request.global_secondary_indexes(
                    gsi.build().map_err(|e| Error::request_build(OP, e))?,
                );
            }
            IndexKind::Local => {
                let lsi = LocalSecondaryIndex::builder()
                    .index_name(index.name)
                    .set_key_schema(Some(key_schema(&index.keys)?))
                    .projection(projection(index.projection));
                request = request
                    .local_secondary_indexes(lsi.build().map_err(|e| Error::request_build(OP, e))?);
            }
        }
    }
    request
        .send()
        .await
        .map_err(|e| Error::service(OP, table_name, e))?;

    wait_until_active(client, table_name).await?;

    if let Some(ttl) = layout.ttl {
        enable_ttl(client, table_name, ttl).await?;
    }
    Ok(())
}

/// Polls `DescribeTable` until the table and all its indexes are `ACTIVE` (the real
/// service takes seconds to minutes; DynamoDB Local is immediate).
async fn wait_until_active(client: &Client, table_name: &str) -> Result<(), Error> {
    let mut delay = Duration::from_millis(20);
    loop {
        let out = describe_table(client, table_name).await?;
        if let Some(table) = out.table() {
            let indexes_active = table
                .global_secondary_indexes()
                .iter()
                .all(|g| g.index_status() == Some(&aws_sdk_dynamodb::types::IndexStatus::Active));
            if table.table_status() == Some(&TableStatus::Active) && indexes_active {
                return Ok(());
            }
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(Duration::from_secs(2));
    }
}
