//! Attacks on `dynamo_model::insight` from outside: attribution of units on every path
//! (single writes, failed conditions, batches, transactions, index and scatter queries,
//! streams, history, chunks, cached gets), the entity type named, key privacy, several
//! tables and `Db`s, metering alongside, concurrency, the cooldown and bounded memory.

use crate::chunk::message;
use crate::common::spans::Scope;
use crate::common::*;
use crate::history::article_revised_once;
use crate::index::{Match, MatchByRegionPartition};
use crate::insight::observed_app;
use dynamo_model::cache::Cache;
use dynamo_model::capacity::{Meter, Units};
use dynamo_model::insight::{key_hash, HotPartition, Insight, PartitionKey, TemplateLoad};
use dynamo_model::{local, Db, Entity};
use futures_util::{stream, StreamExt, TryStreamExt};
use std::future::IntoFuture;

/// An order of about 2.5 KB: 3 write units.
fn order(user: &str, i: u128) -> Order {
    Order {
        user_id: user.into(),
        order_id: uuid::Uuid::from_u128(i + 1),
        created_at: time::OffsetDateTime::UNIX_EPOCH + time::Duration::seconds(i as i64),
        total_cents: 100 + i as u64,
        status: "open".into(),
        note: Some("n".repeat(2_400)),
    }
}

/// A user of about 2.5 KB (no email: in no index).
fn big_user(id: &str) -> User {
    let mut user = User::sample(id);
    user.display_name = "d".repeat(2_400);
    user
}

/// The units of the table (`index: None`) per entity type, summed over templates.
fn on_table(load: &[TemplateLoad], entity: &str) -> (f64, f64) {
    load.iter()
        .filter(|l| l.index.is_none() && l.entity_type.as_deref() == Some(entity))
        .fold((0.0, 0.0), |(r, w), l| {
            (r + l.read_units, w + l.write_units)
        })
}

/// The busiest second of the partition `key` (shown keys) on `index`, of `units`.
fn peak<'a>(
    hot: &'a [HotPartition],
    index: Option<&str>,
    key: &str,
    units: Units,
) -> Option<&'a HotPartition> {
    hot.iter().find(|h| {
        h.partition.index.as_deref() == index
            && h.partition.key == PartitionKey::Text(key.into())
            && h.units == units
    })
}

fn rate(insight: &Insight, index: Option<&str>, key: &str, units: Units) -> f64 {
    peak(&insight.hot_partitions(), index, key, units).map_or(0.0, |h| h.rate)
}

/// A user and an order share `USER#{user_id}`: the orders' units are the orders', in
/// `by_template` ("the units of each entity type and template"), whoever came first.
#[tokio::test]
async fn orders_written_on_a_partition_a_user_opened_count_as_orders() -> TestResult {
    let insight = Insight::new().show_keys(true);
    let (_table, db) = observed_app(&insight).await?;
    db.put(&big_user("mix")).await?;
    for i in 0..10 {
        db.put(&order("mix", i)).await?;
    }
    let load = insight.by_template();
    assert_eq!(on_table(&load, "User").1, 3.0, "{load:#?}");
    assert_eq!(on_table(&load, "Order").1, 60.0, "{load:#?}"); // LSI1 included
    Ok(())
}

/// Regression: the other way round, each type is where it belongs when the types come
/// in separate partitions.
#[tokio::test]
async fn users_and_orders_in_their_own_partitions_count_apart() -> TestResult {
    let insight = Insight::new();
    let (_table, db) = observed_app(&insight).await?;
    db.put(&big_user("only-user")).await?;
    for i in 0..4 {
        db.put(&order("only-orders", i)).await?;
    }
    let load = insight.by_template();
    assert_eq!(on_table(&load, "User"), (0.0, 3.0), "{load:#?}");
    // Each order: 3 units for the item, 3 for LSI1 (all attributes), on the same partition.
    assert_eq!(on_table(&load, "Order"), (0.0, 24.0), "{load:#?}");
    let order_table = load
        .iter()
        .find(|l| l.index.is_none() && l.entity_type.as_deref() == Some("Order"))
        .ok_or("order load")?;
    assert_eq!(order_table.template, Some("USER#{user_id}"));
    Ok(())
}

