//! Chunk ownership: each chunk item records the item (and field) that wrote it, and no
//! crate call on another item deletes it, whatever that item's stored manifests name
//! (an item copied to a new key by another program names its original's chunks).

use crate::chunk::{
    assert_no_orphan_chunks, bytes, chunk_count, named_and_present, sweep_aged, Message,
};
use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::{local, Db, Error, Item};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

fn msg(owner: &str, body: String, attachment: Vec<u8>) -> Message {
    Message {
        owner: owner.into(),
        msg_id: "m".into(),
        subject: format!("subject of {owner}"),
        body: body.into(),
        attachment: attachment.into(),
    }
}

fn key(owner: &str) -> dynamo_model::Key<Message> {
    Message::key(crate::chunk::MessageKey { owner, msg_id: "m" })
}

/// The stored item of `from`, copied raw (as another program would) to `to`'s key: both
/// items' manifests then name the same chunks.
async fn copy_raw(db: &Db<App>, from: &str, to: &str) -> Res<Item> {
    let mut item = raw_get(db, &format!("INBOX#{from}"), "MSG#m").await?;
    item.insert("PK".into(), s(&format!("INBOX#{to}")));
    item.insert("owner".into(), s(to));
    put_raw(db, item.clone()).await?;
    Ok(item)
}

/// `owner`'s item read back, with its chunks.
async fn read(db: &Db<App>, owner: &str) -> Res<Option<Message>> {
    Ok(db.get(key(owner)).await?)
}

/// A fresh table holding `a`'s message (large values: five chunks) and, at `b`'s key, a
/// raw copy of it (see [`copy_raw`]); with `a`'s message.
async fn with_a_copied_to_b() -> Res<(local::TempTable<App>, Message)> {
    let db = local::fresh_table::<App>().await?;
    let a = msg("a", "A".repeat(5000), bytes(5000, 1));
    db.put(&a).await?;
    copy_raw(&db, "a", "b").await?;
    Ok((db, a))
}

/// Asserts that `a`'s message still reads back whole, with its chunks, after `what`.
async fn assert_a_whole(db: &Db<App>, a: &Message, what: &str) -> TestResult {
    assert_eq!(read(db, "a").await?.as_ref(), Some(a), "A after {what}");
    Ok(())
}

#[tokio::test]
async fn a_put_over_a_copy_keeps_the_originals_chunks() -> TestResult {
    let (db, a) = with_a_copied_to_b().await?;
    // Large values again, then small ones: each put replaces the copy's manifests.
    let b = msg("b", "B".repeat(6000), bytes(3000, 2));
    db.put(&b).await?;
    assert_a_whole(&db, &a, "a put over B").await?;
    assert_eq!(read(&db, "b").await?.as_ref(), Some(&b));
    // The copy's put wrote chunks of its own: A's and B's, nothing else.
    assert_eq!(chunk_count(&raw_items(&db).await?), (1 + 5) + (1 + 3));

    // Planted over B again (B's own chunks are orphans now), then small values.
    copy_raw(&db, "a", "b").await?;
    db.put(&msg("b", "small".into(), vec![1])).await?;
    assert_a_whole(&db, &a, "a small put").await?;
    assert_eq!(chunk_count(&raw_items(&db).await?), (1 + 5) + (1 + 3));
    // The sweep removes B's orphans, and only them.
    let report = sweep_aged(&db).await?;
    assert_eq!((report.deleted, report.kept), (1 + 3, 1 + 5), "{report:?}");
    assert_a_whole(&db, &a, "the sweep").await?;
    assert_no_orphan_chunks(&db).await?;
    Ok(())
}

#[tokio::test]
async fn a_delete_of_a_copy_keeps_the_originals_chunks() -> TestResult {
    let (db, a) = with_a_copied_to_b().await?;
    db.delete(key("b")).await?;
    assert_a_whole(&db, &a, "a delete of B").await?;
    copy_raw(&db, "a", "b").await?;
    let old = db.delete(key("b")).return_old().await?;
    assert!(old.is_some());
    assert_a_whole(&db, &a, "return_old").await?;
    assert_eq!(chunk_count(&raw_items(&db).await?), 1 + 5);
    // The owner's own delete still takes its chunks.
    db.delete(key("a")).await?;
    assert!(raw_items(&db).await?.is_empty());
    Ok(())
}

/// Another program moves an item (copy to a new key, then delete the original): the
/// chunks' owner names them no more, but the copy does, so the sweep keeps them.
/// Once no item names them, the sweep removes them.
#[tokio::test]
async fn the_sweep_keeps_chunks_a_copy_still_names() -> TestResult {
    let (db, a) = with_a_copied_to_b().await?;
    raw_delete(&db, "INBOX#a", "MSG#m").await?;
    let report = sweep_aged(&db).await?;
    assert_eq!(report.deleted, 0, "{report:?}");
    assert_eq!(report.named_by_others, 1 + 5, "{report:?}");
    let mut moved = a.clone();
    moved.owner = "b".into();
    assert_eq!(read(&db, "b").await?, Some(moved), "the moved item reads");
    // B's crate put leaves A's chunks alone (not B's to delete); the sweep then finds
    // no item naming them and removes them.
    db.put(&msg("b", "small".into(), vec![1])).await?;
    assert_eq!(chunk_count(&raw_items(&db).await?), 1 + 5);
    let report = sweep_aged(&db).await?;
    assert_eq!((report.deleted, report.named_by_others), (1 + 5, 0));
    assert_no_orphan_chunks(&db).await?;
    Ok(())
}

