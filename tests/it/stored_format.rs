//! Golden stored-format tests: what the crate writes to DynamoDB, pinned in checked-in
//! fixtures (`tests/it/stored_format/*.json`, items in DynamoDB JSON).
//!
//! Each test runs a scenario through the crate on a fresh table and compares every item
//! of the table, as stored (attribute names, types, string and number text, bytes), with
//! its fixture; then writes the fixture's items, as another program would, into a second
//! fresh table and reads them back through the crate into the expected typed values.
//!
//! Values the crate draws at random or from the clock are compared by shape, the rest
//! exactly: write tokens (`_wt`, 16 base64url characters; tokens a test hands in,
//! `Golden…`, exactly), chunk tokens (22 base64url characters, the same token wherever
//! one write names it) and the times of chunks and revisions (`_ct`, `_vt`, 13 digits).
//!
//! `STORED_FORMAT_WRITE=1 cargo test -p tests --test it stored_format` rewrites the
//! fixtures from what the code stores now; without it a difference fails the test and
//! nothing is written.

use crate::common::*;
// The tables of AWS's number-based layout are the history tests' own: one declaration of
// each layout, pinned here and exercised there.
use crate::history_shared_partition::{Gauge, Plant, Press, Valve};
use crate::migrate::{truck_row, Fleet, Truck};
use dynamo_model::aws_sdk_dynamodb::primitives::Blob;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::history::Revision;
use dynamo_model::item::WriteToken;
use dynamo_model::{
    local, Attribute, Binary, Chunked, Cursor, Db, Entity, Epoch, Item, Serde, Table,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt::Debug;
use std::path::PathBuf;
use time::macros::{date, datetime};
use time::{OffsetDateTime, PrimitiveDateTime};
use uuid::Uuid;

// ---------------------------------------------------------------------------------------
// Fixtures: DynamoDB JSON, canonical comparison, regeneration.

/// Rewrites the fixtures instead of comparing when set to `1`.
const WRITE_ENV: &str = "STORED_FORMAT_WRITE";

fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("it")
        .join("stored_format")
        .join(format!("{name}.json"))
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(BASE64[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn base64_decode(text: &str) -> Res<Vec<u8>> {
    let digits: Vec<u32> = text
        .trim_end_matches('=')
        .bytes()
        .map(|c| {
            BASE64
                .iter()
                .position(|&b| b == c)
                .map(|p| p as u32)
                .ok_or_else(|| format!("{text:?} is not base64"))
        })
        .collect::<Result<_, _>>()?;
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for group in digits.chunks(4) {
        let n = group
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, d)| n | (d << (18 - 6 * i)));
        for i in 0..group.len().saturating_sub(1) {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Ok(out)
}

/// A value in DynamoDB JSON; the members of a set in byte order (a set has none).
fn to_json(value: &AttributeValue) -> Value {
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    match value {
        AttributeValue::S(s) => json!({ "S": s }),
        AttributeValue::N(n) => json!({ "N": n }),
        AttributeValue::B(b) => json!({ "B": base64_encode(b.as_ref()) }),
        AttributeValue::Bool(b) => json!({ "BOOL": b }),
        AttributeValue::Null(b) => json!({ "NULL": b }),
        AttributeValue::L(l) => json!({ "L": l.iter().map(to_json).collect::<Vec<_>>() }),
        AttributeValue::M(m) => json!({ "M": item_json(m) }),
        AttributeValue::Ss(s) => json!({ "SS": sorted(s.clone()) }),
        AttributeValue::Ns(s) => json!({ "NS": sorted(s.clone()) }),
        AttributeValue::Bs(s) => {
            json!({ "BS": sorted(s.iter().map(|b| base64_encode(b.as_ref())).collect()) })
        }
        other => json!({ "UNKNOWN": format!("{other:?}") }),
    }
}

fn item_json(item: &Item) -> Value {
    Value::Object(
        item.iter()
            .map(|(k, v)| (k.clone(), to_json(v)))
            .collect::<BTreeMap<_, _>>()
            .into_iter()
            .collect(),
    )
}

fn from_json(value: &Value) -> Res<AttributeValue> {
    let (ty, inner) = value
        .as_object()
        .filter(|m| m.len() == 1)
        .and_then(|m| m.iter().next())
        .ok_or_else(|| format!("not DynamoDB JSON: {value}"))?;
    let text = || {
        inner
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("not a string: {inner}"))
    };
    let texts = || -> Res<Vec<String>> {
        inner
            .as_array()
            .ok_or_else(|| format!("not a set: {inner}"))?
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("not a string: {v}").into())
            })
            .collect()
    };
    Ok(match ty.as_str() {
        "S" => AttributeValue::S(text()?),
        "N" => AttributeValue::N(text()?),
        "B" => AttributeValue::B(Blob::new(base64_decode(&text()?)?)),
        "BOOL" => AttributeValue::Bool(inner.as_bool().ok_or("not a bool")?),
        "NULL" => AttributeValue::Null(inner.as_bool().ok_or("not a bool")?),
        "L" => AttributeValue::L(
            inner
                .as_array()
                .ok_or("not a list")?
                .iter()
                .map(from_json)
                .collect::<Res<_>>()?,
        ),
        "M" => AttributeValue::M(json_item(inner)?),
        "SS" => AttributeValue::Ss(texts()?),
        "NS" => AttributeValue::Ns(texts()?),
        "BS" => AttributeValue::Bs(
            texts()?
                .iter()
                .map(|t| Ok(Blob::new(base64_decode(t)?)))
                .collect::<Res<_>>()?,
        ),
        other => return Err(format!("unknown DynamoDB JSON type {other}").into()),
    })
}

fn json_item(value: &Value) -> Res<Item> {
    value
        .as_object()
        .ok_or_else(|| format!("not an item: {value}"))?
        .iter()
        .map(|(k, v)| Ok((k.clone(), from_json(v)?)))
        .collect()
}

/// Write-token attributes (the default one and the one `Stamped` declares).
const WRITE_TOKEN_ATTRIBUTES: [&str; 2] = ["_wt", "_stamp"];
/// Epoch-millisecond times the crate takes from the clock (chunks, revisions).
const CLOCK_ATTRIBUTES: [&str; 2] = ["_ct", "_vt"];
/// The prefix of the write tokens tests hand in: those are compared exactly.
const GIVEN_TOKEN: &str = "Golden";

