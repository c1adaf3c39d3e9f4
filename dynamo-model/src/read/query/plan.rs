//! The key-condition plan of a query: the key attributes of the table or index read, the attributes
//! an `INCLUDE` projection lacks, and the request rendered once for every page (key condition,
//! filter, projection, placeholders, cursor fingerprint).

use super::{KeyNames, Prepared, Query};
use crate::collection::Target;
use crate::cursor::Fingerprint;
use crate::expr::{Node, Placeholders};
use crate::key::sort::{KeySpace, SortKeyOp, SortKeyRange};
use crate::keytext::KeyError;
use crate::read::key_condition::{
    PartitionValue, SortCondition, attribute_clause, attribute_range_fits, sort_key_clause,
};
use crate::read::source::Expressions;
use crate::request::page::entity_type_filter;
use crate::schema::{IndexKind, Projection};
use crate::{Error, Item, Table};
use aws_sdk_dynamodb::types::AttributeValue;

impl<T: Target, K: KeySpace> Query<T, K> {
    /// The attributes decoding needs that a global index with an `INCLUDE` projection does
    /// not project (`None` when nothing is missing): the entity type (every decode checks
    /// it) and the stored fields of the view, the entity or every member of a collection.
    /// Sending such a query would pay for items that all fail to decode, or decode with
    /// fields silently absent. (A local index fetches what it does not project from the
    /// table, so it is not refused.)
    fn unprojected_attributes(&self) -> Option<Vec<&'static str>> {
        let index = self.index?;
        let Projection::Include(included) = index.projection else {
            return None;
        };
        if T::IS_KEYS || index.kind == IndexKind::Local {
            return None;
        }
        let schema = &<T::Table as Table>::SCHEMA;
        let keys = self.key_names().ok()?;
        let fields: Vec<&'static str> = match self.projection {
            Some(view) => view.to_vec(),
            None => T::MEMBER_ATTRIBUTES.concat(),
        };
        let mut missing: Vec<&'static str> = Vec::new();
        for attribute in std::iter::once(schema.entity_type).chain(fields) {
            if !included.contains(&attribute)
                && !keys.cursor.contains(&attribute)
                && !missing.contains(&attribute)
            {
                missing.push(attribute);
            }
        }
        (!missing.is_empty()).then_some(missing)
    }

    /// Whether the items read carry the entity-type attribute.
    fn projects_entity_type(&self) -> bool {
        self.projects(Some(<T::Table as Table>::SCHEMA.entity_type))
    }

    /// Whether the items read carry `attribute` (a table read carries everything).
    fn projects(&self, attribute: Option<&str>) -> bool {
        match (self.index.map(|i| i.projection), attribute) {
            (None | Some(Projection::All), _) => true,
            (_, None) => false,
            (Some(Projection::KeysOnly), _) => false,
            (Some(Projection::Include(attrs)), Some(a)) => attrs.contains(&a),
        }
    }

    pub(in crate::read) fn key_names(&self) -> Result<KeyNames, Error> {
        let schema = &<T::Table as Table>::SCHEMA;
        let table_keys = std::iter::once(schema.pk.name).chain(schema.sk.map(|a| a.name));
        let names = |attrs: &[crate::schema::KeyAttribute]| {
            attrs.iter().map(|a| a.name).collect::<Vec<_>>()
        };
        match self.index {
            None => Ok(KeyNames {
                pk: vec![schema.pk.name],
                sk: schema.sk.map(|a| a.name).into_iter().collect(),
                cursor: table_keys.collect(),
            }),
            Some(index) => {
                let pk = match index.kind {
                    IndexKind::Local => vec![schema.pk.name],
                    IndexKind::Global => names(index.pk),
                };
                let mut cursor: Vec<&'static str> = table_keys.collect();
                for name in index.pk.iter().chain(index.sk).map(|a| a.name) {
                    if !cursor.contains(&name) {
                        cursor.push(name);
                    }
                }
                Ok(KeyNames {
                    pk,
                    sk: names(index.sk),
                    cursor,
                })
            }
        }
    }

    #[cfg(test)]
    pub(super) fn prepare(&self) -> Result<Prepared, Error> {
        self.prepare_with(&self.pk)
    }

    /// The request of this query on partition `pk` (the query's own, or one of the
    /// partitions of a [`ScatterQuery`](super::ScatterQuery)).
    pub(super) fn prepare_with(
        &self,
        pk: &Result<PartitionValue, KeyError>,
    ) -> Result<Prepared, Error> {
        if let Some((reason, message)) = &self.refusal {
            return Err(Error::invalid(T::NAME, *reason, message.clone()));
        }
        if let Some(index) = self.index
            && index.projection == Projection::KeysOnly
            && !T::IS_COLLECTION
            && !T::IS_KEYS
        {
            return Err(Error::invalid(
                T::NAME,
                crate::ValidationReason::IndexProjection,
                format!(
                    "index `{}` projects only keys: query it with .keys_only(), or .keys_only().hydrate(..) for whole items",
                    index.name
                ),
            ));
        }
        if let Some(missing) = self.unprojected_attributes() {
            let index = self.index.map(|i| i.name).unwrap_or_default();
            return Err(Error::invalid(
                T::NAME,
                crate::ValidationReason::IndexProjection,
                format!(
                    "index `{index}` does not project `{}`, which reading {} needs; read a view of the projected attributes (.project::<View>()), or .keys_only().hydrate(..) for whole items",
                    missing.join("`, `"),
                    T::NAME
                ),
            ));
        }
        let key_error = |e: &KeyError| Error::key(T::NAME, e.clone());
        let pk_value = pk.as_ref().map_err(key_error)?.clone();
        if let PartitionValue::Rendered(value) = &pk_value {
            crate::keytext::check_key_value(
                T::NAME,
                "partition",
                value,
                crate::keytext::MAX_PARTITION_KEY_BYTES,
            )?;
        }
        let sk = self.sk.as_ref().map_err(key_error)?;
        // The empty sort key of a complete template (`sk = ""`, or one field encoded
        // empty) names no item: DynamoDB refuses an empty key value. An entity with
        // history moved it into its latest copy's slot (`v0`) before this.
        let no_item = SortCondition::Rendered(SortKeyRange::op(SortKeyOp::Nothing));
        let sk = match sk {
            SortCondition::Rendered(r) if r.op.matches_nothing() => &no_item,
            other => other,
        };
        if self.consistent && matches!(self.index, Some(i) if i.kind == IndexKind::Global) {
            return Err(Error::invalid(
                T::NAME,
                crate::ValidationReason::ConsistentIndexRead,
                "a GSI supports only eventually consistent reads",
            ));
        }
        let names = self.key_names()?;
        let mut p = Placeholders::default();
        let pk_check: Vec<(&'static str, AttributeValue)> = match (&pk_value, names.pk.as_slice()) {
            (PartitionValue::Rendered(v), [attr]) => vec![(*attr, AttributeValue::S(v.clone()))],
            (PartitionValue::Attributes(values), attrs)
                if values.len() == attrs.len()
                    && values.iter().zip(attrs).all(|((a, _), b)| a == b) =>
            {
                // DynamoDB refuses an empty string as a key attribute value.
                if let Some((attr, _)) = values
                    .iter()
                    .find(|(_, v)| matches!(v, AttributeValue::S(s) if s.is_empty()))
                {
                    return Err(Error::invalid(
                        T::NAME,
                        crate::ValidationReason::EmptyKeyValue,
                        format!(
                            "the partition value of `{attr}` is empty; DynamoDB requires at least one byte"
                        ),
                    ));
                }
                values.clone()
            }
            _ => {
                return Err(Error::invalid(
                    T::NAME,
                    crate::ValidationReason::WrongKeySpace,
                    "the partition does not match the key attributes of the table or index queried",
                ));
            }
        };
        // The key condition's clauses, joined by AND without parentheses (which a
        // KeyConditionExpression does not take).
        let mut clauses: Vec<Node> = pk_check
            .iter()
            .map(|(attr, v)| Node::equals(*attr, v.clone()))
            .collect();
        if let SortCondition::Rendered(range) = sk {
            let values: &[&String] = match &range.op {
                SortKeyOp::Eq(v)
                | SortKeyOp::BeginsWith(v)
                | SortKeyOp::Le(v)
                | SortKeyOp::Ge(v) => &[v],
                SortKeyOp::Between(low, high) => &[low, high],
                SortKeyOp::Any | SortKeyOp::Nothing => &[],
            };
            // DynamoDB refuses a key condition value longer than a sort key can be.
            for value in values {
                crate::keytext::check_key_value(
                    T::NAME,
                    "sort-key condition",
                    value,
                    crate::keytext::MAX_SORT_KEY_BYTES,
                )?;
            }
        }
        // No sort key can match (and DynamoDB would refuse every way of saying so).
        let mut nothing = matches!(sk, SortCondition::Rendered(r) if r.op == SortKeyOp::Nothing);
        match (sk, names.sk.as_slice()) {
            (SortCondition::Rendered(range), [attr]) => {
                clauses.extend(sort_key_clause(attr, &range.op))
            }
            (SortCondition::Rendered(range), []) if range.op == SortKeyOp::Any => {}
            (SortCondition::Attributes(range), attrs) if attribute_range_fits(range, attrs) => {
                match range.normalized() {
                    Some(range) => {
                        for (attr, v) in &range.eq {
                            clauses.push(Node::equals(*attr, v.clone()));
                        }
                        if let Some((attr, op)) = &range.last {
                            clauses.push(attribute_clause(attr, op));
                        }
                    }
                    None => nothing = true,
                }
            }
            _ => {
                return Err(Error::invalid(
                    T::NAME,
                    crate::ValidationReason::WrongKeySpace,
                    "the sort-key condition does not match the sort key of the table or index queried",
                ));
            }
        }
        let key_condition = clauses
            .iter()
            .map(|clause| crate::expr::guard::render_for(T::NAME, &mut p, clause))
            .collect::<Result<Vec<_>, _>>()?
            .join(" AND ");
        // A collection keeps the whole partition, so unknown types can be reported; an
        // index that does not project the entity-type attribute cannot be filtered on it.
        let type_filter =
            (!T::IS_COLLECTION && self.projects_entity_type()).then(entity_type_filter::<T>);
        if self.exclude_expired && !self.projects(<T::Table as Table>::SCHEMA.ttl) {
            return Err(Error::invalid(
                T::NAME,
                crate::ValidationReason::IndexProjection,
                "exclude_expired on an index that does not project the TTL attribute would exclude nothing",
            ));
        }
        let expiry = if self.exclude_expired {
            crate::expr::guard::not_expired::<T::Table>()
        } else {
            None
        };
        let filter = crate::expr::guard::and_opt(
            crate::expr::guard::and_opt(type_filter, expiry),
            self.filter.clone(),
        );
        let filter = match filter {
            Some(node) => Some(crate::expr::guard::render_for(T::NAME, &mut p, &node)?),
            None => None,
        };
        // The view's attributes, plus what every read needs: the entity type (decoding
        // checks it) and the key attributes (cursors continue from them).
        let projection = self.projection.map(|attrs| {
            let mut wanted: Vec<&'static str> = attrs.to_vec();
            wanted.push(<T::Table as Table>::SCHEMA.entity_type);
            wanted.extend(names.cursor.iter().copied());
            let mut seen = std::collections::HashSet::new();
            wanted.retain(|a| seen.insert(*a));
            p.projection(wanted)
        });
        let (names_map, values) = p.finish();
        let index_name = self.index.map(|i| i.name).unwrap_or("");
        let direction: &[u8] = if self.reverse { b"desc" } else { b"asc" };
        let fingerprint = Fingerprint::of(&[
            b"query",
            self.db.table_name().as_bytes(),
            index_name.as_bytes(),
            T::NAME.as_bytes(),
            &condition_bytes(&pk_value, sk),
            direction,
        ]);
        Ok(Prepared {
            expressions: Expressions {
                key_condition,
                filter,
                projection,
                names: names_map,
                values,
            },
            fingerprint,
            cursor_names: names.cursor,
            pk_check,
            sk_attr: names.sk.first().copied().filter(|_| names.sk.len() == 1),
            sk_range: match sk {
                SortCondition::Rendered(range) => Some(range.clone()),
                SortCondition::Attributes(_) => None,
            },
            nothing,
        })
    }
}

