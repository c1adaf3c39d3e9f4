//! Chunked attributes (`#[dynamo(chunked)]`): values in chunk items, the item kept small.

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::local::faults::{FaultKind, Faults};
use dynamo_model::{local, Chunked, Db, Entity, Error, ValidationReason};

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "INBOX#{owner}", sk = "MSG#{msg_id}")]
pub struct Message {
    pub owner: String,
    pub msg_id: String,
    pub subject: String,
    #[dynamo(chunked)]
    pub body: Chunked<String>,
    /// Small thresholds, so small values already take several chunks.
    #[dynamo(chunked(inline = 16, chunk_size = 1024))]
    pub attachment: Chunked<Vec<u8>>,
}

pub(crate) fn message(id: &str, body: String, attachment: Vec<u8>) -> Message {
    Message {
        owner: "ann".into(),
        msg_id: id.into(),
        subject: format!("subject {id}"),
        body: body.into(),
        attachment: attachment.into(),
    }
}

/// The key of message `id` of `ann` (see [`message`]).
/// A fresh table holding message `m` with `body` and `attachment`.
async fn with_m(body: String, attachment: Vec<u8>) -> Res<local::TempTable<App>> {
    table_with([message("m", body, attachment)]).await
}

/// A client of `db`'s table on which every `PutItem` fails with `kind` (by the seed
/// `seed`).
async fn failing_puts(db: &Db<App>, seed: u64, kind: FaultKind) -> Res<Db<App>> {
    let faults = Faults::new(seed)
        .rate(1.0)
        .kinds([kind])
        .operations(["PutItem"]);
    faulty(db, &faults).await
}

pub(crate) fn message_key(id: &str) -> dynamo_model::Key<Message> {
    Message::key(MessageKey {
        owner: "ann",
        msg_id: id,
    })
}

pub(crate) fn chunk_count(items: &[dynamo_model::Item]) -> usize {
    items
        .iter()
        .filter(|i| matches!(i.get("_type"), Some(AttributeValue::S(t)) if t == "_chunk"))
        .count()
}

pub(crate) fn bytes(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[tokio::test]
async fn values_round_trip_at_every_size_edge() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let inline = dynamo_model::chunk::DEFAULT_INLINE;
    // The body's encoding is one tag byte plus the text, so `inline - 1` bytes of text
    // are the largest value kept in the item.
    let sizes = [
        0,
        1,
        inline - 2,
        inline - 1,
        inline,
        inline + 1,
        400 * 1024,
        10 << 20,
    ];
    for (i, size) in sizes.into_iter().enumerate() {
        let text: String = "x".repeat(size);
        let att = bytes(size.min(5000), i as u8);
        let m = message(&format!("m{i}"), text, att);
        db.put(&m).await?;
        let back = db.get(message_key(&m.msg_id)).await?.ok_or("missing")?;
        assert_eq!(back, m, "size {size}");
    }
    Ok(())
}

/// A client of `db`'s table whose `operation` calls (a batch one) hand back part of their
/// work unprocessed half the time (by the seed `seed`), with the faults to count them.
async fn partial_batches(
    db: &Db<App>,
    seed: u64,
    operation: &'static str,
) -> Res<(Db<App>, Faults)> {
    let faults = Faults::new(seed)
        .rate(0.5)
        .kinds([FaultKind::PartialBatch])
        .operations([operation]);
    Ok((faulty(db, &faults).await?, faults))
}

