//! Rules on the values of an entity, checked before every write that sets them.
//!
//! A field declares its rules with `#[dynamo(validate(..))]`, the entity a function over
//! the whole value with `#[dynamo(validate = path)]`:
//!
//! ```
//! use dynamo_model::{Entity, Table};
//! # #[derive(Table)] #[dynamo(pk = "PK", sk = "SK")] struct App;
//!
//! #[derive(Entity)]
//! #[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE", validate = adult_admins)]
//! struct User {
//!     id: String,
//!     #[dynamo(validate(length(min = 3, max = 254), pattern = "^[^@]+@[^@]+$"))]
//!     email: String,
//!     #[dynamo(validate(range(min = 13, max = 150)))]
//!     age: u8,
//!     #[dynamo(validate(one_of("member", "admin")))]
//!     role: String,
//!     #[dynamo(validate(with = no_blank_words))]
//!     nickname: Option<String>,
//! }
//!
//! fn no_blank_words(nick: &str) -> Result<(), String> {
//!     if nick.trim().is_empty() { Err("a nickname is not blank".into()) } else { Ok(()) }
//! }
//!
//! fn adult_admins(user: &User) -> Result<(), &'static str> {
//!     if user.role == "admin" && user.age < 18 { Err("admins are adults") } else { Ok(()) }
//! }
//!
//! let user = User {
//!     id: "u-1".into(),
//!     email: "ada@example.com".into(),
//!     age: 12,
//!     role: "member".into(),
//!     nickname: None,
//! };
//! let err = dynamo_model::validate::check(&user).unwrap_err();
//! assert_eq!(err.to_string(), "field `age` of User breaks its rule: range from 13 to 150");
//! ```
//!
//! The rules:
//!
//! | rule | holds when | applies to |
//! | --- | --- | --- |
//! | `length(min = a, max = b)` | `a <= length <= b` (either bound may be left out) | [`Length`]: strings (characters), lists, sets, maps, `Binary` (bytes) |
//! | `range(min = a, max = b)` | `a <= value <= b` | any `PartialOrd` type of the literals |
//! | `pattern = "re"` | the regular expression matches ([`regex_lite`] syntax; anchor it with `^..$`), compiled once, checked when the entity is derived | strings |
//! | `one_of(a, b, ..)` | the value equals one of the literals | any type comparable to them |
//! | `with = path` | `path(&value)` returns `Ok(())` (an `Err` says why, with any `Display`) | any field |
//!
//! A rule on an `Option` field holds for `None`: it checks the value when there is one.
//! A rule the field's type cannot meet (a `length` of a number, a `range` of a string
//! with number literals) is a compile error.
//!
//! **Where they are checked.** Before sending, on every write that sets the field: `put`,
//! batch puts and bulk loads, transaction puts, history writes, migrations' writes, and
//! an update's `set` and `set_if_absent` of the whole field. An update that changes a
//! ruled field in a way whose result is unknown before it is applied (`add`, `subtract`,
//! `append`, `prepend`, set operations, a member of it) is refused with
//! [`ValidationReason::RuledField`](crate::ValidationReason::RuledField): set the whole
//! value instead. The entity's own rule (`validate = path`) is a function of the whole
//! value, so it is checked on writes of the whole value (puts, batches, transaction puts,
//! history, migrations), not on updates, which do not hold it. A broken rule is
//! [`Error::Rule`], naming the entity, field, rule and value; nothing is written. Reads do
//! not check rules (an item stored before a rule was added still reads): [`check`] a value
//! read when you want to. Not checked: the raw items of
//! [`BatchWrite::ops`](dynamo_model::batch::BatchWrite::ops), a migration's raw steps
//! (`set_default`, `rename_attribute`), and the key fields an upsert writes from its key.
//! Fields the crate sets (`created`, `updated`, `generate`), `serde` and `key_format`
//! fields take no rules (a compile error).

use crate::Error;
use crate::error::{Rule, RuleViolation};
use std::any::Any;
use std::fmt::{Debug, Display};
use std::sync::OnceLock;

/// Checks every rule `value`'s entity declares (its fields' and its own), as writes do.
pub fn check<E: crate::Entity>(value: &E) -> Result<(), Error> {
    crate::entity::EntityInternals::__validate(value)
}

/// The length a `length(..)` rule measures.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no length for a `length(..)` rule",
    note = "`length` applies to strings, lists, sets, maps and `Binary`: implement `dynamo_model::validate::Length` for your own type, or use `with = ..`"
)]
pub trait Length {
    /// The length: characters of a string, elements of a collection, bytes of binary.
    fn length(&self) -> usize;
}

/// [`Length`] of collections: their number of elements.
macro_rules! length_is_len {
    ($([$($generics:tt)*] $t:ty),* $(,)?) => {$(
        impl<$($generics)*> Length for $t {
            fn length(&self) -> usize {
                self.len()
            }
        }
    )*};
}

length_is_len!(
    [T] Vec<T>,
    [T] [T],
    [K, V, S] std::collections::HashMap<K, V, S>,
    [K, V] std::collections::BTreeMap<K, V>,
    [T, S] std::collections::HashSet<T, S>,
    [T] std::collections::BTreeSet<T>,
);