/// An entity read by a query (its chunked values not loaded) put under a key where no
/// item is stored: refused with the reason, not a bare failed condition.
#[tokio::test]
async fn a_listed_entity_put_under_a_new_key_says_its_value_was_not_loaded() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    db.put(&msg("a", "A".repeat(5000), bytes(5000, 1))).await?;
    let listed = items_of(db.query(Message::partition("a"))).await?;
    let mut moved = listed.into_iter().next().ok_or("listed")?;
    assert!(!moved.body.is_loaded());
    moved.owner = "new".into();
    let err = db.put(&moved).await.unwrap_err();
    match &err {
        Error::ChunksNotLoaded {
            entity, attribute, ..
        } => {
            assert_eq!(*entity, "Message");
            assert!(["body", "attachment"].contains(attribute), "{err}");
        }
        other => panic!("expected ChunksNotLoaded, got {other:?}"),
    }
    assert!(err.to_string().contains("not loaded"), "{err}");
    assert!(read(&db, "new").await?.is_none());
    let (named, present) = named_and_present(&db).await?;
    assert_eq!(named, present, "nothing written");
    // Loaded, the same entity moves.
    db.load_chunks(std::slice::from_mut(&mut moved)).await?;
    db.put(&moved).await?;
    assert_eq!(read(&db, "new").await?, Some(moved));
    Ok(())
}

// ------------------------------------------------------------------ property

/// What B's stored manifests name before the calls (written raw, as another program
/// would).
#[derive(Debug, Clone)]
enum Planted {
    /// Nothing stored under B.
    Nothing,
    /// A copy of A: both manifests name A's chunks.
    Copy,
    /// A's manifests crossed over (body names A's attachment chunks and back).
    Crossed,
    /// Manifests naming writes that left no chunks.
    Random(String, u32),
    /// Body names A's body chunks, the attachment a write that left none.
    Mixed(String),
}

/// A crate call on B.
#[derive(Debug, Clone)]
enum Call {
    PutLarge(u8),
    PutSmall(u8),
    Delete,
    DeleteReturningOld,
    UpdateSubject,
    /// B as a query lists it (values not loaded), put back.
    PutListedBack,
    /// A as a query lists it, put under B's key.
    PutListedAAsB,
    Sweep,
    /// Another program plants a manifest again between the calls.
    Plant(Planted),
}

fn token() -> impl Strategy<Value = String> {
    "[A-Za-z0-9_-]{22}"
}

fn planted() -> impl Strategy<Value = Planted> {
    prop_oneof![
        Just(Planted::Nothing),
        Just(Planted::Copy),
        Just(Planted::Crossed),
        (token(), 1u32..4).prop_map(|(t, n)| Planted::Random(t, n)),
        token().prop_map(Planted::Mixed),
    ]
}

fn call() -> impl Strategy<Value = Call> {
    prop_oneof![
        3 => any::<u8>().prop_map(Call::PutLarge),
        2 => any::<u8>().prop_map(Call::PutSmall),
        2 => Just(Call::Delete),
        1 => Just(Call::DeleteReturningOld),
        1 => Just(Call::UpdateSubject),
        2 => Just(Call::PutListedBack),
        1 => Just(Call::PutListedAAsB),
        1 => Just(Call::Sweep),
        2 => planted().prop_map(Call::Plant),
    ]
}

