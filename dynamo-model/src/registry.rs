//! The entity types of each table, known at run time: which of them can own a key.
//!
//! Several entity types share one table, and nothing stops two of their key templates from
//! rendering the same key: a `Note` at `sk = "{note_id}"` with `note_id = "PROFILE"` has the
//! key of a `User` at `sk = "PROFILE"`. Single-item writes and transactions carry a
//! condition on the stored item's entity-type attribute, so they never replace or remove an
//! item of another type. `BatchWriteItem` takes no condition expression (DynamoDB rule),
//! so a batch put or delete under such a key would silently replace or remove the other
//! type's item.
//!
//! `#[derive(Entity)]` therefore registers every entity's primary-key templates here (with
//! the [`inventory`] crate, no user code needed), and writes without a type condition —
//! [`Db::batch_write`](crate::Db::batch_write) and [`Db::bulk_load`](crate::Db::bulk_load)
//! — are refused before anything is sent
//! ([`ValidationReason::ForeignKeySpace`]) when
//! a key can also belong to another entity type of the table, or is not one the entity's
//! own templates render. A key belongs to an entity type when its templates can render it:
//! the literal text matches and every field's component decodes strictly with that
//! field's [`KeyPart`](crate::KeyPart).
//!
//! What the registry knows: the entity types compiled into this program and bound to the
//! same [`Table`] type. Items that only another program (or another `Table` type declared
//! over the same physical table) writes are invisible to it; write keys those may share
//! through single-item writes or transactions, whose conditions check the stored type.
//! Entity types with the same entity-type name (a partial view and its entity) are one
//! type: writing through either may replace the other's item, as a single put may.

use crate::key::Delimiter;
use crate::key::template::KeyTemplate;
use crate::schema::raw_key_of;
use crate::{Error, Item, RawKey, Table, ValidationReason};
use aws_sdk_dynamodb::types::AttributeValue;
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::OnceLock;

#[doc(hidden)]
pub use crate::key::template::Accepts;

/// A registered key template: the template the entity renders, whose placeholders each
/// carry the check of their component.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct RegisteredKey {
    /// The template.
    pub template: KeyTemplate,
}

impl RegisteredKey {
    /// The recogniser of `template`'s keys.
    pub const fn new(template: KeyTemplate) -> Self {
        RegisteredKey { template }
    }

    /// Whether `value` is a rendering of the template.
    fn follows(&self, value: &str) -> bool {
        self.template.recognises(value)
    }
}

/// [`Accepts`] of a `shard(COUNT)` or `random(COUNT)` part: any shard of the template
/// (which one the item's fields give is checked when the item is decoded).
#[doc(hidden)]
pub fn accepts_shard<const COUNT: u16>(component: &str, _: Delimiter) -> bool {
    crate::key::computed::parse_shard(component, COUNT).is_some()
}

/// [`Accepts`] of a `date`, `hour` or `month` part: any bucket of type `B`.
#[doc(hidden)]
pub fn accepts_bucket<B: crate::key::computed::TimeBucket>(component: &str, _: Delimiter) -> bool {
    B::decode_key(component).is_ok()
}

/// What `#[derive(Entity)]` registers for each entity.
#[doc(hidden)]
#[derive(Debug)]
pub struct EntityRegistration {
    /// The `TypeId` of the entity's table type.
    pub table: fn() -> TypeId,
    /// The entity-type attribute value.
    pub entity_type: &'static str,
    /// The Rust type, for messages.
    pub type_name: &'static str,
    /// The partition key template.
    pub pk: RegisteredKey,
    /// The sort key template (tables with a sort key).
    pub sk: Option<RegisteredKey>,
    /// Whether the entity has a `#[dynamo(version)]` field: a batch write cannot check it.
    pub versioned: bool,
    /// Whether the entity has unique values (`#[dynamo(unique)]`): a batch write cannot
    /// keep their sentinels.
    pub unique: bool,
    /// Where a `#[dynamo(history)]` entity's sort key holds the revision number: its
    /// stored sort keys are the template's rendering inside this layout.
    pub history: Option<&'static crate::schema::history::HistoryLayout>,
    /// Whether an item without the entity-type attribute is this entity's when its keys
    /// match the templates (`#[dynamo(identify = "keys")]`).
    pub identify_by_keys: bool,
    /// The partition key template as written (for exports).
    pub pk_template: &'static str,
    /// The sort key template as written.
    pub sk_template: Option<&'static str>,
    /// The entity's index templates, as written.
    pub index_templates: &'static [IndexTemplates],
    /// The stored attributes of the entity's fields ([`Entity::ATTRIBUTES`](crate::Entity::ATTRIBUTES)).
    pub attributes: &'static [&'static str],
    /// The attributes the entity's fields are written to (not older names), each with the
    /// DynamoDB type it is stored as (`None` when that depends on the value), for exports.
    pub attribute_types: AttributeTypes,
    /// Whether the entity has a `#[dynamo(ttl)]` field.
    pub ttl: bool,
}

