//! Every table option and every entity option in one valid declaration.

use std::collections::BTreeMap;

use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK:S",
    gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK", projection = all),
    gsi(name = "ByEmail", pk = "EmailPK", projection = keys_only),
    gsi(name = "ByRegion.v2", pk = ["RegionPK", "RegionPK2"], sk = ["RegionSK:N", "RegionSK2:B"]),
    lsi(name = "LSI1", sk = "LSI1SK", projection(include = ["total", "status"])),
    ttl = "expires_at",
    entity_type = "kind",
)]
struct App;

#[derive(Table)]
#[dynamo(pk = "id")]
struct Simple;

fn default_status() -> String {
    "new".to_string()
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Preferences {
    theme: String,
    languages: Vec<String>,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(
    table = App,
    pk = "USER#{user_id}",
    sk = "PROFILE",
    index(GSI1, pk = "TENANT#{tenant}", sk = "USER#{display_name}#{user_id}"),
    index(ByEmail, pk = "EMAIL#{email}"),
    entity_type = "UserProfile"
)]
#[serde(rename_all = "camelCase")]
struct User {
    user_id: String,
    tenant: String,
    display_name: String,
    email: Option<String>,
    #[serde(rename = "tags")]
    labels: Vec<String>,
    #[serde(skip)]
    cached_len: usize,
    #[serde(default = "default_status")]
    status: String,
    #[serde(default, skip_serializing_if = "is_zero")]
    login_count: u32,
    #[dynamo(serde)]
    preferences: Preferences,
    #[dynamo(serde)]
    #[serde(default)]
    scores: BTreeMap<String, (u8, bool)>,
    expires_at: Option<i64>,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{placed_at}#{order_id}",
         index(LSI1, sk = "TOTAL#{total}#{order_id}"))]
#[serde(default)]
struct Order {
    user_id: String,
    order_id: String,
    placed_at: u64,
    total: u64,
    status: String,
    r#type: String,
}

/// Sparse index: only open tasks (with a due date) get GSI1 attributes.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "TASK#{task_id}", sk = "TASK",
         index(GSI1, pk = "OPEN_TASKS", sk = "DUE#{due_at}#{task_id}"))]
struct Task {
    task_id: String,
    due_at: Option<u64>,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Simple, pk = "CONFIG")]
struct Config {
    version: u32,
    flags: Vec<String>,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Simple, pk = "COUNTER#{name}#{shard}")]
struct Counter {
    name: String,
    shard: i16,
    value: i64,
    enabled: bool,
}

pub fn run() {
    let user = User {
        user_id: "u-1".into(),
        tenant: "acme".into(),
        display_name: "Ada".into(),
        email: None,
        labels: vec!["new".into()],
        cached_len: 7,
        status: "active".into(),
        login_count: 0,
        preferences: Preferences {
            theme: "dark".into(),
            languages: vec!["en".into()],
        },
        scores: BTreeMap::new(),
        expires_at: Some(1_700_000_000),
    };
    let key = User::key("u-1");
    assert_eq!(key.raw().unwrap().pk, "USER#u-1");
    assert_eq!(key.raw().unwrap().sk.as_deref(), Some("PROFILE"));

    let item = user.to_item().unwrap();
    assert!(item.contains_key("displayName"));
    assert!(item.contains_key("tags"));
    assert!(!item.contains_key("cachedLen"));
    assert!(!item.contains_key("loginCount"));
    assert!(item.contains_key("GSI1PK"));
    assert!(!item.contains_key("EmailPK"), "sparse index: email is None");
    assert_eq!(
        item.get("kind")
            .and_then(|v| v.as_s().ok())
            .map(String::as_str),
        Some("UserProfile")
    );
    let back = User::from_item(item).unwrap();
    assert_eq!(
        back,
        User {
            cached_len: 0,
            ..user
        }
    );

    let order = Order {
        user_id: "u-1".into(),
        order_id: "o-7".into(),
        placed_at: 42,
        total: 1999,
        status: "open".into(),
        r#type: "retail".into(),
    };
    let item = order.to_item().unwrap();
    assert!(item.contains_key("LSI1SK"));
    assert!(item.contains_key("type"));
    assert_eq!(Order::from_item(item).unwrap(), order);
    assert_eq!(
        Order::key(OrderKey {
            user_id: "u-1",
            placed_at: 42u64,
            order_id: "o-7"
        })
        .raw()
        .unwrap()
        .sk
        .as_deref(),
        Some("ORDER#00000000000000000042#o-7")
    );

    let open = Task {
        task_id: "t-1".into(),
        due_at: Some(5),
    };
    let done = Task {
        due_at: None,
        ..open.clone()
    };
    assert!(open.to_item().unwrap().contains_key("GSI1SK"));
    assert!(!done.to_item().unwrap().contains_key("GSI1PK"));

    assert_eq!(Config::key().raw().unwrap().pk, "CONFIG");
    assert_eq!(Config::key().raw().unwrap().sk, None);
    let counter = Counter {
        name: "hits".into(),
        shard: -3,
        value: 10,
        enabled: true,
    };
    assert_eq!(
        counter.primary_key().raw().unwrap(),
        Counter::key(CounterKey {
            name: "hits",
            shard: -3i16
        })
        .raw()
        .unwrap()
    );

    let f = User::fields();
    let _ = (f.display_name, f.preferences, f.user_id);
    assert_eq!(f.display_name.name(), "displayName");
    assert_eq!(App::SCHEMA.entity_type, "kind");
    assert_eq!(<User as Entity>::ENTITY_TYPE, "UserProfile");
    assert_eq!(<Order as Entity>::ENTITY_TYPE, "Order");
}
