//! What the crate writes besides the entity's own attributes (`write_type = false`,
//! `write_token = false`): what the entity's own declaration can tell. What needs the
//! table's declaration (its `identify = "keys"`, its own options) is a `const` assertion
//! (`expand::entity::checks`).

use super::EntityModel;
use crate::ctxt::Ctxt;

/// A `#[dynamo(history)]` entity keeps both: its revisions are written with the write
/// token (which settles a lost response of the transaction's latest copy) and read by type.
pub(crate) fn check_footprint(cx: &mut Ctxt, model: &EntityModel) {
    if model.versioned.is_none() {
        return;
    }
    for (lit, what) in [
        (&model.no_write_type, "entity-type attribute"),
        (&model.no_write_token, "write token"),
    ] {
        if let Some(lit) = lit {
            cx.error_spanned_by(
                lit,
                format!("a #[dynamo(history)] entity's writes keep the {what}: its revisions are settled and told apart by it"),
            );
        }
    }
}