/// A value of more chunks than one call of each batch operation takes (25 items a
/// `BatchWriteItem`, 100 keys a `BatchGetItem`), whose calls hand back part of their work
/// unprocessed, round trips.
///
/// This was a value of 50 MB: 147 chunks of the default 350 KB, read in two
/// `BatchGetItem` calls whose responses each exceed the 16 MB one may hold, so that
/// DynamoDB hands the rest back unprocessed. The attachment's 1 KB chunks cross the same
/// call limits with 150 KB (151 chunks: seven `BatchWriteItem` calls, two `BatchGetItem`),
/// and the fault connector hands back unprocessed work in place of the response limit. A
/// body of several default-size chunks is also written; 10 MB of them is
/// `values_round_trip_at_every_size_edge`'s.
#[tokio::test]
async fn a_value_of_more_chunks_than_one_batch_call_takes_round_trips() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let (writer, written) = partial_batches(&db, 7, "BatchWriteItem").await?;
    let (reader, read) = partial_batches(&db, 7, "BatchGetItem").await?;
    let inline = dynamo_model::chunk::DEFAULT_INLINE;
    let m = message(
        "big",
        noisy_text(3 * dynamo_model::chunk::DEFAULT_CHUNK_SIZE + inline, 7),
        noise(150 << 10, 8),
    );
    writer.put(&m).await?;
    let stored = raw_items(&db).await?;
    assert!(
        chunk_count(&stored) > 100 + 3,
        "{} chunks",
        chunk_count(&stored)
    );
    assert!(written.stats().partial_batches > 0, "{:?}", written.stats());
    let back = reader.get(message_key("big")).await?.ok_or("missing")?;
    assert!(read.stats().partial_batches > 0, "{:?}", read.stats());
    assert_eq!(back.attachment.get().map(Vec::len), Some(150 << 10));
    assert_eq!(back, m);
    Ok(())
}

#[tokio::test]
async fn the_item_keeps_a_manifest_and_each_chunk_has_its_own_partition() -> TestResult {
    let db = with_m("y".repeat(5000), bytes(3000, 1)).await?;
    let items = raw_items(&db).await?;
    let parent = items
        .iter()
        .find(|i| matches!(i.get("_type"), Some(AttributeValue::S(t)) if t == "Message"))
        .ok_or("no parent")?;
    // The body (5,001 encoded bytes) fits one default chunk; the attachment (3,001)
    // takes 3 chunks of 1,024.
    for (attr, n) in [("body", 1), ("attachment", 3)] {
        let Some(AttributeValue::M(manifest)) = parent.get(attr) else {
            panic!("{attr} is not a manifest: {parent:?}");
        };
        assert_eq!(manifest.get("n"), Some(&AttributeValue::N(n.to_string())));
    }
    assert!(
        dynamo_model::item_size(parent) < 1024,
        "the parent stays small"
    );
    let chunks: Vec<_> = items
        .iter()
        .filter(|i| matches!(i.get("_type"), Some(AttributeValue::S(t)) if t == "_chunk"))
        .collect();
    assert_eq!(chunks.len(), 4);
    let partitions: std::collections::HashSet<_> = chunks
        .iter()
        .filter_map(|c| c.get("PK").and_then(|v| v.as_s().ok()).cloned())
        .collect();
    assert_eq!(partitions.len(), 4, "one partition per chunk");
    Ok(())
}

#[tokio::test]
async fn listing_reads_no_chunks_and_load_chunks_is_one_call() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    for i in 0..20 {
        db.put(&message(
            &format!("m{i:02}"),
            "z".repeat(3000 + i),
            bytes(2000, i as u8),
        ))
        .await?;
    }
    let (watched, faults) = recorded(&db).await?;
    let page = watched.query(Message::partition("ann")).all().await?;
    assert_eq!(page.items.len(), 20);
    assert!(page
        .items
        .iter()
        .all(|m| !m.body.is_loaded() && !m.attachment.is_loaded()));
    assert!(
        page.consumed_capacity <= 2.0,
        "{} RCU",
        page.consumed_capacity
    );
    let ops: Vec<String> = faults.calls().into_iter().map(|c| c.operation).collect();
    assert_eq!(ops, ["Query"], "a listing reads parents only");

    let mut items = page.items;
    // Two copies of one item name the same chunks: each chunk is read once.
    let mut twice = vec![items[0].clone(), items[0].clone()];
    db.load_chunks(&mut twice).await?;
    assert!(twice
        .iter()
        .all(|m| m.body.get().map(String::len) == Some(3000)));
    watched.load_chunks(&mut items).await?;
    let ops: Vec<String> = faults.calls().into_iter().map(|c| c.operation).collect();
    // 20 bodies (1 chunk each) + 20 attachments (2 chunks each) = 60 keys: one call.
    assert_eq!(ops, ["Query", "BatchGetItem"]);
    for (i, m) in items.iter().enumerate() {
        assert_eq!(m.body.get().map(String::len), Some(3000 + i));
        assert_eq!(m.attachment.get(), Some(&bytes(2000, i as u8)));
    }
    Ok(())
}

