//! Index key templates at run time: what an update must do to the index keys an entity
//! renders from its fields.
//!
//! `#[derive(Entity)]` describes each key template once, as a `const` [`KeyTemplate`]
//! (its text, literal parts and named placeholders), which renders the entity's keys and
//! recognises them. For updates, an [`IndexTemplate`] adds where each field an index's
//! templates name comes from in an update, and
//! [`index_updates`] does the rest, so the generated code is a table, not a procedure.
//!
//! An update changes attributes, not the entity: an index key attribute rendered from a
//! field would go stale if the update changed the field without rewriting the key. So an
//! update that touches a template field must give every field of that template (or the
//! field is a primary-key field, which never changes and is read back from the key), and
//! the key attributes are recomputed from those values; removing a field takes the item
//! out of the (sparse) index.

use crate::{AttrValue, Error, KeyPart, RawKey};
use aws_sdk_dynamodb::types::AttributeValue;

use super::{Delimiter, OptionalKeyPart};

/// Whether a key component is exactly the encoding of some value of a placeholder's
/// type under the template's delimiter (for a field, its
/// [`KeyPart::decode_key_with`](crate::KeyPart::decode_key_with) accepts it: the
/// field's `KeyPart::__accepts`; for a computed part, it is a shard or bucket of the
/// template).
pub type Accepts = fn(&str, Delimiter) -> bool;

/// One placeholder of a [`KeyTemplate`]: the attribute of the field it holds (or computes
/// a part from), and its kind: how a rendered key's component is recognised (primary-key
/// templates, which the registry recognises keys with) and, for a computed part of an
/// index template, how an update computes it from the field.
#[derive(Debug, Clone, Copy)]
pub struct Placeholder {
    /// The attribute of the field the placeholder holds or computes a part from.
    pub name: &'static str,
    /// The check of the placeholder's component (primary-key templates).
    pub accepts: Option<Accepts>,
    /// What an update computes from the field (a computed part of an index template;
    /// `None`: the field as it is).
    pub computed: Option<ComputedPart>,
}

impl Placeholder {
    /// A placeholder of a primary-key template, its component checked by `accepts`.
    pub const fn key(name: &'static str, accepts: Accepts) -> Self {
        Placeholder {
            name,
            accepts: Some(accepts),
            computed: None,
        }
    }

    /// Field `name` as it is, in an index template.
    pub const fn field(name: &'static str) -> Self {
        Placeholder {
            name,
            accepts: None,
            computed: None,
        }
    }

    /// A part computed from field `name`, in an index template: the update's value of the
    /// field is encoded as for [`Placeholder::field`], then turned into the part, so an
    /// update that changes the field recomputes it (see
    /// [`computed`](dynamo_model::key::computed)).
    pub const fn computed(name: &'static str, part: ComputedPart) -> Self {
        Placeholder {
            name,
            accepts: None,
            computed: Some(part),
        }
    }
}

/// What a computed index-template placeholder renders from its field's encoded component.
#[derive(Debug, Clone, Copy)]
pub enum ComputedPart {
    /// `shard(N)`: the shard of the component.
    Shard(u16),
    /// `random(N)`: the shard number the (`u16`) component holds.
    Random(u16),
    /// `date`, `hour` or `month`: decodes the component and renders its bucket.
    Bucket(fn(&str, &mut String) -> Result<(), crate::key::KeyError>),
}

impl ComputedPart {
    /// Appends the part computed from `component`, the field's encoding.
    fn render(self, component: &str, out: &mut String) -> Result<(), crate::key::KeyError> {
        use crate::key::computed::__private::{random_from_component, shard_from_component};
        match self {
            ComputedPart::Shard(count) => shard_from_component(component, count, out),
            ComputedPart::Random(count) => random_from_component(component, count, out),
            ComputedPart::Bucket(bucket) => bucket(component, out),
        }
    }
}