/// A write refused by its condition still consumes write units (DynamoDB charges it; the
/// crate's own `Charge` docs say so): contended conditional writes make partitions hot.
#[tokio::test]
async fn failed_conditional_writes_still_count() -> TestResult {
    let insight = Insight::new().show_keys(true);
    let (_table, db) = observed_app(&insight).await?;
    let f = Order::fields();
    for i in 0..20 {
        let err = db
            .put(&order("contended", i))
            .condition(f.status.eq("never"))
            .await
            .expect_err("the condition fails");
        assert!(
            matches!(err, dynamo_model::Error::ConditionFailed { .. }),
            "{err:?}"
        );
    }
    let units = rate(&insight, None, "USER#contended", Units::Write);
    assert!(units >= 20.0, "20 refused writes, {units} units seen");
    Ok(())
}

/// Regression: throttling-free failures before sending (refusals) count nothing, and the
/// insight survives them.
#[tokio::test]
async fn refused_calls_count_nothing() -> TestResult {
    let insight = Insight::new();
    let (_table, db) = observed_app(&insight).await?;
    assert!(db.put(&User::oversized("big")).await.is_err());
    assert!(insight.by_template().is_empty());
    assert!(insight.hot_partitions().is_empty());
    Ok(())
}

/// A keys-only index (GSI2) returns no entity-type attribute: the insight still knows
/// the query is of `Order` on `STATUS#{status}`.
#[tokio::test]
async fn a_keys_only_index_query_names_its_entity_and_template() -> TestResult {
    let insight = Insight::new().show_keys(true);
    let (table, db) = observed_app(&insight).await?;
    for i in 0..5 {
        table.put(&order(&format!("k{i}"), i)).await?;
    }
    let keys = items_of(db.query(Order::gsi2_partition("open")).keys_only()).await?;
    assert_eq!(keys.len(), 5);
    let hot = insight.hot_partitions();
    let read = peak(&hot, Some("GSI2"), "STATUS#open", Units::Read).ok_or("GSI2 read")?;
    assert_eq!(
        read.partition.entity_type.as_deref(),
        Some("Order"),
        "{read:?}"
    );
    assert_eq!(read.partition.template, Some("STATUS#{status}"));
    Ok(())
}

/// Keys stay hashed in warnings, their `Display` and `Debug`, every report and the
/// tracing events, on the table and on an index; shown with `show_keys`.
#[tokio::test]
async fn keys_never_appear_unless_shown() -> TestResult {
    let scope = Scope::begin();
    // 0.1 % of the limits: every write of a unit warns.
    let insight = Insight::new().warn_at(0.001);
    let (table, db) = observed_app(&insight).await?;
    let mut user = User::sample("secret-id");
    user.email = Some("secret@example.com".into());
    db.put(&user).await?;
    db.get(User::key("secret-id")).await?;
    items_of(db.query(User::gsi1_partition("secret@example.com"))).await?;
    db.update(User::key("secret-id"))
        .add(User::fields().login_count, 1)
        .send()
        .await?;
    let warnings = insight.warnings();
    assert!(warnings.len() >= 2, "{warnings:?}");
    assert!(warnings
        .iter()
        .any(|w| w.hot.partition.index.as_deref() == Some("GSI1")));
    let mut texts: Vec<String> = Vec::new();
    for w in &warnings {
        texts.push(w.to_string());
        texts.push(format!("{w:?}"));
        texts.push(w.hot.partition.to_string());
    }
    for h in insight.hot_partitions().iter().chain(&insight.current()) {
        texts.push(format!("{h:?}"));
        texts.push(h.partition.to_string());
    }
    texts.push(format!("{:?}", insight.by_template()));
    texts.push(format!("{insight:?}"));
    for event in scope.capture.events() {
        texts.extend(event.values().cloned());
    }
    for text in &texts {
        assert!(!text.contains("secret"), "a key shown: {text}");
    }
    let hashed = PartitionKey::Hashed(key_hash("EMAIL#secret@example.com"));
    assert!(warnings.iter().any(|w| w.hot.partition.key == hashed));

    let shown = Insight::new().warn_at(0.001).show_keys(true);
    table.observed(&shown).put(&user).await?;
    assert!(shown
        .warnings()
        .iter()
        .any(|w| w.to_string().contains("USER#secret-id")));
    Ok(())
}

