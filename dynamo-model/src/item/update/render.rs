//! The update expression of an [`Update`]: its actions checked, the index keys its
//! changes touch recomputed, and its SET, REMOVE, ADD and DELETE clauses rendered.

use super::{Action, SetFn, Update, aliases_of};
use crate::entity::{IndexChanges, Touch};
use crate::expr::{AttrPath, Placeholders, UpdateClauses, ValueError};
use crate::{Entity, Error};
use aws_sdk_dynamodb::types::AttributeValue;

impl<E: Entity> Update<E> {
    pub(super) fn validate(&self) -> Result<(), Error> {
        if self.actions.is_empty() {
            return Err(Error::invalid(
                E::ENTITY_TYPE,
                crate::ValidationReason::NoOperations,
                "an update needs at least one set, remove or add",
            ));
        }
        // The item an update leaves holds at least the values it sets, so values over
        // DynamoDB's 400 KB item limit on their own would only be refused by the service
        // (a compressed field counts with its compressed bytes). Each top-level name once.
        let mut tops = std::collections::HashSet::new();
        let set_bytes: usize = self
            .actions
            .iter()
            .map(|action| match action {
                Action::Set(path, Ok(value)) | Action::SetFn(path, _, Ok(value)) => {
                    let name = if tops.insert(path.top().to_owned()) {
                        path.top().len()
                    } else {
                        0
                    };
                    name + crate::value_size(value)
                }
                _ => 0,
            })
            .sum();
        let max = crate::MAX_ITEM_BYTES;
        if set_bytes > max {
            return Err(Error::invalid(
                E::ENTITY_TYPE,
                crate::ValidationReason::ItemTooLarge,
                format!(
                    "the update sets {set_bytes} bytes of attributes; DynamoDB allows at most {max} per item"
                ),
            ));
        }
        // An empty value set into an index key attribute (a multi-attribute index key is
        // the entity's own fields) is refused by DynamoDB with the whole request.
        crate::schema::check_index_attributes(
            E::ENTITY_TYPE,
            &<E::Table as crate::Table>::SCHEMA,
            |name| {
                self.actions.iter().find_map(|action| match action {
                    Action::Set(AttrPath::Top(top), Ok(value))
                    | Action::SetFn(AttrPath::Top(top), SetFn::IfNotExists, Ok(value))
                        if *top == name =>
                    {
                        Some(value)
                    }
                    _ => None,
                })
            },
        )?;
        for (i, action) in self.actions.iter().enumerate() {
            let path = action.path();
            // DynamoDB rejects two actions on one path, or on a path and a path inside
            // it ("Two document paths overlap").
            if let Some(other) = self.actions[..i].iter().find(|a| a.path().overlaps(path)) {
                let other = other.path();
                return Err(Error::invalid(
                    E::ENTITY_TYPE,
                    crate::ValidationReason::OverlappingPaths,
                    format!("the update changes `{path}` and `{other}`, which overlap"),
                ));
            }
        }
        Ok(())
    }

