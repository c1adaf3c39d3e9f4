//! One placeholder's value, as a key template renders it: the [`Part`] that
//! [`KeyPart::__field`] and [`OptionalKeyPart::__present`] return to the generated code.
//! It lives with those traits, below the renderer (`key::render`), which takes any
//! [`RenderPart`] and makes the parts of computed placeholders.

use super::{KeyError, KeyPart, OptionalKeyPart};
use crate::key::Delimiter;

/// The value of one placeholder, as a template renders it.
pub trait RenderPart {
    /// Appends the part to `out`, in a key whose components `delimiter` separates;
    /// `Ok(false)` (nothing appended) when the value is absent, which leaves an item out
    /// of a sparse index.
    fn render_part(&self, delimiter: Delimiter, out: &mut String) -> Result<bool, KeyError>;
}

/// One placeholder's value and how to render it (made by [`field`], [`present`], or the
/// renderer's `formatted_present`, `arg`, `random`, `bucket`, `bucket_of` and
/// `present_bucket`).
pub struct Part<'a, T: ?Sized> {
    pub(in crate::key) value: &'a T,
    pub(in crate::key) count: u16,
    pub(in crate::key) render: fn(&T, u16, Delimiter, &mut String) -> Result<bool, KeyError>,
}

impl<T: ?Sized> RenderPart for Part<'_, T> {
    fn render_part(&self, delimiter: Delimiter, out: &mut String) -> Result<bool, KeyError> {
        (self.render)(self.value, self.count, delimiter, out)
    }
}

/// A part rendered by `render` (a function of the value alone).
pub(in crate::key) fn part<T: ?Sized>(
    value: &T,
    render: fn(&T, u16, Delimiter, &mut String) -> Result<bool, KeyError>,
) -> Part<'_, T> {
    Part {
        value,
        count: 0,
        render,
    }
}

/// A key field of the item: its own encoding.
pub fn field<T: KeyPart>(value: &T) -> Part<'_, T> {
    part(value, |v, _, d, out| {
        v.encode_key_with(d, out).map(|()| true)
    })
}

/// An index key field of the item, which may be absent (an `Option`: a sparse index).
pub fn present<T: OptionalKeyPart>(value: &T) -> Part<'_, T> {
    part(value, |v, _, d, out| v.encode_optional_key(d, out))
}