/// Calls through a `Db` that is not observed, or observed by another insight, are not
/// counted; several tables share one insight without mixing their partitions.
#[tokio::test]
async fn only_observed_calls_count_and_tables_stay_apart() -> TestResult {
    let first = local::fresh_table::<App>().await?;
    let second = local::fresh_table::<App>().await?;
    let insight = Insight::new().show_keys(true);
    let other = Insight::new();
    let (a, b) = (first.observed(&insight), second.observed(&insight));
    let elsewhere = first.observed(&other);
    for i in 0..3 {
        first.put(&order("same", i)).await?; // not observed
        elsewhere.put(&order("same", 10 + i)).await?; // another insight
    }
    assert!(
        insight.by_template().is_empty(),
        "{:?}",
        insight.by_template()
    );
    a.put(&order("same", 20)).await?;
    b.put(&order("same", 21)).await?;
    b.put(&order("same", 22)).await?;
    let hot = insight.hot_partitions();
    let on = |t: &str| {
        hot.iter()
            .find(|h| {
                h.partition.index.is_none()
                    && &*h.partition.table == t
                    && h.partition.key == PartitionKey::Text("USER#same".into())
            })
            .map(|h| h.rate)
    };
    // An order is 3 units, and 3 more for LSI1 on the same partition.
    assert_eq!(on(first.table_name()), Some(6.0), "{hot:#?}");
    assert_eq!(on(second.table_name()), Some(12.0), "{hot:#?}");
    let load = insight.by_template();
    let tables: std::collections::BTreeSet<&str> = load.iter().map(|l| &*l.table).collect();
    assert_eq!(tables.len(), 2, "{load:#?}");
    assert_eq!(
        on_table(&other.by_template(), "Order").1,
        18.0, // three orders, LSI1 included
        "{:?}",
        other.by_template()
    );
    Ok(())
}

/// A `Db` metered and observed, in either order: the meter asks `INDEXES`, the insight
/// splits the reported units exactly between the table and each index partition.
#[tokio::test]
async fn metered_and_observed_together_in_either_order() -> TestResult {
    let table = local::fresh_table::<App>().await?;
    for (n, metered_first) in [(0u128, true), (1, false)] {
        let insight = Insight::new().show_keys(true);
        let meter = Meter::new();
        let db = if metered_first {
            table.metered(&meter).observed(&insight)
        } else {
            table.observed(&insight).metered(&meter)
        };
        let user = format!("m{n}");
        db.put(&order(&user, n)).await?;
        let charge = meter.charges().pop().ok_or("a charge")?;
        let by_table = charge.consumed_by_table.ok_or("the table's part")?;
        assert_eq!(by_table, 3.0);
        let key = format!("USER#{user}");
        // The table's partition also holds LSI1 (all attributes): as many units again.
        assert_eq!(rate(&insight, None, &key, Units::Write), 2.0 * by_table);
        let gsi3 = rate(&insight, Some("GSI3"), "BY_TOTAL", Units::Write);
        assert!(gsi3 > 0.0 && gsi3 < 3.0, "GSI3's own units: {gsi3}");
        // Reads through both: the reported total.
        let page = db.query(Order::partition(user.as_str())).all().await?;
        assert_eq!(page.items.len(), 1);
        let reported = meter.charges().pop().and_then(|c| c.consumed);
        assert_eq!(
            Some(rate(&insight, None, &key, Units::Read)),
            reported,
            "{meter:?}"
        );
    }
    Ok(())
}

/// A local secondary index lives in the table's partitions: writing it consumes the
/// partition's units too (DynamoDB's `LocalSecondaryIndexes` capacity).
#[tokio::test]
async fn local_index_writes_count_on_the_table_partition() -> TestResult {
    let table = local::fresh_table::<App>().await?;
    let insight = Insight::new().show_keys(true).exact_units(true);
    let meter = Meter::new();
    let db = table.metered(&meter).observed(&insight);
    db.put(&order("lsi", 0)).await?;
    let charge = meter.charges().pop().ok_or("a charge")?;
    let all = charge.consumed.ok_or("consumed")?;
    let hot = insight.hot_partitions();
    let seen: f64 = hot
        .iter()
        .filter(|h| h.units == Units::Write)
        .map(|h| h.rate)
        .sum();
    assert_eq!(
        seen, all,
        "DynamoDB consumed {all}, the partitions {seen}: {hot:#?}"
    );
    Ok(())
}

