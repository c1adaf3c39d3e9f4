//! What an explanation takes from observations: the figures of a read shape and the item
//! sizes of an entity type, behind one trait so the plan is computed (and tested) apart
//! from where the figures are kept.

use aws_sdk_dynamodb::operation::query::QueryInput;
use aws_sdk_dynamodb::operation::scan::ScanInput;

/// What was observed of one read shape (every request of one read, on every partition).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Seen {
    /// Requests of the shape.
    pub(crate) calls: u64,
    /// Requests a minute, recently.
    pub(crate) calls_per_minute: f64,
    /// Items DynamoDB read (`ScannedCount`), before any filter.
    pub(crate) items_read: u64,
    /// Items DynamoDB returned (`Count`), after the filter.
    pub(crate) items_returned: u64,
    /// The items returned, by entity type.
    pub(crate) returned_by_type: Vec<(String, u64)>,
}

/// The observed sizes of one entity type's items.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Sizes {
    /// Mean size, in bytes.
    pub(crate) mean: f64,
    /// Items measured.
    pub(crate) samples: u64,
}

/// Where an explanation finds observations.
pub(crate) trait Observations {
    /// What was observed of the read shape of `input`.
    fn query(&self, input: &QueryInput) -> Option<Seen>;
    /// What was observed of the read shape of `input`.
    fn scan(&self, input: &ScanInput) -> Option<Seen>;
    /// The observed sizes of `entity_type`'s items in `table`.
    fn sizes(&self, table: &str, entity_type: &str) -> Option<Sizes>;
}

/// What an [`Insight`](crate::insight::Insight) attached to the `Db` observed.
impl Observations for crate::insight::Insight {
    fn query(&self, input: &QueryInput) -> Option<Seen> {
        self.shape(crate::insight::query_shape(input)).map(seen)
    }

    fn scan(&self, input: &ScanInput) -> Option<Seen> {
        self.shape(crate::insight::scan_shape(input)).map(seen)
    }

    fn sizes(&self, table: &str, entity_type: &str) -> Option<Sizes> {
        self.item_sizes(table, entity_type).map(|s| Sizes {
            mean: s.mean,
            samples: s.samples,
        })
    }
}

fn seen(stats: crate::insight::ShapeStats) -> Seen {
    Seen {
        calls: stats.calls,
        calls_per_minute: stats.calls_per_minute,
        items_read: stats.items_read,
        items_returned: stats.items_returned,
        returned_by_type: stats.returned_by_type,
    }
}