fn base64url(text: &str, len: usize) -> bool {
    text.len() == len
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The items with what the crate draws at random or from the clock replaced by labels,
/// after checking its shape, sorted, each with its index in `items`; a shape that does
/// not hold is an error.
fn canonical(items: &[Item]) -> Res<Vec<(Value, usize)>> {
    // Chunk tokens, labelled by the item and attribute whose manifest names them.
    let mut tokens: Vec<(String, String)> = Vec::new();
    for item in items {
        let owner = item_json(
            &item
                .iter()
                .filter(|(k, _)| *k == "PK" || *k == "SK")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        );
        for (attribute, value) in item {
            if let AttributeValue::M(m) = value {
                let keys: BTreeSet<&str> = m.keys().map(String::as_str).collect();
                if keys == BTreeSet::from(["crc", "len", "n", "t"]) {
                    let token = m
                        .get("t")
                        .and_then(|t| t.as_s().ok())
                        .ok_or("a manifest token is not a string")?;
                    if !base64url(token, 22) {
                        return Err(format!("{token:?} is not a chunk token").into());
                    }
                    tokens.push((
                        token.clone(),
                        format!("<chunk token of {attribute} in {owner}>"),
                    ));
                }
            }
        }
    }
    fn relabel(value: &mut Value, tokens: &[(String, String)]) {
        match value {
            Value::String(s) => {
                for (token, label) in tokens {
                    if s.contains(token.as_str()) {
                        *s = s.replace(token.as_str(), label);
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|v| relabel(v, tokens)),
            Value::Object(o) => o.values_mut().for_each(|v| relabel(v, tokens)),
            _ => {}
        }
    }
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let mut value = item_json(item);
        let object = value.as_object_mut().ok_or("not an object")?;
        for name in WRITE_TOKEN_ATTRIBUTES {
            if let Some(v) = object.get_mut(name) {
                let token = v["S"]
                    .as_str()
                    .ok_or_else(|| format!("{name} is not a string: {v}"))?;
                if WriteToken::parse(token).is_none() {
                    return Err(format!("{name} = {token:?} is not a write token").into());
                }
                if !token.starts_with(GIVEN_TOKEN) {
                    *v = json!({ "S": "<a random write token>" });
                }
            }
        }
        for name in CLOCK_ATTRIBUTES {
            if let Some(v) = object.get_mut(name) {
                let millis = v["N"]
                    .as_str()
                    .ok_or_else(|| format!("{name} is not a number: {v}"))?;
                if millis.len() != 13 || !millis.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(format!("{name} = {millis} is not epoch milliseconds").into());
                }
                *v = json!({ "N": "<epoch milliseconds>" });
            }
        }
        relabel(&mut value, &tokens);
        if tokens
            .iter()
            .any(|(t, _)| value.to_string().contains(t.as_str()))
        {
            return Err("a chunk token is left".into());
        }
        out.push((value.to_string(), value));
    }
    let mut indexed: Vec<(String, Value, usize)> = out
        .into_iter()
        .enumerate()
        .map(|(i, (k, v))| (k, v, i))
        .collect();
    indexed.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(indexed.into_iter().map(|(_, v, i)| (v, i)).collect())
}

/// Every item of the table as stored, and the fixture `name` compared with them (and
/// with `extra`, compared exactly): returns the fixture. With `STORED_FORMAT_WRITE=1`
/// the fixture is written from them first.
async fn golden<T: Table>(db: &Db<T>, name: &str, about: &str, extra: Value) -> Res<Value> {
    let items: Vec<Item> = raw_items(db).await?;
    let path = fixture_path(name);
    if std::env::var(WRITE_ENV).as_deref() == Ok("1") {
        let ordered: Vec<Value> = canonical(&items)?
            .into_iter()
            .map(|(_, i)| item_json(&items[i]))
            .collect();
        let mut fixture = Map::new();
        fixture.insert("about".into(), Value::String(about.into()));
        fixture.insert("items".into(), Value::Array(ordered));
        if let Value::Object(extra) = extra.clone() {
            fixture.extend(extra);
        }
        let mut text = serde_json::to_string_pretty(&Value::Object(fixture))?;
        text.push('\n');
        std::fs::create_dir_all(path.parent().ok_or("no parent")?)?;
        std::fs::write(&path, text)?;
    }
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("{}: {e} (STORED_FORMAT_WRITE=1 writes it)", path.display()))?;
    let fixture: Value = serde_json::from_str(&text)?;
    let expected = fixture_items(&fixture)?;
    let shown = |items: &[Item]| -> Res<String> {
        let values: Vec<Value> = canonical(items)?.into_iter().map(|(v, _)| v).collect();
        Ok(serde_json::to_string_pretty(&values)?)
    };
    let (want, got) = (shown(&expected)?, shown(&items)?);
    assert_eq!(
        got,
        want,
        "{name}: the stored items differ from {}",
        path.display()
    );
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            assert_eq!(Some(&v), fixture.get(&k), "{name}: {k} differs");
        }
    }
    Ok(fixture)
}

fn fixture_items(fixture: &Value) -> Res<Vec<Item>> {
    fixture["items"]
        .as_array()
        .ok_or("the fixture has no items")?
        .iter()
        .map(json_item)
        .collect()
}

/// A fresh table holding the fixture's items, written with the raw SDK.
async fn loaded<T: Table>(fixture: &Value) -> Res<local::TempTable<T>> {
    let db = local::fresh_table::<T>().await?;
    put_raw_rows(&db, fixture_items(fixture)?).await?;
    Ok(db)
}

