//! The typed sort-key chains: `Order::sk().placed_at().eq(5).order_id().lt("o-9")`.
//!
//! `#[derive(Entity)]` generates one small type per sort-key template (`OrderSk<N>`, `N`
//! the number of components fixed so far) and, per template field, one accessor on the
//! level that reaches it (`OrderSk<0>::placed_at`). The accessor returns a
//! [`SortKeyField`] (or an [`AttributeField`] for a multi-attribute index key), and every
//! comparison lives here, generic over the field's type and the level that follows:
//! the generated code stays one function per field whatever the operators are.
//!
//! The typing is the same as a chain with one method per operator: a field is reached
//! only from the level before it (template order), a value must be a
//! [`KeyArg`] of the field's type, and the condition carries the entity and
//! the key space (table or index) it was built for.

use super::sort::{
    AttributeCondition, AttributeOp, AttributePrefix, KeySpace, SortKeyCondition, SortKeyPrefix,
};
use crate::codec::Operand;
use crate::key::format::{Formatted, KeyFormat};
use crate::key::{KeyArg, KeyPart};
use crate::{AttrValue, Entity};
use std::marker::PhantomData;

/// One level of a generated sort-key chain on a rendered (template) sort key.
/// Implemented by `#[derive(Entity)]`; not for implementation by hand.
#[doc(hidden)]
pub trait SortKeyChain: Sized {
    /// The entity whose template the chain follows.
    type Entity: Entity;
    /// The table or index the chain's conditions are for.
    type Space: KeySpace;
    /// Wraps a prefix as this level.
    fn __from_prefix(prefix: SortKeyPrefix<Self::Entity, Self::Space>) -> Self;
    /// The prefix this level wraps.
    fn __into_prefix(self) -> SortKeyPrefix<Self::Entity, Self::Space>;
}

/// One level of a generated sort-key chain on a multi-attribute index sort key.
/// Implemented by `#[derive(Entity)]`; not for implementation by hand.
#[doc(hidden)]
pub trait AttributeChain: Sized {
    /// The entity whose key attributes the chain follows.
    type Entity: Entity;
    /// The index the chain's conditions are for.
    type Space: KeySpace;
    /// Wraps a prefix as this level.
    fn __from_prefix(prefix: AttributePrefix<Self::Entity, Self::Space>) -> Self;
    /// The prefix this level wraps.
    fn __into_prefix(self) -> AttributePrefix<Self::Entity, Self::Space>;
}

/// The next component of a sort-key template, of type `T`, reached from a chain level;
/// `Next` is the level after it. Fix it with [`eq`](SortKeyField::eq) or end the
/// condition with a range on it.
///
/// Every condition selects whole components: the keys whose component equals `v` are
/// exactly those in `[v#, v$]` (with another delimiter `d`, `[v d, v d+1]`; see
/// [`sort`](super::sort)), so `placed_at().le(5)` never misses a key whose later
/// components sort high, nor catches a longer value.
#[must_use = "a sort-key field does nothing until it is compared"]
pub struct SortKeyField<T, Next: SortKeyChain> {
    prefix: SortKeyPrefix<Next::Entity, Next::Space>,
    following: &'static str,
    complete: bool,
    _field: PhantomData<fn() -> T>,
}

impl<T, Next: SortKeyChain> std::fmt::Debug for SortKeyField<T, Next> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SortKeyField")
            .field("prefix", &self.prefix)
            .field("following", &self.following)
            .finish()
    }
}

impl<T: KeyPart, Next: SortKeyChain> SortKeyField<T, Next> {
    /// `following`: the template's literal after this field (empty when it is the last
    /// segment); `complete`: whether it is the template's last field.
    #[doc(hidden)]
    pub fn __new(
        level: impl SortKeyChain<Entity = Next::Entity, Space = Next::Space>,
        following: &'static str,
        complete: bool,
    ) -> Self {
        SortKeyField {
            prefix: level.__into_prefix(),
            following,
            complete,
            _field: PhantomData,
        }
    }

    /// Whether more of the template follows the field (a delimiter at least).
    fn followed(&self) -> bool {
        !self.following.is_empty()
    }

