//! The lifecycle of a versioned item: prune, restore, delete all, the refusal of plain
//! writes, an unpadded layout written by another program, TTL on every copy, and a
//! model-based property over random sequences of every history operation.
//!
//! What remains in the table is read with the raw SDK client, so that nothing the crate
//! hides (revisions, other entities' items) escapes the checks.

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::history::{Keep, Removed};
use dynamo_model::local::{self, BoxError};
use dynamo_model::{Db, Entity, Error, Item, ValidationReason};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use time::OffsetDateTime;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "NOTEBOOK#{id}", sk = "NOTE", history)]
pub struct Note {
    pub id: String,
    pub body: String,
    #[dynamo(version)]
    pub version: u64,
}

/// Another versioned entity type in the notes' partitions.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "NOTEBOOK#{id}", sk = "META", history)]
pub struct NoteMeta {
    pub id: String,
    pub info: String,
    #[dynamo(version)]
    pub version: u64,
}

/// A plain entity in the notes' partitions.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "NOTEBOOK#{id}", sk = "TAG#{tag}")]
pub struct NoteTag {
    pub id: String,
    pub tag: String,
}

/// The layout of AWS's guide, unpadded: `v0_Audit`, `v1_Audit`, …, `v10_Audit`.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "AUDIT#{id}", sk = "Audit", history(width = 0, separator = "_"))]
pub struct Audit {
    pub id: String,
    pub action: String,
    #[dynamo(version)]
    pub version: u64,
}

/// A plain entity whose sort key lies inside the unpadded revision range (`v1`..`v:`).
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "AUDIT#{id}", sk = "v5_Other")]
pub struct AuditOther {
    pub id: String,
}

/// TTL on a versioned entity (`App`'s TTL attribute is `expires_at`).
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "LEASE#{id}", sk = "LEASE", history)]
pub struct Lease {
    pub id: String,
    pub holder: String,
    #[dynamo(version)]
    pub version: u64,
    #[dynamo(ttl)]
    pub expires: Option<OffsetDateTime>,
}

fn note(id: &str, body: &str) -> Note {
    Note {
        id: id.into(),
        body: body.into(),
        version: 0,
    }
}

/// The sort keys under `pk`.
async fn sort_keys(db: &Db<App>, pk: &str) -> Result<BTreeSet<String>, BoxError> {
    Ok(raw_sort_keys(db, pk).await?.into_iter().collect())
}

fn padded(slot: u64, rest: &str) -> String {
    format!("v{slot:020}#{rest}")
}

fn removed(revisions: &[u64], kept: &[u64], latest: bool) -> (Vec<u64>, Vec<u64>, bool) {
    (revisions.to_vec(), kept.to_vec(), latest)
}

fn parts(r: &Removed) -> (Vec<u64>, Vec<u64>, bool) {
    (r.revisions.clone(), r.kept.clone(), r.latest)
}

async fn history_of(db: &Db<App>, id: &str) -> Result<Vec<(u64, String)>, Error> {
    Ok(db
        .history::<Note>()
        .revisions(Note::key(id))
        .consistent()
        .all()
        .await?
        .mapped(|r| (r.revision, r.value.body)))
}

/// `n` revisions of note `id` (bodies `b1`..`bn`).
async fn note_with(db: &Db<App>, id: &str, n: u64) -> Result<(), Error> {
    let versions = db.history::<Note>();
    versions.create(&note(id, "b1")).await?;
    for i in 2..=n {
        versions
            .revise(Note::key(id), |x| x.body = format!("b{i}"))
            .await?;
    }
    Ok(())
}

/// Note `n1` (8 revisions) shares its partition with a tag and a versioned meta (2
/// revisions); note `n2` lives elsewhere.
async fn neighbourhood(db: &Db<App>) -> Result<(), Error> {
    note_with(db, "n1", 8).await?;
    note_with(db, "n2", 2).await?;
    db.put(&NoteTag {
        id: "n1".into(),
        tag: "red".into(),
    })
    .await?;
    let meta = db.history::<NoteMeta>();
    meta.create(&NoteMeta {
        id: "n1".into(),
        info: "i1".into(),
        version: 0,
    })
    .await?;
    meta.revise(NoteMeta::key("n1"), |m| m.info = "i2".into())
        .await?;
    Ok(())
}

