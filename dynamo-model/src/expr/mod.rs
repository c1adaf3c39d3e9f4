//! Typed attribute paths and condition expressions.
//!
//! `#[derive(Entity)]` generates a [`Path`] per field (`Order::fields().total_cents`).
//! Conditions built from them are typed by entity (a `Condition<User>` cannot guard a
//! put of an `Order`) and by value (a `u64` field compares with `u64` values). Every name
//! and value is sent through `#n`/`:v` placeholders, so attributes named like DynamoDB's
//! reserved words (`status`, `name`, `ttl`, `data`, `type`, ...) just work and no value
//! can inject expression syntax.

mod attr_path;
mod build;
mod compressed;
mod computed;
mod condition;
mod encrypted;
pub(crate) mod guard;
mod opaque;
mod operand;
mod path;
mod placeholders;
mod sets;
mod update;

pub use attr_path::{AttrPath, Segment, Step};
pub use compressed::{CompressedComparison, CompressedPath};
pub(crate) use computed::SetNode;
pub use computed::{
    Combined, CombinedOperand, Computed, ComputedOperand, SetOperand, SetValue, list_append,
};
pub(crate) use condition::{CompareOp, Node};
pub use condition::{Condition, SizeOf};
pub use encrypted::{EncryptedComparison, EncryptedPath};
pub(crate) use operand::Term;
pub use operand::{AttributeType, Comparand, PathOperand, SameValue, ValueError, ValueOperand};
pub use path::{
    KeyField, KeyPath, Members, Mutable, NestedPath, Path, SettablePath, UpdatablePath,
};
pub(crate) use placeholders::Placeholders;
pub(crate) use update::UpdateClauses;

use crate::key::format::{Formatted, FormattedOption, KeyFormat};

/// The value types of formatted string fields, `Formatted<String, F>` and
/// `FormattedOption<String, F>`: their paths keep the string operators (`begins_with`,
/// `contains`), which take the plain text and write it in the field's format. Sealed.
pub trait FormattedText: crate::sealed::FormattedText {
    /// The field's format.
    type Format: KeyFormat<String>;

    /// `text` as the field's value, to encode in its format.
    fn text(text: String) -> Formatted<String, Self::Format> {
        Formatted::new(text)
    }
}

impl<F: KeyFormat<String>> crate::sealed::FormattedText for Formatted<String, F> {}
impl<F: KeyFormat<String>> FormattedText for Formatted<String, F> {
    type Format = F;
}
impl<F: KeyFormat<String>> crate::sealed::FormattedText for FormattedOption<String, F> {}
impl<F: KeyFormat<String>> FormattedText for FormattedOption<String, F> {
    type Format = F;
}