    /// Fixes the field: items whose sort key starts with the components so far and this
    /// value (the whole component), or the one key once every field is fixed.
    #[allow(clippy::should_implement_trait)]
    pub fn eq(self, value: impl KeyArg<T>) -> Next {
        let delimiter = self.prefix.delimiter();
        Next::__from_prefix(self.prefix.__push(
            move |out| value.encode_key_arg(delimiter, out),
            self.following,
            self.complete,
        ))
    }

    /// A range or prefix condition on a part whose encoding does not keep order is
    /// refused: its text order is not its value order.
    fn unordered(operator: &'static str) -> Option<SortKeyCondition<Next::Entity, Next::Space>> {
        (!T::KEEPS_ORDER).then(|| {
            SortKeyCondition::refused(crate::error::KeyError::Unordered {
                type_name: crate::key::short_type_name::<T>(),
                operator,
            })
        })
    }

    fn compare(
        self,
        op: super::sort::Compare,
        value: impl KeyArg<T>,
    ) -> SortKeyCondition<Next::Entity, Next::Space> {
        if let Some(refused) = Self::unordered(op.operator()) {
            return refused;
        }
        let (followed, delimiter) = (self.followed(), self.prefix.delimiter());
        self.prefix.__compare(
            op,
            move |out| value.encode_key_arg(delimiter, out),
            followed,
        )
    }

    /// Items whose field is `<` the value (the components before it fixed).
    pub fn lt(self, value: impl KeyArg<T>) -> SortKeyCondition<Next::Entity, Next::Space> {
        self.compare(super::sort::Compare::Lt, value)
    }

    /// Items whose field is `<=` the value (the components before it fixed).
    pub fn le(self, value: impl KeyArg<T>) -> SortKeyCondition<Next::Entity, Next::Space> {
        self.compare(super::sort::Compare::Le, value)
    }

    /// Items whose field is `>` the value (the components before it fixed).
    pub fn gt(self, value: impl KeyArg<T>) -> SortKeyCondition<Next::Entity, Next::Space> {
        self.compare(super::sort::Compare::Gt, value)
    }

    /// Items whose field is `>=` the value (the components before it fixed).
    pub fn ge(self, value: impl KeyArg<T>) -> SortKeyCondition<Next::Entity, Next::Space> {
        self.compare(super::sort::Compare::Ge, value)
    }

    /// Items whose field is in `[low, high]` (inclusive).
    pub fn between(
        self,
        low: impl KeyArg<T>,
        high: impl KeyArg<T>,
    ) -> SortKeyCondition<Next::Entity, Next::Space> {
        if let Some(refused) = Self::unordered("between") {
            return refused;
        }
        let (followed, delimiter) = (self.followed(), self.prefix.delimiter());
        self.prefix.__between(
            move |out| low.encode_key_arg(delimiter, out),
            move |out| high.encode_key_arg(delimiter, out),
            followed,
        )
    }

    /// Items whose field starts with this partial value, e.g. `"2023-10"` of a
    /// timestamp (escaped as the field's type escapes its text under the template's
    /// delimiter: see [`KeyPart::escape_partial_with`]).
    pub fn starts_with(self, partial: &str) -> SortKeyCondition<Next::Entity, Next::Space> {
        if let Some(refused) = Self::unordered("starts_with") {
            return refused;
        }
        let delimiter = self.prefix.delimiter();
        self.prefix
            .__starts_with(move |out| T::escape_partial_with(partial, delimiter, out))
    }
}

/// The next attribute of a multi-attribute index sort key, of type `T`, reached from a
/// chain level; `Next` is the level after it. DynamoDB's rule for these keys: equality
/// on leading attributes, then at most one comparison.
#[must_use = "a sort-key attribute does nothing until it is compared"]
pub struct AttributeField<T, Next: AttributeChain> {
    prefix: AttributePrefix<Next::Entity, Next::Space>,
    attribute: &'static str,
    _field: PhantomData<fn() -> T>,
}

impl<T, Next: AttributeChain> std::fmt::Debug for AttributeField<T, Next> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AttributeField")
            .field("prefix", &self.prefix)
            .field("attribute", &self.attribute)
            .finish()
    }
}

impl<T: AttrValue, Next: AttributeChain> AttributeField<T, Next> {
    #[doc(hidden)]
    pub fn __new(
        level: impl AttributeChain<Entity = Next::Entity, Space = Next::Space>,
        attribute: &'static str,
    ) -> Self {
        AttributeField {
            prefix: level.__into_prefix(),
            attribute,
            _field: PhantomData,
        }
    }

