//! Reads of a versioned entity: the history in numeric order across `v9`/`v10`/`v99`/`v100`
//! with cursors, and every other read (indexes of every kind, base-table and collection
//! queries, scans, batch and transactional gets, forged keys) sees the latest copy only.

use crate::common::*;
use dynamo_model::local::{BoxError, TempTable};
use dynamo_model::{local, Entity, Error, Item, Key, RawKey, Table, ValidationReason};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// A table with an index of every kind: keys rendered from templates (GSI1, LSI1), the
/// table's keys swapped (Inverted, and a KEYS_ONLY copy), and plain attributes (ByOwner).
#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
    gsi(name = "Inverted", pk = "SK", sk = "PK"),
    gsi(name = "InvertedKeys", pk = "SK", sk = "PK", projection = keys_only),
    gsi(name = "ByOwner", pk = ["owner"], sk = ["title"]),
    lsi(name = "LSI1", sk = "LSI1SK")
)]
pub struct Shelf;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Shelf, pk = "BOOK#{book_id}", sk = "BOOK", history,
         index(GSI1, pk = "OWNER#{owner}", sk = "BOOK#{book_id}"),
         index(Inverted),
         index(InvertedKeys),
         index(ByOwner, pk = [owner], sk = [title]),
         index(LSI1, sk = "TITLE#{title}"))]
pub struct Book {
    pub book_id: String,
    pub owner: String,
    pub title: String,
    #[dynamo(version)]
    pub version: u64,
}

/// Not versioned, in the books' partitions.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Shelf, pk = "BOOK#{book_id}", sk = "NOTE#{n}")]
pub struct BookNote {
    pub book_id: String,
    pub n: u32,
    pub text: String,
}

#[derive(dynamo_model::Collection, Debug, Clone, PartialEq)]
pub enum BookView {
    Book(Book),
    Note(BookNote),
}

fn book(id: &str, owner: &str, title: &str) -> Book {
    Book {
        book_id: id.into(),
        owner: owner.into(),
        title: title.into(),
        version: 0,
    }
}

fn sk(item: &Item) -> &str {
    item.get("SK")
        .and_then(|v| v.as_s().ok())
        .map_or("", String::as_str)
}

