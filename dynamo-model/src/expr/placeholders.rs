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
    by_attribute: HashMap<String, usize>,
    values: HashMap<String, AttributeValue>,
}

impl Placeholders {
    /// The placeholder for an attribute name.
    pub(crate) fn name(&mut self, attribute: &str) -> String {
        let next = self.by_attribute.len();
        let n = *self
            .by_attribute
            .entry(attribute.to_owned())
            .or_insert(next);
        let placeholder = format!("#n{n}");
        self.names
            .entry(placeholder.clone())
            .or_insert_with(|| attribute.to_owned());
        placeholder
    }

    /// The placeholders of a path: `#n0` or, nested, `#n0.#n1` (every segment aliased, so
    /// map keys may contain any character).
    pub(crate) fn path(&mut self, path: &super::AttrPath) -> String {
        let segments: Vec<String> = path.segments().iter().map(|s| self.name(s)).collect();
        segments.join(".")
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
                let (n, v) = (self.path(path), self.value_of(value)?);
                let _ = write!(out, "{n} {} {v}", op.symbol());
            }
            Node::Between { path, low, high } => {
                let n = self.path(path);
                let (lo, hi) = (self.value_of(low)?, self.value_of(high)?);
                let _ = write!(out, "{n} BETWEEN {lo} AND {hi}");
            }
            Node::Function { function, path } => {
                let n = self.path(path);
                let _ = write!(out, "{function}({n})");
            }
            Node::BeginsWith { path, value } => {
                let (n, v) = (self.path(path), self.value_of(value)?);
                let _ = write!(out, "begins_with({n}, {v})");
            }
            Node::Contains { path, value } => {
                let (n, v) = (self.path(path), self.value_of(value)?);
                let _ = write!(out, "contains({n}, {v})");
            }
            Node::Size { path, op, n } => {
                let name = self.path(path);
                let v = self.value(AttributeValue::N(n.to_string()));
                let _ = write!(out, "size({name}) {} {v}", op.symbol());
            }
            Node::In { path, values } => {
                // DynamoDB: the IN comparator takes at most 100 operands.
                if values.is_empty() || values.len() > 100 {
                    return Err(ValueError {
                        path: path.to_string(),
                        source: crate::codec::EncodeError::new(format!(
                            "IN takes 1 to 100 values, got {}",
                            values.len()
                        )),
                    });
                }
                let n = self.path(path);
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
            path: "status".into(),
            op: CompareOp::Eq,
            value: Ok(AttributeValue::S("open".into())),
        };
        let b = Node::Compare {
            path: "status".into(),
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
                    path: word.into(),
                })
                .unwrap();
            assert!(!expr.contains(word), "{expr}");
        }
    }

    #[test]
    fn nested_paths_alias_every_segment_and_detect_overlap() {
        use crate::expr::AttrPath;
        let nested = |parts: &[&'static str]| {
            AttrPath::Nested(
                parts
                    .iter()
                    .map(|p| std::borrow::Cow::Borrowed(*p))
                    .collect::<Vec<_>>()
                    .into(),
            )
        };
        let mut p = Placeholders::default();
        assert_eq!(p.path(&nested(&["settings", "a.b"])), "#n0.#n1");
        assert_eq!(p.path(&AttrPath::Top("settings")), "#n0");
        let (names, _) = p.finish();
        assert_eq!(names.unwrap().get("#n1").map(String::as_str), Some("a.b"));
        assert!(nested(&["a", "b"]).overlaps(&AttrPath::Top("a")));
        assert!(AttrPath::Top("a").overlaps(&nested(&["a", "b"])));
        assert!(!nested(&["a", "b"]).overlaps(&nested(&["a", "c"])));
        assert!(!AttrPath::Top("a").overlaps(&AttrPath::Top("ab")));
    }

    #[test]
    fn empty_maps_are_omitted() {
        assert_eq!(Placeholders::default().finish(), (None, None));
    }
}
