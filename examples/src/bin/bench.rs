//! End-to-end benchmark against DynamoDB Local: every operation through the crate and
//! through hand-written `aws-sdk-dynamodb` code doing the same thing, interleaved round by
//! round, and a batch get of many keys against as many sequential gets. Prints markdown
//! tables; it asserts nothing about time (it is a benchmark, not a test).
//!
//! Run: `cargo run --release -p examples --bin bench` (about 2 minutes after the build),
//! or `cargo run --release -p examples --bin bench -- --quick` (under a minute);
//! `-- --chunked` runs only the 10 MiB chunked-value section; `-- --scatter` only the
//! scatter-gather section (16 partitions read merged against one after another).
//!
//! `--only OP [--calls N] [--side crate|raw]` (OP: put, get, query, batch, tx) runs one
//! operation N times on each side (or one side) and prints wall time and this process's
//! CPU time per call (DynamoDB Local is a child process, so its CPU is not counted): the
//! client-side cost of a call, and a steady loop to attach `perf record` or callgrind to.
//! With `--wire`, both sides go through an SDK interceptor that records the request bodies
//! and the HTTP round trip of every request (printed: the bodies, and call time against
//! round-trip time).
//!
//! `--insight` measures what an attached [`Insight`](dynamo_model::insight::Insight) costs:
//! every operation through a `Db` observed by one against the same `Db` without, in the
//! same interleaved rounds (`--quick` for fewer).
//!
//! Not run by `.ci/run` (which runs every other example): it takes minutes and its figures
//! mean something only in a release build.
//!
//! What is compared: the raw code is what a careful user writes without the crate for the
//! same item shape (same attributes, same key strings, the same entity-type condition on
//! writes, an entity-type check when decoding, unprocessed batch keys retried, chunks of 100
//! keys read 4 at a time). Before measuring, the bench checks with the crate's `params()`
//! that both send the same items and keys, and that both read the same orders back.
//! What the crate sends on top is printed under the table.

use dynamo_model::aws_sdk_dynamodb::config::interceptors::{
    BeforeDeserializationInterceptorContextRef, BeforeTransmitInterceptorContextRef,
};
use dynamo_model::aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::aws_sdk_dynamodb::Client;
use dynamo_model::{local, Entity, Item, Table};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::future::Future;
use std::time::{Duration, Instant};
use time::macros::datetime;
use time::OffsetDateTime;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct Shop;

/// A user's orders, newest last in the partition (the sort key starts with the time).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, pk = "USER#{user_id}", sk = "ORDER#{created_at}#{order_id}")]
struct Order {
    user_id: String,
    created_at: OffsetDateTime,
    order_id: String,
    status: String,
    total_cents: u64,
}

/// Orders per user partition (the query reads the 10 newest of one).
const ORDERS_PER_USER: usize = 50;

fn order(user: &str, n: usize, tag: &str) -> Order {
    Order {
        user_id: user.to_owned(),
        created_at: datetime!(2024-01-01 00:00 UTC) + time::Duration::minutes(n as i64 * 7),
        order_id: format!("{tag}{n:06}"),
        status: if n.is_multiple_of(3) {
            "SHIPPED"
        } else {
            "PENDING"
        }
        .to_owned(),
        total_cents: 1_000 + (n as u64 * 137) % 90_000,
    }
}

/// `users` partitions of [`ORDERS_PER_USER`] orders each.
fn seed_orders(users: usize) -> Vec<Order> {
    (0..users)
        .flat_map(|u| {
            let user = format!("u{u:05}");
            (0..ORDERS_PER_USER).map(move |n| order(&user, n, "o"))
        })
        .collect()
}

/// The hand-written baseline: what a careful user writes with `aws-sdk-dynamodb` alone.
mod raw {
    use super::{BoxError, Order};
    use dynamo_model::aws_sdk_dynamodb::types::{
        AttributeValue, KeysAndAttributes, Put, TransactWriteItem,
    };
    use dynamo_model::aws_sdk_dynamodb::Client;
    use dynamo_model::Item;
    use futures_util::{stream, StreamExt, TryStreamExt};
    use std::collections::HashMap;
    use std::time::Duration;
    use time::format_description::well_known::Rfc3339;
    use time::macros::format_description;
    use time::{OffsetDateTime, UtcOffset};

    const ENTITY_TYPE: &str = "Order";