/// Encodes the value an update gives a field into `out`, for a template with this
/// delimiter (`Ok(false)`: the value is absent, so the item leaves the sparse index). The
/// entity type names the error.
pub type EncodeTouch =
    fn(&'static str, &'static str, Touch<'_>, Delimiter, &mut String) -> Result<bool, Error>;

/// Re-encodes a field's component read back from the rendered primary key (whose
/// template has the first delimiter) into `out`, for the index template (whose delimiter
/// is the second).
pub type Reencode = fn(&'static str, &str, Delimiter, Delimiter, &mut String) -> Result<(), Error>;

/// Where an update's index-key recomputation takes one template field from.
#[derive(Debug, Clone, Copy)]
pub enum TemplateField {
    /// A field stored in its own attribute, which the update may set or remove.
    Stored {
        /// The field's attribute.
        attribute: &'static str,
        /// Decodes the update's value into the field's type and encodes it as a key part.
        encode: EncodeTouch,
    },
    /// A field of the primary key: it never changes, so its component is read back from
    /// the rendered key.
    Key {
        /// The field's attribute (its placeholder's name).
        name: &'static str,
        /// Whether the field is in the sort key (else the partition key).
        sort: bool,
        /// The key template: `Some(literal)` or `None` for a field.
        segments: &'static [Option<&'static str>],
        /// The delimiter of the key template (where a component ends).
        delimiter: Delimiter,
        /// The field's ordinal among the template's fields.
        ordinal: usize,
        /// Decodes the component into the field's type and encodes it again.
        reencode: Reencode,
    },
}

/// One key template of an entity, described once: its text as written (for exports and
/// messages), its literal parts in order (`Some(literal)`, and `None` for each
/// placeholder), each placeholder's name and kind, its delimiter, and whether it renders a
/// sort key. A `const` of the generated code, which renders the entity's keys, recognises
/// them, re-renders index keys in updates and is exported; the descriptors of the
/// template's fields are derived from it.
#[derive(Debug, Clone, Copy)]
pub struct KeyTemplate {
    /// The template as written.
    pub text: &'static str,
    /// The template: `Some(literal)`, or `None` for a placeholder.
    pub parts: &'static [Option<&'static str>],
    /// The placeholders, in order (one per `None` of `parts`).
    pub placeholders: &'static [Placeholder],
    /// The delimiter that ends a placeholder's component.
    pub delimiter: Delimiter,
    /// Whether the template renders a sort key (else a partition key).
    pub sort: bool,
}

impl KeyTemplate {
    /// The template with these parts and delimiter, without text or placeholder
    /// descriptions (what rendering and reading keys back need); `sort`: it renders a
    /// sort key.
    pub const fn new(
        sort: bool,
        parts: &'static [Option<&'static str>],
        delimiter: Delimiter,
    ) -> Self {
        KeyTemplate::of(sort, "", parts, &[], delimiter)
    }

    /// Template `text`, with these parts, placeholders and delimiter; `sort`: it renders
    /// a sort key.
    pub const fn of(
        sort: bool,
        text: &'static str,
        parts: &'static [Option<&'static str>],
        placeholders: &'static [Placeholder],
        delimiter: Delimiter,
    ) -> Self {
        KeyTemplate {
            text,
            parts,
            placeholders,
            delimiter,
            sort,
        }
    }

    /// The number of placeholders (each a component of the rendered key).
    pub const fn placeholders(&self) -> usize {
        let (mut i, mut n) = (0, 0);
        while i < self.parts.len() {
            if self.parts[i].is_none() {
                n += 1;
            }
            i += 1;
        }
        n
    }

    /// Whether `value` is a rendering of the template: its literals match and every
    /// placeholder's check accepts its component (a placeholder without one accepts
    /// nothing).
    pub fn recognises(&self, value: &str) -> bool {
        let mut rest = value;
        let mut placeholders = self.placeholders.iter();
        for part in self.parts {
            match part {
                Some(literal) => match rest.strip_prefix(literal) {
                    Some(tail) => rest = tail,
                    None => return false,
                },
                None => {
                    let (component, tail) = self.delimiter.split_component(rest);
                    match placeholders.next().and_then(|p| p.accepts) {
                        Some(valid) if valid(component, self.delimiter) => rest = tail,
                        _ => return false,
                    }
                }
            }
        }
        rest.is_empty()
    }
}

/// The key attributes of one index whose keys an entity renders from templates (`None`:
/// the index key has no such attribute, or the entity gives it no template).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexKeyAttributes {
    /// The index's name.
    pub index: &'static str,
    /// The partition key attribute the entity's `pk` template writes.
    pub pk: Option<&'static str>,
    /// The sort key attribute the entity's `sk` template writes.
    pub sk: Option<&'static str>,
}

impl IndexKeyAttributes {
    /// Index `index`, whose templates write `pk` and `sk`.
    pub const fn new(
        index: &'static str,
        pk: Option<&'static str>,
        sk: Option<&'static str>,
    ) -> Self {
        IndexKeyAttributes { index, pk, sk }
    }
}

