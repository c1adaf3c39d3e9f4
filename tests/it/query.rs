//! Queries: every key-condition operator, prefixes, hierarchies, direction, limits,
//! filters, pagination, cursor misuse, collections.

use crate::common::*;
use dynamo_model::{local, Cursor, Db, DecodeErrorKind, Error, UnknownEntity};
use futures_util::TryStreamExt;
use time::macros::datetime;
use time::Duration;
use uuid::Uuid;

fn line(shop: &str, order_no: &str, line: u16, qty: u32) -> Line {
    Line {
        shop: shop.into(),
        order_no: order_no.into(),
        line,
        qty,
        status: if qty.is_multiple_of(2) { "even" } else { "odd" }.into(),
    }
}

async fn seed_lines(db: &Db<App>) -> TestResult {
    for order_no in ["1", "10", "100", "2"] {
        for l in 0..3u16 {
            db.put(&line("s", order_no, l, u32::from(l))).await?;
        }
    }
    // Another partition whose key extends this one's: `SHOP#s` vs `SHOP#s1`.
    db.put(&line("s1", "1", 0, 0)).await?;
    Ok(())
}

fn ids(lines: &[Line]) -> Vec<(String, u16)> {
    lines.iter().map(|l| (l.order_no.clone(), l.line)).collect()
}

/// The line numbers of `lines`, in their order.
fn line_nos(lines: &[Line]) -> Vec<u16> {
    lines.iter().map(|l| l.line).collect()
}

/// A fresh table holding lines `0..count` of order `order_no` of shop `shop`, each of
/// its line number as quantity.
async fn with_lines(shop: &str, order_no: &str, count: u16) -> Res<local::TempTable<App>> {
    let db = local::fresh_table::<App>().await?;
    for l in 0..count {
        db.put(&line(shop, order_no, l, u32::from(l))).await?;
    }
    Ok(db)
}

#[tokio::test]
async fn whole_component_prefixes_never_match_longer_values() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    seed_lines(&db).await?;
    let page = db
        .query(Line::partition("s"))
        .sk(Line::sk().order_no().eq("1"))
        .all()
        .await?;
    assert_eq!(
        ids(&page.items),
        [("1".into(), 0), ("1".into(), 1), ("1".into(), 2)]
    );
    assert!(page.consumed_capacity > 0.0);

    // USER#1 vs USER#10: a partition never includes a longer partition key.
    db.put(&User::sample("1")).await?;
    db.put(&User::sample("10")).await?;
    let users = items_of(db.query(User::partition("1"))).await?;
    assert_eq!(
        users.iter().map(|u| u.user_id.as_str()).collect::<Vec<_>>(),
        ["1"]
    );
    Ok(())
}

#[tokio::test]
async fn every_sort_key_operator() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    seed_lines(&db).await?;
    let q = || db.query(Line::partition("s"));
    let all = q().all().await?.items;
    // Sorted by the string order of order_no, then numerically by line.
    assert_eq!(all.len(), 12);
    assert_eq!(
        ids(&all)[..4],
        [
            ("1".into(), 0),
            ("1".into(), 1),
            ("1".into(), 2),
            ("10".into(), 0)
        ]
    );

    let eq = items_of(q().sk(Line::sk().order_no().eq("10").line().eq(1u16))).await?;
    assert_eq!(ids(&eq), [("10".into(), 1)]);

    let lt = items_of(q().sk(Line::sk().order_no().eq("10").line().lt(2u16))).await?;
    assert_eq!(ids(&lt), [("10".into(), 0), ("10".into(), 1)]);
    let le = items_of(q().sk(Line::sk().order_no().eq("10").line().le(1u16))).await?;
    assert_eq!(ids(&le), [("10".into(), 0), ("10".into(), 1)]);
    let gt = items_of(q().sk(Line::sk().order_no().eq("10").line().gt(0u16))).await?;
    assert_eq!(ids(&gt), [("10".into(), 1), ("10".into(), 2)]);
    let ge = items_of(q().sk(Line::sk().order_no().eq("10").line().ge(2u16))).await?;
    assert_eq!(ids(&ge), [("10".into(), 2)]);
    let between =
        items_of(q().sk(Line::sk().order_no().eq("10").line().between(1u16, 2u16))).await?;
    assert_eq!(ids(&between), [("10".into(), 1), ("10".into(), 2)]);

    // Ranges on a component followed by more components include every suffix of the bound.
    let orders = |items: Vec<Line>| {
        let mut o: Vec<String> = items.into_iter().map(|l| l.order_no).collect();
        o.dedup();
        o
    };
    assert_eq!(
        orders(q().sk(Line::sk().order_no().lt("10")).all().await?.items),
        ["1"]
    );
    assert_eq!(
        orders(q().sk(Line::sk().order_no().le("10")).all().await?.items),
        ["1", "10"]
    );
    assert_eq!(
        orders(q().sk(Line::sk().order_no().gt("10")).all().await?.items),
        ["100", "2"]
    );
    assert_eq!(
        orders(q().sk(Line::sk().order_no().ge("100")).all().await?.items),
        ["100", "2"]
    );
    assert_eq!(
        orders(
            q().sk(Line::sk().order_no().between("10", "100"))
                .all()
                .await?
                .items
        ),
        ["10", "100"]
    );
    // An explicit partial value does match longer values.
    assert_eq!(
        orders(
            q().sk(Line::sk().order_no().starts_with("1"))
                .all()
                .await?
                .items
        ),
        ["1", "10", "100"]
    );
    Ok(())
}

