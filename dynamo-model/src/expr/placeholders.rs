//! Placeholder allocation: every attribute name becomes `#nN` and every value `:vN`.

use super::{Node, ValueError};
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::HashMap;
use std::fmt::Write;

/// Collects `ExpressionAttributeNames` and `ExpressionAttributeValues` for one request.
/// Names are de-duplicated (one placeholder per attribute); values are not.
#[derive(Debug, Default)]
pub(crate) struct Placeholders {
    names: HashMap<String, String>,
    by_attribute: HashMap<&'static str, usize>,
    values: HashMap<String, AttributeValue>,
}

impl Placeholders {
    /// The placeholder for an attribute name.
    pub(crate) fn name(&mut self, attribute: &'static str) -> String {
        let next = self.by_attribute.len();
        let n = *self.by_attribute.entry(attribute).or_insert(next);
        let placeholder = format!("#n{n}");
        self.names
            .entry(placeholder.clone())
            .or_insert_with(|| attribute.to_owned());
        placeholder
    }

    /// A fresh placeholder for a value.
    pub(crate) fn value(&mut self, value: AttributeValue) -> String {
        let placeholder = format!(":v{}", self.values.len());
        self.values.insert(placeholder.clone(), value);
        placeholder
    }

    fn value_of(
        &mut self,
        value: &Result<AttributeValue, ValueError>,
    ) -> Result<String, ValueError> {
        match value {
            Ok(v) => Ok(self.value(v.clone())),
            Err(e) => Err(e.clone()),
        }
    }

    /// Renders a condition tree, fully parenthesised so precedence never surprises.
    pub(crate) fn render_condition(&mut self, node: &Node) -> Result<String, ValueError> {
        let mut out = String::new();
        self.render_into(node, &mut out)?;
        Ok(out)
    }

    fn render_into(&mut self, node: &Node, out: &mut String) -> Result<(), ValueError> {
        // `write!` into a String cannot fail; the results are ignored on purpose.
        match node {
            Node::Compare { path, op, value } => {
                let (n, v) = (self.name(path), self.value_of(value)?);
                let _ = write!(out, "{n} {} {v}", op.symbol());
            }
            Node::Between { path, low, high } => {
                let n = self.name(path);
                let (lo, hi) = (self.value_of(low)?, self.value_of(high)?);
                let _ = write!(out, "{n} BETWEEN {lo} AND {hi}");
            }
            Node::Function { function, path } => {
                let n = self.name(path);
                let _ = write!(out, "{function}({n})");
            }
            Node::BeginsWith { path, value } => {
                let (n, v) = (self.name(path), self.value_of(value)?);
                let _ = write!(out, "begins_with({n}, {v})");
            }
            Node::Contains { path, value } => {
                let (n, v) = (self.name(path), self.value_of(value)?);
                let _ = write!(out, "contains({n}, {v})");
            }
            Node::Size { path, op, n } => {
                let name = self.name(path);
                let v = self.value(AttributeValue::N(n.to_string()));
                let _ = write!(out, "size({name}) {} {v}", op.symbol());
            }
            Node::In { path, values } => {
                // DynamoDB: the IN comparator takes at most 100 operands.
                if values.is_empty() || values.len() > 100 {
                    return Err(ValueError {
                        path,
                        source: crate::codec::EncodeError(format!(
                            "IN takes 1 to 100 values, got {}",
                            values.len()
                        )),
                    });
                }
                let n = self.name(path);
                let mut list = Vec::with_capacity(values.len());
                for v in values {
                    list.push(self.value_of(v)?);
                }
                let _ = write!(out, "{n} IN ({})", list.join(", "));
            }
            Node::And(a, b) | Node::Or(a, b) => {
                let joiner = if matches!(node, Node::And(..)) {
                    " AND "
                } else {
                    " OR "
                };
                out.push('(');
                self.render_into(a, out)?;
                out.push(')');
                out.push_str(joiner);
                out.push('(');
                self.render_into(b, out)?;
                out.push(')');
            }
            Node::Not(inner) => {
                out.push_str("NOT (");
                self.render_into(inner, out)?;
                out.push(')');
            }
        }
        Ok(())
    }

    /// The maps for the request; `None` when empty, because DynamoDB rejects empty maps.
    #[allow(clippy::type_complexity)]
    pub(crate) fn finish(
        self,
    ) -> (
        Option<HashMap<String, String>>,
        Option<HashMap<String, AttributeValue>>,
    ) {
        (
            (!self.names.is_empty()).then_some(self.names),
            (!self.values.is_empty()).then_some(self.values),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::CompareOp;

    #[test]
    fn names_are_deduplicated_and_values_are_not() {
        let mut p = Placeholders::default();
        let a = Node::Compare {
            path: "status",
            op: CompareOp::Eq,
            value: Ok(AttributeValue::S("open".into())),
        };
        let b = Node::Compare {
            path: "status",
            op: CompareOp::Ne,
            value: Ok(AttributeValue::S("open".into())),
        };
        let expr = p
            .render_condition(&Node::Or(Box::new(a), Box::new(Node::Not(Box::new(b)))))
            .unwrap();
        assert_eq!(expr, "(#n0 = :v0) OR (NOT (#n0 <> :v1))");
        let (names, values) = p.finish();
        assert_eq!(names.unwrap().len(), 1);
        assert_eq!(values.unwrap().len(), 2);
    }

    #[test]
    fn reserved_words_never_appear_in_the_expression() {
        let mut p = Placeholders::default();
        for word in ["ttl", "data", "name", "type", "status"] {
            let expr = p
                .render_condition(&Node::Function {
                    function: "attribute_exists",
                    path: word,
                })
                .unwrap();
            assert!(!expr.contains(word), "{expr}");
        }
    }

    #[test]
    fn empty_maps_are_omitted() {
        assert_eq!(Placeholders::default().finish(), (None, None));
    }
}