/// Each of `expected` is read back by its key, and a scan of `E` returns exactly them.
async fn reads_back<E>(db: &Db<E::Table>, expected: &[E]) -> TestResult
where
    E: Entity + Clone + PartialEq + Debug,
{
    for e in expected {
        assert_eq!(db.get(e.primary_key()).await?.as_ref(), Some(e), "get");
    }
    let scanned = db.scan::<E>().all().await?.items;
    assert_eq!(scanned.len(), expected.len(), "scan: {scanned:?}");
    for e in expected {
        assert!(scanned.contains(e), "scan misses {e:?}");
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Plain entity items: every attribute kind, the entity-type attribute, version and TTL.

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", ttl = "expires_at")]
pub struct Vault;

#[derive(Attribute, Debug, Clone, PartialEq)]
#[dynamo(rename_all = "camelCase")]
pub struct Address {
    pub street_line: String,
    #[dynamo(rename = "zip")]
    pub postal_code: Option<String>,
    pub geo: Option<Geo>,
    pub floors: Vec<u8>,
}

#[derive(Attribute, Debug, Clone, PartialEq)]
pub struct Geo {
    pub lat: f64,
    pub lon: f64,
}

#[derive(Attribute, Debug, Clone, PartialEq)]
pub struct Sku(pub String);

#[derive(Attribute, Debug, Clone, PartialEq)]
pub enum Status {
    Pending,
    Shipped {
        carrier: String,
        parcels: u32,
    },
    #[dynamo(rename = "gone")]
    Cancelled(String),
    Split(u8, String),
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Legacy {
    pub words: u32,
    pub tags: Vec<String>,
    pub ratio: f32,
    pub missing: Option<u8>,
}

/// Every attribute kind the codec has.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Vault, pk = "SPECIMEN#{id}", sk = "SPECIMEN", entity_type = "Specimen.v1",
         rename_all = "camelCase")]
pub struct Specimen {
    pub id: String,
    pub text: String,
    pub empty_text: String,
    pub flag: bool,
    pub tiny: u8,
    pub small: i16,
    pub int: i32,
    pub big: i64,
    pub huge: u64,
    pub wide: i128,
    pub ratio: f64,
    pub single: f32,
    pub minute: f64,
    pub bytes: Binary,
    pub raw_bytes: bytes::Bytes,
    pub octets: Vec<u8>,
    pub names: Vec<String>,
    pub matrix: Vec<Vec<i32>>,
    pub tags: HashSet<String>,
    pub sorted_tags: BTreeSet<String>,
    pub no_tags: BTreeSet<String>,
    pub scores: BTreeMap<String, u64>,
    pub labels: HashMap<String, String>,
    pub maybe: Option<String>,
    pub maybe_not: Option<String>,
    pub maybe_number: Option<i32>,
    pub address: Address,
    pub status: Status,
    pub statuses: Vec<Status>,
    pub sku: Sku,
    pub boxed: Box<Geo>,
    #[dynamo(serde)]
    pub legacy: Legacy,
    pub pairs: Serde<Vec<(String, u8)>>,
    pub decimal: rust_decimal::Decimal,
    pub document: serde_json::Value,
    pub any: AttributeValue,
    pub at: OffsetDateTime,
    pub day: time::Date,
    pub local: PrimitiveDateTime,
    pub chrono_day: chrono::NaiveDate,
    pub chrono_local: chrono::NaiveDateTime,
    pub chrono_at: chrono::DateTime<chrono::Utc>,
    pub uuid: Uuid,
    pub seen: Epoch,
    #[dynamo(rename = "Renamed-Field")]
    pub renamed: String,
    #[dynamo(alias = "oldName")]
    pub new_name: String,
    #[dynamo(default)]
    pub defaulted: u32,
    #[dynamo(skip)]
    pub cached: usize,
    #[dynamo(version)]
    pub version: u64,
    #[dynamo(ttl)]
    pub expires: Option<OffsetDateTime>,
}

/// A TTL of epoch seconds and a version, the entity type by default.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Vault, pk = "LEASE#{id}", sk = "LEASE")]
pub struct Lease {
    pub id: u32,
    #[dynamo(ttl)]
    pub until: u64,
    #[dynamo(version)]
    pub version: u64,
}

fn specimen_full() -> Specimen {
    let chrono_day = chrono::NaiveDate::from_ymd_opt(2024, 2, 29).unwrap_or_default();
    Specimen {
        id: "full".into(),
        text: "naïve ☃ 🦀 \"quoted\" \\ tab\t".into(),
        empty_text: String::new(),
        flag: true,
        tiny: 255,
        small: -32768,
        int: -7,
        big: i64::MIN,
        huge: u64::MAX,
        wide: -99_999_999_999_999_999_999_999_999_999_999_999_999,
        ratio: 0.1,
        single: 1.5,
        minute: -2.5e-7,
        bytes: Binary(vec![0, 1, 2, 254, 255]),
        raw_bytes: bytes::Bytes::from_static(b"\x00raw\xff"),
        octets: vec![0, 7, 255],
        names: vec!["b".into(), "a".into(), "".into()],
        matrix: vec![vec![1, -2], vec![], vec![3]],
        tags: HashSet::from(["red".to_owned(), "blue".to_owned(), "green".to_owned()]),
        sorted_tags: BTreeSet::from(["x".to_owned(), "y".to_owned()]),
        no_tags: BTreeSet::new(),
        scores: BTreeMap::from([("ann".to_owned(), 3), ("bob".to_owned(), 0)]),
        labels: HashMap::from([("k".to_owned(), "v".to_owned())]),
        maybe: Some("here".into()),
        maybe_not: None,
        maybe_number: Some(0),
        address: Address {
            street_line: "1 Main St".into(),
            postal_code: Some("12345".into()),
            geo: Some(Geo {
                lat: 52.52,
                lon: -13.405,
            }),
            floors: vec![1, 2],
        },
        status: Status::Shipped {
            carrier: "DHL".into(),
            parcels: 2,
        },
        statuses: vec![
            Status::Pending,
            Status::Cancelled("late".into()),
            Status::Split(3, "half".into()),
        ],
        sku: Sku("SKU-1".into()),
        boxed: Box::new(Geo { lat: 0.0, lon: 1.0 }),
        legacy: Legacy {
            words: 12,
            tags: vec!["old".into()],
            ratio: 0.25,
            missing: None,
        },
        pairs: Serde(vec![("a".into(), 1), ("b".into(), 2)]),
        decimal: rust_decimal::Decimal::new(-123_456_789, 4),
        document: json!({"a": [1, "two", null, true], "b": {"c": 1.5}}),
        any: AttributeValue::Ns(vec!["1".into(), "2.5".into()]),
        at: datetime!(2024-02-29 23:59:59.123456789 +02:00),
        day: date!(2024 - 02 - 29),
        local: datetime!(2024-02-29 08:30:00.5),
        chrono_day,
        chrono_local: chrono_day.and_hms_nano_opt(8, 30, 0, 1).unwrap_or_default(),
        chrono_at: chrono_day
            .and_hms_milli_opt(12, 0, 0, 250)
            .unwrap_or_default()
            .and_utc(),
        uuid: Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef),
        seen: Epoch(1_700_000_000),
        renamed: "renamed".into(),
        new_name: "new".into(),
        defaulted: 9,
        cached: 0,
        version: 0,
        expires: Some(datetime!(2030-01-01 00:00:00 UTC)),
    }
}

fn specimen_sparse() -> Specimen {
    Specimen {
        id: "sparse".into(),
        text: "a#b".into(),
        flag: false,
        tiny: 0,
        small: 0,
        int: 0,
        big: 0,
        huge: 0,
        wide: 0,
        ratio: 0.0,
        single: -0.0,
        minute: 1e100,
        bytes: Binary(Vec::new()),
        raw_bytes: bytes::Bytes::new(),
        octets: Vec::new(),
        names: Vec::new(),
        matrix: Vec::new(),
        tags: HashSet::new(),
        sorted_tags: BTreeSet::new(),
        scores: BTreeMap::new(),
        labels: HashMap::new(),
        maybe: None,
        maybe_number: None,
        address: Address {
            street_line: String::new(),
            postal_code: None,
            geo: None,
            floors: Vec::new(),
        },
        status: Status::Pending,
        statuses: Vec::new(),
        document: Value::Null,
        any: AttributeValue::Null(true),
        expires: None,
        at: datetime!(1970-01-01 00:00:00 UTC),
        seen: Epoch(-1),
        ..specimen_full()
    }
}

