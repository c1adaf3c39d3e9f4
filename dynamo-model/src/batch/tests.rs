use super::get::settle;
use super::*;
use crate::{Item, RawKey, Table};

fn put(pk: &str, sk: &str) -> WriteOp {
    WriteOp::Delete {
        entity: "E",
        key: RawKey {
            pk: pk.into(),
            sk: Some(sk.into()),
        },
        table: None,
    }
}

#[test]
fn interleaving_spreads_partitions_and_keeps_each_partitions_order() {
    let mut ops = Vec::new();
    for p in ["a", "b", "c"] {
        for i in 0..3 {
            ops.push(put(p, &i.to_string()));
        }
    }
    ops.push(put("d", "0"));
    let out = BatchWrite::<Dummy>::interleaved(ops);
    let keys: Vec<(String, String)> = out
        .iter()
        .map(|o| (o.key().pk.clone(), o.key().sk.clone().unwrap_or_default()))
        .collect();
    let expect = [
        ("a", "0"),
        ("b", "0"),
        ("c", "0"),
        ("d", "0"),
        ("a", "1"),
        ("b", "1"),
        ("c", "1"),
        ("a", "2"),
        ("b", "2"),
        ("c", "2"),
    ];
    assert_eq!(keys, expect.map(|(a, b)| (a.to_string(), b.to_string())));
}

#[derive(crate::Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct Keyed;

fn raw(pk: &str, sk: &str) -> RawKey {
    RawKey {
        pk: pk.into(),
        sk: Some(sk.into()),
    }
}

fn stored(key: &RawKey, extra: &str) -> Item {
    let mut item = key.to_item(&Keyed::SCHEMA);
    item.insert("x".into(), AttributeValue::S(extra.into()));
    item
}

use aws_sdk_dynamodb::types::AttributeValue;
use proptest::prelude::*;

proptest! {
    /// Every key asked for lands in exactly one of found, unprocessed and not found,
    /// each found item carries its own key's position, and nothing returned is dropped.
    #[test]
    fn settle_accounts_for_every_key_once(
        fates in proptest::collection::vec(0u8..3, 0..60),
        positions_from in 0usize..1000,
    ) {
        // Pairs of keys differing only in where the partition key ends, ("p0", "s")
        // and ("p", "0s"): the borrowed comparison must tell them apart.
        let asked: Vec<(usize, RawKey)> = (0..fates.len())
            .map(|j| {
                let i = j / 2;
                let key = if j % 2 == 0 { raw(&format!("p{i}"), "s") } else { raw("p", &format!("{i}s")) };
                (positions_from + j, key)
            })
            .collect();
        let items: Vec<Item> = asked.iter().zip(&fates).filter(|(_, f)| **f == 1)
            .map(|((_, k), _)| stored(k, "item")).collect();
        let unprocessed: Vec<Item> = asked.iter().zip(&fates).filter(|(_, f)| **f == 2)
            .map(|((_, k), _)| k.to_item(&Keyed::SCHEMA)).collect();
        let settled = settle(&Keyed::SCHEMA, asked.clone(), items.clone(), &unprocessed);
        let with = |fate: u8| -> Vec<(usize, RawKey)> {
            asked.iter().zip(&fates).filter(|(_, f)| **f == fate).map(|(k, _)| k.clone()).collect()
        };
        let found_positions: Vec<usize> = with(1).iter().map(|(p, _)| *p).collect();
        prop_assert_eq!(settled.found.iter().map(|(p, _)| *p).collect::<Vec<_>>(), found_positions);
        prop_assert_eq!(settled.found.into_iter().map(|(_, i)| i).collect::<Vec<_>>(), items);
        prop_assert_eq!(settled.unprocessed, with(2));
        prop_assert_eq!(settled.not_found, with(0));
    }
}

#[test]
fn settle_keeps_items_and_unprocessed_keys_it_did_not_ask_for() {
    let asked = vec![(0, raw("a", "1")), (1, raw("a", "2"))];
    let stray = raw("z", "9");
    let settled = settle(
        &Keyed::SCHEMA,
        asked,
        vec![stored(&raw("a", "2"), "mine"), stored(&stray, "stray")],
        &[raw("y", "8").to_item(&Keyed::SCHEMA)],
    );
    assert_eq!(
        settled.found,
        vec![
            (1, stored(&raw("a", "2"), "mine")),
            (usize::MAX, stored(&stray, "stray"))
        ]
    );
    assert_eq!(settled.not_found, vec![(0, raw("a", "1"))]);
    // Asked again, not dropped.
    assert_eq!(settled.unprocessed, vec![(usize::MAX, raw("y", "8"))]);
}

