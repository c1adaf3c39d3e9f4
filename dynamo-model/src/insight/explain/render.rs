//! An explanation as text: placeholders resolved, values written as a reader expects
//! them, and the plan laid out line by line.

use super::{Estimate, Explain, Expression, Fanout, SizeBasis, Warning};
use crate::schema::TableSchema;
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::HashMap;
use std::fmt::{self, Display, Formatter, Write};

/// `expression` as sent and with its `#name` and `:value` placeholders replaced.
pub(super) fn expression(
    expression: Option<&str>,
    names: Option<&HashMap<String, String>>,
    values: Option<&HashMap<String, AttributeValue>>,
) -> Option<Expression> {
    let sent = expression?;
    Some(Expression {
        sent: sent.to_owned(),
        resolved: resolve(sent, names, values),
    })
}

/// `text` with each placeholder (`#` or `:` and a run of letters, digits and `_`, as
/// DynamoDB reads them) replaced by what it stands for; unknown ones are kept.
fn resolve(
    text: &str,
    names: Option<&HashMap<String, String>>,
    values: Option<&HashMap<String, AttributeValue>>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if c != '#' && c != ':' {
            out.push(c);
            continue;
        }
        let mut end = start + c.len_utf8();
        while let Some(&(i, next)) = chars.peek() {
            if !(next.is_ascii_alphanumeric() || next == '_') {
                break;
            }
            end = i + next.len_utf8();
            chars.next();
        }
        let token = &text[start..end];
        match c {
            '#' => match names.and_then(|n| n.get(token)) {
                Some(name) => out.push_str(name),
                None => out.push_str(token),
            },
            _ => match values.and_then(|v| v.get(token)) {
                Some(value) => write_value(&mut out, value),
                None => out.push_str(token),
            },
        }
    }
    out
}

/// A key as `PK = "USER#ada" AND SK = "PROFILE"`: the table's keys first, in key order.
pub(super) fn key(schema: &TableSchema, key: &HashMap<String, AttributeValue>) -> String {
    let order = |name: &str| {
        if name == schema.pk.name {
            0
        } else if schema.sk.is_some_and(|a| a.name == name) {
            1
        } else {
            2
        }
    };
    let mut parts: Vec<(&String, &AttributeValue)> = key.iter().collect();
    parts.sort_by(|a, b| (order(a.0), a.0).cmp(&(order(b.0), b.0)));
    let mut out = String::new();
    for (i, (name, value)) in parts.into_iter().enumerate() {
        if i > 0 {
            out.push_str(" AND ");
        }
        out.push_str(name);
        out.push_str(" = ");
        write_value(&mut out, value);
    }
    out
}

/// A value as a reader expects it: strings quoted, numbers bare, binary by its length.
fn write_value(out: &mut String, value: &AttributeValue) {
    // Writing to a String cannot fail.
    let _ = match value {
        AttributeValue::S(s) => write!(out, "{s:?}"),
        AttributeValue::N(n) => write!(out, "{n}"),
        AttributeValue::B(b) => write!(out, "<{} bytes>", b.as_ref().len()),
        AttributeValue::Bool(b) => write!(out, "{b}"),
        AttributeValue::Null(_) => write!(out, "null"),
        AttributeValue::Ss(set) => write!(out, "{set:?}"),
        AttributeValue::Ns(set) => write!(out, "[{}]", set.join(", ")),
        AttributeValue::Bs(set) => write!(out, "<{} binary values>", set.len()),
        AttributeValue::L(list) => {
            out.push('[');
            for (i, v) in list.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, v);
            }
            out.push(']');
            Ok(())
        }
        AttributeValue::M(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{k:?}: ");
                write_value(out, v);
            }
            out.push('}');
            Ok(())
        }
        other => write!(out, "{other:?}"),
    };
}

impl Display for Fanout {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Fanout::One => f.write_str("1 request (a page of a query, or the item of a get)"),
            Fanout::Shards(n) => write!(f, "{n} requests, one per shard, run concurrently"),
            Fanout::Segments(n) => write!(f, "{n} requests, one per segment, run concurrently"),
            Fanout::Batches { requests, keys } => {
                write!(f, "{requests} requests of up to 100 keys ({keys} keys)")
            }
        }
    }
}

impl Display for Warning {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Warning::FilterDiscards { discarded, calls } => write!(
                f,
                "the filter discarded {:.0} % of the items read in {calls} observed calls: they cost read capacity all the same; move the condition into the key",
                discarded * 100.0
            ),
            Warning::Frequent { read, per_minute } => write!(
                f,
                "this {read} ran {per_minute:.1} times a minute: a read that fans out belongs off the request path (query one partition, or keep the result)"
            ),
            Warning::DroppedEntityTypes { types } => {
                f.write_str("items of entity types the read drops came back, and were paid for: ")?;
                for (i, (t, n)) in types.iter().enumerate() {
                    let sep = if i > 0 { ", " } else { "" };
                    write!(f, "{sep}{t} ({n})")?;
                }
                f.write_str("; narrow the sort key or add them to the collection")
            }
            Warning::Hydrate { index, projection } => write!(
                f,
                "index `{index}` is {projection}: whole items take a hydrate, one BatchGetItem more a page (each item rounded to 4 KB on its own)"
            ),
            Warning::WholeHistory => f.write_str(
                "the history is read in revision order under an unpadded layout: every request reads the item's whole history, whatever the limit",
            ),
        }
    }
}

impl Display for Estimate {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.items {
            Some(1) => f.write_str("1 item read")?,
            Some(items) => write!(f, "{items} items read")?,
            None => f.write_str("items read unknown (no Limit, none observed)")?,
        }
        match (self.read_units, self.sizes) {
            (
                Some(units),
                SizeBasis::Observed {
                    mean_bytes,
                    samples,
                },
            ) => write!(
                f,
                ", ~{units} RCU (mean item {mean_bytes:.0} bytes over {samples} observed)"
            )?,
            _ => f.write_str(", RCU unknown (no observed item sizes)")?,
        }
        write!(
            f,
            "; between {} and {} RCU by the capacity rules",
            self.min_read_units, self.max_read_units
        )
    }
}

impl Display for Explain {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{} on table `{}`", self.operation, self.table)?;
        if let Some(index) = &self.index {
            write!(f, ", index `{index}`")?;
        }
        let consistency = if self.consistent {
            "strongly consistent"
        } else {
            "eventually consistent"
        };
        writeln!(f, " ({consistency})")?;
        writeln!(f, "  requests: {}", self.fanout)?;
        writeln!(f, "  returns: {}", self.entity_types.join(", "))?;
        const SHOWN: usize = 3;
        for key in self.keys.iter().take(SHOWN) {
            writeln!(f, "  key: {key}")?;
        }
        if self.keys.len() > SHOWN {
            writeln!(f, "  … and {} more keys", self.keys.len() - SHOWN)?;
        }
        let shard = match self.fanout {
            Fanout::Shards(n) if n > 1 => " (of the first shard)",
            _ => "",
        };
        for (label, expression) in [
            ("key condition", &self.key_condition),
            ("filter", &self.filter),
            ("projection", &self.projection),
        ] {
            if let Some(e) = expression {
                let of = if label == "key condition" { shard } else { "" };
                writeln!(f, "  {label}{of}: {}", e.resolved)?;
                writeln!(f, "    as sent: {}", e.sent)?;
            }
        }
        writeln!(f, "  a page: {}", self.estimate)?;
        for warning in &self.warnings {
            writeln!(f, "  warning: {warning}")?;
        }
        Ok(())
    }
}
