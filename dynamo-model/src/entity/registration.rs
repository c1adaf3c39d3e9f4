//! An entity's registration ([`crate::registry`]) from what its traits say, for the code
//! `#[derive(Entity)]` generates: it gives only what its traits do not.

use super::{Entity, EntityInternals};
use crate::registry::{AttributeTypes, EntityRegistration, IndexTemplates, RegisteredKey};

/// The registration of entity `E` (Rust name `type_name`): its key recognisers, its
/// templates as written (for exports), its attributes' types and whether it has a TTL
/// field; the rest from `E`'s traits.
#[allow(clippy::too_many_arguments)]
pub const fn registration<E: Entity>(
    type_name: &'static str,
    pk: RegisteredKey,
    sk: Option<RegisteredKey>,
    pk_template: &'static str,
    sk_template: Option<&'static str>,
    index_templates: &'static [IndexTemplates],
    attribute_types: AttributeTypes,
    ttl: bool,
) -> EntityRegistration {
    EntityRegistration {
        table: std::any::TypeId::of::<E::Table>,
        entity_type: E::ENTITY_TYPE,
        type_name,
        pk,
        sk,
        versioned: E::VERSION.is_some(),
        history: <E as EntityInternals>::__HISTORY,
        identify_by_keys: E::__IDENTIFY_BY_KEYS,
        pk_template,
        sk_template,
        index_templates,
        attributes: E::ATTRIBUTES,
        attribute_types,
        ttl,
    }
}
