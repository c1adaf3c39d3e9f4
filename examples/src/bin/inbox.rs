//! Inbox (seed 002): a recipient's 50 newest messages, each with a 256 KB body.
//!
//! DynamoDB charges a read by the 4 KB of item it reads (half for an eventually
//! consistent read), whatever the request keeps of it. Two designs side by side:
//! - naive: the body is a plain `String` attribute, so listing 50 messages reads
//!   50 × 256 KB = 12.5 MB (about 1,600 RCU and a dozen 1 MB pages);
//! - chunked: `#[dynamo(chunked)] body: Chunked<String>` keeps the body in chunk items of
//!   its own, so the message item holds only a small manifest: the same listing reads
//!   about 10 KB (at most 2 RCU), and a body is loaded when it is opened.
//!
//! Run: `cargo run -p examples --bin inbox`

use dynamo_model::aws_sdk_dynamodb;
use dynamo_model::{Chunked, Db, Entity, Table};
use futures_util::{stream, StreamExt, TryStreamExt};
use std::sync::{Arc, Mutex};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct Mail;

/// The crate's design: the body in chunk items, the message item small.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Mail, pk = "INBOX#{recipient}", sk = "MSG#{sent_at}#{msg_id}")]
struct Message {
    recipient: String,
    sent_at: u64,
    msg_id: String,
    from: String,
    subject: String,
    #[dynamo(chunked)]
    body: Chunked<String>,
}

/// The naive design: the same message with the body in the item (256 KB is under
/// DynamoDB's 400 KB item limit, so it is storable, only expensive to list).
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Mail, pk = "NAIVE_INBOX#{recipient}", sk = "MSG#{sent_at}#{msg_id}")]
struct NaiveMessage {
    recipient: String,
    sent_at: u64,
    msg_id: String,
    from: String,
    subject: String,
    body: String,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const BODY_BYTES: usize = 256 * 1024;
const NEWEST: usize = 50;
/// The budget the crate's listing must meet (issue 11's acceptance).
const LISTING_BUDGET_RCU: f64 = 2.0;

/// A body of exactly `BODY_BYTES` bytes, different for each message.
fn body(recipient: &str, i: usize) -> String {
    let line = format!("{recipient} message {i}: lorem ipsum dolor sit amet. ");
    line.repeat(BODY_BYTES / line.len() + 1)[..BODY_BYTES].to_owned()
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let db = examples::table::<Mail>("inbox").await?;

    // Alice: 10 old short messages (their bodies stay in the item), then 50 of 256 KB.
    // Bob and Carol: 5 messages of 256 KB each, in partitions of their own.
    let mut messages = Vec::new();
    for i in 0..10 {
        messages.push(("alice", 1_000 + i, format!("short note {i}")));
    }
    for i in 0..NEWEST {
        messages.push(("alice", 2_000 + i, body("alice", i)));
    }
    for (n, who) in ["bob", "carol"].into_iter().enumerate() {
        for i in 0..5 {
            messages.push((who, 3_000 + 10 * n + i, body(who, i)));
        }
    }
    let messages: Vec<Message> = messages
        .into_iter()
        .map(|(recipient, t, text)| Message {
            recipient: recipient.into(),
            sent_at: t as u64,
            msg_id: format!("m{t}"),
            from: "newsletter@example.com".into(),
            subject: format!("issue {t}"),
            body: Chunked::new(text),
        })
        .collect();
    let naive: Vec<NaiveMessage> = messages
        .iter()
        .map(|m| NaiveMessage {
            recipient: m.recipient.clone(),
            sent_at: m.sent_at,
            msg_id: m.msg_id.clone(),
            from: m.from.clone(),
            subject: m.subject.clone(),
            body: m.body.get().cloned().unwrap_or_default(),
        })
        .collect();
    stream::iter(&messages)
        .map(|m| db.put(m).send())
        .buffer_unordered(8)
        .try_collect::<Vec<()>>()
        .await?;
    stream::iter(&naive)
        .map(|m| db.put(m).send())
        .buffer_unordered(8)
        .try_collect::<Vec<()>>()
        .await?;
    println!(
        "stored {} messages twice (naive and chunked), {} of them for alice",
        messages.len(),
        messages.iter().filter(|m| m.recipient == "alice").count()
    );

    // The 50 newest of alice, both ways.
    let naive_page = db
        .query(NaiveMessage::partition("alice"))
        .reverse()
        .limit(NEWEST)
        .all()
        .await?;
    let page = db
        .query(Message::partition("alice"))
        .reverse()
        .limit(NEWEST)
        .all()
        .await?;

    let expected: Vec<&str> = messages
        .iter()
        .rev()
        .filter(|m| m.recipient == "alice")
        .take(NEWEST)
        .map(|m| m.msg_id.as_str())
        .collect();
    let ids = |v: Vec<&str>| v.join(",");
    if ids(page.items.iter().map(|m| m.msg_id.as_str()).collect()) != ids(expected.clone())
        || ids(naive_page.items.iter().map(|m| m.msg_id.as_str()).collect()) != ids(expected)
    {
        return Err("the listings are not alice's 50 newest messages".into());
    }
    if page.items.iter().any(|m| m.body.is_loaded()) {
        return Err("the chunked listing returned loaded bodies".into());
    }
    let listed_bytes: u64 = page
        .items
        .iter()
        .filter_map(|m| m.body.manifest())
        .map(|m| m.len)
        .sum();

    println!("alice's {NEWEST} newest messages:");
    println!(
        "  naive (body in the item):        {:>7.1} RCU, {} bodies read with the listing",
        naive_page.consumed_capacity,
        naive_page.items.len()
    );
    println!(
        "  chunked (#[dynamo(chunked)]):    {:>7.1} RCU, 0 bodies read ({:.1} MB left in chunk items)",
        page.consumed_capacity,
        listed_bytes as f64 / 1e6
    );
    if page.consumed_capacity > LISTING_BUDGET_RCU {
        return Err(format!(
            "the chunked listing cost {:.1} RCU, over the budget of {LISTING_BUDGET_RCU}",
            page.consumed_capacity
        )
        .into());
    }
    if page.consumed_capacity >= naive_page.consumed_capacity {
        return Err("the chunked listing must read less than the naive one".into());
    }

    // Opening one message loads its body on demand: the item, then its chunks. The
    // meter below asks DynamoDB for the capacity of each request and records it.
    let meter = Meter::default();
    let metered = meter.db(&db);
    let newest = page.items.first().ok_or("no message listed")?;
    let opened = metered
        .get(Message::key(MessageKey {
            recipient: &newest.recipient,
            sent_at: newest.sent_at,
            msg_id: &newest.msg_id,
        }))
        .await?
        .ok_or("the newest message is gone")?;
    let text = opened
        .body
        .get()
        .ok_or("db.get returned the body unloaded")?;
    if text.len() != BODY_BYTES
        || Some(text)
            != messages
                .iter()
                .find(|m| m.msg_id == opened.msg_id)
                .and_then(|m| m.body.get())
    {
        return Err("the opened body is not the one stored".into());
    }
    println!(
        "opening {} (db.get): {} bytes of body, {}",
        opened.msg_id,
        text.len(),
        meter.report()
    );

    // Or load the bodies of listed messages later, all in one call.
    let meter = Meter::default();
    let metered = meter.db(&db);
    let mut three: Vec<Message> = page.items.iter().take(3).cloned().collect();
    metered.load_chunks(&mut three).await?;
    if three
        .iter()
        .any(|m| m.body.get().map(String::len) != Some(BODY_BYTES))
    {
        return Err("db.load_chunks left a body unloaded".into());
    }
    println!(
        "loading 3 listed bodies (db.load_chunks): {}",
        meter.report()
    );

    println!("inbox: all checks passed");
    Ok(())
}

/// Records the operation and consumed capacity of every request of a client, asking
/// DynamoDB to return it (`ReturnConsumedCapacity=TOTAL`) on reads that did not.
#[derive(Clone, Default, Debug)]
struct Meter {
    calls: Arc<Mutex<Vec<(&'static str, f64)>>>,
}

impl Meter {
    /// `db` through a client that reports to this meter.
    fn db(&self, db: &Db<Mail>) -> Db<Mail> {
        let config = db
            .client()
            .config()
            .to_builder()
            .interceptor(self.clone())
            .build();
        Db::new(aws_sdk_dynamodb::Client::from_conf(config), db.table_name())
    }