#[tokio::test]
async fn partial_timestamps_select_a_month() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let base = datetime!(2023-09-28 12:00 UTC);
    for day in 0..10 {
        let order = Order {
            user_id: "u".into(),
            order_id: Uuid::from_u128(day),
            created_at: base + Duration::days(day as i64),
            total_cents: 100,
            status: "open".into(),
            note: None,
        };
        db.put(&order).await?;
    }
    let october = items_of(
        db.query(Order::partition("u"))
            .sk(Order::sk().created_at().starts_with("2023-10")),
    )
    .await?;
    assert_eq!(october.len(), 7);
    assert!(october
        .iter()
        .all(|o| o.created_at.month() == time::Month::October));

    let from = datetime!(2023-09-30 00:00 UTC);
    let to = datetime!(2023-10-02 23:59 UTC);
    let newest_first = items_of(
        db.query(Order::partition("u"))
            .sk(Order::sk().created_at().between(from, to))
            .reverse(),
    )
    .await?;
    let days: Vec<u8> = newest_first.iter().map(|o| o.created_at.day()).collect();
    assert_eq!(days, [2, 1, 30]);
    Ok(())
}

#[tokio::test]
async fn hierarchical_keys_at_every_level() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    for (country, region, state, city) in [
        ("US", "West", "WA", "Seattle"),
        ("US", "West", "WA", "Spokane"),
        ("US", "West", "OR", "Portland"),
        ("US", "East", "NY", "New York"),
        ("USA", "X", "Y", "Z"), // longer country value: must not match "US"
        ("CA", "West", "BC", "Vancouver"),
    ] {
        db.put(&Store {
            country: country.into(),
            region: region.into(),
            state: state.into(),
            city: city.into(),
        })
        .await?;
    }
    let cities = |stores: Vec<Store>| stores.into_iter().map(|s| s.city).collect::<Vec<_>>();
    let q = || db.query(Store::partition());
    let us_west = || Store::sk().country().eq("US").region().eq("West");
    assert_eq!(cities(q().all().await?.items).len(), 6);
    assert_eq!(
        cities(q().sk(Store::sk().country().eq("US")).all().await?.items),
        ["New York", "Portland", "Seattle", "Spokane"]
    );
    assert_eq!(
        cities(items_of(q().sk(us_west())).await?),
        ["Portland", "Seattle", "Spokane"]
    );
    assert_eq!(
        cities(items_of(q().sk(us_west().state().eq("WA"))).await?),
        ["Seattle", "Spokane"]
    );
    assert_eq!(
        cities(items_of(q().sk(us_west().state().eq("WA").city().eq("Seattle"))).await?),
        ["Seattle"]
    );
    Ok(())
}

