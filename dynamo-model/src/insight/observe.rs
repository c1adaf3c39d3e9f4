//! The observer behind [`Db::observed`](dynamo_model::Db::observed): reads the record of
//! each call (the partitions it touches, the shape of a read) and what it cost.

use super::shapes::ShapeCall;
use super::{Fnv, Insight, PartitionId, PartitionKey, key_hash};
use crate::Item;
use crate::call::{Call, Observer, Outcome};
use crate::capacity::Units;
use crate::registry::EntityRegistration;
use crate::schema::TableSchema;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

mod account;

/// The observer: one per observed `Db`, for its table.
#[derive(Debug)]
pub(crate) struct Observing {
    insight: Insight,
    table: Arc<str>,
    schema: &'static TableSchema,
    entities: Vec<&'static EntityRegistration>,
}

impl Observing {
    pub(crate) fn new<T: crate::Table>(insight: &Insight, table: Arc<str>) -> Self {
        Observing {
            insight: insight.clone(),
            table,
            schema: &T::SCHEMA,
            entities: crate::registry::entities_of::<T>(),
        }
    }
}

/// One partition a call touched: the table's (`index: None`) or an index's.
#[derive(Debug, Clone)]
pub(super) struct Touched {
    pub(super) index: Option<&'static str>,
    pub(super) pk: String,
    pub(super) sk: Option<String>,
    pub(super) entity_type: Option<Arc<str>>,
    /// The units by the capacity rules, to share a reported total by.
    pub(super) estimate: f64,
}

impl Observer for Observing {
    fn wants_capacity(&self) -> bool {
        self.insight.settings().exact
    }

    fn after(&self, call: &Call, outcome: &Outcome<'_>) {
        let mut seen = Seen {
            now: Instant::now(),
            reads: Vec::new(),
            writes: Vec::new(),
            sizes: Vec::new(),
            shape: None,
        };
        match outcome {
            Outcome::Answered(answer) => self.account(call, answer, &mut seen),
            // A single-item write refused by its condition consumed its write units.
            Outcome::Refused => {
                let touched = self.written(call);
                seen.writes = share(touched, &HashMap::new());
            }
            Outcome::Failed => return,
        }
        if !(seen.reads.is_empty()
            && seen.writes.is_empty()
            && seen.sizes.is_empty()
            && seen.shape.is_none())
        {
            self.publish(seen);
        }
    }
}

/// What one call's response showed, applied to the insight under one lock.
struct Seen {
    now: Instant,
    reads: Vec<(Touched, f64)>,
    writes: Vec<(Touched, f64)>,
    sizes: Vec<(Arc<str>, usize)>,
    shape: Option<(u64, ShapeCall)>,
}

impl Observing {
    /// Whether `table` is this `Db`'s table.
    fn ours(&self, table: &str) -> bool {
        *self.table == *table
    }

    /// The entity type an item carries.
    fn type_of(&self, item: &Item) -> Option<Arc<str>> {
        crate::call::text(item.get(self.schema.entity_type)).map(Arc::from)
    }

    fn publish(&self, seen: Seen) {
        let settings = self.insight.settings();
        let warnings = self.insight.update(|hot, shapes| {
            let mut warnings = Vec::new();
            for (units, list) in [(Units::Read, &seen.reads), (Units::Write, &seen.writes)] {
                for (t, consumed) in list {
                    let key = self.partition_hash(t);
                    let label = || Arc::new(self.label(t, settings.show_keys));
                    let own = self.owner(t);
                    warnings.extend(hot.record(seen.now, units, key, *consumed, label, own));
                }
            }
            for (entity_type, bytes) in &seen.sizes {
                shapes.size(&self.table, entity_type, *bytes);
            }
            if let Some((shape, call)) = seen.shape {
                shapes.record(seen.now, shape, call);
            }
            warnings
        });
        for warning in warnings {
            let p = &warning.hot.partition;
            crate::trace::hot_partition(&crate::trace::HotPartitionEvent {
                table: &p.table,
                index: p.index.as_deref(),
                entity: p.entity_type.as_deref(),
                template: p.template,
                units: super::hot::units_name(warning.hot.units),
                rate: warning.hot.rate,
                shards: warning.hot.shards,
                message: &warning,
            });
        }
    }