    /// Fixed width, so sort keys order by time: `2024-01-01T00:00:00.000000000Z`.
    pub fn timestamp(t: OffsetDateTime) -> Result<String, BoxError> {
        let format = format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:9]Z"
        );
        Ok(t.to_offset(UtcOffset::UTC).format(&format)?)
    }

    fn s(v: impl Into<String>) -> AttributeValue {
        AttributeValue::S(v.into())
    }

    pub fn key(
        user_id: &str,
        created_at: OffsetDateTime,
        order_id: &str,
    ) -> Result<Item, BoxError> {
        Ok(HashMap::from([
            ("PK".to_owned(), s(format!("USER#{user_id}"))),
            (
                "SK".to_owned(),
                s(format!("ORDER#{}#{order_id}", timestamp(created_at)?)),
            ),
        ]))
    }

    pub fn key_of(o: &Order) -> Result<Item, BoxError> {
        key(&o.user_id, o.created_at, &o.order_id)
    }

    pub fn to_item(o: &Order) -> Result<Item, BoxError> {
        let mut item = key_of(o)?;
        item.insert("_type".to_owned(), s(ENTITY_TYPE));
        item.insert("user_id".to_owned(), s(&o.user_id));
        item.insert("created_at".to_owned(), s(timestamp(o.created_at)?));
        item.insert("order_id".to_owned(), s(&o.order_id));
        item.insert("status".to_owned(), s(&o.status));
        item.insert(
            "total_cents".to_owned(),
            AttributeValue::N(o.total_cents.to_string()),
        );
        Ok(item)
    }

    fn take_s(item: &mut Item, name: &str) -> Result<String, BoxError> {
        match item.remove(name) {
            Some(AttributeValue::S(v)) => Ok(v),
            other => Err(format!("attribute {name}: expected a string, found {other:?}").into()),
        }
    }

    /// Decodes an order, refusing an item of another entity type (a single table holds
    /// several) and an attribute of the wrong type.
    pub fn from_item(mut item: Item) -> Result<Order, BoxError> {
        let entity_type = take_s(&mut item, "_type")?;
        if entity_type != ENTITY_TYPE {
            return Err(format!("expected an {ENTITY_TYPE}, found a {entity_type}").into());
        }
        let total_cents = match item.remove("total_cents") {
            Some(AttributeValue::N(n)) => n.parse()?,
            other => return Err(format!("total_cents: expected a number, found {other:?}").into()),
        };
        Ok(Order {
            user_id: take_s(&mut item, "user_id")?,
            created_at: OffsetDateTime::parse(&take_s(&mut item, "created_at")?, &Rfc3339)?,
            order_id: take_s(&mut item, "order_id")?,
            status: take_s(&mut item, "status")?,
            total_cents,
        })
    }

    /// The put's guard: no item under the key, or an order (never overwrite another
    /// entity type's item that shares the key).
    const NOT_ANOTHER_TYPE: &str = "attribute_not_exists(#pk) OR #type = :type";

    fn guard_names() -> HashMap<String, String> {
        HashMap::from([
            ("#pk".to_owned(), "PK".to_owned()),
            ("#type".to_owned(), "_type".to_owned()),
        ])
    }

    fn guard_values() -> HashMap<String, AttributeValue> {
        HashMap::from([(":type".to_owned(), s(ENTITY_TYPE))])
    }

    pub async fn put(client: &Client, table: &str, o: &Order) -> Result<(), BoxError> {
        client
            .put_item()
            .table_name(table)
            .set_item(Some(to_item(o)?))
            .condition_expression(NOT_ANOTHER_TYPE)
            .set_expression_attribute_names(Some(guard_names()))
            .set_expression_attribute_values(Some(guard_values()))
            .send()
            .await?;
        Ok(())
    }

    pub async fn get(
        client: &Client,
        table: &str,
        user_id: &str,
        created_at: OffsetDateTime,
        order_id: &str,
    ) -> Result<Option<Order>, BoxError> {
        let out = client
            .get_item()
            .table_name(table)
            .set_key(Some(key(user_id, created_at, order_id)?))
            .send()
            .await?;
        out.item.map(from_item).transpose()
    }

    /// The `n` newest orders of a user.
    pub async fn newest(
        client: &Client,
        table: &str,
        user_id: &str,
        n: i32,
    ) -> Result<Vec<Order>, BoxError> {
        let out = client
            .query()
            .table_name(table)
            .key_condition_expression("#pk = :pk AND begins_with(#sk, :prefix)")
            // Only orders, should another entity type share the prefix.
            .filter_expression("#type = :type")
            .expression_attribute_names("#pk", "PK")
            .expression_attribute_names("#sk", "SK")
            .expression_attribute_names("#type", "_type")
            .expression_attribute_values(":pk", s(format!("USER#{user_id}")))
            .expression_attribute_values(":prefix", s("ORDER#"))
            .expression_attribute_values(":type", s(ENTITY_TYPE))
            .scan_index_forward(false)
            .limit(n)
            .send()
            .await?;
        out.items
            .unwrap_or_default()
            .into_iter()
            .map(from_item)
            .collect()
    }

    /// Reads any number of keys: chunks of 100 (DynamoDB's limit), 4 at a time,
    /// unprocessed keys sent again with backoff.
    pub async fn batch_get(
        client: &Client,
        table: &str,
        keys: Vec<Item>,
    ) -> Result<Vec<Order>, BoxError> {
        let chunks: Vec<Vec<Item>> = keys.chunks(100).map(<[Item]>::to_vec).collect();
        let pages: Vec<Vec<Order>> = stream::iter(chunks)
            .map(|chunk| batch_get_chunk(client, table, chunk))
            .buffer_unordered(4)
            .try_collect()
            .await?;
        Ok(pages.into_iter().flatten().collect())
    }

    async fn batch_get_chunk(
        client: &Client,
        table: &str,
        mut keys: Vec<Item>,
    ) -> Result<Vec<Order>, BoxError> {
        let mut orders = Vec::with_capacity(keys.len());
        let mut attempt = 0;
        while !keys.is_empty() {
            if attempt > 0 {
                if attempt > 10 {
                    return Err(format!("{} keys still unprocessed", keys.len()).into());
                }
                tokio::time::sleep(Duration::from_millis(10 << attempt.min(6))).await;
            }
            attempt += 1;
            let request = KeysAndAttributes::builder().set_keys(Some(keys)).build()?;
            let out = client
                .batch_get_item()
                .request_items(table, request)
                .send()
                .await?;
            for item in out
                .responses
                .and_then(|mut r| r.remove(table))
                .unwrap_or_default()
            {
                orders.push(from_item(item)?);
            }
            keys = out
                .unprocessed_keys
                .and_then(|mut u| u.remove(table))
                .map(|ka| ka.keys)
                .unwrap_or_default();
        }
        Ok(orders)
    }

    /// Puts the orders in one transaction, each with the put's guard.
    pub async fn transact_put(
        client: &Client,
        table: &str,
        orders: &[Order],
    ) -> Result<(), BoxError> {
        let items = orders
            .iter()
            .map(|o| {
                let put = Put::builder()
                    .table_name(table)
                    .set_item(Some(to_item(o)?))
                    .condition_expression(NOT_ANOTHER_TYPE)
                    .set_expression_attribute_names(Some(guard_names()))
                    .set_expression_attribute_values(Some(guard_values()))
                    .build()?;
                Ok(TransactWriteItem::builder().put(put).build())
            })
            .collect::<Result<Vec<_>, BoxError>>()?;
        client
            .transact_write_items()
            .set_transact_items(Some(items))
            .send()
            .await?;
        Ok(())
    }
}

// ------------------------------------------------------------------ measuring

/// Latencies of one operation, crate and raw, from the same interleaved rounds.
struct Pair {
    name: &'static str,
    krate: Vec<Duration>,
    raw: Vec<Duration>,
}

/// Runs `warmup` unrecorded then `rounds` recorded rounds; each round runs the crate's
/// operation and the raw one, alternating which goes first, so drift and caching reach
/// both. Each operation returns how many orders it wrote or read, which must be `expect`.
async fn measure<C, CF, R, RF>(
    name: &'static str,
    warmup: usize,
    rounds: usize,
    expect: usize,
    mut krate: C,
    mut raw: R,
) -> Result<Pair, BoxError>
where
    C: FnMut(usize) -> CF,
    CF: Future<Output = Result<usize, BoxError>>,
    R: FnMut(usize) -> RF,
    RF: Future<Output = Result<usize, BoxError>>,
{
    let mut pair = Pair {
        name,
        krate: Vec::with_capacity(rounds),
        raw: Vec::with_capacity(rounds),
    };
    for round in 0..warmup + rounds {
        let check = |side: &str, n: usize| -> Result<(), BoxError> {
            if n == expect {
                Ok(())
            } else {
                Err(format!("{name} ({side}), round {round}: {n} orders, expected {expect}").into())
            }
        };
        let mut timed = [Duration::ZERO; 2];
        for side in [round % 2, 1 - round % 2] {
            let start = Instant::now();
            let n = if side == 0 {
                krate(round).await?
            } else {
                raw(round).await?
            };
            timed[side] = start.elapsed();
            check(["crate", "raw"][side], n)?;
        }
        if round >= warmup {
            pair.krate.push(timed[0]);
            pair.raw.push(timed[1]);
        }
    }
    Ok(pair)
}

fn median(sorted: &[Duration]) -> Duration {
    match sorted.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2,
    }
}

/// Nearest-rank percentile.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

