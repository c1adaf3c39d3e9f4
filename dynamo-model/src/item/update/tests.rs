use super::WriteToken;
use crate::{AttrPath, Db, Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "C#{id}", sk = "C")]
struct Counter {
    id: String,
    hits: u64,
    #[dynamo(version)]
    version: u64,
}

fn db() -> Db<App> {
    crate::db::offline()
}

#[test]
fn a_resent_update_sets_and_tests_the_token_it_is_given() {
    let f = Counter::fields();
    let token = WriteToken::parse("abcdefghijklmnop").expect("a token");
    let input = db()
        .update(Counter::key("c"))
        .add(f.hits, 1)
        .if_version(3)
        .write_token(token.clone())
        .params()
        .unwrap();
    let values = input.expression_attribute_values().unwrap();
    // Set by the update, and required absent by its condition.
    let placeholders: Vec<&String> = values
        .iter()
        .filter(|(_, value)| **value == token.value())
        .map(|(placeholder, _)| placeholder)
        .collect();
    let uses = |text: &str| placeholders.iter().any(|p| text.contains(p.as_str()));
    assert!(uses(input.update_expression().unwrap()), "{input:?}");
    assert!(uses(input.condition_expression().unwrap()), "{input:?}");
}

#[test]
fn a_single_item_update_sets_its_token_and_requires_it_absent() {
    let db = db();
    let f = Counter::fields();
    let token = WriteToken::new();
    let (p, updated) = db
        .update(Counter::key("c"))
        .add(f.hits, 1)
        .any_version()
        .prepare_with(Some(&token))
        .expect("prepared");
    let names = p.names.clone().unwrap_or_default();
    let values = p.values.clone().unwrap_or_default();
    let wt = names
        .iter()
        .find(|(_, attribute)| *attribute == "_wt")
        .map(|(placeholder, _)| placeholder.clone())
        .expect("the token attribute is named");
    let token_values: Vec<&String> = values
        .iter()
        .filter(|(_, value)| **value == token.value())
        .map(|(placeholder, _)| placeholder)
        .collect();
    let update = p.update.expect("an update expression");
    assert!(
        token_values
            .iter()
            .any(|v| update.contains(&format!("{wt} = {v}"))),
        "{update}"
    );
    assert!(
        token_values.iter().any(|v| p
            .condition
            .contains(&format!("(attribute_not_exists({wt}) OR {wt} <> {v})"))),
        "{}",
        p.condition
    );
    // What UPDATED_NEW returns: the caller's paths and the version, not the token.
    assert_eq!(
        updated,
        vec![AttrPath::Top("hits"), AttrPath::Top("version")]
    );

    // As a transaction item: no token (the ClientRequestToken makes it idempotent).
    let tx = db
        .update(Counter::key("c"))
        .add(f.hits, 1)
        .any_version()
        .prepare()
        .expect("prepared");
    assert!(!tx.names.unwrap_or_default().values().any(|a| a == "_wt"));
}
