use crate::Table;

#[derive(crate::Table)]
#[dynamo(
        pk = "PK",
        sk = "SK",
        gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
        gsi(name = "ByRegion", pk = ["RegionPK", "RegionPK2"], sk = ["RegionSK:N"]),
        lsi(name = "LSI1", sk = "LSI1SK")
    )]
struct App;

#[derive(crate::Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    billing = "provisioned",
    capacity(read = 4, write = 2),
    stream = "NEW_AND_OLD_IMAGES",
    gsi(name = "GSI1", pk = "GSI1PK", capacity(read = 3, write = 1)),
    gsi(name = "GSI2", pk = "GSI2PK"),
    lsi(name = "LSI1", sk = "LSI1SK")
)]
struct Provisioned;

#[test]
fn the_declared_capacity_and_stream_are_in_the_schema_and_the_layout() {
    use super::{Billing, StreamView, Throughput};
    let schema = &Provisioned::SCHEMA;
    assert_eq!(
        schema.billing,
        Billing::Provisioned(Throughput { read: 4, write: 2 })
    );
    assert_eq!(schema.stream, Some(StreamView::NewAndOldImages));
    let declared: Vec<_> = schema.indexes.iter().map(|i| i.throughput).collect();
    assert_eq!(
        declared,
        vec![Some(Throughput { read: 3, write: 1 }), None, None]
    );
    // A GSI without its own units takes the table's; an LSI has none.
    assert_eq!(
        laid_out_throughputs(schema),
        vec![
            Some(Throughput { read: 3, write: 1 }),
            Some(Throughput { read: 4, write: 2 }),
            None
        ]
    );
    // On demand and no stream unless declared.
    assert_eq!(App::SCHEMA.billing, Billing::OnDemand);
    assert_eq!(App::SCHEMA.stream, None);
    assert!(
        laid_out_throughputs(&App::SCHEMA)
            .iter()
            .all(Option::is_none)
    );
}

/// The throughput of each index as the table's layout creates it.
fn laid_out_throughputs(schema: &super::TableSchema) -> Vec<Option<super::Throughput>> {
    let layout = super::layout(schema);
    layout.indexes.iter().map(|i| i.throughput).collect()
}

#[test]
fn options_dynamodb_would_refuse_are_refused_before_sending() {
    use super::{TableOptions, Throughput};
    let declared = TableOptions::declared(&Provisioned::SCHEMA);
    let one = Throughput { read: 1, write: 1 };
    let refused = [
        declared
            .clone()
            .provisioned(Throughput { read: 0, write: 1 }),
        declared
            .clone()
            .provisioned(Throughput { read: 1, write: 0 }),
        declared
            .clone()
            .index_throughput("GSI2", Throughput { read: 1, write: 0 }),
        declared.clone().index_throughput("Nope", one),
        declared.clone().index_throughput("LSI1", one),
        declared.clone().on_demand().index_throughput("GSI1", one),
    ];
    for options in refused {
        let err = super::layout_with(&Provisioned::SCHEMA, &options).err();
        assert_eq!(
            err.and_then(|e| e.validation_reason()),
            Some(crate::ValidationReason::InvalidOption),
            "{options:?}"
        );
        // And through the Db, nothing is sent (an offline client would fail to send).
        let db = crate::Db::<Provisioned>::offline("t");
        let err = futures_util::FutureExt::now_or_never(db.create_table_with(&options))
            .and_then(Result::err);
        assert_eq!(
            err.and_then(|e| e.validation_reason()),
            Some(crate::ValidationReason::InvalidOption),
            "{options:?}"
        );
    }
    assert!(super::layout_with(&Provisioned::SCHEMA, &declared).is_ok());
    // On demand drops the declared index units.
    let on_demand = declared.on_demand();
    assert_eq!(on_demand.index_throughput_of("GSI1"), None);
    assert!(super::layout_with(&Provisioned::SCHEMA, &on_demand).is_ok());
}

#[test]
fn index_key_attributes_are_every_index_key_and_nothing_else() {
    let schema = &App::SCHEMA;
    for name in [
        "GSI1PK",
        "GSI1SK",
        "RegionPK",
        "RegionPK2",
        "RegionSK",
        "LSI1SK",
    ] {
        assert!(schema.is_index_key_attribute(name), "{name}");
    }
    // The table's own keys are reserved attributes, not index keys of their own.
    for name in ["PK", "SK", "_type", "GSI1", "RegionSK:N", "gsi1pk", ""] {
        assert!(!schema.is_index_key_attribute(name), "{name}");
    }
}
