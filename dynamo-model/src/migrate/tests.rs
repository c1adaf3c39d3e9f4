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
    let before = crate::item_map::strings(&[("a", "1"), ("b", "2"), ("c", "3")]);
    let after = crate::item_map::strings(&[("a", "1"), ("b", "x"), ("d", "4")]);
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

/// A save that died between writing its temporary and renaming it leaves the temporary;
/// a later load or save removes it, and only what is stale: never a save in flight.
#[tokio::test]
async fn file_checkpoints_remove_the_temporaries_of_dead_saves() {
    use std::io::Write;
    use std::time::{Duration, SystemTime};
    let dir = std::env::temp_dir().join(format!("dm-migrate-stale-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = FileCheckpoints::new(&dir);
    let checkpoint = Checkpoint {
        positions: Cursor::from("xyz"),
        progress: Progress::default(),
    };
    store.save("users", &checkpoint).await.unwrap();
    let path = store.path("users");
    let temporary = |checkpoint: &std::path::Path, pid: u32, save: u32| {
        checkpoint.with_extension(format!("checkpoint.{pid}-{save}.tmp"))
    };
    let leave = |file: &std::path::Path, age: Duration| {
        let mut f = std::fs::File::create(file).unwrap();
        f.write_all(b"v1 half a checkpo").unwrap();
        f.set_modified(SystemTime::now() - age).unwrap();
    };
    // No process has this id (Linux's largest is 4,194,304); pid 1 always runs.
    let (dead, live, own) = (4_000_000_000, 1, std::process::id());
    let minute = Duration::from_secs(60);
    let dead_old = temporary(&path, dead, 0);
    let dead_new = temporary(&path, dead, 1);
    let live_recent = temporary(&path, live, 0);
    let live_ancient = temporary(&path, live, 1);
    let own_ancient = temporary(&path, own, 999);
    let other_checkpoint = temporary(&store.path("orders"), dead, 0);
    let not_a_temporary = dir.join(format!(
        "{}.notes.tmp",
        path.file_name().unwrap().to_string_lossy()
    ));
    leave(&dead_old, minute);
    leave(&dead_new, Duration::from_secs(1));
    leave(&live_recent, 2 * minute);
    leave(&live_ancient, 120 * minute);
    leave(&own_ancient, 120 * minute);
    leave(&other_checkpoint, 120 * minute);
    leave(&not_a_temporary, 120 * minute);

    assert_eq!(store.load("users").await.unwrap(), Some(checkpoint.clone()));
    // A dead save's temporary, once past the grace (`/proc` tells dead processes).
    assert_eq!(dead_old.exists(), !cfg!(target_os = "linux"));
    // Any other process's temporary, once an hour old.
    assert!(!live_ancient.exists());
    // Kept: a dead process's recent temporary (maybe another machine's save in flight),
    // a running process's recent one, this process's own, another checkpoint's, and a
    // file that is no temporary.
    for kept in [
        &dead_new,
        &live_recent,
        &own_ancient,
        &other_checkpoint,
        &not_a_temporary,
    ] {
        assert!(kept.exists(), "{}", kept.display());
    }

    // A save removes them too.
    leave(&live_ancient, 120 * minute);
    store.save("users", &checkpoint).await.unwrap();
    assert!(!live_ancient.exists());
    assert!(live_recent.exists() && own_ancient.exists());
    assert_eq!(store.load("users").await.unwrap(), Some(checkpoint));
    let _ = std::fs::remove_dir_all(&dir);
}
