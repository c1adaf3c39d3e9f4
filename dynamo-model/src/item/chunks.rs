//! The chunk protocol of single-item writes and reads: a put writes new chunks, flips the
//! item conditionally and deletes the chunks it replaced; a delete removes the item's
//! chunks; a get loads them; the sweep removes chunks no item names (see
//! [`chunk`](crate::chunk) for the stored format).

use crate::call::Operation;
use crate::call::Policy;
use crate::chunk::*;
use crate::error::{DecodeError, DecodeErrorKind};
use crate::expr::Node;
use crate::request::exec::{Sending, exec};
use crate::{Db, Entity, Error, Item, RawKey, Table};
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::HashMap;
use std::sync::Arc;

/// A chunked value a put must write to chunk items.
pub(crate) struct Pending {
    pub(super) field: ChunkedField,
    pub(super) bytes: Arc<[u8]>,
}

/// The values of `entity` a put must write to chunk items (over their inline threshold).
pub(crate) fn pending<E: Entity>(entity: &E) -> Vec<Pending> {
    E::__CHUNKED
        .iter()
        .enumerate()
        .filter_map(|(i, field)| {
            let bytes = entity.__chunk_slot(i)?.encoded(field)?;
            (bytes.len() > field.inline).then_some(Pending {
                field: *field,
                bytes,
            })
        })
        .collect()
}

/// The manifests an item holds, by attribute.
pub(super) fn manifests_in<E: Entity>(item: &Item) -> Vec<(&'static str, Manifest)> {
    E::__CHUNKED
        .iter()
        .filter_map(|field| match item.get(field.attribute) {
            Some(AttributeValue::M(map)) => {
                Manifest::from_attr(map).ok().map(|m| (field.attribute, m))
            }
            _ => None,
        })
        .collect()
}

fn new_token() -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(fastrand::u128(..).to_le_bytes())
}

pub(super) fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Splits `pending` into chunk items for the parent under `parent`; returns the manifest.
pub(super) fn chunk_items<E: Entity>(
    pending: &Pending,
    parent: &RawKey,
    now: u64,
    out: &mut Vec<crate::batch::WriteOp>,
) -> Manifest {
    let schema = &<E::Table as Table>::SCHEMA;
    let token = new_token();
    let size = pending.field.chunk_size.clamp(1, MAX_CHUNK_SIZE);
    let mut count = 0u32;
    for (seq, data) in pending.bytes.chunks(size).enumerate() {
        let key = chunk_key(schema, &token, seq as u32);
        let mut item = key.owned_item(schema, CHUNK_TYPE, (PARENT_PK, PARENT_SK), parent);
        item.insert(
            FIELD.to_owned(),
            AttributeValue::S(pending.field.attribute.to_owned()),
        );
        item.insert(CREATED.to_owned(), AttributeValue::N(now.to_string()));
        item.insert("_d".to_owned(), AttributeValue::B(Blob::new(data.to_vec())));
        out.push(crate::batch::WriteOp::Put {
            entity: CHUNK_TYPE,
            key,
            item,
            table: None,
        });
        count += 1;
    }
    Manifest {
        token,
        chunks: count,
        len: pending.bytes.len() as u64,
        crc: crc32fast::hash(&pending.bytes),
    }
}

/// Writes chunk items (or deletes them); `Err` unless every one was confirmed.
pub(super) async fn write_chunks<T: Table>(
    db: &Db<T>,
    ops: Vec<crate::batch::WriteOp>,
) -> Result<(), Error> {
    if ops.is_empty() {
        return Ok(());
    }
    let out = db.chunk_write().ops(ops).concurrency(8).send().await?;
    let missing = out.unprocessed.len() + out.failed.iter().map(|(o, _)| o.len()).sum::<usize>();
    if missing == 0 {
        return Ok(());
    }
    Err(Error::Incomplete {
        entity: CHUNK_TYPE,
        operation: "BatchWriteItem",
        missing,
        source: out.failed.into_iter().next().map(|(_, e)| Box::new(e)),
    })
}

