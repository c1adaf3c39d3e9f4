//! `#[derive(Attribute)]`: a struct or enum stored as one attribute.

use super::*;
use crate::attr::{self, Derive};
use crate::ctxt::Ctxt;
use syn::{Data, DeriveInput, Fields, Ident, Type};

pub struct AttributeModel {
    pub ident: Ident,
    pub vis: syn::Visibility,
    pub generics: syn::Generics,
    pub shape: Shape,
}

pub enum Shape {
    /// Named fields: a map attribute. `default` is the container default.
    Struct {
        fields: Vec<Field>,
        default: Option<Option<syn::Path>>,
    },
    /// A single-field tuple struct, stored as its field.
    Newtype(Type),
    Enum(Vec<Variant>),
}

pub struct Variant {
    pub ident: Ident,
    /// The name it is stored under.
    pub name: String,
    pub kind: VariantKind,
}

pub enum VariantKind {
    Unit,
    Newtype(Type),
    Tuple(Vec<Type>),
    Struct(Vec<Field>),
}

pub fn attribute(cx: &mut Ctxt, input: &DeriveInput) -> Option<AttributeModel> {
    let attrs = attr::attribute_attrs(cx, &input.attrs);
    for param in &input.generics.params {
        if !matches!(param, syn::GenericParam::Type(_)) {
            cx.error_spanned_by(
                param,
                "#[derive(Attribute)] supports type parameters only (decoded values own their data, so no lifetimes; no const parameters)",
            );
        }
    }
    let naming = &attrs.naming;
    let shape = match &input.data {
        Data::Struct(s) => struct_shape(cx, input, naming, &s.fields)?,
        Data::Enum(e) => {
            if naming.default.is_some() {
                cx.error_spanned_by(
                    &input.ident,
                    "container `default` applies to structs with named fields, not enums",
                );
            }
            let mut variants: Vec<Variant> = Vec::new();
            for v in &e.variants {
                let variant = variant(cx, naming, v, &variants);
                variants.push(variant);
            }
            Shape::Enum(variants)
        }
        Data::Union(_) => {
            cx.error_spanned_by(
                &input.ident,
                "#[derive(Attribute)] needs a struct or an enum; a union has no stored form",
            );
            return None;
        }
    };
    Some(AttributeModel {
        ident: input.ident.clone(),
        vis: input.vis.clone(),
        generics: input.generics.clone(),
        shape,
    })
}

/// A struct: named fields (stored as a map) or a newtype (stored as its field's value);
/// `None` for any other struct, which has no attribute names.
fn struct_shape(
    cx: &mut Ctxt,
    input: &DeriveInput,
    naming: &attr::Naming,
    fields: &Fields,
) -> Option<Shape> {
    match fields {
        Fields::Named(named) => {
            if let Some((_, lit)) = &naming.rename_all_fields {
                cx.error_spanned_by(lit, "`rename_all_fields` applies to the struct variants of an enum; on a struct use `rename_all`");
            }
            let fields = named_fields(cx, named, naming.rename_all.as_ref(), Derive::Attribute);
            Some(Shape::Struct {
                fields,
                default: naming.default.clone(),
            })
        }
        Fields::Unnamed(unnamed) if unnamed.unnamed.len() == 1 => {
            let field = &unnamed.unnamed[0];
            if attr::field_attrs(cx, &field.attrs, Derive::Attribute).any() {
                cx.error_spanned_by(
                    field,
                    "a newtype is stored as its field's value: its field takes no options",
                );
            }
            container_options_unused(cx, naming, "a newtype (stored as its field's value)");
            if naming.default.is_some() {
                cx.error_spanned_by(&input.ident, "container `default` applies to structs with named fields; a newtype is stored as its field's value");
            }
            Some(Shape::Newtype(field.ty.clone()))
        }
        _ => {
            cx.error_spanned_by(
                &input.ident,
                "#[derive(Attribute)] needs a struct with named fields (stored as a map), a newtype `struct Name(T);` (stored as its field), or an enum; \
                 a tuple struct of several fields or a unit struct has no attribute names: give its fields names",
            );
            None
        }
    }
}

/// An enum's variant `v`, named by its options or the enum's, and no other variant's name
/// (`before`: the variants before it).
fn variant(cx: &mut Ctxt, naming: &attr::Naming, v: &syn::Variant, before: &[Variant]) -> Variant {
    let vattrs = attr::variant_attrs(cx, &v.attrs);
    let raw = v.ident.to_string();
    let name = match (&vattrs.rename, &naming.rename_all) {
        (Some(lit), _) => lit.value(),
        (None, Some((rule, _))) => rule.apply_to_variant(&raw),
        (None, None) => raw,
    };
    if name.is_empty() {
        match &vattrs.rename {
            Some(lit) => cx.error_spanned_by(lit, "a variant name cannot be empty"),
            None => cx.error_spanned_by(&v.ident, "a variant name cannot be empty"),
        }
    }
    if let Some(other) = before.iter().find(|o| o.name == name) {
        let message = format!(
            "variants `{}` and `{}` are both stored as `{name}`; give one another name with #[dynamo(rename = \"...\")]",
            other.ident, v.ident
        );
        match &vattrs.rename {
            Some(lit) => cx.error_spanned_by(lit, message),
            None => cx.error_spanned_by(&v.ident, message),
        }
    }
    if let (Some((_, lit)), false) = (&vattrs.rename_all, matches!(v.fields, Fields::Named(_))) {
        cx.error_spanned_by(lit, "`rename_all` on a variant renames the fields of a struct variant; this variant has none");
    }
    Variant {
        ident: v.ident.clone(),
        name,
        kind: variant_kind(cx, naming, v, &vattrs),
    }
}

/// What a variant holds: nothing, one value, a tuple, or named fields (renamed by the
/// variant's `rename_all`, else the enum's `rename_all_fields`).
fn variant_kind(
    cx: &mut Ctxt,
    naming: &attr::Naming,
    v: &syn::Variant,
    vattrs: &attr::VariantAttrs,
) -> VariantKind {
    match &v.fields {
        Fields::Unit => VariantKind::Unit,
        Fields::Unnamed(unnamed) => {
            for field in &unnamed.unnamed {
                if attr::field_attrs(cx, &field.attrs, Derive::Attribute).any() {
                    cx.error_spanned_by(field, "the fields of a tuple variant take no options; use a struct variant to name them");
                }
            }
            let types: Vec<Type> = unnamed.unnamed.iter().map(|f| f.ty.clone()).collect();
            match <[Type; 1]>::try_from(types) {
                Ok([ty]) => VariantKind::Newtype(ty),
                Err(types) => VariantKind::Tuple(types),
            }
        }
        Fields::Named(named) => {
            let rule = vattrs
                .rename_all
                .as_ref()
                .or(naming.rename_all_fields.as_ref());
            VariantKind::Struct(named_fields(cx, named, rule, Derive::Attribute))
        }
    }
}

pub(crate) fn container_options_unused(cx: &mut Ctxt, naming: &attr::Naming, what: &str) {
    let options = [
        naming.rename_all.as_ref().map(|(_, lit)| lit),
        naming.rename_all_fields.as_ref().map(|(_, lit)| lit),
    ];
    for lit in options.into_iter().flatten() {
        cx.error_spanned_by(lit, format!("{what} has no names to rename"));
    }
}