#[tokio::test]
async fn entity_items_keep_their_stored_form() -> TestResult {
    let written = [specimen_full(), specimen_sparse()];
    let leases = [Lease {
        id: 7,
        until: 1_900_000_000,
        version: 0,
    }];
    let db = local::fresh_table::<Vault>().await?;
    for s in &written {
        db.put(s).await?;
    }
    for l in &leases {
        db.put(l).await?;
    }
    let fixture = golden(
        &db,
        "entity_items",
        "Plain entity items: every attribute kind of the codec (strings, numbers, binary, \
         sets, lists, maps, Option, derived attribute structs and enums, serde values, \
         dates and times of time and chrono, uuid, decimal, JSON, Epoch), renamed and \
         aliased fields, the entity-type attribute `_type`, the version attribute and the \
         TTL attribute `expires_at`.",
        Value::Null,
    )
    .await?;

    let back = loaded::<Vault>(&fixture).await?;
    let stored = |s: &Specimen| Specimen {
        version: 1,
        ..s.clone()
    };
    reads_back(&back, &written.iter().map(stored).collect::<Vec<_>>()).await?;
    reads_back(
        &back,
        &leases
            .iter()
            .map(|l| Lease {
                version: 1,
                ..l.clone()
            })
            .collect::<Vec<_>>(),
    )
    .await?;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Keys: templates, order-preserving encodings, delimiters, shards, index keys, formats.

#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
    gsi(name = "GSI2", pk = "GSI2PK", sk = "GSI2SK"),
    gsi(name = "ByRegion", pk = ["tournament", "region"], sk = ["score:N", "player"]),
    lsi(name = "LSI1", sk = "LSI1SK")
)]
pub struct Keys;

/// Composite keys of every order-preserving part type; an LSI and a GSI.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Keys, pk = "ACCT#{tenant}#{account}", sk = "TX#{at}#{amount}#{seq}#{valid}",
         index(LSI1, sk = "AMOUNT#{amount}#{wide}"),
         index(GSI1, pk = "TENANT#{tenant}", sk = "{day}#{wide}#{id}"))]
pub struct Ledger {
    pub tenant: String,
    pub account: u32,
    pub at: OffsetDateTime,
    pub amount: i64,
    pub seq: u16,
    pub valid: bool,
    pub day: time::Date,
    pub wide: i128,
    pub id: Uuid,
}

/// Chrono and `PrimitiveDateTime` parts, a constant partition key.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Keys, pk = "MOMENTS", sk = "{local}#{chrono_day}#{chrono_at}#{chrono_local}#{small}#{count}")]
pub struct Moment {
    pub local: PrimitiveDateTime,
    pub chrono_day: chrono::NaiveDate,
    pub chrono_at: chrono::DateTime<chrono::Utc>,
    pub chrono_local: chrono::NaiveDateTime,
    pub small: i8,
    pub count: usize,
}

/// The `.` delimiter, and `_` on its index.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Keys, delimiter = ".", pk = "DOT.{group}", sk = "{name}.{n}",
         index(GSI2, delimiter = "_", pk = "G_{group}", sk = "{n}_{name}"))]
pub struct Dotted {
    pub group: String,
    pub name: String,
    pub n: u32,
}

/// The `|` and `:` delimiters.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Keys, delimiter = "|", pk = "PIPE|{group}", sk = "{name}|{n}",
         index(GSI2, delimiter = ":", pk = "C:{group}", sk = "{n}:{name}"))]
pub struct Piped {
    pub group: String,
    pub name: String,
    pub n: i32,
}

/// Computed parts: a day bucket and a hash shard in the partition key, an hour bucket
/// and a shard on the index.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Keys, pk = "ORDERS#{created_at:date}#{order_id:shard(16)}",
         sk = "{created_at}#{order_id}",
         index(GSI1, pk = "STATUS#{status}#{order_id:shard(8)}", sk = "{created_at:hour}#{order_id}"))]
pub struct DayOrder {
    pub order_id: String,
    pub created_at: OffsetDateTime,
    pub status: String,
}

/// A month bucket and a writer-picked random shard.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Keys, pk = "EVENTS#{at:month}#{slot:random(10)}", sk = "{at}#{id}")]
pub struct Event {
    pub id: String,
    pub at: OffsetDateTime,
    pub slot: u16,
}

/// A native multi-attribute index key.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Keys, pk = "MATCH#{match_id}", sk = "MATCH",
         index(ByRegion, pk = [tournament, region], sk = [score, player]))]
pub struct Match {
    pub match_id: u32,
    pub tournament: String,
    pub region: Option<String>,
    pub score: u32,
    pub player: String,
}

/// Every built-in key format, key-only fields among them.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Keys, pk = "DEV#{device}",
         sk = "{state}#{serial}#{plain}#{millis}#{naive}#{seconds}#{epoch_ms}",
         index(GSI2, pk = "STATE#{state}", sk = "{seconds}#{device}"))]
pub struct Formatted {
    #[dynamo(key_format = "unpadded")]
    pub device: u64,
    #[dynamo(key_format = "verbatim", key_only)]
    pub state: String,
    #[dynamo(key_format = "padded(8)")]
    pub serial: u32,
    #[dynamo(key_format = "rfc3339")]
    pub plain: OffsetDateTime,
    #[dynamo(key_format = "rfc3339(3)")]
    pub millis: OffsetDateTime,
    #[dynamo(key_format = "rfc3339(0, no_z)", rename = "Naive")]
    pub naive: PrimitiveDateTime,
    #[dynamo(key_format = "epoch_seconds")]
    pub seconds: OffsetDateTime,
    #[dynamo(key_format = "epoch_millis", key_only)]
    pub epoch_ms: chrono::DateTime<chrono::Utc>,
}

fn ledgers() -> Vec<Ledger> {
    let base = Ledger {
        tenant: "acme".into(),
        account: 7,
        at: datetime!(2024-01-01 00:30:00 +02:00),
        amount: -42,
        seq: 1,
        valid: true,
        day: date!(2024 - 01 - 01),
        wide: -15,
        id: Uuid::from_u128(1),
    };
    vec![
        base.clone(),
        Ledger {
            amount: 0,
            seq: 65535,
            valid: false,
            wide: 0,
            id: Uuid::from_u128(2),
            ..base.clone()
        },
        Ledger {
            amount: i64::MIN,
            wide: -99_999_999_999_999_999_999_999_999_999_999_999_999,
            id: Uuid::from_u128(3),
            ..base.clone()
        },
        Ledger {
            amount: i64::MAX,
            wide: 99_999_999_999_999_999_999_999_999_999_999_999_999,
            at: datetime!(1999-12-31 23:59:59.999999999 UTC),
            id: Uuid::from_u128(4),
            ..base.clone()
        },
        // Delimiters and escapes inside values.
        Ledger {
            tenant: "a#b\\c.d|e_f:g".into(),
            account: 0,
            amount: 9,
            day: date!(0001 - 01 - 01),
            wide: -1,
            id: Uuid::nil(),
            ..base
        },
    ]
}

fn moments() -> Vec<Moment> {
    let day = chrono::NaiveDate::from_ymd_opt(2024, 2, 29).unwrap_or_default();
    vec![
        Moment {
            local: datetime!(2024-02-29 08:30:00.5),
            chrono_day: day,
            chrono_at: day
                .and_hms_nano_opt(23, 59, 59, 1_999_999_999)
                .unwrap_or_default()
                .and_utc(),
            chrono_local: day.and_hms_opt(0, 0, 0).unwrap_or_default(),
            small: -128,
            count: 0,
        },
        Moment {
            local: datetime!(1970-01-01 00:00),
            chrono_day: day,
            chrono_at: day.and_hms_opt(1, 2, 3).unwrap_or_default().and_utc(),
            chrono_local: day.and_hms_micro_opt(4, 5, 6, 7).unwrap_or_default(),
            small: 127,
            count: usize::MAX,
        },
    ]
}

