//! Billing mode, provisioned capacity and streams in table declarations: `create_table`
//! makes what is declared (or what the run-time options say), DynamoDB Local describes it
//! back, `check_table` finds nothing to report on such a table and reports each
//! difference on a table made otherwise.

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::types::{BillingMode, StreamViewType};
use dynamo_model::export::Export;
use dynamo_model::local::{self, client_for, unique_table_name};
use dynamo_model::schema::{Billing, StreamView, TableDifference, TableOptions, Throughput};
use dynamo_model::{Db, Table};

/// A table whose stream consumer needs both images, provisioned, with a GSI of its own
/// capacity, one taking the table's, and an LSI.
#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    billing = "provisioned",
    capacity(read = 5, write = 4),
    stream = "NEW_AND_OLD_IMAGES",
    gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK", capacity(read = 2, write = 1)),
    gsi(name = "GSI2", pk = "GSI2PK", projection = keys_only),
    lsi(name = "LSI1", sk = "LSI1SK"),
    ttl = "expires"
)]
pub struct Provisioned;

/// The same keys and indexes, on demand and without a stream.
#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
    gsi(name = "GSI2", pk = "GSI2PK", projection = keys_only),
    lsi(name = "LSI1", sk = "LSI1SK"),
    ttl = "expires"
)]
pub struct OnDemand;

/// Other keys, indexes and TTL than `OnDemand`'s.
#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK:N", projection(include = ["a"])),
    gsi(name = "GSI3", pk = "GSI3PK"),
    stream = "KEYS_ONLY"
)]
pub struct Other;

/// No sort key.
#[derive(Table)]
#[dynamo(pk = "PK", ttl = "expires")]
pub struct NoSort;

async fn db_on<T: Table>(name: &str) -> Res<Db<T>> {
    let endpoint = tokio::task::spawn_blocking(local::shared_endpoint).await??;
    Ok(Db::new(client_for(&endpoint), name.to_owned()))
}

type Described = (
    Option<BillingMode>,
    Option<(i64, i64)>,
    Vec<(String, Option<(i64, i64)>)>,
    Option<(bool, Option<StreamViewType>)>,
);

async fn summary<T: Table>(db: &Db<T>) -> Res<Described> {
    let table = crate::common::describe(db).await?;
    let units =
        |t: Option<&dynamo_model::aws_sdk_dynamodb::types::ProvisionedThroughputDescription>| {
            t.map(|t| {
                (
                    t.read_capacity_units().unwrap_or(0),
                    t.write_capacity_units().unwrap_or(0),
                )
            })
        };
    let mut gsis: Vec<(String, Option<(i64, i64)>)> = table
        .global_secondary_indexes()
        .iter()
        .map(|g| {
            (
                g.index_name().unwrap_or("").to_owned(),
                units(g.provisioned_throughput()),
            )
        })
        .collect();
    gsis.sort();
    Ok((
        table
            .billing_mode_summary()
            .and_then(|s| s.billing_mode())
            .cloned(),
        units(table.provisioned_throughput()),
        gsis,
        table
            .stream_specification()
            .map(|s| (s.stream_enabled(), s.stream_view_type().cloned())),
    ))
}

/// `create_table` makes the declared stream and capacity; DynamoDB describes them back,
/// the exports say the same, and `check_table` has nothing to report.
#[tokio::test]
async fn create_table_makes_the_declared_stream_and_capacity() -> TestResult {
    let db = local::fresh_table::<Provisioned>().await?;
    let (mode, table, gsis, stream) = summary(&*db).await?;
    assert!(
        matches!(mode, None | Some(BillingMode::Provisioned)),
        "{mode:?}"
    );
    assert_eq!(table, Some((5, 4)));
    assert_eq!(
        gsis,
        vec![
            ("GSI1".to_owned(), Some((2, 1))),
            // No capacity of its own: the table's.
            ("GSI2".to_owned(), Some((5, 4))),
        ]
    );
    assert_eq!(stream, Some((true, Some(StreamViewType::NewAndOldImages))));
    assert_eq!(db.check_table().await?, Vec::<TableDifference>::new());

    let cfn = Export::of::<Provisioned>(db.table_name()).cloudformation_properties();
    assert_eq!(cfn["BillingMode"], "PROVISIONED");
    assert_eq!(
        cfn["ProvisionedThroughput"],
        serde_json::json!({"ReadCapacityUnits": 5, "WriteCapacityUnits": 4})
    );
    assert_eq!(
        cfn["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"],
        serde_json::json!({"ReadCapacityUnits": 2, "WriteCapacityUnits": 1})
    );
    assert_eq!(
        cfn["GlobalSecondaryIndexes"][1]["ProvisionedThroughput"],
        serde_json::json!({"ReadCapacityUnits": 5, "WriteCapacityUnits": 4})
    );
    assert!(cfn["LocalSecondaryIndexes"][0]
        .get("ProvisionedThroughput")
        .is_none());
    assert_eq!(
        cfn["StreamSpecification"]["StreamViewType"],
        "NEW_AND_OLD_IMAGES"
    );
    Ok(())
}

