//! Key delimiters other than `#` against DynamoDB Local.
//!
//! For every delimiter (`#`, `.`, `_`, `|`, `:`), a composite sort key `N{d}{name}{d}{n}`
//! (and an index sort key `{name}{d}{n}`) queried by a range on its first component, a
//! string of hostile characters, returns exactly the items an in-memory reference selects,
//! in key order, in both directions and page by page through cursors; no two values share
//! a key (a collision would lose an item). The seeds' layouts (`2014-07-09.1` with a
//! table-wide `.`, `{status}_{day}` on an index with `_`) are written, read, batch-written
//! (which needs the registry to split keys at the right delimiter) and updated (which reads
//! key fields back with the table key's delimiter and writes them with the index's).

use crate::common::reference::{bounds, on_component, operands, paged, selected, store, Op, Row};
use crate::common::*;
use dynamo_model::{local, Db, Entity, Partition, SortKeyCondition, Table};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::sync::atomic::{AtomicUsize, Ordering};
use time::macros::date;
use time::Date;

/// An entity of the test, one per delimiter: a name and a number under a group.
trait Named: Entity<Table = App> + Clone {
    fn new(group: &str, name: &str, n: u32) -> Self;
    fn row(self) -> Row;
    fn table_partition(group: &str) -> Partition<Self>;
    fn index_partition(group: &str) -> Partition<Self, AppGsi1>;
    fn on_table(op: &Op) -> SortKeyCondition<Self>;
    fn on_index(op: &Op) -> SortKeyCondition<Self, AppGsi1>;
}

/// The entities of the test: each `name: delimiter, pk, sk, index pk, index sk;`.
macro_rules! delimited {
    ($($ty:ident: $d:tt, $pk:tt, $sk:tt, $ipk:tt, $isk:tt;)*) => {$(
        #[derive(Entity, Debug, Clone, PartialEq)]
        #[dynamo(table = App, delimiter = $d, pk = $pk, sk = $sk)]
        #[dynamo(index(GSI1, pk = $ipk, sk = $isk))]
        pub struct $ty {
            pub group: String,
            pub name: String,
            pub n: u32,
        }

        impl Named for $ty {
            fn new(group: &str, name: &str, n: u32) -> Self {
                $ty {
                    group: group.into(),
                    name: name.into(),
                    n,
                }
            }
            fn row(self) -> Row {
                (self.name, self.n)
            }
            fn table_partition(group: &str) -> Partition<Self> {
                $ty::partition(group)
            }
            fn index_partition(group: &str) -> Partition<Self, AppGsi1> {
                $ty::gsi1_partition(group)
            }
            fn on_table(op: &Op) -> SortKeyCondition<Self> {
                on_component!(op, $ty::sk().name())
            }
            fn on_index(op: &Op) -> SortKeyCondition<Self, AppGsi1> {
                on_component!(op, $ty::gsi1_sk().name())
            }
        }
    )*};
}

delimited! {
    HashNamed: "#", "H#{group}", "N#{name}#{n}", "HI#{group}", "{name}#{n}";
    DotNamed: ".", "D.{group}", "N.{name}.{n}", "DI.{group}", "{name}.{n}";
    UnderscoreNamed: "_", "U_{group}", "N_{name}_{n}", "UI_{group}", "{name}_{n}";
    PipeNamed: "|", "P|{group}", "N|{name}|{n}", "PI|{group}", "{name}|{n}";
    ColonNamed: ":", "C:{group}", "N:{name}:{n}", "CI:{group}", "{name}:{n}";
}

/// Names made of the characters around every delimiter and its escape character, digits
/// and uppercase letters (escaped under `:`, `_`, `|`), escapes' look-alikes and UTF-8.
fn hostile_names() -> impl Strategy<Value = String> {
    const PIECES: &[&str] = &[
        "", "a", "b", "A", "Z", "0", "9", "John", " ", "!", "#", "$", "%", "%23", "-", ".", "/",
        "/2E", ":", ";", ";3A", "_", "`", "`5F", "|", "}", "}7C", "~", "\u{1}", "\u{7f}", "é",
    ];
    prop_oneof![
        4 => prop::collection::vec(prop::sample::select(PIECES), 1..4).prop_map(|p| p.concat()),
        1 => "[a.#_|:/`};A0~]{0,3}",
    ]
}