    /// Index key attributes to change along with the fields they are rendered from, so
    /// no index key goes stale (the same request: atomically).
    pub(super) fn index_actions(&self) -> Result<Vec<Action>, Error> {
        // A value its key format cannot hold is refused as such, before the index keys it
        // feeds would call the update incomplete.
        for action in &self.actions {
            if let Action::Set(_, Err(e)) = action
                && e.source.is_key()
            {
                return Err(Error::invalid(
                    E::ENTITY_TYPE,
                    crate::ValidationReason::KeyEncoding,
                    format!("value for `{}` cannot be stored: {}", e.path, e.source),
                )
                .caused_by(e.source.clone()));
            }
        }
        let lookup = |attribute: &str| -> Touch<'_> {
            match self.actions.iter().find(|a| a.path().is_top(attribute)) {
                None => Touch::Untouched,
                Some(Action::Set(_, Ok(av))) => Touch::Set(av),
                // An unencodable value is reported by render_actions.
                Some(Action::Set(_, Err(_))) => Touch::Untouched,
                Some(Action::Remove(_)) => Touch::Removed,
                // DynamoDB computes these values: they cannot be rendered into a key here.
                Some(
                    Action::Add(..) | Action::SetFn(..) | Action::Delete(..) | Action::Compute(..),
                ) => Touch::Added,
            }
        };
        let changes = IndexChanges { lookup: &lookup };
        Ok(E::__index_updates(self.key.raw()?, &changes)?
            .into_iter()
            .map(|(attribute, value)| match value {
                Some(v) => Action::Set(attribute.into(), Ok(v)),
                None => Action::Remove(attribute.into()),
            })
            .collect())
    }

    pub(super) fn render_actions(
        &self,
        p: &mut Placeholders,
        index: &[Action],
    ) -> Result<String, Error> {
        let invalid = |e: &ValueError| {
            Error::invalid(
                E::ENTITY_TYPE,
                e.source.validation_reason(),
                format!("value for `{}` cannot be stored: {}", e.path, e.source),
            )
            .caused_by(e.source.clone())
        };
        let mut clauses = UpdateClauses::default();
        // Older names of renamed fields still stored (`#[dynamo(alias = "..")]`): reads
        // fall back to them, so an update that sets or clears the field removes them (a
        // cleared value must not come back), and an increment starts from them.
        let mut stale: Vec<&'static str> = Vec::new();
        for action in self.actions.iter() {
            let aliases = aliases_of::<E>(action.path());
            if aliases.is_empty() {
                continue;
            }
            match action {
                Action::Set(AttrPath::Top(_), _) | Action::Remove(AttrPath::Top(_)) => {}
                Action::Add(path @ AttrPath::Top(_), Ok(value @ AttributeValue::N(_))) => {
                    let n = p.path(path);
                    let mut base = p.value(AttributeValue::N("0".into()));
                    for alias in aliases.iter().rev() {
                        base = format!("if_not_exists({}, {base})", p.path(&AttrPath::Top(alias)));
                    }
                    let v = p.value(value.clone());
                    clauses.set(n.clone(), format!("if_not_exists({n}, {base}) + {v}"));
                }
                _ => {
                    return Err(Error::invalid(
                        E::ENTITY_TYPE,
                        crate::ValidationReason::RenamedField,
                        format!(
                            "`{}` may still be stored under its older name {}: this update would not see that value; rewrite the items first or set the whole field",
                            action.path().top(),
                            aliases
                                .iter()
                                .map(|a| format!("`{a}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                }
            }
            for alias in aliases {
                if !stale.contains(alias) {
                    stale.push(alias);
                }
            }
        }
        for action in self.actions.iter().chain(index) {
            match action {
                // Rendered above, from the field's older names.
                Action::Add(AttrPath::Top(_), Ok(AttributeValue::N(_)))
                    if !aliases_of::<E>(action.path()).is_empty() => {}
                Action::Set(path, value) => {
                    let value = value.as_ref().map_err(invalid)?.clone();
                    clauses.set(p.path(path), p.value(value));
                }
                Action::SetFn(path, f, value) => {
                    let value = value.as_ref().map_err(invalid)?.clone();
                    let (n, v) = (p.path(path), p.value(value));
                    let empty = || AttributeValue::L(Vec::new());
                    let rhs = match f {
                        SetFn::Subtract => format!("{n} - {v}"),
                        SetFn::IfNotExists => format!("if_not_exists({n}, {v})"),
                        SetFn::Append => {
                            format!("list_append(if_not_exists({n}, {}), {v})", p.value(empty()))
                        }
                        SetFn::Prepend => {
                            format!("list_append({v}, if_not_exists({n}, {}))", p.value(empty()))
                        }
                    };
                    clauses.set(n, rhs);
                }
                Action::Delete(path, value) => {
                    let value = value.as_ref().map_err(invalid)?.clone();
                    clauses.delete(p.path(path), p.value(value));
                }
                Action::Remove(path) => clauses.remove(p.path(path)),
                Action::Compute(path, value) => {
                    let value = p.set_value(value).map_err(|e| invalid(&e))?;
                    clauses.set(p.path(path), value);
                }
                // ADD works on top-level attributes only: a nested number is incremented
                // with SET, still atomically.
                Action::Add(path @ AttrPath::Nested(..), Ok(value @ AttributeValue::N(_))) => {
                    let n = p.path(path);
                    let (zero, v) = (
                        p.value(AttributeValue::N("0".into())),
                        p.value(value.clone()),
                    );
                    clauses.set(n.clone(), format!("if_not_exists({n}, {zero}) + {v}"));
                }
                Action::Add(path, value) => {
                    let value = value.as_ref().map_err(invalid)?.clone();
                    clauses.add(p.path(path), p.value(value));
                }
            }
        }
        for alias in stale {
            clauses.remove(p.path(&AttrPath::Top(alias)));
        }
        Ok(clauses.render())
    }
}
