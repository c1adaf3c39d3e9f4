//! Why the operations of a cancelled transaction failed: DynamoDB's cancellation codes,
//! in words.

use super::shown;
use crate::Item;

/// Why one operation of a cancelled transaction failed (DynamoDB's cancellation codes).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CancelReason {
    /// Its condition (or the crate's entity-type or version guard) was false.
    ConditionalCheckFailed,
    /// The operation needs an existing item (an update that is not an
    /// [`upsert`](dynamo_model::item::Update::upsert), a condition check, a delete with
    /// `must_exist`) and there is none under its key: DynamoDB's code is
    /// `ConditionalCheckFailed`, with no current item. The transaction counterpart of
    /// [`Error::NotFound`](super::Error::NotFound).
    NotFound,
    /// An item of another entity type (named) is stored under the operation's key: the
    /// crate's entity-type guard refused it. The transaction counterpart of
    /// [`Error::OtherEntityStored`](super::Error::OtherEntityStored).
    OtherEntityStored(String),
    /// Another transaction was in progress on the item.
    TransactionConflict,
    /// Provisioned throughput exceeded.
    ProvisionedThroughputExceeded,
    /// On-demand or GSI throttling.
    ThrottlingError,
    /// An LSI item collection would exceed 10 GB.
    ItemCollectionSizeLimitExceeded,
    /// The operation is invalid (size, types, ...).
    ValidationError,
    /// Any other code DynamoDB returns.
    Other(String),
}

impl CancelReason {
    pub(crate) fn from_code(code: &str) -> Self {
        match code {
            "ConditionalCheckFailed" => CancelReason::ConditionalCheckFailed,
            "TransactionConflict" => CancelReason::TransactionConflict,
            "ProvisionedThroughputExceeded" => CancelReason::ProvisionedThroughputExceeded,
            "ThrottlingError" => CancelReason::ThrottlingError,
            "ItemCollectionSizeLimitExceeded" => CancelReason::ItemCollectionSizeLimitExceeded,
            "ValidationError" => CancelReason::ValidationError,
            other => CancelReason::Other(other.to_owned()),
        }
    }

    /// Worth retrying the same transaction for.
    pub(crate) fn transient(&self) -> bool {
        matches!(
            self,
            CancelReason::TransactionConflict
                | CancelReason::ProvisionedThroughputExceeded
                | CancelReason::ThrottlingError
        )
    }
}

/// One failed operation of a cancelled transaction.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CancelledOperation {
    /// Position of the operation in the transaction (0-based, in the order added).
    pub index: usize,
    /// Entity type of the operation.
    pub entity: &'static str,
    /// The item's key, as `PK=..., SK=...`.
    pub key: String,
    /// Why it failed.
    pub reason: CancelReason,
    /// DynamoDB's message, when it gave one.
    pub message: Option<String>,
    /// The item as stored, when a condition failed and there was one.
    pub current: Option<Box<Item>>,
}

impl std::fmt::Display for CancelReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CancelReason::ConditionalCheckFailed => "its condition failed",
            CancelReason::NotFound => "no item under its key",
            CancelReason::OtherEntityStored(stored) => {
                return write!(f, "an item of entity type {stored} is stored under its key");
            }
            CancelReason::TransactionConflict => "another transaction was in progress on the item",
            CancelReason::ProvisionedThroughputExceeded => "provisioned throughput exceeded",
            CancelReason::ThrottlingError => "throttled",
            CancelReason::ItemCollectionSizeLimitExceeded => {
                "the item collection would exceed 10 GB"
            }
            CancelReason::ValidationError => "DynamoDB refused it as invalid",
            CancelReason::Other(code) => code,
        })
    }
}

pub(super) fn describe_cancellations(ops: &[CancelledOperation]) -> String {
    let parts: Vec<String> = ops
        .iter()
        .map(|o| {
            let mut part = format!(
                "operation {} ({}{}): {}",
                o.index,
                o.entity,
                shown::suffix(" ", &o.key),
                o.reason
            );
            if let Some(message) = &o.message {
                part.push_str(&format!(" ({message})"));
            }
            part
        })
        .collect();
    if parts.is_empty() {
        "no reason given".to_owned()
    } else {
        parts.join("; ")
    }
}
