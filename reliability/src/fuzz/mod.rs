//! Fuzz targets: every decoder of bytes from outside the process, as a function that takes
//! any bytes and panics only when a property of the decoder fails (a finding). The AFL
//! binaries of `reliability/fuzz` wrap them; the corpora they keep are replayed here as
//! unit tests (`replay`). See RELIABILITY.md, "Fuzzing".

mod checkpoint;
mod cursor;
pub mod entities;
pub mod input;
mod items;
#[cfg(test)]
mod replay;
pub mod seeds;
mod stream;

pub use checkpoint::checkpoint;
pub use cursor::cursor;
pub use items::{chunk, compress, item, keys};
pub use stream::stream;

/// A fuzz target: takes any bytes.
pub type Target = fn(&[u8]);

/// Every target by name (the name of its AFL binary and of its corpus folder).
pub const TARGETS: &[(&str, Target)] = &[
    ("cursor", cursor),
    ("item", item),
    ("keys", keys),
    ("chunk", chunk),
    ("compress", compress),
    ("stream", stream),
    ("checkpoint", checkpoint),
];
