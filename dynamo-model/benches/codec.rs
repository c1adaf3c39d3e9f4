//! Codec benchmark: CPU-only struct → item → struct on three shapes, three codecs side by
//! side in one run:
//!
//! - **hand-built**: the `HashMap<String, AttributeValue>` a careful programmer writes
//!   with `aws-sdk-dynamodb` alone (the baseline). It writes the same item as the derive
//!   (key attributes, index key attributes, entity type) and decodes with the checks a
//!   careful user writes: the entity type, every required attribute present with its
//!   DynamoDB type, numbers parsed, errors returned (no panics, no defaults).
//! - **derive**: what `#[derive(Entity)]` / `#[derive(Attribute)]` generate. On top of the
//!   baseline it escapes `#` and `%` in string key parts, checks the rendered key lengths,
//!   verifies on decode that the stored key attributes (primary and index) are what the
//!   decoded fields render, and reports errors with the entity, the item's key and the
//!   attribute path.
//! - **serde_dynamo**: the serde derives on the same types, with the key and entity-type
//!   attributes added by hand, and the entity type checked on decode.
//!
//! The shapes: (a) 5 scalar fields; (b) 20 fields with a nested struct, a list of three
//! nested structs and one GSI; (c) one 300 KB string. For each, the round trip, encoding
//! alone and decoding alone. Every round times each codec in turn (the order rotating), so
//! drift on a shared machine reaches all three; the table prints medians over the rounds,
//! and each ratio is the median of the per-round ratios.
//!
//! Run: `cargo bench -p dynamo-model --bench codec` (prints the tables; no network).
//! `cargo bench -p dynamo-model --bench codec -- --quick` for a short, noisier run.

use aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::{Attribute, Entity, Item, Table};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::hint::black_box;
use std::time::Instant;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct Shop;

// ------------------------------------------------------------------ errors of the baseline