/// The attributes an entity's fields are written to, each with the DynamoDB type it is
/// stored as (`None`: it depends on the value). A function, so a program that never
/// exports a schema runs none of the type probes.
#[doc(hidden)]
pub type AttributeTypes = fn() -> Vec<(&'static str, Option<&'static str>)>;

/// The DynamoDB type a field's Rust type is stored as, found without requiring
/// [`AttrValue`](crate::AttrValue) (a field type without it already has its own error):
/// `(&TypeProbe::<T>::NEW).dynamo_type()` is `T::__DYNAMO_TYPE` when `T: AttrValue`, else
/// `None` (method resolution falls back to [`NoType`] through the extra reference).
#[doc(hidden)]
pub struct TypeProbe<T>(std::marker::PhantomData<fn() -> T>);

impl<T> TypeProbe<T> {
    /// The probe.
    pub const NEW: TypeProbe<T> = TypeProbe(std::marker::PhantomData);
}

/// [`TypeProbe`] of a type that implements [`AttrValue`](crate::AttrValue).
#[doc(hidden)]
pub trait HasType {
    /// The stored type.
    fn dynamo_type(&self) -> Option<&'static str>;
}

impl<T: crate::AttrValue> HasType for TypeProbe<T> {
    fn dynamo_type(&self) -> Option<&'static str> {
        T::__DYNAMO_TYPE
    }
}

/// [`TypeProbe`] of any other type.
#[doc(hidden)]
pub trait NoType {
    /// No known type.
    fn dynamo_type(&self) -> Option<&'static str> {
        None
    }
}

impl<T> NoType for &TypeProbe<T> {}

/// An entity's templates for one index, as written (for exports).
#[derive(Debug, Clone, Copy)]
pub struct IndexTemplates {
    /// The index.
    pub index: &'static str,
    /// The partition key template, or `[attr, ..]` for a key of the entity's own
    /// attributes; `None` when the index uses the table's partition key (an LSI) or is
    /// inverted.
    pub pk: Option<&'static str>,
    /// The sort key template, or `[attr, ..]`.
    pub sk: Option<&'static str>,
    /// Whether the index is the table's keys swapped (no templates).
    pub inverted: bool,
}

impl IndexTemplates {
    /// Index `index`'s templates as written.
    pub const fn new(
        index: &'static str,
        pk: Option<&'static str>,
        sk: Option<&'static str>,
        inverted: bool,
    ) -> Self {
        IndexTemplates {
            index,
            pk,
            sk,
            inverted,
        }
    }
}

/// The entities registered for table `T` (those compiled into this program), in a
/// stable order (by entity type).
pub fn entities_of<T: Table>() -> Vec<&'static EntityRegistration> {
    let mut all: Vec<&'static EntityRegistration> = registered(TypeId::of::<T>()).to_vec();
    all.sort_by_key(|r| (r.entity_type, r.type_name));
    all
}

inventory::collect!(EntityRegistration);

impl EntityRegistration {
    /// Whether this entity's partition-key template can render `pk`.
    pub(crate) fn owns_partition(&self, pk: &str) -> bool {
        self.pk.follows(pk)
    }

    /// Whether this entity's templates can render `key`.
    pub(crate) fn owns(&self, key: &RawKey) -> bool {
        let sk_ok = match (self.sk, key.sk.as_deref()) {
            (Some(template), Some(sk)) => match self.history {
                // The latest copy and every revision: the template inside the layout.
                Some(layout) => layout
                    .parse(sk)
                    .is_some_and(|(_, rest)| template.follows(rest)),
                None => template.follows(sk),
            },
            (None, None) => true,
            _ => false,
        };
        sk_ok && self.pk.follows(&key.pk)
    }
}