/// An index whose key attributes an entity renders from templates.
#[derive(Debug, Clone, Copy)]
pub struct IndexTemplate {
    /// The index's name and the key attributes its templates write.
    pub keys: IndexKeyAttributes,
    /// The `pk` template (`None` without one): the same constant the entity renders and
    /// recognises its keys with, whose placeholders name their fields.
    pub pk: Option<&'static KeyTemplate>,
    /// The `sk` template (`None` without one).
    pub sk: Option<&'static KeyTemplate>,
    /// The templates' fields, each once, found by the name of each placeholder.
    pub fields: &'static [TemplateField],
}

impl IndexTemplate {
    /// The templates `pk` and `sk` of the index whose key attributes are `keys`, with
    /// their fields.
    pub const fn new(
        keys: IndexKeyAttributes,
        pk: Option<&'static KeyTemplate>,
        sk: Option<&'static KeyTemplate>,
        fields: &'static [TemplateField],
    ) -> Self {
        IndexTemplate {
            keys,
            pk,
            sk,
            fields,
        }
    }
}

/// [`EncodeTouch`] for a field of type `T`.
pub fn encode_touch<T: AttrValue + OptionalKeyPart>(
    entity: &'static str,
    attribute: &'static str,
    touch: Touch<'_>,
    delimiter: Delimiter,
    out: &mut String,
) -> Result<bool, Error> {
    touched::<T>(entity, attribute, touch)?
        .encode_optional_key(delimiter, out)
        .map_err(|e| Error::key(entity, e))
}

/// The value an update gives a template field.
fn touched<T: AttrValue>(
    entity: &'static str,
    attribute: &'static str,
    touch: Touch<'_>,
) -> Result<T, Error> {
    let decoded = match touch {
        Touch::Set(av) => T::from_attr(av.clone()),
        Touch::Removed => T::from_missing(),
        Touch::Untouched | Touch::Added => Err(crate::DecodeErrorKind::Missing),
    };
    decoded.map_err(|kind| {
        Error::invalid(
            entity,
            crate::ValidationReason::IncompleteIndexTemplate,
            format!("the update's value for `{attribute}` is unusable in an index key: {kind}"),
        )
        .caused_by(kind)
    })
}

/// [`encode_touch`] for a field with a `key_format` (`F`).
pub fn encode_touch_formatted<T, A, F>(
    entity: &'static str,
    attribute: &'static str,
    touch: Touch<'_>,
    delimiter: Delimiter,
    out: &mut String,
) -> Result<bool, Error>
where
    T: OptionalKeyPart,
    A: super::format::FormattedAttr<Plain = T>,
    F: super::format::KeyFormat<T::Part>,
{
    // The update sets the attribute in the format's attribute form.
    let value = touched::<A>(entity, attribute, touch)?.unformat();
    super::format::encode_optional::<T, F>(&value, delimiter, out)
        .map_err(|e| Error::key(entity, e))
}

/// [`Reencode`] for a primary-key field of type `T`.
pub fn reencode<T: KeyPart>(
    entity: &'static str,
    component: &str,
    from: Delimiter,
    to: Delimiter,
    out: &mut String,
) -> Result<(), Error> {
    if from == to {
        // The same encoding: the component is already what the index key holds (it decodes,
        // so it is canonical).
        return T::decode_key_with(component, from)
            .map(|_| out.push_str(component))
            .map_err(|e| Error::key(entity, e));
    }
    T::decode_key_with(component, from)
        .and_then(|value| value.encode_key_with(to, out))
        .map_err(|e| Error::key(entity, e))
}

