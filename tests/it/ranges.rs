//! Sort-key ranges on composite keys against DynamoDB Local: a range on a component that
//! more components follow returns exactly the items whose component is in range, whatever
//! the characters of the values, through pagination and in both directions; conditions
//! with an empty value mean every item or none and never send an invalid request.

use crate::common::reference::{bounds, on_component, operands, paged, selected, store, Op, Row};
use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::config::retry::RetryConfig;
use dynamo_model::local::faults::{client_with_faults, FaultKind, Faults};
use dynamo_model::{local, Db, Entity, Error, Page, SortKeyCondition};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The template: a string component followed by another. On GSI1 the sort key
/// starts with the field.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "PEOPLE#{group}", sk = "N#{name}#{n}",
         index(GSI1, pk = "PEOPLE_BY_NAME#{group}", sk = "{name}#{n}"))]
pub struct Person {
    pub group: String,
    pub name: String,
    pub n: u32,
}

/// A sort key that is one field.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "LABELS#{group}", sk = "{name}")]
pub struct Label {
    pub group: String,
    pub name: String,
}

async fn put_people(db: &Db<App>, group: &str, people: &[(&str, u32)]) -> TestResult {
    for (name, n) in people {
        db.put(&Person {
            group: group.into(),
            name: (*name).into(),
            n: *n,
        })
        .await?;
    }
    Ok(())
}

fn names(people: &[Person]) -> Vec<&str> {
    people.iter().map(|p| p.name.as_str()).collect()
}

/// Runs `condition` on the table (`N#{name}#{n}`) and on GSI1 (`{name}#{n}`); both must
/// return the same names.
async fn on_table_and_index(
    db: &Db<App>,
    group: &str,
    table: SortKeyCondition<Person>,
    index: SortKeyCondition<Person, AppGsi1>,
) -> Result<Vec<String>, Error> {
    let on_table = db.query(Person::partition(group)).sk(table).all().await?;
    let on_index = db
        .query(Person::gsi1_partition(group))
        .sk(index)
        .all()
        .await?;
    assert_eq!(names(&on_table.items), names(&on_index.items));
    Ok(on_table.items.into_iter().map(|p| p.name).collect())
}

// ---------------------------------------------------------------- point 1: the examples

#[tokio::test]
async fn name_le_leaves_out_names_that_extend_the_bound() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let all = ["a", "b", "b!", "b ", "b#", "b\"", "b$", "b%", "ba", "c"];
    put_people(&db, "g", &all.map(|name| (name, 1))).await?;
    let le = on_table_and_index(
        &db,
        "g",
        Person::sk().name().le("b"),
        Person::gsi1_sk().name().le("b"),
    )
    .await?;
    assert_eq!(le, ["a", "b"]);
    let lt = on_table_and_index(
        &db,
        "g",
        Person::sk().name().lt("b"),
        Person::gsi1_sk().name().lt("b"),
    )
    .await?;
    assert_eq!(lt, ["a"]);
    Ok(())
}

#[tokio::test]
async fn name_ge_and_gt_keep_names_that_extend_the_bound() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let all = [
        "Joh",
        "John",
        "John Smith",
        "John!",
        "John#",
        "Johnny",
        "Johm",
    ];
    put_people(&db, "g", &all.map(|name| (name, 1))).await?;
    let ge = on_table_and_index(
        &db,
        "g",
        Person::sk().name().ge("John"),
        Person::gsi1_sk().name().ge("John"),
    )
    .await?;
    assert_eq!(ge, ["John", "John Smith", "John!", "John#", "Johnny"]);
    let gt = on_table_and_index(
        &db,
        "g",
        Person::sk().name().gt("John"),
        Person::gsi1_sk().name().gt("John"),
    )
    .await?;
    assert_eq!(gt, ["John Smith", "John!", "John#", "Johnny"]);
    Ok(())
}

