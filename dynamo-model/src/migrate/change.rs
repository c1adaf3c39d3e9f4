//! What a migration's changes make of an item: which items are the migration's, the item as the
//! steps leave it, and the attributes that differ.

use super::{
    MIGRATIONS_ATTRIBUTE, PlannedChange, Step, refuse_two_values, renders_index_key, same_item,
    same_value,
};
use crate::collection::{Decoded, Target};
use crate::{DecodeError, Entity, Error, Item, RawKey, Table, ValidationReason};
use aws_sdk_dynamodb::types::AttributeValue;

/// A migration's changes, as a job applies them to each item: its steps, its name and
/// whether items record the migrations applied to them.
pub(super) struct Changes<'a, E: Entity> {
    pub(super) name: &'a str,
    pub(super) steps: &'a [Step<E>],
    pub(super) marker: bool,
}

/// Whether `item` is one of `E`'s items (not another entity's, not a revision, not a
/// chunk item), by its entity type or, for an entity identified by its keys, its keys.
pub(super) fn is_ours<E: Entity>(item: &Item) -> bool {
    let schema = &<E::Table as Table>::SCHEMA;
    let Some(key) = crate::schema::raw_key_of(schema, item) else {
        return false;
    };
    if crate::chunk::is_chunk_key(&key)
        || crate::unique::is_sentinel_key(&key)
        || crate::registry::is_revision::<E::Table>(item)
    {
        return false;
    }
    match item.get(schema.entity_type) {
        Some(AttributeValue::S(found)) => found == E::ENTITY_TYPE,
        Some(_) => false,
        None => {
            E::__IDENTIFY_BY_KEYS
                && crate::registry::identified_by_key::<E::Table>(&key).contains(&E::ENTITY_TYPE)
        }
    }
}

impl<E: Entity> Changes<'_, E> {
    pub(super) fn holds_marker(&self, item: &Item) -> bool {
        matches!(item.get(MIGRATIONS_ATTRIBUTE), Some(AttributeValue::Ss(names)) if names.iter().any(|n| n == self.name))
    }

    /// The item as the changes leave it (`Ok(None)`: unchanged).
    pub(super) fn apply(&self, item: &Item) -> Result<Option<Item>, Error> {
        let mut current = item.clone();
        let mut mapped = false;
        for step in self.steps {
            match step {
                Step::Rewrite | Step::Map(_) => {
                    if let Some(written) = rewrite(&current, step)? {
                        mapped |= matches!(step, Step::Map(_));
                        current = written;
                    }
                }
                Step::Rename { from, to } => rename::<E>(&mut current, from, to)?,
                Step::Default { attribute, value } => {
                    current
                        .entry(attribute.clone())
                        .or_insert_with(|| value.clone());
                }
                Step::Remove { attribute } => {
                    current.remove(attribute.as_str());
                }
            }
        }
        if same_item(&current, item) {
            return Ok(None);
        }
        keeps_unique_values::<E>(item, &current)?;
        if mapped {
            next_version::<E>(item, &mut current)?;
        }
        if self.marker {
            self.mark(&mut current)?;
        }
        crate::size::check_item_size::<E>(&current)?;
        Ok(Some(current))
    }

    /// Adds the migration's name to the item's set of migrations applied.
    fn mark(&self, current: &mut Item) -> Result<(), Error> {
        let mut names = match current.remove(MIGRATIONS_ATTRIBUTE) {
            Some(AttributeValue::Ss(names)) => names,
            None => Vec::new(),
            // Another program's value under the marker's name: not replaced.
            Some(other) => {
                return Err(Error::invalid(
                    E::ENTITY_TYPE,
                    ValidationReason::InvalidValue,
                    format!(
                        "`{MIGRATIONS_ATTRIBUTE}` holds a {} value, not the string set of migrations: the item is left as it is",
                        crate::codec::type_name(&other)
                    ),
                ));
            }
        };
        if !names.iter().any(|n| n == self.name) {
            names.push(self.name.to_owned());
        }
        current.insert(MIGRATIONS_ATTRIBUTE.to_owned(), AttributeValue::Ss(names));
        Ok(())
    }
}

/// Refuses a change of a unique value (`#[dynamo(unique)]`): a migration writes the item
/// alone, without the sentinels that keep the value unique.
fn keeps_unique_values<E: Entity>(before: &Item, after: &Item) -> Result<(), Error> {
    for constraint in E::__UNIQUE {
        let text = |item| crate::unique::value_text(E::ENTITY_TYPE, constraint, item);
        if text(before)? != text(after)? {
            return Err(Error::invalid(
                E::ENTITY_TYPE,
                ValidationReason::UniqueValue,
                format!(
                    "the change alters the value of unique `{}`, whose sentinel a migration does not move; change it with db.put or db.update",
                    constraint.name
                ),
            ));
        }
    }
    Ok(())
}