#[tokio::test]
async fn limit_counts_matching_items_with_and_without_filters() -> TestResult {
    let db = with_lines("s", "7", 40).await?;
    let f = Line::fields();
    let q = || db.query(Line::partition("s"));

    let first = q().limit(5).all().await?;
    assert_eq!(line_nos(&first.items), [0, 1, 2, 3, 4]);
    let last = q().reverse().limit(3).all().await?;
    assert_eq!(line_nos(&last.items), [39, 38, 37]);

    // Only every fifth line matches: DynamoDB's own Limit would return fewer items.
    let filtered = q()
        .filter(f.qty.between(0u32, 39u32).and(f.line.ge(10u16)))
        .filter(f.status.eq("odd"))
        .limit(4)
        .all()
        .await?;
    assert_eq!(line_nos(&filtered.items), [11, 13, 15, 17]);
    let sparse = q()
        .filter(f.qty.gt(34u32))
        .limit(3)
        .page_size(2)
        .all()
        .await?;
    assert_eq!(line_nos(&sparse.items), [35, 36, 37]);

    // Continuing from the cursor of a limited page resumes right after its last item.
    let next = q()
        .filter(f.status.eq("odd"))
        .limit(4)
        .page(filtered_cursor(&db).await?.as_ref())
        .await?;
    assert_eq!(line_nos(&next.items), [9, 11, 13, 15]);
    Ok(())
}

async fn filtered_cursor(
    db: &Db<App>,
) -> Result<Option<Cursor>, Box<dyn std::error::Error + Send + Sync>> {
    let f = Line::fields();
    let page = db
        .query(Line::partition("s"))
        .filter(f.status.eq("odd"))
        .limit(4)
        .page(None)
        .await?;
    assert_eq!(line_nos(&page.items), [1, 3, 5, 7]);
    Ok(page.cursor)
}

#[tokio::test]
async fn pagination_across_many_pages_and_streaming() -> TestResult {
    let db = with_lines("p", "1", 250).await?;
    let mut seen = Vec::new();
    let mut cursor: Option<Cursor> = None;
    let mut pages = 0;
    loop {
        // Rebuilt every time, as a stateless API handler would.
        let page = db
            .query(Line::partition("p"))
            .limit(7)
            .page(cursor.as_ref())
            .await?;
        pages += 1;
        seen.extend(page.items.iter().map(|l| l.line));
        // Cursors travel as strings.
        cursor = page.cursor.map(|c| Cursor::from(c.to_string()));
        if cursor.is_none() {
            break;
        }
        assert!(pages < 100, "pagination does not terminate");
    }
    assert_eq!(seen, (0..250).collect::<Vec<_>>());
    assert_eq!(pages, 36); // 35 full pages, then 5 items

    // Without a limit a page is one DynamoDB page; DynamoDB's page_size splits it.
    let small = db
        .query(Line::partition("p"))
        .page_size(100)
        .page(None)
        .await?;
    assert_eq!(small.items.len(), 100);
    assert!(small.cursor.is_some());

    let streamed: Vec<u16> = db
        .query(Line::partition("p"))
        .page_size(30)
        .stream()
        .map_ok(|l| l.line)
        .try_collect()
        .await?;
    assert_eq!(streamed, (0..250).collect::<Vec<_>>());
    let top: Vec<u16> = db
        .query(Line::partition("p"))
        .reverse()
        .limit(12)
        .page_size(5)
        .stream()
        .map_ok(|l| l.line)
        .try_collect()
        .await?;
    assert_eq!(top, (238..250).rev().collect::<Vec<_>>());
    Ok(())
}

