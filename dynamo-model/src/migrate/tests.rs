use super::change::plan;
use super::*;
use crate::cursor::Cursor;

#[test]
fn sets_are_the_same_in_any_order_at_any_depth() {
    use aws_sdk_dynamodb::primitives::Blob;
    let ss = |v: &[&str]| AttributeValue::Ss(v.iter().map(|s| s.to_string()).collect());
    let bs = |v: &[&[u8]]| AttributeValue::Bs(v.iter().map(|b| Blob::new(*b)).collect());
    assert!(same_value(&ss(&["a", "b", "c"]), &ss(&["c", "a", "b"])));
    assert!(!same_value(&ss(&["a", "b"]), &ss(&["a", "c"])));
    assert!(!same_value(&ss(&["a", "a"]), &ss(&["a", "b"])));
    assert!(same_value(&bs(&[b"x", b"y"]), &bs(&[b"y", b"x"])));
    let nested = |order: &[&str]| {
        AttributeValue::M(Item::from([(
            "tags".to_owned(),
            AttributeValue::L(vec![ss(order), AttributeValue::N("1".into())]),
        )]))
    };
    assert!(same_value(&nested(&["p", "q"]), &nested(&["q", "p"])));
    // Lists keep their order.
    let list = |v: &[&str]| {
        AttributeValue::L(v.iter().map(|s| AttributeValue::S(s.to_string())).collect())
    };
    assert!(!same_value(&list(&["a", "b"]), &list(&["b", "a"])));
    assert!(!same_value(
        &ss(&["1"]),
        &AttributeValue::Ns(vec!["1".into()])
    ));
    let item = |order: &[&str]| Item::from([("s".to_owned(), ss(order))]);
    assert!(same_item(&item(&["a", "b"]), &item(&["b", "a"])));
    assert!(!same_item(&item(&["a"]), &Item::new()));
}

#[test]
fn expressions_fit_within_dynamodbs_byte_and_operator_limits() {
    let clauses = |n: usize, width: usize| vec!["x".repeat(width); n];
    // 150 clauses are 299 operators; 151 are 301.
    assert!(expression_fits(&clauses(150, 8), " AND "));
    assert!(!expression_fits(&clauses(151, 8), " AND "));
    // 4,096 bytes exactly, joined.
    let one = 4096 - 5;
    assert!(expression_fits(
        &[
            String::from("a").repeat(one / 2),
            String::from("b").repeat(one - one / 2)
        ],
        " AND "
    ));
    assert!(!expression_fits(
        &[
            String::from("a").repeat(one / 2 + 1),
            String::from("b").repeat(one - one / 2)
        ],
        " AND "
    ));
    assert!(expression_fits(&[], " AND "));
}

#[test]
fn checkpoints_read_back_as_written() {
    let checkpoint = Checkpoint {
        positions: Cursor::from("AbC-_9"),
        progress: Progress {
            scanned: 7,
            changed: 3,
            unchanged: 1,
            already: 2,
            other: 1,
            conflicts: 4,
            vanished: 0,
            failed: 5,
            read_units: 2.5,
            write_units: 11.0,
        },
    };
    assert_eq!(
        Checkpoint::from_text(&checkpoint.to_text()),
        Some(checkpoint)
    );
}

#[test]
fn other_text_is_not_a_checkpoint() {
    for text in [
        "",
        "v1",
        "v1 abc",
        "v2 abc 1 2 3 4 5 6 7 8 9 10",
        "v1 abc 1 2 3 4 5 6 7 8 9",
        "v1 abc 1 2 3 4 5 6 7 8 NaN 1",
        "v1 abc -1 2 3 4 5 6 7 8 9 10",
    ] {
        assert_eq!(Checkpoint::from_text(text), None, "{text:?}");
    }
}

#[test]
fn a_plan_names_what_changes() {
    let s = |v: &str| AttributeValue::S(v.to_owned());
    let before = Item::from([
        ("a".into(), s("1")),
        ("b".into(), s("2")),
        ("c".into(), s("3")),
    ]);
    let after = Item::from([
        ("a".into(), s("1")),
        ("b".into(), s("x")),
        ("d".into(), s("4")),
    ]);
    let key = RawKey {
        pk: "P".into(),
        sk: None,
    };
    let planned = plan(key.clone(), &before, &after);
    assert_eq!(
        planned,
        PlannedChange {
            key,
            set: vec!["b".into(), "d".into()],
            removed: vec!["c".into()]
        }
    );
}

#[tokio::test]
async fn file_checkpoints_replace_and_read_back() {
    let dir = std::env::temp_dir().join(format!("dm-migrate-{}", std::process::id()));
    let store = FileCheckpoints::new(&dir);
    assert_eq!(store.load("users/by email").await.ok().flatten(), None);
    let mut checkpoint = Checkpoint {
        positions: Cursor::from("xyz"),
        progress: Progress::default(),
    };
    store.save("users/by email", &checkpoint).await.unwrap();
    checkpoint.progress.changed = 9;
    store.save("users/by email", &checkpoint).await.unwrap();
    assert_eq!(
        store.load("users/by email").await.unwrap(),
        Some(checkpoint)
    );
    assert_eq!(store.load("users/by-email").await.unwrap(), None);
    let _ = std::fs::remove_dir_all(&dir);
}