/// The error a careful hand-written decoder returns: which attribute, and what is wrong.
#[derive(Debug)]
#[allow(dead_code)] // read through Debug only
enum HandError {
    WrongEntityType,
    Missing(&'static str),
    WrongType(&'static str),
    BadNumber(&'static str),
}

type Hand<T> = Result<T, HandError>;

fn s(v: &str) -> AttributeValue {
    AttributeValue::S(v.to_owned())
}

fn n(v: impl ToString) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

fn check_type(item: &Item, entity_type: &str) -> Hand<()> {
    match item.get("_type") {
        Some(AttributeValue::S(t)) if t == entity_type => Ok(()),
        _ => Err(HandError::WrongEntityType),
    }
}

fn take(map: &mut Item, k: &'static str) -> Hand<AttributeValue> {
    map.remove(k).ok_or(HandError::Missing(k))
}

fn take_s(map: &mut Item, k: &'static str) -> Hand<String> {
    match take(map, k)? {
        AttributeValue::S(s) => Ok(s),
        _ => Err(HandError::WrongType(k)),
    }
}

fn take_opt_s(map: &mut Item, k: &'static str) -> Hand<Option<String>> {
    match map.remove(k) {
        None | Some(AttributeValue::Null(_)) => Ok(None),
        Some(AttributeValue::S(s)) => Ok(Some(s)),
        Some(_) => Err(HandError::WrongType(k)),
    }
}

fn take_n<T: std::str::FromStr>(map: &mut Item, k: &'static str) -> Hand<T> {
    match take(map, k)? {
        AttributeValue::N(n) => n.parse().map_err(|_| HandError::BadNumber(k)),
        _ => Err(HandError::WrongType(k)),
    }
}

fn take_bool(map: &mut Item, k: &'static str) -> Hand<bool> {
    match take(map, k)? {
        AttributeValue::Bool(b) => Ok(b),
        _ => Err(HandError::WrongType(k)),
    }
}

fn take_m(map: &mut Item, k: &'static str) -> Hand<Item> {
    match take(map, k)? {
        AttributeValue::M(m) => Ok(m),
        _ => Err(HandError::WrongType(k)),
    }
}

fn serde_with_keys<T: Serialize>(
    value: &T,
    entity_type: &str,
    keys: impl IntoIterator<Item = (&'static str, String)>,
) -> Option<Item> {
    let mut item: Item = serde_dynamo::to_item(value).ok()?;
    for (k, v) in keys {
        item.insert(k.to_owned(), AttributeValue::S(v));
    }
    item.insert("_type".to_owned(), s(entity_type));
    Some(item)
}

fn serde_checked<T: serde::de::DeserializeOwned>(item: Item, entity_type: &str) -> Option<T> {
    check_type(&item, entity_type).ok()?;
    serde_dynamo::from_item(item).ok()
}

// ------------------------------------------------------------------ (a) 5 scalar fields

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, pk = "USER#{user_id}", sk = "ORDER#{order_id}")]
struct Small {
    user_id: String,
    order_id: String,
    status: String,
    total_cents: u64,
    paid: bool,
}

fn small() -> Small {
    Small {
        user_id: "u-42".into(),
        order_id: "o-2024-000123".into(),
        status: "PENDING".into(),
        total_cents: 129_900,
        paid: true,
    }
}

fn small_hand_to_item(o: &Small) -> Item {
    let mut item = HashMap::with_capacity(8);
    item.insert(
        "PK".to_owned(),
        AttributeValue::S(format!("USER#{}", o.user_id)),
    );
    item.insert(
        "SK".to_owned(),
        AttributeValue::S(format!("ORDER#{}", o.order_id)),
    );
    item.insert("_type".to_owned(), s("Small"));
    item.insert("user_id".to_owned(), s(&o.user_id));
    item.insert("order_id".to_owned(), s(&o.order_id));
    item.insert("status".to_owned(), s(&o.status));
    item.insert("total_cents".to_owned(), n(o.total_cents));
    item.insert("paid".to_owned(), AttributeValue::Bool(o.paid));
    item
}

fn small_hand_from_item(mut item: Item) -> Hand<Small> {
    check_type(&item, "Small")?;
    Ok(Small {
        user_id: take_s(&mut item, "user_id")?,
        order_id: take_s(&mut item, "order_id")?,
        status: take_s(&mut item, "status")?,
        total_cents: take_n(&mut item, "total_cents")?,
        paid: take_bool(&mut item, "paid")?,
    })
}

fn small_serde_to_item(o: &Small) -> Option<Item> {
    serde_with_keys(
        o,
        "Small",
        [
            ("PK", format!("USER#{}", o.user_id)),
            ("SK", format!("ORDER#{}", o.order_id)),
        ],
    )
}

// ------------------------------------------------------------------ (b) 20 fields, nested

#[derive(Attribute, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Address {
    street: String,
    city: String,
    postcode: String,
    country: String,
}

#[derive(Attribute, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Line {
    sku: String,
    quantity: u32,
    price_cents: u64,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, pk = "USER#{user_id}", sk = "ORDER#{order_id}",
         index(GSI1, pk = "STATUS#{status}", sk = "ORDER#{order_id}"))]
struct Order {
    user_id: String,
    order_id: String,
    status: String,
    currency: String,
    customer: String,
    email: String,
    phone: String,
    total_cents: u64,
    tax_cents: u64,
    shipping_cents: u64,
    discount_cents: u64,
    item_count: u32,
    gift: bool,
    express: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    notes: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    coupon: Option<String>,
    created_at: i64,
    updated_at: i64,
    ship_to: Address,
    lines: Vec<Line>,
}

fn order() -> Order {
    let line = |sku: &str, quantity, price_cents| Line {
        sku: sku.into(),
        quantity,
        price_cents,
    };
    Order {
        user_id: "u-42".into(),
        order_id: "o-2024-000123".into(),
        status: "PENDING".into(),
        currency: "EUR".into(),
        customer: "Ada Lovelace".into(),
        email: "ada@example.com".into(),
        phone: "+44 20 7946 0000".into(),
        total_cents: 129_900,
        tax_cents: 21_650,
        shipping_cents: 490,
        discount_cents: 0,
        item_count: 6,
        gift: false,
        express: true,
        notes: Some("leave at the door".into()),
        coupon: None,
        created_at: 1_718_000_000,
        updated_at: 1_718_000_360,
        ship_to: Address {
            street: "12 Analytical Engine Way".into(),
            city: "London".into(),
            postcode: "NW1 6XE".into(),
            country: "GB".into(),
        },
        lines: vec![
            line("A-1", 1, 19_900),
            line("B-22", 3, 30_000),
            line("C-333", 2, 10_000),
        ],
    }
}