fn neighbours() -> BTreeSet<String> {
    let mut keys: BTreeSet<String> = ["TAG#red".to_owned()].into();
    keys.extend((0..=2).map(|k| padded(k, "META")));
    keys
}

#[tokio::test]
async fn prune_keeps_the_newest_revisions_is_idempotent_and_touches_nothing_else() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    neighbourhood(&db).await?;
    let versions = db.history::<Note>();
    let key = || Note::key("n1");

    let r = versions.prune(key(), Keep::Newest(3)).await?;
    assert_eq!(parts(&r), removed(&[1, 2, 3, 4, 5], &[6, 7, 8], false));
    let mut want: BTreeSet<String> = [0, 6, 7, 8].iter().map(|&k| padded(k, "NOTE")).collect();
    want.extend(neighbours());
    assert_eq!(sort_keys(&db, "NOTEBOOK#n1").await?, want);
    let latest = versions.latest(key()).await?.ok_or("latest")?;
    assert_eq!((latest.version, latest.body.as_str()), (8, "b8"));
    assert_eq!(
        history_of(&db, "n1").await?,
        [(6, "b6".into()), (7, "b7".into()), (8, "b8".into())]
    );

    // Again: nothing left to remove, nothing else changes.
    let before = raw_table(&db).await?;
    let again = versions.prune(key(), Keep::Newest(3)).await?;
    assert_eq!(parts(&again), removed(&[], &[6, 7, 8], false));
    assert_eq!(raw_table(&db).await?, before);
    // More than there are: nothing removed.
    let many = versions.prune(key(), Keep::Newest(100)).await?;
    assert_eq!(parts(&many), removed(&[], &[6, 7, 8], false));

    // Keeping none still keeps the newest: the revision the latest copy holds.
    let none = versions.prune(key(), Keep::Newest(0)).await?;
    assert_eq!(parts(&none), removed(&[6, 7], &[8], false));
    assert_eq!(history_of(&db, "n1").await?, [(8, "b8".into())]);
    let mut want: BTreeSet<String> = [padded(0, "NOTE"), padded(8, "NOTE")].into();
    want.extend(neighbours());
    assert_eq!(sort_keys(&db, "NOTEBOOK#n1").await?, want);

    // The other note and the meta's history are untouched.
    assert_eq!(history_of(&db, "n2").await?.len(), 2);
    let meta = db
        .history::<NoteMeta>()
        .revisions(NoteMeta::key("n1"))
        .all()
        .await?
        .items;
    assert_eq!(meta.iter().map(|r| r.revision).collect::<Vec<_>>(), [1, 2]);

    // Adding after a prune continues the numbering.
    let next = versions.revise(key(), |n| n.body = "b9".into()).await?;
    assert_eq!(next.revision, 9);

    // Nothing to prune on a missing item.
    let missing = versions.prune(Note::key("zz"), Keep::Newest(1)).await?;
    assert_eq!(parts(&missing), removed(&[], &[], false));
    Ok(())
}

#[tokio::test]
async fn prune_since_keeps_revisions_written_at_or_after_the_time_and_always_the_newest(
) -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let versions = db.history::<Note>();
    versions.create(&note("s", "b1")).await?;
    for i in 2..=4 {
        // Distinct milliseconds (the stored time's unit).
        tokio::time::sleep(Duration::from_millis(3)).await;
        versions
            .revise(Note::key("s"), |n| n.body = format!("b{i}"))
            .await?;
    }
    let history = versions
        .revisions(Note::key("s"))
        .consistent()
        .all()
        .await?;
    let times: Vec<SystemTime> = history
        .items
        .iter()
        .map(|r| r.revised_at.ok_or("a time"))
        .collect::<Result<_, _>>()?;
    assert!(times.windows(2).all(|w| w[0] < w[1]), "{times:?}");

    // Since the epoch: everything kept.
    let all = versions
        .prune(Note::key("s"), Keep::Since(UNIX_EPOCH))
        .await?;
    assert_eq!(parts(&all), removed(&[], &[1, 2, 3, 4], false));
    // Since revision 3's time: 3 and 4 kept (the bound is inclusive).
    let r = versions
        .prune(Note::key("s"), Keep::Since(times[2]))
        .await?;
    assert_eq!(parts(&r), removed(&[1, 2], &[3, 4], false));
    // Since the future: only the newest.
    let future = SystemTime::now() + Duration::from_secs(3600);
    let r = versions.prune(Note::key("s"), Keep::Since(future)).await?;
    assert_eq!(parts(&r), removed(&[3], &[4], false));
    assert_eq!(
        sort_keys(&db, "NOTEBOOK#s").await?,
        [padded(0, "NOTE"), padded(4, "NOTE")].into()
    );
    Ok(())
}

