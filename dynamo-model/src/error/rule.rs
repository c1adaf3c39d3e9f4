//! A value that breaks a rule its entity declares (`#[dynamo(validate(..))]`), refused
//! before anything is written.

use std::fmt;

/// A rule an entity declares on a field (`#[dynamo(validate(..))]`) or on the whole value
/// (`#[dynamo(validate = path)]`), as written.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rule {
    /// `length(min = .., max = ..)`: the number of characters of a string, of elements of
    /// a list, set or map, of bytes of a binary value.
    Length {
        /// The least length allowed.
        min: Option<usize>,
        /// The greatest length allowed.
        max: Option<usize>,
    },
    /// `range(min = .., max = ..)`: bounds of the value, both included, as written.
    Range {
        /// The least value allowed.
        min: Option<&'static str>,
        /// The greatest value allowed.
        max: Option<&'static str>,
    },
    /// `pattern = ".."`: a regular expression the whole text must match somewhere (anchor
    /// it with `^..$` to match all of it).
    Pattern(&'static str),
    /// `one_of(..)`: the values allowed, as written.
    OneOf(&'static [&'static str]),
    /// `with = path`: a function of the field's value.
    Function(&'static str),
    /// `#[dynamo(validate = path)]` on the entity: a function of the whole value.
    Entity(&'static str),
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::Length { min, max } => {
                f.write_str("length")?;
                bounds(f, min.map(|n| n.to_string()), max.map(|n| n.to_string()))
            }
            Rule::Range { min, max } => {
                f.write_str("range")?;
                bounds(f, min.map(str::to_owned), max.map(str::to_owned))
            }
            Rule::Pattern(p) => write!(f, "pattern {p:?}"),
            Rule::OneOf(values) => write!(f, "one of {}", values.join(", ")),
            Rule::Function(path) => write!(f, "{path}"),
            Rule::Entity(path) => write!(f, "{path}"),
        }
    }
}

/// ` from 1 to 64`, ` at least 1`, ` at most 64`.
fn bounds(f: &mut fmt::Formatter<'_>, min: Option<String>, max: Option<String>) -> fmt::Result {
    match (min, max) {
        (Some(min), Some(max)) => write!(f, " from {min} to {max}"),
        (Some(min), None) => write!(f, " at least {min}"),
        (None, Some(max)) => write!(f, " at most {max}"),
        (None, None) => Ok(()),
    }
}

/// What [`Error::Rule`](crate::Error::Rule) holds: the entity, the field (none for a rule
/// on the whole value), the rule and the value that breaks it. Nothing was written.
///
/// Its `Display` and `Debug` name the entity, field and rule but not the value, which can
/// hold personal data (as keys in traces): read it with [`value`](RuleViolation::value).
#[derive(Clone, PartialEq, Eq)]
pub struct RuleViolation {
    entity: &'static str,
    field: Option<&'static str>,
    rule: Rule,
    value: Option<String>,
    reason: Option<String>,
}

impl RuleViolation {
    /// Field `field` of `entity` breaks `rule` with `value` (its `Debug` text).
    pub fn field(entity: &'static str, field: &'static str, rule: Rule, value: String) -> Self {
        RuleViolation {
            entity,
            field: Some(field),
            rule,
            value: Some(value),
            reason: None,
        }
    }

    /// A function rule of `entity` (on `field`, or on the whole value) refused it, saying
    /// `reason`.
    pub fn refused(
        entity: &'static str,
        field: Option<&'static str>,
        rule: Rule,
        reason: String,
    ) -> Self {
        RuleViolation {
            entity,
            field,
            rule,
            value: None,
            reason: Some(reason),
        }
    }

    /// The entity type.
    pub fn entity(&self) -> &'static str {
        self.entity
    }

    /// The field's attribute name; `None` for a rule on the whole value.
    pub fn field_name(&self) -> Option<&'static str> {
        self.field
    }

    /// The rule broken.
    pub fn rule(&self) -> &Rule {
        &self.rule
    }

    /// The value that breaks a declarative rule, as its `Debug` text (`None` for a
    /// function rule, which says why in [`reason`](RuleViolation::reason), and for an
    /// encrypted field, whose value never leaves the write in plain text).
    pub fn value(&self) -> Option<&str> {
        self.value.as_deref()
    }

    /// This violation without the value (a field stored encrypted).
    pub(crate) fn redacted(mut self: Box<Self>) -> Box<Self> {
        self.value = None;
        self
    }

    /// What a function rule said.
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }
}

impl fmt::Display for RuleViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.field {
            Some(field) => write!(f, "field `{field}` of {} breaks its rule: ", self.entity)?,
            None => write!(f, "{} breaks its rule: ", self.entity)?,
        }
        match (&self.rule, &self.reason) {
            (Rule::Function(_) | Rule::Entity(_), Some(reason)) => {
                write!(f, "{} says {reason}", self.rule)
            }
            (rule, _) => write!(f, "{rule}"),
        }
    }
}

/// Like `Display`, the value is left out (an `unwrap` or a `{:?}` in a log would carry it).
impl fmt::Debug for RuleViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RuleViolation")
            .field("entity", &self.entity)
            .field("field", &self.field)
            .field("rule", &self.rule)
            .field("value", &self.value.as_ref().map(|_| "(hidden)"))
            .field("reason", &self.reason)
            .finish()
    }
}

impl std::error::Error for RuleViolation {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_the_field_and_the_rule_in_words_without_the_value() {
        let v = RuleViolation::field(
            "User",
            "email",
            Rule::Length {
                min: Some(3),
                max: Some(64),
            },
            "\"a@\"".into(),
        );
        assert_eq!(
            v.to_string(),
            "field `email` of User breaks its rule: length from 3 to 64"
        );
        assert_eq!(v.value(), Some("\"a@\""));
        assert!(
            !format!("{v:?}").contains("a@"),
            "the value stays out of Debug too"
        );
        let r = Rule::Range {
            min: None,
            max: Some("100"),
        };
        assert_eq!(r.to_string(), "range at most 100");
        assert_eq!(
            Rule::OneOf(&["\"draft\"", "\"live\""]).to_string(),
            "one of \"draft\", \"live\""
        );
        let e = RuleViolation::refused(
            "Order",
            None,
            Rule::Entity("check_order"),
            "the total is negative".into(),
        );
        assert_eq!(
            e.to_string(),
            "Order breaks its rule: check_order says the total is negative"
        );
        assert_eq!(e.field_name(), None);
    }
}