/// The index key attributes an update must also set (`Some`) or remove (`None`) so no
/// index key of `templates` goes stale, given the primary key of the item and what the
/// update does to each attribute. Refuses (before anything is sent) an update that
/// touches some but not all of an index's stored template fields, or one that changes
/// one with an operation whose result only DynamoDB knows (`ADD`, ...).
pub fn index_updates(
    entity: &'static str,
    key: &RawKey,
    changes: &IndexChanges<'_>,
    templates: &[IndexTemplate],
) -> Result<IndexUpdates, Error> {
    let mut out = Vec::new();
    for template in templates {
        let touched: Vec<(&str, Touch<'_>)> = template
            .fields
            .iter()
            .filter_map(|field| match field {
                TemplateField::Stored { attribute, .. } => {
                    Some((*attribute, changes.touch(attribute)))
                }
                TemplateField::Key { .. } => None,
            })
            .collect();
        let attributes = [template.keys.pk, template.keys.sk];
        if touched.iter().any(|(_, t)| matches!(t, Touch::Removed)) {
            // A template field became absent: the item leaves the (sparse) index.
            out.extend(attributes.into_iter().flatten().map(|a| (a, None)));
            continue;
        }
        if touched.iter().all(|(_, t)| matches!(t, Touch::Untouched)) {
            continue; // the index key does not change
        }
        if touched
            .iter()
            .any(|(_, t)| matches!(t, Touch::Untouched | Touch::Added))
        {
            return Err(stale_index(entity, template.keys.index, &touched));
        }
        let mut present = true;
        let mut rendered = [String::new(), String::new()];
        for (slot, value) in [template.pk, template.sk].into_iter().zip(&mut rendered) {
            if let Some(key_template) = slot {
                present &= render(entity, key, changes, template, key_template, value)?;
            }
        }
        for (position, (attribute, value)) in attributes.into_iter().zip(rendered).enumerate() {
            if let Some(attribute) = attribute {
                let value = if present {
                    crate::key::check_index_key(entity, attribute, &value, position == 0)?;
                    Some(AttributeValue::S(value))
                } else {
                    None
                };
                out.push((attribute, value));
            }
        }
    }
    Ok(out)
}

/// The index key attributes of the `templates` built from primary-key fields and literals
/// alone (no stored field): the same for every item under `key`, so an update that
/// creates its item (`upsert`) writes them, as a put of the entity would.
pub fn key_field_index_keys(
    entity: &'static str,
    key: &RawKey,
    templates: &[IndexTemplate],
) -> Result<Vec<(&'static str, AttributeValue)>, Error> {
    let untouched = |_: &str| Touch::Untouched;
    let changes = IndexChanges { lookup: &untouched };
    let mut out = Vec::new();
    for template in templates {
        let only_key_fields = template
            .fields
            .iter()
            .all(|field| matches!(field, TemplateField::Key { .. }));
        if !only_key_fields {
            continue;
        }
        let attributes = [template.keys.pk, template.keys.sk];
        for (position, (slot, attribute)) in [template.pk, template.sk]
            .into_iter()
            .zip(attributes)
            .enumerate()
        {
            let (Some(key_template), Some(attribute)) = (slot, attribute) else {
                continue;
            };
            let mut value = String::new();
            if render(entity, key, &changes, template, key_template, &mut value)? {
                crate::key::check_index_key(entity, attribute, &value, position == 0)?;
                out.push((attribute, AttributeValue::S(value)));
            }
        }
    }
    Ok(out)
}

/// Appends `key_template` with the values the update gives its placeholders' fields;
/// `Ok(false)` if the update makes one absent (what is appended is then meaningless).
fn render(
    entity: &'static str,
    key: &RawKey,
    changes: &IndexChanges<'_>,
    template: &IndexTemplate,
    key_template: &KeyTemplate,
    value: &mut String,
) -> Result<bool, Error> {
    let mut present = true;
    let mut placeholders = key_template.placeholders.iter();
    for part in key_template.parts {
        if let Some(literal) = part {
            value.push_str(literal);
            continue;
        }
        let Some(placeholder) = placeholders.next() else {
            return Err(descriptor_error(entity, "a placeholder without its field"));
        };
        let Some(at) = template
            .fields
            .iter()
            .position(|f| f.name() == placeholder.name)
        else {
            return Err(descriptor_error(
                entity,
                "a template names a field it does not list",
            ));
        };
        match placeholder.computed {
            None => {
                present &= field_component(
                    entity,
                    key,
                    changes,
                    template,
                    at,
                    key_template.delimiter,
                    value,
                )?;
            }
            Some(part) => {
                let mut component = String::new();
                // Computed from the field's `#` encoding (the shard hash's input), whatever
                // the template's delimiter.
                if field_component(
                    entity,
                    key,
                    changes,
                    template,
                    at,
                    Delimiter::HASH,
                    &mut component,
                )? {
                    part.render(&component, value)
                        .map_err(|e| Error::key(entity, e))?;
                } else {
                    present = false;
                }
            }
        }
    }
    Ok(present)
}

impl TemplateField {
    /// The field's attribute, which the placeholders holding it name.
    fn name(&self) -> &'static str {
        match *self {
            TemplateField::Stored { attribute, .. } => attribute,
            TemplateField::Key { name, .. } => name,
        }
    }
}