fn order_hand_to_item(o: &Order) -> Item {
    let mut item = HashMap::with_capacity(25);
    item.insert(
        "PK".to_owned(),
        AttributeValue::S(format!("USER#{}", o.user_id)),
    );
    item.insert(
        "SK".to_owned(),
        AttributeValue::S(format!("ORDER#{}", o.order_id)),
    );
    item.insert(
        "GSI1PK".to_owned(),
        AttributeValue::S(format!("STATUS#{}", o.status)),
    );
    item.insert(
        "GSI1SK".to_owned(),
        AttributeValue::S(format!("ORDER#{}", o.order_id)),
    );
    item.insert("_type".to_owned(), s("Order"));
    item.insert("user_id".to_owned(), s(&o.user_id));
    item.insert("order_id".to_owned(), s(&o.order_id));
    item.insert("status".to_owned(), s(&o.status));
    item.insert("currency".to_owned(), s(&o.currency));
    item.insert("customer".to_owned(), s(&o.customer));
    item.insert("email".to_owned(), s(&o.email));
    item.insert("phone".to_owned(), s(&o.phone));
    item.insert("total_cents".to_owned(), n(o.total_cents));
    item.insert("tax_cents".to_owned(), n(o.tax_cents));
    item.insert("shipping_cents".to_owned(), n(o.shipping_cents));
    item.insert("discount_cents".to_owned(), n(o.discount_cents));
    item.insert("item_count".to_owned(), n(o.item_count));
    item.insert("gift".to_owned(), AttributeValue::Bool(o.gift));
    item.insert("express".to_owned(), AttributeValue::Bool(o.express));
    if let Some(notes) = &o.notes {
        item.insert("notes".to_owned(), s(notes));
    }
    if let Some(coupon) = &o.coupon {
        item.insert("coupon".to_owned(), s(coupon));
    }
    item.insert("created_at".to_owned(), n(o.created_at));
    item.insert("updated_at".to_owned(), n(o.updated_at));
    let a = &o.ship_to;
    let mut address = HashMap::with_capacity(4);
    address.insert("street".to_owned(), s(&a.street));
    address.insert("city".to_owned(), s(&a.city));
    address.insert("postcode".to_owned(), s(&a.postcode));
    address.insert("country".to_owned(), s(&a.country));
    item.insert("ship_to".to_owned(), AttributeValue::M(address));
    let lines = o
        .lines
        .iter()
        .map(|l| {
            let mut m = HashMap::with_capacity(3);
            m.insert("sku".to_owned(), s(&l.sku));
            m.insert("quantity".to_owned(), n(l.quantity));
            m.insert("price_cents".to_owned(), n(l.price_cents));
            AttributeValue::M(m)
        })
        .collect();
    item.insert("lines".to_owned(), AttributeValue::L(lines));
    item
}

fn order_hand_from_item(mut item: Item) -> Hand<Order> {
    check_type(&item, "Order")?;
    let mut a = take_m(&mut item, "ship_to")?;
    let ship_to = Address {
        street: take_s(&mut a, "street")?,
        city: take_s(&mut a, "city")?,
        postcode: take_s(&mut a, "postcode")?,
        country: take_s(&mut a, "country")?,
    };
    let lines = match take(&mut item, "lines")? {
        AttributeValue::L(list) => list
            .into_iter()
            .map(|v| match v {
                AttributeValue::M(mut m) => Ok(Line {
                    sku: take_s(&mut m, "sku")?,
                    quantity: take_n(&mut m, "quantity")?,
                    price_cents: take_n(&mut m, "price_cents")?,
                }),
                _ => Err(HandError::WrongType("lines")),
            })
            .collect::<Hand<Vec<Line>>>()?,
        _ => return Err(HandError::WrongType("lines")),
    };
    Ok(Order {
        user_id: take_s(&mut item, "user_id")?,
        order_id: take_s(&mut item, "order_id")?,
        status: take_s(&mut item, "status")?,
        currency: take_s(&mut item, "currency")?,
        customer: take_s(&mut item, "customer")?,
        email: take_s(&mut item, "email")?,
        phone: take_s(&mut item, "phone")?,
        total_cents: take_n(&mut item, "total_cents")?,
        tax_cents: take_n(&mut item, "tax_cents")?,
        shipping_cents: take_n(&mut item, "shipping_cents")?,
        discount_cents: take_n(&mut item, "discount_cents")?,
        item_count: take_n(&mut item, "item_count")?,
        gift: take_bool(&mut item, "gift")?,
        express: take_bool(&mut item, "express")?,
        notes: take_opt_s(&mut item, "notes")?,
        coupon: take_opt_s(&mut item, "coupon")?,
        created_at: take_n(&mut item, "created_at")?,
        updated_at: take_n(&mut item, "updated_at")?,
        ship_to,
        lines,
    })
}

