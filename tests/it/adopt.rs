//! A table another program wrote, read and written through entities as it is: no
//! entity-type attribute, key fields only inside the keys, unpadded numbers, second-precision
//! timestamps without `Z`, an attribute renamed since. Rows are written with the raw SDK.

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::{
    local, Collection, DecodeErrorKind, Entity, Error, Item, Table, ValidationReason,
};
use std::collections::HashMap;
use time::macros::datetime;
use time::OffsetDateTime;

/// The other program's table: its own key names, no type attribute.
#[derive(Table)]
#[dynamo(
    pk = "DeviceID",
    sk = "State#Date",
    gsi(name = "ByEscalation", pk = "EscalatedTo", sk = "State#Date")
)]
pub struct Devices;

/// `DeviceID = d#12345`, `State#Date = WARNING1#2020-04-24T14:40:00`.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Devices, identify = "keys", store_key_fields = false,
         pk = "d#{device_id}", sk = "{state}#{date}",
         index(ByEscalation, pk = [escalated_to]))]
pub struct DeviceStatus {
    #[dynamo(key_format = "unpadded")]
    pub device_id: u64,
    #[dynamo(key_format = "verbatim")]
    pub state: String,
    #[dynamo(key_format = "rfc3339(0, no_z)")]
    pub date: OffsetDateTime,
    #[dynamo(rename = "EscalatedTo")]
    pub escalated_to: Option<String>,
    /// Stored as `reading` by older versions of the other program.
    #[dynamo(rename = "Reading", alias = "reading")]
    pub reading: Option<i64>,
}

/// The device's profile row: `d#12345` / `PROFILE`, typed or not.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Devices, identify = "keys", pk = "d#{device_id}", sk = "PROFILE")]
pub struct Device {
    #[dynamo(key_format = "unpadded", key_only)]
    pub device_id: u64,
    #[dynamo(rename = "Name")]
    pub name: String,
}

#[derive(Collection, Debug)]
pub enum DeviceRows {
    Status(DeviceStatus),
    Device(Device),
}

/// A row as the other program writes it.
fn row(pk: &str, sk: &str, rest: &[(&str, AttributeValue)]) -> Item {
    let mut item: Item = HashMap::from([
        ("DeviceID".to_owned(), s(pk)),
        ("State#Date".to_owned(), s(sk)),
    ]);
    item.extend(rest.iter().map(|(k, v)| ((*k).to_owned(), v.clone())));
    item
}

async fn get_raw(db: &dynamo_model::Db<Devices>, pk: &str, sk: &str) -> Res<Option<Item>> {
    let key = Item::from([
        ("DeviceID".to_owned(), s(pk)),
        ("State#Date".to_owned(), s(sk)),
    ]);
    raw_find(db, key).await
}

fn warning() -> DeviceStatus {
    DeviceStatus {
        device_id: 12345,
        state: "WARNING1".into(),
        date: datetime!(2020-04-24 14:40:00 UTC),
        escalated_to: Some("alice".into()),
        reading: Some(7),
    }
}

/// The other program's rows: two statuses (one under the old attribute name), the
/// profile, and rows the entities do not describe.
async fn seed(db: &dynamo_model::Db<Devices>) -> TestResult {
    put_raw(
        db,
        row(
            "d#12345",
            "WARNING1#2020-04-24T14:40:00",
            &[("EscalatedTo", s("alice")), ("Reading", num("7"))],
        ),
    )
    .await?;
    put_raw(
        db,
        row(
            "d#12345",
            "OK#2020-04-25T08:00:00",
            &[("reading", num("3"))],
        ),
    )
    .await?;
    put_raw(db, row("d#12345", "PROFILE", &[("Name", s("boiler"))])).await?;
    // Not a status: the sort key has no date.
    put_raw(db, row("d#12345", "NOTE", &[("Text", s("hello"))])).await?;
    // Not a device: another partition layout.
    put_raw(db, row("x#1", "A#B", &[])).await?;
    // A zero-padded id is not this format's `12345`.
    put_raw(db, row("d#0012345", "OK#2020-04-25T08:00:00", &[])).await?;
    Ok(())
}

