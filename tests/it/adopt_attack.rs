//! Adopting existing tables: the guarantees attacked on every path.
//!
//! A table another program writes (no entity-type attribute, key fields only in the
//! keys, unpadded numbers, verbatim strings) shared with a typed entity whose keys
//! collide with the adopted entity's templates, and foreign rows the adopted entity does
//! not describe placed in the same partitions and index partitions. Every read must
//! leave out what is not the entity's, every write must leave it alone, and decoding
//! must take exactly the declared formats.

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::UnknownEntity;
use dynamo_model::{local, Db, DecodeErrorKind, Entity, Error, Item, Key, Table, ValidationReason};
use std::collections::HashMap;
use time::macros::datetime;
use time::OffsetDateTime;

/// The adopted table: a keys-only index whose sort key is a key field read back from
/// the key, and an index over two optional fields (one formatted).
#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "ByOwner", pk = "GPK", sk = "GSK", projection = keys_only),
    gsi(name = "ByTag", pk = "TPK", sk = "TSK")
)]
pub struct Store;

/// `W#7` / `BOLT#0003`, as the other program writes it.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Store, identify = "keys", store_key_fields = false,
         pk = "W#{id}", sk = "{kind}#{n}",
         index(ByOwner, pk = "O#{owner}", sk = "{n}"),
         index(ByTag, pk = "T#{tag}", sk = "{at}"))]
pub struct Widget {
    #[dynamo(key_format = "unpadded")]
    pub id: u64,
    #[dynamo(key_format = "verbatim")]
    pub kind: String,
    #[dynamo(key_format = "padded(4)")]
    pub n: u32,
    pub owner: Option<String>,
    pub tag: Option<String>,
    #[dynamo(key_format = "rfc3339(3)")]
    pub at: Option<OffsetDateTime>,
    pub note: Option<String>,
}

/// A typed entity (not identified by its keys) whose keys the widget templates also
/// render: `W#7` / `G#0005` is widget `(7, "G", 5)` too.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Store, pk = "W#{id}", sk = "G#{g}")]
pub struct Gadget {
    pub id: String,
    pub g: String,
    pub label: String,
}

/// A typed gadget whose key (`W#7` / `G#0005`) the widget templates render too.
fn gadget() -> Gadget {
    Gadget {
        id: "7".into(),
        g: "0005".into(),
        label: "mine".into(),
    }
}

/// An adopted entity under `_`: `U_12` / `X`.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Store, identify = "keys", store_key_fields = false, delimiter = "_",
         pk = "U_{id}", sk = "X")]
pub struct Under {
    #[dynamo(key_format = "unpadded")]
    pub id: u64,
    pub v: Option<String>,
}

fn widget(id: u64, kind: &str, n: u32) -> Widget {
    Widget {
        id,
        kind: kind.into(),
        n,
        owner: None,
        tag: None,
        at: None,
        note: None,
    }
}

fn wkey(id: u64, kind: &str, n: u32) -> Key<Widget> {
    Widget::key(WidgetKey { id, kind, n })
}

/// A row as the other program writes it: no entity-type attribute.
fn row(pk: &str, sk: &str, rest: &[(&str, &str)]) -> Item {
    let mut item: Item = HashMap::from([("PK".to_owned(), s(pk)), ("SK".to_owned(), s(sk))]);
    item.extend(rest.iter().map(|(k, v)| ((*k).to_owned(), s(v))));
    item
}

async fn get_raw(db: &Db<Store>, pk: &str, sk: &str) -> Res<Option<Item>> {
    raw_find(db, raw_key(pk, sk)).await
}

/// Foreign rows in widget 1's partition and in owner `bob`'s index partition that are
/// not widgets: no `#` in the sort key, a zero-padded id, a 3-digit `n`.
const FOREIGN: [(&str, &str); 3] = [("W#1", "NOTE"), ("W#01", "A#0001"), ("W#1", "A#001")];

/// A fresh table holding the foreign rows of [`seed_foreign`].
async fn with_foreign_rows() -> Res<local::TempTable<Store>> {
    let db = local::fresh_table::<Store>().await?;
    seed_foreign(&db).await?;
    Ok(db)
}

/// A fresh table holding the foreign rows, an untyped widget row (`W#1` / `A#0007`, the
/// other program's) and the typed widget `widget(id, "B", 2)`.
async fn with_untyped_and_typed_widgets(id: u64) -> Res<local::TempTable<Store>> {
    let db = with_foreign_rows().await?;
    put_raw(&db, row("W#1", "A#0007", &[])).await?;
    db.put(&widget(id, "B", 2)).await?;
    Ok(db)
}

async fn seed_foreign(db: &Db<Store>) -> TestResult {
    for (i, (pk, sk)) in FOREIGN.iter().enumerate() {
        let gsk = format!("{i:04}");
        put_raw(db, row(pk, sk, &[("GPK", "O#bob"), ("GSK", &gsk)])).await?;
    }
    Ok(())
}

async fn foreign_rows_intact(db: &Db<Store>) -> TestResult {
    for (pk, sk) in FOREIGN {
        assert!(
            get_raw(db, pk, sk).await?.is_some(),
            "the foreign row {pk} / {sk} was removed"
        );
    }
    Ok(())
}

/// A scatter query of widget partitions 1 and 2.
fn widgets_1_and_2(db: &Db<Store>) -> dynamo_model::read::ScatterQuery<Widget> {
    db.scatter_query([Widget::partition(1u64), Widget::partition(2u64)])
}

/// A fresh table holding the foreign rows, and in bob's `GPK` index partition an untyped
/// widget row (`W#1` / `A#0007`, the other program's) with `attrs` besides.
async fn with_bobs_untyped_widget(attrs: &[(&str, &str)]) -> Res<local::TempTable<Store>> {
    let db = with_foreign_rows().await?;
    let mut attrs = attrs.to_vec();
    attrs.extend([("GPK", "O#bob"), ("GSK", "0007")]);
    put_raw(&db, row("W#1", "A#0007", &attrs)).await?;
    Ok(db)
}