impl Pair {
    /// A table row; `target` adds whether the ratio meets the issue's target.
    fn row(&self, target: bool) -> String {
        let mut k = self.krate.clone();
        let mut r = self.raw.clone();
        k.sort();
        r.sort();
        let (km, rm) = (median(&k), median(&r));
        let ratio = rm.as_secs_f64() / km.as_secs_f64();
        format!(
            "| {} | {} | {} | {} | {} | {:.3} |{}",
            self.name,
            ms(km),
            ms(percentile(&k, 0.99)),
            ms(rm),
            ms(percentile(&r, 0.99)),
            ratio,
            match (target, ratio >= 0.97) {
                (false, _) => "",
                (true, true) => " met |",
                (true, false) => " not met |",
            }
        )
    }
}

// ------------------------------------------------------------------ equivalence

fn without(mut item: Item, attribute: &str) -> Item {
    item.remove(attribute);
    item
}

fn same<T: PartialEq + std::fmt::Debug>(what: &str, a: T, b: T) -> Result<(), BoxError> {
    if a == b {
        Ok(())
    } else {
        Err(format!("{what} differ:\n  crate {a:?}\n  raw   {b:?}").into())
    }
}

fn sorted_values(values: Option<&HashMap<String, AttributeValue>>) -> Vec<String> {
    let mut v: Vec<String> = values
        .into_iter()
        .flatten()
        .map(|(_, v)| format!("{v:?}"))
        .collect();
    v.sort();
    v
}

/// Checks with the crate's `params()` that the raw code sends the same items and keys,
/// and that both read the same orders; prints what the crate sends on top.
async fn check_equivalence(
    db: &dynamo_model::Db<Shop>,
    client: &Client,
    orders: &[Order],
) -> Result<(), BoxError> {
    let table = db.table_name();
    let o = &orders[ORDERS_PER_USER - 1];

    let put = db.put(o).params()?;
    let token = Shop::SCHEMA.write_token;
    same(
        "put items (without the write token)",
        put.item().cloned().map(|i| without(i, token)),
        Some(raw::to_item(o)?),
    )?;
    println!(
        "- put: the crate sends `{}` with {:?} and {:?}, the write token `{token}` in the \
         item, and ReturnValuesOnConditionCheckFailure={:?}; the raw put sends `attribute_not_exists(#pk) \
         OR #type = :type`",
        put.condition_expression().unwrap_or_default(),
        put.expression_attribute_names().unwrap_or(&HashMap::new()),
        sorted_values(put.expression_attribute_values()),
        put.return_values_on_condition_check_failure(),
    );

    let key = || {
        Order::key(OrderKey {
            user_id: o.user_id.as_str(),
            created_at: o.created_at,
            order_id: o.order_id.as_str(),
        })
    };
    let get = db.get(key()).params()?;
    same("get keys", get.key().cloned(), Some(raw::key_of(o)?))?;
    same(
        "get results",
        db.get(key()).await?,
        raw::get(client, table, &o.user_id, o.created_at, &o.order_id).await?,
    )?;

    let query = db
        .query(Order::partition(o.user_id.as_str()))
        .reverse()
        .limit(10)
        .params()?;
    same(
        "query values",
        sorted_values(query.expression_attribute_values()),
        sorted_values(Some(&HashMap::from([
            (
                ":pk".to_owned(),
                AttributeValue::S(format!("USER#{}", o.user_id)),
            ),
            (":prefix".to_owned(), AttributeValue::S("ORDER#".to_owned())),
            (":type".to_owned(), AttributeValue::S("Order".to_owned())),
        ]))),
    )?;
    same("query limit", query.limit(), Some(10))?;
    same("query direction", query.scan_index_forward(), Some(false))?;
    println!(
        "- query: the crate sends `{}` filtered by `{}` (as the raw code does), and \
         ReturnConsumedCapacity={:?}; it reads more pages should the filter drop items",
        query.key_condition_expression().unwrap_or_default(),
        query.filter_expression().unwrap_or_default(),
        query.return_consumed_capacity(),
    );
    let crate_newest = db
        .query(Order::partition(o.user_id.as_str()))
        .reverse()
        .limit(10)
        .all()
        .await?
        .items;
    let raw_newest = raw::newest(client, table, &o.user_id, 10).await?;
    same("query results", &crate_newest, &raw_newest)?;
    same("newest order", crate_newest.first(), Some(o))?;

    let keys: Vec<&Order> = orders.iter().take(250).collect();
    let batch = db
        .batch_get::<Order>()
        .keys(keys.iter().map(|o| o.primary_key()))
        .params()?;
    let crate_keys: Vec<Item> = batch
        .iter()
        .flat_map(|input| {
            input
                .request_items()
                .and_then(|r| r.get(table))
                .map(|ka| ka.keys().to_vec())
                .unwrap_or_default()
        })
        .collect();
    let raw_keys = keys
        .iter()
        .map(|o| raw::key_of(o))
        .collect::<Result<Vec<_>, _>>()?;
    same("batch get keys", crate_keys, raw_keys.clone())?;
    println!(
        "- batch get: the crate sends ReturnConsumedCapacity={:?}, removes duplicate keys and \
         accounts for every key (found, not found, unprocessed)",
        batch.first().and_then(|b| b.return_consumed_capacity()),
    );
    let by_key = |mut v: Vec<Order>| {
        v.sort_by(|a, b| (&a.user_id, &a.order_id).cmp(&(&b.user_id, &b.order_id)));
        v
    };
    same(
        "batch get results",
        by_key(
            db.batch_get::<Order>()
                .keys(keys.iter().map(|o| o.primary_key()))
                .send()
                .await?
                .items,
        ),
        by_key(raw::batch_get(client, table, raw_keys).await?),
    )?;

    let ten = &orders[..10];
    let tx = ten
        .iter()
        .fold(db.transact_write(), |tx, o| tx.put(db.put(o)))
        .params()?;
    let crate_items: Vec<Option<Item>> = tx
        .transact_items()
        .iter()
        .map(|t| t.put().map(|p| p.item().clone()))
        .collect();
    let raw_items = ten
        .iter()
        .map(|o| raw::to_item(o).map(Some))
        .collect::<Result<Vec<_>, _>>()?;
    same("transaction items", crate_items, raw_items)?;
    let first = tx.transact_items().first().and_then(|t| t.put());
    println!(
        "- transaction: the crate sends each put with `{}` (as the raw code does) and \
         ReturnValuesOnConditionCheckFailure={:?}, and a ClientRequestToken (idempotent retries)",
        first
            .map(|p| p.condition_expression())
            .unwrap_or_default()
            .unwrap_or_default(),
        first.and_then(|p| p.return_values_on_condition_check_failure()),
    );
    Ok(())
}

/// What every measurement reads and writes.
#[derive(Clone, Copy)]
struct Ctx<'a> {
    db: &'a dynamo_model::Db<Shop>,
    client: &'a Client,
    table: &'a str,
    orders: &'a [Order],
}

