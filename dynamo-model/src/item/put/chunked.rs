//! The put of an entity with chunked fields: the chunk protocol's steps around the
//! conditional write of the item (the protocol's other writes and reads are the item
//! module's `chunks`).

use super::{Put, Sent};
use crate::chunk::*;
use crate::expr::Node;
use crate::item::chunks::{
    Pending, chunk_items, delete_owned, manifests_in, not_applied, now_millis, read_manifests,
    write_chunks,
};
use crate::{Db, Entity, Error, Item, RawKey};

/// How long a chunked put may take to send its item after its chunks were written: it
/// does not start sending later than `MAX_FLIP_DELAY - SEND_WINDOW` after writing them,
/// and gives the `PutItem` call (retries included) at most this long, so the item never
/// names chunks older than [`MAX_FLIP_DELAY`].
const SEND_WINDOW: std::time::Duration = std::time::Duration::from_secs(60);

/// Manifests of chunked attributes, by attribute.
type Manifests = Vec<(&'static str, Manifest)>;

/// `db.put` of an entity with chunked fields; see the module documentation.
pub(super) async fn put<E: Entity>(mut put: Put<E>) -> Result<(), Error> {
    const OP: &str = "PutItem";
    let db = put.db().clone();
    let pending = put.take_pending();
    let mut item = put.take_item()?;
    let key = crate::item::key_of_item::<E>(&item)?;

    // 1. What the stored item names now (`None`: no item).
    let stored_item = read_manifests::<E>(&db, &key).await?;
    let exists = stored_item.is_some();
    let stored = stored_item.unwrap_or_default();

    // The new chunks and the item naming them, rendered and validated before anything is
    // written (an item over 400 KB, a bad condition: refused with nothing left behind).
    let now = now_millis();
    let started = std::time::Instant::now();
    let (ops, written) = render_chunks::<E>(&pending, &key, now, &mut item)?;
    // What the item will name once written: new manifests, and those of values the
    // entity was read without (kept as they are).
    let named = manifests_in::<E>(&item);
    let conditions = manifest_conditions::<E>(&key, exists, &stored, &named, &written)?;
    let request = put
        .restore_item(item)
        .chunk_conditions(conditions)
        .ready()?
        .within(SEND_WINDOW);

    // 2. The new chunks.
    if let Err(e) = write_chunks(&db, ops).await {
        // Nothing names them: delete what was written (best effort, else orphans).
        let _ = delete_owned(&db, &key, &written).await;
        return Err(e.during(OP));
    }

    // 3. The item, if its manifests are still those read, and only while its chunks are
    // young: the orphan sweep deletes unnamed chunks older than `MAX_FLIP_DELAY` at the
    // least, so a put never names chunks written longer ago (a process paused between its
    // steps gives up instead; the send itself is bounded by `SEND_WINDOW`).
    if too_late_to_send(now, started) {
        let _ = delete_owned(&db, &key, &written).await;
        return Err(Error::DeadlineExceeded {
            operation: OP,
            table: db.table_name().to_owned(),
            client_request_token: None,
        });
    }
    let (sent, ambiguous) = request.send_watched().await;
    match sent {
        Ok(sent) => {
            // 4. The chunks the item no longer names (never those it names still), of
            // those it owns: a stored manifest may name another item's chunks (the item
            // was copied here by another program), which stay.
            let replaced = replaced_chunks::<E>(sent, stored, &named, written);
            // The new value is stored; chunks left behind are orphans nothing reads.
            let _ = delete_owned(&db, &key, &replaced).await;
            Ok(())
        }
        Err(e) => {
            delete_unnamed_after_failure::<E>(&db, &key, &e, ambiguous, written).await;
            Err(e)
        }
    }
}

/// The chunk items of each pending value (into the returned write operations), and its
/// manifest in `item`; returns the operations and the manifests written, by attribute.
fn render_chunks<E: Entity>(
    pending: &[Pending],
    key: &RawKey,
    now: u64,
    item: &mut Item,
) -> Result<(Vec<crate::batch::WriteOp>, Manifests), Error> {
    let mut ops = Vec::new();
    let mut written = Vec::new();
    for p in pending {
        // A manifest naming more chunks than a read accepts would make the value
        // unreadable: refused before anything is written.
        let size = p.field.chunk_size.clamp(1, MAX_CHUNK_SIZE);
        let chunks = p.bytes.len().div_ceil(size) as u64;
        if chunks > MAX_CHUNKS {
            return Err(Error::invalid(
                E::ENTITY_TYPE,
                crate::ValidationReason::ItemTooLarge,
                format!(
                    "`{}` is {} bytes stored: {chunks} chunks of {size} bytes, over the {MAX_CHUNKS} a read accepts; raise chunk_size",
                    p.field.attribute,
                    p.bytes.len()
                ),
            ));
        }
        let manifest = chunk_items::<E>(p, key, now, &mut ops);
        item.insert(p.field.attribute.to_owned(), manifest.to_attr());
        written.push((p.field.attribute, manifest));
    }
    Ok((ops, written))
}

/// The put's condition on each chunked attribute: the stored item names what the put
/// keeps, or what was read in step 1 (`stored`), or nothing. `named`: the manifests the
/// item will hold; `written`: the new ones; `exists`: whether an item is stored.
fn manifest_conditions<E: Entity>(
    key: &RawKey,
    exists: bool,
    stored: &[(&'static str, Manifest)],
    named: &[(&'static str, Manifest)],
    written: &[(&'static str, Manifest)],
) -> Result<Vec<Node>, Error> {
    let mut conditions = Vec::new();
    for field in E::__CHUNKED {
        let kept = named.iter().find(|(attr, m)| {
            *attr == field.attribute && !written.iter().any(|(_, w)| w.token == m.token)
        });
        // A value read without its chunks, put where no item is stored (listed under one
        // key, put under another): there are no chunks to keep, and the put does not hold
        // the value. Refused with that reason, before anything is written.
        if kept.is_some() && !exists {
            return Err(Error::ChunksNotLoaded {
                entity: E::ENTITY_TYPE,
                key: crate::Key::<E>::from_raw(key.clone()).to_string(),
                attribute: field.attribute,
            });
        }
        conditions.push(match kept {
            // A value read without its chunks names them again: the stored item must still
            // name those very chunks (else a stale copy, or a copy under another key, would
            // name chunks that were replaced and deleted, or that another item owns).
            Some((_, m)) => crate::item::manifest_is(field.attribute, &m.token),
            None => match stored.iter().find(|(attr, _)| *attr == field.attribute) {
                Some((_, m)) => crate::item::manifest_is(field.attribute, &m.token),
                None => crate::item::no_manifest(field.attribute),
            },
        });
    }
    Ok(conditions)
}

/// Whether the chunks written at `now` (wall clock, ms) and `started` are too old for an
/// item to name them once sent. Elapsed time by both clocks: the wall clock (what the
/// sweep compares `_ct` with) and the monotonic one (a wall clock stepped back must not
/// hide a long pause).
fn too_late_to_send(now: u64, started: std::time::Instant) -> bool {
    let latest_send = MAX_FLIP_DELAY.saturating_sub(SEND_WINDOW);
    let by_wall = std::time::Duration::from_millis(now_millis().saturating_sub(now));
    by_wall.max(started.elapsed()) > latest_send
}

/// The chunks a stored put replaced: those read (`stored`) or written that the item as
/// stored does not name.
fn replaced_chunks<E: Entity>(
    sent: Sent,
    stored: Vec<(&'static str, Manifest)>,
    named: &[(&'static str, Manifest)],
    written: Vec<(&'static str, Manifest)>,
) -> Vec<(&'static str, Manifest)> {
    match sent {
        // The item sent is stored: it names the new chunks and those kept.
        Sent::Written => stored
            .into_iter()
            .filter(|(_, m)| !named.iter().any(|(_, n)| n.token == m.token))
            .collect(),
        // The item stored carries this call's token, but an earlier call resent
        // with that token may have stored it, naming other chunks than this call
        // wrote (its own, read in step 1): the item as returned says which chunks
        // it names, and those read or written that it does not name are deleted.
        Sent::Found(now) => {
            let now_named = manifests_in::<E>(&now);
            stored
                .into_iter()
                .chain(written)
                .filter(|(_, m)| !now_named.iter().any(|(_, n)| n.token == m.token))
                .collect()
        }
    }
}

/// After the put failed with `e`, deletes the new chunks (`written`) the item surely does
/// not name (best effort). `ambiguous`: whether an attempt of the put may have been
/// applied.
async fn delete_unnamed_after_failure<E: Entity>(
    db: &Db<E::Table>,
    key: &RawKey,
    e: &Error,
    ambiguous: bool,
    written: Vec<(&'static str, Manifest)>,
) {
    // The new chunks are deleted when the item surely does not name them: the
    // put was refused (a failed condition, or another 4xx) and no attempt of it
    // may have been applied. After an ambiguous attempt (a 5xx, a timeout), the
    // item may name them: after a failed condition, the item as it is now says
    // which (an earlier attempt stored it, and another write may since have
    // replaced it); otherwise they stay, and the sweep judges them later.
    let condition_failed = matches!(
        e,
        Error::ConditionFailed { .. }
            | Error::VersionConflict { .. }
            | Error::OtherEntityStored { .. }
    );
    let refused = condition_failed || not_applied(e);
    if refused && !ambiguous {
        let _ = delete_owned(db, key, &written).await;
    } else if refused
        && condition_failed
        && let Ok(now_named) = read_manifests::<E>(db, key).await
    {
        let now_named = now_named.unwrap_or_default();
        let unnamed: Vec<(&'static str, Manifest)> = written
            .into_iter()
            .filter(|(_, w)| !now_named.iter().any(|(_, m)| m.token == w.token))
            .collect();
        let _ = delete_owned(db, key, &unnamed).await;
    }
}
