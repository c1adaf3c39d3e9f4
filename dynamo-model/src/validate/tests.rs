use crate::error::Rule;
use crate::{Db, Entity, Error, Table, ValidationReason};
use proptest::prelude::*;
use std::collections::BTreeSet;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE", validate = admins_are_adults)]
struct User {
    id: String,
    #[dynamo(validate(length(min = 3, max = 12), pattern = "^[a-z]+@[a-z]+$"))]
    email: String,
    #[dynamo(validate(range(min = 13, max = 150)))]
    age: u8,
    #[dynamo(validate(one_of("member", "admin")))]
    role: String,
    #[dynamo(validate(with = not_blank))]
    nickname: Option<String>,
    #[dynamo(validate(length(max = 2)))]
    tags: BTreeSet<String>,
    #[dynamo(validate(range(min = -1.5, max = 1.5)))]
    score: f64,
    #[dynamo(validate(one_of(1, 2, 3)))]
    tier: Option<u32>,
    note: String,
}

fn not_blank(nick: &str) -> Result<(), String> {
    if nick.trim().is_empty() {
        Err("a nickname is not blank".into())
    } else {
        Ok(())
    }
}

fn admins_are_adults(user: &User) -> Result<(), &'static str> {
    if user.role == "admin" && user.age < 18 {
        Err("admins are adults")
    } else {
        Ok(())
    }
}

fn user() -> User {
    User {
        id: "u-1".into(),
        email: "ada@lace".into(),
        age: 36,
        role: "admin".into(),
        nickname: Some("ada".into()),
        tags: BTreeSet::new(),
        score: 0.5,
        tier: Some(2),
        note: "anything at all, no rule".into(),
    }
}

/// The violation an error holds, or a panic naming the error.
fn violation(result: Result<(), Error>) -> crate::error::RuleViolation {
    match result {
        Err(Error::Rule(v)) => *v,
        other => panic!("expected a broken rule, got {other:?}"),
    }
}

#[test]
fn a_value_keeping_every_rule_passes() {
    super::check(&user()).expect("valid");
    let mut none = user();
    none.nickname = None;
    none.tier = None;
    super::check(&none).expect("rules of an Option hold for None");
}