/// A stage's own capacity and stream: created as the options say, checked clean
/// against them, and different from the declaration.
#[tokio::test]
async fn run_time_options_override_the_declared_capacity_and_stream() -> TestResult {
    let name = unique_table_name("Stage");
    let db = db_on::<Provisioned>(&name).await?;
    let stage = TableOptions::declared(&Provisioned::SCHEMA)
        .provisioned(Throughput { read: 9, write: 8 })
        .index_throughput("GSI2", Throughput { read: 3, write: 3 })
        .stream(Some(StreamView::NewImage));
    db.create_table_with(&stage).await?;
    let result = async {
        let (_, table, gsis, stream) = summary(&db).await?;
        assert_eq!(table, Some((9, 8)));
        assert_eq!(
            gsis,
            vec![
                ("GSI1".to_owned(), Some((2, 1))),
                ("GSI2".to_owned(), Some((3, 3))),
            ]
        );
        assert_eq!(stream, Some((true, Some(StreamViewType::NewImage))));
        assert_eq!(db.check_table_with(&stage).await?, vec![]);
        let declared = db.check_table().await?;
        assert!(
            declared.contains(&TableDifference::Billing {
                declared: Billing::Provisioned(Throughput { read: 5, write: 4 }),
                described: Billing::Provisioned(Throughput { read: 9, write: 8 }),
            }),
            "{declared:?}"
        );
        assert!(
            declared.contains(&TableDifference::Stream {
                declared: Some(StreamView::NewAndOldImages),
                described: Some(StreamView::NewImage),
            }),
            "{declared:?}"
        );
        assert!(
            declared.contains(&TableDifference::IndexThroughput {
                index: "GSI2".into(),
                declared: Some(Throughput { read: 5, write: 4 }),
                described: Some(Throughput { read: 3, write: 3 }),
            }),
            "{declared:?}"
        );
        assert_eq!(declared.len(), 3, "{declared:?}");
        let cfn = Export::of::<Provisioned>(&name)
            .with_options(&stage)?
            .cloudformation_properties();
        assert_eq!(cfn["StreamSpecification"]["StreamViewType"], "NEW_IMAGE");
        assert_eq!(cfn["ProvisionedThroughput"]["ReadCapacityUnits"], 9);
        Res::Ok(())
    }
    .await;
    db.delete_table().await?;
    result
}

/// A table made on demand without a stream, checked against the provisioned declaration
/// with a stream: billing, each GSI's capacity and the stream are reported; and against a
/// declaration with other keys and indexes: each of those too.
#[tokio::test]
async fn check_table_reports_every_difference() -> TestResult {
    let db = local::fresh_table::<OnDemand>().await?;
    assert_eq!(db.check_table().await?, vec![]);

    let as_provisioned = db_on::<Provisioned>(db.table_name()).await?;
    let diffs = as_provisioned.check_table().await?;
    assert_eq!(
        diffs,
        vec![
            TableDifference::Billing {
                declared: Billing::Provisioned(Throughput { read: 5, write: 4 }),
                described: Billing::OnDemand,
            },
            TableDifference::IndexThroughput {
                index: "GSI1".into(),
                declared: Some(Throughput { read: 2, write: 1 }),
                described: None,
            },
            TableDifference::IndexThroughput {
                index: "GSI2".into(),
                declared: Some(Throughput { read: 5, write: 4 }),
                described: None,
            },
            TableDifference::Stream {
                declared: Some(StreamView::NewAndOldImages),
                described: None,
            },
        ]
    );
    for diff in &diffs {
        assert!(!diff.to_string().is_empty());
    }
    assert_eq!(
        diffs[0].to_string(),
        "billing: declared provisioned (read 5, write 4), described on demand"
    );

    let as_other = db_on::<Other>(db.table_name()).await?;
    let diffs = as_other.check_table().await?;
    let expected = [
        TableDifference::AttributeType {
            attribute: "GSI1SK".into(),
            declared: dynamo_model::schema::ScalarType::N,
            described: Some("S".into()),
        },
        TableDifference::AttributeType {
            attribute: "GSI3PK".into(),
            declared: dynamo_model::schema::ScalarType::S,
            described: None,
        },
        TableDifference::IndexProjection {
            index: "GSI1".into(),
            declared: "INCLUDE a".into(),
            described: "ALL".into(),
        },
        TableDifference::MissingIndex {
            index: "GSI3".into(),
        },
        TableDifference::UndeclaredIndex {
            index: "GSI2".into(),
        },
        TableDifference::UndeclaredIndex {
            index: "LSI1".into(),
        },
        TableDifference::Stream {
            declared: Some(StreamView::KeysOnly),
            described: None,
        },
        TableDifference::Ttl {
            declared: None,
            described: Some("expires".into()),
        },
    ];
    assert_eq!(diffs, expected, "{diffs:#?}");

    let as_no_sort = db_on::<NoSort>(db.table_name()).await?;
    let diffs = as_no_sort.check_table().await?;
    assert_eq!(
        diffs.first(),
        Some(&TableDifference::Keys {
            declared: "PK HASH".into(),
            described: "PK HASH, SK RANGE".into(),
        }),
        "{diffs:#?}"
    );
    Ok(())
}