#[tokio::test]
async fn rows_written_by_another_program_read_as_entities() -> TestResult {
    let db = local::fresh_table::<Devices>().await?;
    seed(&db).await?;

    // Get by key: the key renders exactly the stored text, the fields come from it.
    let got = db
        .get(DeviceStatus::key(DeviceStatusKey {
            device_id: 12345u64,
            state: "WARNING1",
            date: datetime!(2020-04-24 14:40:00 UTC),
        }))
        .consistent()
        .await?;
    assert_eq!(got, Some(warning()));
    let profile = db.get(Device::key(12345u64)).consistent().await?;
    assert_eq!(
        profile,
        Some(Device {
            device_id: 12345,
            name: "boiler".into()
        })
    );

    // A query of the partition: the statuses only, in key order; rows no template
    // matches are left out (filtered client-side: they carry no type attribute).
    let statuses = items_of(db.query(DeviceStatus::partition(12345u64))).await?;
    assert_eq!(
        statuses,
        vec![
            DeviceStatus {
                device_id: 12345,
                state: "OK".into(),
                date: datetime!(2020-04-25 08:00:00 UTC),
                escalated_to: None,
                reading: Some(3), // from the old attribute name
            },
            warning(),
        ]
    );
    // A sort-key condition in the declared formats.
    let warnings = items_of(
        db.query(DeviceStatus::partition(12345u64))
            .sk(DeviceStatus::sk().state().eq("WARNING1")),
    )
    .await?;
    assert_eq!(warnings, vec![warning()]);
    let since = items_of(
        db.query(DeviceStatus::partition(12345u64))
            .sk(DeviceStatus::sk()
                .state()
                .eq("OK")
                .date()
                .ge(datetime!(2020-04-25 00:00:00 UTC))),
    )
    .await?;
    assert_eq!(since.len(), 1);

    // An index over the table's own sort key: partitioned by the plain `EscalatedTo`
    // attribute, sorted by `State#Date`; rows without `EscalatedTo` are not in it.
    let escalated = items_of(db.query(DeviceStatus::by_escalation_partition("alice"))).await?;
    assert_eq!(escalated, vec![warning()]);
    let escalated = items_of(
        db.query(DeviceStatus::by_escalation_partition("alice")).sk(
            DeviceStatus::by_escalation_sk()
                .state()
                .eq("WARNING1")
                .date()
                .le(datetime!(2020-04-24 14:40:00 UTC)),
        ),
    )
    .await?;
    assert_eq!(escalated, vec![warning()]);
    let none = items_of(
        db.query(DeviceStatus::by_escalation_partition("alice"))
            .sk(DeviceStatus::by_escalation_sk().state().eq("OK")),
    )
    .await?;
    assert!(none.is_empty());

    // The partition as a collection: statuses and the profile, untyped.
    let rows = items_of(
        db.query(DeviceStatus::partition(12345u64))
            .collection::<DeviceRows>(),
    )
    .await?;
    let (mut statuses, mut devices) = (0, 0);
    for r in rows {
        match r {
            DeviceRows::Status(st) => {
                statuses += 1;
                assert_eq!(st.device_id, 12345);
            }
            DeviceRows::Device(d) => {
                devices += 1;
                assert_eq!(d.name, "boiler");
            }
        }
    }
    assert_eq!((statuses, devices), (2, 1));

    // A scan sees the two statuses and nothing else.
    let scanned = db.scan::<DeviceStatus>().all().await?;
    assert_eq!(scanned.items.len(), 2);

    // An item without the type attribute under a key no status template renders is not
    // a status.
    let err = db
        .get(DeviceStatus::key(DeviceStatusKey {
            device_id: 12345u64,
            state: "NOTE",
            date: datetime!(2020-04-24 14:40:00 UTC),
        }))
        .await?;
    assert_eq!(err, None);
    Ok(())
}