/// Appends the encoded component of field `at`; `Ok(false)` if the update makes it absent.
fn field_component(
    entity: &'static str,
    key: &RawKey,
    changes: &IndexChanges<'_>,
    template: &IndexTemplate,
    at: usize,
    to: Delimiter,
    out: &mut String,
) -> Result<bool, Error> {
    let Some(field) = template.fields.get(at) else {
        return Err(descriptor_error(
            entity,
            "a template names a field it does not list",
        ));
    };
    match *field {
        TemplateField::Stored { attribute, encode } => {
            encode(entity, attribute, changes.touch(attribute), to, out)
        }
        TemplateField::Key {
            sort,
            segments,
            delimiter,
            ordinal,
            reencode,
            ..
        } => {
            let rendered = if sort {
                key.sk.as_deref()
            } else {
                Some(key.pk.as_str())
            };
            let component = key_component(entity, rendered, segments, delimiter, ordinal)?;
            reencode(entity, component, delimiter, to, out).map(|()| true)
        }
    }
}

#[cold]
fn descriptor_error(entity: &'static str, why: &str) -> Error {
    Error::invalid(
        entity,
        crate::ValidationReason::KeyEncoding,
        format!("inconsistent index template: {why}"),
    )
}

/// One field's encoded component in a rendered key: `segments` describe the template
/// (`Some(literal)` or `None` for a field), `delimiter` is the template's, and `field` is
/// the field's ordinal among the template's fields. Encoded values never contain the
/// delimiter and a field is always followed by the end or by a literal starting with it,
/// so the split is exact.
pub fn key_component<'k>(
    entity: &'static str,
    rendered: Option<&'k str>,
    segments: &[Option<&str>],
    delimiter: Delimiter,
    field: usize,
) -> Result<&'k str, Error> {
    let fail = |why: &str| {
        Error::invalid(
            entity,
            crate::ValidationReason::KeyEncoding,
            format!(
                "cannot read a key field back from the key {}: {why}",
                crate::error::key_text(&format_args!("{rendered:?}"))
            ),
        )
    };
    let mut rest = rendered.ok_or_else(|| fail("no sort key"))?;
    let mut ordinal = 0;
    for segment in segments {
        match segment {
            Some(literal) => {
                rest = rest
                    .strip_prefix(literal)
                    .ok_or_else(|| fail("literal mismatch"))?;
            }
            None => {
                let (value, tail) = delimiter.split_component(rest);
                if ordinal == field {
                    return Ok(value);
                }
                ordinal += 1;
                rest = tail;
            }
        }
    }
    Err(fail("field not in template"))
}

/// Refuses an update that would leave index `index` stale.
fn stale_index(entity: &'static str, index: &str, touched: &[(&str, Touch<'_>)]) -> Error {
    let names = |keep: fn(&Touch<'_>) -> bool| -> String {
        touched
            .iter()
            .filter(|(_, t)| keep(t))
            .map(|(a, _)| *a)
            .collect::<Vec<_>>()
            .join("`, `")
    };
    let added = names(|t| matches!(t, Touch::Added));
    let message = if !added.is_empty() {
        format!(
            "`{added}` feeds the key of index `{index}`: its new value is computed by DynamoDB (add, subtract, append, set_if_absent, set operations), so the index key cannot be recomputed; set it instead, or put the whole entity"
        )
    } else {
        format!(
            "the update changes `{}`, which feed the key of index `{index}`, without `{}`: the index key would go stale; set those too (or put the whole entity)",
            names(|t| !matches!(t, Touch::Untouched)),
            names(|t| matches!(t, Touch::Untouched)),
        )
    };
    Error::invalid(
        entity,
        crate::ValidationReason::IncompleteIndexTemplate,
        message,
    )
}

/// Index key attributes an update must also set (`Some`) or remove (`None`).
#[doc(hidden)]
pub type IndexUpdates = Vec<(
    &'static str,
    Option<aws_sdk_dynamodb::types::AttributeValue>,
)>;

/// What an update does to one attribute (for index-key recomputation).
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub enum Touch<'a> {
    /// Not changed by the update.
    Untouched,
    /// Set to this value.
    Set(&'a aws_sdk_dynamodb::types::AttributeValue),
    /// Removed.
    Removed,
    /// Incremented with `ADD`: its new value is unknown before the request.
    Added,
}

/// The changes of one update, by attribute name.
#[doc(hidden)]
pub struct IndexChanges<'a> {
    pub(crate) lookup: &'a dyn Fn(&str) -> Touch<'a>,
}

impl<'a> IndexChanges<'a> {
    /// What the update does to `attribute`.
    pub fn touch(&self, attribute: &str) -> Touch<'a> {
        (self.lookup)(attribute)
    }
}

#[cfg(test)]
mod tests;