/// The registered entities of the table whose type has this `TypeId`.
fn registered(table: TypeId) -> &'static [&'static EntityRegistration] {
    static BY_TABLE: OnceLock<HashMap<TypeId, Vec<&'static EntityRegistration>>> = OnceLock::new();
    BY_TABLE
        .get_or_init(|| {
            let mut by_table: HashMap<TypeId, Vec<&'static EntityRegistration>> = HashMap::new();
            for registration in inventory::iter::<EntityRegistration> {
                by_table
                    .entry((registration.table)())
                    .or_default()
                    .push(registration);
            }
            by_table
        })
        .get(&table)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Whether `item` is a revision (not the latest copy) of a `#[dynamo(history)]` entity
/// of table `T`, by its entity type and sort key. Reads of the entity skip revisions;
/// only its history reads them.
pub(crate) fn is_revision<T: Table>(item: &Item) -> bool {
    let entities = registered(TypeId::of::<T>());
    // Most tables have no versioned entity: one pass over a short list, then nothing.
    if !entities.iter().any(|r| r.history.is_some()) {
        return false;
    }
    let schema = &T::SCHEMA;
    let Some(sk_attr) = schema.sk else {
        return false;
    };
    let Some(AttributeValue::S(sk)) = item.get(sk_attr.name) else {
        return false;
    };
    let revision = |r: &EntityRegistration| {
        r.history
            .is_some_and(|layout| matches!(layout.parse(sk), Some((slot, _)) if slot > 0))
    };
    match item.get(schema.entity_type) {
        Some(AttributeValue::S(found)) => entities
            .iter()
            .any(|r| r.entity_type == found.as_str() && revision(r)),
        // No entity type: a revision of a versioned entity identified by its keys when its
        // templates render the key (another deployment may write that layout untyped).
        None => {
            let Some(key) = crate::schema::raw_key_of(schema, item) else {
                return false;
            };
            entities
                .iter()
                .any(|r| r.identify_by_keys && revision(r) && r.owns(&key))
        }
        Some(_) => false,
    }
}

/// Whether `key` is the key of a revision (not the latest copy) of a
/// `#[dynamo(history)]` entity of table `T` whose entity type is one of `entity_types`,
/// by its templates alone: for records that carry keys but no item (a stream's
/// `KEYS_ONLY` view), where [`is_revision`] has no entity-type attribute to read.
pub(crate) fn is_revision_key<T: Table>(key: &RawKey, entity_types: &[&str]) -> bool {
    let Some(sk) = key.sk.as_deref() else {
        return false;
    };
    registered(TypeId::of::<T>()).iter().any(|r| {
        entity_types.contains(&r.entity_type)
            && r.history
                .is_some_and(|layout| matches!(layout.parse(sk), Some((slot, _)) if slot > 0))
            && r.owns(key)
    })
}

/// The entity types of table `T` (among those compiled into this program) whose
/// primary-key templates can render `key`, each named once.
///
/// More than one means items of several types can be stored under that key; batch
/// writes refuse such keys ([`ValidationReason::ForeignKeySpace`]).
///
/// ```
/// use dynamo_model::{registry, Entity, Table};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Table)]
/// #[dynamo(pk = "PK", sk = "SK")]
/// struct App;
///
/// #[derive(Entity, Serialize, Deserialize)]
/// #[dynamo(table = App, pk = "USER#{user_id}", sk = "PROFILE")]
/// struct User { user_id: String }
///
/// #[derive(Entity, Serialize, Deserialize)]
/// #[dynamo(table = App, pk = "USER#{user_id}", sk = "{note_id}")]
/// struct Note { user_id: String, note_id: String }
///
/// let profile = User::key("u-1").into_raw().unwrap();
/// let mut owners = registry::entity_types_of_key::<App>(&profile);
/// owners.sort();
/// assert_eq!(owners, ["Note", "User"]); // a Note with note_id "PROFILE" has this key
/// ```
pub fn entity_types_of_key<T: Table>(key: &RawKey) -> Vec<&'static str> {
    let mut owners: Vec<&'static str> = Vec::new();
    for registration in registered(TypeId::of::<T>()) {
        if !owners.contains(&registration.entity_type) && registration.owns(key) {
            owners.push(registration.entity_type);
        }
    }
    owners
}

/// The entities of table `T` identified by their keys (`#[dynamo(identify = "keys")]`)
/// whose primary-key templates render `key`, each named once: who an item stored there
/// without the entity-type attribute belongs to (exactly one, or it is ambiguous).
pub fn identified_by_key<T: Table>(key: &RawKey) -> Vec<&'static str> {
    identified_by_key_in(TypeId::of::<T>(), key)
}

/// [`identified_by_key`] of the table whose type has this `TypeId`.
pub(crate) fn identified_by_key_in(table: TypeId, key: &RawKey) -> Vec<&'static str> {
    let mut owners: Vec<&'static str> = Vec::new();
    for registration in registered(table) {
        if registration.identify_by_keys
            && !owners.contains(&registration.entity_type)
            && registration.owns(key)
        {
            owners.push(registration.entity_type);
        }
    }
    owners
}