#[tokio::test]
async fn restore_writes_an_old_revision_as_a_new_one() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    note_with(&db, "r", 4).await?;
    let versions = db.history::<Note>();

    let restored = versions.restore(Note::key("r"), 2).await?;
    assert_eq!(restored.revision, 5);
    assert_eq!(
        restored.value,
        Note {
            version: 5,
            ..note("r", "b2")
        }
    );
    let latest = versions.latest(Note::key("r")).await?.ok_or("latest")?;
    assert_eq!(latest, restored.value);
    assert_eq!(
        history_of(&db, "r").await?,
        [1, 2, 3, 4, 2]
            .iter()
            .enumerate()
            .map(|(i, b)| (i as u64 + 1, format!("b{b}")))
            .collect::<Vec<_>>()
    );
    // Revision 2 itself is unchanged.
    let two = versions.revision(Note::key("r"), 2).await?.ok_or("r2")?;
    assert_eq!((two.value.body.as_str(), two.value.version), ("b2", 2));

    // Restoring the newest writes it again.
    let again = versions.restore(Note::key("r"), 5).await?;
    assert_eq!((again.revision, again.value.body.as_str()), (6, "b2"));

    // A pruned revision, one never written, a missing item: not found, nothing written.
    versions.prune(Note::key("r"), Keep::Newest(2)).await?;
    let before = raw_table(&db).await?;
    for (id, k) in [("r", 1), ("r", 7), ("r", 0), ("missing", 1)] {
        match versions.restore(Note::key(id), k).await {
            Err(Error::NotFound { .. }) => {}
            other => panic!("restore({id}, {k}): {other:?}"),
        }
    }
    assert_eq!(raw_table(&db).await?, before);
    Ok(())
}

#[tokio::test]
async fn delete_all_removes_the_item_and_its_history_and_nothing_else() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    neighbourhood(&db).await?;
    let versions = db.history::<Note>();
    // A partly pruned history is deleted too.
    versions.prune(Note::key("n1"), Keep::Newest(5)).await?;

    let r = versions.delete_all(Note::key("n1")).await?;
    assert_eq!(parts(&r), removed(&[4, 5, 6, 7, 8], &[], true));
    assert_eq!(sort_keys(&db, "NOTEBOOK#n1").await?, neighbours());
    assert!(versions.latest(Note::key("n1")).await?.is_none());
    assert!(history_of(&db, "n1").await?.is_empty());
    // The other entities of the partition, and the other note, survive.
    let meta = db.get(NoteMeta::key("n1")).await?.ok_or("meta")?;
    assert_eq!(meta.version, 2);
    assert!(db
        .get(NoteTag::key(NoteTagKey {
            id: "n1",
            tag: "red"
        }))
        .await?
        .is_some());
    assert_eq!(history_of(&db, "n2").await?.len(), 2);
    assert_eq!(sort_keys(&db, "NOTEBOOK#n2").await?.len(), 3);

    // Nothing left: nothing removed.
    let again = versions.delete_all(Note::key("n1")).await?;
    assert_eq!(parts(&again), removed(&[], &[], false));
    // The item can start over at revision 1.
    assert_eq!(versions.create(&note("n1", "new")).await?, 1);
    assert_eq!(history_of(&db, "n1").await?, [(1, "new".into())]);
    Ok(())
}

