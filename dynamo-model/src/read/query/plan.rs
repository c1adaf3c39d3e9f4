//! The key-condition plan of a query: the request rendered once for every request (key
//! condition, filter, projection, placeholders, cursor fingerprint), after the checks of
//! what the table or index read can answer ([`projection`](crate::read::projection)).

use super::{Prepared, Query};
use crate::collection::Target;
use crate::cursor::Fingerprint;
use crate::expr::{Node, Placeholders};
use crate::key::KeyError;
use crate::keyspace::sort::{KeySpace, SortKeyOp, SortKeyRange};
use crate::read::dynamodb::Expressions;
use crate::read::key_condition::{
    PartitionValue, SortCondition, attribute_clause, attribute_range_fits, sort_key_clause,
};
use crate::read::projection::{self, KeyNames};
use crate::{Error, Item};
use aws_sdk_dynamodb::types::AttributeValue;

impl<T: Target, K: KeySpace> Query<T, K> {
    pub(in crate::read) fn key_names(&self) -> Result<KeyNames, Error> {
        Ok(KeyNames::of::<T::Table>(self.index))
    }

    #[cfg(test)]
    pub(super) fn prepare(&self) -> Result<Prepared, Error> {
        self.prepare_with(&self.pk)
    }

    /// The request of this query on partition `pk` (the query's own, or one of the
    /// partitions of a `ScatterQuery`).
    pub(super) fn prepare_with(
        &self,
        pk: &Result<PartitionValue, KeyError>,
    ) -> Result<Prepared, Error> {
        if let Some((reason, message)) = &self.refusal {
            return Err(Error::invalid(T::NAME, *reason, message.clone()));
        }
        projection::check_projection::<T>(self.index, self.projection)?;
        let key_error = |e: &KeyError| Error::key(T::NAME, e.clone());
        let pk_value = pk.as_ref().map_err(key_error)?.clone();
        if let PartitionValue::Rendered(value) = &pk_value {
            let max = crate::key::MAX_PARTITION_KEY_BYTES;
            crate::key::check_key_value(T::NAME, "partition", value, max)?;
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
        projection::check_options::<T>(self.index, self.consistent, false)?;
        let names = self.key_names()?;
        let mut p = Placeholders::default();
        let pk_check = Self::partition_check(&pk_value, &names.pk)?;
        // The key condition's clauses, joined by AND without parentheses (which a
        // KeyConditionExpression does not take).
        let mut clauses: Vec<Node> = pk_check
            .iter()
            .map(|(attr, v)| Node::equals(*attr, v.clone()))
            .collect();
        Self::check_sort_values(sk)?;
        // No sort key can match (and DynamoDB would refuse every way of saying so).
        let nothing = Self::sort_clauses(sk, &names.sk, &mut clauses)?;
        let key_condition = clauses
            .iter()
            .map(|clause| crate::expr::guard::render_for(T::NAME, &mut p, clause))
            .collect::<Result<Vec<_>, _>>()?
            .join(" AND ");
        let filter = self.filter_expression(&mut p)?;
        let projection = projection::view_expression::<T::Table>(
            &mut p,
            self.index,
            self.projection,
            &names.cursor,
        );
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

    /// The partition's key attributes and values, which the key condition fixes and each
    /// item read is checked against: one rendered value on a single key attribute, or a
    /// value per attribute of a multi-attribute key, none empty.
    fn partition_check(
        pk_value: &PartitionValue,
        attributes: &[&'static str],
    ) -> Result<Vec<(&'static str, AttributeValue)>, Error> {
        Ok(match (pk_value, attributes) {
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
        })
    }

    /// The values of a rendered sort-key condition, each no longer than a sort key can be.
    fn check_sort_values(sk: &SortCondition) -> Result<(), Error> {
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
                let max = crate::key::MAX_SORT_KEY_BYTES;
                crate::key::check_key_value(T::NAME, "sort-key condition", value, max)?;
            }
        }
        Ok(())
    }

    /// Adds the clauses of sort condition `sk` on key `attributes` to `clauses`; returns
    /// whether no sort key can match.
    fn sort_clauses(
        sk: &SortCondition,
        attributes: &[&'static str],
        clauses: &mut Vec<Node>,
    ) -> Result<bool, Error> {
        let mut nothing = matches!(sk, SortCondition::Rendered(r) if r.op == SortKeyOp::Nothing);
        match (sk, attributes) {
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
        Ok(nothing)
    }

    /// The filter expression: the entity's type (of a query that reads one entity), the
    /// expiry (with `exclude_expired`) and the query's own filter.
    fn filter_expression(&self, p: &mut Placeholders) -> Result<Option<String>, Error> {
        // A collection keeps the whole partition, so unknown types can be reported; an
        // index that does not project the entity-type attribute cannot be filtered on it.
        let type_filter = if T::IS_COLLECTION {
            None
        } else {
            projection::type_filter::<T>(self.index)
        };
        projection::check_options::<T>(self.index, false, self.exclude_expired)?;
        let expiry = if self.exclude_expired {
            crate::expr::guard::not_expired::<T::Table>()
        } else {
            None
        };
        let filter = crate::expr::guard::and_opt(
            crate::expr::guard::and_opt(type_filter, expiry),
            self.filter.clone(),
        );
        match filter {
            Some(node) => Ok(Some(crate::expr::guard::render_for(T::NAME, p, &node)?)),
            None => Ok(None),
        }
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