#[tokio::test]
async fn writes_keep_the_other_programs_format() -> TestResult {
    let db = local::fresh_table::<Devices>().await?;
    seed(&db).await?;

    // A new status: keys in the declared formats, key fields not stored on their own,
    // the type attribute added (the table can mix both).
    let new = DeviceStatus {
        device_id: 7,
        state: "ALARM 2".into(),
        date: datetime!(2021-01-02 03:04:05 UTC),
        escalated_to: None,
        reading: Some(-1),
    };
    db.put(&new).await?;
    let raw = get_raw(&db, "d#7", "ALARM 2#2021-01-02T03:04:05")
        .await?
        .expect("written under the other program's key format");
    let mut names: Vec<&str> = raw.keys().map(String::as_str).collect();
    names.sort();
    assert_eq!(names, ["DeviceID", "Reading", "State#Date", "_type", "_wt"]);
    assert_eq!(
        db.get(new.primary_key()).consistent().await?,
        Some(new.clone())
    );

    // An update of an untyped row works (its key is a status key) and leaves it in the
    // other program's shape; the old attribute name is still what it reads.
    db.update(warning().primary_key())
        .set(DeviceStatus::fields().reading, Some(8))
        .await?;
    let raw = get_raw(&db, "d#12345", "WARNING1#2020-04-24T14:40:00")
        .await?
        .expect("still there");
    assert_eq!(raw.get("Reading"), Some(&num("8")));
    assert!(
        !raw.contains_key("_type"),
        "an update adds no type attribute"
    );

    // A value the format cannot hold is refused before anything is sent: a sub-second
    // date in a seconds format, the delimiter in a verbatim part.
    let precise = DeviceStatus {
        date: datetime!(2021-01-02 03:04:05.5 UTC),
        ..new.clone()
    };
    let hashed = DeviceStatus {
        state: "A#B".into(),
        ..new.clone()
    };
    for unencodable in [precise, hashed] {
        refused(db.put(&unencodable), ValidationReason::KeyEncoding).await;
    }

    // A put over a row of the other program replaces it: it is a status (its key says so).
    db.put(&DeviceStatus {
        reading: Some(100),
        ..warning()
    })
    .await?;
    let raw = get_raw(&db, "d#12345", "WARNING1#2020-04-24T14:40:00")
        .await?
        .expect("replaced");
    assert_eq!(raw.get("Reading"), Some(&num("100")));

    // A delete of a key no template renders never reaches another program's row.
    db.delete(Device::key(12345u64)).await?;
    assert!(get_raw(&db, "d#12345", "PROFILE").await?.is_none());
    assert!(get_raw(&db, "d#12345", "NOTE").await?.is_some());
    Ok(())
}

#[tokio::test]
async fn a_typed_row_of_another_entity_is_never_read_as_this_one() -> TestResult {
    let db = local::fresh_table::<Devices>().await?;
    // A status key, but the row says it is something else.
    put_raw(
        &db,
        row("d#1", "OK#2020-04-25T08:00:00", &[("_type", s("Other"))]),
    )
    .await?;
    let key = DeviceStatus::key(DeviceStatusKey {
        device_id: 1u64,
        state: "OK",
        date: datetime!(2020-04-25 08:00:00 UTC),
    });
    let err = db
        .get(key)
        .consistent()
        .await
        .expect_err("typed as another entity");
    match err {
        Error::Decode(e) => assert!(
            matches!(e.kind, DecodeErrorKind::WrongEntityType { .. }),
            "{e}"
        ),
        other => panic!("expected a decode error, got {other:?}"),
    }
    // A put over it is refused by its condition: it is not a status.
    let status = DeviceStatus {
        device_id: 1,
        state: "OK".into(),
        date: datetime!(2020-04-25 08:00:00 UTC),
        escalated_to: None,
        reading: None,
    };
    let err = db.put(&status).await.expect_err("another entity's row");
    assert!(matches!(err, Error::OtherEntityStored { .. }), "{err:?}");
    // And the queries leave it out.
    assert!(items_of(db.query(DeviceStatus::partition(1u64)))
        .await?
        .is_empty());
    Ok(())
}