fn order_serde_to_item(o: &Order) -> Option<Item> {
    serde_with_keys(
        o,
        "Order",
        [
            ("PK", format!("USER#{}", o.user_id)),
            ("SK", format!("ORDER#{}", o.order_id)),
            ("GSI1PK", format!("STATUS#{}", o.status)),
            ("GSI1SK", format!("ORDER#{}", o.order_id)),
        ],
    )
}

// ------------------------------------------------------------------ (c) one 300 KB string

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, pk = "DOC#{doc_id}", sk = "BODY")]
struct Document {
    doc_id: String,
    body: String,
}

fn document() -> Document {
    let paragraph = "The Analytical Engine weaves algebraical patterns just as the Jacquard loom weaves flowers and leaves. ";
    Document {
        doc_id: "d-7".into(),
        body: paragraph.repeat(300 * 1024 / paragraph.len() + 1)[..300 * 1024].to_owned(),
    }
}

fn document_hand_to_item(d: &Document) -> Item {
    let mut item = HashMap::with_capacity(5);
    item.insert(
        "PK".to_owned(),
        AttributeValue::S(format!("DOC#{}", d.doc_id)),
    );
    item.insert("SK".to_owned(), s("BODY"));
    item.insert("_type".to_owned(), s("Document"));
    item.insert("doc_id".to_owned(), s(&d.doc_id));
    item.insert("body".to_owned(), s(&d.body));
    item
}

fn document_hand_from_item(mut item: Item) -> Hand<Document> {
    check_type(&item, "Document")?;
    Ok(Document {
        doc_id: take_s(&mut item, "doc_id")?,
        body: take_s(&mut item, "body")?,
    })
}

fn document_serde_to_item(d: &Document) -> Option<Item> {
    serde_with_keys(
        d,
        "Document",
        [("PK", format!("DOC#{}", d.doc_id)), ("SK", "BODY".into())],
    )
}

// ------------------------------------------------------------------ measuring

/// One codec of one shape: encoding and decoding, errors as `None`.
struct Codec<T> {
    name: &'static str,
    encode: fn(&T) -> Option<Item>,
    decode: fn(Item) -> Option<T>,
}

/// Nanoseconds per operation, one sample per round and codec.
#[derive(Default)]
struct Samples {
    round_trip: Vec<f64>,
    encode: Vec<f64>,
    decode: Vec<f64>,
}

fn per_op(start: Instant, iters: usize) -> f64 {
    start.elapsed().as_nanos() as f64 / iters as f64
}

fn time_round_trip<T>(c: &Codec<T>, value: &T, iters: usize) -> f64 {
    let start = Instant::now();
    for _ in 0..iters {
        let decoded = (c.encode)(black_box(value)).and_then(c.decode);
        assert!(black_box(decoded).is_some());
    }
    per_op(start, iters)
}

fn time_encode<T>(c: &Codec<T>, value: &T, iters: usize) -> f64 {
    let start = Instant::now();
    for _ in 0..iters {
        assert!(black_box((c.encode)(black_box(value))).is_some());
    }
    per_op(start, iters)
}