/// Every crate/raw pair (main rows, then diagnosis and control rows), `pass` keeping the
/// keys written apart from other passes' (a put writes a new item).
async fn suite(
    ctx: Ctx<'_>,
    pass: &str,
    w: usize,
    rounds: usize,
    batch_rounds: usize,
) -> Result<Vec<Pair>, BoxError> {
    let Ctx {
        db,
        client,
        table,
        orders,
    } = ctx;
    let n = rounds;
    // Reads pick orders spread over the table, the same for both sides in a round.
    let pick = |round: usize| &orders[(round * 7_919) % orders.len()];

    let mut pairs = Vec::new();
    pairs.push(
        measure(
            "put",
            w,
            n,
            1,
            |r| async move {
                db.put(&order(&format!("{pass}put{r:05}"), r, "c")).await?;
                Ok(1)
            },
            |r| async move {
                raw::put(client, table, &order(&format!("{pass}put{r:05}"), r, "r")).await?;
                Ok(1)
            },
        )
        .await?,
    );
    pairs.push(
        measure(
            "get",
            w,
            n,
            1,
            |r| async move {
                let o = pick(r);
                let key = Order::key(OrderKey {
                    user_id: o.user_id.as_str(),
                    created_at: o.created_at,
                    order_id: o.order_id.as_str(),
                });
                Ok(db.get(key).await?.map_or(0, |_| 1))
            },
            |r| async move {
                let o = pick(r);
                let got = raw::get(client, table, &o.user_id, o.created_at, &o.order_id).await?;
                Ok(got.map_or(0, |_| 1))
            },
        )
        .await?,
    );
    pairs.push(
        measure(
            "query (10 newest of 50)",
            w,
            n,
            10,
            |r| async move {
                let user = pick(r).user_id.as_str();
                let page = db
                    .query(Order::partition(user))
                    .reverse()
                    .limit(10)
                    .all()
                    .await?;
                Ok(page.items.len())
            },
            |r| async move {
                let user = pick(r).user_id.as_str();
                Ok(raw::newest(client, table, user, 10).await?.len())
            },
        )
        .await?,
    );
    let window = |r: usize| {
        let start = (r * 1_000) % (orders.len() - 999);
        &orders[start..start + 1_000]
    };
    pairs.push(
        measure(
            "batch get (1,000 keys)",
            w.min(5),
            batch_rounds,
            1_000,
            |r| async move {
                let keys = window(r).iter().map(|o| o.primary_key());
                Ok(db.batch_get::<Order>().keys(keys).send().await?.items.len())
            },
            |r| async move {
                let keys = window(r)
                    .iter()
                    .map(raw::key_of)
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(raw::batch_get(client, table, keys).await?.len())
            },
        )
        .await?,
    );
    let ten = |r: usize, tag: &str| -> Vec<Order> {
        (0..10)
            .map(|i| order(&format!("{pass}tx{r:05}"), i, tag))
            .collect()
    };
    pairs.push(
        measure(
            "transaction (10 puts)",
            w,
            n,
            10,
            |r| async move {
                let tx = ten(r, "c")
                    .iter()
                    .fold(db.transact_write(), |tx, o| tx.put(db.put(o)));
                tx.await?;
                Ok(10)
            },
            |r| async move {
                raw::transact_put(client, table, &ten(r, "r")).await?;
                Ok(10)
            },
        )
        .await?,
    );

    // Where the crate sends more than the raw code: the same operations with the extras
    // taken out through `customize()`, to see what they cost. (Not a recommendation: the
    // write token is how a put recognises its own write after a lost response.)
    pairs.push(
        measure(
            "diagnosis: put without write token and ALL_OLD",
            w,
            n,
            1,
            |r| async move {
                db.put(&order(&format!("{pass}bare{r:05}"), r, "c"))
                    .customize(|b| {
                        let mut item = b.get_item().clone().unwrap_or_default();
                        item.remove(Shop::SCHEMA.write_token);
                        b.set_item(Some(item))
                            .set_return_values_on_condition_check_failure(None)
                    })
                    .await?;
                Ok(1)
            },
            |r| async move {
                raw::put(client, table, &order(&format!("{pass}bare{r:05}"), r, "r")).await?;
                Ok(1)
            },
        )
        .await?,
    );
    pairs.push(
        measure(
            "diagnosis: transaction without ClientRequestToken and ALL_OLD",
            w,
            n,
            10,
            |r| async move {
                let tx = ten(r, "bc")
                    .iter()
                    .fold(db.transact_write(), |tx, o| tx.put(db.put(o)))
                    .customize(|b| {
                        let mut items = b.get_transact_items().clone().unwrap_or_default();
                        for put in items.iter_mut().filter_map(|i| i.put.as_mut()) {
                            put.return_values_on_condition_check_failure = None;
                        }
                        b.set_transact_items(Some(items))
                            .set_client_request_token(None)
                    });
                tx.await?;
                Ok(10)
            },
            |r| async move {
                raw::transact_put(client, table, &ten(r, "br")).await?;
                Ok(10)
            },
        )
        .await?,
    );

    pairs.push(
        measure(
            "diagnosis: query without ReturnConsumedCapacity",
            w,
            n,
            10,
            |r| async move {
                let user = pick(r).user_id.as_str();
                let page = db
                    .query(Order::partition(user))
                    .reverse()
                    .limit(10)
                    .customize(|b| b.set_return_consumed_capacity(None))
                    .all()
                    .await?;
                Ok(page.items.len())
            },
            |r| async move {
                let user = pick(r).user_id.as_str();
                Ok(raw::newest(client, table, user, 10).await?.len())
            },
        )
        .await?,
    );
    pairs.push(
        measure(
            "diagnosis: batch get (1,000 keys) without ReturnConsumedCapacity",
            w.min(5),
            batch_rounds,
            1_000,
            |r| async move {
                let keys = window(r).iter().map(|o| o.primary_key());
                let batch = db
                    .batch_get::<Order>()
                    .keys(keys)
                    .customize(|b| b.set_return_consumed_capacity(None));
                Ok(batch.send().await?.items.len())
            },
            |r| async move {
                let keys = window(r)
                    .iter()
                    .map(raw::key_of)
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(raw::batch_get(client, table, keys).await?.len())
            },
        )
        .await?,
    );
    // The method's own noise and bias: the raw transaction on both sides (the "crate"
    // side on the crate's SDK client).
    pairs.push(
        measure(
            "control: raw transaction against itself",
            w,
            n,
            10,
            |r| async move {
                raw::transact_put(db.client(), table, &ten(r, "kc")).await?;
                Ok(10)
            },
            |r| async move {
                raw::transact_put(client, table, &ten(r, "kr")).await?;
                Ok(10)
            },
        )
        .await?,
    );
    Ok(pairs)
}

// ------------------------------------------------------------------ one operation