/// The condition `sk` on a versioned entity's latest copies: its values moved into slot 0
/// of `layout`, or `None` when that cannot be said as one key condition (a range over
/// the template's rest would span slots).
pub(super) fn latest_only(
    layout: &crate::schema::history::HistoryLayout,
    sk: SortCondition,
) -> Option<SortCondition> {
    let SortCondition::Rendered(range) = &sk else {
        return None;
    };
    let op = match &range.op {
        SortKeyOp::Any => SortKeyOp::BeginsWith(layout.latest("")),
        SortKeyOp::BeginsWith(v) => SortKeyOp::BeginsWith(layout.latest(v)),
        SortKeyOp::Eq(v) => SortKeyOp::Eq(layout.latest(v)),
        SortKeyOp::Nothing => SortKeyOp::Nothing,
        _ => return None,
    };
    let mut latest = SortKeyRange::op(op);
    latest.exclude = range.exclude.as_deref().map(|v| layout.latest(v));
    latest.prefix = range.prefix.as_deref().map(|v| layout.latest(v));
    Some(SortCondition::Rendered(latest))
}

impl Prepared {
    /// The part of the sort-key condition DynamoDB could not apply (see [`SortKeyRange`]).
    pub(super) fn admits(&self, item: &Item) -> bool {
        admits(self.sk_attr, self.sk_range.as_ref(), item)
    }