/// The item as a rewrite or a map leaves it: decoded as the entity, mapped, and written
/// as the declaration writes it now (`Ok(None)`: the map keeps the item as it is).
fn rewrite<E: Entity>(current: &Item, step: &Step<E>) -> Result<Option<Item>, Error> {
    // A renamed field whose current and older names hold different values: decoding
    // would take one and the write drop the other, so the item is reported and left, as
    // `rename_attribute` does.
    refuse_two_values::<E>(current)?;
    let decoded = decode::<E>(current)?;
    let value = match step {
        Step::Map(f) => match f(decoded) {
            Some(value) => value,
            None => return Ok(None),
        },
        _ => decoded,
    };
    let schema = &<E::Table as Table>::SCHEMA;
    // A migration rewrites what is stored: the update time stays the value's.
    let mut written = crate::entity::write_item(&value, None, None)?;
    // Attributes the entity does not declare stay as they are: those another program
    // writes, the write token (so an application's retried update still recognises its
    // write) and the migrations already applied. The entity's own attributes (older names
    // included), the keys and the index keys are what the declaration writes now, or
    // removed.
    for (name, v) in current {
        let declared = E::ATTRIBUTES.contains(&name.as_str())
            || schema.is_reserved_attribute(name)
            || renders_index_key::<E>(name);
        if !declared && !written.contains_key(name) {
            written.insert(name.clone(), v.clone());
        }
    }
    // The entity's key is where the item is: a change of a key field would write another
    // item and leave this one behind.
    let (before, after) = (
        crate::schema::raw_key_of(schema, current),
        crate::schema::raw_key_of(schema, &written),
    );
    if before != after {
        return Err(Error::invalid(
            E::ENTITY_TYPE,
            ValidationReason::InvalidValue,
            "the change moves the item to another key; a migration changes items in place",
        ));
    }
    Ok(Some(written))
}

/// The item decoded as the entity, for a rewrite or a map.
fn decode<E: Entity>(current: &Item) -> Result<E, Error> {
    // Index keys rendered from templates are written again from the fields: keys a
    // template wrote before it changed (or that a now-absent field left behind) must not
    // stop the decode.
    let schema = &<E::Table as Table>::SCHEMA;
    let mut readable = current.clone();
    // A migration has no keys: an entity with encrypted fields is refused (NoKeys), never
    // rewritten with its ciphertexts read as values.
    crate::encrypt::open_item(None, crate::entity::fields::<E>(), &mut readable)?;
    readable.retain(|name, _| {
        !schema.is_index_key_attribute(name)
            || E::ATTRIBUTES.contains(&name.as_str())
            || name == schema.pk.name
            || schema.sk.is_some_and(|sk| sk.name == name)
    });
    // A field held only by an index key (another program writes no plain attribute for
    // it) is read from that key: when the item does not decode without its index keys, it
    // is decoded with them.
    let decoded = match <E as Target>::decode(readable) {
        Err(_) if current.keys().any(|n| schema.is_index_key_attribute(n)) => {
            <E as Target>::decode(current.clone())
        }
        other => other,
    };
    match decoded {
        Ok(Decoded::Item(value)) => Ok(value),
        Ok(Decoded::Unknown(found)) => Err(Error::Decode(DecodeError {
            entity: E::ENTITY_TYPE,
            key: crate::schema::describe_item_key(schema, current),
            attribute: None,
            kind: crate::DecodeErrorKind::WrongEntityType {
                expected: E::ENTITY_TYPE,
                found,
            },
        })),
        Err(e) => Err(Error::Decode(e)),
    }
}

/// `rename_attribute(from, to)` on the item.
fn rename<E: Entity>(current: &mut Item, from: &str, to: &str) -> Result<(), Error> {
    let Some(value) = current.remove(from) else {
        return Ok(());
    };
    match current.get(to) {
        // Both names hold one value (a write of the new program after a copy): the older
        // name goes.
        Some(existing) if same_value(existing, &value) => {}
        // Two different values: which one is right is the user's call, and removing
        // either would lose data.
        Some(_) => {
            return Err(Error::invalid(
                E::ENTITY_TYPE,
                ValidationReason::RenamedField,
                format!(
                    "the item holds different values under `{from}` and `{to}`: the rename would lose one of them, so the item is left as it is"
                ),
            ));
        }
        None => {
            current.insert(to.to_owned(), value);
        }
    }
    Ok(())
}

/// A map changes the item's data: a versioned entity's version moves on, so that an
/// application write based on a read from before the migration conflicts rather than
/// undoing it. (A rewrite, rename or default changes the stored form only, which such a
/// write renders again.)
fn next_version<E: Entity>(item: &Item, current: &mut Item) -> Result<(), Error> {
    let Some(attribute) = E::VERSION else {
        return Ok(());
    };
    let version = |i: &Item| match i.get(attribute) {
        Some(AttributeValue::N(n)) => n.parse::<u64>().ok(),
        _ => None,
    };
    if let Some(read) = version(item)
        && version(current) == Some(read)
    {
        let next = read.checked_add(1).ok_or_else(|| {
            Error::invalid(
                E::ENTITY_TYPE,
                ValidationReason::VersionOverflow,
                "the version cannot be incremented any further",
            )
        })?;
        current.insert(attribute.to_owned(), AttributeValue::N(next.to_string()));
    }
    Ok(())
}

pub(super) fn plan(key: RawKey, before: &Item, after: &Item) -> PlannedChange {
    let (set, removed) = diff(before, after);
    PlannedChange {
        key,
        set: set.into_iter().map(|(name, _)| name.clone()).collect(),
        removed: removed.into_iter().cloned().collect(),
    }
}

/// What turns `before` into `after`: the attributes to set (new or with another value),
/// and those to remove, each sorted by name.
pub(super) fn diff<'a>(
    before: &'a Item,
    after: &'a Item,
) -> (Vec<(&'a String, &'a AttributeValue)>, Vec<&'a String>) {
    let mut set: Vec<(&String, &AttributeValue)> = after
        .iter()
        .filter(|(name, value)| !before.get(*name).is_some_and(|b| same_value(b, value)))
        .collect();
    set.sort_by(|a, b| a.0.cmp(b.0));
    let mut removed: Vec<&String> = before
        .keys()
        .filter(|name| !after.contains_key(*name))
        .collect();
    removed.sort();
    (set, removed)
}