/// CPU time (user + system) of this process, all threads; children (DynamoDB Local's JVM)
/// are not counted.
fn cpu_time() -> Duration {
    // SAFETY: getrusage writes into the zeroed struct it is given and reads nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1_000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// One call of operation `op` through the crate (`raw == false`) or the raw code.
async fn one(ctx: Ctx<'_>, op: &str, raw: bool, r: usize) -> Result<usize, BoxError> {
    let Ctx {
        db,
        client,
        table,
        orders,
    } = ctx;
    let o = &orders[(r * 7_919) % orders.len()];
    let start = (r * 1_000) % (orders.len() - 999);
    let window = &orders[start..start + 1_000];
    let tag = if raw { "r" } else { "c" };
    Ok(match (op, raw) {
        ("put", false) => {
            db.put(&order(&format!("pput{r:07}"), r, tag)).await?;
            1
        }
        ("put", true) => {
            raw::put(client, table, &order(&format!("pput{r:07}"), r, tag)).await?;
            1
        }
        ("get", false) => db.get(o.primary_key()).await?.map_or(0, |_| 1),
        ("get", true) => raw::get(client, table, &o.user_id, o.created_at, &o.order_id)
            .await?
            .map_or(0, |_| 1),
        ("query", false) => {
            let q = db.query(Order::partition(o.user_id.as_str()));
            q.reverse().limit(10).all().await?.items.len()
        }
        ("query", true) => raw::newest(client, table, &o.user_id, 10).await?.len(),
        ("batch", false) => {
            let keys = window.iter().map(|o| o.primary_key());
            db.batch_get::<Order>().keys(keys).send().await?.items.len()
        }
        ("batch", true) => {
            let keys = window
                .iter()
                .map(raw::key_of)
                .collect::<Result<Vec<_>, _>>()?;
            raw::batch_get(client, table, keys).await?.len()
        }
        ("tx", _) => {
            let ten: Vec<Order> = (0..10)
                .map(|i| order(&format!("ptx{r:07}"), i, tag))
                .collect();
            if raw {
                raw::transact_put(client, table, &ten).await?;
            } else {
                let tx = ten
                    .iter()
                    .fold(db.transact_write(), |tx, o| tx.put(db.put(o)));
                tx.await?;
            }
            10
        }
        _ => return Err(format!("--only {op}: expected put, get, query, batch or tx").into()),
    })
}

/// `--only`: `calls` calls of one operation per side after `calls / 10` of warm-up,
/// alternating sides call by call; wall and CPU time per call, medians of 10 blocks.
async fn only(ctx: Ctx<'_>, op: &str, calls: usize, sides: &[bool]) -> Result<(), BoxError> {
    let blocks = 10;
    let per_block = calls.div_ceil(blocks).max(1);
    // [block][side] -> (wall, cpu)
    let mut totals = vec![[(Duration::ZERO, Duration::ZERO); 2]; blocks];
    for r in 0..calls / 10 {
        for &raw in sides {
            one(ctx, op, raw, r).await?;
        }
    }
    for (block, total) in totals.iter_mut().enumerate() {
        for i in 0..per_block {
            let r = calls + block * per_block + i;
            for &raw in sides {
                let (wall, cpu) = (Instant::now(), cpu_time());
                one(ctx, op, raw, r).await?;
                let t = &mut total[raw as usize];
                t.0 += wall.elapsed();
                t.1 += cpu_time() - cpu;
            }
        }
    }
    println!(
        "| {op}, {} calls a side | wall per call | bench process CPU per call |\n| --- | --- | --- |",
        blocks * per_block
    );
    for &raw in sides {
        let side = |f: fn((Duration, Duration)) -> Duration| -> Vec<Duration> {
            totals
                .iter()
                .map(|t| f(t[raw as usize]) / per_block as u32)
                .collect()
        };
        let (mut wall, mut cpu) = (side(|t| t.0), side(|t| t.1));
        wall.sort();
        cpu.sort();
        println!(
            "| {} | {:.1} µs | {:.1} µs |",
            if raw { "raw" } else { "crate" },
            median(&wall).as_secs_f64() * 1e6,
            median(&cpu).as_secs_f64() * 1e6
        );
    }
    Ok(())
}

/// Records every request body and the time from its transmission to its response (the
/// HTTP round trip: DynamoDB Local's work plus loopback), through an SDK interceptor.
#[derive(Debug, Clone, Default)]
struct Wire(std::sync::Arc<std::sync::Mutex<WireLog>>);

#[derive(Debug, Default)]
struct WireLog {
    sent: Option<Instant>,
    bodies: Vec<Vec<u8>>,
    round_trips: Vec<Duration>,
}

impl Intercept for Wire {
    fn name(&self) -> &'static str {
        "bench::Wire"
    }

    fn read_before_transmit(
        &self,
        context: &BeforeTransmitInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        _: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let body = context
            .request()
            .body()
            .bytes()
            .unwrap_or_default()
            .to_vec();
        let mut log = self.0.lock().map_err(|_| "wire log poisoned")?;
        log.bodies.push(body);
        log.sent = Some(Instant::now());
        Ok(())
    }

    fn read_after_transmit(
        &self,
        _: &BeforeDeserializationInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        _: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let mut log = self.0.lock().map_err(|_| "wire log poisoned")?;
        if let Some(sent) = log.sent.take() {
            log.round_trips.push(sent.elapsed());
        }
        Ok(())
    }
}

/// `--only OP --wire`: both sides through an SDK client that records request bodies and
/// HTTP round trips; prints the first body of each side, the body sizes, and per call the
/// median of the whole call, of the round trip, and of what is left (client work).
async fn wire(ctx: Ctx<'_>, op: &str, calls: usize) -> Result<(), BoxError> {
    let log = Wire::default();
    let config = ctx
        .client
        .config()
        .to_builder()
        .interceptor(log.clone())
        .build();
    let client = Client::from_conf(config);
    let db = dynamo_model::Db::<Shop>::new(client.clone(), ctx.table);
    let ctx = Ctx {
        db: &db,
        client: &client,
        ..ctx
    };
    // [side] -> (call, round trip) per call; bodies of the first recorded call.
    let mut times: [Vec<(Duration, Duration)>; 2] = Default::default();
    let mut first: [Vec<Vec<u8>>; 2] = Default::default();
    for r in 0..calls + calls / 10 {
        for raw in [r % 2 == 1, r % 2 == 0] {
            std::mem::take(&mut *log.0.lock().map_err(|_| "poisoned")?);
            let start = Instant::now();
            one(ctx, op, raw, 1_000_000 + r).await?;
            let call = start.elapsed();
            let got = std::mem::take(&mut *log.0.lock().map_err(|_| "poisoned")?);
            if r >= calls / 10 {
                times[raw as usize].push((call, got.round_trips.iter().sum()));
                if first[raw as usize].is_empty() {
                    first[raw as usize] = got.bodies;
                }
            }
        }
    }
    for (side, bodies) in ["crate", "raw"].iter().zip(&first) {
        let sizes: Vec<usize> = bodies.iter().map(Vec::len).collect();
        println!("{side}: {} request(s) of {sizes:?} bytes", bodies.len());
        if let Some(b) = bodies.first() {
            println!("  {}", String::from_utf8_lossy(b));
        }
    }
    println!("\n| {op}, {calls} interleaved calls a side | call (median) | HTTP round trip (median) | call − round trip (median) |\n| --- | --- | --- | --- |");
    for (side, t) in ["crate", "raw"].iter().zip(&times) {
        let mut call: Vec<Duration> = t.iter().map(|x| x.0).collect();
        let mut rt: Vec<Duration> = t.iter().map(|x| x.1).collect();
        let mut rest: Vec<Duration> = t.iter().map(|x| x.0.saturating_sub(x.1)).collect();
        call.sort();
        rt.sort();
        rest.sort();
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        println!(
            "| {side} | {:.1} µs | {:.1} µs | {:.1} µs |",
            us(median(&call)),
            us(median(&rt)),
            us(median(&rest))
        );
    }
    Ok(())
}

