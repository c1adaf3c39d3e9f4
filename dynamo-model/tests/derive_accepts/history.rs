//! The accepted forms of `#[dynamo(history)]`: bare, with a layout of its own, unpadded;
//! with a TTL field and an index template; and a narrow counter after an empty separator (`Log`).

use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::{Db, Entity, Table, ValidationReason};

#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    ttl = "expires_at",
    gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")
)]
struct App;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "DOC#{doc_id}", sk = "DOC", history)]
struct Document {
    doc_id: String,
    title: String,
    #[dynamo(version)]
    version: u64,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "PAGE#{page_id}", sk = "PAGE",
         history(prefix = "rev", width = 6, separator = "#"),
         index(GSI1, pk = "SPACE#{space}", sk = "PAGE#{page_id}"))]
struct Page {
    page_id: String,
    space: String,
    #[dynamo(version)]
    version: u64,
    #[dynamo(ttl)]
    expires_at: Option<u64>,
}

/// The layout of a table written by another program: `v0_Audit`, `v1_Audit`, …
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "AUDIT#{id}", sk = "Audit",
         history(width = 0, separator = "_", time_attribute = "changed_at"))]
struct Audit {
    id: String,
    #[dynamo(version)]
    version: u64,
}

/// AWS's number-based layout: `v0` (with the counter `Latest`), `v1`, …, `v10`.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "EQ#{id}", sk = "",
         history(width = 0, separator = "", counter_on_latest, numeric_order))]
struct Machine {
    id: String,
    #[dynamo(rename = "State")]
    state: String,
    #[dynamo(version, rename = "Latest")]
    latest: u64,
}

/// The same layout by its name: `layout = "aws"`, no `sk` (the slot is the whole sort key).
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "EQN#{id}", history(layout = "aws"))]
struct NamedMachine {
    id: String,
    #[dynamo(version, rename = "Latest")]
    latest: u64,
}

/// An empty separator before a template that does not start with a digit.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "LOG#{id}", sk = "LOG", history(width = 3, separator = ""))]
struct Log {
    id: String,
    #[dynamo(version)]
    version: u64,
}

fn s(item: &dynamo_model::Item, name: &str) -> Option<String> {
    item.get(name).and_then(|v| v.as_s().ok()).cloned()
}

/// The bounds a history query reads between, as `params()` renders them.
fn history_bounds<E>(db: &Db<App>, key: dynamo_model::Key<E>) -> (String, String)
where
    E: dynamo_model::history::Versioned<Table = App>,
{
    let input = db.history::<E>().revisions(key).params().unwrap();
    let values = input.expression_attribute_values().unwrap();
    let mut strings: Vec<String> = values
        .values()
        .filter_map(|v| match v {
            AttributeValue::S(s) if s.starts_with(|c: char| c.is_ascii_lowercase()) => {
                Some(s.clone())
            }
            _ => None,
        })
        .collect();
    strings.sort();
    assert_eq!(strings.len(), 2, "two sort-key bounds in {values:?}");
    (strings[0].clone(), strings[1].clone())
}

pub fn run() {
    // The latest copy sits at slot 0 of each layout.
    let key = Document::key("d-1");
    assert_eq!(key.raw().unwrap().pk, "DOC#d-1");
    assert_eq!(
        key.raw().unwrap().sk.as_deref(),
        Some("v00000000000000000000#DOC")
    );
    assert_eq!(
        Page::key("p-1").raw().unwrap().sk.as_deref(),
        Some("rev000000#PAGE")
    );
    assert_eq!(
        Audit::key("a-1").raw().unwrap().sk.as_deref(),
        Some("v0_Audit")
    );

    assert_eq!(Machine::key("1").raw().unwrap().sk.as_deref(), Some("v0"));
    assert_eq!(Log::key("1").raw().unwrap().sk.as_deref(), Some("v000LOG"));
    let layout = <Machine as dynamo_model::__private::EntityInternals>::__HISTORY.unwrap();
    assert!(layout.counter_on_latest && layout.numeric_order && layout.separator.is_empty());
    let named = <NamedMachine as dynamo_model::__private::EntityInternals>::__HISTORY.unwrap();
    assert_eq!(
        *named,
        dynamo_model::schema::history::HistoryLayout::AWS_NUMBER_BASED
    );
    assert_eq!(
        NamedMachine::key("1").raw().unwrap().sk.as_deref(),
        Some("v0")
    );
    let machine = Machine {
        id: "1".into(),
        state: "on".into(),
        latest: 3,
    };
    let item = machine.to_item().unwrap();
    assert_eq!(s(&item, "SK").as_deref(), Some("v0"));
    assert_eq!(Machine::from_item(item).unwrap(), machine);

    // Encoded and decoded as any entity, the TTL and the index key included.
    let page = Page {
        page_id: "p-1".into(),
        space: "eng".into(),
        version: 4,
        expires_at: Some(1_900_000_000),
    };
    let item = page.to_item().unwrap();
    assert_eq!(s(&item, "SK").as_deref(), Some("rev000000#PAGE"));
    assert_eq!(s(&item, "GSI1PK").as_deref(), Some("SPACE#eng"));
    assert!(item.contains_key("expires_at"));
    assert_eq!(Page::from_item(item).unwrap(), page);
    let doc = Document {
        doc_id: "d-1".into(),
        title: "Draft".into(),
        version: 0,
    };
    assert_eq!(Document::from_item(doc.to_item().unwrap()).unwrap(), doc);

    // The history reads slots 1 and up, never the latest copy.
    let db = Db::<App>::offline("app");
    assert_eq!(
        history_bounds(&db, Document::key("d-1")),
        (
            "v00000000000000000001#DOC".to_owned(),
            "v18446744073709551615#DOC".to_owned()
        )
    );
    assert_eq!(
        history_bounds(&db, Page::key("p-1")),
        ("rev000001#PAGE".to_owned(), "rev999999#PAGE".to_owned())
    );
    assert_eq!(
        history_bounds(&db, Audit::key("a-1")),
        ("v1".to_owned(), "v:".to_owned())
    );

    assert_eq!(
        history_bounds(&db, Machine::key("1")),
        ("v1".to_owned(), "v:".to_owned())
    );
    assert_eq!(
        history_bounds(&db, Log::key("1")),
        ("v001LOG".to_owned(), "v999LOG".to_owned())
    );

    // Plain writes would skip the revision: refused before anything is sent.
    let err = db.put(&doc).params().unwrap_err();
    assert!(
        matches!(
            err,
            dynamo_model::Error::Validation {
                reason: ValidationReason::KeepsHistory,
                ..
            }
        ),
        "{err:?}"
    );
}