#[tokio::test]
async fn overwriting_and_deleting_remove_the_old_chunks() -> TestResult {
    let db = with_m("a".repeat(5000), bytes(5000, 1)).await?;
    let key = || message_key("m");
    assert_eq!(chunk_count(&raw_items(&db).await?), 1 + 5);
    db.put(&message("m", "b".repeat(9000), bytes(100, 2)))
        .await?;
    assert_eq!(chunk_count(&raw_items(&db).await?), 1 + 1);
    // Back to inline values: no chunk left.
    db.put(&message("m", "c".into(), vec![3])).await?;
    assert_eq!(chunk_count(&raw_items(&db).await?), 0);
    assert_eq!(
        db.get(key())
            .await?
            .ok_or("missing")?
            .body
            .get()
            .map(String::as_str),
        Some("c")
    );
    db.put(&message("m", "d".repeat(3000), bytes(3000, 4)))
        .await?;
    db.delete(key()).await?;
    assert!(
        raw_items(&db).await?.is_empty(),
        "the delete took its chunks"
    );
    Ok(())
}

#[tokio::test]
async fn concurrent_writers_never_mix_their_chunks() -> TestResult {
    let db = with_m("0".repeat(3000), bytes(3000, 0)).await?;
    let writers: Vec<_> = (1..=8u8)
        .map(|w| {
            let db = db.clone();
            tokio::spawn(async move {
                let m = message("m", w.to_string().repeat(4000 + w as usize), bytes(4000, w));
                (w, db.put(&m).await)
            })
        })
        .collect();
    let mut won = Vec::new();
    for w in writers {
        let (w, result) = w.await?;
        match result {
            Ok(()) => won.push(w),
            Err(Error::ConditionFailed { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    assert!(!won.is_empty());
    let back = db.get(message_key("m")).await?.ok_or("missing")?;
    // Whatever won last, the value is one writer's, whole: body and attachment agree.
    let w: u8 = back
        .body
        .get()
        .and_then(|b| b[..1].parse().ok())
        .ok_or("body")?;
    assert_eq!(back.body.get().map(String::len), Some(4000 + w as usize));
    assert_eq!(back.attachment.get(), Some(&bytes(4000, w)));
    assert!(won.contains(&w));
    // Losers deleted their chunks, winners' replaced chunks were deleted.
    assert_eq!(chunk_count(&raw_items(&db).await?), 1 + 4);
    Ok(())
}

#[tokio::test]
async fn writes_that_cannot_follow_the_protocol_are_refused() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let m = message("m", "e".repeat(3000), bytes(3000, 5));
    let key = || message_key("m");
    refused(
        db.batch_write().put(&m),
        ValidationReason::NotSupportedInBatch,
    )
    .await;
    refused(
        db.batch_write().delete(key()),
        ValidationReason::NotSupportedInBatch,
    )
    .await;
    refused(
        db.transact_write().put(db.put(&m)),
        ValidationReason::NotSupportedInBatch,
    )
    .await;
    refused(
        db.transact_write().delete(db.delete(key())),
        ValidationReason::NotSupportedInBatch,
    )
    .await;
    assert!(raw_items(&db).await?.is_empty());
    // A user batch write can never name a chunk key.
    let forged = dynamo_model::Key::<User>::from_raw(dynamo_model::RawKey {
        pk: "_CHUNK#abc#000000".into(),
        sk: Some("_CHUNK".into()),
    });
    refused(
        db.batch_write().delete(forged),
        ValidationReason::ForeignKeySpace,
    )
    .await;
    Ok(())
}

/// The sweep as it would run once every chunk of the table is older than
/// `MIN_ORPHAN_AGE`: each chunk's write time is moved an hour back (a chunk already that
/// old, from an earlier sweep of a table that keeps its items, is left as it is), then the
/// sweep runs with the shortest `older_than` it accepts.
pub(crate) async fn sweep_aged(
    db: &Db<App>,
) -> Result<dynamo_model::chunk::Orphans, Box<dyn std::error::Error + Send + Sync>> {
    let min_age = u64::try_from(dynamo_model::chunk::MIN_ORPHAN_AGE.as_millis())?;
    let aged_before = u64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_millis(),
    )?
    .saturating_sub(min_age);
    for item in raw_items(db).await? {
        if !matches!(item.get("_type"), Some(AttributeValue::S(t)) if t == "_chunk") {
            continue;
        }
        let written: u64 = item
            .get("_ct")
            .ok_or("_ct")?
            .as_n()
            .map_err(|_| "_ct")?
            .parse()?;
        if written < aged_before {
            continue;
        }
        let mut key = std::collections::HashMap::new();
        for attr in ["PK", "SK"] {
            key.insert(attr.to_owned(), item.get(attr).ok_or(attr)?.clone());
        }
        db.client()
            .update_item()
            .table_name(db.table_name())
            .set_key(Some(key))
            .update_expression("SET #ct = :ct")
            .expression_attribute_names("#ct", "_ct")
            .expression_attribute_values(
                ":ct",
                AttributeValue::N(written.saturating_sub(3_600_000).to_string()),
            )
            .send()
            .await?;
    }
    Ok(db
        .collect_orphans(dynamo_model::chunk::MIN_ORPHAN_AGE)
        .await?)
}

/// Asserts that the chunk items present are exactly those the stored items name.
pub(crate) async fn assert_no_orphan_chunks(db: &Db<App>) -> TestResult {
    let (named, present) = named_and_present(db).await?;
    assert_eq!(named, present);
    Ok(())
}

/// The chunk keys the stored item names, and the chunk items present.
pub(crate) async fn named_and_present(
    db: &Db<App>,
) -> Result<(Vec<String>, Vec<String>), Box<dyn std::error::Error + Send + Sync>> {
    let items = raw_items(db).await?;
    let mut named = Vec::new();
    for item in &items {
        for attr in ["body", "attachment"] {
            if let Some(AttributeValue::M(m)) = item.get(attr) {
                let token = m.get("t").and_then(|t| t.as_s().ok()).ok_or("token")?;
                let n: u32 = m.get("n").and_then(|n| n.as_n().ok()).ok_or("n")?.parse()?;
                named.extend((0..n).map(|seq| format!("_CHUNK#{token}#{seq:06}")));
            }
        }
    }
    let mut present: Vec<String> = items
        .iter()
        .filter(|i| matches!(i.get("_type"), Some(AttributeValue::S(t)) if t == "_chunk"))
        .filter_map(|i| i.get("PK").and_then(|v| v.as_s().ok()).cloned())
        .collect();
    named.sort();
    present.sort();
    Ok((named, present))
}

/// A put interrupted at any step (its chunk writes refused, its item write refused or
/// applied with the answer lost, its deletion of the replaced chunks refused) leaves the
/// old value or the new one, whole; the sweep then removes exactly the chunks no item
/// names.
#[tokio::test]
async fn interrupted_writes_leave_a_whole_value_and_the_sweep_removes_the_orphans() -> TestResult {
    use dynamo_model::local::faults::FaultKind;
    let db = local::fresh_table::<App>().await?;
    let key = || message_key("m");
    let mut outcomes = std::collections::BTreeMap::new();
    // Seeds 0 to 11 meet both outcomes several times (seed 0 fails, seed 1 succeeds).
    for seed in 0..12u64 {
        let old = message(
            "m",
            format!("old {seed} ").repeat(400),
            bytes(3000, seed as u8),
        );
        db.put(&old).await?;
        let new = message(
            "m",
            format!("new {seed} ").repeat(500),
            bytes(4500, 100 + seed as u8),
        );
        let faults = Faults::new(seed)
            .rate(0.5)
            .kinds([
                FaultKind::Reject,
                FaultKind::ServerError,
                FaultKind::ServerErrorAfterApply,
            ])
            .operations(["BatchWriteItem", "PutItem", "DeleteItem"]);
        let faulty_db = faulty(&db, &faults).await?;
        let result = faulty_db.put(&new).await;
        let back = db.get(key()).await?.ok_or("missing")?;
        let which = if back == new {
            "new"
        } else if back == old {
            "old"
        } else {
            panic!("seed {seed}: a mixed value {back:?}");
        };
        if result.is_ok() {
            assert_eq!(which, "new", "seed {seed}: the put succeeded");
        }
        *outcomes.entry((result.is_ok(), which)).or_insert(0) += 1;
        let report = sweep_aged(&db).await?;
        let (named, present) = named_and_present(&db).await?;
        assert_eq!(named, present, "seed {seed}: after the sweep ({report:?})");
        assert_eq!(
            db.get(key()).await?.ok_or("missing")?,
            back,
            "the sweep changed nothing readable"
        );
    }
    // Both outcomes occurred; and a put whose item was stored reports success, even when
    // the answer to its PutItem was lost (the item read back carries the put's token).
    assert!(
        outcomes.contains_key(&(true, "new")) && outcomes.contains_key(&(false, "old")),
        "{outcomes:?}"
    );
    assert!(!outcomes.contains_key(&(false, "new")), "{outcomes:?}");
    Ok(())
}

#[tokio::test]
async fn the_sweep_spares_recent_chunks_and_named_ones() -> TestResult {
    let db = with_m("f".repeat(5000), bytes(5000, 6)).await?;
    // Orphans of a failed write: chunks written, the item write lost (an HTTP 500 that
    // may or may not have been applied, so the chunks must stay).
    let faulty_db = failing_puts(&db, 1, FaultKind::ServerError).await?;
    assert!(faulty_db
        .put(&message("m", "g".repeat(9000), bytes(9000, 7)))
        .await
        .is_err());
    let (named, present) = named_and_present(&db).await?;
    assert!(present.len() > named.len(), "the failed write left orphans");
    // Too recent to judge: kept.
    let report = db
        .collect_orphans(std::time::Duration::from_secs(900))
        .await?;
    assert_eq!((report.examined, report.deleted), (0, 0));
    // A sweep that could catch a put between its steps is refused.
    refused(
        db.collect_orphans(dynamo_model::chunk::MIN_ORPHAN_AGE - std::time::Duration::from_secs(1)),
        ValidationReason::InvalidOption,
    )
    .await;
    let report = sweep_aged(&db).await?;
    assert_eq!(report.deleted, present.len() - named.len());
    assert_eq!(report.kept, named.len());
    assert_no_orphan_chunks(&db).await?;
    Ok(())
}

/// A put that is surely not applied leaves no chunk behind: refused before anything is
/// written (an item over 400 KB), or refused by DynamoDB (a 4xx) after its chunks were
/// written.
#[tokio::test]
async fn a_refused_put_leaves_no_chunks() -> TestResult {
    let db = with_m("f".repeat(5000), bytes(5000, 6)).await?;
    let before = raw_items(&db).await?;
    // The subject alone is over 400 KB: refused before any request.
    let faults = Faults::new(2).record();
    let recording = faulty(&db, &faults).await?;
    let mut huge = message("m", "g".repeat(9000), bytes(9000, 7));
    huge.subject = "s".repeat(410 * 1024);
    refused(recording.put(&huge), ValidationReason::ItemTooLarge).await;
    let calls: Vec<String> = faults.calls().into_iter().map(|c| c.operation).collect();
    assert!(
        calls.iter().all(|c| c != "BatchWriteItem"),
        "no chunk was written: {calls:?}"
    );
    // Refused by DynamoDB after the chunks were written: they are deleted again.
    let rejecting = failing_puts(&db, 3, FaultKind::Reject).await?;
    assert!(rejecting
        .put(&message("m", "h".repeat(9000), bytes(9000, 8)))
        .await
        .is_err());
    // A value needing more chunks than a read accepts (100,001 of 1 KB): refused before
    // anything is written, rather than written unreadable.
    let too_many = message("m", String::new(), vec![7u8; 1024 * 100_000]);
    let err = db.put(&too_many).await.unwrap_err();
    assert_refused(&err, ValidationReason::ItemTooLarge);
    assert!(err.to_string().contains("100001 chunks"), "{err}");
    let mut after = raw_items(&db).await?;
    let mut before = before;
    let pk = |i: &dynamo_model::Item| format!("{:?}", i.get("PK"));
    before.sort_by_key(pk);
    after.sort_by_key(pk);
    assert_eq!(before, after, "the table is as it was");
    Ok(())
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "THREAD#{thread}", sk = "REPLY#{reply}")]
pub struct Reply {
    pub thread: String,
    pub reply: u32,
    #[dynamo(chunked(chunk_size = 4096), compress = "zstd")]
    pub text: Chunked<String>,
    #[dynamo(chunked, compress(codec = "gzip", threshold = 64))]
    pub raw: Chunked<Vec<u8>>,
}

/// `chunked` with `compress`: the value is compressed, then what is still over the
/// inline threshold is split; reads undo both.
#[tokio::test]
async fn compressed_chunked_values_round_trip_in_fewer_chunks() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let text: String = (0..40_000)
        .map(|i| format!("line {} of a long reply\n", i % 97))
        .collect();
    let reply = Reply {
        thread: "t".into(),
        reply: 1,
        text: Chunked::new(text.clone()),
        raw: Chunked::new(bytes(200_000, 3)),
    };
    db.put(&reply).await?;
    let back = db
        .get(Reply::key(ReplyKey {
            thread: "t",
            reply: 1u32,
        }))
        .await?
        .ok_or("missing")?;
    assert_eq!(back, reply);
    let items = raw_items(&db).await?;
    let parent = items
        .iter()
        .find(|i| matches!(i.get("_type"), Some(AttributeValue::S(t)) if t == "Reply"))
        .ok_or("parent")?;
    // Inline (compressed under the threshold) or chunked, the stored form is small.
    let stored = match parent.get("text") {
        Some(AttributeValue::B(b)) => b.as_ref().len(),
        Some(AttributeValue::M(m)) => m
            .get("len")
            .and_then(|v| v.as_n().ok())
            .ok_or("len")?
            .parse()?,
        other => panic!("text: {other:?}"),
    };
    assert!(
        stored * 10 < text.len(),
        "{stored} stored bytes for {} of text",
        text.len()
    );
    // Uncompressed, the text alone would take 1 MB / 4 KB = 250+ chunks.
    assert!(chunk_count(&items) < 40, "{} chunks", chunk_count(&items));
    Ok(())
}

