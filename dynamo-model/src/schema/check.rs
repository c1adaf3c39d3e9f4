//! The declared table against the table DynamoDB describes.

use super::{
    Billing, IndexKind, IndexLayout, KeyRole, Layout, Projection, ScalarType, StreamView,
    Throughput,
};
use crate::Error;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::{
    BillingMode, KeySchemaElement, KeyType, Projection as SdkProjection, ProjectionType,
    ProvisionedThroughputDescription, ScalarAttributeType, TableDescription, TimeToLiveDescription,
    TimeToLiveSpecification, TimeToLiveStatus,
};
use std::fmt;

/// One way the table DynamoDB describes differs from the declaration (and the
/// [`TableOptions`](super::TableOptions) it was checked with):
/// [`Db::check_table`](crate::Db::check_table) lists them all.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TableDifference {
    /// The table's key schema (`PK HASH, SK RANGE`).
    Keys {
        /// As declared.
        declared: String,
        /// As described.
        described: String,
    },
    /// A key attribute of the table or an index has another type, or is not defined.
    AttributeType {
        /// The attribute.
        attribute: String,
        /// Its declared type.
        declared: ScalarType,
        /// Its described type (`None`: not defined).
        described: Option<String>,
    },
    /// A declared index the table does not have.
    MissingIndex {
        /// The index.
        index: String,
    },
    /// An index the table has and the schema does not declare.
    UndeclaredIndex {
        /// The index.
        index: String,
    },
    /// An index's key schema, or its kind (global or local).
    IndexKeys {
        /// The index.
        index: String,
        /// As declared.
        declared: String,
        /// As described.
        described: String,
    },
    /// An index's projection.
    IndexProjection {
        /// The index.
        index: String,
        /// As declared (`ALL`, `KEYS_ONLY`, `INCLUDE a, b`).
        declared: String,
        /// As described.
        described: String,
    },
    /// The billing mode or the table's provisioned units.
    Billing {
        /// As declared.
        declared: Billing,
        /// As described.
        described: Billing,
    },
    /// A global secondary index's provisioned units (`None`: on demand).
    IndexThroughput {
        /// The index.
        index: String,
        /// As declared.
        declared: Option<Throughput>,
        /// As described.
        described: Option<Throughput>,
    },
    /// The stream (`None`: no stream).
    Stream {
        /// As declared.
        declared: Option<StreamView>,
        /// As described.
        described: Option<StreamView>,
    },
    /// The TTL attribute (`None`: TTL disabled).
    Ttl {
        /// As declared.
        declared: Option<String>,
        /// As described.
        described: Option<String>,
    },
}

fn billing_text(b: Billing) -> String {
    match b {
        Billing::OnDemand => "on demand".to_owned(),
        Billing::Provisioned(t) => format!("provisioned {}", throughput_text(Some(t))),
    }
}

fn throughput_text(t: Option<Throughput>) -> String {
    match t {
        Some(t) => format!("(read {}, write {})", t.read, t.write),
        None => "on demand".to_owned(),
    }
}

fn option_text<T: fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "none".to_owned(), |v| v.to_string())
}

impl fmt::Display for StreamView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for TableDifference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableDifference::Keys {
                declared,
                described,
            } => {
                write!(f, "key schema: declared {declared}, described {described}")
            }
            TableDifference::AttributeType {
                attribute,
                declared,
                described,
            } => write!(
                f,
                "attribute `{attribute}`: declared {declared:?}, described {}",
                described.as_deref().unwrap_or("not defined")
            ),
            TableDifference::MissingIndex { index } => {
                write!(f, "index `{index}` is declared but the table has none")
            }
            TableDifference::UndeclaredIndex { index } => {
                write!(f, "index `{index}` exists but is not declared")
            }
            TableDifference::IndexKeys {
                index,
                declared,
                described,
            } => write!(
                f,
                "index `{index}` keys: declared {declared}, described {described}"
            ),
            TableDifference::IndexProjection {
                index,
                declared,
                described,
            } => write!(
                f,
                "index `{index}` projection: declared {declared}, described {described}"
            ),
            TableDifference::Billing {
                declared,
                described,
            } => write!(
                f,
                "billing: declared {}, described {}",
                billing_text(*declared),
                billing_text(*described)
            ),
            TableDifference::IndexThroughput {
                index,
                declared,
                described,
            } => write!(
                f,
                "index `{index}` capacity: declared {}, described {}",
                throughput_text(*declared),
                throughput_text(*described)
            ),
            TableDifference::Stream {
                declared,
                described,
            } => write!(
                f,
                "stream: declared {}, described {}",
                option_text(*declared),
                option_text(*described)
            ),
            TableDifference::Ttl {
                declared,
                described,
            } => write!(
                f,
                "TTL attribute: declared {}, described {}",
                option_text(declared.as_deref()),
                option_text(described.as_deref())
            ),
        }
    }
}