/// Decoding alone: the items are cloned before the clock starts, a few at a time so they
/// are still in the cache when decoded (as an item just read from a response is).
fn time_decode<T>(c: &Codec<T>, item: &Item, iters: usize) -> f64 {
    // 16 small items fit in the cache; one 300 KB item at a time.
    const BATCH_BYTES: usize = 64 * 1024;
    let size: usize = item.iter().map(|(k, v)| k.len() + attribute_bytes(v)).sum();
    let batch = (BATCH_BYTES / size.max(1)).clamp(1, 16);
    let mut elapsed = std::time::Duration::ZERO;
    let mut done = 0;
    while done < iters {
        let batch: Vec<Item> = (0..batch.min(iters - done)).map(|_| item.clone()).collect();
        done += batch.len();
        let start = Instant::now();
        for item in batch {
            assert!(black_box((c.decode)(black_box(item))).is_some());
        }
        elapsed += start.elapsed();
    }
    elapsed.as_nanos() as f64 / iters as f64
}

/// Roughly the bytes of an attribute's data (to size the decode batches).
fn attribute_bytes(v: &AttributeValue) -> usize {
    match v {
        AttributeValue::S(s) | AttributeValue::N(s) => s.len(),
        AttributeValue::L(l) => l.iter().map(attribute_bytes).sum(),
        AttributeValue::M(m) => m.iter().map(|(k, v)| k.len() + attribute_bytes(v)).sum(),
        _ => 1,
    }
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The median over rounds of `a[i] / b[i]` (pairs measured in the same round).
fn paired_ratio(a: &[f64], b: &[f64]) -> f64 {
    let ratios: Vec<f64> = a.iter().zip(b).map(|(a, b)| a / b).collect();
    median(&ratios)
}

struct Report {
    shape: &'static str,
    names: [&'static str; 3],
    samples: [Samples; 3],
}

fn run_shape<T: PartialEq + std::fmt::Debug>(
    shape: &'static str,
    value: &T,
    codecs: [Codec<T>; 3],
    iters: usize,
    rounds: usize,
) -> Report {
    // The three codecs write the same item and read the value back.
    let item = (codecs[0].encode)(value).expect("the baseline encodes");
    for c in &codecs {
        let ours = (c.encode)(value).expect("encodes");
        assert_eq!(ours, item, "{shape}: {} writes another item", c.name);
        assert_eq!(
            (c.decode)(ours).as_ref(),
            Some(value),
            "{shape}: {} decodes another value",
            c.name
        );
    }
    // Warm-up: every path once for a while.
    for c in &codecs {
        time_round_trip(c, value, iters);
        time_decode(c, &item, iters);
    }
    let mut samples: [Samples; 3] = Default::default();
    for round in 0..rounds {
        for k in 0..3 {
            // Rotate who goes first, so no codec always runs on a cold or warm cache.
            let i = (round + k) % 3;
            let c = &codecs[i];
            samples[i].round_trip.push(time_round_trip(c, value, iters));
            samples[i].encode.push(time_encode(c, value, iters));
            samples[i].decode.push(time_decode(c, &item, iters));
        }
    }
    Report {
        shape,
        names: codecs.map(|c| c.name),
        samples,
    }
}

fn print(report: &Report, rounds: usize, iters: usize) {
    println!();
    println!(
        "{} (medians of {rounds} interleaved rounds x {iters}; ratio = median of per-round ratios to hand-built)",
        report.shape
    );
    println!(
        "{:<24} {:>12} {:>7} {:>12} {:>7} {:>12} {:>7}",
        "codec", "round trip", "ratio", "encode", "ratio", "decode", "ratio"
    );
    let hand = &report.samples[0];
    for (name, s) in report.names.iter().zip(&report.samples) {
        println!(
            "{name:<24} {:>9.0} ns {:>6.2}x {:>9.0} ns {:>6.2}x {:>9.0} ns {:>6.2}x",
            median(&s.round_trip),
            paired_ratio(&s.round_trip, &hand.round_trip),
            median(&s.encode),
            paired_ratio(&s.encode, &hand.encode),
            median(&s.decode),
            paired_ratio(&s.decode, &hand.decode),
        );
    }
    let (derive, serde) = (&report.samples[1], &report.samples[2]);
    println!(
        "serde_dynamo / derive: round trip {:.2}x, encode {:.2}x, decode {:.2}x",
        paired_ratio(&serde.round_trip, &derive.round_trip),
        paired_ratio(&serde.encode, &derive.encode),
        paired_ratio(&serde.decode, &derive.decode),
    );
}

/// `--profile SHAPE [CODEC] [ITERATIONS]` (shape `a`, `b` or `c`; codec `derive`, `hand`
/// or `serde`; 1,000,000 round trips by default): only that round trip, no table, to run
/// under `perf record` or `valgrind --tool=callgrind` (instructions per round trip =
/// total / iterations).
fn profile(args: &[String]) {
    fn spin<T>(value: &T, c: &Codec<T>, iters: usize) {
        for _ in 0..iters {
            assert!(black_box((c.encode)(black_box(value)).and_then(c.decode)).is_some());
        }
    }
    fn pick<T>(codecs: [Codec<T>; 3], name: &str) -> Codec<T> {
        let [hand, derive, serde] = codecs;
        match name {
            "hand" => hand,
            "serde" => serde,
            _ => derive,
        }
    }
    let shape = args.first().map_or("a", String::as_str);
    let codec = args.get(1).map_or("derive", String::as_str);
    let iters = args
        .get(2)
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    match shape {
        "a" => spin(&small(), &pick(small_codecs(), codec), iters),
        "b" => spin(&order(), &pick(order_codecs(), codec), iters),
        _ => spin(&document(), &pick(document_codecs(), codec), iters),
    }
}

fn small_codecs() -> [Codec<Small>; 3] {
    [
        Codec {
            name: "hand-built HashMap",
            encode: |v| Some(small_hand_to_item(v)),
            decode: |i| small_hand_from_item(i).ok(),
        },
        Codec {
            name: "#[derive(Entity)]",
            encode: |v| v.to_item().ok(),
            decode: |i| Small::from_item(i).ok(),
        },
        Codec {
            name: "serde_dynamo",
            encode: small_serde_to_item,
            decode: |i| serde_checked(i, "Small"),
        },
    ]
}

fn order_codecs() -> [Codec<Order>; 3] {
    [
        Codec {
            name: "hand-built HashMap",
            encode: |v| Some(order_hand_to_item(v)),
            decode: |i| order_hand_from_item(i).ok(),
        },
        Codec {
            name: "#[derive(Entity)]",
            encode: |v| v.to_item().ok(),
            decode: |i| Order::from_item(i).ok(),
        },
        Codec {
            name: "serde_dynamo",
            encode: order_serde_to_item,
            decode: |i| serde_checked(i, "Order"),
        },
    ]
}

fn document_codecs() -> [Codec<Document>; 3] {
    [
        Codec {
            name: "hand-built HashMap",
            encode: |v| Some(document_hand_to_item(v)),
            decode: |i| document_hand_from_item(i).ok(),
        },
        Codec {
            name: "#[derive(Entity)]",
            encode: |v| v.to_item().ok(),
            decode: |i| Document::from_item(i).ok(),
        },
        Codec {
            name: "serde_dynamo",
            encode: document_serde_to_item,
            decode: |i| serde_checked(i, "Document"),
        },
    ]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--profile") {
        profile(&args[i + 1..]);
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    let rounds = if quick { 5 } else { 21 };
    let scale = if quick { 1 } else { 4 };

    let shapes = [
        (5_000, "(a) 5 scalar fields"),
        (
            1_000,
            "(b) 20 fields, a nested struct, a list of 3 nested structs, one GSI",
        ),
        (25, "(c) one 300 KB string"),
    ];
    let a = run_shape(
        shapes[0].1,
        &small(),
        small_codecs(),
        shapes[0].0 * scale,
        rounds,
    );
    print(&a, rounds, shapes[0].0 * scale);
    let b = run_shape(
        shapes[1].1,
        &order(),
        order_codecs(),
        shapes[1].0 * scale,
        rounds,
    );
    print(&b, rounds, shapes[1].0 * scale);
    let c = run_shape(
        shapes[2].1,
        &document(),
        document_codecs(),
        shapes[2].0 * scale,
        rounds,
    );
    print(&c, rounds, shapes[2].0 * scale);
}
