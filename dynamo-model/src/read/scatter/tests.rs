use super::*;
use crate::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", ttl = "expires")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "DAY#{day}#{shard}", sk = "{at}#{id}")]
struct Event {
    day: String,
    shard: u8,
    at: u64,
    id: String,
    kind: String,
}

fn db() -> Db<App> {
    crate::db::offline()
}

fn shards(list: &[u8]) -> ScatterQuery<Event> {
    db().scatter_query(
        list.iter()
            .map(|&shard| Event::partition(EventPartition { day: "d", shard })),
    )
}

fn fingerprint(q: ScatterQuery<Event>) -> Fingerprint {
    q.plan().map(|p| p.fingerprint).expect("a valid plan")
}

#[test]
fn the_fingerprint_binds_partitions_order_count_condition_filter_and_direction() {
    let base = || shards(&[0, 1, 2]);
    let kind = || Event::fields().kind;
    let reads = [
        ("the same", base()),
        ("another order", shards(&[1, 0, 2])),
        ("fewer", shards(&[0, 1])),
        ("more", shards(&[0, 1, 2, 3])),
        ("another shard", shards(&[0, 1, 3])),
        ("a condition", base().sk(Event::sk().at().ge(5u64))),
        ("another condition", base().sk(Event::sk().at().ge(6u64))),
        ("reversed", base().reverse()),
        ("a filter", base().filter(kind().eq("a"))),
        ("another filter value", base().filter(kind().eq("b"))),
        ("another filter", base().filter(kind().ne("a"))),
        ("expired left out", base().exclude_expired()),
    ];
    let mut seen: Vec<(&str, Fingerprint)> = Vec::new();
    for (what, read) in reads {
        let fp = fingerprint(read);
        if let Some((other, _)) = seen.iter().find(|(_, f)| *f == fp) {
            panic!("{what} and {other} share a fingerprint");
        }
        seen.push((what, fp));
    }
    // What does not change the sequence does not change the fingerprint.
    assert_eq!(
        fingerprint(base()),
        fingerprint(base().limit(3).page_size(2))
    );
    assert_eq!(fingerprint(base()), fingerprint(base().concurrency(2)));
    // The expiry filter's value is the time of each request: only the choice binds.
    let expiring = || base().exclude_expired();
    let first = fingerprint(expiring());
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(first, fingerprint(expiring()));
}

#[test]
fn no_partition_and_a_repeated_partition_are_refused() {
    let refused = |q: ScatterQuery<Event>, reason| match q.plan() {
        Err(Error::Validation { reason: r, .. }) => assert_eq!(r, reason),
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("accepted"),
    };
    refused(shards(&[]), crate::ValidationReason::InvalidOption);
    refused(shards(&[0, 1, 0]), crate::ValidationReason::DuplicateKey);
    assert!(shards(&[0]).plan().is_ok());
}

#[test]
fn filter_values_bind_by_content_not_by_map_order() {
    let map = |pairs: &[(&str, &str)]| {
        AttributeValue::M(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), AttributeValue::S((*v).to_owned())))
                .collect(),
        )
    };
    let bytes = |v: &AttributeValue| {
        let mut out = Vec::new();
        value_bytes(&mut out, v);
        out
    };
    let pairs: Vec<(String, String)> = (0..20)
        .map(|i| (format!("k{i}"), format!("v{i}")))
        .collect();
    let forward: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let mut backward = forward.clone();
    backward.reverse();
    assert_eq!(bytes(&map(&forward)), bytes(&map(&backward)));
    assert_ne!(bytes(&map(&forward)), bytes(&map(&forward[1..])));
    // Values that print alike are told apart by their type and length.
    assert_ne!(
        bytes(&AttributeValue::S("1".into())),
        bytes(&AttributeValue::N("1".into()))
    );
    assert_ne!(
        bytes(&AttributeValue::L(vec![AttributeValue::S("ab".into())])),
        bytes(&AttributeValue::L(vec![
            AttributeValue::S("a".into()),
            AttributeValue::S("b".into())
        ]))
    );
}

#[test]
fn reads_and_streams_are_send_and_static() {
    fn spawnable<T: Send + 'static>(_: T) {}
    spawnable(shards(&[0, 1]).all());
    spawnable(shards(&[0, 1]).page(None));
    spawnable(shards(&[0, 1]).stream());
    spawnable(shards(&[0, 1]).keys_only().hydrate(None));
}
