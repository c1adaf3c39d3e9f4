//! What a read of the table or of one of its indexes carries back, shared by queries and
//! scans: the key attributes of its items and cursors, the refusal of a read the index's
//! projection cannot answer, and the `ProjectionExpression` of a partial view.
//!
//! A global index holds only what its projection names (`KEYS_ONLY`, `INCLUDE`, `ALL`), and
//! a read of a GSI cannot fetch the rest from the table. A read whose decoding needs an
//! attribute the index lacks would pay for items that all fail to decode (or decode with
//! fields silently absent), so it is refused before anything is sent, naming the attribute,
//! the index and the change that makes the read possible.

use crate::collection::Target;
use crate::expr::{Node, Placeholders};
use crate::request::page::entity_type_filter;
use crate::schema::{IndexKind, IndexSchema, Projection};
use crate::{Error, Table, ValidationReason};

/// The key attributes of the table or index read.
pub(crate) struct KeyNames {
    /// The partition key's attributes (several for a multi-attribute GSI key).
    pub(crate) pk: Vec<&'static str>,
    /// The sort key's attributes, in key order (several for a multi-attribute key): the
    /// order of a partition's items.
    pub(crate) sk: Vec<&'static str>,
    /// Every attribute of `LastEvaluatedKey` (table key plus index key).
    pub(crate) cursor: Vec<&'static str>,
}

impl KeyNames {
    /// The key attributes of `index` of table `X` (the table itself when `None`).
    pub(crate) fn of<X: Table>(index: Option<&'static IndexSchema>) -> Self {
        let schema = &X::SCHEMA;
        let table_keys = std::iter::once(schema.pk.name).chain(schema.sk.map(|a| a.name));
        let names = |attrs: &[crate::schema::KeyAttribute]| attrs.iter().map(|a| a.name).collect();
        let Some(index) = index else {
            return KeyNames {
                pk: vec![schema.pk.name],
                sk: schema.sk.map(|a| a.name).into_iter().collect(),
                cursor: table_keys.collect(),
            };
        };
        let pk = match index.kind {
            IndexKind::Local => vec![schema.pk.name],
            IndexKind::Global => names(index.pk),
        };
        let mut cursor: Vec<&'static str> = table_keys.collect();
        for name in index.pk.iter().chain(index.sk).map(|a| a.name) {
            if !cursor.contains(&name) {
                cursor.push(name);
            }
        }
        KeyNames {
            pk,
            sk: names(index.sk),
            cursor,
        }
    }
}

/// Whether the items read from `index` (the table when `None`) carry `attribute` (a table
/// read carries everything; `None`: an attribute the table does not have).
pub(crate) fn projects(index: Option<&IndexSchema>, attribute: Option<&str>) -> bool {
    match (index.map(|i| i.projection), attribute) {
        (None | Some(Projection::All), _) => true,
        (_, None) => false,
        (Some(Projection::KeysOnly), _) => false,
        (Some(Projection::Include(attrs)), Some(a)) => attrs.contains(&a),
    }
}

/// The server-side entity-type filter of a read of `T` from `index`: none when the index
/// does not project the entity-type attribute (a filter on it would drop every item).
pub(crate) fn type_filter<T: Target>(index: Option<&IndexSchema>) -> Option<Node> {
    let entity_type = <T::Table as Table>::SCHEMA.entity_type;
    projects(index, Some(entity_type)).then(entity_type_filter::<T>)
}

/// What decoding `T` needs that an `INCLUDE` index does not project.
struct Unprojected {
    /// The entity-type attribute, which recognises `T`'s items (needed unless `T` is
    /// identified by its keys).
    entity_type: Option<&'static str>,
    /// Stored fields of `T` (of the view `view`, when one is read).
    fields: Vec<&'static str>,
}

/// What reading `T` (through `view`, the attributes of a partial view) from global index
/// `index` needs that the index does not project; `None` when nothing is missing. (A local
/// index fetches what it does not project from the table, so nothing is missing there.)
fn unprojected<T: Target>(
    index: &IndexSchema,
    view: Option<&'static [&'static str]>,
    keys: &[&'static str],
) -> Option<Unprojected> {
    let Projection::Include(included) = index.projection else {
        return None;
    };
    if T::IS_KEYS || index.kind == IndexKind::Local {
        return None;
    }
    let has = |attribute: &&str| included.contains(attribute) || keys.contains(attribute);
    let entity_type = <T::Table as Table>::SCHEMA.entity_type;
    // An entity identified by its keys recognises its items without the attribute (its
    // table keys are in every index); a collection dispatches on it.
    let needs_type = T::IS_COLLECTION || !T::IDENTIFIED_BY_KEYS;
    let entity_type = (needs_type && !has(&entity_type)).then_some(entity_type);
    let wanted: Vec<&'static str> = match view {
        Some(view) => view.to_vec(),
        None => T::MEMBER_ATTRIBUTES.concat(),
    };
    let mut fields: Vec<&'static str> = Vec::new();
    for attribute in wanted {
        if !has(&attribute) && !fields.contains(&attribute) && Some(attribute) != entity_type {
            fields.push(attribute);
        }
    }
    (entity_type.is_some() || !fields.is_empty()).then_some(Unprojected {
        entity_type,
        fields,
    })
}

