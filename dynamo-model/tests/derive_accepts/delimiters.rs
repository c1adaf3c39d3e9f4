//! Delimiters declared on a table, an entity and an index template: the keys rendered,
//! the keys read back into an update's index keys, and the bounds of sort-key conditions.

use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::{Db, Entity, Table};
use time::OffsetDateTime;
use time::macros::datetime;

/// Keys of this table use `|` unless an entity or index says otherwise.
#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    delimiter = "|",
    gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
    gsi(name = "Inverted", pk = "SK", sk = "PK"),
    lsi(name = "LSI1", sk = "LSI1SK")
)]
struct Pipes;

/// Takes the table's `|`.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Pipes, pk = "T|{a}", sk = "{b}|{n}")]
struct Piped {
    a: String,
    b: String,
    n: u8,
}

/// Its own `.`, `_` on GSI1, and the inverted index and LSI1 with the entity's `.`.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Pipes, delimiter = ".", pk = "E.{a}", sk = "{at}.{b}",
         index(GSI1, delimiter = "_", pk = "{status}_{a}", sk = "{at}_{b}"),
         index(Inverted),
         index(LSI1, sk = "S.{status}.{b}"))]
struct Dotted {
    a: String,
    b: String,
    at: OffsetDateTime,
    status: String,
}

fn s(v: &str) -> AttributeValue {
    AttributeValue::S(v.into())
}

pub fn run() {
    let piped = Piped {
        a: "x|y".into(),
        b: "~".into(),
        n: 7,
    };
    let raw = piped.primary_key().into_raw().unwrap();
    // Under `|`, every ASCII character but `~` and DEL is escaped.
    assert_eq!(raw.pk, "T|}78}7C}79");
    assert_eq!(raw.sk.as_deref(), Some("~|007"));
    let db = Db::<Pipes>::offline("pipes");
    let condition = |c| {
        let input = db.query(Piped::partition("x")).sk(c).params().unwrap();
        let values = input.expression_attribute_values().unwrap().clone();
        let mut texts: Vec<String> = values
            .values()
            .map(|v| v.as_s().unwrap().clone())
            // The entity-type filter's value is no key.
            .filter(|v| v != "Piped" && v != "Dotted")
            .collect();
        texts.sort();
        texts
    };
    // Whole components: `[v|, v}]`.
    assert_eq!(
        condition(Piped::sk().b().le("~")),
        ["T|}78", "~}"].map(String::from)
    );
    assert_eq!(
        condition(Piped::sk().b().eq("~").into()),
        ["T|}78", "~|"].map(String::from)
    );

    let at = datetime!(2024-01-02 10:11:12.5 UTC);
    let dotted = Dotted {
        a: "a".into(),
        b: "b-1".into(),
        at,
        status: "OPEN".into(),
    };
    let raw = dotted.primary_key().into_raw().unwrap();
    assert_eq!(raw.pk, "E.a");
    assert_eq!(
        raw.sk.as_deref(),
        Some("2024-01-02T10:11:12/2E500000000Z.b/2D1")
    );
    let item = dotted.to_item().unwrap();
    assert_eq!(item["GSI1PK"], s("`4F`50`45`4E_a"));
    assert_eq!(item["GSI1SK"], s("2024-01-02T10:11:12.500000000Z_b`2D`31"));
    assert_eq!(item["LSI1SK"], s("S.OPEN.b/2D1"));
    assert_eq!(Dotted::from_item(item).unwrap(), dotted);

    // A range on the timestamp, with `starts_with` escaped as the encoding is.
    let db = Db::<Pipes>::offline("pipes");
    let values = |c| {
        let input = db.query(Dotted::partition("a")).sk(c).params().unwrap();
        let mut texts: Vec<String> = input
            .expression_attribute_values()
            .unwrap()
            .values()
            .map(|v| v.as_s().unwrap().clone())
            // The entity-type filter's value is no key.
            .filter(|v| v != "Piped" && v != "Dotted")
            .collect();
        texts.sort();
        texts
    };
    assert_eq!(
        values(Dotted::sk().at().starts_with("2024-01-02T10:11:12.5")),
        ["2024-01-02T10:11:12/2E5", "E.a"].map(String::from)
    );
    assert_eq!(
        values(Dotted::sk().at().ge(at)),
        ["2024-01-02T10:11:12/2E500000000Z.", "E.a"].map(String::from)
    );
    // The inverted index is sorted by the table's partition key, `.`-delimited.
    let inverted = db
        .query(Dotted::inverted_partition(DottedInvertedPartition {
            at,
            b: "b-1",
        }))
        .sk(Dotted::inverted_sk().a().eq("a"))
        .params()
        .unwrap();
    let mut texts: Vec<String> = inverted
        .expression_attribute_values()
        .unwrap()
        .values()
        .map(|v| v.as_s().unwrap().clone())
        .filter(|v| v != "Dotted")
        .collect();
    texts.sort();
    assert_eq!(texts, ["2024-01-02T10:11:12/2E500000000Z.b/2D1", "E.a"]);
}