#[tokio::test]
async fn cursors_are_bound_to_their_query() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    for l in 0..5u16 {
        db.put(&line("a", "1", l, 1)).await?;
        db.put(&line("b", "1", l, 1)).await?;
    }
    let page = db.query(Line::partition("a")).limit(2).page(None).await?;
    let cursor = page.cursor.ok_or("expected a cursor")?;
    let refused = |r: Result<_, Error>| match r {
        Err(Error::Cursor { reason, .. }) => reason,
        other => panic!("expected a cursor error, got {other:?}"),
    };
    use dynamo_model::cursor::CursorError;
    // Another partition, another direction, another key condition, another table.
    for other in [
        db.query(Line::partition("b")).limit(2),
        db.query(Line::partition("a")).reverse(),
        db.query(Line::partition("a"))
            .sk(Line::sk().order_no().eq("1")),
    ] {
        assert_eq!(
            refused(other.page(Some(&cursor)).await),
            CursorError::WrongQuery
        );
    }
    let other_table = local::fresh_table::<App>().await?;
    assert_eq!(
        refused(
            other_table
                .query(Line::partition("a"))
                .page(Some(&cursor))
                .await
        ),
        CursorError::WrongQuery
    );
    // Tampering: flip one character.
    let mut text = cursor.to_string().into_bytes();
    let i = text.len() / 2;
    text[i] = if text[i] == b'A' { b'B' } else { b'A' };
    let tampered = Cursor::from(String::from_utf8(text)?);
    assert_eq!(
        refused(db.query(Line::partition("a")).page(Some(&tampered)).await),
        CursorError::Tampered
    );
    assert!(matches!(
        refused(
            db.query(Line::partition("a"))
                .page(Some(&Cursor::from("not a cursor")))
                .await
        ),
        CursorError::Malformed(_)
    ));
    // A keyed table rejects unkeyed cursors.
    let keyed = db.clone().with_cursor_secret("s3cret");
    assert_eq!(
        refused(keyed.query(Line::partition("a")).page(Some(&cursor)).await),
        CursorError::Tampered
    );
    // The right query continues.
    let rest = db.query(Line::partition("a")).page(Some(&cursor)).await?;
    assert_eq!(line_nos(&rest.items), [2, 3, 4]);
    Ok(())
}