/// A keys-only index holds no entity type, so the keys it gives must be checked against
/// the templates: a foreign row in the same index partition is not a widget, and its key
/// must never become a `Key<Widget>` (a delete by it passes the widget's condition
/// `_type = Widget OR attribute_not_exists(_type)` and removes the other program's row).
#[tokio::test]
async fn keys_from_a_keys_only_index_are_only_the_entitys() -> TestResult {
    // One real widget in bob's index partition, written by the other program.
    let db = with_bobs_untyped_widget(&[]).await?;
    let keys = items_of(db.query(Widget::by_owner_partition("bob")).keys_only()).await?;
    // Whatever the read returns, deleting by it must not remove a foreign row.
    for key in &keys {
        let _ = db.delete(key.clone()).await;
    }
    foreign_rows_intact(&db).await?;
    assert_eq!(keys, vec![wkey(1, "A", 7)]);
    Ok(())
}

/// On the table (which projects the entity type) the keys of untyped widget rows are
/// keys of widgets too: `keys_only()` must not filter them out with `_type = Widget`.
#[tokio::test]
async fn keys_only_on_the_table_finds_untyped_rows() -> TestResult {
    let db = with_untyped_and_typed_widgets(1).await?;
    let items = items_of(db.query(Widget::partition(1u64))).await?;
    assert_eq!(items, vec![widget(1, "A", 7), widget(1, "B", 2)]);
    let keys = items_of(db.query(Widget::partition(1u64)).keys_only()).await?;
    assert_eq!(keys, vec![wkey(1, "A", 7), wkey(1, "B", 2)]);
    Ok(())
}

/// An update of an untyped row whose index template uses a key field that is not
/// stored (read back from the key) renders the index key from the key; clearing the
/// optional field removes the index key attributes and never the table's keys.
#[tokio::test]
async fn updates_render_index_keys_from_key_fields_read_back() -> TestResult {
    let db = local::fresh_table::<Store>().await?;
    put_raw(&db, row("W#3", "BOLT#0042", &[("note", "old")])).await?;
    db.update(wkey(3, "BOLT", 42))
        .set(Widget::fields().owner, Some("al".to_owned()))
        .await?;
    let raw = get_raw(&db, "W#3", "BOLT#0042").await?.ok_or("row gone")?;
    assert_eq!(raw.get("GPK"), Some(&s("O#al")));
    assert_eq!(raw.get("GSK"), Some(&s("0042")), "padded(4) from the key");
    assert!(!raw.contains_key("n") && !raw.contains_key("kind") && !raw.contains_key("id"));
    let keys = items_of(db.query(Widget::by_owner_partition("al")).keys_only()).await?;
    assert_eq!(keys, vec![wkey(3, "BOLT", 42)]);
    let got = db.get(wkey(3, "BOLT", 42)).consistent().await?;
    assert_eq!(
        got,
        Some(Widget {
            owner: Some("al".into()),
            note: Some("old".into()),
            ..widget(3, "BOLT", 42)
        })
    );
    db.update(wkey(3, "BOLT", 42))
        .set(Widget::fields().owner, None)
        .await?;
    let raw = get_raw(&db, "W#3", "BOLT#0042").await?.ok_or("row gone")?;
    assert!(!raw.contains_key("GPK") && !raw.contains_key("GSK"));
    assert_holds(&raw, &[("PK", s("W#3")), ("SK", s("BOLT#0042"))]);
    Ok(())
}

/// A formatted optional field in a sparse index template: absent, nothing; present,
/// exactly the declared text; a value the format cannot hold is refused before sending
/// (nothing written), on put and on update.
#[tokio::test]
async fn formatted_optional_fields_in_sparse_index_templates() -> TestResult {
    let db = local::fresh_table::<Store>().await?;
    let mut w = widget(5, "NUT", 1);
    w.tag = Some("red".into());
    db.put(&w).await?;
    let raw = get_raw(&db, "W#5", "NUT#0001").await?.ok_or("row gone")?;
    assert!(
        !raw.contains_key("TPK") && !raw.contains_key("TSK"),
        "at is absent"
    );

    let at = datetime!(1969-07-20 20:17:40.250 UTC);
    // An update of one field of an index template sets the other too (the crate's rule).
    db.update(w.primary_key())
        .set(Widget::fields().tag, Some("red".to_owned()))
        .set(Widget::fields().at, Some(at))
        .await?;
    let raw = get_raw(&db, "W#5", "NUT#0001").await?.ok_or("row gone")?;
    assert_holds(
        &raw,
        &[("TPK", s("T#red")), ("TSK", s("1969-07-20T20:17:40.250Z"))],
    );
    let found = items_of(
        db.query(Widget::by_tag_partition("red"))
            .sk(Widget::by_tag_sk()
                .at()
                .ge(datetime!(1969-07-20 20:17:40.250 UTC))),
    )
    .await?;
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].at, Some(at));

    // Microseconds in a milliseconds format: refused, nothing written.
    let precise = datetime!(2020-01-01 00:00:00.000_5 UTC);
    let err = db
        .update(w.primary_key())
        .set(Widget::fields().tag, Some("red".to_owned()))
        .set(Widget::fields().at, Some(precise))
        .await
        .expect_err("more precision than rfc3339(3)");
    assert_refused(&err, ValidationReason::KeyEncoding);
    let err = db
        .put(&Widget {
            at: Some(precise),
            ..w.clone()
        })
        .await
        .expect_err("more precision than rfc3339(3)");
    assert_refused(&err, ValidationReason::KeyEncoding);
    let raw = get_raw(&db, "W#5", "NUT#0001").await?.ok_or("row gone")?;
    assert_eq!(raw.get("TSK"), Some(&s("1969-07-20T20:17:40.250Z")));

    // Leaving the index removes the index attributes only.
    db.update(w.primary_key())
        .set(Widget::fields().tag, Some("red".to_owned()))
        .set(Widget::fields().at, None)
        .await?;
    let raw = get_raw(&db, "W#5", "NUT#0001").await?.ok_or("row gone")?;
    assert!(!raw.contains_key("TPK") && !raw.contains_key("TSK"));
    assert!(items_of(db.query(Widget::by_tag_partition("red")))
        .await?
        .is_empty());
    Ok(())
}