fn formatted() -> Vec<Formatted> {
    vec![
        Formatted {
            device: 12345,
            state: "WARNING1".into(),
            serial: 42,
            plain: datetime!(2020-04-24 14:40:00 UTC),
            millis: datetime!(2020-04-24 14:40:00.250 UTC),
            naive: datetime!(2020-04-24 14:40:00),
            seconds: datetime!(2020-04-24 14:40:00 UTC),
            epoch_ms: chrono::DateTime::from_timestamp_millis(1_587_739_200_250)
                .unwrap_or_default(),
        },
        Formatted {
            device: 0,
            state: "OK".into(),
            serial: 99_999_999,
            plain: datetime!(1999-01-02 03:04:05 -05:00),
            millis: datetime!(2001-09-09 01:46:40 UTC),
            naive: datetime!(2286-11-20 17:46:39),
            seconds: datetime!(2001-09-09 01:46:40 UTC),
            epoch_ms: chrono::DateTime::from_timestamp_millis(1_000_000_000_000)
                .unwrap_or_default(),
        },
    ]
}

#[tokio::test]
async fn keys_keep_their_stored_form() -> TestResult {
    let ledgers = ledgers();
    let moments = moments();
    let dotted = [
        Dotted {
            group: "g.1".into(),
            name: "a_b.c".into(),
            n: 3,
        },
        Dotted {
            group: "g".into(),
            name: "x#y".into(),
            n: 40,
        },
    ];
    let piped = [Piped {
        group: "p|q".into(),
        name: "r:s#t".into(),
        n: -5,
    }];
    let orders = [
        DayOrder {
            order_id: "o-1".into(),
            created_at: datetime!(2014-07-09 10:00 UTC),
            status: "OPEN".into(),
        },
        DayOrder {
            order_id: "o-2".into(),
            created_at: datetime!(2014-07-09 23:59:59.5 -01:00),
            status: "SHIPPED".into(),
        },
    ];
    let events = [
        Event {
            id: "e-1".into(),
            at: datetime!(2024-03-31 23:00 UTC),
            slot: 3,
        },
        Event {
            id: "e-2".into(),
            at: datetime!(2024-04-01 00:00 UTC),
            slot: 9,
        },
    ];
    let matches = [
        Match {
            match_id: 1,
            tournament: "worlds".into(),
            region: Some("EU".into()),
            score: 10,
            player: "ann".into(),
        },
        Match {
            match_id: 2,
            tournament: "worlds".into(),
            region: None,
            score: 100,
            player: "zed".into(),
        },
    ];
    let formatted = formatted();

    let db = local::fresh_table::<Keys>().await?;
    for e in &ledgers {
        db.put(e).await?;
    }
    for e in &moments {
        db.put(e).await?;
    }
    for e in &dotted {
        db.put(e).await?;
    }
    for e in &piped {
        db.put(e).await?;
    }
    for e in &orders {
        db.put(e).await?;
    }
    for e in &events {
        db.put(e).await?;
    }
    for e in &matches {
        db.put(e).await?;
    }
    for e in &formatted {
        db.put(e).await?;
    }
    let fixture = golden(
        &db,
        "keys",
        "Key attributes: composite partition and sort key templates; the order-preserving \
         encodings of strings (escaped delimiters), signed and unsigned integers (i8 to i128, usize), \
         bools, uuids, dates and times of time and chrono; the `.`, `_`, `|` and `:` \
         delimiters; day, hour and month buckets, hash shards and a random shard; LSI and \
         GSI key attributes (sparse where a field is absent); a native multi-attribute GSI \
         key; every built-in key_format (unpadded, padded, rfc3339, rfc3339(3), \
         rfc3339(0, no_z), epoch_seconds, epoch_millis, verbatim) with key-only fields.",
        Value::Null,
    )
    .await?;

    let back = loaded::<Keys>(&fixture).await?;
    reads_back(&back, &ledgers).await?;
    reads_back(&back, &moments).await?;
    reads_back(&back, &dotted).await?;
    reads_back(&back, &piped).await?;
    reads_back(&back, &orders).await?;
    reads_back(&back, &events).await?;
    reads_back(&back, &matches).await?;
    reads_back(&back, &formatted).await?;
    // The index keys as stored answer the index queries, in the encodings' order.
    let by_tenant = items_of(back.query(Ledger::gsi1_partition("acme"))).await?;
    let mut expected: Vec<Ledger> = ledgers[..4].to_vec();
    expected.sort_by_key(|l| l.wide);
    assert_eq!(by_tenant, expected);
    let by_amount = items_of(back.query(Ledger::lsi1_partition(LedgerLsi1Partition {
        tenant: "acme",
        account: 7,
    })))
    .await?;
    let mut expected: Vec<Ledger> = ledgers[..4].to_vec();
    expected.sort_by_key(|l| l.amount);
    assert_eq!(by_amount, expected);
    let shipped = back
        .scatter_query(DayOrder::gsi1_partition("SHIPPED"))
        .all()
        .await?
        .items;
    assert_eq!(shipped, orders[1..]);
    let eu = items_of(
        back.query(Match::by_region_partition(MatchByRegionPartition {
            tournament: "worlds",
            region: "EU",
        })),
    )
    .await?;
    assert_eq!(eu, matches[..1]);
    let dots = items_of(back.query(Dotted::gsi2_partition("g.1"))).await?;
    assert_eq!(dots, dotted[..1]);
    let warned = items_of(back.query(Formatted::gsi2_partition("WARNING1"))).await?;
    assert_eq!(warned, formatted[..1]);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Write tokens.

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
pub struct Tokens;

/// A table that names its write-token attribute.
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", write_token = "_stamp")]
pub struct Stamped;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Tokens, pk = "NOTE#{id}", sk = "NOTE")]
pub struct Note {
    pub id: String,
    pub body: String,
    pub hits: u64,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Stamped, pk = "NOTE#{id}", sk = "NOTE")]
pub struct StampedNote {
    pub id: String,
    pub body: String,
}

fn note(id: &str, body: &str) -> Note {
    Note {
        id: id.into(),
        body: body.into(),
        hits: 0,
    }
}

fn token(text: &str) -> Res<WriteToken> {
    Ok(WriteToken::parse(text).ok_or("not a token")?)
}