#[tokio::test]
async fn history_is_in_numeric_order_across_v9_v10_v99_v100_and_pages_with_cursors() -> TestResult {
    const N: u64 = 105;
    let db = local::fresh_table::<Shelf>().await?;
    let versions = db.history::<Book>();
    let mut b = book("long", "ann", "t1");
    assert_eq!(versions.create(&b).await?, 1);
    b.version = 1;
    for i in 2..=N {
        b.title = format!("t{i}");
        b.version = versions.add(&b).await?;
        assert_eq!(b.version, i);
    }
    let key = || Book::key("long");

    // The stored keys are padded: `v9` < `v10` < `v99` < `v100` as text too.
    let stored: Vec<String> = raw_partition(&db, "BOOK#long")
        .await?
        .iter()
        .map(|i| sk(i).to_owned())
        .collect();
    assert_eq!(stored.len() as u64, N + 1);
    assert_eq!(stored[0], "v00000000000000000000#BOOK");
    assert_eq!(stored[100], "v00000000000000000100#BOOK");

    let oldest_first = all_revisions(&versions, key()).await?;
    assert_eq!(revision_numbers(&oldest_first), (1..=N).collect::<Vec<_>>());
    for r in &oldest_first {
        assert_eq!(r.value.title, format!("t{}", r.revision));
        assert_eq!(r.value.version, r.revision);
        assert_eq!(r.value.book_id, "long");
    }
    let newest_first = versions.revisions(key()).reverse().all().await?.items;
    assert_eq!(
        revision_numbers(&newest_first),
        (1..=N).rev().collect::<Vec<_>>()
    );

    // Pages of 9 (read 4 at a time): boundaries fall between 9|10 and 99|100.
    let mut pages: Vec<Vec<u64>> = Vec::new();
    let mut cursor = None;
    loop {
        let page = versions
            .revisions(key())
            .limit(9)
            .page_size(4)
            .page(cursor.as_ref())
            .await?;
        if !page.items.is_empty() {
            pages.push(revision_numbers(&page.items));
        }
        match page.cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(pages[0], (1..=9).collect::<Vec<_>>());
    assert_eq!(pages[1], (10..=18).collect::<Vec<_>>());
    assert_eq!(pages[11], (100..=105).collect::<Vec<_>>());
    assert_eq!(
        pages.concat(),
        (1..=N).collect::<Vec<_>>(),
        "every revision once, in order"
    );

    // Newest first, pages of 6: 105..100, then 99..94, ..., across 10|9.
    let mut reversed: Vec<u64> = Vec::new();
    let mut cursor = None;
    let mut first = true;
    loop {
        let page = versions
            .revisions(key())
            .reverse()
            .limit(6)
            .page(cursor.as_ref())
            .await?;
        if first {
            assert_eq!(
                revision_numbers(&page.items),
                (100..=105).rev().collect::<Vec<_>>()
            );
            first = false;
        }
        assert!(page.items.len() <= 6);
        reversed.extend(revision_numbers(&page.items));
        match page.cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(reversed, (1..=N).rev().collect::<Vec<_>>());

    // Small DynamoDB pages, read through: every revision.
    let via_all = versions.revisions(key()).page_size(10).all().await?.items;
    assert_eq!(revision_numbers(&via_all), (1..=N).collect::<Vec<_>>());

    // One revision at a time, and nothing outside 1..=N.
    let r100 = versions.revision(key(), 100).await?.ok_or("no r100")?;
    assert_eq!((r100.revision, r100.value.title.as_str()), (100, "t100"));
    assert!(versions.revision(key(), 0).await?.is_none());
    assert!(versions.revision(key(), N + 1).await?.is_none());
    assert!(versions.revision(key(), u64::MAX).await?.is_none());
    Ok(())
}

/// Two books (one with 5 revisions), a note in the first book's partition.
async fn shelf() -> Result<(TempTable<Shelf>, Book, Book, BookNote), BoxError> {
    let db = local::fresh_table::<Shelf>().await?;
    let versions = db.history::<Book>();
    versions.create(&book("b1", "ann", "draft")).await?;
    for i in 2..=5 {
        versions
            .revise(Book::key("b1"), |b| b.title = format!("draft {i}"))
            .await?;
    }
    versions.create(&book("b2", "ann", "other")).await?;
    let note = BookNote {
        book_id: "b1".into(),
        n: 1,
        text: "a note".into(),
    };
    db.put(&note).await?;
    let b1 = versions.latest(Book::key("b1")).await?.ok_or("no b1")?;
    let b2 = versions.latest(Book::key("b2")).await?.ok_or("no b2")?;
    assert_eq!(b1.version, 5);
    Ok((db, b1, b2, note))
}

fn ids(books: &[Book]) -> BTreeSet<(String, u64)> {
    books
        .iter()
        .map(|b| (b.book_id.clone(), b.version))
        .collect()
}

#[tokio::test]
async fn history_stays_out_of_every_index_query_and_of_base_and_collection_queries() -> TestResult {
    let (db, b1, b2, note) = shelf().await?;
    let latest = ids(&[b1.clone(), b2.clone()]);

    // The template GSI: revisions carry no GSI1 key, so DynamoDB does not even index them.
    let by_owner = items_of(db.query(Book::gsi1_partition("ann"))).await?;
    assert_eq!(ids(&by_owner), latest);
    let raw_gsi1 = raw_index_items(&db, "GSI1").await?;
    assert_eq!(raw_gsi1.len(), 2, "only the latest copies are indexed");
    // Newest-first with a limit of 1 is still a latest copy.
    let top = items_of(db.query(Book::gsi1_partition("ann")).reverse().limit(1)).await?;
    assert_eq!(top, std::slice::from_ref(&b2));

    // The LSI (its key rendered from a template) likewise.
    let lsi = items_of(db.query(Book::lsi1_partition("b1"))).await?;
    assert_eq!(lsi, std::slice::from_ref(&b1));

    // An index over plain attributes: revisions carry them, the query skips them.
    let plain = items_of(db.query(Book::by_owner_partition("ann"))).await?;
    assert_eq!(ids(&plain), latest);
    let limited = items_of(db.query(Book::by_owner_partition("ann")).limit(2)).await?;
    assert_eq!(ids(&limited), latest, "a limit counts latest copies only");
    // (DynamoDB does index the revisions there: the attributes are the entity's own.)
    let raw_plain = raw_index_items(&db, "ByOwner").await?;
    assert_eq!(raw_plain.len(), 5 + 1 + 1 + 1);

    // The base table: the entity's partition query, with or without a limit.
    let base = items_of(db.query(Book::partition("b1"))).await?;
    assert_eq!(base, std::slice::from_ref(&b1));
    let reversed = items_of(db.query(Book::partition("b1")).reverse().limit(1)).await?;
    assert_eq!(reversed, std::slice::from_ref(&b1));

    // A collection over the partition: the note (`NOTE#1` sorts before `v0…`) and the
    // latest copy, no revision.
    let collection = || db.query(Book::partition("b1")).collection::<BookView>();
    let view = items_of(collection()).await?;
    assert_eq!(
        view,
        [BookView::Note(note.clone()), BookView::Book(b1.clone())]
    );
    let two = items_of(collection().limit(2).page_size(1)).await?;
    assert_eq!(
        two,
        [BookView::Note(note.clone()), BookView::Book(b1.clone())]
    );
    let newest = items_of(collection().reverse()).await?;
    assert_eq!(newest, [BookView::Book(b1.clone()), BookView::Note(note)]);
    // Newest first with a limit of 1: the latest copy, not revision 5 behind it.
    let top = items_of(collection().reverse().limit(1)).await?;
    assert_eq!(top, [BookView::Book(b1)]);
    Ok(())
}

/// The inverted index holds revisions too (their keys are the table's keys), but its
/// partitions are sort-key values: the latest copies' partition holds latest copies only.
#[tokio::test]
async fn the_inverted_index_reads_the_latest_copies() -> TestResult {
    let (db, b1, b2, _) = shelf().await?;
    let latest = ids(&[b1.clone(), b2.clone()]);
    let inverted = items_of(db.query(Book::inverted_partition())).await?;
    assert_eq!(ids(&inverted), latest);
    let first = items_of(db.query(Book::inverted_partition()).limit(1)).await?;
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].version, b1.version.max(first[0].version));

    Ok(())
}