/// A typed item of another entity under a key the widget templates render is never
/// read, replaced or removed through a widget key, on any path.
#[tokio::test]
async fn a_typed_item_under_a_widget_key_survives_every_path() -> TestResult {
    let db = local::fresh_table::<Store>().await?;
    let gadget = gadget();
    db.put(&gadget).await?;
    let key = wkey(7, "G", 5);
    assert_eq!(
        key.clone().into_raw()?.sk.as_deref(),
        Some("G#0005"),
        "the same key"
    );
    let w = widget(7, "G", 5);

    match db.get(key.clone()).consistent().await {
        Err(Error::Decode(e)) => assert!(
            matches!(e.kind, DecodeErrorKind::WrongEntityType { .. }),
            "{e}"
        ),
        other => panic!("read as a widget: {other:?}"),
    }
    let failed = |r: Result<(), Error>, what: &str| match r {
        Err(Error::OtherEntityStored { .. }) => {}
        other => panic!("{what}: expected the stored type's refusal, got {other:?}"),
    };
    failed(db.put(&w).await, "put");
    failed(db.put(&w).if_absent().await, "put if_absent");
    failed(
        db.update(key.clone())
            .set(Widget::fields().note, Some("x".to_owned()))
            .await
            .map(|_| ()),
        "update",
    );
    failed(db.delete(key.clone()).await, "delete");
    match db.delete(key.clone()).return_old().await {
        Err(Error::OtherEntityStored { .. }) => {}
        other => panic!("delete return_old: {other:?}"),
    }
    let err = db.batch_write().put(&w).await.expect_err("batch put");
    assert_refused(&err, ValidationReason::ForeignKeySpace);
    let err = db
        .batch_write()
        .delete(key.clone())
        .await
        .expect_err("batch delete");
    assert_refused(&err, ValidationReason::ForeignKeySpace);
    assert!(db.transact_write().put(db.put(&w)).send().await.is_err());
    assert!(db
        .transact_write()
        .delete(db.delete(key.clone()))
        .send()
        .await
        .is_err());
    assert!(db
        .transact_write()
        .check(key.clone(), Widget::fields().note.not_exists())
        .send()
        .await
        .is_err());
    match db.transact_get::<Widget>().key(key.clone()).send().await {
        Err(Error::Decode(_)) | Ok(_) => {}
        Err(other) => panic!("transact get: {other:?}"),
    }
    if let Ok(got) = db.transact_get::<Widget>().key(key.clone()).send().await {
        assert_eq!(got, vec![None], "a gadget is not a widget");
    }
    // Reads of widgets leave it out.
    assert!(items_of(db.query(Widget::partition(7u64)))
        .await?
        .is_empty());
    assert!(db.scan::<Widget>().all().await?.items.is_empty());
    assert_eq!(
        db.get(gadget.primary_key()).consistent().await?,
        Some(gadget)
    );
    Ok(())
}

/// Conditional single-item operations on an untyped widget row (the other program's):
/// if_absent sees it, return_old decodes it from its keys, a field condition reads the
/// stored attribute.
#[tokio::test]
async fn conditional_writes_see_untyped_rows() -> TestResult {
    let db = local::fresh_table::<Store>().await?;
    put_raw(&db, row("W#9", "CAP#0010", &[("note", "n1")])).await?;
    let key = wkey(9, "CAP", 10);
    let w = Widget {
        note: Some("n2".into()),
        ..widget(9, "CAP", 10)
    };
    match db.put(&w).if_absent().await {
        Err(Error::ConditionFailed { .. }) => {}
        other => panic!("if_absent over an existing untyped row: {other:?}"),
    }
    match db
        .put(&w)
        .condition(Widget::fields().note.eq(Some("other".to_owned())))
        .await
    {
        Err(Error::ConditionFailed { .. }) => {}
        other => panic!("a false condition: {other:?}"),
    }
    db.put(&w)
        .condition(Widget::fields().note.eq(Some("n1".to_owned())))
        .await?;
    let old = db.delete(key.clone()).return_old().await?;
    assert_eq!(old, Some(w));
    assert!(get_raw(&db, "W#9", "CAP#0010").await?.is_none());
    Ok(())
}

/// Whatever mix of typed widgets, untyped widget rows and foreign rows a partition
/// holds, reading it in pages of any size (through the cursors) gives every widget once,
/// in key order, and never a foreign row; a scan with `UnknownEntity::Error` reports the
/// foreign rows.
#[test]
fn pages_of_any_size_lose_no_widget() -> TestResult {
    use proptest::prelude::*;

    let runtime = runtime()?;
    // (kind, n, how): 0 typed widget, 1 untyped widget row, 2 foreign row.
    let rows = (
        proptest::collection::vec(("[A-C]{1,2}", 0u32..30, 0u8..3), 1..14),
        1usize..5,
        1usize..4,
    );
    let mut runner = runner(24);
    let case = std::cell::Cell::new(0u64);
    let outcome = runner.run(&rows, |(rows, limit, page_size)| {
        case.set(case.get() + 1);
        let id = case.get();
        runtime.block_on(async {
            let db = local::fresh_table::<Store>().await.map_err(fail)?;
            let mut want: Vec<Widget> = Vec::new();
            let mut foreign = 0usize;
            for (kind, n, how) in &rows {
                let sk = format!("{kind}#{n:04}");
                match how {
                    0 => db.put(&widget(id, kind, *n)).await.map_err(fail)?,
                    1 => put_raw(&db, row(&format!("W#{id}"), &sk, &[]))
                        .await
                        .map_err(fail)?,
                    _ => {
                        // Not a widget key: a 3-digit n.
                        put_raw(&db, row(&format!("W#{id}"), &format!("{kind}#{n:03}"), &[]))
                            .await
                            .map_err(fail)?;
                        foreign += 1;
                        continue;
                    }
                }
                want.retain(|w| !(w.kind == *kind && w.n == *n));
                want.push(widget(id, kind, *n));
            }
            // Key order is the order of the rendered sort keys.
            want.sort_by_key(|w| format!("{}#{:04}", w.kind, w.n));
            let query = || db.query(Widget::partition(id));
            let got = all_pages(query, limit, Some(page_size), false)
                .await
                .map_err(fail)?;
            prop_assert_eq!(&got, &want);
            let mut scanned = Vec::new();
            let mut cursor = None;
            for _ in 0..100 {
                let page = db
                    .scan::<Widget>()
                    .limit(limit)
                    .page_size(page_size)
                    .page(cursor.as_ref())
                    .await
                    .map_err(fail)?;
                scanned.extend(page.items);
                cursor = page.cursor;
                if cursor.is_none() {
                    break;
                }
            }
            prop_assert_eq!(&scanned, &want);
            let strict = db
                .scan::<Widget>()
                .on_unknown(UnknownEntity::Error)
                .all()
                .await;
            prop_assert_eq!(
                strict.is_err(),
                foreign > 0,
                "{:?}",
                strict.map(|p| p.items.len())
            );
            Ok(())
        })
    });
    outcome.map_err(|e| e.to_string().into())
}

