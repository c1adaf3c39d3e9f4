//! DynamoDB's expression grammar, typed: every comparison, function and operand of
//! condition, filter and update expressions, built without an attribute name written as
//! a string, rendered (`params()`, placeholders resolved) and run against DynamoDB Local.

use crate::common::*;
use aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::expr::list_append;
use dynamo_model::AttributeType as Type;
use dynamo_model::{local, Attribute, Condition, Entity, Error, Table};
use std::collections::HashMap;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct Store;

#[derive(Attribute, Debug, Clone, PartialEq)]
struct Geo {
    lat: i64,
    lon: i64,
}

#[derive(Attribute, Debug, Clone, PartialEq)]
struct Address {
    city: String,
    #[dynamo(rename = "geoPoint")]
    geo: Geo,
}

#[derive(Attribute, Debug, Clone, PartialEq)]
struct Line {
    sku: String,
    qty: u32,
    note: Option<String>,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Store, pk = "ORDER#{id}", sk = "ORDER")]
struct Order {
    id: String,
    subtotal: u64,
    shipping: Option<u64>,
    total: u64,
    cap: u64,
    name: String,
    nickname: Option<String>,
    tags: Vec<String>,
    lines: Vec<Line>,
    ship_to: Address,
    log: Vec<String>,
    credit: Option<i64>,
    marks: Vec<Option<String>>,
}

fn order(id: &str) -> Order {
    let line = |sku: &str, qty| Line {
        sku: sku.into(),
        qty,
        note: None,
    };
    Order {
        id: id.into(),
        subtotal: 40,
        shipping: Some(5),
        total: 45,
        cap: 100,
        name: "ada lovelace".into(),
        nickname: Some("ada".into()),
        tags: vec!["new".into(), "ada".into()],
        lines: vec![line("a", 1), line("b", 2)],
        ship_to: Address {
            city: "London".into(),
            geo: Geo { lat: 51, lon: 0 },
        },
        log: vec!["created".into()],
        credit: None,
        marks: vec![Some("x".into()), Some("y".into()), Some("z".into())],
    }
}

/// A fresh table holding the order `o`.
async fn stored_order() -> Res<local::TempTable<Store>> {
    let db = local::fresh_table::<Store>().await?;
    db.put(&order("o")).await?;
    Ok(db)
}

