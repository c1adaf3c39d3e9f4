//! Codec benchmark: one CPU-only round trip struct → item → struct for an 11-attribute
//! order (strings, a number, a list of three small maps), three ways side by side in one
//! run: a hand-built `HashMap<String, AttributeValue>` (the baseline), the code
//! `#[derive(Entity)]` generates, and `serde_dynamo`. All three produce the same item,
//! key and entity-type attributes included.
//!
//! Run: `cargo bench -p dynamo-model --bench codec` (prints a table; no network).

use aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::{Entity, Item, Table};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct Shop;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, pk = "USER#{user_id}", sk = "ORDER#{order_id}")]
struct Order {
    user_id: String,
    order_id: String,
    status: String,
    currency: String,
    customer: String,
    email: String,
    street: String,
    city: String,
    country: String,
    total_cents: u64,
    lines: Vec<HashMap<String, String>>,
}

fn sample() -> Order {
    let line = |sku: &str, qty: &str| {
        HashMap::from([
            ("sku".to_string(), sku.to_string()),
            ("qty".to_string(), qty.to_string()),
        ])
    };
    Order {
        user_id: "u-42".into(),
        order_id: "o-2024-000123".into(),
        status: "PENDING".into(),
        currency: "EUR".into(),
        customer: "Ada Lovelace".into(),
        email: "ada@example.com".into(),
        street: "12 Analytical Engine Way".into(),
        city: "London".into(),
        country: "GB".into(),
        total_cents: 129_900,
        lines: vec![line("A-1", "1"), line("B-22", "3"), line("C-333", "2")],
    }
}

fn s(v: &str) -> AttributeValue {
    AttributeValue::S(v.to_owned())
}

fn take_s(item: &mut Item, k: &str) -> String {
    match item.remove(k) {
        Some(AttributeValue::S(s)) => s,
        _ => String::new(),
    }
}

/// The baseline: what a careful programmer writes by hand.
fn hand_to_item(o: &Order) -> Item {
    let mut item = HashMap::with_capacity(14);
    item.insert(
        "PK".to_owned(),
        AttributeValue::S(format!("USER#{}", o.user_id)),
    );
    item.insert(
        "SK".to_owned(),
        AttributeValue::S(format!("ORDER#{}", o.order_id)),
    );
    item.insert("_type".to_owned(), s("Order"));
    item.insert("user_id".to_owned(), s(&o.user_id));
    item.insert("order_id".to_owned(), s(&o.order_id));
    item.insert("status".to_owned(), s(&o.status));
    item.insert("currency".to_owned(), s(&o.currency));
    item.insert("customer".to_owned(), s(&o.customer));
    item.insert("email".to_owned(), s(&o.email));
    item.insert("street".to_owned(), s(&o.street));
    item.insert("city".to_owned(), s(&o.city));
    item.insert("country".to_owned(), s(&o.country));
    item.insert(
        "total_cents".to_owned(),
        AttributeValue::N(o.total_cents.to_string()),
    );
    let lines = o
        .lines
        .iter()
        .map(|l| AttributeValue::M(l.iter().map(|(k, v)| (k.clone(), s(v))).collect()))
        .collect();
    item.insert("lines".to_owned(), AttributeValue::L(lines));
    item
}

fn hand_from_item(mut item: Item) -> Order {
    let total_cents = match item.remove("total_cents") {
        Some(AttributeValue::N(n)) => n.parse().unwrap_or(0),
        _ => 0,
    };
    let lines = match item.remove("lines") {
        Some(AttributeValue::L(l)) => l
            .into_iter()
            .map(|v| match v {
                AttributeValue::M(m) => m
                    .into_iter()
                    .map(|(k, v)| {
                        (
                            k,
                            if let AttributeValue::S(s) = v {
                                s
                            } else {
                                String::new()
                            },
                        )
                    })
                    .collect(),
                _ => HashMap::new(),
            })
            .collect(),
        _ => Vec::new(),
    };
    Order {
        user_id: take_s(&mut item, "user_id"),
        order_id: take_s(&mut item, "order_id"),
        status: take_s(&mut item, "status"),
        currency: take_s(&mut item, "currency"),
        customer: take_s(&mut item, "customer"),
        email: take_s(&mut item, "email"),
        street: take_s(&mut item, "street"),
        city: take_s(&mut item, "city"),
        country: take_s(&mut item, "country"),
        total_cents,
        lines,
    }
}

fn serde_to_item(o: &Order) -> Item {
    let mut item: Item = serde_dynamo::to_item(o).unwrap_or_default();
    item.insert(
        "PK".to_owned(),
        AttributeValue::S(format!("USER#{}", o.user_id)),
    );
    item.insert(
        "SK".to_owned(),
        AttributeValue::S(format!("ORDER#{}", o.order_id)),
    );
    item.insert("_type".to_owned(), s("Order"));
    item
}

fn serde_from_item(item: Item) -> Option<Order> {
    serde_dynamo::from_item(item).ok()
}

/// Median nanoseconds per round trip over `rounds` rounds of `iters` iterations.
fn measure(iters: u32, rounds: usize, mut round_trip: impl FnMut() -> bool) -> f64 {
    let mut samples: Vec<f64> = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iters {
                assert!(black_box(round_trip()));
            }
            start.elapsed().as_nanos() as f64 / f64::from(iters)
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn main() {
    let order = sample();
    // The three ways build the same item.
    let ours = order.to_item().expect("encodable");
    assert_eq!(ours, hand_to_item(&order));
    assert_eq!(ours, serde_to_item(&order));
    assert_eq!(Order::from_item(ours).expect("decodable"), order);

    let warmup = Duration::from_millis(300);
    let start = Instant::now();
    while start.elapsed() < warmup {
        black_box(hand_from_item(hand_to_item(black_box(&order))));
    }
    let (iters, rounds) = (50_000, 9);
    let hand = measure(iters, rounds, || {
        hand_from_item(hand_to_item(black_box(&order))) == order
    });
    let generated = measure(iters, rounds, || {
        order
            .to_item()
            .ok()
            .and_then(|i| Order::from_item(i).ok())
            .as_ref()
            == Some(&order)
    });
    let serde = measure(iters, rounds, || {
        serde_from_item(serde_to_item(black_box(&order))).as_ref() == Some(&order)
    });

    // Encoding alone (decoding is the rest of the round trip).
    let hand_enc = measure(iters, rounds, || {
        !hand_to_item(black_box(&order)).is_empty()
    });
    let gen_enc = measure(iters, rounds, || {
        order.to_item().is_ok_and(|i| !i.is_empty())
    });
    let serde_enc = measure(iters, rounds, || {
        !serde_to_item(black_box(&order)).is_empty()
    });

    println!("struct -> item -> struct, 11 attributes + keys (median of {rounds} x {iters})");
    println!(
        "{:<32} {:>13} {:>8} {:>13} {:>8}",
        "codec", "round trip", "vs hand", "encode only", "vs hand"
    );
    for (name, ns, enc) in [
        ("hand-built HashMap (baseline)", hand, hand_enc),
        ("dynamo-model #[derive(Entity)]", generated, gen_enc),
        ("serde_dynamo", serde, serde_enc),
    ] {
        println!(
            "{name:<32} {ns:>10.0} ns {:>7.2}x {enc:>10.0} ns {:>7.2}x",
            ns / hand,
            enc / hand_enc
        );
    }
}
