//! Insight from the client: hot partitions and what reads cost, seen by the crate.

// The hot-partition tracker built on it lands next.
#[allow(dead_code)]
mod sketch;