/// Refuses a read of `T` from `index` (through the partial view `view`, when one is read)
/// that the index's projection cannot answer: a `KEYS_ONLY` index read for whole items, or
/// an `INCLUDE` index lacking an attribute decoding needs.
pub(crate) fn check_projection<T: Target>(
    index: Option<&'static IndexSchema>,
    view: Option<&'static [&'static str]>,
) -> Result<(), Error> {
    let Some(index) = index else {
        return Ok(());
    };
    let refuse = |message: String| {
        Err(Error::invalid(
            T::NAME,
            ValidationReason::IndexProjection,
            message,
        ))
    };
    if index.projection == Projection::KeysOnly && !T::IS_COLLECTION && !T::IS_KEYS {
        return refuse(format!(
            "index `{}` projects only keys: read it with .keys_only(), or .keys_only().hydrate(..) for whole items",
            index.name
        ));
    }
    let keys = KeyNames::of::<T::Table>(Some(index)).cursor;
    let Some(missing) = unprojected::<T>(index, view, &keys) else {
        return Ok(());
    };
    let listed = |names: &[&str]| names.join("`, `");
    let name = index.name;
    let fields = if missing.fields.is_empty() {
        String::new()
    } else {
        let fix = match view {
            Some(_) => "leave them out of the view".to_owned(),
            None => "read a view of the projected attributes (.project::<View>())".to_owned(),
        };
        format!(
            "index `{name}` does not project `{}`, which reading {} needs: {fix}, add them to the index's projection, or read .keys_only().hydrate(..) for whole items",
            listed(&missing.fields),
            T::NAME
        )
    };
    let entity_type = missing.entity_type.map(|attribute| {
        let who = if view.is_some() { "the view" } else { "the entity" };
        format!(
            "index `{name}` does not project the entity-type attribute `{attribute}`, which recognises the items of {}: declare {who} `identify = \"keys\"` (its items are then recognised by their keys), or add `{attribute}` to the index's projection",
            T::NAME
        )
    });
    let message = match entity_type {
        Some(entity_type) if fields.is_empty() => entity_type,
        Some(entity_type) => format!("{entity_type}; {fields}"),
        None => fields,
    };
    refuse(message)
}

/// Refuses options a read of `index` cannot honour: a strongly consistent read of a GSI,
/// or `exclude_expired` on an index that does not project the TTL attribute.
pub(crate) fn check_options<T: Target>(
    index: Option<&'static IndexSchema>,
    consistent: bool,
    exclude_expired: bool,
) -> Result<(), Error> {
    if consistent && matches!(index, Some(i) if i.kind == IndexKind::Global) {
        return Err(Error::invalid(
            T::NAME,
            ValidationReason::ConsistentIndexRead,
            "a GSI supports only eventually consistent reads",
        ));
    }
    if exclude_expired && !projects(index, <T::Table as Table>::SCHEMA.ttl) {
        return Err(Error::invalid(
            T::NAME,
            ValidationReason::IndexProjection,
            "exclude_expired on an index that does not project the TTL attribute would exclude nothing",
        ));
    }
    Ok(())
}

/// The `ProjectionExpression` of a partial view's attributes `view`, plus what every read
/// needs: the entity type (decoding checks it, where `index` projects it) and the key
/// attributes `keys` (cursors continue from them).
pub(crate) fn view_expression<X: Table>(
    p: &mut Placeholders,
    index: Option<&IndexSchema>,
    view: Option<&'static [&'static str]>,
    keys: &[&'static str],
) -> Option<String> {
    let view = view?;
    let mut wanted: Vec<&'static str> = view.to_vec();
    let entity_type = X::SCHEMA.entity_type;
    if projects(index, Some(entity_type)) {
        wanted.push(entity_type);
    }
    wanted.extend(keys.iter().copied());
    let mut seen = std::collections::HashSet::new();
    wanted.retain(|a| seen.insert(*a));
    Some(p.projection(wanted))
}
