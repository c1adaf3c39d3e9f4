//! Semantic checks: builds the validated model of each derive's input from its attributes,
//! collecting every error in the `Ctxt`. Checks that need the table's declaration (index
//! names, key attributes) cannot run here, because another derive owns it; they are
//! emitted as `const` assertions instead (see `expand::entity::assertions`), which the
//! compiler evaluates with a span on the attribute.

mod attribute;
mod collection;
mod entity;
mod table;

pub use attribute::*;
pub use collection::*;
pub use entity::*;
pub use table::*;

use crate::attr::{self, Derive, FieldAttrs, RenameRule};
use crate::ctxt::Ctxt;
use crate::template::{Segment, Template};
use syn::{FieldsNamed, Ident, LitStr, Type, Visibility};

pub struct Field {
    pub ident: Ident,
    pub ty: Type,
    pub name: String,
    pub attrs: FieldAttrs,
    pub in_primary_key: bool,
    pub in_index_key: bool,
    /// A key field read from the keys only (`key_only`, or `store_key_fields = false`).
    pub not_stored: bool,
}

pub struct IndexModel {
    pub index: crate::attr::IndexName,
    /// No templates: the index's keys are the table's keys swapped (an inverted index,
    /// for adjacency lists), so nothing extra is written.
    pub inverted: bool,
    /// A multi-attribute key of the entity's own fields (indices into `fields`), or `None`.
    pub attributes: Option<(Vec<usize>, Vec<usize>)>,
    pub pk: Option<(Template, LitStr)>,
    pub sk: Option<(Template, LitStr)>,
    /// The delimiter its templates declare (its own, else the entity's); `None`: the
    /// table's.
    pub delimiter: Option<char>,
}

pub struct EntityModel {
    pub ident: Ident,
    pub vis: Visibility,
    pub table: syn::Path,
    pub entity_type: String,
    /// The name of the generated key struct (`{Type}Key` unless `key_struct = ..`).
    pub key_struct: Ident,
    pub fields: Vec<Field>,
    pub pk: (Template, LitStr),
    pub sk: Option<(Template, LitStr)>,
    /// The delimiter of the primary-key templates the entity declares; `None`: the table's.
    pub delimiter: Option<char>,
    pub indexes: Vec<IndexModel>,
    /// Container `default`: missing fields take their value from this whole value.
    pub default: Option<Option<syn::Path>>,
    /// `versioned`: where the sort key holds the revision number.
    pub versioned: Option<VersionedModel>,
    /// `identify = "keys"`: untyped items are identified by their keys.
    pub identify_by_keys: bool,
    /// `write_type = false`: writes add no entity-type attribute.
    pub no_write_type: Option<syn::LitBool>,
    /// `write_token = false`: single-item writes store no write token.
    pub no_write_token: Option<syn::LitBool>,
    /// `validate = path`: a function over the whole value, checked before writes.
    pub validate: Option<syn::Path>,
}

impl EntityModel {
    /// Where field `f` is written as it is (`{f}`) in the primary key, for reading it
    /// back from the key: (in the sort key, the template). A versioned entity's sort key
    /// holds the template inside its revision layout, so only its partition key counts.
    pub fn key_source(&self, f: &Field) -> Option<(bool, &Template)> {
        let plain = |t: &Template| {
            t.segments
                .iter()
                .any(|s| matches!(s, Segment::Field(n) if f.ident == n))
        };
        if plain(&self.pk.0) {
            return Some((false, &self.pk.0));
        }
        match &self.sk {
            Some((t, _)) if self.versioned.is_none() && plain(t) => Some((true, t)),
            _ => None,
        }
    }

    /// The index key templates that hold field `f` as it is (`{f}`), for reading it back
    /// from an index key attribute when the item has no plain attribute for it: (the
    /// index's position, in its sort key, the template). Multi-attribute keys (the field
    /// is the attribute) and inverted indexes (the table's keys) hold no template.
    pub fn index_sources(&self, f: &Field) -> Vec<(usize, bool, &Template)> {
        let plain = |t: &Template| {
            t.segments
                .iter()
                .any(|s| matches!(s, Segment::Field(n) if f.ident == n))
        };
        let mut out = Vec::new();
        for (position, index) in self.indexes.iter().enumerate() {
            if index.attributes.is_some() || index.inverted {
                continue;
            }
            for (sort, template) in [(false, &index.pk), (true, &index.sk)] {
                match template {
                    Some((t, _)) if plain(t) => out.push((position, sort, t)),
                    _ => {}
                }
            }
        }
        out
    }

    /// Whether field `f` is stored as an attribute of its own (not `skip`, and not a key
    /// field read from the keys only).
    pub fn stores(&self, f: &Field) -> bool {
        !f.attrs.skip && !f.not_stored
    }
}

/// A checked `#[dynamo(history(..))]`.
pub struct VersionedModel {
    /// Names of the indexes whose keys revisions keep.
    pub revisions_in: Vec<String>,
    pub prefix: String,
    pub width: usize,
    pub separator: String,
    /// Where revisions record their time (`None`: `time_attribute = false`).
    pub time_attribute: Option<String>,
    /// The version attribute on the latest copy only (`counter_on_latest`).
    pub counter_on_latest: bool,
    /// An unpadded history read in revision order (`numeric_order`).
    pub numeric_order: bool,
    /// Where a collision of the time attribute with the table's attributes is reported:
    /// the `time_attribute` literal, or the `versioned` word when it is the default.
    pub time_span: proc_macro2::Span,
}

impl EntityModel {
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.ident == name)
    }
}

/// The fields of a struct (or of a struct variant) with the attribute names they are
/// stored under, checked: no empty name, no two fields under one name.
pub fn named_fields(
    cx: &mut Ctxt,
    named: &FieldsNamed,
    rename_all: Option<&(RenameRule, LitStr)>,
    derive: Derive,
) -> Vec<Field> {
    let mut fields: Vec<Field> = Vec::new();
    for f in &named.named {
        let Some(ident) = f.ident.clone() else {
            continue;
        };
        let fattrs = attr::field_attrs(cx, &f.attrs, derive);
        let raw = ident.to_string();
        let raw = raw.strip_prefix("r#").unwrap_or(&raw).to_string();
        let name = match (&fattrs.rename, rename_all) {
            (Some(rename), _) => rename.value(),
            (None, Some((rule, _))) => rule.apply(&raw),
            (None, None) => raw,
        };
        if name.is_empty() {
            match &fattrs.rename {
                Some(lit) => cx.error_spanned_by(lit, "an attribute name cannot be empty"),
                None => cx.error_spanned_by(f, "an attribute name cannot be empty"),
            }
        }
        if !fattrs.skip {
            if let Some(other) = fields.iter().find(|o| !o.attrs.skip && o.name == name) {
                let message = format!(
                    "fields `{}` and `{}` are both stored as attribute `{name}`; give one another name with #[dynamo(rename = \"...\")]",
                    other.ident, ident
                );
                match &fattrs.rename {
                    Some(lit) => cx.error_spanned_by(lit, message),
                    None => cx.error_spanned_by(&ident, message),
                }
            }
        }
        fields.push(Field {
            ident,
            ty: f.ty.clone(),
            name,
            attrs: fattrs,
            in_primary_key: false,
            not_stored: false,
            in_index_key: false,
        });
    }
    fields
}