    /// The entity type of a touched item, when known, with its template there.
    fn owner(&self, t: &Touched) -> Option<super::hot::Owner> {
        let entity_type = t.entity_type.clone()?;
        let template = self.template_of(&entity_type, t.index);
        Some((entity_type, template))
    }

    /// `entity_type`'s partition-key template on the table or on `index`.
    fn template_of(&self, entity_type: &str, index: Option<&str>) -> Option<&'static str> {
        let r = self
            .entities
            .iter()
            .find(|r| r.entity_type == entity_type)?;
        match index {
            None => Some(r.pk_template),
            Some(index) => r.index_templates.iter().find(|i| i.index == index)?.pk,
        }
    }

    /// The entity type whose templates render the table key of `item` (for items without
    /// the entity-type attribute, e.g. read from a keys-only index).
    fn type_by_key(&self, item: &Item) -> Option<Arc<str>> {
        let pk = crate::call::text(item.get(self.schema.pk.name))?;
        let sk = self
            .schema
            .sk
            .and_then(|sk| crate::call::text(item.get(sk.name)));
        let raw = crate::RawKey { pk, sk };
        self.entities
            .iter()
            .find(|r| r.owns(&raw))
            .map(|r| Arc::from(r.entity_type))
    }

    fn partition_hash(&self, t: &Touched) -> u64 {
        let mut h = Fnv::new();
        h.write(self.table.as_bytes());
        h.write(b"\x00");
        h.write(t.index.unwrap_or("").as_bytes());
        h.write(b"\x00");
        h.write(t.pk.as_bytes());
        h.finish()
    }

    /// What the partition is: its entity type (carried by the item, else the one whose
    /// templates render the key) and that type's partition-key template.
    fn label(&self, t: &Touched, show_keys: bool) -> PartitionId {
        let by_key = || {
            let raw = crate::RawKey {
                pk: t.pk.clone(),
                sk: t.sk.clone(),
            };
            self.entities
                .iter()
                .find(|r| match t.sk {
                    Some(_) => r.owns(&raw),
                    None => r.owns_partition(&t.pk),
                })
                .map(|r| Arc::from(r.entity_type))
        };
        let entity_type = match t.index {
            None => t.entity_type.clone().or_else(by_key),
            Some(_) => t.entity_type.clone(),
        };
        let registration = entity_type
            .as_deref()
            .and_then(|e| self.entities.iter().find(|r| r.entity_type == e));
        let template = registration.and_then(|r| match t.index {
            None => Some(r.pk_template),
            Some(index) => r
                .index_templates
                .iter()
                .find(|i| i.index == index)
                .and_then(|i| i.pk),
        });
        PartitionId {
            table: self.table.clone(),
            index: t.index.map(Arc::from),
            entity_type,
            template,
            key: if show_keys {
                PartitionKey::Text(t.pk.clone())
            } else {
                PartitionKey::Hashed(key_hash(&t.pk))
            },
        }
    }
}

/// Each touched partition with its part of the reported units of its target (shared in
/// proportion to the estimates), or its estimate where nothing was reported.
fn share(
    touched: Vec<Touched>,
    reported: &HashMap<Option<&'static str>, f64>,
) -> Vec<(Touched, f64)> {
    let mut estimated: HashMap<Option<&'static str>, f64> = HashMap::new();
    for t in &touched {
        *estimated.entry(t.index).or_default() += t.estimate;
    }
    touched
        .into_iter()
        .map(|t| {
            let units = match (reported.get(&t.index), estimated.get(&t.index)) {
                (Some(r), Some(e)) if *e > 0.0 => r * t.estimate / e,
                _ => t.estimate,
            };
            (t, units)
        })
        .collect()
}

#[cfg(test)]
mod tests;
