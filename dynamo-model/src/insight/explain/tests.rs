use super::observed::Sizes;
use super::*;
use crate::{Collection, Db, Entity, Table};
use aws_sdk_dynamodb::types::AttributeValue;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK", projection = keys_only)
)]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{user}", sk = "ORDER#{id}",
         index(GSI1, pk = "STATUS#{status}", sk = "{id}"))]
struct Order {
    user: String,
    id: String,
    status: String,
    total: u64,
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{user}", sk = "PROFILE")]
struct User {
    user: String,
}

#[derive(Collection)]
#[allow(dead_code)]
enum UserView {
    User(User),
    Order(Order),
}

fn db() -> Db<App> {
    Db::offline("app")
}

/// Observations given by hand.
#[derive(Default)]
struct Fake {
    seen: Option<Seen>,
    sizes: HashMap<&'static str, Sizes>,
}

impl Observations for Fake {
    fn query(&self, _: &QueryInput) -> Option<Seen> {
        self.seen.clone()
    }
    fn scan(&self, _: &ScanInput) -> Option<Seen> {
        self.seen.clone()
    }
    fn sizes(&self, _: &str, entity_type: &str) -> Option<Sizes> {
        self.sizes.get(entity_type).copied()
    }
}

fn seen(read: u64, returned: u64) -> Seen {
    Seen {
        calls: 10,
        calls_per_minute: 1.0,
        items_read: read,
        items_returned: returned,
        returned_by_type: vec![("Order".into(), returned)],
    }
}

#[test]
fn a_query_shows_its_params_with_placeholders_resolved() -> Result<(), crate::Error> {
    let query = || {
        db().query(Order::partition("ada"))
            .filter(Order::fields().total.gt(100u64))
            .limit(20)
    };
    let plan = query().explain()?;
    assert_eq!(plan.requests, Requests::Query(vec![query().params()?]));
    assert_eq!((plan.operation, plan.table.as_str()), ("Query", "app"));
    assert_eq!((plan.fanout, plan.index.as_deref()), (Fanout::One, None));
    let key = plan.key_condition.as_ref().map(|k| k.resolved.as_str());
    assert_eq!(
        key,
        Some(r#"PK = "USER#ada" AND begins_with(SK, "ORDER#")"#)
    );
    let filter = plan
        .filter
        .as_ref()
        .map(|f| f.resolved.clone())
        .unwrap_or_default();
    assert!(filter.contains(r#"= "Order""#), "{filter}");
    assert!(filter.contains("total > 100"), "{filter}");
    assert_eq!(plan.entity_types, ["Order"]);
    assert_eq!(plan.estimate.items, Some(20));
    assert_eq!(plan.estimate.sizes, SizeBasis::Unknown);
    assert_eq!(plan.estimate.read_units, None);
    // Eventually consistent: half a unit at least, a 1 MB response at most.
    assert_eq!(plan.estimate.min_read_units, 0.5);
    assert_eq!(plan.estimate.max_read_units, 128.0);
    assert!(plan.warnings.is_empty());
    let text = plan.to_string();
    assert!(text.contains(r#"key condition: PK = "USER#ada""#), "{text}");
    assert!(
        text.contains("as sent: #n0 = :v0 AND begins_with(#n1, :v1)"),
        "{text}"
    );
    Ok(())
}

#[test]
fn a_collection_reads_its_members_without_a_type_filter() -> Result<(), crate::Error> {
    let plan = db()
        .query(User::partition("ada"))
        .collection::<UserView>()
        .explain()?;
    assert_eq!(plan.entity_types, ["User", "Order"]);
    assert_eq!(plan.filter, None);
    let key = plan.key_condition.map(|k| k.resolved);
    assert_eq!(key.as_deref(), Some(r#"PK = "USER#ada""#));
    Ok(())
}

#[test]
fn keys_of_a_keys_only_index_warn_of_the_hydrate() -> Result<(), crate::Error> {
    let plan = db()
        .query(Order::gsi1_partition("open"))
        .keys_only()
        .explain()?;
    assert_eq!(plan.index.as_deref(), Some("GSI1"));
    assert_eq!(
        plan.warnings,
        [Warning::Hydrate {
            index: "GSI1",
            projection: "KEYS_ONLY"
        }]
    );
    assert!(plan.to_string().contains("whole items take a hydrate"));
    // The whole entity is refused there, as by params().
    assert!(db().query(Order::gsi1_partition("open")).explain().is_err());
    Ok(())
}

#[test]
fn scatter_scan_and_batch_count_their_requests() -> Result<(), crate::Error> {
    let shards = || {
        db().scatter_query(["a", "b", "c"].map(Order::partition))
            .page_size(10)
    };
    let plan = shards().explain()?;
    assert_eq!(plan.fanout, Fanout::Shards(3));
    assert_eq!(plan.requests, Requests::Query(shards().params()?));
    assert_eq!(plan.estimate.items, Some(30));
    assert_eq!(plan.estimate.max_read_units, 3.0 * 128.0);
    assert!(
        plan.to_string()
            .contains("key condition (of the first shard)")
    );

    let scan = || db().scan::<Order>().segments(4).consistent();
    let plan = scan().explain()?;
    assert_eq!(plan.fanout, Fanout::Segments(4));
    assert_eq!(plan.requests, Requests::Scan(scan().params()?));
    assert_eq!(plan.estimate.min_read_units, 4.0);
    assert_eq!(db().scan::<Order>().explain()?.fanout, Fanout::One);

    let keys = || (0..250).map(|i| User::key(format!("u-{}", i % 200)));
    let batch = || db().batch_get::<User>().keys(keys());
    let plan = batch().explain()?;
    assert_eq!(
        plan.fanout,
        Fanout::Batches {
            requests: 2,
            keys: 200
        }
    );
    assert_eq!(plan.requests, Requests::BatchGet(batch().params()?));
    assert_eq!(plan.keys[0], r#"PK = "USER#u-0" AND SK = "PROFILE""#);
    // Each key costs at least a unit (half eventually consistent), found or not.
    assert_eq!(plan.estimate.min_read_units, 100.0);
    assert!(plan.to_string().contains("… and 197 more keys"));
    Ok(())
}

#[test]
fn a_get_shows_its_key() -> Result<(), crate::Error> {
    let get = || db().get(User::key("ada")).consistent();
    let plan = get().explain()?;
    assert_eq!(plan.requests, Requests::Get(get().params()?));
    assert_eq!(plan.keys, [r#"PK = "USER#ada" AND SK = "PROFILE""#]);
    assert!(plan.consistent);
    assert_eq!(plan.estimate.items, Some(1));
    assert_eq!(
        (plan.estimate.min_read_units, plan.estimate.max_read_units),
        (1.0, 100.0)
    );
    Ok(())
}

/// An explanation of `query` with `observed`.
fn observed(query: crate::read::Query<Order>, observed: &Fake) -> Result<Explain, crate::Error> {
    let input = query.params()?;
    let reading = Reading::of::<Order>(None);
    Ok(Explain::query(
        reading,
        vec![input],
        Fanout::One,
        Some(observed),
    ))
}

#[test]
fn observed_sizes_give_the_read_units_of_a_page() -> Result<(), crate::Error> {
    let fake = Fake {
        sizes: HashMap::from([(
            "Order",
            Sizes {
                mean: 1000.0,
                samples: 40,
            },
        )]),
        ..Fake::default()
    };
    let plan = observed(db().query(Order::partition("ada")).limit(20), &fake)?;
    // 20 items of 1,000 bytes: 20,000 bytes round once to 20 KB, 5 units, half of that
    // eventually consistent.
    assert_eq!(plan.estimate.read_units, Some(2.5));
    assert_eq!(
        plan.estimate.sizes,
        SizeBasis::Observed {
            mean_bytes: 1000.0,
            samples: 40
        }
    );
    assert!(plan.to_string().contains("~2.5 RCU"));
    Ok(())
}

#[test]
fn a_wasteful_filter_warns_and_a_tight_one_does_not() -> Result<(), crate::Error> {
    let filtered = || {
        db().query(Order::partition("ada"))
            .filter(Order::fields().status.eq("open"))
    };
    let wasteful = Fake {
        seen: Some(seen(1000, 100)),
        ..Fake::default()
    };
    let plan = observed(filtered(), &wasteful)?;
    assert_eq!(
        plan.warnings,
        [Warning::FilterDiscards {
            discarded: 0.9,
            calls: 10
        }]
    );
    // Without a Limit, the items a request was observed to read.
    assert_eq!(plan.estimate.items, Some(100));
    assert!(plan.to_string().contains("discarded 90 %"));
    let tight = Fake {
        seen: Some(seen(1000, 990)),
        ..Fake::default()
    };
    assert!(observed(filtered(), &tight)?.warnings.is_empty());
    // Half kept is not under the threshold.
    let half = Fake {
        seen: Some(seen(1000, 500)),
        ..Fake::default()
    };
    assert!(observed(filtered(), &half)?.warnings.is_empty());
    Ok(())
}

#[test]
fn frequent_scans_and_dropped_types_warn() -> Result<(), crate::Error> {
    let mut often = seen(100, 100);
    often.calls_per_minute = 40.0;
    often.returned_by_type.push(("Invoice".into(), 7));
    let fake = Fake {
        seen: Some(often),
        ..Fake::default()
    };
    let inputs = db().scan::<Order>().segments(2).params()?;
    let plan = Explain::scan(Reading::of::<Order>(None), inputs, Some(&fake));
    assert_eq!(
        plan.warnings,
        [
            Warning::Frequent {
                read: "scan",
                per_minute: 20.0
            },
            Warning::DroppedEntityTypes {
                types: vec![("Invoice".into(), 7)]
            }
        ]
    );
    let text = plan.to_string();
    assert!(text.contains("ran 20.0 times a minute"), "{text}");
    assert!(text.contains("Invoice (7)"), "{text}");
    // A query of one partition is not watched for frequency.
    let plan = observed(db().query(Order::partition("ada")), &fake)?;
    assert!(!matches!(plan.warnings[0], Warning::Frequent { .. }));
    Ok(())
}

#[test]
fn placeholders_resolve_whole_tokens() {
    let names = HashMap::from([("#n1".to_owned(), "a".into()), ("#n10".into(), "b".into())]);
    let values = HashMap::from([
        (":v1".to_owned(), AttributeValue::N("1".into())),
        (":v10".into(), AttributeValue::S("x\"y".into())),
        (
            ":v2".into(),
            AttributeValue::L(vec![AttributeValue::Bool(true), AttributeValue::Null(true)]),
        ),
    ]);
    let e = render::expression(
        Some("#n1 = :v1 AND #n10 = :v10 AND #n10 IN (:v2) AND #x = :y"),
        Some(&names),
        Some(&values),
    );
    assert_eq!(
        e.map(|e| e.resolved).as_deref(),
        Some(r#"a = 1 AND b = "x\"y" AND b IN ([true, null]) AND #x = :y"#)
    );
}
