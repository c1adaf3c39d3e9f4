//! The entity an item belongs to, as the helpers of generated code name it in errors.

use super::Entity;
use crate::Table;

/// The entity an item is read or written as, for errors: its entity type and its
/// table's schema (which names the item's key). Not generic, so what the helpers of
/// generated code do besides encoding and decoding values is compiled once, not once per
/// entity.
#[derive(Debug, Clone, Copy)]
pub struct Owner {
    /// The entity type.
    pub entity: &'static str,
    /// The schema of the entity's table.
    pub schema: &'static crate::TableSchema,
    /// Whether the entity's items carry the entity-type attribute when the crate writes
    /// them.
    pub writes_type: bool,
}

impl Owner {
    /// The owner of entity `E`'s items.
    #[inline]
    pub fn of<E: Entity>() -> Owner {
        Owner {
            entity: E::ENTITY_TYPE,
            schema: &<E::Table as Table>::SCHEMA,
            writes_type: E::__WRITES_ENTITY_TYPE,
        }
    }
}