#[tokio::test]
async fn write_tokens_keep_their_stored_form() -> TestResult {
    let db = local::fresh_table::<Tokens>().await?;
    // A put draws a token of its own: checked by shape.
    db.put(&note("drawn", "a")).await?;
    // A put and an update handed a token store exactly it.
    db.put(&note("put", "b"))
        .write_token(token("GoldenPutToken01")?)
        .await?;
    db.put(&note("updated", "c")).await?;
    db.update(Note::key("updated"))
        .set(Note::fields().body, "c2")
        .add(Note::fields().hits, 2u64)
        .write_token(token("GoldenUpdToken01")?)
        .await?;
    // A batch put stores none; a transaction update leaves the token before it.
    db.batch_write().put(&note("batched", "d")).await?;
    db.put(&note("transacted", "e"))
        .write_token(token("GoldenPutToken02")?)
        .await?;
    db.transact_write()
        .update(
            db.update(Note::key("transacted"))
                .set(Note::fields().body, "e2"),
        )
        .await?;
    let fixture = golden(
        &db,
        "write_tokens",
        "The write-token attribute `_wt`: a put's own random token (16 base64url \
         characters, compared by shape), the token handed to a put and to an update \
         (exact), none after a batch put, the previous token left by a transaction update.",
        Value::Null,
    )
    .await?;
    let back = loaded::<Tokens>(&fixture).await?;
    reads_back(
        &back,
        &[
            note("drawn", "a"),
            note("put", "b"),
            Note {
                hits: 2,
                ..note("updated", "c2")
            },
            note("batched", "d"),
            note("transacted", "e2"),
        ],
    )
    .await?;
    // The tokens read back as tokens.
    for (pk, expected) in [
        ("NOTE#put", Some("GoldenPutToken01")),
        ("NOTE#updated", Some("GoldenUpdToken01")),
        ("NOTE#transacted", Some("GoldenPutToken02")),
        ("NOTE#batched", None),
    ] {
        let item = raw_get(&back, pk, "NOTE").await?;
        let stored = item.get("_wt").and_then(|v| v.as_s().ok());
        assert_eq!(stored.map(String::as_str), expected, "{pk}");
        if let Some(t) = stored {
            assert_eq!(token(t)?.as_str(), t);
        }
    }

    let stamped = local::fresh_table::<Stamped>().await?;
    let value = StampedNote {
        id: "s".into(),
        body: "f".into(),
    };
    stamped
        .put(&value)
        .write_token(token("GoldenStampTok01")?)
        .await?;
    let fixture = golden(
        &stamped,
        "write_tokens_named",
        "A table that declares `write_token = \"_stamp\"`: the token is stored under that \
         name (here the one handed to the put, exact), and no `_wt`.",
        Value::Null,
    )
    .await?;
    let back = loaded::<Stamped>(&fixture).await?;
    reads_back(&back, &[value]).await?;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Migration markers.

const MAP_MIGRATION: &str = "2026-golden-trips";
const RENAME_MIGRATION: &str = "2026-golden-km";

/// A rename with a marker, then a map (which writes one anyway): what each changed and
/// found already done.
async fn migrate_trucks(db: &Db<Fleet>) -> Res<[(u64, u64); 2]> {
    let renamed = db
        .migration::<Truck>(RENAME_MIGRATION)
        .rename_attribute("km", "mileage")
        .with_marker()
        .run()
        .await?;
    let mapped = db
        .migration::<Truck>(MAP_MIGRATION)
        .map(each(|t: &mut Truck| t.trips += 1))
        .run()
        .await?;
    assert!(mapped.failures.is_empty() && renamed.failures.is_empty());
    let counts = |p: &dynamo_model::migrate::Progress| (p.changed, p.already);
    Ok([counts(&renamed.progress), counts(&mapped.progress)])
}

#[tokio::test]
async fn migration_markers_keep_their_stored_form() -> TestResult {
    let db = local::fresh_table::<Fleet>().await?;
    put_raw(&db, truck_row(1, "volvo", Some(1000))).await?;
    put_raw(&db, truck_row(2, "man", None)).await?;
    assert_eq!(migrate_trucks(&db).await?, [(1, 0), (2, 0)]);
    let fixture = golden(
        &db,
        "migration_markers",
        "Rows another program wrote, after a rename (km to mileage) with a marker, then a \
         map: the string set `_migrations` holds the names of the migrations that changed \
         the row (both on the row with `km`, the map's on the other); the map's rewrite \
         added the entity type and the index keys.",
        Value::Null,
    )
    .await?;
    let back = loaded::<Fleet>(&fixture).await?;
    let expected = [
        Truck {
            id: 1,
            model: "volvo".into(),
            trips: 1,
            mileage: Some(1000),
        },
        Truck {
            id: 2,
            model: "man".into(),
            trips: 1,
            mileage: None,
        },
    ];
    reads_back(&back, &expected).await?;
    // The markers are read: running the migrations again changes nothing.
    let before = raw_items(&back).await?;
    assert_eq!(migrate_trucks(&back).await?, [(0, 1), (0, 2)]);
    let after = raw_items(&back).await?;
    assert_eq!(canonical(&after)?, canonical(&before)?);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Chunked and compressed attributes.

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
pub struct Chunks;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Chunks, pk = "INBOX#{owner}", sk = "MSG#{msg_id}")]
pub struct Message {
    pub owner: String,
    pub msg_id: String,
    #[dynamo(chunked)]
    pub body: Chunked<String>,
    #[dynamo(chunked(inline = 16, chunk_size = 1024))]
    pub attachment: Chunked<Vec<u8>>,
}

/// `chunked` with `compress`: compressed first, then split when still too large.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Chunks, pk = "THREAD#{thread}", sk = "REPLY#{reply}")]
pub struct Reply {
    pub thread: String,
    pub reply: u32,
    #[dynamo(chunked(inline = 64, chunk_size = 1024), compress = "zstd")]
    pub text: Chunked<String>,
    #[dynamo(
        chunked(inline = 64, chunk_size = 1024),
        compress(codec = "gzip", threshold = 16)
    )]
    pub raw: Chunked<Vec<u8>>,
}

/// Compressed attributes kept in the item.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Chunks, pk = "POST#{id}", sk = "POST")]
pub struct Post {
    pub id: String,
    #[dynamo(compress = "zstd")]
    pub body: String,
    #[dynamo(compress(codec = "gzip", level = 9, threshold = 32))]
    pub raw: Vec<u8>,
    #[dynamo(compress(codec = "zstd", threshold = 0))]
    pub blob: Option<Binary>,
    #[dynamo(serde, compress(codec = "gzip", threshold = 16))]
    pub meta: Legacy,
    #[dynamo(compress = "gzip")]
    pub summary: Option<String>,
}

/// `n` bytes that do not compress much.
fn noise(n: usize, seed: u8) -> Vec<u8> {
    let mut x = u32::from(seed) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 24) as u8
        })
        .collect()
}

fn prose(lines: usize) -> String {
    (0..lines)
        .map(|i| format!("line {} of a long reply\n", i % 7))
        .collect()
}

/// Each of `expected` is read back by its key (chunks loaded).
async fn gets_back<E>(db: &Db<E::Table>, expected: &[E]) -> TestResult
where
    E: Entity + Clone + PartialEq + Debug,
{
    for e in expected {
        assert_eq!(db.get(e.primary_key()).await?.as_ref(), Some(e), "get");
    }
    Ok(())
}

