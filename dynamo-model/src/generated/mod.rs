//! What `#[derive(Entity)]` generates calls into. Not a public API: the names and
//! signatures change with the derive.
//!
//! The generated code declares each key template once, as a [`KeyTemplate`] constant, and
//! derives from it every descriptor the runtime reads keys back with (decoding a field from
//! the key, re-rendering an index key in an update), instead of repeating the template's
//! parts in each of them.

pub mod assert;
mod template;

pub use template::KeyTemplate;
