//! [`AttrPath`]: where an attribute is in an item, from the top-level attribute down through
//! map members and list elements.

use std::borrow::Cow;
use std::sync::Arc;

/// One step of a nested path: a map member or a list element.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Segment {
    /// The member of a map, by name.
    Member(Cow<'static, str>),
    /// The element of a list, by position (from 0).
    Index(usize),
}

/// One step of a path as [`AttrPath::steps`] lists it, borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step<'a> {
    /// A top-level attribute or a map member, by name.
    Name(&'a str),
    /// A list element, by position.
    Index(usize),
}

/// Where an attribute is: a top-level attribute, or a path into maps and lists
/// (`address.city`, `lines[0].qty`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AttrPath {
    /// A top-level attribute.
    Top(&'static str),
    /// A nested path: the top-level attribute, then map members and list elements.
    Nested(Cow<'static, str>, Arc<[Segment]>),
}

impl AttrPath {
    /// The top-level attribute.
    pub fn top(&self) -> &str {
        match self {
            AttrPath::Top(name) => name,
            AttrPath::Nested(top, _) => top,
        }
    }

    /// Every step, from the top-level attribute down.
    pub fn steps(&self) -> Vec<Step<'_>> {
        match self {
            AttrPath::Top(name) => vec![Step::Name(name)],
            AttrPath::Nested(top, rest) => std::iter::once(Step::Name(top))
                .chain(rest.iter().map(|s| match s {
                    Segment::Member(name) => Step::Name(name),
                    Segment::Index(i) => Step::Index(*i),
                }))
                .collect(),
        }
    }

    /// Whether this is the top-level attribute `name` itself.
    pub fn is_top(&self, name: &str) -> bool {
        matches!(self, AttrPath::Top(top) if *top == name)
    }

    /// Whether one path is the other or contains it (DynamoDB rejects such a pair in one
    /// update: "two document paths overlap"). Two elements of one list do not overlap.
    pub fn overlaps(&self, other: &AttrPath) -> bool {
        let (a, b) = (self.steps(), other.steps());
        a.iter().zip(&b).all(|(x, y)| x == y)
    }

    /// The path one step further down.
    pub(crate) fn child(&self, segment: Segment) -> AttrPath {
        match self {
            AttrPath::Top(name) => AttrPath::Nested(Cow::Borrowed(name), Arc::from([segment])),
            AttrPath::Nested(top, rest) => {
                let mut parts = rest.to_vec();
                parts.push(segment);
                AttrPath::Nested(top.clone(), parts.into())
            }
        }
    }
}

impl From<&'static str> for AttrPath {
    fn from(name: &'static str) -> Self {
        AttrPath::Top(name)
    }
}

/// `a.b[0].c`, for messages: names are not escaped.
impl std::fmt::Display for AttrPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, step) in self.steps().into_iter().enumerate() {
            match step {
                Step::Name(name) if i == 0 => f.write_str(name)?,
                Step::Name(name) => write!(f, ".{name}")?,
                Step::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(top: &'static str, rest: &[Segment]) -> AttrPath {
        rest.iter()
            .fold(AttrPath::Top(top), |p, s| p.child(s.clone()))
    }

    fn member(name: &'static str) -> Segment {
        Segment::Member(Cow::Borrowed(name))
    }

    #[test]
    fn paths_show_members_and_elements_as_written_in_an_expression() {
        let p = path("lines", &[Segment::Index(2), member("qty")]);
        assert_eq!(p.to_string(), "lines[2].qty");
        assert_eq!(p.top(), "lines");
        assert_eq!(
            p.steps(),
            [Step::Name("lines"), Step::Index(2), Step::Name("qty")]
        );
        assert!(AttrPath::Top("a").is_top("a") && !p.is_top("lines"));
    }

    #[test]
    fn overlapping_paths_are_a_path_and_anything_below_it() {
        let lines = AttrPath::Top("lines");
        let first = path("lines", &[Segment::Index(0)]);
        let second = path("lines", &[Segment::Index(1)]);
        let first_qty = path("lines", &[Segment::Index(0), member("qty")]);
        assert!(lines.overlaps(&first) && first.overlaps(&lines));
        assert!(first.overlaps(&first_qty));
        assert!(!first.overlaps(&second) && !second.overlaps(&first_qty));
        // A member named like an index is not the index.
        assert!(!path("m", &[member("0")]).overlaps(&path("m", &[Segment::Index(0)])));
        assert!(!AttrPath::Top("a").overlaps(&AttrPath::Top("ab")));
    }
}