#[test]
fn key_parts_render_the_declared_formats() {
    let key = DeviceStatus::key(DeviceStatusKey {
        device_id: 12345u64,
        state: "WARNING1",
        date: datetime!(2020-04-24 14:40:00 UTC),
    })
    .into_raw()
    .expect("renders");
    assert_eq!(key.pk, "d#12345");
    assert_eq!(key.sk.as_deref(), Some("WARNING1#2020-04-24T14:40:00"));
    let item = warning().to_item().expect("encodes");
    assert!(
        !item.contains_key("device_id")
            && !item.contains_key("state")
            && !item.contains_key("date")
    );
    assert_eq!(<Devices as Table>::SCHEMA.pk.name, "DeviceID");
}

/// Two entities identified by their keys (the whole table is) whose templates both render
/// `S#1 / X#5`.
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", identify = "keys")]
pub struct Shared;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shared, pk = "S#{id}", sk = "X#{n}")]
pub struct Left {
    pub id: String,
    pub n: String,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Shared, pk = "S#{id}", sk = "{tag}#{m}")]
pub struct Right {
    pub id: String,
    pub tag: String,
    pub m: String,
}

/// `S#1` / `X#5` as a [`Left`]: a key [`right`]`("X")` renders too.
pub fn left() -> Left {
    Left {
        id: "1".into(),
        n: "5".into(),
    }
}

/// `S#1` / `{tag}#5` as a [`Right`]: with tag `X`, the key [`left`] renders too.
pub fn right(tag: &str) -> Right {
    Right {
        id: "1".into(),
        tag: tag.into(),
        m: "5".into(),
    }
}

#[tokio::test]
async fn keys_two_entities_identified_by_keys_share_are_refused() -> TestResult {
    let db = local::fresh_table::<Shared>().await?;
    // Neither builds the shared key: an untyped item there could be either.
    let err = db.put(&left()).await.expect_err("ambiguous key");
    assert_refused(&err, ValidationReason::KeyEncoding);
    let err = db
        .get(right("X").primary_key())
        .await
        .expect_err("ambiguous key");
    assert_refused(&err, ValidationReason::KeyEncoding);
    // Keys only one of them renders work.
    let right = right("Y");
    db.put(&right).await?;
    assert_eq!(db.get(right.primary_key()).consistent().await?, Some(right));

    // An untyped item under the shared key (written by another program) is refused as
    // ambiguous, not read as either.
    put_raw(&db, raw_row("S#1", "X#5", &[])).await?;
    let err = db.scan::<Left>().all().await.expect_err("ambiguous item");
    match err {
        Error::Decode(e) => {
            assert!(
                matches!(e.kind, DecodeErrorKind::AmbiguousEntity { ref entities } if entities.len() == 2),
                "{e}"
            )
        }
        other => panic!("expected a decode error, got {other:?}"),
    }
    Ok(())
}

/// A GSI partitioned by a template and sorted by the table's own sort key.
#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "ByAgent", pk = "AgentPK", sk = "SK"))]
pub struct Tickets;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Tickets, pk = "T#{id}", sk = "{state}#{opened}",
         index(ByAgent, pk = "AGENT#{agent}", sk = "{state}#{opened}"))]
pub struct Ticket {
    pub id: String,
    pub state: String,
    pub opened: u32,
    pub agent: Option<String>,
}