fn manifest(token: &str, chunks: u32, len: u64) -> AttributeValue {
    AttributeValue::M(
        [
            ("t", s(token)),
            ("n", n(u64::from(chunks))),
            ("len", n(len)),
            ("crc", n(7)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect(),
    )
}

/// Writes what `planted` says under B's key (`b`), from A's stored item (`a`).
async fn plant(db: &Db<App>, a: &str, b: &str, planted: &Planted) -> TestResult {
    let b_pk = format!("INBOX#{b}");
    let delete_b = || raw_delete(db, &b_pk, "MSG#m");
    match planted {
        Planted::Nothing => delete_b().await?,
        Planted::Copy => {
            copy_raw(db, a, b).await?;
        }
        Planted::Crossed => {
            let mut item = copy_raw(db, a, b).await?;
            let body = item.remove("body").ok_or("body")?;
            let attachment = item.remove("attachment").ok_or("attachment")?;
            item.insert("body".into(), attachment);
            item.insert("attachment".into(), body);
            put_raw(db, item).await?;
        }
        Planted::Random(t, chunks) => {
            let mut item = copy_raw(db, a, b).await?;
            item.insert("body".into(), manifest(t, *chunks, 5000));
            item.insert("attachment".into(), manifest(&format!("{t}x"), 1, 100));
            put_raw(db, item).await?;
        }
        Planted::Mixed(t) => {
            let mut item = copy_raw(db, a, b).await?;
            item.insert("attachment".into(), manifest(t, 2, 1500));
            put_raw(db, item).await?;
        }
    }
    Ok(())
}

/// One case: A written by the crate, B planted, then the calls on B; A stays readable and
/// equal after every call. Calls whose outcome is fixed are checked too (a put of loaded
/// values succeeds and reads back).
async fn case(
    db: &Db<App>,
    id: usize,
    seed: u8,
    start: &Planted,
    calls: &[Call],
) -> Result<(), TestCaseError> {
    let (a_id, b_id) = (format!("a{id}"), format!("b{id}"));
    let a = msg(
        &a_id,
        format!("A{seed} ").repeat(700 + usize::from(seed)),
        bytes(2000 + usize::from(seed), seed),
    );
    db.put(&a).await.map_err(fail)?;
    plant(db, &a_id, &b_id, start).await.map_err(fail)?;
    let check_a = |after: String| {
        let a = &a;
        let a_id = &a_id;
        async move {
            match read(db, a_id).await {
                Ok(Some(back)) if back == *a => Ok(()),
                other => Err(fail(format!("A after {after}: {other:?}"))),
            }
        }
    };
    for (i, call) in calls.iter().enumerate() {
        let result: Result<(), Error> = match call {
            Call::PutLarge(v) => {
                let b = msg(
                    &b_id,
                    format!("B{v} ").repeat(500 + usize::from(*v)),
                    bytes(1500 + usize::from(*v), *v),
                );
                db.put(&b).await.map_err(fail)?;
                let back = read(db, &b_id).await.map_err(fail)?;
                prop_assert_eq!(back.as_ref(), Some(&b), "B after its own put");
                Ok(())
            }
            Call::PutSmall(v) => {
                let b = msg(&b_id, format!("b{v}"), vec![*v]);
                db.put(&b).await.map_err(fail)?;
                Ok(())
            }
            Call::Delete => {
                db.delete(key(&b_id)).await.map_err(fail)?;
                Ok(())
            }
            Call::DeleteReturningOld => db.delete(key(&b_id)).return_old().await.map(|_| ()),
            Call::UpdateSubject => db
                .update(key(&b_id))
                .set(Message::fields().subject, format!("updated {i}"))
                .await
                .map(|_| ()),
            Call::PutListedBack => {
                let listed = items_of(db.query(Message::partition(&b_id)))
                    .await
                    .map_err(fail)?;
                match listed.into_iter().next() {
                    Some(mut b) => {
                        b.subject = format!("listed {i}");
                        db.put(&b).await
                    }
                    None => Ok(()),
                }
            }
            Call::PutListedAAsB => {
                let listed = items_of(db.query(Message::partition(&a_id)))
                    .await
                    .map_err(fail)?;
                let mut moved = listed.into_iter().next().ok_or_else(|| fail("A listed"))?;
                moved.owner = b_id.clone();
                db.put(&moved).await
            }
            Call::Sweep => {
                sweep_aged(db).await.map_err(fail)?;
                Ok(())
            }
            Call::Plant(p) => {
                plant(db, &a_id, &b_id, p).await.map_err(fail)?;
                Ok(())
            }
        };
        match result {
            // A refusal is allowed (a listed value whose chunks B does not name, an
            // update of no item); deleting A's chunks is not.
            Ok(())
            | Err(Error::ConditionFailed { .. })
            | Err(Error::ChunksNotLoaded { .. })
            | Err(Error::NotFound { .. }) => {}
            Err(e) => return Err(fail(format!("call {i} {call:?}: {e:?}"))),
        }
        check_a(format!("call {i} {call:?} (planted {start:?})")).await?;
    }
    // Clean up, so that the next case starts from an empty table (as far as A and B go).
    db.delete(key(&b_id)).await.map_err(fail)?;
    check_a("the final delete of B".into()).await?;
    db.delete(key(&a_id)).await.map_err(fail)?;
    Ok(())
}

/// Whatever B's stored manifests name (A's chunks, crossed, writes that left none), no
/// sequence of crate calls on B (puts of large, small and listed values, deletes,
/// updates, sweeps) makes A unreadable or changes it.
#[test]
fn no_call_on_another_item_makes_an_item_unreadable() -> TestResult {
    let (runtime, db) = runtime_and_table::<App>()?;
    let mut runner = TestRunner::new(Config::with_cases(16));
    let cases = std::sync::atomic::AtomicUsize::new(0);
    runner
        .run(
            &(
                any::<u8>(),
                planted(),
                proptest::collection::vec(call(), 1..6),
            ),
            |(seed, start, calls)| {
                let id = cases.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                runtime.block_on(case(&db, id, seed, &start, &calls))
            },
        )
        .map_err(|e| e.to_string())?;
    // Every case cleaned up after itself: nothing left but chunks nothing names.
    let (named, _) = runtime.block_on(named_and_present(&db))?;
    assert!(named.is_empty(), "{named:?}");
    Ok(())
}