/// Verbatim strings are taken as they are: characters a default string would escape
/// (`%`, `!`, spaces, `"`), an empty kind, non-ASCII. A row the other program wrote
/// reads back, is found by its key and by `eq` on the component, and a put renders the
/// same text.
#[test]
fn verbatim_kinds_with_escape_characters_round_trip() -> TestResult {
    use proptest::prelude::*;

    let (runtime, db) = runtime_and_table::<Store>()?;
    let mut runner = runner(32);
    let rows = (
        "[ !\"$%&'()*+,./0-9:;<=>?@A-Z_~é€\u{1F600}]{0,8}",
        0u32..10_000,
        any::<u64>(),
    );
    let outcome = runner.run(&rows, |(kind, n, id)| {
        runtime.block_on(async {
            let sk = format!("{kind}#{n:04}");
            put_raw(&db, row(&format!("W#{id}"), &sk, &[]))
                .await
                .map_err(|e| fail(&e))?;
            let got = db
                .get(wkey(id, &kind, n))
                .consistent()
                .await
                .map_err(|e| fail(&e))?;
            prop_assert_eq!(got, Some(widget(id, &kind, n)));
            let listed = db
                .query(Widget::partition(id))
                .sk(Widget::sk().kind().eq(kind.as_str()))
                .all()
                .await
                .map_err(|e| fail(&e))?
                .items;
            prop_assert!(listed.contains(&widget(id, &kind, n)));
            let raw = wkey(id, &kind, n).into_raw().map_err(|e| fail(&e))?;
            prop_assert_eq!(raw.sk.as_deref(), Some(sk.as_str()));
            prop_assert_eq!(raw.pk, format!("W#{id}"));
            Ok(())
        })
    });
    outcome.map_err(|e| e.to_string().into())
}

/// `starts_with` on a verbatim component matches that component only: a partial value
/// containing the delimiter would reach into the next component.
#[tokio::test]
async fn starts_with_on_a_verbatim_field_stays_in_its_component() -> TestResult {
    let db = local::fresh_table::<Store>().await?;
    db.put(&widget(4, "A", 1)).await?;
    db.put(&widget(4, "AB", 2)).await?;
    let result = db
        .query(Widget::partition(4u64))
        .sk(Widget::sk().kind().starts_with("A#00"))
        .all()
        .await;
    match result {
        Err(e) => assert_refused(&e, ValidationReason::KeyEncoding),
        Ok(page) => assert!(
            page.items.iter().all(|w| w.kind.starts_with("A#00")),
            "matched {:?}",
            page.items
        ),
    }
    Ok(())
}

/// Under `_` an unpadded number is still plain decimal: the other program's `U_12`.
#[tokio::test]
async fn unpadded_keys_under_underscore_are_plain_decimal() -> TestResult {
    let db = local::fresh_table::<Store>().await?;
    put_raw(&db, row("U_12", "X", &[("v", "theirs")])).await?;
    let key = Under::key(12u64);
    assert_eq!(key.clone().into_raw()?.pk, "U_12");
    assert_eq!(
        db.get(key).consistent().await?,
        Some(Under {
            id: 12,
            v: Some("theirs".into())
        })
    );
    Ok(())
}

#[derive(dynamo_model::Collection, Debug)]
pub enum StoreRows {
    Widget(Widget),
    Gadget(Gadget),
}

/// A partition holding a typed gadget under a widget-shaped key, an untyped widget row
/// and a foreign row: a collection reads each as what it is and skips (or reports) the
/// foreign row; a batch get of widget keys never turns the gadget into a widget.
#[tokio::test]
async fn collections_and_batch_gets_tell_rows_apart() -> TestResult {
    let db = local::fresh_table::<Store>().await?;
    let gadget = gadget();
    db.put(&gadget).await?;
    put_raw(&db, row("W#7", "A#0001", &[("note", "theirs")])).await?;
    put_raw(&db, row("W#7", "NOTE", &[])).await?;
    let rows = items_of(db.query(Widget::partition(7u64)).collection::<StoreRows>()).await?;
    let mut widgets = Vec::new();
    let mut gadgets = Vec::new();
    for r in rows {
        match r {
            StoreRows::Widget(w) => widgets.push(w),
            StoreRows::Gadget(g) => gadgets.push(g),
        }
    }
    assert_eq!(
        widgets,
        vec![Widget {
            note: Some("theirs".into()),
            ..widget(7, "A", 1)
        }]
    );
    assert_eq!(gadgets, vec![gadget.clone()]);
    let strict = db
        .query(Widget::partition(7u64))
        .collection::<StoreRows>()
        .on_unknown(UnknownEntity::Error)
        .all()
        .await;
    assert!(strict.is_err(), "the foreign row is reported: {strict:?}");

    match db
        .batch_get::<Widget>()
        .keys([wkey(7, "G", 5), wkey(7, "A", 1), wkey(7, "Z", 9)])
        .consistent()
        .send()
        .await
    {
        Ok(out) => assert_eq!(
            out.items,
            vec![Widget {
                note: Some("theirs".into()),
                ..widget(7, "A", 1)
            }],
            "the gadget is not a widget"
        ),
        Err(Error::Decode(e)) => assert!(
            matches!(e.kind, DecodeErrorKind::WrongEntityType { .. }),
            "{e}"
        ),
        Err(other) => panic!("batch get: {other:?}"),
    }
    Ok(())
}