    fn report(&self) -> String {
        let calls = self.calls.lock().map(|c| c.clone()).unwrap_or_default();
        let total: f64 = calls.iter().map(|(_, c)| c).sum();
        let each: Vec<String> = calls.iter().map(|(op, c)| format!("{op} {c:.1}")).collect();
        format!(
            "{} request{} ({}), {total:.1} RCU",
            calls.len(),
            if calls.len() == 1 { "" } else { "s" },
            each.join(", ")
        )
    }
}

impl aws_sdk_dynamodb::config::Intercept for Meter {
    fn name(&self) -> &'static str {
        "inbox::Meter"
    }

    fn modify_before_serialization(
        &self,
        context: &mut aws_sdk_dynamodb::config::interceptors::BeforeSerializationInterceptorContextMut<'_>,
        _: &aws_sdk_dynamodb::config::RuntimeComponents,
        _: &mut aws_sdk_dynamodb::config::ConfigBag,
    ) -> Result<(), aws_sdk_dynamodb::error::BoxError> {
        use aws_sdk_dynamodb::operation::{
            batch_get_item::BatchGetItemInput, get_item::GetItemInput,
        };
        use aws_sdk_dynamodb::types::ReturnConsumedCapacity::Total;
        let input = context.input_mut();
        if let Some(get) = input.downcast_mut::<GetItemInput>() {
            get.return_consumed_capacity = Some(Total);
        } else if let Some(batch) = input.downcast_mut::<BatchGetItemInput>() {
            batch.return_consumed_capacity = Some(Total);
        }
        Ok(())
    }

    fn read_after_deserialization(
        &self,
        context: &aws_sdk_dynamodb::config::interceptors::AfterDeserializationInterceptorContextRef<
            '_,
        >,
        _: &aws_sdk_dynamodb::config::RuntimeComponents,
        _: &mut aws_sdk_dynamodb::config::ConfigBag,
    ) -> Result<(), aws_sdk_dynamodb::error::BoxError> {
        use aws_sdk_dynamodb::operation::{
            batch_get_item::BatchGetItemOutput, get_item::GetItemOutput,
        };
        let Ok(output) = context.output_or_error() else {
            return Ok(());
        };
        let call = if let Some(get) = output.downcast_ref::<GetItemOutput>() {
            (
                "GetItem",
                get.consumed_capacity()
                    .and_then(|c| c.capacity_units())
                    .unwrap_or(0.0),
            )
        } else if let Some(batch) = output.downcast_ref::<BatchGetItemOutput>() {
            let units = batch
                .consumed_capacity()
                .iter()
                .filter_map(|c| c.capacity_units())
                .sum();
            ("BatchGetItem", units)
        } else {
            ("other", 0.0)
        };
        if let Ok(mut calls) = self.calls.lock() {
            calls.push(call);
        }
        Ok(())
    }
}