    /// A range on an attribute whose stored order is not its values' is refused: the
    /// condition would compare text (`10` before `9`) and leave items out.
    fn unordered(operator: &'static str) -> Result<(), crate::error::KeyError> {
        if T::__ORDERED {
            return Ok(());
        }
        Err(crate::error::KeyError::Unordered {
            type_name: crate::key::short_type_name::<T>(),
            operator,
        })
    }

    fn compare(
        self,
        operator: &'static str,
        make: fn(aws_sdk_dynamodb::types::AttributeValue) -> AttributeOp,
        value: T,
    ) -> AttributeCondition<Next::Entity, Next::Space> {
        let attribute = self.attribute;
        self.prefix.__compare(attribute, move || {
            Self::unordered(operator)?;
            super::sort::attribute_op(make, super::sort::attribute_value(attribute, value))
        })
    }

    /// Fixes the attribute (equality).
    #[allow(clippy::should_implement_trait)]
    pub fn eq(self, value: impl Operand<T>) -> Next {
        let value = super::sort::attribute_value(self.attribute, value.into_operand());
        Next::__from_prefix(self.prefix.__push(value))
    }

    /// Items whose attribute is `<` the value (the attributes before it fixed).
    pub fn lt(self, value: impl Operand<T>) -> AttributeCondition<Next::Entity, Next::Space> {
        self.compare("lt", AttributeOp::Lt, value.into_operand())
    }

    /// Items whose attribute is `<=` the value (the attributes before it fixed).
    pub fn le(self, value: impl Operand<T>) -> AttributeCondition<Next::Entity, Next::Space> {
        self.compare("le", AttributeOp::Le, value.into_operand())
    }

    /// Items whose attribute is `>` the value (the attributes before it fixed).
    pub fn gt(self, value: impl Operand<T>) -> AttributeCondition<Next::Entity, Next::Space> {
        self.compare("gt", AttributeOp::Gt, value.into_operand())
    }

    /// Items whose attribute is `>=` the value (the attributes before it fixed).
    pub fn ge(self, value: impl Operand<T>) -> AttributeCondition<Next::Entity, Next::Space> {
        self.compare("ge", AttributeOp::Ge, value.into_operand())
    }

    /// Items whose attribute is in `[low, high]` (inclusive).
    pub fn between(
        self,
        low: impl Operand<T>,
        high: impl Operand<T>,
    ) -> AttributeCondition<Next::Entity, Next::Space> {
        let attribute = self.attribute;
        self.prefix.__compare(attribute, move || {
            Self::unordered("between")?;
            let low = super::sort::attribute_value::<T>(attribute, low.into_operand())?.1;
            let high = super::sort::attribute_value::<T>(attribute, high.into_operand())?.1;
            Ok(AttributeOp::Between(low, high))
        })
    }
}

impl<Next: AttributeChain> AttributeField<String, Next> {
    /// Items whose (string) attribute begins with the value.
    pub fn begins_with(
        self,
        value: impl Into<String>,
    ) -> AttributeCondition<Next::Entity, Next::Space> {
        self.compare("begins_with", AttributeOp::BeginsWith, value.into())
    }
}

/// A formatted string keeps the operators of a string.
impl<F: KeyFormat<String>, Next: AttributeChain> AttributeField<Formatted<String, F>, Next> {
    /// Items whose (string) attribute begins with the value (e.g. a date's leading
    /// `2026-11` inside a verbatim attribute).
    pub fn begins_with(
        self,
        value: impl Into<String>,
    ) -> AttributeCondition<Next::Entity, Next::Space> {
        let value = Formatted::new(value.into());
        self.compare("begins_with", AttributeOp::BeginsWith, value)
    }
}