/// A filter holds for typed and untyped rows alike: the type filter the crate adds for
/// an entity identified by its keys (`_type = W OR attribute_not_exists(_type)`) must
/// not let rows past the caller's condition.
#[tokio::test]
async fn filters_hold_for_typed_and_untyped_rows() -> TestResult {
    let db = local::fresh_table::<Store>().await?;
    let with = |kind: &str, note: &str| Widget {
        note: Some(note.into()),
        ..widget(2, kind, 1)
    };
    db.put(&with("A", "x")).await?;
    db.put(&with("B", "y")).await?;
    put_raw(&db, row("W#2", "C#0001", &[("note", "x")])).await?;
    put_raw(&db, row("W#2", "D#0001", &[("note", "y")])).await?;
    put_raw(&db, row("W#2", "NOTE", &[("note", "x")])).await?;
    let f = Widget::fields();
    let found = items_of(
        db.query(Widget::partition(2u64))
            .filter(f.note.eq(Some("x".to_owned()))),
    )
    .await?;
    assert_eq!(found, vec![with("A", "x"), with("C", "x")]);
    let found = items_of(
        db.query(Widget::partition(2u64))
            .filter(f.note.eq(Some("y".to_owned())).or(f.note.not_exists())),
    )
    .await?;
    assert_eq!(found, vec![with("B", "y"), with("D", "y")]);
    let mut scanned = db
        .scan::<Widget>()
        .filter(f.note.eq(Some("y".to_owned())))
        .all()
        .await?
        .items;
    scanned.sort_by(|a, b| a.kind.cmp(&b.kind));
    assert_eq!(scanned, vec![with("B", "y"), with("D", "y")]);
    Ok(())
}

/// Whatever plain attributes another program stored next to a widget key (key-field
/// names with any type or value, an entity type of any kind, index keys that disagree),
/// reading never panics and a widget read from it has exactly the key's fields.
#[test]
fn key_fields_come_from_the_key_whatever_the_row_holds() -> TestResult {
    use proptest::prelude::*;

    let (runtime, db) = runtime_and_table::<Store>()?;
    let value = prop_oneof![
        "[ -~]{0,6}".prop_map(AttributeValue::S),
        "-?[0-9]{1,4}(\\.[0-9])?".prop_map(AttributeValue::N),
        any::<bool>().prop_map(AttributeValue::Bool),
        Just(AttributeValue::Null(true)),
        Just(AttributeValue::L(vec![])),
        Just(AttributeValue::M(HashMap::new())),
    ];
    let names = prop::sample::select(vec![
        "id", "kind", "n", "owner", "tag", "at", "note", "_type", "TSK",
    ]);
    let rows = (
        proptest::collection::vec((names, value), 0..5),
        1u64..1000,
        "[A-Z]{1,3}",
        0u32..10_000,
    );
    let mut runner = runner(32);
    // Every case (shrinking included) writes a partition of its own: a row an earlier
    // case left under the same id would be read back by this case's query.
    let cases = std::sync::atomic::AtomicU64::new(0);
    let outcome = runner.run(&rows, |(attrs, id, kind, n)| {
        let id = id + 1_000 * cases.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        runtime.block_on(async {
            let mut item = row(&format!("W#{id}"), &format!("{kind}#{n:04}"), &[]);
            for (name, v) in attrs {
                // Index key attributes must be strings (the table's schema says so).
                if name == "TSK" && !matches!(v, AttributeValue::S(_)) {
                    continue;
                }
                if name == "TSK" && matches!(&v, AttributeValue::S(s) if s.is_empty()) {
                    continue;
                }
                item.insert(name.to_owned(), v);
            }
            put_raw(&db, item).await.map_err(|e| fail(&e))?;
            let got = db.get(wkey(id, &kind, n)).consistent().await;
            match got {
                Ok(Some(w)) => {
                    prop_assert_eq!((w.id, w.kind.as_str(), w.n), (id, kind.as_str(), n));
                }
                Ok(None) | Err(Error::Decode(_)) => {}
                Err(other) => prop_assert!(false, "unexpected error {:?}", other),
            }
            match db.query(Widget::partition(id)).all().await {
                Ok(page) => {
                    for w in page.items {
                        prop_assert_eq!((w.id, w.kind.as_str(), w.n), (id, kind.as_str(), n));
                    }
                }
                Err(Error::Decode(_)) => {}
                Err(other) => prop_assert!(false, "unexpected error {:?}", other),
            }
            Ok(())
        })
    });
    outcome.map_err(|e| e.to_string().into())
}

/// Transactions over the other program's rows: a check reads the untyped row as a
/// widget (and fails where there is none), a transactional get decodes it, a put
/// replaces it; an untyped row under a key no template renders is never a widget's.
#[tokio::test]
async fn transactions_over_untyped_rows() -> TestResult {
    let db = local::fresh_table::<Store>().await?;
    put_raw(&db, row("W#6", "A#0001", &[("note", "theirs")])).await?;
    let key = wkey(6, "A", 1);
    let f = Widget::fields();
    db.transact_write()
        .check(key.clone(), f.note.eq(Some("theirs".to_owned())))
        .put(db.put(&widget(6, "B", 2)))
        .send()
        .await?;
    assert!(
        db.transact_write()
            .check(wkey(6, "Z", 9), f.note.not_exists())
            .put(db.put(&widget(6, "C", 3)))
            .send()
            .await
            .is_err(),
        "a check of a missing item fails"
    );
    assert!(
        get_raw(&db, "W#6", "C#0003").await?.is_none(),
        "all or nothing"
    );
    let got = db
        .transact_get::<Widget>()
        .key(key.clone())
        .key(wkey(6, "B", 2))
        .send()
        .await?;
    assert_eq!(
        got,
        vec![
            Some(Widget {
                note: Some("theirs".into()),
                ..widget(6, "A", 1)
            }),
            Some(widget(6, "B", 2))
        ]
    );
    db.transact_write()
        .put(db.put(&widget(6, "A", 1)))
        .delete(db.delete(wkey(6, "B", 2)))
        .send()
        .await?;
    assert_eq!(
        db.get(key).consistent().await?,
        Some(widget(6, "A", 1)),
        "replaced"
    );
    assert!(get_raw(&db, "W#6", "B#0002").await?.is_none());
    Ok(())
}