#[tokio::test]
async fn name_between_keeps_extensions_of_the_low_bound_and_drops_those_of_the_high() -> TestResult
{
    let db = local::fresh_table::<App>().await?;
    let all = [
        "`", "a", "a!", "a#", "a\"", "a b", "ab", "b", "b!", "b#", "b ", "c",
    ];
    put_people(&db, "g", &all.map(|name| (name, 1))).await?;
    let between = on_table_and_index(
        &db,
        "g",
        Person::sk().name().between("a", "b"),
        Person::gsi1_sk().name().between("a", "b"),
    )
    .await?;
    assert_eq!(between, ["a", "a b", "a!", "a\"", "a#", "ab", "b"]);
    Ok(())
}

// ---------------------------------------------------------------- point 6: empty values

/// The same table through a client on which every Query fails: a condition that matches
/// nothing must not send one.
async fn no_queries(
    db: &Db<App>,
) -> Result<(Db<App>, Faults), Box<dyn std::error::Error + Send + Sync>> {
    let endpoint = tokio::task::spawn_blocking(local::shared_endpoint).await??;
    let faults = Faults::new(6)
        .kinds([FaultKind::ServerError])
        .operations(["Query"]);
    let client = client_with_faults(&endpoint, &faults, RetryConfig::disabled());
    Ok((Db::new(client, db.table_name()), faults))
}

#[tokio::test]
async fn empty_values_on_a_sort_key_that_is_one_field() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    for name in ["a", "m", "z"] {
        db.put(&Label {
            group: "g".into(),
            name: name.into(),
        })
        .await?;
    }
    let labels =
        |page: Page<Label>| -> Vec<String> { page.items.into_iter().map(|l| l.name).collect() };
    let q = || db.query(Label::partition("g"));
    let all = ["a", "m", "z"];
    assert_eq!(
        labels(q().sk(Label::sk().name().starts_with("")).all().await?),
        all
    );
    assert_eq!(labels(q().sk(Label::sk().name().gt("")).all().await?), all);
    assert_eq!(labels(q().sk(Label::sk().name().ge("")).all().await?), all);
    assert_eq!(
        labels(q().sk(Label::sk().name().between("", "m")).all().await?),
        ["a", "m"]
    );
    assert_eq!(
        labels(q().sk(Label::sk().name().gt("")).reverse().all().await?),
        ["z", "m", "a"]
    );

    // No label is empty (DynamoDB refuses an empty key): these match nothing, unsent.
    let (unsent, faults) = no_queries(&db).await?;
    let q = || unsent.query(Label::partition("g"));
    let none: [SortKeyCondition<Label>; 5] = [
        Label::sk().name().lt(""),
        Label::sk().name().le(""),
        Label::sk().name().between("m", ""),
        Label::sk().name().between("z", "a"),
        Label::sk().name().eq("").into(),
    ];
    for condition in none {
        assert_eq!(
            labels(q().sk(condition.clone()).all().await?),
            Vec::<String>::new(),
            "{condition:?}"
        );
        let page = q().sk(condition.clone()).limit(1).page(None).await?;
        assert!(
            page.items.is_empty() && page.cursor.is_none(),
            "{condition:?}"
        );
        assert_eq!(q().sk(condition).reverse().all().await?.items, []);
    }
    assert_eq!(faults.stats().calls, 0);
    Ok(())
}

