//! A sort-key operator on a string key component and what it selects by reference, for
//! the property tests that compare queries with a model.

/// An operator on one string component of a sort key.
#[derive(Debug, Clone)]
pub enum Op {
    Lt(String),
    Le(String),
    Gt(String),
    Ge(String),
    Between(String, String),
    StartsWith(String),
    /// The whole component: `.name().eq(v)`.
    Is(String),
}

impl Op {
    /// Whether the component `name` satisfies the operator: Rust compares `str` by
    /// bytes, as DynamoDB compares key strings.
    pub fn holds(&self, name: &str) -> bool {
        match self {
            Op::Lt(b) => name < b.as_str(),
            Op::Le(b) => name <= b.as_str(),
            Op::Gt(b) => name > b.as_str(),
            Op::Ge(b) => name >= b.as_str(),
            Op::Between(a, b) => a.as_str() <= name && name <= b.as_str(),
            Op::StartsWith(p) => name.starts_with(p.as_str()),
            Op::Is(b) => name == b,
        }
    }

    /// Every operator once: the comparisons with `a`, between `a` and `b` (in order),
    /// starting with `prefix`, and the whole component `a`.
    pub fn every(a: &str, b: &str, prefix: &str) -> Vec<Op> {
        let (low, high) = (a.min(b).to_owned(), a.max(b).to_owned());
        vec![
            Op::Lt(a.to_owned()),
            Op::Le(a.to_owned()),
            Op::Gt(a.to_owned()),
            Op::Ge(a.to_owned()),
            Op::Between(low, high),
            Op::StartsWith(prefix.to_owned()),
            Op::Is(a.to_owned()),
        ]
    }
}

/// The condition an [`Op`] puts on a component: `component` builds the component's
/// condition builder (it is evaluated once, in the arm taken).
macro_rules! on_component {
    ($op:expr, $component:expr) => {
        match $op {
            $crate::common::reference::Op::Lt(b) => $component.lt(b),
            $crate::common::reference::Op::Le(b) => $component.le(b),
            $crate::common::reference::Op::Gt(b) => $component.gt(b),
            $crate::common::reference::Op::Ge(b) => $component.ge(b),
            $crate::common::reference::Op::Between(a, b) => $component.between(a, b),
            $crate::common::reference::Op::StartsWith(p) => $component.starts_with(p),
            $crate::common::reference::Op::Is(b) => $component.eq(b).into(),
        }
    };
}
pub(crate) use on_component;

/// A stored row of the property tests: a name (the component the operators test) and a
/// number that tells rows of one name apart.
pub type Row = (String, u32);

/// The two bounds and the prefix of one case's operators, drawn by [`operands`]: each
/// bound a stored name (equal values and extensions are the hard cases) or a fresh one,
/// and a prefix of the first bound cut at a character boundary.
pub type Operands = Vec<(
    String,
    Option<proptest::sample::Index>,
    proptest::sample::Index,
)>;

/// The strategy of a case's [`Operands`], fresh names drawn from `names`.
pub fn operands(
    names: impl proptest::strategy::Strategy<Value = String>,
) -> impl proptest::strategy::Strategy<Value = Operands> {
    use proptest::prelude::*;
    prop::collection::vec(
        (
            names,
            prop::option::weighted(0.6, any::<proptest::sample::Index>()),
            any::<proptest::sample::Index>(),
        ),
        2,
    )
}

/// The bounds `a` and `b` and the prefix of a case (see [`Operands`]) over the rows
/// `people` (not empty).
pub fn bounds(people: &[Row], operands: &Operands) -> (String, String, String) {
    let [a, b] = [0, 1].map(|i| {
        let (fresh, pick, _) = operands[i].clone();
        match pick {
            Some(at) => people[at.index(people.len())].0.clone(),
            None => fresh,
        }
    });
    let chars: Vec<char> = a.chars().collect();
    let prefix: String = chars[..operands[1].2.index(chars.len() + 1)]
        .iter()
        .collect();
    (a, b, prefix)
}

/// The rows of `people` once each, in the order first seen: distinct rows have distinct
/// keys, or a put would replace another row and a read would miss it.
pub fn distinct(people: &[Row]) -> Vec<Row> {
    let mut once: Vec<Row> = Vec::new();
    for row in people {
        if !once.contains(row) {
            once.push(row.clone());
        }
    }
    once
}

/// Puts the rows of `people` once each (see [`distinct`]), built by `make` from a name
/// and a number; returns them in key order: by name (UTF-8 bytes), then by number.
pub async fn store<E: dynamo_model::Entity>(
    db: &dynamo_model::Db<E::Table>,
    people: &[Row],
    make: impl Fn(&str, u32) -> E,
) -> Result<Vec<Row>, dynamo_model::Error> {
    let mut stored = distinct(people);
    for (name, n) in &stored {
        db.put(&make(name, *n)).await?;
    }
    stored.sort();
    Ok(stored)
}

/// The rows of `stored` (in key order) `op` selects, forward and reversed.
pub fn selected(stored: &[Row], op: &Op) -> (Vec<Row>, Vec<Row>) {
    let forward: Vec<Row> = stored
        .iter()
        .filter(|(name, _)| op.holds(name))
        .cloned()
        .collect();
    let mut reversed = forward.clone();
    reversed.reverse();
    (forward, reversed)
}

/// Every page of `query()` with `limit(2)`, following cursors, as rows.
pub async fn paged<E: dynamo_model::Entity, K: dynamo_model::KeySpace>(
    query: impl Fn() -> dynamo_model::read::Query<E, K>,
    row: impl Fn(E) -> Row,
) -> Result<Vec<Row>, dynamo_model::Error> {
    let items = super::all_pages(query, 2, None, false).await?;
    Ok(items.into_iter().map(row).collect())
}