/// Keys two entities identified by their keys share (the whole table `adopt::Shared`
/// is) are refused on the batch and transaction paths too, before anything is sent.
#[tokio::test]
async fn ambiguous_keys_are_refused_in_batches_and_transactions() -> TestResult {
    use crate::adopt::{left, right, Left, Shared};
    let db = local::fresh_table::<Shared>().await?;
    let (left, right) = (left(), right("X"));
    let err = db.batch_write().put(&left).await.expect_err("batch put");
    assert!(matches!(err, Error::Validation { .. }), "{err:?}");
    let err = db.batch_write().put(&right).await.expect_err("batch put");
    assert!(matches!(err, Error::Validation { .. }), "{err:?}");
    let err = db
        .transact_write()
        .put(db.put(&left))
        .send()
        .await
        .expect_err("transact put");
    assert!(matches!(err, Error::Validation { .. }), "{err:?}");
    let err = db
        .transact_write()
        .delete(db.delete(right.primary_key()))
        .send()
        .await
        .expect_err("transact delete");
    assert!(matches!(err, Error::Validation { .. }), "{err:?}");
    let err = db
        .batch_get::<Left>()
        .keys([left.primary_key()])
        .send()
        .await
        .expect_err("batch get");
    assert!(matches!(err, Error::Validation { .. }), "{err:?}");
    assert!(raw_table(&db).await?.is_empty(), "nothing was written");
    Ok(())
}

/// A scatter read over several widget partitions finds untyped rows and leaves out
/// foreign ones.
#[tokio::test]
async fn scatter_reads_find_untyped_rows_and_skip_foreign_ones() -> TestResult {
    let db = with_untyped_and_typed_widgets(2).await?;
    let items = widgets_1_and_2(&db).all().await?.items;
    assert_eq!(items, vec![widget(1, "A", 7), widget(2, "B", 2)]);
    Ok(())
}

/// The same read as keys: every widget's key, the untyped one's too.
#[tokio::test]
async fn scatter_keys_find_untyped_rows() -> TestResult {
    let db = with_untyped_and_typed_widgets(2).await?;
    let keys = widgets_1_and_2(&db).keys_only().all().await?.items;
    assert_eq!(keys, vec![wkey(1, "A", 7), wkey(2, "B", 2)]);
    Ok(())
}

/// A versioned entity identified by its keys: `D#1` / `v…0#DOC` and its revisions.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Store, identify = "keys", pk = "D#{id}", sk = "DOC", history)]
pub struct Doc {
    #[dynamo(key_format = "unpadded")]
    pub id: u64,
    pub body: String,
    #[dynamo(version)]
    pub version: u64,
}

/// Items of a versioned entity identified by its keys, stored without the entity-type
/// attribute (as another deployment writing the same layout leaves them): reads other
/// than the history still see the latest copy only, and the history reads the revisions.
#[tokio::test]
async fn untyped_revisions_are_history_not_items() -> TestResult {
    let db = local::fresh_table::<Store>().await?;
    let versions = db.history::<Doc>();
    let doc = |body: &str| Doc {
        id: 1,
        body: body.into(),
        version: 0,
    };
    versions.create(&doc("one")).await?;
    versions
        .revise(Doc::key(1u64), |d| d.body = "two".into())
        .await?;
    versions
        .revise(Doc::key(1u64), |d| d.body = "three".into())
        .await?;
    let revisions = versions.revisions(Doc::key(1u64)).all().await?.items.len();
    assert!(revisions >= 2);
    // Strip the entity type from every item of the partition.
    let all = db
        .client()
        .query()
        .table_name(db.table_name())
        .key_condition_expression("PK = :p")
        .expression_attribute_values(":p", s("D#1"))
        .send()
        .await?;
    let items = all.items.unwrap_or_default();
    assert_eq!(
        items.len(),
        revisions + 1,
        "the latest copy and the revisions"
    );
    for mut item in items {
        item.remove("_type");
        put_raw(&db, item).await?;
    }
    let latest = db.get(Doc::key(1u64)).consistent().await?;
    assert_eq!(
        latest.map(|d| (d.body, d.version)),
        Some(("three".into(), 3))
    );
    assert_eq!(
        scanned_bodies(&db).await?,
        ["three"],
        "a scan sees the latest copy only"
    );
    let queried = queried_docs(&db, 1).await?;
    assert_eq!(queried.len(), 1, "a query sees the latest copy only");
    let history = versions.revisions(Doc::key(1u64)).all().await?.items;
    assert_eq!(history.len(), revisions, "the same revisions");
    Ok(())
}

/// A latest copy stored without the entity-type attribute (the entity is identified by
/// its keys) revised through the crate: the revision the crate writes is history, and
/// scans and queries still see the latest copy only.
#[tokio::test]
async fn revising_an_untyped_latest_copy_keeps_reads_working() -> TestResult {
    let db = local::fresh_table::<Store>().await?;
    let versions = db.history::<Doc>();
    versions
        .create(&Doc {
            id: 2,
            body: "one".into(),
            version: 0,
        })
        .await?;
    let latest_sk = Doc::key(2u64).into_raw()?.sk.ok_or("no sort key")?;
    let mut item = get_raw(&db, "D#2", &latest_sk)
        .await?
        .ok_or("no latest copy")?;
    item.remove("_type");
    put_raw(&db, item).await?;
    versions
        .revise(Doc::key(2u64), |d| d.body = "two".into())
        .await?;
    assert_eq!(scanned_bodies(&db).await?, ["two"]);
    let queried = queried_docs(&db, 2).await?;
    assert_eq!(queried.len(), 1);
    Ok(())
}

/// The bodies of the docs a scan reads.
async fn scanned_bodies(db: &Db<Store>) -> Res<Vec<String>> {
    let scanned = db
        .scan::<Doc>()
        .all()
        .await
        .map_err(|e| format!("scan: {e}"))?;
    Ok(scanned.mapped(|d| d.body))
}