#[tokio::test]
async fn empty_values_on_a_sort_key_that_starts_with_a_field() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    // `""` is a valid component when more follow: GSI1SK `#0000000001`, SK `N##0000000001`.
    put_people(&db, "g", &[("", 1), ("", 2), ("a", 1), ("b", 1)]).await?;
    let index = || db.query(Person::gsi1_partition("g"));
    let got = |page: Page<Person>| -> Vec<(String, u32)> {
        page.items.into_iter().map(|p| (p.name, p.n)).collect()
    };
    let all = [
        ("".into(), 1),
        ("".into(), 2),
        ("a".into(), 1),
        ("b".into(), 1),
    ];
    let s = Person::gsi1_sk;
    assert_eq!(
        got(index().sk(s().name().starts_with("")).all().await?),
        all
    );
    assert_eq!(got(index().sk(s().name().ge("")).all().await?), all);
    assert_eq!(got(index().sk(s().name().gt("")).all().await?), all[2..]);
    assert_eq!(got(index().sk(s().name().le("")).all().await?), all[..2]);
    assert_eq!(got(index().sk(s().name().eq("")).all().await?), all[..2]);
    assert_eq!(
        got(index().sk(s().name().eq("").n().eq(2u32)).all().await?),
        all[1..2]
    );
    assert_eq!(
        got(index().sk(s().name().between("", "a")).all().await?),
        all[..3]
    );
    assert_eq!(
        got(index().sk(s().name().between("", "")).all().await?),
        all[..2]
    );
    // The table's template starts with a literal; the same conditions hold there.
    let table = || db.query(Person::partition("g"));
    assert_eq!(
        got(table().sk(Person::sk().name().le("")).all().await?),
        all[..2]
    );
    assert_eq!(
        got(table().sk(Person::sk().name().gt("")).all().await?),
        all[2..]
    );

    let (unsent, faults) = no_queries(&db).await?;
    let index = || unsent.query(Person::gsi1_partition("g"));
    assert_eq!(index().sk(s().name().lt("")).all().await?.items, []);
    assert_eq!(
        index().sk(s().name().between("b", "a")).all().await?.items,
        []
    );
    assert_eq!(
        items_of(
            unsent
                .query(Person::partition("g"))
                .sk(Person::sk().name().lt(""))
        )
        .await?,
        []
    );
    assert_eq!(faults.stats().calls, 0);
    Ok(())
}

// ---------------------------------------------------------------- property

/// Names biased to what broke key encodings: bytes below and above `#`, `%` and escape
/// look-alikes, the empty string, multi-byte UTF-8, and values extending each other.
fn hostile_names() -> impl Strategy<Value = String> {
    const PIECES: &[&str] = &[
        "",
        "a",
        "b",
        "John",
        " Smith",
        " ",
        "!",
        "\"",
        "#",
        "$",
        "%",
        "&",
        "%23",
        "%2",
        "%25",
        "\"$",
        "\u{1}",
        "\u{1f}",
        "\u{7f}",
        "é",
        "€",
        "\u{10FFFF}",
        "~",
    ];
    prop_oneof![
        1 => Just(String::new()),
        3 => "[ab!#$% \"]{0,3}",
        3 => prop::collection::vec(prop::sample::select(PIECES), 1..4).prop_map(|p| p.concat()),
    ]
}

impl Op {
    fn on_table(&self) -> SortKeyCondition<Person> {
        on_component!(self, Person::sk().name())
    }

    fn on_index(&self) -> SortKeyCondition<Person, AppGsi1> {
        on_component!(self, Person::gsi1_sk().name())
    }
}

fn row(p: Person) -> Row {
    (p.name, p.n)
}

async fn check_case(
    db: &'static Db<App>,
    group: &str,
    people: &[Row],
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let person = |name: &str, n| Person {
        group: group.into(),
        name: name.into(),
        n,
    };
    let stored = store(db, people, person).await.map_err(fail)?;
    for op in ops {
        let (expected, reversed) = selected(&stored, op);
        let table = || db.query(Person::partition(group)).sk(op.on_table());
        let index = || db.query(Person::gsi1_partition(group)).sk(op.on_index());

        let forward = table().page_size(2).all().await.map_err(fail)?.mapped(row);
        prop_assert_eq!(&forward, &expected, "table {:?}", op);
        let backward = table()
            .reverse()
            .page_size(3)
            .all()
            .await
            .map_err(fail)?
            .mapped(row);
        prop_assert_eq!(&backward, &reversed, "table reversed {:?}", op);
        prop_assert_eq!(
            &paged(table, row).await.map_err(fail)?,
            &expected,
            "table pages {:?}",
            op
        );
        let reverse_pages = paged(|| table().reverse(), row).await.map_err(fail)?;
        prop_assert_eq!(&reverse_pages, &reversed, "table reversed pages {:?}", op);

        let on_index = index()
            .reverse()
            .page_size(2)
            .all()
            .await
            .map_err(fail)?
            .mapped(row);
        prop_assert_eq!(&on_index, &reversed, "index reversed {:?}", op);
    }
    Ok(())
}