// ------------------------------------------------------------------ main

struct Plan {
    warmup: usize,
    rounds: usize,
    batch_rounds: usize,
    users: usize,
    many: usize,
    many_runs: usize,
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let quick = args.iter().any(|a| a == "--quick");
    let plan = if quick {
        Plan {
            warmup: 5,
            rounds: 30,
            batch_rounds: 10,
            users: 20,
            many: 1_000,
            many_runs: 1,
        }
    } else {
        Plan {
            warmup: 50,
            rounds: 1_000,
            batch_rounds: 200,
            users: 200,
            many: 10_000,
            many_runs: 3,
        }
    };
    if cfg!(debug_assertions) {
        eprintln!("warning: a debug build; run with --release for meaningful figures");
    }
    if args.iter().any(|a| a == "--chunked") {
        return chunked(if quick { 2 } else { 5 }).await;
    }
    if args.iter().any(|a| a == "--scatter") {
        return scatter(if quick { 5 } else { 21 }).await;
    }

    let db = local::fresh_table::<Shop>().await?;
    let client = local::client().await?;
    let table = db.table_name().to_owned();

    let orders = seed_orders(plan.users);
    let loaded = db.bulk_load().puts(&orders).send().await?;
    if loaded.written != orders.len() {
        return Err(format!("seeded {} of {} orders", loaded.written, orders.len()).into());
    }
    println!(
        "table {table}: {} orders in {} partitions of {ORDERS_PER_USER}\n",
        orders.len(),
        plan.users
    );
    println!("What the crate sends on top of the raw code (checked with `params()`):\n");
    check_equivalence(&db, &client, &orders).await?;
    println!();

    let ctx = Ctx {
        db: &db,
        client: &client,
        table: &table,
        orders: &orders,
    };
    if args.iter().any(|a| a == "--insight") {
        return insight_overhead(ctx, &plan).await;
    }
    if let Some(op) = arg("--only") {
        let calls = arg("--calls").map_or(Ok(1_000), |n| n.parse())?;
        let sides: &[bool] = match arg("--side").as_deref() {
            Some("crate") => &[false],
            Some("raw") => &[true],
            _ => &[false, true],
        };
        if args.iter().any(|a| a == "--wire") {
            return wire(ctx, &op, calls).await;
        }
        return only(ctx, &op, calls, sides).await;
    }
    // The JVM of DynamoDB Local compiles its hot paths while running: one unrecorded pass
    // of everything first, so no operation is measured on colder code than another.
    suite(ctx, "w", plan.warmup * 4, 0, 0).await?;
    let (w, n) = (plan.warmup, plan.rounds);
    let pairs = suite(ctx, "m", w, n, plan.batch_rounds).await?;
    let (diagnosis, pairs): (Vec<Pair>, Vec<Pair>) =
        pairs.into_iter().partition(|p| p.name.contains(':'));

    println!(
        "Crate against hand-written aws-sdk-dynamodb: {n} interleaved rounds ({} for the \
         batch get) after an unrecorded pass of everything and {w} rounds of warm-up; \
         throughput = raw median / crate median (≥ 1: the crate is as fast); target ≥ 0.97.\n",
        plan.batch_rounds
    );
    println!("| operation | crate median | crate p99 | raw median | raw p99 | throughput crate/raw | target |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for pair in &pairs {
        println!("{}", pair.row(true));
    }
    println!(
        "\nDiagnosis: the crate's extras taken out with `customize()` (not a setting to \
         use), and a control pitting the raw code against itself:\n"
    );
    println!(
        "| operation | crate median | crate p99 | raw median | raw p99 | throughput crate/raw |"
    );
    println!("| --- | --- | --- | --- | --- | --- |");
    for pair in &diagnosis {
        println!("{}", pair.row(false));
    }
    println!();

    // Many keys: one batch get against as many sequential gets, through the crate.
    let many = &orders[..plan.many.min(orders.len())];
    let mut batch_times = Vec::new();
    let mut sequential_times = Vec::new();
    // Warm-up: one batch of a different window.
    db.batch_get::<Order>()
        .keys(
            orders[orders.len() - 1_000..]
                .iter()
                .map(|o| o.primary_key()),
        )
        .send()
        .await?;
    for _ in 0..plan.many_runs {
        let start = Instant::now();
        let out = db
            .batch_get::<Order>()
            .keys(many.iter().map(|o| o.primary_key()))
            .send()
            .await?;
        batch_times.push(start.elapsed());
        if out.items.len() != many.len() {
            return Err(format!("batch get: {} of {} orders", out.items.len(), many.len()).into());
        }
        let start = Instant::now();
        for o in many {
            if db.get(o.primary_key()).await?.is_none() {
                return Err(format!("get: no order {}", o.primary_key()).into());
            }
        }
        sequential_times.push(start.elapsed());
    }
    batch_times.sort();
    sequential_times.sort();
    let (b, s) = (median(&batch_times), median(&sequential_times));
    let speedup = s.as_secs_f64() / b.as_secs_f64();
    println!(
        "{} keys through the crate, median of {} interleaved runs (target: batch ≥ 10× faster):\n",
        many.len(),
        plan.many_runs
    );
    println!("| reading {} orders | time | keys/s |", many.len());
    println!("| --- | --- | --- |");
    for (what, d) in [
        ("`batch_get` (100 keys a call, 4 calls at once)", b),
        ("sequential `get`s", s),
    ] {
        println!(
            "| {what} | {:.3} s | {:.0} |",
            d.as_secs_f64(),
            many.len() as f64 / d.as_secs_f64()
        );
    }
    println!(
        "\nspeed-up: {speedup:.1}× ({})",
        if speedup >= 10.0 { "met" } else { "not met" }
    );
    chunked(if quick { 2 } else { 5 }).await?;
    scatter(if quick { 5 } else { 21 }).await?;
    Ok(())
}

