//! `write_type = false` and `write_token = false` on a table and on an entity: the items
//! and requests hold the entity's attributes and keys, nothing the crate adds.

use dynamo_model::{Db, Entity, Table};

/// Every entity of this table writes neither the type nor the token.
#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    identify = "keys",
    write_type = false,
    write_token = false
)]
struct Adopted;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Adopted, pk = "u#{id}", sk = "count")]
struct Counts {
    id: String,
    followers: u64,
}

/// A typed table, one entity of which leaves both out.
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct Mixed;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Mixed, identify = "keys", write_type = false, write_token = false,
         pk = "p#{id}", sk = "p#{id}")]
struct Bare {
    id: String,
    content: String,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Mixed, pk = "t#{id}", sk = "t")]
struct Typed {
    id: String,
}

/// An entity with history on the tokenless table, recording no revision time.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Adopted, pk = "d#{id}", sk = "", history(layout = "aws"))]
struct Document {
    id: String,
    #[dynamo(version)]
    latest: u64,
}

/// `time_attribute = false` on a layout of its own, on the typed table.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Mixed, identify = "keys", write_type = false, write_token = false,
         pk = "n#{id}", sk = "N", history(time_attribute = false))]
struct Note {
    id: String,
    #[dynamo(version)]
    version: u64,
}

pub fn run() {
    use dynamo_model::Target;
    for layout in [Document::HISTORY, Note::HISTORY] {
        assert_eq!(layout.map(|l| l.time_attribute), Some(None));
    }

    const { assert!(!Adopted::SCHEMA.writes_entity_type && !Adopted::SCHEMA.writes_token) };
    const { assert!(Mixed::SCHEMA.writes_entity_type && Mixed::SCHEMA.writes_token) };

    let counts = Counts {
        id: "1".into(),
        followers: 3,
    };
    let item = counts.to_item().expect("encodes");
    assert!(!item.contains_key("_type"), "{item:?}");
    assert_eq!(Counts::from_item(item).expect("decodes"), counts);
    let db = Db::<Adopted>::offline("adopted");
    let put = db.put(&counts).params().expect("renders");
    assert!(!put.item().expect("an item").contains_key("_wt"));
    let update = db
        .update(Counts::key("1"))
        .upsert()
        .add(Counts::fields().followers, 1)
        .params()
        .expect("renders");
    // Sets neither the token nor the type (the key field `id`, which the item stores, is
    // set if absent; the condition still reads the type: no item of another type).
    let expression = update.update_expression().expect("an expression");
    let names = update.expression_attribute_names().expect("names");
    for (placeholder, name) in names {
        let set = expression.contains(placeholder.as_str());
        match name.as_str() {
            "_type" => assert!(!set, "{expression}"),
            "id" | "followers" => assert!(set, "{name}: {expression}"),
            _ => {}
        }
    }
    assert!(!names.values().any(|n| n == "_wt"), "{names:?}");

    let bare = Bare {
        id: "1".into(),
        content: "hi".into(),
    };
    let item = bare.to_item().expect("encodes");
    assert!(!item.contains_key("_type"), "{item:?}");
    let mixed = Db::<Mixed>::offline("mixed");
    let put = mixed.put(&bare).params().expect("renders");
    assert!(!put.item().expect("an item").contains_key("_wt"));
    // The table's other entity still writes both.
    let typed = Typed { id: "1".into() };
    let put = mixed.put(&typed).params().expect("renders");
    let item = put.item().expect("an item");
    assert!(item.contains_key("_type") && item.contains_key("_wt"));
}
