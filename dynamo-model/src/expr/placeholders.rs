//! Placeholder allocation: every attribute name becomes `#nN` and every value `:vN`.

use super::operand::{Term, ValueError};
use super::{Condition, Node};
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
        let mut out = String::new();
        for step in path.steps() {
            match step {
                super::Step::Name(name) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    let placeholder = self.name(name);
                    out.push_str(&placeholder);
                }
                super::Step::Index(i) => {
                    let _ = write!(out, "[{i}]");
                }
            }
        }
        out
    }

    /// A fresh placeholder for a value.
    pub(crate) fn value(&mut self, value: AttributeValue) -> String {
        let placeholder = format!(":v{}", self.values.len());
        self.values.insert(placeholder.clone(), value);
        placeholder
    }

    /// The placeholder text of an operand: `:v0`, `#n0`, or `size(#n0)`.
    pub(crate) fn term(&mut self, term: &Term) -> Result<String, ValueError> {
        match term {
            Term::Value(Ok(v)) => Ok(self.value(v.clone())),
            Term::Value(Err(e)) => Err(e.clone()),
            Term::Path(path) => Ok(self.path(path)),
            Term::Size(path) => Ok(format!("size({})", self.path(path))),
            Term::Absent(path) => Err(ValueError {
                path: path.clone(),
                source: crate::codec::EncodeError::new(
                    "an absent value (None, an empty set) can only be compared with eq or ne",
                ),
            }),
        }
    }

    /// Refuses an operand that is the subject itself (`a = a`, `begins_with(a, a)`):
    /// DynamoDB wants the first operand distinct from the others.
    pub(crate) fn distinct<'a>(
        subject: &Term,
        others: impl IntoIterator<Item = &'a Term>,
    ) -> Result<(), ValueError> {
        let (Term::Path(a) | Term::Size(a)) = subject else {
            return Ok(());
        };
        match others
            .into_iter()
            .find(|t| matches!(t, Term::Path(b) if b == a))
        {
            Some(_) => Err(ValueError {
                path: a.to_string(),
                source: crate::codec::EncodeError::new(
                    "an attribute is compared with itself; DynamoDB wants the operands distinct",
                ),
            }),
            None => Ok(()),
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
            Node::Compare { left, op, right } => {
                Self::distinct(left, [right])?;
                let (l, r) = (self.term(left)?, self.term(right)?);
                let _ = write!(out, "{l} {} {r}", op.symbol());
            }
            Node::Between { subject, low, high } => {
                Self::distinct(subject, [low, high])?;
                let n = self.term(subject)?;
                let (lo, hi) = (self.term(low)?, self.term(high)?);
                let _ = write!(out, "{n} BETWEEN {lo} AND {hi}");
            }
            Node::Function { function, path } => {
                let n = self.path(path);
                let _ = write!(out, "{function}({n})");
            }
            Node::AttributeType { path, kind } => {
                let n = self.path(path);
                let v = self.value(AttributeValue::S(kind.code().to_owned()));
                let _ = write!(out, "attribute_type({n}, {v})");
            }
            Node::BeginsWith { path, value } => {
                Self::distinct(&Term::Path(path.clone()), [value])?;
                let (n, v) = (self.path(path), self.term(value)?);
                let _ = write!(out, "begins_with({n}, {v})");
            }
            Node::Contains { path, value } => {
                Self::distinct(&Term::Path(path.clone()), [value])?;
                let (n, v) = (self.path(path), self.term(value)?);
                let _ = write!(out, "contains({n}, {v})");
            }
            Node::In { subject, values } => {
                // DynamoDB: the IN comparator takes at most 100 operands.
                if values.is_empty() || values.len() > 100 {
                    let path = match subject {
                        Term::Path(p) | Term::Size(p) => p.to_string(),
                        _ => String::new(),
                    };
                    return Err(ValueError {
                        path,
                        source: crate::codec::EncodeError::new(format!(
                            "IN takes 1 to 100 values, got {}",
                            values.len()
                        )),
                    });
                }
                Self::distinct(subject, values)?;
                let n = self.term(subject)?;
                let mut list = Vec::with_capacity(values.len());
                for v in values {
                    list.push(self.term(v)?);
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

impl<E> std::fmt::Debug for Condition<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut p = Placeholders::default();
        match p.render_condition(&self.node) {
            Ok(expr) => write!(f, "Condition({expr})"),
            Err(e) => write!(f, "Condition(<invalid value for {}: {}>)", e.path, e.source),
        }
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
    use crate::expr::operand::Term;
    use crate::expr::{AttrPath, CompareOp};

    /// A condition tree over boolean atoms (`Compare` on path `aK`, `Between` on `bK`).
    fn tree() -> impl proptest::strategy::Strategy<Value = Node> {
        use proptest::prelude::*;
        let atom = (0usize..4, any::<bool>()).prop_map(|(k, between)| {
            if between {
                Node::between(
                    AttrPath::Top(["b0", "b1", "b2", "b3"][k]),
                    AttributeValue::N("0".into()),
                    AttributeValue::N("1".into()),
                )
            } else {
                Node::equals(
                    AttrPath::Top(["a0", "a1", "a2", "a3"][k]),
                    AttributeValue::N("1".into()),
                )
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
            Node::Compare {
                left: Term::Path(path),
                ..
            }
            | Node::Between {
                subject: Term::Path(path),
                ..
            } => truth(&path.to_string()),
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
        let a = Node::equals("status", AttributeValue::S("open".into()));
        let b = Node::compare("status", CompareOp::Ne, AttributeValue::S("open".into()));
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
    fn nested_paths_alias_every_member_and_index_list_elements() {
        use crate::expr::{AttrPath, Segment};
        let member = |name: &'static str| Segment::Member(name.into());
        let settings = AttrPath::Top("settings");
        let mut p = Placeholders::default();
        assert_eq!(p.path(&settings.child(member("a.b"))), "#n0.#n1");
        assert_eq!(p.path(&settings), "#n0");
        let element = settings
            .child(Segment::Index(3))
            .child(member("[0]"))
            .child(Segment::Index(0));
        assert_eq!(p.path(&element), "#n0[3].#n2[0]");
        let (names, _) = p.finish();
        let names = names.unwrap();
        assert_eq!(names.get("#n1").map(String::as_str), Some("a.b"));
        assert_eq!(names.get("#n2").map(String::as_str), Some("[0]"));
    }

    #[test]
    fn empty_maps_are_omitted() {
        assert_eq!(Placeholders::default().finish(), (None, None));
    }
}