/// Deletes the chunks of `manifests` (the item under `parent` no longer names them) that
/// the item under `parent` owns: see "Ownership" in the module documentation. A chunk of
/// another owner, or one already gone, is left alone. A failure leaves orphan chunks,
/// which nothing reads. Returns how many chunk items were deleted.
pub(super) async fn delete_owned<T: Table>(
    db: &Db<T>,
    parent: &RawKey,
    manifests: &[(&'static str, Manifest)],
) -> Result<usize, Error> {
    let schema = &T::SCHEMA;
    let chunks = manifests
        .iter()
        .flat_map(|(field, m)| m.keys(schema).into_iter().map(move |key| (key, *field)))
        .map(|(key, field)| (key, parent.clone(), field.to_owned()))
        .collect();
    delete_if_owned(db, chunks).await
}

/// How many chunk deletions run at once.
const DELETE_CONCURRENCY: usize = 8;

/// Deletes each chunk item `(chunk, parent, field)` on the condition that it is a chunk
/// item recording `parent` and `field` as its owner (one conditional `DeleteItem` each,
/// [`DELETE_CONCURRENCY`] at a time: `BatchWriteItem` takes no condition). Returns how
/// many were deleted; `Err` when a request failed (the others still ran).
async fn delete_if_owned<T: Table>(
    db: &Db<T>,
    chunks: Vec<(RawKey, RawKey, String)>,
) -> Result<usize, Error> {
    use futures_util::stream::{self, StreamExt};
    if chunks.is_empty() {
        return Ok(0);
    }
    let results: Vec<Result<bool, Error>> = stream::iter(chunks)
        .map(|(chunk, parent, field)| async move {
            delete_chunk_if_owned(db, chunk, &parent, &field).await
        })
        .buffer_unordered(DELETE_CONCURRENCY)
        .collect()
        .await;
    let mut deleted = 0;
    let mut missing = 0;
    let mut first_error = None;
    for result in results {
        match result {
            Ok(true) => deleted += 1,
            Ok(false) => {}
            Err(e) => {
                missing += 1;
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        None => Ok(deleted),
        Some(e) => Err(Error::Incomplete {
            entity: CHUNK_TYPE,
            operation: "DeleteItem",
            missing,
            source: Some(Box::new(e)),
        }),
    }
}

/// Deletes the chunk item `chunk` if it records `parent` and `field` as its owner:
/// `Ok(true)` when deleted, `Ok(false)` when it records another owner or is gone.
async fn delete_chunk_if_owned<T: Table>(
    db: &Db<T>,
    chunk: RawKey,
    parent: &RawKey,
    field: &str,
) -> Result<bool, Error> {
    use aws_sdk_dynamodb::operation::delete_item::DeleteItemError;
    const OP: &str = "DeleteItem";
    let schema = &T::SCHEMA;
    let owned = Node::owned_by(
        (schema.entity_type, CHUNK_TYPE),
        (PARENT_PK, PARENT_SK),
        parent,
        [Node::equals(FIELD, AttributeValue::S(field.to_owned()))],
    );
    let mut p = crate::expr::Placeholders::default();
    let condition = crate::expr::guard::render_for(CHUNK_TYPE, &mut p, &owned)?;
    let (names, values) = p.finish();
    let key = chunk.to_item(schema);
    let sending = Sending::write(
        db,
        Operation::DeleteItem,
        Policy::CONDITIONAL,
        CHUNK_TYPE,
        Some(&key),
        None,
    );
    let request = db
        .client()
        .delete_item()
        .table_name(db.table_name())
        .set_key(Some(key))
        .condition_expression(condition)
        .set_expression_attribute_names(names)
        .set_expression_attribute_values(values);
    let sent = sending.send(exec!(sending, request)).await;
    match sent {
        Ok(_) => Ok(true),
        Err(e) => match e.into_service_error() {
            DeleteItemError::ConditionalCheckFailedException(_) => Ok(false),
            other => Err(Error::service(OP, db.table_name(), other)),
        },
    }
}

/// Whether `e` says for certain that DynamoDB did not apply the request: refused before
/// sending, or answered with a 4xx error (a 5xx, a timeout or a lost connection may
/// follow an applied write).
pub(super) fn not_applied(e: &Error) -> bool {
    use aws_sdk_dynamodb::error::ProvideErrorMetadata;
    match e {
        Error::Validation { .. } => true,
        Error::Service { source, .. } => {
            !matches!(**source, aws_sdk_dynamodb::Error::InternalServerError(_))
                && matches!(
                    source.code(),
                    Some(code) if !matches!(code, "InternalServerError" | "InternalFailure" | "ServiceUnavailable")
                )
        }
        _ => false,
    }
}

/// The manifests of the item under `key`, read strongly consistent (`None`: no item).
pub(super) async fn read_manifests<E: Entity>(
    db: &Db<E::Table>,
    key: &RawKey,
) -> Result<Option<Vec<(&'static str, Manifest)>>, Error> {
    let schema = &<E::Table as Table>::SCHEMA;
    let mut p = crate::expr::Placeholders::default();
    // The partition key too: an item holding none of the chunked attributes is there.
    let mut projection: Vec<String> = vec![p.name(schema.pk.name)];
    projection.extend(E::__CHUNKED.iter().map(|f| p.name(f.attribute)));
    let (names, _) = p.finish();
    let item = super::consistent::ConsistentGet::new(db, key.to_item(schema))
        .project(projection.join(", "), names)
        .send()
        .await?;
    Ok(item.as_ref().map(manifests_in::<E>))
}

/// After a delete of an item of `E` that returned the item: deletes the chunks it named
/// that it owns (a copy made by another program names chunks it does not own; they stay).
pub(crate) async fn after_delete<E: Entity>(db: &Db<E::Table>, old: &Item) -> Result<(), Error> {
    let schema = &<E::Table as Table>::SCHEMA;
    let Some(key) = crate::schema::raw_key_of(schema, old) else {
        return Ok(());
    };
    delete_owned(db, &key, &manifests_in::<E>(old))
        .await
        .map(|_| ())
}

/// Loads the chunked fields of `entities` that were read without their chunks, with
/// `BatchGetItem` for all of them at once. A value whose chunks are missing or do not
/// match its manifest (replaced while being read) is an error: [`Db::get`] reads the
/// item again in that case.
pub(crate) async fn load<E: Entity>(db: &Db<E::Table>, entities: &mut [E]) -> Result<(), Error> {
    const OP: &str = "BatchGetItem";
    let schema = &<E::Table as Table>::SCHEMA;
    // (entity, field, manifest) of every value to load.
    let mut wanted: Vec<(usize, usize, Manifest)> = Vec::new();
    for (e, entity) in entities.iter().enumerate() {
        for i in 0..E::__CHUNKED.len() {
            if let Some(m) = entity.__chunk_slot(i).and_then(|s| s.manifest()) {
                wanted.push((e, i, m.clone()));
            }
        }
    }
    if wanted.is_empty() {
        return Ok(());
    }
    // Each chunk once, though two entities name the same write (the same item read
    // twice, or copies): BatchGetItem refuses a request with a key twice.
    let mut keys: Vec<RawKey> = wanted.iter().flat_map(|(_, _, m)| m.keys(schema)).collect();
    let mut seen = std::collections::HashSet::with_capacity(keys.len());
    keys.retain(|k| seen.insert(k.pk.clone()));
    // Chunks never change once written, so an eventually consistent read (half the
    // capacity) returns a chunk whole or not at all; only the chunks it did not see yet
    // (written a moment ago) are read again, strongly consistent.
    let plain = Default::default();
    let read_chunks = |keys, consistent| {
        crate::batch::read_keys(
            db,
            Some(CHUNK_TYPE),
            &plain,
            keys,
            consistent,
            db.retry_policy_or(crate::RetryPolicy::default()),
            8,
        )
    };
    let mut read = read_chunks(keys, false).await?;
    if !read.not_found.is_empty() {
        let unseen = std::mem::take(&mut read.not_found)
            .into_iter()
            .map(|(_, key)| key)
            .collect();
        let again = read_chunks(unseen, true).await?;
        read.found.extend(again.found);
        read.unprocessed.extend(again.unprocessed);
        read.failed.extend(again.failed);
    }
    if !read.unprocessed.is_empty() || !read.failed.is_empty() {
        let missing =
            read.unprocessed.len() + read.failed.iter().map(|(k, _)| k.len()).sum::<usize>();
        return Err(Error::Incomplete {
            entity: E::ENTITY_TYPE,
            operation: OP,
            missing,
            source: read.failed.into_iter().next().map(|(_, e)| Box::new(e)),
        });
    }
    let mut data: HashMap<String, Vec<u8>> = HashMap::with_capacity(read.found.len());
    for (_, mut item) in read.found {
        let pk = match item.remove(schema.pk.name) {
            Some(AttributeValue::S(pk)) => pk,
            _ => continue,
        };
        if let Some(AttributeValue::B(bytes)) = item.remove("_d") {
            data.insert(pk, bytes.into_inner());
        }
    }
    for (e, i, manifest) in wanted {
        // Sized by the chunks found, not by the manifest's claim alone.
        let found: usize = manifest
            .keys(schema)
            .iter()
            .filter_map(|k| data.get(&k.pk).map(Vec::len))
            .sum();
        let mut encoded = Vec::with_capacity(found);
        for key in manifest.keys(schema) {
            match data.get(&key.pk) {
                Some(bytes) => encoded.extend_from_slice(bytes),
                None => {
                    return Err(chunk_error::<E>(
                        &manifest,
                        format!(
                            "chunk {} is missing (the value was replaced while being read, or its chunks were deleted)",
                            key.pk
                        ),
                    ));
                }
            }
        }
        if encoded.len() as u64 != manifest.len || crc32fast::hash(&encoded) != manifest.crc {
            return Err(chunk_error::<E>(
                &manifest,
                format!(
                    "the chunks hold {} bytes with CRC {}, the manifest says {} bytes with CRC {}",
                    encoded.len(),
                    crc32fast::hash(&encoded),
                    manifest.len,
                    manifest.crc
                ),
            ));
        }
        let Some(field) = E::__CHUNKED.get(i) else {
            continue;
        };
        if let Some(slot) = entities
            .get_mut(e)
            .and_then(|entity| entity.__chunk_slot_mut(i))
        {
            slot.fill(&encoded, field).map_err(|kind| {
                Error::Decode(DecodeError {
                    entity: E::ENTITY_TYPE,
                    key: None,
                    attribute: Some(field.attribute.to_owned()),
                    kind,
                })
            })?;
        }
    }
    Ok(())
}

fn chunk_error<E: Entity>(manifest: &Manifest, message: String) -> Error {
    Error::Decode(DecodeError {
        entity: E::ENTITY_TYPE,
        key: Some(format!("chunks of write {}", manifest.token)),
        attribute: None,
        kind: DecodeErrorKind::Invalid(message),
    })
}

impl<T: Table> Db<T> {
    /// Loads the chunked fields that `entities` were read without (by a query, a scan
    /// or a batch get), with one `BatchGetItem` call for all of them (several when they
    /// have more than 100 chunks). See [`crate::chunk`].
    pub async fn load_chunks<E: Entity<Table = T>>(&self, entities: &mut [E]) -> Result<(), Error> {
        load(self, entities).await
    }
}

mod orphans;

#[cfg(test)]
mod tests;