#[tokio::test]
async fn plain_writes_of_a_versioned_entity_are_refused_and_write_nothing() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    note_with(&db, "p", 2).await?;
    let stored = db.get(Note::key("p")).await?.ok_or("p")?;
    let before = raw_table(&db).await?;
    let f = Note::fields();
    let tag = NoteTag {
        id: "p".into(),
        tag: "t".into(),
    };

    use ValidationReason::{KeepsHistory, NotSupportedInBatch};
    refused(db.put(&stored), KeepsHistory).await;
    refused(db.put(&note("fresh", "x")), KeepsHistory).await;
    let update = || db.update(Note::key("p")).set(f.body, "x".to_owned());
    refused(update().if_version(2), KeepsHistory).await;
    refused(update().any_version(), KeepsHistory).await;
    refused(db.delete(Note::key("p")).if_version(2), KeepsHistory).await;
    refused(db.delete(Note::key("p")).any_version(), KeepsHistory).await;
    let batch = || db.batch_write().put(&tag);
    refused(batch().put(&stored), NotSupportedInBatch).await;
    refused(batch().delete(Note::key("p")), NotSupportedInBatch).await;
    let transaction = || db.transact_write().put(db.put(&tag));
    refused(transaction().put(db.put(&stored)), KeepsHistory).await;
    refused(transaction().update(update().if_version(2)), KeepsHistory).await;
    refused(
        transaction().delete(db.delete(Note::key("p")).if_version(2)),
        KeepsHistory,
    )
    .await;
    // Nothing was written: not the note, not the tag sent along with it.
    assert_eq!(raw_table(&db).await?, before);
    Ok(())
}

/// Revision `slot` (0: the latest copy) of audit `a` at `version`, as another program
/// writes it.
fn audit_item(slot: u64, version: u64) -> dynamo_model::Item {
    raw_row(
        "AUDIT#a",
        &format!("v{slot}_Audit"),
        &[
            ("_type", s("Audit")),
            ("id", s("a")),
            ("action", s(&format!("a{version}"))),
            ("version", n(version)),
        ],
    )
}

