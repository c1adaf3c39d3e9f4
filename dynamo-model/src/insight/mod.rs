//! Insight from the client: hot partitions and what reads cost, seen by the crate.

// The hot-partition tracker built on it lands next.
pub(crate) mod explain;
#[allow(dead_code)]
mod sketch;
pub use explain::{
    Estimate, Explain, Expression, FILTER_KEEPS_AT_LEAST, FREQUENT_READS_PER_MINUTE, Fanout,
    Requests, SizeBasis, Warning,
};
