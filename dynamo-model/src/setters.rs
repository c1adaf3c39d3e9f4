//! `setters!`: a builder's plain option setters, each written as one line under its doc.
//!
//! ```text
//! impl Scan<T> {
//!     setters! {
//!         /// Strongly consistent reads.
//!         consistent() => consistent = true;
//!         /// Stop after `n` matching items.
//!         limit(n: usize) => limit = Some(n);
//!     }
//! }
//! ```
//! expands to `pub fn consistent(mut self) -> Self { self.consistent = true; self }` and
//! `pub fn limit(mut self, n: usize) -> Self { self.limit = Some(n); self }`, each with
//! its doc. A setter that does more than store a value is written out by hand.

/// See the [module documentation](self).
macro_rules! setters {
    ($($(#[$attr:meta])* $name:ident($($arg:ident: $ty:ty),*) => $field:ident = $value:expr;)*) => {
        $(
            $(#[$attr])*
            pub fn $name(mut self, $($arg: $ty),*) -> Self {
                self.$field = $value;
                self
            }
        )*
    };
}
pub(crate) use setters;
