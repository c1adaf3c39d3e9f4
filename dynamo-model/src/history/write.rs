//! How a history is written: the latest copy read, each revision written with the latest
//! copy in one transaction, and revisions deleted in transactions of up to 100.

use super::{History, HistoryLayout, Revision, Versioned, now_millis};
use crate::error::CancelledOperation;
use crate::expr::{Node, Placeholders};
use crate::item::ambiguous::WriteToken;
use crate::item::{PreparedWrite, and, is_entity, item_absent, version_is};
use crate::retry::Deadline;
use crate::transact::MAX_TRANSACTION_ITEMS;
use crate::{Error, Item, Key, RawKey, Table};
use aws_sdk_dynamodb::types::AttributeValue;

impl<E: Versioned> History<E> {
    /// The latest copy, read strongly consistent (again while the read fails transiently,
    /// until `deadline`); [`Error::NotFound`] when there is none.
    pub(super) async fn read_latest(&self, key: &Key<E>, deadline: &Deadline) -> Result<E, Error> {
        self.db
            .get(key.clone())
            .consistent()
            .send_until(&self.policy, deadline)
            .await?
            .ok_or_else(|| Error::NotFound {
                entity: E::ENTITY_TYPE,
                key: key.to_string(),
            })
    }

    pub(super) fn written(&self, mut value: E, revision: u64) -> Revision<E> {
        value.__set_version(revision);
        Revision {
            revision,
            revised_at: None,
            value,
        }
    }

    /// The transaction that writes revision `expected + 1` of `value` and the latest copy.
    pub(super) async fn write(&self, value: &E, expected: u64) -> Result<u64, Error> {
        let layout = Self::layout()?;
        let version_attr = Self::version_attribute()?;
        let next = crate::item::next_version::<E>(expected)?;
        if next > layout.max_slot() {
            return Err(Error::invalid(
                E::ENTITY_TYPE,
                crate::ValidationReason::VersionOverflow,
                format!(
                    "revision {next} does not fit the history layout's {} digits",
                    layout.width
                ),
            ));
        }
        let token = WriteToken::new();
        let mut latest = Self::latest_item(value, layout, version_attr, next, &token)?;
        let latest_key = crate::item::key_of_item::<E>(&latest)?;
        let revision_key = revision_key(E::ENTITY_TYPE, layout, &latest_key, next)?;
        let revision = Self::revision_item(layout, version_attr, &mut latest, &revision_key);
        crate::size::check_item_size::<E>(&latest)?;
        crate::size::check_item_size::<E>(&revision)?;

        let revision_op = Self::put(&revision_key, revision, item_absent::<E>(), None)?;
        let latest_guard = if expected == 0 {
            item_absent::<E>()
        } else {
            and(version_is(version_attr, expected), Some(is_entity::<E>()))
        };
        let latest_op = Self::put(
            &latest_key,
            latest,
            latest_guard,
            Some((version_attr, expected)),
        )?;
        let latest_described = latest_op.key.clone();
        let result = self
            .db
            .transact_write()
            .retry(self.policy)
            .prepared_put(revision_op)
            .prepared_put(latest_op)
            .send()
            .await;
        match result {
            Ok(()) => Ok(next),
            Err(Error::TransactionCanceled { operations }) => {
                Self::canceled(operations, &token, version_attr, expected, latest_described)
                    .map(|()| next)
            }
            Err(e) => Err(e),
        }
    }

    /// The latest copy of `value` at revision `next`: its version, the time of the write
    /// (when the layout records it) and this call's write token.
    fn latest_item(
        value: &E,
        layout: &HistoryLayout,
        version_attr: &'static str,
        next: u64,
        token: &WriteToken,
    ) -> Result<Item, Error> {
        let schema = &<E::Table as Table>::SCHEMA;
        // A revision after the first keeps the creation time its value holds.
        let stamp = crate::entity::Stamp {
            first: next == 1,
            ..crate::entity::Stamp::now()
        };
        let mut latest = crate::entity::write_item(value, Some(stamp), None)?;
        latest.insert(version_attr.to_owned(), AttributeValue::N(next.to_string()));
        if let Some(time) = layout.time_attribute {
            latest.insert(time.to_owned(), AttributeValue::N(now_millis().to_string()));
        }
        // Both items carry a token unique to this call: a failed condition that finds it
        // (on either item) found this call's own write, applied by an attempt whose
        // response was lost, even when another writer has added a revision since. Without
        // it (`write_token = false`) the transaction's own ClientRequestToken still makes
        // its retries apply at most once within DynamoDB's ten-minute window.
        if E::__WRITES_TOKEN {
            latest.insert(schema.write_token.to_owned(), token.value());
        }
        Ok(latest)
    }

    /// The revision: the same attributes as the latest copy under its own slot
    /// (`revision_key`), without the index keys the entity renders (history stays out of
    /// its indexes). With `counter_on_latest`, the counter is taken off the revision and
    /// the time off `latest`.
    fn revision_item(
        layout: &HistoryLayout,
        version_attr: &'static str,
        latest: &mut Item,
        revision_key: &RawKey,
    ) -> Item {
        let schema = &<E::Table as Table>::SCHEMA;
        let mut revision = latest.clone();
        if layout.counter_on_latest {
            // The counter stays on the latest copy (a revision's number is its key's),
            // and the time on the revision: a program that changes the latest copy in
            // place would otherwise leave this call's time on it, and a copy of it
            // (a stream consumer's revision) would carry that time as its own.
            revision.remove(version_attr);
            if let Some(time) = layout.time_attribute {
                latest.remove(time);
            }
        }
        for index in E::__INDEX_KEYS {
            if layout.revisions_in.contains(&index.index) {
                continue;
            }
            for attribute in [index.pk, index.sk].into_iter().flatten() {
                revision.remove(attribute);
            }
        }
        if let (Some(attr), Some(sk)) = (schema.sk, revision_key.sk.clone()) {
            revision.insert(attr.name.to_owned(), AttributeValue::S(sk));
        }
        revision
    }