#[tokio::test]
async fn filters_on_typed_paths() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let f = Thing::fields();
    for (i, status) in ["new", "used", "broken", "new"].iter().enumerate() {
        db.put(&Thing {
            name: format!("t{i}"),
            status: (*status).into(),
            data: (i % 2 == 0).then(|| "x".repeat(i + 1)),
            ttl: Some(i as i64),
            r#type: "gadget".into(),
            size: i as i32,
        })
        .await?;
    }
    // Each Thing is its own partition; scan-like checks go through one partition each.
    let matches = |name: &str, cond: dynamo_model::Condition<Thing>| {
        let db = db.clone();
        let name = name.to_owned();
        async move {
            Ok::<_, Error>(
                !items_of(db.query(Thing::partition(name)).filter(cond))
                    .await?
                    .is_empty(),
            )
        }
    };
    assert!(matches("t0", f.status.eq("new").and(f.r#type.begins_with("gad"))).await?);
    assert!(!matches("t0", f.status.ne("new")).await?);
    assert!(matches("t1", f.data.not_exists()).await?);
    assert!(matches("t2", f.data.exists().and(f.data.size().eq(3))).await?);
    assert!(matches("t2", f.status.contains("rok")).await?);
    assert!(matches("t3", f.status.eq("x").or(!f.ttl.lt(Some(3)))).await?);
    assert!(!matches("t3", f.size.between(0, 2)).await?);
    Ok(())
}

#[tokio::test]
async fn collections_dispatch_on_entity_type() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let p = "p-1";
    seed_purchase(&db, p).await?;
    db.put(&PurchaseNote {
        purchase_id: p.into(),
        n: 1,
    })
    .await?;

    let details = items_of(
        db.query(Purchase::partition(p))
            .collection::<PurchaseDetails>(),
    )
    .await?;
    assert_eq!(details.len(), 5, "{details:?}");
    assert!(matches!(&details[0], PurchaseDetails::Purchase(x) if x.buyer == "ada"));
    assert!(matches!(&details[1], PurchaseDetails::Invoice(i) if i.invoice_no == 9));
    assert!(details[2..]
        .iter()
        .all(|d| matches!(d, PurchaseDetails::Item(_))));

    // A member's sort-key condition narrows the collection query.
    let items = items_of(
        db.query(Purchase::partition(p))
            .collection::<PurchaseDetails>()
            .sk(PurchaseItem::sk().n().ge(2u8)),
    )
    .await?;
    assert_eq!(items.len(), 2);

    let err = db
        .query(Purchase::partition(p))
        .collection::<PurchaseDetails>()
        .on_unknown(UnknownEntity::Error)
        .all()
        .await
        .unwrap_err();
    match err {
        Error::Decode(e) => assert_eq!(
            e.kind,
            DecodeErrorKind::WrongEntityType {
                expected: "PurchaseDetails",
                found: Some("PurchaseNote".into())
            }
        ),
        other => panic!("expected a decode error, got {other:?}"),
    }

    // Single-entity queries of a shared partition return only that entity.
    let invoices = items_of(db.query(Invoice::partition(p))).await?;
    assert_eq!(invoices.len(), 1);
    Ok(())
}

#[tokio::test]
async fn limited_pages_never_skip_items_and_limit_zero_reads_nothing() -> TestResult {
    let db = with_lines("z", "1", 30).await?;
    // Scan pages with a limit continue right after the last returned item.
    let mut seen = Vec::new();
    let mut cursor: Option<Cursor> = None;
    for _ in 0..20 {
        let page = db.scan::<Line>().limit(7).page(cursor.as_ref()).await?;
        seen.extend(page.items.iter().map(|l| l.line));
        cursor = page.cursor;
        if cursor.is_none() {
            break;
        }
    }
    seen.sort_unstable();
    assert_eq!(seen, (0..30).collect::<Vec<_>>());

    // limit(0): nothing read, the cursor stays where it was.
    let first = db.query(Line::partition("z")).limit(2).page(None).await?;
    let zero = db
        .query(Line::partition("z"))
        .limit(0)
        .page(first.cursor.as_ref())
        .await?;
    assert!(zero.items.is_empty());
    assert_eq!(zero.cursor, first.cursor);
    let next = db
        .query(Line::partition("z"))
        .limit(2)
        .page(zero.cursor.as_ref())
        .await?;
    assert_eq!(line_nos(&next.items), [2, 3]);
    assert!(items_of(db.query(Line::partition("z")).limit(0))
        .await?
        .is_empty());
    Ok(())
}

#[tokio::test]
async fn comparing_with_none_means_absent_or_present() -> TestResult {
    let things = [("a", None), ("b", Some("x".to_string()))].map(|(name, data)| Thing {
        name: name.into(),
        status: "s".into(),
        data,
        ttl: None,
        r#type: "t".into(),
        size: 0,
    });
    let db = table_with(things).await?;
    let f = Thing::fields();
    let names = |things: Vec<Thing>| things.into_iter().map(|t| t.name).collect::<Vec<_>>();
    let absent = db.scan::<Thing>().filter(f.data.eq(None)).all().await?;
    assert_eq!(names(absent.items), ["a"]);
    let present = db.scan::<Thing>().filter(f.data.ne(None)).all().await?;
    assert_eq!(names(present.items), ["b"]);
    refused(
        db.scan::<Thing>().filter(f.data.lt(None)).all(),
        dynamo_model::ValidationReason::InvalidValue,
    )
    .await;
    Ok(())
}

#[tokio::test]
async fn a_query_can_read_only_the_attributes_of_a_partial_view() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let t = datetime!(2024-02-02 0:00 UTC);
    for i in 0..5u128 {
        db.put(&Order {
            user_id: "u".into(),
            order_id: Uuid::from_u128(i),
            created_at: t + Duration::minutes(i as i64),
            total_cents: 100 * i as u64,
            status: "open".into(),
            note: Some("a long note that the list view does not need".into()),
        })
        .await?;
    }
    let views = items_of(
        db.query(Order::partition("u"))
            .project::<OrderTotal>()
            .reverse()
            .limit(3),
    )
    .await?;
    assert_eq!(
        views.iter().map(|v| v.total_cents).collect::<Vec<_>>(),
        [400, 300, 200]
    );

    // Paging through a projection (the key attributes are always projected).
    let page = db
        .query(Order::partition("u"))
        .project::<OrderTotal>()
        .limit(2)
        .page(None)
        .await?;
    let rest = db
        .query(Order::partition("u"))
        .project::<OrderTotal>()
        .limit(10)
        .page(page.cursor.as_ref())
        .await?;
    assert_eq!(
        page.items.len() + rest.items.len(),
        5,
        "cursors continue through a projection"
    );

    // A view must have the queried entity's type.
    let err = db
        .query(Line::partition("z"))
        .project::<Thing>()
        .all()
        .await;
    assert_refused(
        &err.unwrap_err(),
        dynamo_model::ValidationReason::InvalidOption,
    );
    Ok(())
}