/// A chain level as a condition: `begins_with` the fixed components (or the one key once
/// every component is fixed).
impl<C: SortKeyChain> From<C> for SortKeyCondition<C::Entity, C::Space> {
    fn from(level: C) -> Self {
        level.__into_prefix().condition()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Table;
    use crate::keyspace::sort::{Primary, SortKeyOp};

    #[derive(Table)]
    #[dynamo(pk = "PK", sk = "SK")]
    struct App;

    #[derive(crate::Entity, Debug)]
    #[dynamo(table = App, pk = "P#{p}", sk = "N#{name}#{n}")]
    struct Row {
        p: String,
        name: String,
        n: u32,
    }

    fn op(c: SortKeyCondition<Row, Primary>) -> SortKeyOp {
        c.range().unwrap().op.clone()
    }

    /// The chain renders what the prefix primitives do, component by component.
    #[test]
    fn fields_follow_the_template() {
        assert_eq!(op(Row::sk().into()), SortKeyOp::BeginsWith("N#".into()));
        assert_eq!(
            op(Row::sk().name().eq("b").into()),
            SortKeyOp::BeginsWith("N#b#".into())
        );
        assert_eq!(
            op(Row::sk().name().eq("b").n().eq(7u32).into()),
            SortKeyOp::Eq("N#b#0000000007".into())
        );
        // A followed component: whole components, `[v#, v$]`.
        assert_eq!(
            op(Row::sk().name().le("b")),
            SortKeyOp::Between("N#".into(), "N#b$".into())
        );
        assert_eq!(
            op(Row::sk().name().between("a", "b")),
            SortKeyOp::Between("N#a#".into(), "N#b$".into())
        );
        // The last component: a strict bound leaves the equal key out after the read.
        let lt = Row::sk().name().eq("b").n().lt(7u32);
        let range = lt.range().unwrap();
        assert_eq!(range.exclude.as_deref(), Some("N#b#0000000007"));
        assert_eq!(
            op(Row::sk().name().starts_with("J#")),
            SortKeyOp::BeginsWith("N#J%23".into())
        );
        assert_eq!(
            op(Row::sk().name().eq("b").n().ge(3u32)),
            SortKeyOp::Between("N#b#0000000003".into(), "N#b$".into())
        );
        assert_eq!(
            op(Row::sk().name().gt("b")),
            SortKeyOp::Between("N#b$".into(), "N$".into())
        );
    }

    /// A format of one's own whose text does not sort like its values.
    struct Scrambled;

    impl crate::key::format::KeyFormat<u32> for Scrambled {
        const NAME: &'static str = "scrambled";
        const ESCAPING: crate::key::format::Escaping = crate::key::format::Escaping::None;
        const ORDERED: bool = false;
        const ATTRIBUTE: crate::key::format::AttributeForm =
            crate::key::format::AttributeForm::Text;

        fn encode(value: &u32, out: &mut String) -> Result<(), crate::error::KeyError> {
            out.push_str(&value.reverse_bits().to_string());
            Ok(())
        }

        fn decode(component: &str) -> Result<u32, crate::error::KeyError> {
            component
                .parse::<u32>()
                .map(u32::reverse_bits)
                .map_err(|_| crate::error::KeyError::Malformed {
                    type_name: "scrambled",
                    input: component.to_owned(),
                    reason: "not a number",
                })
        }
    }

    #[derive(Table)]
    #[dynamo(pk = "PK", sk = "SK", gsi(name = "ByDay", pk = ["owner"], sk = ["day", "n:N"]))]
    struct Multi;

    #[derive(crate::Entity, Debug)]
    #[dynamo(table = Multi, pk = "T#{owner}", sk = "T#{day}#{n}",
             index(ByDay, pk = [owner], sk = [day, n]))]
    struct Task {
        owner: String,
        #[dynamo(key_format = Scrambled)]
        day: u32,
        n: u32,
    }

    /// A range on a multi-attribute index key attribute whose stored text does not sort
    /// like its values is refused, as on a sort-key template's part; equality is not, and
    /// neither is a range on the next attribute, whose order is its own.
    #[test]
    fn a_range_on_an_unordered_multi_attribute_key_attribute_is_refused() {
        let unordered = |c: AttributeCondition<Task, _>| {
            matches!(
                c.range,
                Err(crate::error::KeyError::Unordered { operator, .. }) if !operator.is_empty()
            )
        };
        assert!(unordered(Task::by_day_sk().day().lt(3u32)));
        assert!(unordered(Task::by_day_sk().day().ge(3u32)));
        assert!(unordered(Task::by_day_sk().day().between(1u32, 3u32)));
        let fixed = Task::by_day_sk().day().eq(3u32).n().lt(9u32);
        assert!(fixed.range.is_ok(), "{:?}", fixed.range);
    }
}