/// Every operation through a `Db` observed by an insight (hot partitions, read shapes)
/// against the same `Db` without one, interleaved round by round after a warm-up pass.
async fn insight_overhead(ctx: Ctx<'_>, plan: &Plan) -> Result<(), BoxError> {
    let insight = dynamo_model::insight::Insight::new();
    let observed = ctx.db.observed(&insight);
    let on = Ctx {
        db: &observed,
        ..ctx
    };
    let (w, n) = (plan.warmup, plan.rounds);
    // Warm both paths first (the JVM of DynamoDB Local, the insight's first allocations).
    overhead_pairs(on, ctx, "iw", w * 4, 0, 0).await?;
    let pairs = overhead_pairs(on, ctx, "im", w, n, plan.batch_rounds).await?;
    println!(
        "Insight on against off, the same `Db`: {n} interleaved rounds ({} for the batch \
         get) after an unrecorded pass and {w} rounds of warm-up; throughput = off median / \
         on median (≥ 0.97: overhead at most 3 %).\n",
        plan.batch_rounds
    );
    println!(
        "| operation | on median | on p99 | off median | off p99 | throughput on/off | target |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for pair in &pairs {
        println!("{}", pair.row(true));
    }
    println!(
        "\nThe insight kept {} partitions and holds {} bytes.",
        insight.hot_partitions().len(),
        insight.footprint()
    );
    Ok(())
}

/// The operations of [`suite`], each through `on` and `off`, `pass` keeping keys written
/// apart.
async fn overhead_pairs(
    on: Ctx<'_>,
    off: Ctx<'_>,
    pass: &str,
    w: usize,
    n: usize,
    batch_rounds: usize,
) -> Result<Vec<Pair>, BoxError> {
    let orders = on.orders;
    let pick = |round: usize| &orders[(round * 7_919) % orders.len()];
    let key = |o: &Order| {
        Order::key(OrderKey {
            user_id: o.user_id.as_str(),
            created_at: o.created_at,
            order_id: o.order_id.as_str(),
        })
    };
    type Shopping = dynamo_model::Db<Shop>;
    let put = |side: &'static str, db: &Shopping, r: usize| {
        let (db, o) = (
            db.clone(),
            order(&format!("{pass}{side}put{r:05}"), r, side),
        );
        async move {
            db.put(&o).await?;
            Ok::<usize, BoxError>(1)
        }
    };
    let get = |db: &Shopping, r: usize| {
        let (db, k) = (db.clone(), key(pick(r)));
        async move { Ok::<usize, BoxError>(db.get(k).await?.map_or(0, |_| 1)) }
    };
    let query = |db: &Shopping, r: usize| {
        let (db, user) = (db.clone(), pick(r).user_id.clone());
        async move {
            let q = db
                .query(Order::partition(user.as_str()))
                .reverse()
                .limit(10);
            Ok::<usize, BoxError>(q.all().await?.items.len())
        }
    };
    let batch = |db: &Shopping, r: usize| {
        let start = (r * 1_000) % (orders.len() - 999);
        let keys: Vec<_> = orders[start..start + 1_000].iter().map(key).collect();
        let db = db.clone();
        async move {
            let out = db.batch_get::<Order>().keys(keys).send().await?;
            Ok::<usize, BoxError>(out.items.len())
        }
    };
    let tx = |side: &'static str, db: &Shopping, r: usize| {
        let ten: Vec<Order> = (0..10)
            .map(|i| order(&format!("{pass}{side}tx{r:05}"), i, side))
            .collect();
        let db = db.clone();
        async move {
            let t = ten
                .iter()
                .fold(db.transact_write(), |t, o| t.put(db.put(o)));
            t.await?;
            Ok::<usize, BoxError>(10)
        }
    };
    let (on, off) = (on.db, off.db);
    Ok(vec![
        measure("put", w, n, 1, |r| put("on", on, r), |r| put("off", off, r)).await?,
        measure("get", w, n, 1, |r| get(on, r), |r| get(off, r)).await?,
        measure(
            "query (10 newest of 50)",
            w,
            n,
            10,
            |r| query(on, r),
            |r| query(off, r),
        )
        .await?,
        measure(
            "batch get (1,000 keys)",
            w.min(5),
            batch_rounds,
            1_000,
            |r| batch(on, r),
            |r| batch(off, r),
        )
        .await?,
        measure(
            "transaction (10 puts)",
            w,
            n,
            10,
            |r| tx("on", on, r),
            |r| tx("off", off, r),
        )
        .await?,
    ])
}

/// A 10 MB value in a `#[dynamo(chunked)]` field (350 KiB chunks): `db.put` (read the
/// stored manifests, write the chunks, flip the item) and `db.get` (the item, then its
/// chunks), timed and with the requests counted by a recording connector.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, pk = "BLOB#{id}", sk = "BLOB")]
struct Blob {
    id: String,
    #[dynamo(chunked)]
    data: dynamo_model::Chunked<Vec<u8>>,
}

async fn chunked(runs: usize) -> Result<(), BoxError> {
    use dynamo_model::local::faults::{client_with_faults, Faults};
    const SIZE: usize = 10 << 20;
    let db = local::fresh_table::<Shop>().await?;
    let endpoint = tokio::task::spawn_blocking(local::shared_endpoint).await??;
    let faults = Faults::new(0).record();
    let retries = dynamo_model::aws_sdk_dynamodb::config::retry::RetryConfig::standard();
    let db: dynamo_model::Db<Shop> = dynamo_model::Db::new(
        client_with_faults(&endpoint, &faults, retries),
        db.table_name(),
    );
    let (mut puts, mut gets) = (Vec::new(), Vec::new());
    let (mut put_calls, mut get_calls) = (Vec::new(), Vec::new());
    for run in 0..runs + 1 {
        // Different bytes each run, so every put writes new chunks and deletes the old.
        let data: Vec<u8> = (0..SIZE)
            .map(|i| (i as u8) ^ (run as u8).wrapping_mul(37))
            .collect();
        let blob = Blob {
            id: "b".into(),
            data: data.clone().into(),
        };
        let before = faults.calls();
        let start = Instant::now();
        db.put(&blob).await?;
        let put = start.elapsed();
        let mid = faults.calls();
        let start = Instant::now();
        let back = db.get(Blob::key("b")).await?.ok_or("the blob is missing")?;
        let get = start.elapsed();
        let after = faults.calls();
        if back.data.get() != Some(&data) {
            return Err("the 10 MB value read back differs".into());
        }
        if run == 0 {
            continue; // warm-up
        }
        puts.push(put);
        gets.push(get);
        put_calls.push(summary(&mid[before.len()..]));
        get_calls.push(summary(&after[mid.len()..]));
    }
    puts.sort();
    gets.sort();
    let mb = SIZE as f64 / (1024.0 * 1024.0);
    println!(
        "\nA 10 MiB chunked value (350 KiB chunks), median of {runs} runs after one warm-up:\n"
    );
    println!("| operation | time | throughput | requests |");
    println!("| --- | --- | --- | --- |");
    for (what, times, calls) in [
        ("`db.put`", &puts, &put_calls),
        ("`db.get`", &gets, &get_calls),
    ] {
        let t = median(times);
        println!(
            "| {what} | {} | {:.1} MiB/s | {} |",
            ms(t),
            mb / t.as_secs_f64(),
            calls.first().cloned().unwrap_or_default()
        );
    }
    Ok(())
}