/// A change of a valid user, the field whose rule it breaks, and that rule.
type Case = (fn(&mut User), &'static str, Rule);

#[test]
fn each_declarative_rule_names_the_field_the_rule_and_the_value() {
    let cases: Vec<Case> = vec![
        (
            |u| u.email = "a@".into(),
            "email",
            Rule::Length {
                min: Some(3),
                max: Some(12),
            },
        ),
        (
            |u| u.email = "ada@lace.dev".into(),
            "email",
            Rule::Pattern("^[a-z]+@[a-z]+$"),
        ),
        (
            |u| u.age = 12,
            "age",
            Rule::Range {
                min: Some("13"),
                max: Some("150"),
            },
        ),
        (
            |u| u.role = "root".into(),
            "role",
            Rule::OneOf(&["\"member\"", "\"admin\""]),
        ),
        (
            |u| u.tags = ["a", "b", "c"].map(String::from).into(),
            "tags",
            Rule::Length {
                min: None,
                max: Some(2),
            },
        ),
        (
            |u| u.score = -2.0,
            "score",
            Rule::Range {
                min: Some("-1.5"),
                max: Some("1.5"),
            },
        ),
        (
            |u| u.score = f64::NAN,
            "score",
            Rule::Range {
                min: Some("-1.5"),
                max: Some("1.5"),
            },
        ),
        (|u| u.tier = Some(4), "tier", Rule::OneOf(&["1", "2", "3"])),
    ];
    for (change, field, rule) in cases {
        let mut u = user();
        change(&mut u);
        let v = violation(super::check(&u));
        assert_eq!(v.entity(), "User");
        assert_eq!(v.field_name(), Some(field));
        assert_eq!(v.rule(), &rule, "{field}");
        assert!(v.value().is_some_and(|t| !t.is_empty()));
        // The value stays out of the message (it can hold personal data).
        let shown = v.to_string();
        assert!(shown.contains(field) && shown.contains("User"), "{shown}");
    }
}

#[test]
fn function_rules_say_why() {
    let mut u = user();
    u.nickname = Some("  ".into());
    let v = violation(super::check(&u));
    assert_eq!(v.rule(), &Rule::Function("not_blank"));
    assert_eq!(v.reason(), Some("a nickname is not blank"));
    let mut u = user();
    u.age = 16;
    let v = violation(super::check(&u));
    assert_eq!(v.field_name(), None);
    assert_eq!(v.rule(), &Rule::Entity("admins_are_adults"));
    assert_eq!(
        v.to_string(),
        "User breaks its rule: admins_are_adults says admins are adults"
    );
}

#[test]
fn a_long_value_is_kept_short_in_the_violation() {
    let mut u = user();
    u.email = "é".repeat(400);
    let v = violation(super::check(&u));
    let text = v.value().expect("value");
    assert!(
        text.len() <= super::MAX_VALUE_TEXT + '…'.len_utf8(),
        "{}",
        text.len()
    );
}

fn db() -> Db<App> {
    crate::db::offline::<App>()
}

#[test]
fn every_write_of_a_whole_value_checks_the_rules_before_sending() {
    let mut bad = user();
    bad.age = 200;
    let db = db();
    violation(db.put(&bad).params().map(drop));
    let batch = db.batch_write().put(&user()).put(&bad).params().map(drop);
    assert_eq!(violation(batch).field_name(), Some("age"));
    let tx = db.transact_write().put(db.put(&bad)).params().map(drop);
    assert_eq!(violation(tx).field_name(), Some("age"));
    db.put(&user()).params().expect("a valid put");
}

#[test]
fn an_update_checks_what_it_sets_whole_and_refuses_changes_it_cannot_check() {
    let db = db();
    let f = User::fields();
    let key = || User::key("u-1");
    let set = db
        .update(key())
        .set(f.email, "no-at-sign")
        .params()
        .map(drop);
    assert_eq!(violation(set).rule(), &Rule::Pattern("^[a-z]+@[a-z]+$"));
    let absent = db
        .update(key())
        .set_if_absent(f.age, 7u8)
        .params()
        .map(drop);
    assert_eq!(violation(absent).field_name(), Some("age"));
    db.update(key())
        .set(f.email, "bob@host")
        .set(f.nickname, None)
        .remove(f.tier)
        .set(f.note, "")
        .params()
        .expect("valid values, a removed optional field and an unruled field");
    let add = db.update(key()).add(f.age, 1).params();
    let (reason, message) = crate::error::refusal(add);
    assert_eq!(reason, ValidationReason::RuledField);
    assert!(message.contains("`age`"), "{message}");
    let tx = db
        .transact_write()
        .update(db.update(key()).set(f.role, "owner"))
        .params()
        .map(drop);
    assert_eq!(violation(tx).field_name(), Some("role"));
}

proptest! {
    #[test]
    fn length_counts_characters_between_its_bounds(
        text in "\\PC{0,20}",
        min in proptest::option::of(0usize..12),
        max in proptest::option::of(0usize..12),
    ) {
        let n = text.chars().count();
        let holds = min.is_none_or(|m| n >= m) && max.is_none_or(|m| n <= m);
        let checked = super::length::<User, _>("email", &text, min, max);
        prop_assert_eq!(checked.is_ok(), holds);
    }

    #[test]
    fn range_holds_exactly_between_its_bounds(value: i64, a: i64, b: i64) {
        let (lo, hi) = (a.min(b), a.max(b));
        let checked = super::range::<User, _>("age", &value, (Some(lo), Some(hi)), (None, None));
        prop_assert_eq!(checked.is_ok(), lo <= value && value <= hi);
    }
}