/// Units on every write path land on the partitions written.
#[tokio::test]
async fn every_write_path_is_attributed() -> TestResult {
    let insight = Insight::new().show_keys(true);
    let (table, db) = observed_app(&insight).await?;
    accounts(&table, &[100, 0, 5, 7]).await?;
    let f = Account::fields();
    // update().add() returning the new item: its size, one unit.
    db.update(Account::key("a0"))
        .add(f.balance, -1)
        .send()
        .await?;
    assert_eq!(rate(&insight, None, "ACCOUNT#a0", Units::Write), 1.0);
    db.update(Account::key("a1"))
        .add(f.balance, 1)
        .send_returning_nothing()
        .await?;
    assert_eq!(rate(&insight, None, "ACCOUNT#a1", Units::Write), 1.0);
    db.delete(Account::key("a2")).await?;
    assert_eq!(rate(&insight, None, "ACCOUNT#a2", Units::Write), 1.0);
    // A transaction: put, update, delete, check, twice the units each.
    let t = Insight::new().show_keys(true);
    let tx = table.observed(&t);
    tx.transact_write()
        .put(tx.put(&big_user("tx")))
        .update(tx.update(Account::key("a0")).add(f.transfers, 1))
        .delete(tx.delete(Account::key("a3")))
        .check(Account::key("a1"), f.balance.ge(0))
        .await?;
    assert_eq!(rate(&t, None, "USER#tx", Units::Write), 6.0);
    for key in ["ACCOUNT#a0", "ACCOUNT#a3", "ACCOUNT#a1"] {
        assert_eq!(rate(&t, None, key, Units::Write), 2.0, "{key}");
    }
    // A batch of puts and deletes.
    let b = Insight::new().show_keys(true);
    let batch = table.observed(&b);
    let orders: Vec<Order> = (0..3).map(|i| order("bw", i)).collect();
    table.put(&order("gone", 7)).await?;
    batch
        .batch_write()
        .puts(&orders)
        .delete(order("gone", 7).primary_key())
        .delete(User::key("nobody"))
        .await?;
    assert_eq!(rate(&b, None, "USER#bw", Units::Write), 18.0); // LSI1 included
    assert!(rate(&b, None, "USER#gone", Units::Write) >= 1.0);
    assert!(rate(&b, None, "USER#nobody", Units::Write) >= 1.0);
    assert!(rate(&b, Some("GSI3"), "BY_TOTAL", Units::Write) > 0.0);
    assert!(rate(&b, Some("GSI2"), "STATUS#open", Units::Write) > 0.0);
    Ok(())
}

/// Units on every read path land on the partitions read.
#[tokio::test]
async fn every_read_path_is_attributed() -> TestResult {
    let table = local::fresh_table::<App>().await?;
    for i in 0..4 {
        table.put(&order("r", i)).await?;
        table.put(&order("s", i)).await?;
    }
    seed_purchase(&table, "p").await?;
    let insight = Insight::new().show_keys(true);
    let db = table.observed(&insight);
    // A batch get across entity types.
    let got = db
        .batch_get::<PurchaseDetails>()
        .key(Purchase::key("p"))
        .key(Invoice::key(InvoiceKey {
            purchase_id: "p",
            invoice_no: 9u32,
        }))
        .send()
        .await?;
    assert_eq!(got.items.len(), 2);
    assert!(rate(&insight, None, "PURCHASE#p", Units::Read) > 0.0);
    // A query of a local index reads the table's partition.
    let lsi = items_of(db.query(Order::lsi1_partition("r"))).await?;
    assert_eq!(lsi.len(), 4);
    let r = rate(&insight, None, "USER#r", Units::Read);
    assert!(r > 0.0);
    // A stream of a query, page by page.
    let streamed: Vec<Order> = db
        .query(Order::partition("r"))
        .page_size(1)
        .stream()
        .try_collect()
        .await?;
    assert_eq!(streamed.len(), 4);
    assert!(rate(&insight, None, "USER#r", Units::Read) >= r + 2.0);
    // Scatter over two partitions.
    let scattered = db
        .scatter_query([Order::partition("r"), Order::partition("s")])
        .all()
        .await?;
    assert_eq!(scattered.items.len(), 8);
    assert!(rate(&insight, None, "USER#s", Units::Read) > 0.0);
    // A transactional get: twice a consistent read.
    let t = Insight::new().show_keys(true);
    let tg = table.observed(&t);
    let read = tg
        .transact_get::<Order>()
        .key(order("r", 0).primary_key())
        .send()
        .await?;
    assert_eq!(read.len(), 1);
    assert_eq!(rate(&t, None, "USER#r", Units::Read), 2.0);
    let hot = insight.hot_partitions();
    let purchase = peak(&hot, None, "PURCHASE#p", Units::Read).ok_or("purchase")?;
    assert_eq!(purchase.partition.template, Some("PURCHASE#{purchase_id}"));
    Ok(())
}