/// The docs a query of doc `id`'s partition reads.
async fn queried_docs(db: &Db<Store>, id: u64) -> Res<Vec<Doc>> {
    let queried = db
        .query(Doc::partition(id))
        .all()
        .await
        .map_err(|e| format!("query: {e}"))?;
    Ok(queried.items)
}

/// A table whose index is sorted by the table's own sort key (a template GSI repeating
/// the primary sort-key template on `SK`).
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "ByAgent", pk = "AgentPK", sk = "SK"))]
pub struct Desk;

/// `C#12` / `OPEN#2021-01-02T03:04:05Z`, key fields only in the keys.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Desk, identify = "keys", store_key_fields = false,
         pk = "C#{id}", sk = "{state}#{opened}",
         index(ByAgent, pk = "A#{agent}", sk = "{state}#{opened}"))]
pub struct Case {
    #[dynamo(key_format = "unpadded")]
    pub id: i64,
    #[dynamo(key_format = "verbatim")]
    pub state: String,
    #[dynamo(key_format = "rfc3339")]
    pub opened: OffsetDateTime,
    pub agent: Option<String>,
}

async fn put_desk(db: &Db<Desk>, pk: &str, sk: &str, agent: Option<&str>) -> TestResult {
    let mut item: Item = HashMap::from([("PK".to_owned(), s(pk)), ("SK".to_owned(), s(sk))]);
    if let Some(a) = agent {
        item.insert("AgentPK".to_owned(), s(&format!("A#{a}")));
        item.insert("agent".to_owned(), s(a));
    }
    put_raw(db, item).await?;
    Ok(())
}

/// Rows of the other program in an index sorted by the table's sort key: an update of
/// the agent renders only the index partition (the sort key is the table's, never
/// written), foreign rows in the same index partition are left out, and sort-key
/// conditions on the index take the declared formats (negative ids included).
#[tokio::test]
async fn an_index_on_the_tables_sort_key_over_untyped_rows() -> TestResult {
    let db = local::fresh_table::<Desk>().await?;
    let t1 = datetime!(2021-01-02 03:04:05 UTC);
    let t2 = datetime!(1960-05-06 07:08:09 UTC);
    put_desk(&db, "C#-12", "OPEN#2021-01-02T03:04:05Z", None).await?;
    put_desk(&db, "C#7", "OPEN#1960-05-06T07:08:09Z", Some("bo")).await?;
    // Foreign rows in bo's index partition: no date, a date without Z, a padded id.
    put_desk(&db, "C#7", "OPEN", Some("bo")).await?;
    put_desk(&db, "C#7", "OPEN#1960-05-06T07:08:09", Some("bo")).await?;
    put_desk(&db, "C#007", "OPEN#1960-05-06T07:08:09Z", Some("bo")).await?;

    let key = Case::key(CaseKey {
        id: -12i64,
        state: "OPEN",
        opened: t1,
    });
    db.update(key.clone())
        .set(Case::fields().agent, Some("bo".to_owned()))
        .await?;
    let raw = raw_get(&db, "C#-12", "OPEN#2021-01-02T03:04:05Z").await?;
    assert_eq!(raw.get("AgentPK"), Some(&s("A#bo")));
    assert!(
        !raw.contains_key("id") && !raw.contains_key("state") && !raw.contains_key("opened"),
        "key fields stay in the keys: {raw:?}"
    );

    let case = |id: i64, opened: OffsetDateTime| Case {
        id,
        state: "OPEN".into(),
        opened,
        agent: Some("bo".into()),
    };
    let open = items_of(
        db.query(Case::by_agent_partition("bo"))
            .sk(Case::by_agent_sk().state().eq("OPEN")),
    )
    .await?;
    assert_eq!(open, vec![case(7, t2), case(-12, t1)], "in SK order");
    let since = items_of(
        db.query(Case::by_agent_partition("bo"))
            .sk(Case::by_agent_sk()
                .state()
                .eq("OPEN")
                .opened()
                .ge(datetime!(2000-01-01 00:00:00 UTC))),
    )
    .await?;
    assert_eq!(since, vec![case(-12, t1)]);
    // Leaving the index removes AgentPK and never the table's sort key.
    db.update(key).set(Case::fields().agent, None).await?;
    let left = items_of(db.query(Case::by_agent_partition("bo"))).await?;
    assert_eq!(left, vec![case(7, t2)]);
    assert_eq!(
        items_of(db.query(Case::partition(-12i64))).await?,
        vec![Case {
            agent: None,
            ..case(-12, t1)
        }]
    );
    Ok(())
}

/// A value a key format cannot hold is refused before anything is sent, on every path
/// that renders a key: `n` = 10000 has five digits for `padded(4)`, a `#` in a verbatim
/// part.
#[tokio::test]
async fn values_a_format_cannot_hold_are_refused_on_every_path() -> TestResult {
    let db = local::fresh_table::<Store>().await?;
    let wide = widget(1, "A", 10_000);
    let hashed = widget(1, "A#B", 1);
    for w in [&wide, &hashed] {
        let key = || {
            Widget::key(WidgetKey {
                id: w.id,
                kind: w.kind.as_str(),
                n: w.n,
            })
        };
        let refused = |r: Result<(), Error>, what: &str| match r {
            Err(e @ Error::Validation { .. }) => assert_refused(&e, ValidationReason::KeyEncoding),
            other => panic!("{what} of {w:?}: expected a refusal, got {other:?}"),
        };
        refused(db.put(w).await, "put");
        refused(db.get(key()).await.map(|_| ()), "get");
        refused(db.delete(key()).await, "delete");
        refused(
            db.update(key())
                .set(Widget::fields().note, Some("x".to_owned()))
                .await
                .map(|_| ()),
            "update",
        );
        assert!(matches!(
            db.batch_write().put(w).await,
            Err(Error::Validation { .. })
        ));
        assert!(matches!(
            db.batch_get::<Widget>().keys([key()]).send().await,
            Err(Error::Validation { .. })
        ));
        assert!(matches!(
            db.transact_write().put(db.put(w)).send().await,
            Err(Error::Validation { .. })
        ));
        assert!(matches!(
            db.transact_get::<Widget>().key(key()).send().await,
            Err(Error::Validation { .. })
        ));
    }
    let err = db
        .query(Widget::partition(1u64))
        .sk(Widget::sk().kind().eq("A").n().ge(10_000u32))
        .all()
        .await
        .expect_err("a bound the format cannot hold");
    assert_refused(&err, ValidationReason::KeyEncoding);
    assert!(raw_table(&db).await?.is_empty(), "nothing was written");
    Ok(())
}