async fn check_case<E: Named>(
    db: &Db<App>,
    group: &str,
    people: &[Row],
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let stored = store(db, people, |name, n| E::new(group, name, n))
        .await
        .map_err(fail)?;
    let everything = db
        .query(E::table_partition(group))
        .all()
        .await
        .map_err(fail)?;
    prop_assert_eq!(&everything.mapped(E::row), &stored, "the whole partition");
    for op in ops {
        let (expected, reversed) = selected(&stored, op);
        let table = || db.query(E::table_partition(group)).sk(E::on_table(op));
        let forward = table()
            .page_size(3)
            .all()
            .await
            .map_err(fail)?
            .mapped(E::row);
        prop_assert_eq!(&forward, &expected, "table {:?}", op);
        let backward = paged(|| table().reverse(), E::row).await.map_err(fail)?;
        prop_assert_eq!(&backward, &reversed, "table reversed pages {:?}", op);
        let index = || db.query(E::index_partition(group)).sk(E::on_index(op));
        prop_assert_eq!(
            &paged(index, E::row).await.map_err(fail)?,
            &expected,
            "index {:?}",
            op
        );
    }
    Ok(())
}

/// The property for entity `E` (one delimiter), over `cases` cases.
fn every_operator_matches_the_reference<E: Named>(cases: u32) -> TestResult {
    let (runtime, db) = runtime_and_table::<App>()?;
    let groups = AtomicUsize::new(0);
    let people = prop::collection::vec((hostile_names(), 0u32..3), 1..10);
    let mut runner = runner(cases);
    let cases = (people, operands(hostile_names()));
    let outcome = runner.run(&cases, |(people, operands)| {
        let (a, b, prefix) = bounds(&people, &operands);
        let ops = Op::every(&a, &b, &prefix);
        let group = format!("g{}", groups.fetch_add(1, Ordering::Relaxed));
        runtime.block_on(check_case::<E>(&db, &group, &people, &ops))
    });
    outcome.map_err(|e| e.to_string().into())
}

const CASES: u32 = 10;

/// One test per delimiter: `name: entity;`.
macro_rules! ranges_match_the_reference {
    ($($test:ident: $entity:ty;)*) => {$(
        #[test]
        fn $test() -> TestResult {
            every_operator_matches_the_reference::<$entity>(CASES)
        }
    )*};
}

ranges_match_the_reference! {
    hash_ranges_match_the_reference: HashNamed;
    dot_ranges_match_the_reference: DotNamed;
    underscore_ranges_match_the_reference: UnderscoreNamed;
    pipe_ranges_match_the_reference: PipeNamed;
    colon_ranges_match_the_reference: ColonNamed;
}

// ---------------------------------------------------------------- the seeds' layouts

/// Orders of a day spread over shards, `2014-07-09.1`-style: the table declares `.`.
#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    delimiter = ".",
    gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")
)]
pub struct Orders;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Orders, pk = "{day}.{shard}", sk = "{order_id}",
         index(GSI1, delimiter = "_", pk = "{status}_{day}", sk = "{order_id}"))]
pub struct ShardedOrder {
    pub day: Date,
    pub shard: u8,
    pub order_id: String,
    pub status: String,
    pub total: u32,
}

fn order(day: Date, shard: u8, id: &str, status: &str) -> ShardedOrder {
    ShardedOrder {
        day,
        shard,
        order_id: id.into(),
        status: status.into(),
        total: 1,
    }
}

