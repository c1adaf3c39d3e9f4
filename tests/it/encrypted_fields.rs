//! Encrypted fields (`#[dynamo(encrypt)]`): no plaintext in the stored item, round trips
//! through every write and read path, a ciphertext moved to another item refused, key
//! rotation, and a `Db` without keys refusing to write.

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::encrypt::{DataKey, EncryptionError, LocalKeys};
use dynamo_model::stream::{EventName, StreamRecord};
use dynamo_model::{local, Db, DecodeErrorKind, Entity, Error, Item, ValidationReason};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Card {
    pub number: String,
    pub expiry: u16,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "PATIENT#{id}", sk = "RECORD")]
pub struct Patient {
    pub id: String,
    pub name: String,
    #[dynamo(encrypt)]
    pub ssn: String,
    #[dynamo(encrypt, serde)]
    pub card: Card,
    #[dynamo(encrypt)]
    pub notes: Option<Vec<String>>,
    #[dynamo(encrypt, validate(length(max = 11)))]
    pub pin: String,
}

/// A second member of the patient's partition, with an encrypted field of its own.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "PATIENT#{id}", sk = "VISIT#{n}")]
pub struct Visit {
    pub id: String,
    pub n: u32,
    #[dynamo(encrypt)]
    pub diagnosis: String,
}

#[derive(dynamo_model::Collection, Debug, Clone, PartialEq)]
pub enum Chart {
    Patient(Patient),
    Visit(Visit),
}

fn patient(id: &str) -> Patient {
    Patient {
        id: id.into(),
        name: format!("name {id}"),
        ssn: format!("123-45-{id}"),
        card: Card {
            number: "4111111111111111".into(),
            expiry: 1230,
        },
        notes: Some(vec!["allergic to penicillin".into()]),
        pin: "1234".into(),
    }
}

fn keys() -> LocalKeys {
    LocalKeys::new("k1", DataKey::new([1; 32]))
}

/// A fresh table (dropped with the first value) and its `Db` with the test keys, holding
/// the patients `ids`.
async fn seeded(ids: &[&str]) -> Res<(local::TempTable<App>, Db<App>)> {
    let table = local::fresh_table::<App>().await?;
    let db = table.clone().with_keys(keys());
    for id in ids {
        db.put(&patient(id)).await?;
    }
    Ok((table, db))
}

async fn stored(db: &Db<App>, id: &str) -> Res<Item> {
    raw_get(db, &format!("PATIENT#{id}"), "RECORD").await
}

/// Whether an encryption error of `kind` is what reading failed with.
fn encryption_error(err: &Error) -> Option<&EncryptionError> {
    match err {
        Error::Decode(e) => match &e.kind {
            DecodeErrorKind::Encryption(kind) => Some(kind),
            _ => None,
        },
        _ => None,
    }
}

#[tokio::test]
async fn the_stored_item_holds_no_plaintext_and_every_path_reads_it_back() -> TestResult {
    let (_table, db) = seeded(&["1"]).await?;
    let p = patient("1");
    let item = stored(&db, "1").await?;
    let text = format!("{item:?}");
    for secret in ["123-45-1", "4111111111111111", "penicillin", "1234"] {
        assert!(
            !text.contains(secret),
            "{secret} stored in plain text: {text}"
        );
    }
    assert!(matches!(item.get("ssn"), Some(AttributeValue::B(_))));
    assert_eq!(item.get("name"), Some(&s("name 1")));

    // get, query, scan.
    assert_eq!(db.get(Patient::key("1")).await?, Some(p.clone()));
    let queried = items_of(db.query(Patient::partition("1"))).await?;
    assert_eq!(queried, std::slice::from_ref(&p));
    assert_eq!(db.scan::<Patient>().all().await?.items, [p]);
    // Batch write and batch get.
    let (a, b) = (patient("2"), patient("3"));
    db.batch_write().put(&a).put(&b).await?;
    let got = db
        .batch_get::<Patient>()
        .key(Patient::key("2"))
        .key(Patient::key("3"))
        .keep_order()
        .await?;
    assert_eq!(got.items, [a.clone(), b.clone()]);
    // Transactions.
    let c = patient("4");
    db.transact_write().put(db.put(&c)).await?;
    let got = db.transact_get::<Patient>().key(Patient::key("4")).await?;
    assert_eq!(got, [Some(c)]);
    assert!(!format!("{:?}", stored(&db, "4").await?).contains("123-45-4"));
    Ok(())
}