/// `expression` with `#n` and `:v` placeholders replaced by the names and values they
/// stand for (strings quoted, numbers bare, lists in brackets).
fn resolved(
    expression: &str,
    names: Option<&HashMap<String, String>>,
    values: Option<&HashMap<String, AttributeValue>>,
) -> String {
    let show = |v: &AttributeValue| match v {
        AttributeValue::S(s) => format!("{s:?}"),
        AttributeValue::N(n) => n.clone(),
        AttributeValue::L(l) => format!("[{} elements]", l.len()),
        other => format!("{other:?}"),
    };
    let mut out = String::new();
    let mut rest = expression;
    while let Some(at) = rest.find(['#', ':']) {
        out.push_str(&rest[..at]);
        let token_len = rest[at + 1..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(rest.len() - at - 1, |n| n);
        let token = &rest[at..at + 1 + token_len];
        let name = names.and_then(|n| n.get(token)).cloned();
        let value = values.and_then(|v| v.get(token)).map(show);
        out.push_str(&name.or(value).unwrap_or_else(|| token.to_owned()));
        rest = &rest[at + 1 + token_len..];
    }
    out.push_str(rest);
    out
}

/// The update's condition and update expressions as a reader writes them.
fn update_text(update: dynamo_model::item::Update<Order>) -> Res<(String, String)> {
    let input = update.params()?;
    let (names, values) = (
        input.expression_attribute_names(),
        input.expression_attribute_values(),
    );
    Ok((
        resolved(input.condition_expression().unwrap_or(""), names, values),
        resolved(input.update_expression().unwrap_or(""), names, values),
    ))
}

/// The condition, rendered as the filter of a query (the entity-type filter the crate
/// adds comes first).
fn filter_text(db: &dynamo_model::Db<Store>, condition: Condition<Order>) -> Res<String> {
    let plan = db
        .query(Order::partition("o"))
        .filter(condition)
        .explain()?;
    Ok(plan.filter.map(|f| f.resolved).unwrap_or_default())
}

/// Each condition renders as its text (a filter's last clause) and holds or not on the
/// stored order `o` as expected, in a condition and in a filter alike.
async fn check(
    db: &dynamo_model::Db<Store>,
    cases: Vec<(Condition<Order>, &str, bool)>,
) -> TestResult {
    for (condition, text, expected) in cases {
        let rendered = filter_text(db, condition.clone())?;
        assert!(ends_with_clause(&rendered, text), "{text}: {rendered}");
        assert_eq!(holds(db, "o", condition).await?, expected, "{text}");
    }
    Ok(())
}

/// Whether the filter ends with the clause `text` (a BETWEEN in parentheses, so that its
/// AND is not read as the filter's).
fn ends_with_clause(rendered: &str, text: &str) -> bool {
    rendered.ends_with(&format!(" AND {text}")) || rendered.ends_with(&format!(" AND ({text})"))
}

/// Whether `condition` holds on the stored order `id`: a conditional update that sets
/// nothing of consequence (the order's cap to itself), answered by DynamoDB.
async fn holds(db: &dynamo_model::Db<Store>, id: &str, condition: Condition<Order>) -> Res<bool> {
    let f = Order::fields();
    let sent = db
        .update(Order::key(id))
        .set_to(f.cap, f.cap)
        .condition(condition.clone())
        .await;
    let as_filter = db
        .query(Order::partition(id))
        .filter(condition)
        .all()
        .await?;
    let held = match sent {
        Ok(_) => true,
        Err(Error::ConditionFailed { .. }) => false,
        Err(other) => return Err(other.into()),
    };
    assert_eq!(
        held,
        as_filter.items.len() == 1,
        "a condition and a filter disagree"
    );
    Ok(held)
}

#[tokio::test]
async fn comparisons_and_functions_take_values_or_other_attributes() -> TestResult {
    let db = stored_order().await?;
    let f = Order::fields();
    #[rustfmt::skip]
    let cases: Vec<(Condition<Order>, &str, bool)> = vec![
        (f.total.eq(45), "total = 45", true),
        (f.total.ne(f.subtotal), "total <> subtotal", true),
        (f.total.lt(f.cap), "total < cap", true),
        (f.total.le(f.subtotal), "total <= subtotal", false),
        (f.cap.gt(f.total), "cap > total", true),
        (f.subtotal.ge(f.shipping), "subtotal >= shipping", true),
        (f.shipping.eq(f.subtotal), "shipping = subtotal", false),
        (f.total.between(f.subtotal, f.cap), "total BETWEEN subtotal AND cap", true),
        (f.total.between(0, f.subtotal), "total BETWEEN 0 AND subtotal", false),
        (f.total.is_in([f.subtotal, f.cap]), "total IN (subtotal, cap)", false),
        (f.total.is_in([45, 46]), "total IN (45, 46)", true),
        (f.nickname.eq(f.name), "nickname = name", false),
        (f.credit.eq(None), "attribute_not_exists(credit)", true),
        (f.credit.ne(None), "attribute_exists(credit)", false),
    ];
    check(&db, cases).await?;
    #[rustfmt::skip]
    let functions: Vec<(Condition<Order>, &str, bool)> = vec![
        (f.shipping.exists(), "attribute_exists(shipping)", true),
        (f.credit.not_exists(), "attribute_not_exists(credit)", true),
        (f.shipping.is_type(Type::N), r#"attribute_type(shipping, "N")"#, true),
        (f.ship_to.is_type(Type::M), r#"attribute_type(ship_to, "M")"#, true),
        (f.tags.is_type(Type::L), r#"attribute_type(tags, "L")"#, true),
        (f.name.is_type(Type::Ss), r#"attribute_type(name, "SS")"#, false),
        (f.name.begins_with("ada"), r#"begins_with(name, "ada")"#, true),
        (f.name.begins_with(f.nickname), "begins_with(name, nickname)", true),
        (f.nickname.begins_with(f.name), "begins_with(nickname, name)", false),
        (f.name.contains("love"), r#"contains(name, "love")"#, true),
        (f.name.contains(f.nickname), "contains(name, nickname)", true),
        (f.tags.contains(f.nickname), "contains(tags, nickname)", true),
        (f.tags.contains(f.name), "contains(tags, name)", false),
        (f.tags.size().eq(2), "size(tags) = 2", true),
        (f.name.size().ne(12), "size(name) <> 12", false),
        (f.lines.size().between(1, 2), "size(lines) BETWEEN 1 AND 2", true),
        (f.log.size().gt(1), "size(log) > 1", false),
    ];
    check(&db, functions).await?;
    // AND, OR, NOT and their precedence.
    let either = f.total.gt(f.cap).or(f.name.begins_with("ada"));
    let both = (!f.tags.size().lt(1)).and(either.clone());
    let rendered = filter_text(&db, both.clone())?;
    assert!(
        rendered.ends_with(r#"NOT size(tags) < 1 AND (total > cap OR begins_with(name, "ada"))"#),
        "{rendered}"
    );
    assert!(holds(&db, "o", both).await?);
    assert!(!holds(&db, "o", !either).await?);
    Ok(())
}

#[tokio::test]
async fn nested_paths_reach_members_and_list_elements() -> TestResult {
    let db = stored_order().await?;
    let f = Order::fields();
    let geo = f.ship_to.fields().geo.fields();
    let second = f.lines.index(1).fields();
    assert_eq!(
        filter_text(&db, geo.lat.gt(&geo.lon))?
            .rsplit(" AND ")
            .next(),
        Some("ship_to.geoPoint.lat > ship_to.geoPoint.lon")
    );
    assert!(holds(&db, "o", geo.lat.gt(&geo.lon)).await?);
    assert!(holds(&db, "o", second.qty.eq(2).and(second.sku.eq("b"))).await?);
    assert!(!holds(&db, "o", f.lines.index(5).exists()).await?);
    assert!(holds(&db, "o", second.note.not_exists()).await?);

    let update = || {
        db.update(Order::key("o"))
            .set(f.ship_to.fields().city, "Paris")
            .set_to(&second.qty, second.qty.plus(&f.lines.index(0).fields().qty))
            .set(f.lines.index(0).fields().note, "gift")
            .set(f.log.index(9), "appended")
            .remove_at(f.tags.index(0))
    };
    let (_, text) = update_text(update())?;
    assert!(
        text.contains("ship_to.city = \"Paris\"")
            && text.contains("lines[1].qty = lines[1].qty + lines[0].qty")
            && text.contains("lines[0].note = \"gift\"")
            && text.contains("log[9] = \"appended\"")
            && text.contains("REMOVE tags[0]"),
        "{text}"
    );
    let updated = update().await?;
    assert_eq!(updated.ship_to.city, "Paris");
    assert_eq!(updated.lines[1].qty, 3);
    assert_eq!(updated.lines[0].note.as_deref(), Some("gift"));
    // An element set past the end of a list is appended.
    assert_eq!(updated.log, ["created", "appended"]);
    assert_eq!(updated.tags, ["ada"]);
    assert_eq!(db.get(Order::key("o")).await?, Some(updated));

    // Two elements of one list are not overlapping paths; an element and its list are.
    db.update(Order::key("o"))
        .set(f.lines.index(0).fields().qty, 7)
        .set(f.lines.index(1).fields().qty, 8)
        .await?;
    refused(
        db.update(Order::key("o"))
            .set(f.lines.index(0).fields().qty, 7)
            .remove_at(f.lines.index(0)),
        dynamo_model::ValidationReason::OverlappingPaths,
    )
    .await;
    Ok(())
}

#[tokio::test]
async fn updates_compute_values_from_attributes() -> TestResult {
    let f = Order::fields();
    let db = stored_order().await?;
    let update = || {
        db.update(Order::key("o"))
            .set_to(f.total, f.subtotal.plus(f.shipping.if_not_exists(0)))
            .set_to(f.cap, f.subtotal)
            .set_to(f.credit, f.credit.if_not_exists(10).minus(3))
            .set_to(f.log, list_append(f.log, vec!["priced".to_owned()]))
            .set_to(f.tags, list_append(vec!["first".to_owned()], f.tags))
    };
    let (_, text) = update_text(update())?;
    for part in [
        "total = subtotal + if_not_exists(shipping, 0)",
        "cap = subtotal",
        "credit = if_not_exists(credit, 10) - 3",
        "log = list_append(log, [1 elements])",
        "tags = list_append([1 elements], tags)",
    ] {
        assert!(text.contains(part), "{part}: {text}");
    }
    let updated = update().await?;
    assert_eq!(
        (updated.total, updated.cap, updated.credit),
        (45, 40, Some(7))
    );
    assert_eq!(updated.log, ["created", "priced"]);
    assert_eq!(updated.tags, ["first", "new", "ada"]);

    // A value operand on the right of a sum; a shipping that is absent counts as zero.
    let updated = db
        .update(Order::key("o"))
        .remove(f.shipping)
        .set_to(f.total, f.subtotal.minus(1))
        .await?;
    assert_eq!(updated.total, 39);
    let updated = db
        .update(Order::key("o"))
        .set_to(f.total, f.subtotal.plus(f.shipping.if_not_exists(0)))
        .set_to(f.shipping, f.shipping.if_not_exists(f.subtotal))
        .await?;
    assert_eq!((updated.total, updated.shipping), (40, Some(40)));
    Ok(())
}

#[tokio::test]
async fn unsendable_operands_are_refused_before_sending() -> TestResult {
    let db = stored_order().await?;
    let f = Order::fields();
    let none: Option<i64> = None;
    for (condition, why) in [
        (f.credit.gt(none), "an absent value"),
        (f.total.is_in(Vec::<u64>::new()), "no operand"),
        (f.total.is_in(0..101u64), "101 operands"),
        // DynamoDB wants the operands of a comparison distinct.
        (f.total.eq(f.total), "an attribute compared with itself"),
        (f.name.begins_with(f.name), "a prefix of itself"),
        (f.total.between(f.subtotal, f.total), "a bound of itself"),
    ] {
        let err = db
            .update(Order::key("o"))
            .set(f.cap, 1)
            .condition(condition)
            .await
            .expect_err(why);
        assert!(matches!(err, Error::Validation { .. }), "{why}: {err:?}");
    }
    let err = db
        .update(Order::key("o"))
        .set_to(f.credit, f.credit.if_not_exists(f.credit))
        .await
        .expect_err("if_not_exists of itself");
    assert!(matches!(err, Error::Validation { .. }), "{err:?}");
    // Nothing was written.
    assert_eq!(db.get(Order::key("o")).await?.map(|o| o.cap), Some(100));
    Ok(())
}

#[tokio::test]
async fn a_list_keeps_its_positions_when_an_element_is_cleared() -> TestResult {
    let (f, cleared) = (Order::fields(), None::<String>);
    let updated = stored_order()
        .await?
        .update(Order::key("o"))
        .set(f.marks.index(0), cleared.clone())
        .remove(f.marks.index(2))
        .set_to(f.credit, cleared.map(|_| 1))
        .await?;
    // Cleared elements are NULL in place (a list stores `None` so), not removed.
    assert_eq!(updated.marks, [None, Some("y".into()), None]);
    assert_eq!(updated.credit, None);
    let db = stored_order().await?;
    db.update(Order::key("o"))
        .remove(f.marks.index(0))
        .remove(f.marks.index(2))
        .await?;
    assert!(holds(&db, "o", f.marks.index(0).eq(None)).await?);
    assert!(!holds(&db, "o", f.marks.index(1).eq(None)).await?);
    assert!(holds(&db, "o", f.marks.index(1).ne(None)).await?);
    assert!(!holds(&db, "o", f.marks.index(2).ne(None)).await?);
    Ok(())
}
