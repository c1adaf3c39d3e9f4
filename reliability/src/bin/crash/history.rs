//! The history protocol: create, add, revise, restore, revise, prune, delete all. Its
//! states: 0 (no item), `k` in 1..=5 (revisions 1 to `k`, the latest copy at `k`), 6
//! (revisions 1 to 3 pruned, 4 and 5 kept), 7 (deleted: no latest copy, and no revision
//! or, when the deletion was interrupted, revisions 4 and 5 left for it to finish).

use dynamo_model::Db;
use dynamo_model::history::Keep;
use reliability::{Doc, Res, Rig};

/// The body of revision `k` (revision 4 restores revision 1).
const BODIES: [&str; 5] = ["r1", "r2", "r3", "r1", "r5"];

pub const STEPS: &[&str] = &[
    "create r1",
    "add r2",
    "revise to r3",
    "restore revision 1",
    "revise to r5",
    "prune to the newest 2",
    "delete all",
];

/// The state once the item is deleted.
const DELETED: usize = 7;

const ID: &str = "d";

fn doc(body: &str, version: u64) -> Doc {
    Doc {
        id: ID.into(),
        body: body.into(),
        version,
    }
}

/// The child's steps.
pub async fn run(db: &Db<Rig>, step: &mut dyn FnMut(usize)) -> Res<()> {
    let history = db.history::<Doc>();
    step(0);
    history.create(&doc("r1", 0)).await?;
    step(1);
    history.add(&doc("r2", 1)).await?;
    step(2);
    history
        .revise(Doc::key(ID), |d| d.body = "r3".into())
        .await?;
    step(3);
    history.restore(Doc::key(ID), 1).await?;
    step(4);
    history
        .revise(Doc::key(ID), |d| d.body = "r5".into())
        .await?;
    step(5);
    history.prune(Doc::key(ID), Keep::Newest(2)).await?;
    step(6);
    history.delete_all(Doc::key(ID)).await?;
    Ok(())
}

/// The revisions present (number and body, oldest first) and the latest copy.
async fn read(db: &Db<Rig>) -> Res<(Vec<(u64, String)>, Option<Doc>)> {
    let history = db.history::<Doc>();
    let mut revisions: Vec<(u64, String)> = history
        .revisions(Doc::key(ID))
        .consistent()
        .all()
        .await?
        .items
        .into_iter()
        .map(|r| (r.revision, r.value.body))
        .collect();
    revisions.sort();
    let latest = history.latest(Doc::key(ID)).await?;
    Ok((revisions, latest))
}

/// The state the stored history is in, or what is wrong with it: a gap, a duplicate, a
/// revision with the wrong body, or a latest copy that is not the highest revision.
fn state_of(revisions: &[(u64, String)], latest: Option<&Doc>) -> Result<usize, String> {
    let Some(latest) = latest else {
        // `delete_all` deletes the latest copy first: revisions without it are what an
        // interrupted deletion leaves (of the pruned history, 4 and 5).
        let pruned = [(4, BODIES[3].to_owned()), (5, BODIES[4].to_owned())];
        return match revisions {
            [] => Ok(0),
            left if left == pruned => Ok(DELETED),
            _ => Err(format!("revisions {revisions:?} without a latest copy")),
        };
    };
    let v = latest.version;
    let body = |k: u64| BODIES.get(k as usize - 1).copied();
    if !(1..=5).contains(&v) || body(v) != Some(latest.body.as_str()) {
        return Err(format!("a latest copy that no step wrote: {latest:?}"));
    }
    let want = |from: u64| -> Vec<(u64, String)> {
        (from..=v)
            .map(|k| (k, body(k).unwrap_or_default().to_owned()))
            .collect()
    };
    if revisions == want(1) {
        Ok(v as usize)
    } else if v == 5 && revisions == want(4) {
        Ok(6)
    } else {
        Err(format!("latest at {v}, revisions {revisions:?}"))
    }
}

/// After the kill: the state is the one before or after the announced step; then the
/// recovery (the prune run again, which finishes an interrupted one) and a revision
/// more, with no gap.
pub async fn check(db: &Db<Rig>, last: Option<usize>) -> Res<String> {
    let allowed = match last {
        None => 0..=0,
        Some(i) => i..=(i + 1).min(STEPS.len()),
    };
    let (revisions, latest) = read(db).await?;
    let mut state = state_of(&revisions, latest.as_ref())?;
    // No item before the create, or after the deletion.
    if state == 0 && last.is_some_and(|i| i + 1 >= DELETED) {
        state = DELETED;
    }
    if !allowed.contains(&state) {
        return Err(format!("state {state}, {allowed:?} expected").into());
    }
    if state == 0 {
        return Ok("no item".into());
    }
    let history = db.history::<Doc>();
    if state == DELETED {
        // The deletion run again finishes an interrupted one; the key is then free.
        let interrupted = !revisions.is_empty();
        history.delete_all(Doc::key(ID)).await?;
        let (revisions, latest) = read(db).await?;
        if !revisions.is_empty() || latest.is_some() {
            return Err(format!("after delete_all again, {revisions:?} and {latest:?}").into());
        }
        let created = history.create(&doc("again", 0)).await?;
        if created != 1 {
            return Err(format!("created again at revision {created}").into());
        }
        return Ok(if interrupted {
            "deleted, revisions left".into()
        } else {
            "deleted".into()
        });
    }
    history.prune(Doc::key(ID), Keep::Newest(2)).await?;
    let next = history
        .revise(Doc::key(ID), |d| d.body = "after".into())
        .await?;
    let (revisions, _) = read(db).await?;
    let v = next.revision;
    let kept: Vec<u64> = revisions.iter().map(|(k, _)| *k).collect();
    let want: Vec<u64> = (v.saturating_sub(2).max(1)..=v).collect();
    if kept != want || next.value.version != v {
        return Err(format!("after the recovery, revision {v} and {kept:?}").into());
    }
    Ok(format!("state {state}"))
}
