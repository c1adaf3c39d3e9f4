//! A formatted field takes its plain value: conversions into [`Formatted`] and
//! [`FormattedOption`], and the [`Operand`] impls conditions, key conditions and updates
//! accept.

use super::{Formatted, FormattedOption};
use crate::codec::Operand;

impl<T, F> From<T> for Formatted<T, F> {
    fn from(value: T) -> Self {
        Formatted::new(value)
    }
}

impl<T, F> From<Option<T>> for FormattedOption<T, F> {
    fn from(value: Option<T>) -> Self {
        FormattedOption::new(value)
    }
}

/// A formatted field's operand is its plain value.
impl<T, F> Operand<Formatted<T, F>> for T {
    #[inline]
    fn into_operand(self) -> Formatted<T, F> {
        Formatted::new(self)
    }
}

impl<T: Clone, F> Operand<Formatted<T, F>> for &T {
    #[inline]
    fn into_operand(self) -> Formatted<T, F> {
        Formatted::new(self.clone())
    }
}

/// A formatted `String` field also takes a `&str`.
impl<F> Operand<Formatted<String, F>> for &str {
    #[inline]
    fn into_operand(self) -> Formatted<String, F> {
        Formatted::new(self.to_owned())
    }
}

/// An optional formatted field takes an `Option` of its plain value, or a present value.
impl<T, F> Operand<FormattedOption<T, F>> for Option<T> {
    #[inline]
    fn into_operand(self) -> FormattedOption<T, F> {
        FormattedOption::new(self)
    }
}

impl<T, F> Operand<FormattedOption<T, F>> for T {
    #[inline]
    fn into_operand(self) -> FormattedOption<T, F> {
        FormattedOption::new(Some(self))
    }
}

impl<T: Clone, F> Operand<FormattedOption<T, F>> for &T {
    #[inline]
    fn into_operand(self) -> FormattedOption<T, F> {
        FormattedOption::new(Some(self.clone()))
    }
}

impl<F> Operand<FormattedOption<String, F>> for &str {
    #[inline]
    fn into_operand(self) -> FormattedOption<String, F> {
        FormattedOption::new(Some(self.to_owned()))
    }
}