/// Every combination the issue names: `String` and `Vec<u8>`, compressed and not.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "SIZES#{id}", sk = "SIZES")]
pub struct Sizes {
    pub id: String,
    #[dynamo(chunked)]
    pub text: Chunked<String>,
    #[dynamo(chunked)]
    pub data: Chunked<Vec<u8>>,
    #[dynamo(chunked, compress = "zstd")]
    pub packed_text: Chunked<String>,
    #[dynamo(chunked, compress(codec = "gzip"))]
    pub packed_data: Chunked<Vec<u8>>,
}

/// Text of `n` bytes that does not compress much: noise mapped onto letters.
fn noisy_text(n: usize, seed: u64) -> String {
    noise(n, seed)
        .into_iter()
        .map(|b| char::from(b'a' + b % 26))
        .collect()
}

#[tokio::test]
async fn string_and_bytes_compressed_and_not_round_trip_at_every_size() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let inline = dynamo_model::chunk::DEFAULT_INLINE;
    // Encoded sizes straddle the inline threshold (one tag byte on top of the value), then
    // the item limit (400 KB), then several chunks a field: at 3 MB, some nine a field and
    // over 25 (one batch write) for the item.
    let sizes = [0, 1, inline - 2, inline - 1, inline, 400 * 1024, 3 << 20];
    for (i, size) in sizes.into_iter().enumerate() {
        let seed = i as u64;
        let value = Sizes {
            id: format!("s{i}"),
            text: Chunked::new(noisy_text(size, seed)),
            data: Chunked::new(noise(size, seed + 100)),
            packed_text: Chunked::new(noisy_text(size, seed + 200)),
            packed_data: Chunked::new(noise(size, seed + 300)),
        };
        db.put(&value).await?;
        let back = db
            .get(Sizes::key(value.id.as_str()))
            .await?
            .ok_or("missing")?;
        assert_eq!(back, value, "size {size}");
        db.delete(Sizes::key(value.id.as_str())).await?;
    }
    // The compressed bytes are incompressible noise: stored as is (tag 0), in chunks at
    // 3 MB. A value of over 100 chunks is
    // `a_value_of_more_chunks_than_one_batch_call_takes_round_trips`'s.
    assert!(raw_items(&db).await?.is_empty(), "deletes took every chunk");
    Ok(())
}