/// `3 BatchWriteItem, 1 GetItem, ...`: the calls of one operation, by kind.
fn summary(calls: &[dynamo_model::local::faults::Call]) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for c in calls {
        match counts.iter_mut().find(|(op, _)| *op == c.operation) {
            Some((_, n)) => *n += 1,
            None => counts.push((c.operation.clone(), 1)),
        }
    }
    counts
        .iter()
        .map(|(op, n)| format!("{n} {op}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A reading of one day, written over 16 partitions (a hot key sharded).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, pk = "READINGS#{day}#{shard}", sk = "{at}#{sensor}")]
struct Reading {
    day: String,
    shard: u8,
    at: u64,
    sensor: u32,
    value: u64,
    unit: String,
}

const SHARDS: u8 = 16;
const READINGS_PER_SHARD: u64 = 250;

/// `db.scatter_query` over 16 partitions against the same 16 queries one after another
/// (then merged in memory), same data, interleaved run by run: the whole day (pages of
/// 50 items, so 5 requests a partition) and the 50 latest readings (`reverse().limit(50)`).
/// Then the same against DynamoDB Local behind 10 ms of injected latency a request, as a
/// network to DynamoDB adds, since on a local JVM sharing the machine's cores the requests
/// of both sides compete for the same CPUs.
async fn scatter(runs: usize) -> Result<(), BoxError> {
    use dynamo_model::local::faults::{client_with_faults, FaultKind, Faults};
    let table = local::fresh_table::<Shop>().await?;
    let readings: Vec<Reading> = (0..SHARDS)
        .flat_map(|shard| {
            (0..READINGS_PER_SHARD).map(move |i| Reading {
                day: "2026-11-03".into(),
                shard,
                // Interleaved across shards, as a hash of the sensor spreads them.
                at: 1_700_000_000 + i * u64::from(SHARDS) + u64::from(shard),
                sensor: u32::from(shard) * 1000 + i as u32,
                value: i * 7 % 101,
                unit: "kWh".into(),
            })
        })
        .collect();
    let loaded = table.bulk_load().puts(&readings).send().await?;
    if loaded.written != readings.len() {
        return Err(format!("seeded {} of {} readings", loaded.written, readings.len()).into());
    }
    let endpoint = tokio::task::spawn_blocking(local::shared_endpoint).await??;
    let latency = Faults::new(0).kinds([FaultKind::Delay(Duration::from_millis(10))]);
    let retries = dynamo_model::aws_sdk_dynamodb::config::retry::RetryConfig::standard();
    let slow: dynamo_model::Db<Shop> = dynamo_model::Db::new(
        client_with_faults(&endpoint, &latency, retries),
        table.table_name(),
    );
    println!(
        "\nScatter-gather: {} readings in {SHARDS} partitions of {READINGS_PER_SHARD}, \
         `db.scatter_query` (default concurrency {}) against the {SHARDS} queries one after \
         another and merged in memory; median of {runs} interleaved runs after one warm-up \
         (target: ≤ 0.3× the wall time):\n",
        readings.len(),
        dynamo_model::read::DEFAULT_SCATTER_CONCURRENCY
    );
    println!("| workload | one after another | `scatter_query` | ratio | target |");
    println!("| --- | --- | --- | --- | --- |");
    for (db, behind) in [(&*table, "DynamoDB Local"), (&slow, "+ 10 ms a request")] {
        for latest in [false, true] {
            let (sequential, merged) = scatter_runs(db, runs, latest, &readings).await?;
            let ratio = merged.as_secs_f64() / sequential.as_secs_f64();
            let what = if latest {
                "the 50 latest (`reverse().limit(50)`)"
            } else {
                "the whole day (pages of 50)"
            };
            println!(
                "| {what}, {behind} | {} | {} | {ratio:.2}× | {} |",
                ms(sequential),
                ms(merged),
                if ratio <= 0.3 { "met" } else { "not met" }
            );
        }
    }
    Ok(())
}

/// Median wall times of the sequential and the merged read, checked to return the same
/// readings.
async fn scatter_runs(
    db: &dynamo_model::Db<Shop>,
    runs: usize,
    latest: bool,
    readings: &[Reading],
) -> Result<(Duration, Duration), BoxError> {
    let partition = |shard| {
        Reading::partition(ReadingPartition {
            day: "2026-11-03",
            shard,
        })
    };
    let sequential = || async move {
        let mut all = Vec::new();
        for shard in 0..SHARDS {
            let q = db.query(partition(shard));
            let page = if latest {
                q.reverse().limit(50).all().await?
            } else {
                q.page_size(50).all().await?
            };
            all.extend(page.items);
        }
        if latest {
            all.sort_by_key(|r: &Reading| std::cmp::Reverse(r.at));
            all.truncate(50);
        } else {
            all.sort_by_key(|r| r.at);
        }
        Ok::<_, dynamo_model::Error>(all)
    };
    let merged = || async move {
        let q = db.scatter_query((0..SHARDS).map(partition));
        let page = if latest {
            q.reverse().limit(50).all().await?
        } else {
            q.page_size(50).all().await?
        };
        Ok::<_, dynamo_model::Error>(page.items)
    };
    let expected: Vec<&Reading> = if latest {
        let mut newest: Vec<&Reading> = readings.iter().collect();
        newest.sort_by_key(|r| std::cmp::Reverse(r.at));
        newest.truncate(50);
        newest
    } else {
        let mut all: Vec<&Reading> = readings.iter().collect();
        all.sort_by_key(|r| r.at);
        all
    };
    let (mut seq_times, mut merged_times) = (Vec::new(), Vec::new());
    for run in 0..=runs {
        // Alternate which side goes first.
        let mut order = [true, false];
        if run % 2 == 1 {
            order.reverse();
        }
        for one_by_one in order {
            let start = Instant::now();
            let got = if one_by_one {
                sequential().await?
            } else {
                merged().await?
            };
            let took = start.elapsed();
            if got.iter().ne(expected.iter().copied()) {
                return Err(format!(
                    "{} returned other readings",
                    if one_by_one {
                        "one after another"
                    } else {
                        "scatter_query"
                    }
                )
                .into());
            }
            if run > 0 {
                if one_by_one {
                    seq_times.push(took);
                } else {
                    merged_times.push(took);
                }
            }
        }
    }
    seq_times.sort();
    merged_times.sort();
    Ok((median(&seq_times), median(&merged_times)))
}