#[tokio::test]
async fn a_keys_only_inverted_index_gives_the_keys_of_latest_copies_only() -> TestResult {
    let (db, b1, b2, _) = shelf().await?;
    let keys = items_of(db.query(Book::inverted_keys_partition()).keys_only()).await?;
    let got: BTreeSet<RawKey> = keys
        .into_iter()
        .map(Key::into_raw)
        .collect::<Result<_, _>>()?;
    let want: BTreeSet<RawKey> = [b1.primary_key(), b2.primary_key()]
        .into_iter()
        .map(Key::into_raw)
        .collect::<Result<_, _>>()?;
    assert_eq!(got, want);
    Ok(())
}

#[tokio::test]
async fn scans_batch_gets_and_transact_gets_see_the_latest_copy_only() -> TestResult {
    let (db, b1, b2, _) = shelf().await?;
    let latest = ids(&[b1.clone(), b2.clone()]);

    let scanned = db.scan::<Book>().consistent().all().await?.items;
    assert_eq!(ids(&scanned), latest);
    let one = db.scan::<Book>().limit(1).page_size(1).all().await?.items;
    assert_eq!(one.len(), 1);
    assert!(latest.contains(&(one[0].book_id.clone(), one[0].version)));
    let segmented = db.scan::<Book>().segments(3).all().await?.items;
    assert_eq!(ids(&segmented), latest);
    let everything = db.scan::<BookView>().consistent().all().await?.items;
    assert_eq!(
        everything.len(),
        3,
        "two latest copies and the note: {everything:?}"
    );

    let got = db
        .batch_get::<Book>()
        .keys([Book::key("b1"), Book::key("b2"), Book::key("nope")])
        .await?;
    assert_eq!(ids(&got.items), latest);
    assert_eq!(got.not_found.len(), 1);

    let got = db
        .transact_get::<Book>()
        .key(Book::key("b1"))
        .key(Book::key("b2"))
        .await?;
    assert_eq!(got, [Some(b1), Some(b2)]);
    Ok(())
}

/// A forged key naming revision 3 (`Key::from_raw`) is not a key of the entity: a read
/// by it must not return revision 3 as if it were the item. What is right: the read is
/// refused before sending (`WrongKeySpace`, as `history` refuses a key that is not a
/// latest copy's), or it reports nothing found; a batch get must still account for the
/// key (found, not found, unprocessed or failed), never drop it.
#[tokio::test]
async fn a_forged_revision_key_never_reads_a_revision_as_the_entity() -> TestResult {
    let (db, _, _, _) = shelf().await?;
    let forged = || {
        Key::<Book>::from_raw(RawKey {
            pk: "BOOK#b1".into(),
            sk: Some("v00000000000000000003#BOOK".into()),
        })
    };
    // Refused before sending: a key of a versioned entity names its latest copy.
    refused(db.get(forged()), ValidationReason::WrongKeySpace).await;
    // The history refuses it as a key.
    refused(
        db.history::<Book>().revisions(forged()).all(),
        ValidationReason::WrongKeySpace,
    )
    .await;

    // So does a transactional get, before sending.
    refused(
        db.transact_get::<Book>().key(forged()).key(Book::key("b1")),
        ValidationReason::WrongKeySpace,
    )
    .await;
    Ok(())
}

#[tokio::test]
async fn a_batch_get_of_a_forged_revision_key_accounts_for_the_key() -> TestResult {
    let (db, b1, _, _) = shelf().await?;
    let forged = Key::<Book>::from_raw(RawKey {
        pk: "BOOK#b1".into(),
        sk: Some("v00000000000000000003#BOOK".into()),
    });
    match db.batch_get::<Book>().keys([forged, Book::key("b1")]).await {
        Ok(got) => {
            assert_eq!(got.items, [b1]);
            let accounted = got.not_found.len() + got.unprocessed.len() + got.failed.len();
            assert_eq!(accounted, 1, "the forged key vanished: {got:?}");
        }
        Err(Error::Validation { reason, .. }) => {
            assert_eq!(reason, ValidationReason::WrongKeySpace)
        }
        Err(e) => panic!("{e:?}"),
    }
    Ok(())
}