    /// [`admits`](Self::admits) as a function of its own, for reads that outlive this
    /// request (a merged read checks the items of every partition with it).
    pub(in crate::read) fn admission(&self) -> impl Fn(&Item) -> bool + Send + Sync + 'static {
        let (attr, range) = (self.sk_attr, self.sk_range.clone());
        move |item| admits(attr, range.as_ref(), item)
    }
}

fn admits(attr: Option<&'static str>, range: Option<&SortKeyRange>, item: &Item) -> bool {
    match (range, attr.and_then(|a| item.get(a))) {
        (Some(range), Some(AttributeValue::S(sk))) => range.admits(sk),
        _ => true,
    }
}

/// The key condition as bytes for the cursor's fingerprint: every part tagged and
/// length-prefixed, so two different conditions never give the same bytes. Written out
/// for the common single-attribute keys (formatting them with `Debug` cost more than the
/// rest of the fingerprint); multi-attribute keys keep their `Debug` text.
pub(super) fn condition_bytes(pk: &PartitionValue, sk: &SortCondition) -> Vec<u8> {
    fn part(out: &mut Vec<u8>, tag: u8, bytes: &[u8]) {
        out.push(tag);
        out.extend_from_slice(&(bytes.len() as u64).to_be_bytes());
        out.extend_from_slice(bytes);
    }
    let mut out = Vec::with_capacity(128);
    match pk {
        PartitionValue::Rendered(v) => part(&mut out, b'p', v.as_bytes()),
        PartitionValue::Attributes(_) => part(&mut out, b'P', format!("{pk:?}").as_bytes()),
    }
    match sk {
        SortCondition::Rendered(range) => {
            let (tag, values): (u8, &[&String]) = match &range.op {
                SortKeyOp::Any => (b'a', &[]),
                SortKeyOp::Nothing => (b'n', &[]),
                SortKeyOp::Eq(v) => (b'=', &[v]),
                SortKeyOp::BeginsWith(v) => (b'^', &[v]),
                SortKeyOp::Le(v) => (b'<', &[v]),
                SortKeyOp::Ge(v) => (b'>', &[v]),
                SortKeyOp::Between(low, high) => (b'[', &[low, high]),
            };
            part(&mut out, tag, &[values.len() as u8]);
            for v in values {
                part(&mut out, b's', v.as_bytes());
            }
            for (tag, v) in [(b'x', &range.exclude), (b'f', &range.prefix)] {
                match v {
                    Some(v) => part(&mut out, tag, v.as_bytes()),
                    None => part(&mut out, b'-', &[]),
                }
            }
            // The history of one item: a cursor of another item's history (same range
            // under an unpadded layout) does not continue it. Absent otherwise, so the
            // cursors of other queries keep their bytes.
            if let Some((_, rest)) = &range.revisions_of {
                part(&mut out, b'r', rest.as_bytes());
            }
        }
        SortCondition::Attributes(_) => part(&mut out, b'S', format!("{sk:?}").as_bytes()),
    }
    out
}