#[tokio::test]
async fn an_update_seals_what_it_sets_and_refuses_computing_on_a_ciphertext() -> TestResult {
    let (_table, db) = seeded(&["1"]).await?;
    let f = Patient::fields();
    let updated = db
        .update(Patient::key("1"))
        .set(f.ssn, "999-99-9999".to_owned())
        .remove(f.notes)
        .send()
        .await?;
    assert_eq!(
        (updated.ssn.as_str(), &updated.notes),
        ("999-99-9999", &None)
    );
    let item = stored(&db, "1").await?;
    assert!(!format!("{item:?}").contains("999-99"));
    // In a transaction too.
    db.transact_write()
        .update(db.update(Patient::key("1")).set(f.pin, "4321".to_owned()))
        .await?;
    assert_eq!(
        db.get(Patient::key("1")).await?.map(|p| p.pin),
        Some("4321".into())
    );
    // A condition on its presence only.
    let err = db
        .put(&patient("1"))
        .condition(f.ssn.not_exists())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::ConditionFailed { .. }), "{err}");
    // A rule's violation never carries the value.
    let mut long = patient("5");
    long.pin = "secret-pin-too-long".into();
    let err = db.put(&long).await.unwrap_err();
    let Error::Rule(violation) = &err else {
        panic!("{err}")
    };
    assert_eq!(violation.value(), None);
    assert!(!format!("{err} {err:?}").contains("secret-pin"));
    Ok(())
}

#[tokio::test]
async fn a_ciphertext_moved_to_another_item_does_not_decrypt() -> TestResult {
    let (_table, db) = seeded(&["1", "2"]).await?;
    // Copy item 1's ssn ciphertext into item 2 with the raw SDK.
    let one = stored(&db, "1").await?;
    let mut two = stored(&db, "2").await?;
    two.insert("ssn".into(), one["ssn"].clone());
    put_raw(&db, two.clone()).await?;
    let err = db.get(Patient::key("2")).await.unwrap_err();
    assert_eq!(
        encryption_error(&err),
        Some(&EncryptionError::Rejected),
        "{err}"
    );
    // A plain value where the ciphertext belongs is refused as well.
    two.insert("ssn".into(), s("123-45-6789"));
    put_raw(&db, two).await?;
    let err = db.scan::<Patient>().all().await.unwrap_err();
    assert!(
        matches!(encryption_error(&err), Some(EncryptionError::Malformed(_))),
        "{err}"
    );
    Ok(())
}

#[tokio::test]
async fn rotated_keys_read_old_values_and_a_db_without_keys_writes_nothing() -> TestResult {
    let (_table, db) = seeded(&["1"]).await?;
    let rotated = db
        .clone()
        .with_keys(keys().rotate("k2", DataKey::new([2; 32])));
    assert_eq!(rotated.get(Patient::key("1")).await?, Some(patient("1")));
    rotated.put(&patient("2")).await?;
    // The old key alone cannot read what the new one sealed.
    let err = db.get(Patient::key("2")).await.unwrap_err();
    assert_eq!(
        encryption_error(&err),
        Some(&EncryptionError::UnknownKey("k2".into()))
    );

    let keyless = local::fresh_table::<App>().await?;
    let err = keyless.put(&patient("3")).await.unwrap_err();
    assert_refused(&err, ValidationReason::EncryptionKeys);
    assert!(keyless.get(Patient::key("3")).await?.is_none());
    let err = keyless.batch_write().put(&patient("3")).await.unwrap_err();
    assert_refused(&err, ValidationReason::EncryptionKeys);
    Ok(())
}

#[tokio::test]
async fn collections_streams_and_carried_items_decrypt_with_the_keys() -> TestResult {
    let (_table, db) = seeded(&["1"]).await?;
    let (p, v) = (
        patient("1"),
        Visit {
            id: "1".into(),
            n: 1,
            diagnosis: "flu".into(),
        },
    );
    db.put(&v).await?;
    // A collection opens each member's own fields.
    let chart = items_of(db.query(Patient::partition("1")).collection::<Chart>()).await?;
    assert_eq!(chart, [Chart::Patient(p.clone()), Chart::Visit(v.clone())]);
    let scanned = db.scan::<Chart>().all().await?.items;
    assert_eq!(scanned.len(), 2);

    // A stream record's image: refused without keys, decoded with them.
    let raw = stored(&db, "1").await?;
    let record =
        StreamRecord::new(EventName::Insert, raw_key("PATIENT#1", "RECORD")).with_new_image(raw);
    let err = record.decode::<Patient>().unwrap_err();
    assert_eq!(
        encryption_error(&err),
        Some(&EncryptionError::NoKeys),
        "{err}"
    );
    let change = record
        .decode_with_keys::<Chart>(&keys())?
        .expect("a patient's record");
    assert_eq!(change.new_image()?, Some(&Chart::Patient(p.clone())));

    // The current item a failed write carries: Db::decode opens it.
    let err = db.put(&p).if_absent().await.unwrap_err();
    let Error::ConditionFailed {
        current: Some(item),
        ..
    } = &err
    else {
        panic!("{err}")
    };
    let keyless = err.current::<Patient>().expect("an item");
    assert!(keyless.is_err());
    assert_eq!(db.decode::<Patient>(item.as_ref().clone())?, p);
    Ok(())
}