/// A multi-attribute index key: its parts joined, its template named.
#[tokio::test]
async fn a_multi_attribute_index_key_is_one_partition() -> TestResult {
    let table = local::fresh_table::<crate::index::Arena>().await?;
    let insight = Insight::new().show_keys(true);
    let db = table.observed(&insight);
    for i in 0..3u32 {
        db.put(&Match {
            match_id: i,
            tournament: "worlds".into(),
            region: Some("EU".into()),
            score: i,
            player: format!("p{i}"),
        })
        .await?;
    }
    let found = items_of(db.query(Match::by_region_partition(MatchByRegionPartition {
        tournament: "worlds",
        region: "EU",
    })))
    .await?;
    assert_eq!(found.len(), 3);
    let hot = insight.hot_partitions();
    let write = peak(&hot, Some("ByRegion"), "worlds | EU", Units::Write).ok_or("write")?;
    assert_eq!(write.rate, 3.0);
    assert_eq!(write.partition.entity_type.as_deref(), Some("Match"));
    assert!(write.partition.template.is_some(), "{write:?}");
    let read = peak(&hot, Some("ByRegion"), "worlds | EU", Units::Read).ok_or("read")?;
    assert!(read.rate > 0.0);
    Ok(())
}

/// History (versioned writes), chunked items and cached gets.
#[tokio::test]
async fn history_chunks_and_cached_gets() -> TestResult {
    let insight = Insight::new().show_keys(true);
    let (table, db) = observed_app(&insight).await?;
    article_revised_once(&db, "a").await?;
    let article = peak(&insight.hot_partitions(), None, "ARTICLE#a", Units::Write)
        .cloned()
        .ok_or("article")?;
    assert!(article.rate >= 2.0, "{article:?}");
    assert_eq!(article.partition.entity_type.as_deref(), Some("Article"));

    let body = "b".repeat(5_000);
    db.put(&message("m1", body, noise(3_000, 1))).await?;
    let hot = insight.hot_partitions();
    let inbox = peak(&hot, None, "INBOX#ann", Units::Write).ok_or("inbox")?;
    assert_eq!(inbox.partition.entity_type.as_deref(), Some("Message"));
    let chunks: f64 = hot
        .iter()
        .filter(|h| matches!(&h.partition.key, PartitionKey::Text(k) if k.starts_with("_CHUNK#")))
        .map(|h| h.rate)
        .sum();
    assert!(chunks >= 4.0, "chunk writes counted: {hot:#?}");

    let cache = Cache::builder().entity::<User>().build();
    let cached = table.observed(&insight).with_cache(&cache);
    table.put(&User::sample("c")).await?;
    cached.get(User::key("c")).await?;
    let once = rate(&insight, None, "USER#c", Units::Read);
    assert!(once > 0.0);
    for _ in 0..5 {
        cached.get(User::key("c")).await?;
    }
    assert_eq!(rate(&insight, None, "USER#c", Units::Read), once);
    Ok(())
}