#[test]
fn every_operator_returns_exactly_the_reference_items_of_hostile_names() -> TestResult {
    let runtime = runtime()?;
    // Leaked so that `paged` can take `'static` queries; one per test process.
    let db: &'static Db<App> = Box::leak(Box::new(runtime.block_on(local::fresh_table::<App>())?));
    let groups = AtomicUsize::new(0);
    let people = prop::collection::vec((hostile_names(), 0u32..3), 1..12);
    let mut runner = runner(12);
    let cases = (people, operands(hostile_names()));
    let outcome = runner.run(&cases, |(people, operands)| {
        let (a, b, prefix) = bounds(&people, &operands);
        // Besides every operator, a between whose bounds may be out of order.
        let mut ops = Op::every(&a, &b, &prefix);
        ops.push(Op::Between(a.clone(), b.clone()));
        let group = format!("p{}", groups.fetch_add(1, Ordering::Relaxed));
        runtime.block_on(check_case(db, &group, &people, &ops))
    });
    match outcome {
        Ok(()) => Ok(()),
        Err(e) => Err(e.to_string().into()),
    }
}

/// A sort key whose number is written unpadded, as another program writes it: `v2`,
/// `v10`. Its text order is not its value order.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "SLOTS#{group}", sk = "v{slot}",
         index(GSI1, pk = "SLOTS_BY_TIME#{group}", sk = "{at}#{slot}"))]
pub struct Slot {
    pub group: String,
    #[dynamo(key_format = "unpadded")]
    pub slot: u64,
    #[dynamo(key_format = "rfc3339(0, no_z)")]
    pub at: time::OffsetDateTime,
}

/// A range on such a part would compare text (`v2..v9` for `ge(2)`, dropping `v10`..):
/// every range and `starts_with` is refused before sending with a typed reason, on the
/// table and in scatter-free queries alike; equality works, and a formatted part that
/// keeps order (`rfc3339`) still takes ranges.
#[tokio::test]
async fn ranges_on_a_key_part_whose_format_loses_order_are_refused() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let base = time::macros::datetime!(2020-04-24 14:40:00 UTC);
    for slot in 1..=12u64 {
        db.put(&Slot {
            group: "g".into(),
            slot,
            at: base + time::Duration::minutes(slot as i64),
        })
        .await?;
    }
    let refused = |err: Error, operator: &str| {
        crate::common::assert_refused(&err, dynamo_model::ValidationReason::UnorderedKeyPart);
        assert!(
            err.to_string().contains(operator) && err.to_string().contains("Unpadded"),
            "the operator and format are named: {err}"
        );
    };
    let query = |c: SortKeyCondition<Slot>| db.query(Slot::partition("g")).sk(c);
    refused(
        query(Slot::sk().slot().ge(2u64)).all().await.unwrap_err(),
        "ge",
    );
    refused(
        query(Slot::sk().slot().gt(2u64)).all().await.unwrap_err(),
        "gt",
    );
    refused(
        query(Slot::sk().slot().le(9u64)).all().await.unwrap_err(),
        "le",
    );
    refused(
        query(Slot::sk().slot().lt(9u64)).all().await.unwrap_err(),
        "lt",
    );
    refused(
        query(Slot::sk().slot().between(2u64, 12u64))
            .all()
            .await
            .unwrap_err(),
        "between",
    );
    refused(
        query(Slot::sk().slot().starts_with("1"))
            .all()
            .await
            .unwrap_err(),
        "starts_with",
    );
    refused(
        query(Slot::sk().slot().ge(2u64)).params().unwrap_err(),
        "ge",
    );
    // Equality is exact whatever the format.
    let ten = items_of(
        db.query(Slot::partition("g"))
            .sk(Slot::sk().slot().eq(10u64)),
    )
    .await?;
    assert_eq!(ten.iter().map(|s| s.slot).collect::<Vec<_>>(), [10]);
    // A fixed-width format keeps order: a range on the index's timestamp part is exact.
    let late = items_of(
        db.query(Slot::gsi1_partition("g"))
            .sk(Slot::gsi1_sk().at().ge(base + time::Duration::minutes(10))),
    )
    .await?;
    let mut slots: Vec<u64> = late.iter().map(|s| s.slot).collect();
    slots.sort_unstable();
    assert_eq!(slots, [10, 11, 12]);
    Ok(())
}
