//! An entity's registration ([`crate::registry`]) from what its traits say, for the code
//! `#[derive(Entity)]` generates: it gives only what its traits do not.

use super::{Entity, EntityInternals};
use crate::key::template::KeyTemplate;
use crate::registry::{AttributeTypes, EntityRegistration, IndexTemplates, RegisteredKey};

/// The registration of entity `E` (Rust name `type_name`): its primary-key templates
/// (which recognise its keys and give their text to exports), its index templates as
/// written (for exports), its attributes' types and whether it has a TTL field; the rest
/// from `E`'s traits.
pub const fn registration<E: Entity>(
    type_name: &'static str,
    pk: KeyTemplate,
    sk: Option<KeyTemplate>,
    index_templates: &'static [IndexTemplates],
    attribute_types: AttributeTypes,
    ttl: bool,
) -> EntityRegistration {
    let (pk_template, sk_template) = match sk {
        Some(sk) => (pk.text, Some(sk.text)),
        None => (pk.text, None),
    };
    EntityRegistration {
        table: std::any::TypeId::of::<E::Table>,
        entity_type: E::ENTITY_TYPE,
        type_name,
        pk: RegisteredKey::new(pk),
        sk: match sk {
            Some(sk) => Some(RegisteredKey::new(sk)),
            None => None,
        },
        versioned: E::VERSION.is_some(),
        unique: !<E as EntityInternals>::__UNIQUE.is_empty(),
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