fn keys_text(keys: &[(&str, KeyRole)]) -> String {
    keys.iter()
        .map(|(name, role)| format!("{name} {}", role.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn described_keys(keys: &[KeySchemaElement]) -> String {
    keys.iter()
        .map(|k| {
            let role = match k.key_type() {
                KeyType::Hash => "HASH",
                KeyType::Range => "RANGE",
                other => other.as_str(),
            };
            format!("{} {role}", k.attribute_name())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn projection_text(p: Projection) -> String {
    match p {
        Projection::All => "ALL".to_owned(),
        Projection::KeysOnly => "KEYS_ONLY".to_owned(),
        Projection::Include(attrs) => {
            let mut attrs: Vec<&str> = attrs.to_vec();
            attrs.sort_unstable();
            format!("INCLUDE {}", attrs.join(", "))
        }
    }
}

fn described_projection(p: Option<&SdkProjection>) -> String {
    match p.and_then(|p| p.projection_type()) {
        Some(ProjectionType::Include) => {
            let mut attrs: Vec<&str> = p
                .map(|p| p.non_key_attributes().iter().map(String::as_str).collect())
                .unwrap_or_default();
            attrs.sort_unstable();
            format!("INCLUDE {}", attrs.join(", "))
        }
        Some(other) => other.as_str().to_owned(),
        None => "none".to_owned(),
    }
}

/// The units a throughput description holds; `None` for zero units (what DynamoDB
/// describes for an on-demand table or index).
fn described_throughput(t: Option<&ProvisionedThroughputDescription>) -> Option<Throughput> {
    let t = t?;
    let read = u32::try_from(t.read_capacity_units().unwrap_or(0)).ok()?;
    let write = u32::try_from(t.write_capacity_units().unwrap_or(0)).ok()?;
    (read > 0 || write > 0).then_some(Throughput { read, write })
}

/// `DescribeTable` of `table_name`.
pub(crate) async fn describe_table(
    client: &Client,
    table_name: &str,
) -> Result<aws_sdk_dynamodb::operation::describe_table::DescribeTableOutput, Error> {
    client
        .describe_table()
        .table_name(table_name)
        .send()
        .await
        .map_err(|e| Error::service("DescribeTable", table_name, e))
}

/// The TTL of `table_name` when it is on or being turned on (`DescribeTimeToLive`).
pub(crate) async fn ttl_on(
    client: &Client,
    table_name: &str,
) -> Result<Option<TimeToLiveDescription>, Error> {
    let out = client
        .describe_time_to_live()
        .table_name(table_name)
        .send()
        .await
        .map_err(|e| Error::service("DescribeTimeToLive", table_name, e))?;
    Ok(out.time_to_live_description.filter(|d| {
        matches!(
            d.time_to_live_status(),
            Some(TimeToLiveStatus::Enabled | TimeToLiveStatus::Enabling)
        )
    }))
}

/// Turns TTL on for `table_name`, on `attribute` (`UpdateTimeToLive`).
pub(crate) async fn enable_ttl(
    client: &Client,
    table_name: &str,
    attribute: &str,
) -> Result<(), Error> {
    client
        .update_time_to_live()
        .table_name(table_name)
        .time_to_live_specification(
            TimeToLiveSpecification::builder()
                .attribute_name(attribute)
                .enabled(true)
                .build()
                .map_err(|e| Error::request_build("UpdateTimeToLive", e))?,
        )
        .send()
        .await
        .map_err(|e| Error::service("UpdateTimeToLive", table_name, e))?;
    Ok(())
}

/// Describes `table_name` (`DescribeTable`, `DescribeTimeToLive`) and lists how it differs
/// from `layout`.
pub(crate) async fn check_table(
    client: &Client,
    table_name: &str,
    type_name: &'static str,
    layout: &Layout,
) -> Result<Vec<TableDifference>, Error> {
    let out = describe_table(client, table_name).await?;
    let table = out.table().ok_or_else(|| Error::UnexpectedResponse {
        entity: type_name,
        operation: "DescribeTable",
        message: format!("no description of table {table_name}"),
    })?;
    let mut diffs = Vec::new();
    key_differences(table, layout, &mut diffs);
    let on_demand = billing_difference(table, layout, &mut diffs) == Billing::OnDemand;
    for index in &layout.indexes {
        index_differences(table, index, on_demand, &mut diffs);
    }
    undeclared_indexes(table, layout, &mut diffs);
    stream_difference(table, layout, &mut diffs);

    let described_ttl = ttl_on(client, table_name)
        .await?
        .and_then(|d| d.attribute_name);
    if described_ttl.as_deref() != layout.ttl {
        diffs.push(TableDifference::Ttl {
            declared: layout.ttl.map(str::to_owned),
            described: described_ttl,
        });
    }
    Ok(diffs)
}

/// The table's key schema and the types of its key attributes (the indexes' included).
fn key_differences(table: &TableDescription, layout: &Layout, diffs: &mut Vec<TableDifference>) {
    let declared = keys_text(&layout.keys);
    let described = described_keys(table.key_schema());
    if declared != described {
        diffs.push(TableDifference::Keys {
            declared,
            described,
        });
    }
    for def in &layout.definitions {
        let found = table
            .attribute_definitions()
            .iter()
            .find(|d| d.attribute_name() == def.name)
            .map(|d| d.attribute_type());
        let same = matches!(
            (def.ty, found),
            (ScalarType::S, Some(ScalarAttributeType::S))
                | (ScalarType::N, Some(ScalarAttributeType::N))
                | (ScalarType::B, Some(ScalarAttributeType::B))
        );
        if !same {
            diffs.push(TableDifference::AttributeType {
                attribute: def.name.to_owned(),
                declared: def.ty,
                described: found.map(|t| t.as_str().to_owned()),
            });
        }
    }
}

/// The billing mode and, when provisioned, the table's capacity; returns the billing
/// described.
fn billing_difference(
    table: &TableDescription,
    layout: &Layout,
    diffs: &mut Vec<TableDifference>,
) -> Billing {
    // Billing: an on-demand table says so in its billing summary; a table created with
    // provisioned capacity may have no summary (DynamoDB's default mode).
    let described_mode = table
        .billing_mode_summary()
        .and_then(|s| s.billing_mode())
        .cloned()
        .unwrap_or(BillingMode::Provisioned);
    let described_billing = match described_mode {
        BillingMode::PayPerRequest => Billing::OnDemand,
        _ => Billing::Provisioned(
            described_throughput(table.provisioned_throughput())
                .unwrap_or(Throughput { read: 0, write: 0 }),
        ),
    };
    if described_billing != layout.billing {
        diffs.push(TableDifference::Billing {
            declared: layout.billing,
            described: described_billing,
        });
    }
    described_billing
}

/// Index `index` as declared against the table's index of that name: its kind and keys,
/// its projection and (of a GSI on a provisioned table) its capacity.
fn index_differences(
    table: &TableDescription,
    index: &IndexLayout,
    on_demand: bool,
    diffs: &mut Vec<TableDifference>,
) {
    let name = index.name;
    let gsi = table
        .global_secondary_indexes()
        .iter()
        .find(|g| g.index_name() == Some(name));
    let lsi = table
        .local_secondary_indexes()
        .iter()
        .find(|l| l.index_name() == Some(name));
    let (kind, keys, projection, throughput) = match (gsi, lsi) {
        (Some(g), _) => (
            IndexKind::Global,
            g.key_schema(),
            g.projection(),
            if on_demand {
                None
            } else {
                described_throughput(g.provisioned_throughput())
            },
        ),
        (None, Some(l)) => (IndexKind::Local, l.key_schema(), l.projection(), None),
        (None, None) => {
            diffs.push(TableDifference::MissingIndex {
                index: name.to_owned(),
            });
            return;
        }
    };
    let declared = keys_text(&index.keys);
    let described = described_keys(keys);
    if kind != index.kind || declared != described {
        let kind_text = |k: IndexKind| match k {
            IndexKind::Global => "GSI",
            IndexKind::Local => "LSI",
        };
        diffs.push(TableDifference::IndexKeys {
            index: name.to_owned(),
            declared: format!("{} {declared}", kind_text(index.kind)),
            described: format!("{} {described}", kind_text(kind)),
        });
    }
    let declared = projection_text(index.projection);
    let described = described_projection(projection);
    if declared != described {
        diffs.push(TableDifference::IndexProjection {
            index: name.to_owned(),
            declared,
            described,
        });
    }
    if kind == IndexKind::Global
        && index.kind == IndexKind::Global
        && throughput != index.throughput
    {
        diffs.push(TableDifference::IndexThroughput {
            index: name.to_owned(),
            declared: index.throughput,
            described: throughput,
        });
    }
}

/// The table's indexes that are not declared.
fn undeclared_indexes(table: &TableDescription, layout: &Layout, diffs: &mut Vec<TableDifference>) {
    let described_names = table
        .global_secondary_indexes()
        .iter()
        .filter_map(|g| g.index_name())
        .chain(
            table
                .local_secondary_indexes()
                .iter()
                .filter_map(|l| l.index_name()),
        );
    for name in described_names {
        if !layout.indexes.iter().any(|i| i.name == name) {
            diffs.push(TableDifference::UndeclaredIndex {
                index: name.to_owned(),
            });
        }
    }
}

/// The stream's view type (`None`: no stream).
fn stream_difference(table: &TableDescription, layout: &Layout, diffs: &mut Vec<TableDifference>) {
    let described_stream = table
        .stream_specification()
        .filter(|s| s.stream_enabled())
        .and_then(|s| s.stream_view_type())
        .and_then(StreamView::from_sdk);
    if described_stream != layout.stream {
        diffs.push(TableDifference::Stream {
            declared: layout.stream,
            described: described_stream,
        });
    }
}
