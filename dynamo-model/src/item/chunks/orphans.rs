//! The sweep of orphan chunk items: chunks old enough to judge whose item no longer names
//! their write (a put that failed or crashed after writing them) are deleted.

use super::{delete_if_owned, now_millis};
use crate::chunk::{
    CHUNK_PREFIX, CHUNK_TYPE, CREATED, FIELD, MAX_FLIP_DELAY, MIN_ORPHAN_AGE, Orphans, PARENT_PK,
    PARENT_SK,
};
use crate::expr::{CompareOp, Node};
use crate::read::dynamodb::{Expressions, Request, ScanOp};
use crate::read::pager::{self, Reading};
use crate::{Db, Error, Item, RawKey, Table};
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::HashMap;

/// One write's chunks, as a sweep finds them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Write {
    parent: RawKey,
    field: String,
    token: String,
}

/// The write a chunk item belongs to, from its key and attributes.
fn write_of(schema: &crate::TableSchema, item: &Item) -> Option<(Write, RawKey)> {
    let text = |name: &str| match item.get(name) {
        Some(AttributeValue::S(s)) => Some(s.clone()),
        _ => None,
    };
    let key = crate::schema::raw_key_of(schema, item)?;
    let token = key
        .pk
        .strip_prefix(CHUNK_PREFIX)?
        .split('#')
        .next()?
        .to_owned();
    let parent = RawKey {
        pk: text(PARENT_PK)?,
        sk: schema.sk.and_then(|_| text(PARENT_SK)),
    };
    Some((
        Write {
            parent,
            field: text(FIELD)?,
            token,
        },
        key,
    ))
}

impl<T: Table> Db<T> {
    /// Finds and deletes orphan chunk items: chunks written more than `older_than` ago
    /// whose item does not name their write (a put that failed or crashed after writing
    /// its chunks, or before deleting the chunks it replaced; a delete whose chunk
    /// deletion failed), and that no other item names either. A scan of the table's chunk
    /// items (a filter on the entity type: it reads the whole table, so run it off-peak),
    /// then one strongly consistent read per item they belong to.
    ///
    /// Chunks whose item does not name them are kept while another item does (a copy of
    /// their item made by another program, see "Copies" in [`crate::chunk`]): when there
    /// are such candidates, a second, strongly consistent scan reads the table's other
    /// items whole and looks for manifests naming them (that scan's cost again, paid only
    /// when the first finds candidates). A copy written while the sweep runs may be missed.
    /// Each orphan is deleted on the condition that it still records the owner it was
    /// found with ([`Orphans::deleted`] counts those deleted).
    ///
    /// `older_than` protects writes in progress: a put writes its chunks before the item
    /// names them, and gives up rather than name chunks older than [`MAX_FLIP_DELAY`]
    /// (5 minutes), so an `older_than` above that never deletes chunks a put is about to
    /// name. One below [`MIN_ORPHAN_AGE`] (10 minutes: the flip delay plus as much again
    /// for clocks that differ between the machine that put and the one that sweeps) is
    /// refused ([`ValidationReason::InvalidOption`]).
    ///
    /// [`ValidationReason::InvalidOption`]: crate::ValidationReason::InvalidOption
    pub async fn collect_orphans(&self, older_than: std::time::Duration) -> Result<Orphans, Error> {
        const OP: &str = "Scan";
        if older_than < MIN_ORPHAN_AGE {
            return Err(Error::invalid_request(
                OP,
                crate::ValidationReason::InvalidOption,
                format!(
                    "collect_orphans(older_than = {older_than:?}) could delete the chunks of a put in progress: puts name chunks up to {MAX_FLIP_DELAY:?} after writing them, so older_than must be at least {MIN_ORPHAN_AGE:?} (that, plus room for clocks that differ between machines)"
                ),
            ));
        }
        let schema = &T::SCHEMA;
        let cutoff =
            now_millis().saturating_sub(u64::try_from(older_than.as_millis()).unwrap_or(u64::MAX));
        let old_chunks = Node::all(
            Node::equals(schema.entity_type, AttributeValue::S(CHUNK_TYPE.to_owned())),
            [Node::compare(
                CREATED,
                CompareOp::Le,
                AttributeValue::N(cutoff.to_string()),
            )],
        );
        let mut wanted = vec![schema.pk.name, PARENT_PK, PARENT_SK, FIELD];
        wanted.extend(schema.sk.map(|a| a.name));
        // Every old chunk, grouped by the write it belongs to.
        let mut writes: HashMap<Write, Vec<RawKey>> = HashMap::new();
        let mut report = Orphans::default();
        let scan = self.scan_raw(&old_chunks, Some(&wanted), false)?;
        pager::collect(&scan, Reading::default(), None, None, false, |item| {
            if let Some((write, key)) = write_of(schema, &item) {
                report.examined += 1;
                writes.entry(write).or_default().push(key);
            }
            Ok(None::<()>)
        })
        .await?;
        // A write's chunks are orphans unless its item names its token now...
        let mut unnamed = Vec::new();
        for (write, keys) in writes {
            if self.names_write(&write).await? {
                report.kept += keys.len();
            } else {
                unnamed.push((write, keys));
            }
        }
        // ...or another item does (a copy of its item, made outside the crate).
        if !unnamed.is_empty() {
            let tokens: std::collections::HashSet<&str> =
                unnamed.iter().map(|(w, _)| w.token.as_str()).collect();
            let elsewhere = self.tokens_named(&tokens).await?;
            unnamed.retain(|(write, keys)| {
                let named = elsewhere.contains(&write.token);
                if named {
                    report.named_by_others += keys.len();
                }
                !named
            });
        }
        // Deleted on the condition that each still records the owner it was found with.
        let doomed = unnamed
            .iter()
            .flat_map(|(write, keys)| {
                keys.iter()
                    .map(move |key| (key.clone(), write.parent.clone(), write.field.clone()))
            })
            .collect();
        report.deleted = delete_if_owned(self, doomed).await?;
        Ok(report)
    }