/// Many tasks on several threads: every unit counted once.
#[test]
fn concurrent_tasks_count_every_unit_once() -> TestResult {
    let (runtime, table) = runtime_and_table::<App>()?;
    let insight = Insight::new().show_keys(true);
    let db: Db<App> = table.observed(&insight);
    runtime.block_on(async {
        let tasks: Vec<_> = (0..16)
            .map(|t| {
                let db = db.clone();
                tokio::spawn(async move {
                    for i in 0..25 {
                        db.put(&User::sample(&format!("c{}", (t * 25 + i) % 40)))
                            .await?;
                    }
                    Ok::<_, dynamo_model::Error>(())
                })
            })
            .collect();
        for task in tasks {
            task.await??;
        }
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
    })?;
    let load = insight.by_template();
    assert_eq!(on_table(&load, "User"), (0.0, 400.0), "{load:#?}");
    let hot = insight.hot_partitions();
    assert_eq!(hot.len(), 40, "{hot:#?}");
    let busiest: f64 = hot.iter().map(|h| h.rate).fold(0.0, f64::max);
    assert!(
        busiest.is_finite() && busiest > 0.0 && busiest <= 10.0,
        "{busiest}"
    );
    drop(runtime);
    Ok(())
}

/// One warning per partition per cooldown, however many calls keep it hot.
#[tokio::test]
async fn the_cooldown_holds_across_calls() -> TestResult {
    let scope = Scope::begin();
    let insight = Insight::new().warn_at(0.001).show_keys(true);
    let (table, db) = observed_app(&insight).await?;
    for _ in 0..10 {
        db.put(&User::sample("cool")).await?;
    }
    let warnings = insight.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(scope.capture.events().len(), 1);
    let no_cooldown = Insight::new()
        .warn_at(0.001)
        .cooldown(std::time::Duration::ZERO);
    let again = table.observed(&no_cooldown);
    for _ in 0..5 {
        again.put(&User::sample("cool")).await?;
    }
    assert_eq!(no_cooldown.warnings().len(), 5);
    Ok(())
}

/// A partition far lighter than the two kept does not push the busier one out of
/// `hot_partitions` (`top(2)`).
#[tokio::test]
async fn hot_partitions_keep_the_busiest() -> TestResult {
    let insight = Insight::new().top(2).show_keys(true);
    let (_table, db) = observed_app(&insight).await?;
    // Users without email are in no index: three partitions of the table only.
    for _ in 0..3 {
        db.put(&big_user("a")).await?; // 9 units
    }
    for _ in 0..2 {
        db.put(&big_user("b")).await?; // 6 units
    }
    db.put(&User::sample("c")).await?; // 1 unit
    let kept: Vec<PartitionKey> = insight
        .hot_partitions()
        .into_iter()
        .filter(|h| h.partition.index.is_none())
        .map(|h| h.partition.key)
        .collect();
    assert!(
        kept.contains(&PartitionKey::Text("USER#b".into())),
        "USER#b (6 units) lost to USER#c (1 unit): {kept:?}"
    );
    Ok(())
}

/// Gets each of `users`, 8 at a time.
async fn get_all(db: &Db<App>, users: &[User]) -> TestResult {
    stream::iter(users.iter().map(|u| db.get(u.primary_key()).into_future()))
        .buffer_unordered(8)
        .try_collect::<Vec<_>>()
        .await?;
    Ok(())
}

/// Memory stays where it was over many distinct partitions, keys shown or not, once
/// every kind of call was seen.
#[tokio::test]
async fn memory_stays_bounded_with_shown_keys() -> TestResult {
    let insight = Insight::new().top(8).show_keys(true);
    let (_table, db) = observed_app(&insight).await?;
    let users: Vec<User> = (0..200)
        .map(|i| User::sample(&format!("{i}-{}", "k".repeat(200))))
        .collect();
    db.batch_write().puts(&users[..50]).await?;
    get_all(&db, &users[..50]).await?;
    let after = insight.footprint();
    db.batch_write().puts(&users[50..]).await?;
    get_all(&db, &users[50..]).await?;
    assert_eq!(insight.footprint(), after);
    assert!(insight.hot_partitions().len() <= 8);
    assert!(insight.current().len() <= 8);
    Ok(())
}