#[tokio::test]
async fn the_seeds_layouts_are_written_read_batched_and_updated() -> TestResult {
    let db = local::fresh_table::<Orders>().await?;
    let day = date!(2014 - 07 - 09);
    let first = order(day, 1, "o-1", "PENDING");
    let raw = first.primary_key().into_raw()?;
    assert_eq!(raw.pk, "2014-07-09.001");
    // `-` sorts below `.`: escaped, so that `o` < `o-1` holds with components after it.
    assert_eq!(raw.sk.as_deref(), Some("o/2D1"));
    db.put(&first).await?;
    let o_1 = || {
        ShardedOrder::key(ShardedOrderKey {
            day,
            shard: 1u8,
            order_id: "o-1",
        })
    };
    let got = db.get(o_1()).await?;
    assert_eq!(got, Some(first.clone()));

    // A batch write checks that each key is one the entity's templates render, which
    // splits the key at the table's `.`.
    let batch: Vec<ShardedOrder> = (0..30)
        .map(|i| order(day, i % 3, &format!("b.{i:02}"), "PENDING"))
        .collect();
    db.batch_write().puts(&batch).await?;
    let shard = |shard: u8| {
        db.query(ShardedOrder::partition(ShardedOrderPartition {
            day,
            shard,
        }))
    };
    let shard_two = items_of(shard(2)).await?;
    assert_eq!(shard_two.len(), 10);
    assert!(shard_two.iter().all(|o| o.shard == 2));
    // `o-1` and the `b.NN` ids, in the order of the ids (`.` is written `/2E`).
    let ids: Vec<String> = shard(1).all().await?.mapped(|o| o.order_id);
    let mut expected: Vec<String> = (0..30)
        .filter(|i| i % 3 == 1)
        .map(|i| format!("b.{i:02}"))
        .chain(["o-1".to_owned()])
        .collect();
    expected.sort();
    assert_eq!(ids, expected);

    // The index key, `_`-delimited: the status is escaped (uppercase letters sort below
    // `_`), the day is not.
    let item = first.to_item()?;
    assert_eq!(
        item["GSI1PK"].as_s().map_err(|_| "not a string")?,
        "`50`45`4E`44`49`4E`47_2014-07-09"
    );
    let with_status = |status: &'static str| {
        db.query(ShardedOrder::gsi1_partition(ShardedOrderGsi1Partition {
            status,
            day,
        }))
    };
    assert_eq!(items_of(with_status("PENDING")).await?.len(), 31);

    // An update of the status rewrites the index key: the day is read back from the
    // `.`-delimited table key and written `_`-delimited.
    let f = ShardedOrder::fields();
    db.update(o_1()).set(f.status, "SHIPPED").await?;
    let shipped = items_of(with_status("SHIPPED")).await?;
    assert_eq!(shipped.len(), 1);
    assert_eq!(shipped[0].order_id, "o-1");
    assert_eq!(items_of(with_status("PENDING")).await?.len(), 30);
    Ok(())
}

/// The seed's layout with the shard computed by the crate: `2014-07-09.07` from the
/// order id, under the table's `.`; a sharded index under `_`; the hash the same as under
/// `#` (it is over the field's `#` encoding).
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Orders, pk = "{day:date}.{order_id:shard(16)}", sk = "DAYORDER.{day}.{order_id}",
         index(GSI1, delimiter = "_", pk = "COMPUTED_{status}_{order_id:shard(4)}", sk = "{day}_{order_id}"))]
pub struct DayOrder {
    pub day: time::OffsetDateTime,
    pub order_id: String,
    pub status: String,
}

#[tokio::test]
async fn computed_shards_follow_the_templates_delimiter() -> TestResult {
    use dynamo_model::key::computed::shard_of;
    let db = dynamo_model::local::fresh_table::<Orders>().await?;
    let day = time::macros::datetime!(2014-07-09 10:00 UTC);
    let mut written = Vec::new();
    for i in 0..40 {
        let o = DayOrder {
            day: day + time::Duration::minutes(i),
            order_id: format!("o.{i}_x"),
            status: if i % 2 == 0 {
                "OPEN".into()
            } else {
                "DONE".into()
            },
        };
        db.put(&o).await?;
        written.push(o);
    }
    let key = written[3].primary_key().into_raw()?;
    assert_eq!(key.pk, format!("2014-07-09.{:02}", shard_of("o.3_x", 16)));
    // Point reads by the source fields only.
    for o in &written {
        assert_eq!(db.get(o.primary_key()).await?.as_ref(), Some(o));
    }
    // Every shard, merged: the day's orders.
    let all = db.scatter_query(DayOrder::partition(day)).all().await?;
    assert_eq!(all.items.len(), 40);
    // The sharded index under `_`.
    let open = db
        .scatter_query(DayOrder::gsi1_partition("OPEN"))
        .all()
        .await?;
    assert_eq!(open.items.len(), 20);
    assert!(open.items.iter().all(|o| o.status == "OPEN"));
    Ok(())
}
