//! Batch reads and writes that never drop anything.
//!
//! DynamoDB limits a `BatchGetItem` to 100 keys and a `BatchWriteItem` to 25 requests,
//! rejects duplicate keys in one call, and may process only part of a call, returning the
//! rest as `UnprocessedKeys`/`UnprocessedItems` with HTTP 200 — invisible to the SDK's
//! retries. This module chunks, de-duplicates (or refuses duplicates), runs chunks with
//! bounded concurrency, retries the unprocessed part and transient errors with backoff and
//! full jitter until a deadline, and reports whatever is still left instead of dropping it.

/// DynamoDB: at most 100 keys per `BatchGetItem`.
pub const MAX_BATCH_GET: usize = 100;
/// DynamoDB: at most 25 put or delete requests per `BatchWriteItem`.
pub const MAX_BATCH_WRITE: usize = 25;

mod get;
mod write;

pub(crate) use get::read_keys;
pub use get::{BatchGet, BatchGetOutput, BatchGets, Parts};
pub use write::{BatchWrite, BatchWriteOutput, LoadProgress, TableRef, WriteOp};

#[cfg(test)]
mod tests;