impl Length for str {
    fn length(&self) -> usize {
        self.chars().count()
    }
}

impl Length for String {
    fn length(&self) -> usize {
        self.as_str().length()
    }
}

impl Length for crate::Binary {
    fn length(&self) -> usize {
        self.0.len()
    }
}

/// A `pattern = ".."` rule's expression, compiled the first time it is checked.
#[doc(hidden)]
pub struct Pattern {
    text: &'static str,
    compiled: OnceLock<Result<regex_lite::Regex, regex_lite::Error>>,
}

impl Pattern {
    /// The pattern `text` (checked by the derive, so it compiles).
    pub const fn new(text: &'static str) -> Self {
        Pattern {
            text,
            compiled: OnceLock::new(),
        }
    }

    fn matches(&self, value: &str) -> bool {
        match self
            .compiled
            .get_or_init(|| regex_lite::Regex::new(self.text))
        {
            Ok(re) => re.is_match(value),
            // Unreachable through the derive, which refuses such a pattern: no value
            // matches an expression that does not compile.
            Err(_) => false,
        }
    }
}

/// The longest `Debug` text of a value a violation keeps.
const MAX_VALUE_TEXT: usize = 256;

fn broken<E: crate::Entity>(field: &'static str, rule: Rule, value: &dyn Debug) -> Error {
    let mut text = format!("{value:?}");
    if text.len() > MAX_VALUE_TEXT {
        let mut end = MAX_VALUE_TEXT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    Error::Rule(Box::new(RuleViolation::field(
        E::ENTITY_TYPE,
        field,
        rule,
        text,
    )))
}

/// The value of field `field` to check, as its type `T`. A value of another type (which
/// the derive never passes) is refused rather than left unchecked.
#[doc(hidden)]
pub fn value_of<'a, E: crate::Entity, T: 'static>(
    field: &'static str,
    value: &'a dyn Any,
) -> Result<&'a T, Error> {
    value.downcast_ref::<T>().ok_or_else(|| {
        let message = format!(
            "the rules of field `{field}` check a `{}`, not this value",
            std::any::type_name::<T>()
        );
        Error::invalid(E::ENTITY_TYPE, crate::ValidationReason::RuledField, message)
    })
}

/// `length(min = .., max = ..)`.
#[doc(hidden)]
pub fn length<E: crate::Entity, T: Length + Debug + ?Sized>(
    field: &'static str,
    value: &T,
    min: Option<usize>,
    max: Option<usize>,
) -> Result<(), Error> {
    let n = value.length();
    if min.is_some_and(|min| n < min) || max.is_some_and(|max| n > max) {
        return Err(broken::<E>(field, Rule::Length { min, max }, &value));
    }
    Ok(())
}

/// `range(min = .., max = ..)`, with the bounds as written (`texts`).
#[doc(hidden)]
pub fn range<E: crate::Entity, T: PartialOrd + Debug>(
    field: &'static str,
    value: &T,
    (min, max): (Option<T>, Option<T>),
    texts: (Option<&'static str>, Option<&'static str>),
) -> Result<(), Error> {
    // A value that does not compare (NaN) is outside every range.
    let below = min.is_some_and(|min| !matches!(value.partial_cmp(&min), Some(o) if o.is_ge()));
    let above = max.is_some_and(|max| !matches!(value.partial_cmp(&max), Some(o) if o.is_le()));
    if below || above {
        let rule = Rule::Range {
            min: texts.0,
            max: texts.1,
        };
        return Err(broken::<E>(field, rule, value));
    }
    Ok(())
}

/// `pattern = ".."`.
#[doc(hidden)]
pub fn pattern<E: crate::Entity, T: AsRef<str> + Debug + ?Sized>(
    field: &'static str,
    value: &T,
    pattern: &'static Pattern,
) -> Result<(), Error> {
    if !pattern.matches(value.as_ref()) {
        return Err(broken::<E>(field, Rule::Pattern(pattern.text), &value));
    }
    Ok(())
}

/// `one_of(..)`, with the values as written (`texts`).
#[doc(hidden)]
pub fn one_of<E: crate::Entity, T: PartialEq<U> + Debug, U>(
    field: &'static str,
    value: &T,
    allowed: &[U],
    texts: &'static [&'static str],
) -> Result<(), Error> {
    if !allowed.iter().any(|a| value == a) {
        return Err(broken::<E>(field, Rule::OneOf(texts), value));
    }
    Ok(())
}

/// `with = path` on field `field` (`None`: `validate = path` on the entity): what the
/// function returned.
#[doc(hidden)]
pub fn function<E: crate::Entity, M: Display>(
    field: Option<&'static str>,
    path: &'static str,
    result: Result<(), M>,
) -> Result<(), Error> {
    result.map_err(|reason| {
        let rule = match field {
            Some(_) => Rule::Function(path),
            None => Rule::Entity(path),
        };
        Error::Rule(Box::new(RuleViolation::refused(
            E::ENTITY_TYPE,
            field,
            rule,
            reason.to_string(),
        )))
    })
}

#[cfg(test)]
mod tests;