    /// Which of `tokens` an item of the table other than a chunk names in a manifest (a
    /// top-level map attribute whose `t` is the token): a strongly consistent scan of the
    /// table's items that are not chunks, read whole.
    async fn tokens_named(
        &self,
        tokens: &std::collections::HashSet<&str>,
    ) -> Result<std::collections::HashSet<String>, Error> {
        let ty = T::SCHEMA.entity_type;
        let not_chunks = Node::either(
            Node::absent(ty),
            Node::compare(ty, CompareOp::Ne, AttributeValue::S(CHUNK_TYPE.to_owned())),
        );
        let mut named = std::collections::HashSet::new();
        let scan = self.scan_raw(&not_chunks, None, true)?;
        pager::collect(&scan, Reading::default(), None, None, false, |item| {
            for value in item.values() {
                if let AttributeValue::M(map) = value
                    && let Some(AttributeValue::S(t)) = map.get("t")
                    && tokens.contains(t.as_str())
                {
                    named.insert(t.clone());
                }
            }
            Ok(None::<()>)
        })
        .await?;
        Ok(named)
    }

    /// A scan of the whole table through the crate's one source towards DynamoDB (request
    /// spans, the SDK's retries), filtered by `filter`, projected to `attributes`: read
    /// with the crate's one read loop.
    fn scan_raw(
        &self,
        filter: &Node,
        attributes: Option<&[&'static str]>,
        consistent: bool,
    ) -> Result<Request<T, ScanOp>, Error> {
        let mut p = crate::expr::Placeholders::default();
        let filter = crate::expr::guard::render_for(CHUNK_TYPE, &mut p, filter)?;
        let projection = attributes.map(|names| p.projection(names.iter().copied()));
        let (names, values) = p.finish();
        let request = Request {
            db: self.clone(),
            expressions: Expressions {
                filter: Some(filter),
                projection,
                names,
                values,
                ..Expressions::default()
            },
            consistent,
            operation: ScanOp::default(),
            reads: crate::read::dynamodb::Reads::of(CHUNK_TYPE),
        };
        Ok(request)
    }

    /// Whether the item `write.parent` names the chunks of `write` now.
    async fn names_write(&self, write: &Write) -> Result<bool, Error> {
        let schema = &T::SCHEMA;
        let mut p = crate::expr::Placeholders::default();
        let field = p.name(&write.field);
        let (names, _) = p.finish();
        let parent =
            super::super::consistent::ConsistentGet::new(self, write.parent.to_item(schema))
                .project(field, names)
                .send()
                .await?;
        Ok(matches!(
            parent.as_ref().and_then(|i| i.get(&write.field)),
            Some(AttributeValue::M(map)) if matches!(map.get("t"), Some(AttributeValue::S(t)) if *t == write.token)
        ))
    }
}