/// Refuses a batch operation that could replace or remove an item of another entity type:
/// its key must be one its own entity type's templates render and no other type's, and a
/// put's item must be of that type and under that key.
///
/// `item` is the put's item; `None` for a delete.
pub(crate) fn check_unconditional_write<T: Table>(
    entity: &'static str,
    key: &RawKey,
    item: Option<&Item>,
) -> Result<(), Error> {
    let refuse =
        |message: String| Error::invalid(entity, ValidationReason::ForeignKeySpace, message);
    // Chunk items of chunked attributes are the crate's own (`crate::chunk`).
    if crate::chunk::is_chunk_key(key) {
        return Err(refuse(format!(
            "the key {} is in the key space of chunk items, which only the crate writes",
            crate::error::key_text(&format_args!("{key:?}"))
        )));
    }
    if crate::unique::is_sentinel_key(key) {
        return Err(refuse(format!(
            "the key {} is in the key space of unique values' sentinel items, which only the crate writes",
            crate::error::key_text(&format_args!("{key:?}"))
        )));
    }
    let shown = || {
        let schema = &T::SCHEMA;
        let mut shown = format!("{}={}", schema.pk.name, key.pk);
        if let (Some(attr), Some(sk)) = (schema.sk, &key.sk) {
            shown.push_str(&format!(", {}={sk}", attr.name));
        }
        crate::error::key_text(&shown)
    };
    if let Some(item) = item {
        let schema = &T::SCHEMA;
        let typed =
            matches!(item.get(schema.entity_type), Some(AttributeValue::S(t)) if t == entity);
        if !typed || raw_key_of(schema, item).as_ref() != Some(key) {
            return Err(refuse(format!(
                "the item of this put is not an item of {entity} under {}",
                shown()
            )));
        }
    }
    let mut own = false;
    for registration in registered(TypeId::of::<T>()) {
        if !registration.owns(key) {
            continue;
        }
        if registration.entity_type == entity {
            let refused = match (registration.unique, registration.versioned) {
                (true, _) => Some((
                    ValidationReason::UniqueValue,
                    "has unique values, whose sentinel items a batch write cannot keep at",
                    "use put, update or delete",
                )),
                (false, true) => Some((
                    ValidationReason::NotSupportedInBatch,
                    "is versioned: a batch write cannot check the stored version at",
                    "it could overwrite or remove a newer one; use put/delete with if_version, or a transaction",
                )),
                (false, false) => None,
            };
            if let Some((reason, why, instead)) = refused {
                let message = format!("{entity} {why} {}; {instead}", shown());
                return Err(Error::invalid(entity, reason, message));
            }
            own = true;
        } else {
            return Err(refuse(format!(
                "{} is also a key of entity type {} (`{}`), and a batch write cannot check which type is stored there, so it could replace or remove such an item; write it with put/delete or in a transaction, whose conditions check the stored type",
                shown(),
                registration.entity_type,
                registration.type_name
            )));
        }
    }
    if !own {
        return Err(refuse(format!(
            "{} is not a key the templates of {entity} render, so a batch write cannot know which entity type's item it would replace or remove; write it with put/delete or in a transaction, whose conditions check the stored type",
            shown()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::WriteOp;
    use crate::{Entity, Key};
    use serde::{Deserialize, Serialize};

    #[derive(Table)]
    #[dynamo(pk = "PK", sk = "SK")]
    struct App;

    #[derive(Entity, Serialize, Deserialize)]
    #[dynamo(table = App, pk = "USER#{user}", sk = "PROFILE")]
    struct User {
        user: String,
    }

    #[derive(Entity, Serialize, Deserialize)]
    #[dynamo(table = App, pk = "USER#{user}", sk = "{note}")]
    struct Note {
        user: String,
        note: String,
    }

    #[derive(Entity, Serialize, Deserialize)]
    #[dynamo(table = App, pk = "USER#{user}", sk = "ORDER#{day}#{n}")]
    struct Order {
        user: String,
        day: String,
        n: u32,
    }

    /// A view of `Order`: same entity type, so never foreign to it.
    #[derive(Entity, Serialize, Deserialize)]
    #[dynamo(table = App, pk = "USER#{user}", sk = "ORDER#{day}#{n}", entity_type = "Order")]
    struct OrderView {
        user: String,
        day: String,
        n: u32,
    }

    /// Another table: its entities never meet `App`'s.
    #[derive(Table)]
    #[dynamo(pk = "PK", sk = "SK")]
    struct Other;

    #[derive(Entity, Serialize, Deserialize)]
    #[dynamo(table = Other, pk = "USER#{user}", sk = "{anything}")]
    struct Anything {
        user: String,
        anything: String,
    }

    fn raw(pk: &str, sk: &str) -> RawKey {
        RawKey {
            pk: pk.into(),
            sk: Some(sk.into()),
        }
    }

    fn owners(key: &RawKey) -> Vec<&'static str> {
        let mut owners = entity_types_of_key::<App>(key);
        owners.sort_unstable();
        owners
    }

    fn delete<E: Entity>(key: Key<E>) -> WriteOp {
        WriteOp::Delete {
            entity: E::ENTITY_TYPE,
            key: key.into_raw().unwrap(),
            table: None,
        }
    }

    fn reason(result: Result<(), Error>) -> Option<ValidationReason> {
        result.err().and_then(|e| e.validation_reason())
    }

    #[test]
    fn a_key_belongs_to_every_entity_whose_templates_render_it() {
        assert_eq!(owners(&raw("USER#u", "PROFILE")), ["Note", "User"]);
        assert_eq!(owners(&raw("USER#u", "ORDER#2024#0000000007")), ["Order"]);
        // Components decode strictly: a number must have its full width, `#` in a value
        // is escaped, literals match exactly.
        assert_eq!(owners(&raw("USER#u", "ORDER#2024#7")), Vec::<&str>::new());
        assert_eq!(owners(&raw("USER#u", "ORDER")), ["Note"]);
        assert_eq!(owners(&raw("USER#u", "a%23b")), ["Note"]);
        assert_eq!(owners(&raw("USER#u", "a%41b")), Vec::<&str>::new());
        assert_eq!(owners(&raw("USER#u", "a b")), Vec::<&str>::new());
        assert_eq!(owners(&raw("USERS#u", "PROFILE")), Vec::<&str>::new());
        assert_eq!(owners(&raw("USER#u#v", "PROFILE")), Vec::<&str>::new());
        assert_eq!(
            owners(&RawKey {
                pk: "USER#u".into(),
                sk: None
            }),
            Vec::<&str>::new()
        );
        assert_eq!(
            entity_types_of_key::<Other>(&raw("USER#u", "PROFILE")),
            ["Anything"]
        );
    }

    #[test]
    fn batch_operations_into_another_entity_types_key_space_are_refused() {
        let refused = Some(ValidationReason::ForeignKeySpace);
        let check = |op: &WriteOp| match op {
            WriteOp::Put {
                entity, key, item, ..
            } => check_unconditional_write::<App>(entity, key, Some(item)),
            WriteOp::Delete { entity, key, .. } => {
                check_unconditional_write::<App>(entity, key, None)
            }
        };
        assert_eq!(
            reason(check(&delete(Note::key(NoteKey {
                user: "u",
                note: "PROFILE"
            })))),
            refused
        );
        assert_eq!(reason(check(&delete(User::key("u")))), refused);
        assert_eq!(
            reason(check(&delete(Note::key(NoteKey {
                user: "u",
                note: "n-1"
            })))),
            None
        );
        assert_eq!(
            reason(check(&delete(Order::key(OrderKey {
                user: "u",
                day: "d",
                n: 7u32
            })))),
            None
        );
        assert_eq!(
            reason(check(&delete(OrderView::key(OrderViewKey {
                user: "u",
                day: "d",
                n: 7u32
            })))),
            None
        );
        // A crafted key outside the entity's own templates.
        let crafted = Key::<Note>::from_raw(raw("USER#u", "ORDER#d#0000000007"));
        assert_eq!(reason(check(&delete(crafted))), refused);
        // A put whose item is not what the operation says.
        let note = Note {
            user: "u".into(),
            note: "n".into(),
        };
        let mut item = note.to_item().unwrap();
        let put = |item: crate::Item| WriteOp::Put {
            entity: "Note",
            key: raw("USER#u", "n"),
            item,
            table: None,
        };
        assert_eq!(reason(check(&put(item.clone()))), None);
        item.insert("SK".into(), AttributeValue::S("PROFILE".into()));
        assert_eq!(reason(check(&put(item.clone()))), refused);
        item.insert("SK".into(), AttributeValue::S("n".into()));
        item.insert("_type".into(), AttributeValue::S("User".into()));
        assert_eq!(reason(check(&put(item))), refused);
    }
}