/// Hydrating a page of a keys-only index partition that also holds foreign rows gives
/// the widgets only: a foreign row's key fetched back is not read as a widget (nor
/// fails the read).
#[tokio::test]
async fn hydrating_a_keys_only_index_gives_widgets_only() -> TestResult {
    let db = with_bobs_untyped_widget(&[("owner", "bob")]).await?;
    let mut items = Vec::new();
    let mut cursor = None;
    for _ in 0..10 {
        let page = db
            .query(Widget::by_owner_partition("bob"))
            .keys_only()
            .limit(2)
            .hydrate(cursor.as_ref())
            .await?;
        items.extend(page.items);
        cursor = page.cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(
        items,
        vec![Widget {
            owner: Some("bob".into()),
            ..widget(1, "A", 7)
        }]
    );
    foreign_rows_intact(&db).await?;
    Ok(())
}

/// A fresh table holding a row of the other program that still holds an aliased field
/// under its old name (`reading`, now `Reading`).
async fn old_named_row() -> Res<local::TempTable<crate::adopt::Devices>> {
    let db = local::fresh_table::<crate::adopt::Devices>().await?;
    let item: Item = HashMap::from([
        ("DeviceID".to_owned(), s("d#5")),
        ("State#Date".to_owned(), s("OK#2020-04-25T08:00:00")),
        ("reading".to_owned(), num("3")),
    ]);
    put_raw(&db, item).await?;
    Ok(db)
}

fn old_named_key() -> Key<crate::adopt::DeviceStatus> {
    crate::adopt::DeviceStatus::key(crate::adopt::DeviceStatusKey {
        device_id: 5u64,
        state: "OK",
        date: datetime!(2020-04-25 08:00:00 UTC),
    })
}

/// An update of the row [`old_named_row`] holds.
fn update_old_named(
    db: &Db<crate::adopt::Devices>,
) -> dynamo_model::item::Update<crate::adopt::DeviceStatus> {
    db.update(old_named_key())
}

/// After an update of an aliased field, a read gives the value just written, not the
/// value still stored under the old name.
#[tokio::test]
async fn an_update_of_an_aliased_field_wins_over_the_old_name() -> TestResult {
    use crate::adopt::DeviceStatus;
    let db = old_named_row().await?;
    let got = db.get(old_named_key()).consistent().await?;
    assert_eq!(got.and_then(|d| d.reading), Some(3));
    update_old_named(&db)
        .set(DeviceStatus::fields().reading, Some(8))
        .await?;
    let got = db.get(old_named_key()).consistent().await?;
    assert_eq!(got.and_then(|d| d.reading), Some(8));
    Ok(())
}

/// An increment of an aliased field stored under its old name starts from the stored
/// value (3 + 1), not from nothing.
#[tokio::test]
async fn an_increment_of_an_aliased_field_starts_from_the_old_value() -> TestResult {
    use crate::adopt::DeviceStatus;
    let db = old_named_row().await?;
    let result = update_old_named(&db)
        .add(DeviceStatus::fields().reading, 1)
        .await;
    match result {
        Ok(after) => assert_eq!(after.reading, Some(4), "3 + 1"),
        // Refusing an increment it cannot base on the old name is also sound.
        Err(e) => assert!(matches!(e, Error::Validation { .. }), "{e:?}"),
    }
    Ok(())
}

/// Filters and conditions name a renamed field's current attribute only (documented):
/// a row still holding the value under the older name does not match until it is
/// rewritten, and an update that would read the older value without finding it
/// (`set_if_absent`, a list append) is refused rather than silently starting over.
#[tokio::test]
async fn updates_that_cannot_see_the_old_name_are_refused() -> TestResult {
    use crate::adopt::DeviceStatus;
    let db = old_named_row().await?;
    let refused = update_old_named(&db)
        .set_if_absent(DeviceStatus::fields().reading, Some(9))
        .await
        .err()
        .ok_or("set_if_absent on a renamed field was sent")?;
    assert_refused(&refused, ValidationReason::RenamedField);
    let found = items_of(
        db.query(DeviceStatus::partition(5u64))
            .filter(DeviceStatus::fields().reading.eq(Some(3))),
    )
    .await?;
    assert!(found.is_empty(), "filters name the current attribute only");
    // Once the field is written, the older name is gone and the filter finds the row.
    update_old_named(&db)
        .add(DeviceStatus::fields().reading, 0)
        .await?;
    let key = Item::from([
        ("DeviceID".to_owned(), s("d#5")),
        ("State#Date".to_owned(), s("OK#2020-04-25T08:00:00")),
    ]);
    let raw = raw_find(&db, key).await?.unwrap_or_default();
    assert!(
        !raw.contains_key("reading") && raw.contains_key("Reading"),
        "{raw:?}"
    );
    let found = items_of(
        db.query(DeviceStatus::partition(5u64))
            .filter(DeviceStatus::fields().reading.eq(Some(3))),
    )
    .await?;
    assert_eq!(found.len(), 1);
    Ok(())
}

/// Clearing an aliased field clears it: the value stored under the old name does not
/// come back.
#[tokio::test]
async fn clearing_an_aliased_field_does_not_bring_back_the_old_value() -> TestResult {
    use crate::adopt::DeviceStatus;
    let db = old_named_row().await?;
    update_old_named(&db)
        .set(DeviceStatus::fields().reading, Some(8))
        .await?;
    update_old_named(&db)
        .set(DeviceStatus::fields().reading, None)
        .await?;
    let got = db.get(old_named_key()).consistent().await?;
    assert_eq!(got.map(|d| d.reading), Some(None));
    Ok(())
}