#[test]
fn settle_counts_a_key_found_and_handed_back_as_found() {
    let key = raw("a", "1");
    let settled = settle(
        &Keyed::SCHEMA,
        vec![(7, key.clone())],
        vec![stored(&key, "v")],
        &[key.to_item(&Keyed::SCHEMA)],
    );
    assert_eq!(settled.found.len(), 1);
    assert!(settled.unprocessed.is_empty() && settled.not_found.is_empty());
}

struct Dummy;
impl crate::schema::Sealed for Dummy {}
impl Table for Dummy {
    const SCHEMA: crate::TableSchema = crate::TableSchema {
        type_name: "Dummy",
        pk: crate::schema::KeyAttribute {
            name: "PK",
            ty: crate::schema::ScalarType::S,
        },
        sk: None,
        indexes: &[],
        ttl: None,
        entity_type: "_type",
        write_token: "_wt",
        identify_by_keys: false,
        writes_entity_type: true,
        writes_token: true,
        billing: crate::schema::Billing::OnDemand,
        stream: None,
    };
}

/// A delete of `pk`/`sk` in `table` (`None`: the batch's own).
fn delete_in(table: Option<&TableRef>, pk: &str, sk: &str) -> WriteOp {
    WriteOp::Delete {
        entity: "E",
        key: raw(pk, sk),
        table: table.cloned(),
    }
}

#[test]
fn a_chunk_groups_its_requests_by_table_and_maps_unprocessed_items_back_per_table() {
    let own = TableRef::of(&crate::Db::<Keyed>::offline("days_01"));
    let other = TableRef::of(&crate::Db::<Keyed>::offline("days_02"));
    let mut ops = vec![
        delete_in(None, "p", "1"),
        delete_in(Some(&other), "p", "1"),
        delete_in(Some(&own), "p", "2"),
        delete_in(Some(&other), "p", "3"),
    ];
    let items = write::tables::request_items(&ops, &own).expect("requests");
    let mut counts: Vec<(&str, usize)> = items.iter().map(|(t, r)| (t.as_str(), r.len())).collect();
    counts.sort_unstable();
    assert_eq!(counts, [("days_01", 2), ("days_02", 2)]);

    // DynamoDB hands back the key ("p", "1") of the other table only (and an item of a
    // table the chunk never wrote, which matches nothing).
    let back = |key: &RawKey| {
        aws_sdk_dynamodb::types::WriteRequest::builder()
            .delete_request(
                aws_sdk_dynamodb::types::DeleteRequest::builder()
                    .set_key(Some(key.to_item(&Keyed::SCHEMA)))
                    .build()
                    .expect("key set"),
            )
            .build()
    };
    let unprocessed = std::collections::HashMap::from([
        ("days_02".to_owned(), vec![back(&raw("p", "1"))]),
        ("days_03".to_owned(), vec![back(&raw("p", "2"))]),
    ]);
    let written = write::tables::keep_unprocessed(&mut ops, unprocessed, &own);
    assert_eq!(written, 3);
    assert_eq!(ops, [delete_in(Some(&other), "p", "1")]);
    assert_eq!(ops[0].table().map(TableRef::name), Some("days_02"));
}

#[test]
fn one_key_twice_in_one_table_is_a_duplicate_and_once_in_each_of_two_tables_is_not() {
    let db = crate::Db::<Keyed>::offline("days_01");
    let other = TableRef::of(&crate::Db::<Keyed>::offline("days_02"));
    let reason = |ops: Vec<WriteOp>| {
        db.batch_write()
            .ops(ops)
            .params()
            .err()
            .and_then(|e| e.validation_reason())
    };
    let duplicate = Some(crate::ValidationReason::DuplicateKey);
    // The batch's own table, named or not, is one table.
    let own = TableRef::of(&db);
    let twice = vec![delete_in(None, "p", "1"), delete_in(Some(&own), "p", "1")];
    assert_eq!(reason(twice), duplicate);
    // In two tables: past the duplicate check (then refused by the registry, which knows
    // no entity "E").
    let apart = vec![delete_in(None, "p", "1"), delete_in(Some(&other), "p", "1")];
    assert_ne!(reason(apart), duplicate);
}

#[test]
fn the_record_of_a_call_names_each_operations_own_table() {
    let own = TableRef::of(&crate::Db::<Keyed>::offline("days_01"));
    let other = TableRef::of(&crate::Db::<Keyed>::offline("days_02"));
    let table_of = |op: WriteOp| op.target(&own).table.to_string();
    assert_eq!(table_of(delete_in(None, "p", "1")), "days_01");
    assert_eq!(table_of(delete_in(Some(&other), "p", "1")), "days_02");
    let put = WriteOp::Put {
        entity: "E",
        key: raw("p", "2"),
        item: stored(&raw("p", "2"), "v"),
        table: Some(other.clone()),
    };
    let target = put.target(&own);
    assert_eq!(
        (&*target.table, target.key),
        ("days_02", Some(raw("p", "2")))
    );
}