#[tokio::test]
async fn chunks_and_compressed_values_keep_their_stored_form() -> TestResult {
    let messages = [
        Message {
            owner: "ann".into(),
            msg_id: "inline".into(),
            body: Chunked::new("hello".into()),
            attachment: Chunked::new(vec![1, 2, 3]),
        },
        Message {
            owner: "ann".into(),
            msg_id: "chunked".into(),
            body: Chunked::new("é".repeat(700)),
            attachment: Chunked::new(noise(2100, 1)),
        },
    ];
    let replies = [Reply {
        thread: "t".into(),
        reply: 1,
        text: Chunked::new(prose(300)),
        raw: Chunked::new(noise(1500, 2)),
    }];
    let posts = [
        Post {
            id: "p".into(),
            body: prose(20),
            raw: b"abcabcabcabcabcabcabcabcabcabcabcabcabcabc".to_vec(),
            blob: Some(Binary(vec![9; 40])),
            meta: Legacy {
                words: 3,
                tags: vec!["x".into(); 8],
                ratio: 0.5,
                missing: None,
            },
            summary: None,
        },
        Post {
            id: "small".into(),
            body: "short".into(),
            raw: vec![1, 2],
            blob: None,
            meta: Legacy {
                words: 0,
                tags: Vec::new(),
                ratio: 0.0,
                missing: Some(1),
            },
            summary: Some("s".into()),
        },
    ];
    let db = local::fresh_table::<Chunks>().await?;
    for m in &messages {
        db.put(m).await?;
    }
    for r in &replies {
        db.put(r).await?;
    }
    for p in &posts {
        db.put(p).await?;
    }
    let fixture = golden(
        &db,
        "chunks",
        "Chunked attributes: a value under the inline threshold kept in the item \
         (tagged binary), a larger one as a manifest {t, n, len, crc} and chunk items \
         `_CHUNK#<token>#<k>` / `_CHUNK` with `_type` `_chunk`, `_ppk`, `_psk`, `_field`, \
         `_d` and `_ct` (tokens and times by shape); chunked values compressed first \
         (zstd, gzip); compressed attributes kept in the item (tag byte, then the codec's \
         bytes, or raw under the threshold).",
        Value::Null,
    )
    .await?;
    let back = loaded::<Chunks>(&fixture).await?;
    gets_back(&back, &messages).await?;
    gets_back(&back, &replies).await?;
    reads_back(&back, &posts).await?;
    // A listing reads the manifests without the chunks; loading them gives the values.
    let mut listed = items_of(back.query(Message::partition("ann"))).await?;
    assert!(listed.iter().any(|m| !m.attachment.is_loaded()));
    back.load_chunks(&mut listed).await?;
    listed.sort_by(|a, b| a.msg_id.cmp(&b.msg_id));
    assert_eq!(listed, [messages[1].clone(), messages[0].clone()]);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// History.

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
pub struct Archive;

/// The default layout: `v` + 20 digits + `#` + the template's sort key.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Archive, pk = "ARTICLE#{article_id}", sk = "ARTICLE", history,
         index(GSI1, pk = "AUTHOR#{author}", sk = "ARTICLE#{article_id}"))]
pub struct Article {
    pub article_id: String,
    pub author: String,
    pub title: String,
    #[dynamo(version)]
    pub version: u64,
}

/// Revisions let into GSI1.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Archive, pk = "MEMO#{memo_id}", sk = "MEMO", history(revisions_in(GSI1)),
         index(GSI1, pk = "OWNER#{owner}", sk = "MEMO#{memo_id}"))]
pub struct Memo {
    pub memo_id: String,
    pub owner: String,
    pub text: String,
    #[dynamo(version)]
    pub version: u64,
}

/// The revision times (`_vt`) the fixture holds, in milliseconds (a latest copy holds
/// its revision's).
fn fixture_times(fixture: &Value) -> Res<BTreeSet<u128>> {
    let mut times = BTreeSet::new();
    for item in fixture_items(fixture)? {
        if let Some(AttributeValue::N(ms)) = item.get("_vt") {
            times.insert(ms.parse()?);
        }
    }
    Ok(times)
}

/// The history of `key` is `expected` (oldest first), its times among the fixture's
/// (added to `seen`).
async fn history_is<E>(
    db: &Db<E::Table>,
    key: dynamo_model::Key<E>,
    expected: &[E],
    times: &BTreeSet<u128>,
    seen: &mut BTreeSet<u128>,
) -> TestResult
where
    E: dynamo_model::history::Versioned + Clone + PartialEq + Debug,
{
    let revisions: Vec<Revision<E>> = db.history::<E>().revisions(key).all().await?.items;
    let values: Vec<E> = revisions.iter().map(|r| r.value.clone()).collect();
    assert_eq!(values, expected);
    let numbers: Vec<u64> = revisions.iter().map(|r| r.revision).collect();
    assert_eq!(numbers, (1..=expected.len() as u64).collect::<Vec<_>>());
    for r in &revisions {
        let at = r.revised_at.ok_or("a revision without its time")?;
        let ms = at.duration_since(std::time::UNIX_EPOCH)?.as_millis();
        assert!(times.contains(&ms), "{ms} is not a time of the fixture");
        seen.insert(ms);
    }
    Ok(())
}

#[tokio::test]
async fn history_keeps_its_stored_form() -> TestResult {
    let db = local::fresh_table::<Archive>().await?;
    let article = |title: &str, version| Article {
        article_id: "a-1".into(),
        author: "ann".into(),
        title: title.into(),
        version,
    };
    let versions = db.history::<Article>();
    versions.create(&article("t1", 0)).await?;
    for title in ["t2", "t3"] {
        versions
            .revise(Article::key("a-1"), |a| a.title = title.into())
            .await?;
    }
    let memo = |text: &str, version| Memo {
        memo_id: "m-1".into(),
        owner: "bob".into(),
        text: text.into(),
        version,
    };
    db.history::<Memo>().create(&memo("hi", 0)).await?;
    db.history::<Memo>()
        .revise(Memo::key("m-1"), |m| m.text = "hello".into())
        .await?;
    let fixture = golden(
        &db,
        "history",
        "Version-prefix history, default layout: the latest copy under \
         `v00000000000000000000#<sk>` with the index keys, revision k under `v<k, 20 \
         digits>#<sk>` with its number in the version attribute, `_vt` (by shape) and \
         `_wt`; revisions carry no index keys unless `revisions_in(GSI1)`.",
        Value::Null,
    )
    .await?;
    let back = loaded::<Archive>(&fixture).await?;
    let (times, mut seen) = (fixture_times(&fixture)?, BTreeSet::new());
    history_is(
        &back,
        Article::key("a-1"),
        &[article("t1", 1), article("t2", 2), article("t3", 3)],
        &times,
        &mut seen,
    )
    .await?;
    history_is(
        &back,
        Memo::key("m-1"),
        &[memo("hi", 1), memo("hello", 2)],
        &times,
        &mut seen,
    )
    .await?;
    assert_eq!(seen, times, "every time of the fixture is a revision's");
    reads_back(&back, &[article("t3", 3)]).await?;
    reads_back(&back, &[memo("hello", 2)]).await?;
    let by_author = items_of(back.query(Article::gsi1_partition("ann"))).await?;
    assert_eq!(by_author, [article("t3", 3)]);
    Ok(())
}