/// The list-then-edit flow: a listed item (values not loaded) changed and put back keeps
/// its chunks; a stale copy, or the copy under another key, is refused, never left naming
/// chunks that were replaced or that another item owns.
#[tokio::test]
async fn putting_back_a_listed_item_keeps_its_chunks() -> TestResult {
    let db = with_m("h".repeat(5000), bytes(5000, 8)).await?;
    let key = || message_key("m");
    let listed = items_of(db.query(Message::partition("ann"))).await?;
    let mut m = listed.into_iter().next().ok_or("listed")?;
    assert!(!m.body.is_loaded());
    m.subject = "edited".into();
    db.put(&m).await?;
    let back = db.get(key()).await?.ok_or("missing")?;
    assert_eq!(back.subject, "edited");
    assert_eq!(back.body.get().map(String::len), Some(5000));
    assert_eq!(back.attachment.get(), Some(&bytes(5000, 8)));

    // Another writer replaces the body; the stale listed copy can no longer be put.
    db.put(&message("m", "i".repeat(6000), bytes(6000, 9)))
        .await?;
    let err = db.put(&m).await.unwrap_err();
    assert!(matches!(err, Error::ConditionFailed { .. }), "{err:?}");
    // Nor can it be put under another key (its chunks belong to the first item): no item
    // is stored there, so the reason is that its values were not loaded.
    let mut copy = m.clone();
    copy.msg_id = "copy".into();
    let err = db.put(&copy).await.unwrap_err();
    assert!(matches!(err, Error::ChunksNotLoaded { .. }), "{err:?}");
    let back = db.get(key()).await?.ok_or("missing")?;
    assert_eq!(back.body.get().map(String::len), Some(6000));
    assert_no_orphan_chunks(&db).await?;
    Ok(())
}