#[tokio::test]
async fn an_index_sorted_by_the_tables_own_sort_key_stays_current() -> TestResult {
    let db = local::fresh_table::<Tickets>().await?;
    let t = |id: &str, state: &str, opened: u32, agent: Option<&str>| Ticket {
        id: id.into(),
        state: state.into(),
        opened,
        agent: agent.map(Into::into),
    };
    db.put(&t("1", "OPEN", 5, Some("bo"))).await?;
    db.put(&t("2", "OPEN", 3, Some("bo"))).await?;
    db.put(&t("3", "CLOSED", 1, Some("bo"))).await?;
    db.put(&t("4", "OPEN", 2, None)).await?;
    let open = items_of(
        db.query(Ticket::by_agent_partition("bo"))
            .sk(Ticket::by_agent_sk().state().eq("OPEN")),
    )
    .await?;
    assert_eq!(
        open.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        ["2", "1"],
        "sorted by the table's sort key"
    );
    // Leaving the index (sparse) removes only the template's own attribute, never the
    // table's sort key.
    db.update(Ticket::key(TicketKey {
        id: "1",
        state: "OPEN",
        opened: 5u32,
    }))
    .set(Ticket::fields().agent, None)
    .await?;
    let back = db
        .get(Ticket::key(TicketKey {
            id: "1",
            state: "OPEN",
            opened: 5u32,
        }))
        .consistent()
        .await?;
    assert_eq!(back, Some(t("1", "OPEN", 5, None)));
    // Moving to another agent moves it in the index.
    db.update(Ticket::key(TicketKey {
        id: "2",
        state: "OPEN",
        opened: 3u32,
    }))
    .set(Ticket::fields().agent, Some("al".to_owned()))
    .await?;
    let bo = items_of(db.query(Ticket::by_agent_partition("bo"))).await?;
    assert_eq!(bo.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["3"]);
    let al = items_of(db.query(Ticket::by_agent_partition("al"))).await?;
    assert_eq!(al, vec![t("2", "OPEN", 3, Some("al"))]);
    Ok(())
}

/// The other program's formatting, written independently of the crate: `time`'s own
/// RFC 3339 (whole seconds, `Z` dropped) and plain decimal.
fn foreign_row(id: u64, state: &str, at: OffsetDateTime, reading: Option<i64>) -> Item {
    let stamp = at
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    let stamp = stamp.trim_end_matches('Z');
    let mut rest = Vec::new();
    if let Some(r) = reading {
        rest.push(("Reading", num(&r.to_string())));
    }
    row(&format!("d#{id}"), &format!("{state}#{stamp}"), &rest)
}

/// Whatever the other program wrote in its formats reads back as the values it wrote,
/// and a key built from those values finds the row; a row whose plain attribute
/// contradicts its key is refused.
#[test]
fn any_foreign_row_reads_back_and_is_found_by_its_key() -> TestResult {
    use proptest::prelude::*;

    let (runtime, db) = runtime_and_table::<Devices>()?;
    let rows = (
        any::<u64>(),
        "[A-Z][A-Z0-9 _.-]{0,12}",
        // 0001-01-01 to 9999-12-31, whole seconds.
        -62_135_596_800i64..253_402_300_799,
        proptest::option::of(any::<i64>()),
    );
    let mut runner = runner(32);
    let outcome = runner.run(&rows, |(id, state, secs, reading)| {
        let at = OffsetDateTime::from_unix_timestamp(secs).map_err(fail)?;
        let key = || {
            DeviceStatus::key(DeviceStatusKey {
                device_id: id,
                state: state.as_str(),
                date: at,
            })
        };
        runtime.block_on(async {
            put_raw(&db, foreign_row(id, &state, at, reading))
                .await
                .map_err(fail)?;
            let got = db.get(key()).consistent().await.map_err(fail)?;
            let want = DeviceStatus {
                device_id: id,
                state: state.clone(),
                date: at,
                escalated_to: None,
                reading,
            };
            prop_assert_eq!(got, Some(want.clone()));
            let listed = db
                .query(DeviceStatus::partition(id))
                .sk(DeviceStatus::sk().state().eq(state.as_str()))
                .all()
                .await
                .map_err(fail)?
                .items;
            prop_assert!(listed.contains(&want));
            // A forged plain attribute that names another device: refused, not decoded
            // as that device.
            let mut forged = foreign_row(id, &state, at, reading);
            forged.insert("device_id".to_owned(), num(&id.wrapping_add(1).to_string()));
            put_raw(&db, forged).await.map_err(fail)?;
            match db.get(key()).consistent().await {
                Err(Error::Decode(e)) => prop_assert!(
                    matches!(e.kind, DecodeErrorKind::KeyMismatch { .. }),
                    "{}",
                    e
                ),
                other => prop_assert!(false, "a forged row decoded: {:?}", other),
            }
            Ok(())
        })
    });
    outcome.map_err(|e| e.to_string().into())
}