    /// A put of `item` under `key` on the condition `guard`.
    fn put(
        key: &RawKey,
        item: Item,
        guard: Node,
        expected_version: Option<(&'static str, u64)>,
    ) -> Result<PreparedWrite, Error> {
        let schema = &<E::Table as Table>::SCHEMA;
        Ok(PreparedWrite {
            item: Some(item),
            expected_version,
            ..PreparedWrite::guarded::<E>(
                (describe(schema, key), key.to_item(schema)),
                Placeholders::default(),
                &guard,
            )?
        })
    }

    /// What a canceled transaction of [`write`](Self::write) means: `Ok` when it finds this
    /// call's own write (`token`) applied, a version conflict when the latest copy's
    /// condition failed (`latest_described`: its key), else the cancellation.
    fn canceled(
        operations: Vec<CancelledOperation>,
        token: &WriteToken,
        version_attr: &'static str,
        expected: u64,
        latest_described: String,
    ) -> Result<(), Error> {
        let schema = &<E::Table as Table>::SCHEMA;
        // Our own write, applied by an attempt whose response was lost: the
        // revision (or the latest copy, if nobody wrote since) holds our token.
        if E::__WRITES_TOKEN
            && operations
                .iter()
                .any(|o| token.written_in(o.current.as_deref(), schema.write_token))
        {
            return Ok(());
        }
        // The latest copy's failed condition says what is stored there now.
        let current = operations
            .iter()
            .find(|o| o.index == 1)
            .and_then(|o| o.current.clone());
        let latest_failed = operations.iter().any(|o| {
            o.index == 1
                && matches!(
                    o.reason,
                    crate::error::CancelReason::ConditionalCheckFailed
                        | crate::error::CancelReason::NotFound
                        | crate::error::CancelReason::OtherEntityStored(_)
                )
        });
        if latest_failed {
            // Another entity type's item, or the stored version: the version check of
            // an expected 0 is the item's absence, so any item stored is a conflict.
            let error = crate::item::condition_failed::<E>(
                latest_described,
                current.map(|item| *item),
                false,
                Some((version_attr, expected)),
            );
            return Err(match error {
                Error::ConditionFailed {
                    entity,
                    key,
                    current,
                } => {
                    let found = current
                        .as_ref()
                        .and_then(|item| item.get(version_attr))
                        .and_then(|v| v.as_n().ok())
                        .and_then(|n| n.parse::<u64>().ok());
                    Error::VersionConflict {
                        entity,
                        key,
                        expected,
                        found,
                        current,
                    }
                }
                other => other,
            });
        }
        Err(Error::TransactionCanceled { operations })
    }

    /// Deletes these revisions of the item under `key`, up to 100 per transaction, each
    /// conditioned on the item being absent or this entity's at that revision.
    pub(super) async fn delete_revisions(
        &self,
        key: &Key<E>,
        revisions: &[u64],
    ) -> Result<(), Error> {
        let layout = Self::layout()?;
        let version_attr = Self::version_attribute()?;
        let schema = &<E::Table as Table>::SCHEMA;
        let latest = key.raw()?;
        for chunk in revisions.chunks(MAX_TRANSACTION_ITEMS) {
            let mut transaction = self.db.transact_write().retry(self.policy);
            for &k in chunk {
                let raw = revision_key(E::ENTITY_TYPE, layout, latest, k)?;
                let p = Placeholders::default();
                // Gone already (an interrupted prune run again), or this very revision
                // (which, with the counter on the latest copy only, may hold no number:
                // its key's is its own).
                let number = if layout.counter_on_latest {
                    Node::either(Node::absent(version_attr), version_is(version_attr, k))
                } else {
                    version_is(version_attr, k)
                };
                let node = crate::expr::Node::Or(
                    Box::new(item_absent::<E>()),
                    Box::new(and(number, Some(is_entity::<E>()))),
                );
                transaction = transaction.prepared_delete(PreparedWrite::guarded::<E>(
                    (describe(schema, &raw), raw.to_item(schema)),
                    p,
                    &node,
                )?);
            }
            transaction.send().await?;
        }
        Ok(())
    }
}

/// The rest of a latest copy's sort key (what the entity's template renders).
pub(super) fn rest_of<'a>(
    entity: &'static str,
    layout: &HistoryLayout,
    latest: &'a RawKey,
) -> Result<&'a str, Error> {
    match latest.sk.as_deref().and_then(|sk| layout.parse(sk)) {
        Some((0, rest)) => Ok(rest),
        _ => Err(Error::invalid(
            entity,
            crate::ValidationReason::WrongKeySpace,
            format!(
                "the key's sort key {} is not the latest copy of an item with history",
                crate::error::key_text(&format_args!("{:?}", latest.sk))
            ),
        )),
    }
}

/// The key of revision `k` of the item whose latest copy is under `latest`.
pub(super) fn revision_key(
    entity: &'static str,
    layout: &HistoryLayout,
    latest: &RawKey,
    k: u64,
) -> Result<RawKey, Error> {
    let rest = rest_of(entity, layout, latest)?;
    Ok(RawKey {
        pk: latest.pk.clone(),
        sk: Some(layout.key(k, rest)),
    })
}

pub(super) fn describe(schema: &crate::TableSchema, key: &RawKey) -> String {
    match (schema.sk, &key.sk) {
        (Some(attr), Some(sk)) => format!("{}={}, {}={}", schema.pk.name, key.pk, attr.name, sk),
        _ => format!("{}={}", schema.pk.name, key.pk),
    }
}
