//! Placeholder allocation: every attribute name becomes `#nN` and every value `:vN`.

use super::{Node, ValueError};
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::HashMap;
use std::fmt::Write;

/// Collects `ExpressionAttributeNames` and `ExpressionAttributeValues` for one request.
/// Names are de-duplicated (one placeholder per attribute); values are not.
#[derive(Debug, Default, Clone)]
pub(crate) struct Placeholders {
    names: HashMap<String, String>,
    by_attribute: HashMap<String, usize>,
    values: HashMap<String, AttributeValue>,
}

impl Placeholders {
    /// The placeholders of a rendered request, `names` and `values` as [`finish`]
    /// returned them, to render more into it: new names and values get placeholders of
    /// their own, and an attribute it already names keeps its placeholder.
    ///
    /// [`finish`]: Placeholders::finish
    pub(crate) fn resume(
        names: Option<HashMap<String, String>>,
        values: Option<HashMap<String, AttributeValue>>,
    ) -> Self {
        let names = names.unwrap_or_default();
        let by_attribute = names
            .iter()
            .filter_map(|(placeholder, attribute)| {
                let n = placeholder.strip_prefix("#n")?.parse::<usize>().ok()?;
                Some((attribute.clone(), n))
            })
            .collect();
        Placeholders {
            names,
            by_attribute,
            values: values.unwrap_or_default(),
        }
    }

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
                // Parentheses only where precedence needs them (NOT > AND > OR): what a
                // person writes, and less for the service to parse.
                let (joiner, wrap): (&str, fn(&Node) -> bool) = match node {
                    Node::And(..) => (" AND ", |n| {
                        matches!(n, Node::Or(..) | Node::Between { .. })
                    }),
                    _ => (" OR ", |n| matches!(n, Node::Between { .. })),
                };
                self.render_operand(a, wrap(a), out)?;
                out.push_str(joiner);
                self.render_operand(b, wrap(b), out)?;
            }
            Node::Not(inner) => {
                out.push_str("NOT ");
                let atomic = !matches!(
                    **inner,
                    Node::And(..) | Node::Or(..) | Node::Not(..) | Node::Between { .. }
                );
                self.render_operand(inner, !atomic, out)?;
            }
        }
        Ok(())
    }

    /// Renders `node`, in parentheses when `wrap`.
    fn render_operand(
        &mut self,
        node: &Node,
        wrap: bool,
        out: &mut String,
    ) -> Result<(), ValueError> {
        if wrap {
            out.push('(');
        }
        self.render_into(node, out)?;
        if wrap {
            out.push(')');
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

    /// Rendering more into resumed placeholders never reuses one for something else.
    #[test]
    fn resumed_placeholders_continue_where_the_rendered_ones_ended() {
        let mut first = Placeholders::default();
        assert_eq!(first.name("a"), "#n0");
        assert_eq!(first.name("b"), "#n1");
        assert_eq!(first.value(AttributeValue::Bool(true)), ":v0");
        let (mut names, mut values) = first.finish();
        // A placeholder of the crate's own, written beside the renderer's.
        names
            .get_or_insert_with(HashMap::new)
            .insert("#created".into(), "c".into());
        values
            .get_or_insert_with(HashMap::new)
            .insert(":created".into(), AttributeValue::Null(true));
        let mut resumed = Placeholders::resume(names, values);
        assert_eq!(resumed.name("b"), "#n1");
        assert_eq!(resumed.name("c2"), "#n2");
        assert_eq!(resumed.value(AttributeValue::Bool(false)), ":v2");
        let (names, values) = resumed.finish();
        assert_eq!(names.map(|n| n.len()), Some(4));
        assert_eq!(values.map(|v| v.len()), Some(3));
    }
    use crate::expr::{AttrPath, CompareOp};

    /// A condition tree over boolean atoms (`Compare` on path `aK`, `Between` on `bK`).
    fn tree() -> impl proptest::strategy::Strategy<Value = Node> {
        use proptest::prelude::*;
        let atom = (0usize..4, any::<bool>()).prop_map(|(k, between)| {
            if between {
                Node::Between {
                    path: AttrPath::Top(["b0", "b1", "b2", "b3"][k]),
                    low: Ok(AttributeValue::N("0".into())),
                    high: Ok(AttributeValue::N("1".into())),
                }
            } else {
                Node::Compare {
                    path: AttrPath::Top(["a0", "a1", "a2", "a3"][k]),
                    op: CompareOp::Eq,
                    value: Ok(AttributeValue::N("1".into())),
                }
            }
        });
        atom.prop_recursive(4, 24, 2, |inner| {
            prop_oneof![
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| Node::And(Box::new(a), Box::new(b))),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| Node::Or(Box::new(a), Box::new(b))),
                inner.prop_map(|a| Node::Not(Box::new(a))),
            ]
        })
    }

    /// The truth of `node` when atom `name` is `truth[name]`.
    fn eval(node: &Node, truth: &dyn Fn(&str) -> bool) -> bool {
        match node {
            Node::And(a, b) => eval(a, truth) && eval(b, truth),
            Node::Or(a, b) => eval(a, truth) || eval(b, truth),
            Node::Not(a) => !eval(a, truth),
            Node::Compare { path, .. } | Node::Between { path, .. } => truth(&path.to_string()),
            _ => false,
        }
    }

    /// Evaluates a rendered condition as DynamoDB reads it: comparisons and BETWEEN bind
    /// tightest, then NOT, then AND, then OR; parentheses group.
    struct Reader<'a> {
        tokens: Vec<&'a str>,
        at: usize,
        names: &'a HashMap<String, String>,
        truth: &'a dyn Fn(&str) -> bool,
    }

    impl Reader<'_> {
        fn next(&mut self) -> &str {
            let t = self.tokens.get(self.at).copied().unwrap_or("");
            self.at += 1;
            t
        }
        fn peek(&self) -> &str {
            self.tokens.get(self.at).copied().unwrap_or("")
        }
        fn or(&mut self) -> bool {
            let mut v = self.and();
            while self.peek() == "OR" {
                self.next();
                let r = self.and();
                v = v || r;
            }
            v
        }
        fn and(&mut self) -> bool {
            let mut v = self.not();
            while self.peek() == "AND" {
                self.next();
                let r = self.not();
                v = v && r;
            }
            v
        }
        fn not(&mut self) -> bool {
            if self.peek() == "NOT" {
                self.next();
                return !self.not();
            }
            self.atom()
        }
        fn atom(&mut self) -> bool {
            if self.peek() == "(" {
                self.next();
                let v = self.or();
                assert_eq!(self.next(), ")");
                return v;
            }
            let name = self.next().to_owned();
            let attribute = self.names.get(&name).cloned().unwrap_or_default();
            match self.next() {
                "=" => {
                    self.next();
                }
                "BETWEEN" => {
                    self.next();
                    assert_eq!(self.next(), "AND");
                    self.next();
                }
                other => panic!("unexpected {other:?}"),
            }
            (self.truth)(&attribute)
        }
    }

    proptest::proptest! {
        /// The rendered expression, read with DynamoDB's precedence, has the truth table of
        /// the tree: parentheses are left out only where precedence makes them redundant.
        #[test]
        fn rendering_keeps_the_meaning_of_every_condition(node in tree(), bits in 0u8..=255) {
            let mut p = Placeholders::default();
            let expr = p.render_condition(&node).expect("renders");
            let (names, _) = p.finish();
            let names = names.unwrap_or_default();
            let spaced = expr.replace('(', " ( ").replace(')', " ) ");
            let truth = |attribute: &str| {
                let k = ["a0", "a1", "a2", "a3", "b0", "b1", "b2", "b3"]
                    .iter()
                    .position(|a| *a == attribute)
                    .unwrap_or(0);
                bits & (1 << k) != 0
            };
            let mut reader = Reader {
                tokens: spaced.split_whitespace().collect(),
                at: 0,
                names: &names,
                truth: &truth,
            };
            let read = reader.or();
            proptest::prop_assert_eq!(reader.at, reader.tokens.len(), "{}", expr);
            proptest::prop_assert_eq!(read, eval(&node, &truth), "{}", expr);
        }
    }

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
        assert_eq!(expr, "#n0 = :v0 OR NOT #n0 <> :v1");
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
