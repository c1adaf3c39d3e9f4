//! Number sets (`NS`) and binary sets (`BS`) against DynamoDB Local: stored and read back,
//! changed element by element with `add_to_set` / `delete_from_set`, and guarding writes
//! with `contains`.

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::primitives::Blob;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::{local, Binary, Entity, Error};
use std::collections::{BTreeSet, HashSet};

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "TALLY#{id}", sk = "TALLY")]
pub struct Tally {
    pub id: String,
    pub scores: BTreeSet<u64>,
    pub offsets: HashSet<i32>,
    pub digests: BTreeSet<Binary>,
    pub spare: Option<BTreeSet<u16>>,
}

fn bin(bytes: &[u8]) -> Binary {
    Binary(bytes.to_vec())
}

/// A fresh table holding the tally `t`: three scores (`u64::MAX` among them), three
/// offsets, two digests and no spare set.
async fn stored_tally() -> Res<(local::TempTable<App>, Tally)> {
    let tally = Tally {
        id: "t".into(),
        scores: BTreeSet::from([1, 7, u64::MAX]),
        offsets: HashSet::from([-5, 0, 12]),
        digests: BTreeSet::from([bin(&[0, 255]), bin(b"abc")]),
        spare: None,
    };
    Ok((table_with([tally.clone()]).await?, tally))
}

/// The stored `scores`, `digests` and `spare` attributes of the tally `t`, as another
/// program reads them.
async fn stored_sets(db: &dynamo_model::Db<App>) -> Res<[Option<AttributeValue>; 3]> {
    let item = raw_get(db, "TALLY#t", "TALLY").await?;
    Ok(["scores", "digests", "spare"].map(|name| item.get(name).cloned()))
}

#[tokio::test]
async fn number_and_binary_sets_round_trip_and_change_element_by_element() -> TestResult {
    let (db, tally) = stored_tally().await?;
    assert_eq!(db.get(Tally::key("t")).await?, Some(tally.clone()));
    let [scores, digests, spare] = stored_sets(&db).await?;
    let mut numbers = match scores {
        Some(AttributeValue::Ns(numbers)) => numbers,
        other => return Err(format!("scores stored as {other:?}").into()),
    };
    numbers.sort();
    assert_eq!(numbers, ["1", "18446744073709551615", "7"]);
    assert!(matches!(digests, Some(AttributeValue::Bs(b)) if b.len() == 2));
    assert_eq!(spare, None, "an absent set is not stored");

    // ADD: into existing sets (an element already there counts once), and into the
    // absent spare set, which it creates.
    let f = Tally::fields();
    let added = db
        .update(Tally::key("t"))
        .add_to_set(f.scores, [2, 7])
        .add_to_set(f.offsets, [-7])
        .add_to_set(f.digests, [bin(&[9])])
        .add_to_set(f.spare, [3])
        .await?;
    assert_eq!(added.scores, BTreeSet::from([1, 2, 7, u64::MAX]));
    assert_eq!(added.offsets, HashSet::from([-7, -5, 0, 12]));
    assert_eq!(added.digests.len(), 3);
    assert_eq!(added.spare, Some(BTreeSet::from([3])));

    // DELETE: the last elements of a set remove its attribute; elements a set does not
    // hold are ignored.
    let deleted = db
        .update(Tally::key("t"))
        .delete_from_set(f.scores, added.scores.iter())
        .delete_from_set(f.offsets, [0, 99])
        .delete_from_set(f.digests, added.digests)
        .delete_from_set(f.spare, [3])
        .await?;
    assert_eq!(
        (deleted.scores.len(), deleted.digests.len(), &deleted.spare),
        (0, 0, &None)
    );
    assert_eq!(deleted.offsets, HashSet::from([-7, -5, 12]));
    assert_eq!(stored_sets(&db).await?, [None, None, None]);
    assert_eq!(db.get(Tally::key("t")).await?, Some(deleted));
    Ok(())
}

/// Whether `result` is the failure of a write's condition.
fn condition_failed<T: std::fmt::Debug>(result: Result<T, Error>) -> bool {
    matches!(result, Err(Error::ConditionFailed { .. }))
}

#[tokio::test]
async fn contains_on_number_and_binary_sets_guards_updates_and_puts() -> TestResult {
    let (db, tally) = stored_tally().await?;
    let f = Tally::fields();

    // Both hold: the update is applied.
    let guarded = db
        .update(Tally::key("t"))
        .add_to_set(f.offsets, [1])
        .condition(
            f.scores
                .contains(u64::MAX)
                .and(f.digests.contains(bin(b"abc"))),
        );
    assert!(guarded.await?.offsets.contains(&1));

    // A number the set does not hold, an element of an absent set: refused.
    for unmet in [f.offsets.contains(404), f.spare.contains(3)] {
        let update = db.update(Tally::key("t")).add_to_set(f.offsets, [2]);
        assert!(condition_failed(update.condition(unmet).await));
    }

    // A put guarded by a binary set: refused without the element, applied with it.
    let mut replaced = tally.clone();
    replaced.scores.insert(8);
    let refused = db
        .put(&replaced)
        .condition(f.digests.contains(bin(&[1, 2, 3])))
        .await;
    assert!(condition_failed(refused));
    let held = tally.digests.first().ok_or("no digest")?;
    db.put(&replaced)
        .condition(f.digests.contains(held))
        .await?;
    assert_eq!(db.get(Tally::key("t")).await?, Some(replaced));
    Ok(())
}

#[tokio::test]
async fn set_updates_render_as_add_and_delete_and_contains_as_its_function() -> TestResult {
    let f = Tally::fields();
    let (db, _) = stored_tally().await?;
    let params = db
        .update(Tally::key("t"))
        .add_to_set(f.scores, [30, 4])
        .delete_from_set(f.digests, [bin(&[7])])
        .condition(f.offsets.contains(-2))
        .params()?;
    let names = params.expression_attribute_names().ok_or("no names")?;
    let values = params.expression_attribute_values().ok_or("no values")?;
    // The placeholders of `attribute` and of `value`, as the request names them.
    let placeholders = |attribute: &str, value: AttributeValue| {
        let name = names.iter().find(|(_, n)| *n == attribute).map(|(p, _)| p);
        let value = values.iter().find(|(_, v)| **v == value).map(|(p, _)| p);
        name.zip(value)
            .ok_or(format!("no {attribute} with its value"))
    };
    let update = params.update_expression().ok_or("no update expression")?;
    let (scores, numbers) =
        placeholders("scores", AttributeValue::Ns(vec!["4".into(), "30".into()]))?;
    assert!(
        update.contains(&format!("ADD {scores} {numbers}")),
        "{update}"
    );
    let (digests, bytes) = placeholders("digests", AttributeValue::Bs(vec![Blob::new(vec![7])]))?;
    assert!(
        update.contains(&format!("DELETE {digests} {bytes}")),
        "{update}"
    );
    let condition = params.condition_expression().ok_or("no condition")?;
    let (offsets, number) = placeholders("offsets", AttributeValue::N("-2".into()))?;
    assert!(
        condition.contains(&format!("contains({offsets}, {number})")),
        "{condition}"
    );

    // No element to add: DynamoDB has no empty set, so the update is refused unsent.
    let empty = db
        .update(Tally::key("t"))
        .add_to_set(f.scores, Vec::<u64>::new())
        .params();
    assert!(empty.is_err());
    Ok(())
}