#[tokio::test]
async fn an_unpadded_layout_written_by_another_program_is_read_and_continued() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    put_raw(&db, audit_item(0, 11)).await?;
    for k in 1..=11 {
        put_raw(&db, audit_item(k, k)).await?;
    }
    // Another entity type whose sort key falls inside the revision range.
    db.put(&AuditOther { id: "a".into() }).await?;
    let versions = db.history::<Audit>();
    let key = || Audit::key("a");
    let audit = |k: u64| Audit {
        id: "a".into(),
        action: format!("a{k}"),
        version: k,
    };

    assert_eq!(versions.latest(key()).await?, Some(audit(11)));
    assert_eq!(db.get(key()).await?, Some(audit(11)));
    for k in 1..=11 {
        let r = versions.revision(key(), k).await?.ok_or("revision")?;
        assert_eq!((r.revision, &r.value, r.revised_at), (k, &audit(k), None));
    }
    assert!(versions.revision(key(), 12).await?.is_none());

    // The documented order: the sort key's text order. With `_` (after the digits in
    // UTF-8) that is `v10_`, `v11_`, `v1_`, `v2_`, …; with `#` it would be `v1#`, `v10#`.
    let mut stored: Vec<String> = (1..=11).map(|k| format!("v{k}_Audit")).collect();
    stored.sort();
    let text_order: Vec<u64> = stored
        .iter()
        .map(|sk| sk[1..sk.len() - "_Audit".len()].parse())
        .collect::<Result<_, _>>()?;
    assert_eq!(text_order, [10, 11, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    let history = all_revisions(&versions, key()).await?;
    assert_eq!(revision_numbers(&history), text_order);
    let reversed: Vec<u64> = versions
        .revisions(key())
        .reverse()
        .all()
        .await?
        .mapped(|r| r.revision);
    assert_eq!(
        reversed,
        text_order.iter().rev().copied().collect::<Vec<_>>()
    );
    // Sorted by revision: numeric order.
    let mut sorted = history.clone();
    sorted.sort_by_key(|r| r.revision);
    assert_eq!(
        sorted.iter().map(|r| r.revision).collect::<Vec<_>>(),
        (1..=11).collect::<Vec<_>>()
    );
    // Paging reads the same, the other entity's item never among them.
    let paged = all_pages(|| versions.revisions(key()), 4, Some(3), false).await?;
    assert_eq!(
        paged.iter().map(|r| r.revision).collect::<Vec<_>>(),
        text_order
    );
    // Base-table reads: the latest copy only.
    assert_eq!(
        items_of(db.query(Audit::partition("a"))).await?,
        [audit(11)]
    );

    // The crate continues at 12, in the same unpadded format.
    let next = versions.revise(key(), |a| a.action = "a12".into()).await?;
    assert_eq!((next.revision, &next.value), (12, &audit(12)));
    let keys = sort_keys(&db, "AUDIT#a").await?;
    let mut want: BTreeSet<String> = (0..=12).map(|k| format!("v{k}_Audit")).collect();
    want.insert("v5_Other".into());
    assert_eq!(keys, want);
    let raw_latest = raw_partition(&db, "AUDIT#a")
        .await?
        .into_iter()
        .find(|i| i.get("SK") == Some(&AttributeValue::S("v0_Audit".into())))
        .ok_or("v0")?;
    assert_eq!(raw_latest.get("version"), Some(&num("12")));

    // Pruning keeps the numerically newest (10, 11, 12), not the last in text order.
    let r = versions.prune(key(), Keep::Newest(3)).await?;
    assert_eq!(
        parts(&r),
        removed(&(1..=9).collect::<Vec<_>>(), &[10, 11, 12], false)
    );
    let keys = sort_keys(&db, "AUDIT#a").await?;
    assert_eq!(
        keys,
        [
            "v0_Audit",
            "v10_Audit",
            "v11_Audit",
            "v12_Audit",
            "v5_Other"
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    );
    // Deleting everything leaves the other entity's item.
    let r = versions.delete_all(key()).await?;
    assert_eq!(parts(&r), removed(&[10, 11, 12], &[], true));
    assert_eq!(
        sort_keys(&db, "AUDIT#a").await?,
        ["v5_Other".to_owned()].into()
    );
    Ok(())
}

#[tokio::test]
async fn a_ttl_field_is_written_on_the_latest_copy_and_on_every_revision() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let versions = db.history::<Lease>();
    let in_an_hour =
        OffsetDateTime::from_unix_timestamp(OffsetDateTime::now_utc().unix_timestamp() + 3600)?;
    let later = in_an_hour + time::Duration::hours(1);
    versions
        .create(&Lease {
            id: "l".into(),
            holder: "ann".into(),
            version: 0,
            expires: Some(in_an_hour),
        })
        .await?;
    versions
        .revise(Lease::key("l"), |l| l.holder = "bob".into())
        .await?;
    versions
        .revise(Lease::key("l"), |l| l.expires = Some(later))
        .await?;
    versions
        .revise(Lease::key("l"), |l| l.expires = None)
        .await?;

    let ttl_of = |item: &Item| -> Option<i64> {
        item.get("expires_at")
            .and_then(|v| v.as_n().ok())
            .and_then(|n| n.parse().ok())
    };
    let items = raw_partition(&db, "LEASE#l").await?;
    let by_sk: BTreeMap<String, Option<i64>> = items
        .iter()
        .map(|i| {
            let sk = i
                .get("SK")
                .and_then(|v| v.as_s().ok())
                .cloned()
                .unwrap_or_default();
            (sk, ttl_of(i))
        })
        .collect();
    let (a, b) = (in_an_hour.unix_timestamp(), later.unix_timestamp());
    let want: BTreeMap<String, Option<i64>> = [
        (padded(0, "LEASE"), None),
        (padded(1, "LEASE"), Some(a)),
        (padded(2, "LEASE"), Some(a)),
        (padded(3, "LEASE"), Some(b)),
        (padded(4, "LEASE"), None),
    ]
    .into();
    assert_eq!(by_sk, want);
    // Read back through the history, the TTL field is each revision's.
    let history = versions.revisions(Lease::key("l")).all().await?.items;
    let expiries: Vec<Option<i64>> = history
        .iter()
        .map(|r| r.value.expires.map(|t| t.unix_timestamp()))
        .collect();
    assert_eq!(expiries, [Some(a), Some(a), Some(b), None]);
    Ok(())
}

// ---- The model-based property ----

/// One step of the property, on item `item` (0 or 1).
#[derive(Debug, Clone)]
enum Step {
    Create(usize, String),
    /// `add` of the latest copy as read (or a new item at version 0).
    AddFresh(usize, String),
    /// `add` of a copy `back` versions behind the latest (or ahead of a missing item).
    AddStale(usize, String, u64),
    Revise(usize, String),
    Restore(usize, u64),
    Prune(usize, usize),
    DeleteAll(usize),
}

fn step() -> impl Strategy<Value = Step> {
    let item = 0usize..2;
    let body = "[a-z]{1,3}";
    prop_oneof![
        (item.clone(), body).prop_map(|(i, b)| Step::Create(i, b)),
        (item.clone(), body).prop_map(|(i, b)| Step::AddFresh(i, b)),
        (item.clone(), body, 1u64..4).prop_map(|(i, b, n)| Step::AddStale(i, b, n)),
        (item.clone(), body).prop_map(|(i, b)| Step::Revise(i, b)),
        (item.clone(), 0u64..7).prop_map(|(i, k)| Step::Restore(i, k)),
        (item.clone(), 0usize..4).prop_map(|(i, n)| Step::Prune(i, n)),
        item.prop_map(Step::DeleteAll),
    ]
}

/// The reference: the latest version and body, and the revisions kept.
#[derive(Debug, Clone, Default)]
struct Model {
    latest: Option<(u64, String)>,
    revisions: BTreeMap<u64, String>,
}

impl Model {
    fn write(&mut self, body: &str) -> u64 {
        let next = self.latest.as_ref().map_or(0, |l| l.0) + 1;
        self.latest = Some((next, body.to_owned()));
        self.revisions.insert(next, body.to_owned());
        next
    }
}

fn fail(message: String) -> BoxError {
    message.into()
}

fn expect_conflict<T: std::fmt::Debug>(
    got: Result<T, Error>,
    expected: u64,
    found: Option<u64>,
) -> Result<(), BoxError> {
    match got {
        Err(Error::VersionConflict {
            expected: e,
            found: f,
            ..
        }) if e == expected && f == found => Ok(()),
        other => Err(fail(format!(
            "expected a conflict ({expected}, {found:?}), got {other:?}"
        ))),
    }
}

fn expect_not_found<T: std::fmt::Debug>(got: Result<T, Error>) -> Result<(), BoxError> {
    match got {
        Err(Error::NotFound { .. }) => Ok(()),
        other => Err(fail(format!("expected not found, got {other:?}"))),
    }
}

async fn apply(
    db: &Db<App>,
    ids: &[String; 2],
    models: &mut [Model; 2],
    step: &Step,
) -> Result<(), BoxError> {
    let versions = db.history::<Note>();
    let value = |i: usize, body: &str, version: u64| Note {
        id: ids[i].clone(),
        body: body.to_owned(),
        version,
    };
    match step {
        Step::Create(i, body) => {
            let got = versions.create(&value(*i, body, 0)).await;
            match models[*i].latest.clone() {
                Some((v, _)) => expect_conflict(got, 0, Some(v))?,
                None => {
                    let want = models[*i].write(body);
                    assert_eq!(got?, want);
                }
            }
        }
        Step::AddFresh(i, body) => {
            let v = models[*i].latest.as_ref().map_or(0, |l| l.0);
            let got = versions.add(&value(*i, body, v)).await?;
            assert_eq!(got, models[*i].write(body));
        }
        Step::AddStale(i, body, back) => match models[*i].latest.clone() {
            Some((v, _)) => {
                let stale = v.saturating_sub(*back);
                expect_conflict(versions.add(&value(*i, body, stale)).await, stale, Some(v))?;
            }
            None => {
                // A version the missing item never had.
                expect_conflict(versions.add(&value(*i, body, *back)).await, *back, None)?;
            }
        },
        Step::Revise(i, body) => {
            let b = body.clone();
            let got = versions
                .revise(Note::key(ids[*i].as_str()), move |n| n.body = b.clone())
                .await;
            if models[*i].latest.is_none() {
                expect_not_found(got)?;
            } else {
                let got = got?;
                let want = models[*i].write(body);
                assert_eq!(
                    (got.revision, got.value.body.as_str()),
                    (want, body.as_str())
                );
            }
        }
        Step::Restore(i, k) => {
            let got = versions.restore(Note::key(ids[*i].as_str()), *k).await;
            let old = models[*i].revisions.get(k).cloned();
            match (models[*i].latest.is_some(), old) {
                (true, Some(body)) => {
                    let got = got?;
                    let want = models[*i].write(&body);
                    assert_eq!((got.revision, got.value.body), (want, body));
                }
                _ => expect_not_found(got)?,
            }
        }
        Step::Prune(i, n) => {
            let got = versions
                .prune(Note::key(ids[*i].as_str()), Keep::Newest(*n))
                .await?;
            let all: Vec<u64> = models[*i].revisions.keys().copied().collect();
            let keep = (*n).max(1).min(all.len());
            let (doomed, kept) = all.split_at(all.len() - keep);
            assert_eq!(parts(&got), removed(doomed, kept, false));
            for k in doomed {
                models[*i].revisions.remove(k);
            }
        }
        Step::DeleteAll(i) => {
            let got = versions.delete_all(Note::key(ids[*i].as_str())).await?;
            let all: Vec<u64> = models[*i].revisions.keys().copied().collect();
            assert_eq!(parts(&got), removed(&all, &[], models[*i].latest.is_some()));
            models[*i] = Model::default();
        }
    }
    Ok(())
}

/// The table agrees with the model: latest copy, history, and nothing else stored.
async fn check(db: &Db<App>, ids: &[String; 2], models: &[Model; 2]) -> Result<(), BoxError> {
    let versions = db.history::<Note>();
    for (id, model) in ids.iter().zip(models) {
        let latest = versions.latest(Note::key(id.as_str())).await?;
        let want = model.latest.clone().map(|(version, body)| Note {
            id: id.clone(),
            body,
            version,
        });
        if latest != want {
            return Err(fail(format!("{id}: latest {latest:?}, model {want:?}")));
        }
        let history: Vec<(u64, String)> = history_of(db, id).await?;
        let want: Vec<(u64, String)> = model
            .revisions
            .iter()
            .map(|(k, b)| (*k, b.clone()))
            .collect();
        if history != want {
            return Err(fail(format!("{id}: history {history:?}, model {want:?}")));
        }
        let stored = raw_partition(db, &format!("NOTEBOOK#{id}")).await?.len();
        let expected = model.revisions.len() + usize::from(model.latest.is_some());
        if stored != expected {
            return Err(fail(format!(
                "{id}: {stored} items stored, model {expected}"
            )));
        }
    }
    Ok(())
}

#[test]
fn random_histories_match_a_reference_model() {
    let (runtime, db) = runtime_and_table::<App>().expect("a runtime and a fresh table");
    let mut runner = runner(12);
    let case = std::cell::Cell::new(0u32);
    let result = runner.run(&proptest::collection::vec(step(), 1..10), |steps| {
        case.set(case.get() + 1);
        let ids = [format!("m{}a", case.get()), format!("m{}b", case.get())];
        runtime
            .block_on(async {
                let mut models = [Model::default(), Model::default()];
                for (n, step) in steps.iter().enumerate() {
                    apply(&db, &ids, &mut models, step)
                        .await
                        .map_err(|e| fail(format!("step {n} {step:?}: {e}")))?;
                    check(&db, &ids, &models)
                        .await
                        .map_err(|e| fail(format!("after step {n} {step:?}: {e}")))?;
                }
                Ok::<(), BoxError>(())
            })
            .map_err(|e| TestCaseError::fail(e.to_string()))
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
