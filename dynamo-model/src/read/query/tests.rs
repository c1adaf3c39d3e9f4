use crate::{Db, Entity, Table};
use serde::{Deserialize, Serialize};

/// Cursors are bound to their query by these bytes: two different key conditions
/// (including ones whose strings only split differently) must never share them.
#[test]
fn condition_bytes_tell_every_condition_apart() {
    use super::plan::condition_bytes;
    use super::{PartitionValue, SortCondition};
    use crate::keyspace::sort::{AttributeRange, SortKeyOp, SortKeyRange};
    use aws_sdk_dynamodb::types::AttributeValue;
    let s = |x: &str| x.to_owned();
    let range = |op: SortKeyOp, exclude: Option<&str>, prefix: Option<&str>| {
        SortCondition::Rendered(SortKeyRange {
            op,
            exclude: exclude.map(s),
            prefix: prefix.map(s),
            revisions_of: None,
        })
    };
    let history = |rest: &str| {
        let layout = crate::schema::history::HistoryLayout::AWS_NUMBER_BASED;
        let (low, high) = layout.revision_bounds(rest);
        SortCondition::Rendered(SortKeyRange {
            op: SortKeyOp::Between(low, high),
            exclude: None,
            prefix: None,
            revisions_of: Some((layout, rest.to_owned())),
        })
    };
    let pks = [
        PartitionValue::Rendered(s("a")),
        PartitionValue::Rendered(s("ab")),
        PartitionValue::Rendered(s("")),
        PartitionValue::Attributes(vec![("x", AttributeValue::S(s("a")))]),
    ];
    let sks = [
        range(SortKeyOp::Any, None, None),
        range(SortKeyOp::Nothing, None, None),
        range(SortKeyOp::Eq(s("b")), None, None),
        range(SortKeyOp::Eq(s("")), None, None),
        range(SortKeyOp::BeginsWith(s("b")), None, None),
        range(SortKeyOp::Le(s("b")), None, None),
        range(SortKeyOp::Ge(s("b")), None, None),
        range(SortKeyOp::Between(s("a"), s("bc")), None, None),
        range(SortKeyOp::Between(s("ab"), s("c")), None, None),
        range(SortKeyOp::Ge(s("b")), Some("b"), None),
        range(SortKeyOp::Ge(s("b")), None, Some("b")),
        range(SortKeyOp::Ge(s("b")), Some(""), None),
        range(SortKeyOp::Ge(s("b")), Some("b"), Some("b")),
        history(""),
        history("a"),
        history("ab"),
        SortCondition::Attributes(AttributeRange::default()),
    ];
    let mut seen = std::collections::HashMap::new();
    for pk in &pks {
        for sk in &sks {
            if let Some(other) = seen.insert(condition_bytes(pk, sk), (pk, sk)) {
                panic!("{pk:?} {sk:?} and {other:?} share their bytes");
            }
            assert_eq!(
                condition_bytes(pk, sk),
                condition_bytes(&pk.clone(), &sk.clone())
            );
        }
    }
}

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "U#{user}", sk = "O#{id}")]
struct Order {
    user: String,
    id: String,
    total: u64,
    note: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "U#{user}", sk = "O#{id}", entity_type = "Order")]
struct OrderTotal {
    user: String,
    id: String,
    total: u64,
}

fn db() -> Db<App> {
    crate::db::offline()
}

#[test]
fn a_projection_names_the_view_attributes_the_type_and_the_keys() {
    let db = db();
    let prepared = db
        .query(Order::partition("u"))
        .project::<OrderTotal>()
        .prepare()
        .unwrap();
    let names = prepared.expressions.names.unwrap_or_default();
    let projected: Vec<&str> = prepared
        .expressions
        .projection
        .as_deref()
        .unwrap_or_default()
        .split(", ")
        .filter_map(|placeholder| names.get(placeholder).map(String::as_str))
        .collect();
    assert_eq!(projected, ["user", "id", "total", "_type", "PK", "SK"]);
    let full = db.query(Order::partition("u")).prepare().unwrap();
    assert!(full.expressions.projection.is_none());
}
