//! Forum (seed 003, "long replies"): threads and their replies in one partition per
//! thread. A reply's text is `#[dynamo(chunked, compress = "zstd")]`: compressed, kept in
//! the reply item while small, split into chunk items (each in a partition of its own)
//! when still large. Listing a thread's replies reads reply items only, never chunk
//! data; opening one long reply loads its chunks in one `BatchGetItem`.
//!
//! Run: `cargo run -p examples --bin forum`

use dynamo_model::local::faults::Faults;
use dynamo_model::{Chunked, Db, Entity, Table};
use std::time::Instant;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct Forum;

/// A thread: `THREAD#{thread_id}` / `THREAD`.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Forum, pk = "THREAD#{thread_id}", sk = "THREAD")]
struct Thread {
    thread_id: String,
    subject: String,
    replies: u32,
}

/// A reply: `THREAD#{thread_id}` / `REPLY#{posted_at}` (zero-padded, so replies sort
/// by time). Its text is compressed and, when still over 1 KiB, chunked.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Forum, pk = "THREAD#{thread_id}", sk = "REPLY#{posted_at}")]
struct Reply {
    thread_id: String,
    posted_at: u64,
    author: String,
    #[dynamo(chunked, compress = "zstd")]
    text: Chunked<String>,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Fails the example (a non-zero exit) with `message` unless `ok`.
fn check(ok: bool, message: impl FnOnce() -> String) -> Result<(), BoxError> {
    if ok {
        Ok(())
    } else {
        Err(message().into())
    }
}

/// A reply of about `words` words: prose repeats, as replies quoting each other do.
fn text(reply: u64, words: usize) -> String {
    const WORDS: [&str; 12] = [
        "partition",
        "key",
        "design",
        "matters",
        "because",
        "hot",
        "items",
        "throttle",
        "reads",
        "and",
        "writes",
        "quietly",
    ];
    let mut out = format!("Reply {reply}: ");
    let mut x = reply.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for i in 0..words {
        // A small xorshift: varied, but not random noise.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.push_str(WORDS[(x % WORDS.len() as u64) as usize]);
        out.push(if i % 14 == 13 { '\n' } else { ' ' });
    }
    out
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let db = examples::table::<Forum>("forum").await?;
    println!("table: {}", db.table_name());

    // One thread with 30 replies: most short, every fifth one long (100,000 words).
    let thread = "dynamodb-design";
    let mut long_reply = None;
    let mut stored_bytes = 0usize;
    let mut text_bytes = 0usize;
    for i in 0..30u64 {
        let words = if i % 5 == 4 { 100_000 } else { 40 };
        let reply = Reply {
            thread_id: thread.into(),
            posted_at: 1_700_000_000 + i,
            author: format!("user-{}", i % 7),
            text: Chunked::new(text(i, words)),
        };
        text_bytes += reply.text.get().map_or(0, String::len);
        db.put(&reply).await?;
        if words > 1000 {
            long_reply = Some(reply.posted_at);
        }
    }
    db.put(&Thread {
        thread_id: thread.into(),
        subject: "Designing partition keys".into(),
        replies: 30,
    })
    .await?;

    // Listing the thread: replies without their long texts (a short text is inline).
    let faults = Faults::new(0).record();
    let endpoint = tokio::task::spawn_blocking(dynamo_model::local::shared_endpoint).await??;
    let watched: Db<Forum> = Db::new(
        dynamo_model::local::faults::client_with_faults(
            &endpoint,
            &faults,
            dynamo_model::aws_sdk_dynamodb::config::retry::RetryConfig::standard(),
        ),
        db.table_name(),
    );
    let started = Instant::now();
    let page = watched.query(Reply::partition(thread)).all().await?;
    let listing_ms = started.elapsed().as_secs_f64() * 1000.0;
    let calls: Vec<String> = faults.calls().into_iter().map(|c| c.operation).collect();
    let unloaded = page.items.iter().filter(|r| !r.text.is_loaded()).count();
    for r in &page.items {
        stored_bytes += match r.text.manifest() {
            Some(m) => usize::try_from(m.len).unwrap_or(usize::MAX),
            None => r.text.get().map_or(0, String::len),
        };
    }
    println!(
        "listing           {} replies in {listing_ms:.1} ms, {:.1} RCU, requests {calls:?}; {unloaded} long texts not loaded",
        page.items.len(),
        page.consumed_capacity
    );
    check(page.items.len() == 30, || {
        format!("{} replies listed", page.items.len())
    })?;
    check(calls == ["Query"], || format!("the listing sent {calls:?}"))?;
    check(unloaded == 6, || {
        format!("{unloaded} long texts unloaded, expected 6")
    })?;

    // Opening one long reply: the reply item, then its chunks in one call.
    let posted_at = long_reply.ok_or("no long reply")?;
    let before = faults.calls().len();
    let started = Instant::now();
    let reply = watched
        .get(Reply::key(ReplyKey {
            thread_id: thread,
            posted_at,
        }))
        .await?
        .ok_or("the long reply is missing")?;
    let open_ms = started.elapsed().as_secs_f64() * 1000.0;
    let calls: Vec<String> = faults.calls()[before..]
        .iter()
        .map(|c| c.operation.clone())
        .collect();
    let opened = reply.text.get().ok_or("the long reply was not loaded")?;
    println!(
        "open long reply   {} bytes of text in {open_ms:.1} ms, requests {calls:?}",
        opened.len()
    );
    check(*opened == text(posted_at - 1_700_000_000, 100_000), || {
        "the long reply read back differs".to_owned()
    })?;
    check(calls == ["GetItem", "BatchGetItem"], || {
        format!("opening sent {calls:?}")
    })?;

    // Loading every long text of the page at once: one more call.
    let mut items = page.items;
    let before = faults.calls().len();
    watched.load_chunks(&mut items).await?;
    let calls = faults.calls().len() - before;
    println!("load page texts   {calls} request(s) for the 6 long texts");
    check(items.iter().all(|r| r.text.is_loaded()), || {
        "a text is still not loaded".to_owned()
    })?;

    println!(
        "compression       {text_bytes} bytes of text stored in {stored_bytes} ({:.1}x smaller)",
        text_bytes as f64 / stored_bytes.max(1) as f64
    );
    check(stored_bytes * 3 < text_bytes, || {
        "the texts did not compress".to_owned()
    })?;
    println!("forum: all checks passed");
    Ok(())
}