#[tokio::test]
async fn aws_number_based_history_keeps_its_stored_form() -> TestResult {
    let db = local::fresh_table::<Plant>().await?;
    let press = |body: &str, latest| Press {
        id: "p".into(),
        body: body.into(),
        latest,
    };
    let gauge = |body: &str, latest| Gauge {
        id: "p".into(),
        body: body.into(),
        latest,
    };
    let valve = |body: &str, version| Valve {
        id: "p".into(),
        body: body.into(),
        version,
    };
    db.history::<Press>().create(&press("press1", 0)).await?;
    db.history::<Gauge>().create(&gauge("gauge1", 0)).await?;
    db.history::<Valve>().create(&valve("valve1", 0)).await?;
    for k in 2..=3 {
        db.history::<Press>()
            .revise(Press::key("p"), |p| p.body = format!("press{k}"))
            .await?;
        db.history::<Gauge>()
            .revise(Gauge::key("p"), |g| g.body = format!("gauge{k}"))
            .await?;
        db.history::<Valve>()
            .revise(Valve::key("p"), |v| v.body = format!("valve{k}"))
            .await?;
    }
    let fixture = golden(
        &db,
        "history_aws",
        "AWS's number-based history layout and its unpadded relatives, written by the \
         crate: `v0` / `v0GAUGE` hold the latest copy with the counter `Latest`, \
         revisions `v<k>` / `v<k>GAUGE` carry no counter (their number is their key's) \
         and `_vt`; `v<k>_VALVE` is unpadded with `_`, the counter `Version` on every \
         copy; the key fields are not stored (store_key_fields = false).",
        Value::Null,
    )
    .await?;
    let back = loaded::<Plant>(&fixture).await?;
    let (times, mut seen) = (fixture_times(&fixture)?, BTreeSet::new());
    history_is(
        &back,
        Press::key("p"),
        &[press("press1", 1), press("press2", 2), press("press3", 3)],
        &times,
        &mut seen,
    )
    .await?;
    history_is(
        &back,
        Gauge::key("p"),
        &[gauge("gauge1", 1), gauge("gauge2", 2), gauge("gauge3", 3)],
        &times,
        &mut seen,
    )
    .await?;
    history_is(
        &back,
        Valve::key("p"),
        &[valve("valve1", 1), valve("valve2", 2), valve("valve3", 3)],
        &times,
        &mut seen,
    )
    .await?;
    assert_eq!(seen, times, "every time of the fixture is a revision's");
    gets_back(&back, &[press("press3", 3)]).await?;
    gets_back(&back, &[gauge("gauge3", 3)]).await?;
    gets_back(&back, &[valve("valve3", 3)]).await?;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Query cursors: bound to the table's name, so this test's table has a fixed one.

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
pub struct Pages;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Pages, pk = "LOG#{log}", sk = "E#{n}",
         index(GSI1, pk = "KIND#{kind}", sk = "{n}#{log}"))]
pub struct Entry {
    pub log: String,
    pub n: u32,
    pub kind: String,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Pages, pk = "TICKS#{at:date}#{id:shard(4)}", sk = "{at}#{id}")]
pub struct Tick {
    pub id: String,
    pub at: OffsetDateTime,
}

/// The fixed name of the cursor test's table: a cursor's fingerprint covers the table's
/// name. Two runs at once against one long-lived `DYNAMODB_ENDPOINT` would share it.
const CURSOR_TABLE: &str = "stored-format-cursors";

fn entries() -> Vec<Entry> {
    (1..=5)
        .map(|n| Entry {
            log: "a".into(),
            n,
            kind: if n % 2 == 1 { "odd" } else { "even" }.into(),
        })
        .collect()
}

fn ticks() -> Vec<Tick> {
    (0..6)
        .map(|i| Tick {
            id: format!("t-{i}"),
            at: datetime!(2024-05-01 10:00 UTC) + time::Duration::minutes(i),
        })
        .collect()
}

/// The table `CURSOR_TABLE`, new and empty.
async fn cursor_table() -> Res<Db<Pages>> {
    let db = Db::<Pages>::new(local::client().await?, CURSOR_TABLE);
    // Left by a run that failed half-way, in a DynamoDB Local that outlived it.
    let _ = db.delete_table().await;
    db.create_table().await?;
    Ok(db)
}

#[tokio::test]
async fn query_cursors_keep_their_stored_form() -> TestResult {
    let db = cursor_table().await?;
    for e in entries() {
        db.put(&e).await?;
    }
    for t in ticks() {
        db.put(&t).await?;
    }
    let query = || db.query(Entry::partition("a")).limit(2);
    let reverse = || db.query(Entry::partition("a")).reverse().limit(2);
    let index = || db.query(Entry::gsi1_partition("odd")).limit(1);
    let day = datetime!(2024-05-01 00:00 UTC);
    let scatter = || db.scatter_query(Tick::partition(day)).limit(2);
    let text = |c: Option<Cursor>| -> Res<String> {
        Ok(c.ok_or("no cursor after a full page")?.to_string())
    };
    let cursors = json!({
        "query": text(query().page(None).await?.cursor)?,
        "query_reverse": text(reverse().page(None).await?.cursor)?,
        "index": text(index().page(None).await?.cursor)?,
        "scatter": text(scatter().page(None).await?.cursor)?,
    });
    let fixture = golden(
        &db,
        "cursors",
        "Query cursors (URL-safe base64 of version, query fingerprint, last key, \
         checksum) after the first page of: a table query (limit 2), the same reversed, \
         a GSI query (limit 1, the index key in the cursor), and a scatter query over \
         four hash shards (limit 2, a position per shard); table `stored-format-cursors` \
         (the fingerprint covers the table's name).",
        json!({ "cursors": cursors }),
    )
    .await?;
    db.delete_table().await?;

    // The fixture's cursors resume where their first pages ended.
    let db = cursor_table().await?;
    put_raw_rows(&db, fixture_items(&fixture)?).await?;
    let cursor = |name: &str| -> Res<Cursor> {
        Ok(Cursor::from(
            fixture["cursors"][name].as_str().ok_or("no such cursor")?,
        ))
    };
    let e = entries();
    let resumed = query().page(Some(&cursor("query")?)).await?.items;
    assert_eq!(resumed, e[2..4]);
    let resumed = reverse().page(Some(&cursor("query_reverse")?)).await?.items;
    assert_eq!(resumed, [e[2].clone(), e[1].clone()]);
    let resumed = index().page(Some(&cursor("index")?)).await?.items;
    assert_eq!(resumed, e[2..3]);
    let mut rest = scatter()
        .limit(10)
        .page(Some(&cursor("scatter")?))
        .await?
        .items;
    let first = scatter().page(None).await?.items;
    rest.extend(first);
    rest.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(rest, ticks(), "the two pages hold every tick once");
    db.delete_table().await?;
    Ok(())
}
