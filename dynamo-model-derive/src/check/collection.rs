//! `#[derive(Collection)]`: an enum with one single-entity variant per entity type.

use crate::ctxt::Ctxt;
use quote::quote;
use syn::{Data, DeriveInput, Fields, Ident, Type};

/// A checked `#[derive(Collection)]`: its variants, each with its entity type.
pub struct CollectionModel<'a> {
    pub ident: &'a Ident,
    pub variants: Vec<(&'a Ident, &'a Type)>,
}

/// Reads and checks the enum; errors go to `cx` (`None`: not an enum).
pub fn collection<'a>(cx: &mut Ctxt, input: &'a DeriveInput) -> Option<CollectionModel<'a>> {
    let Data::Enum(data) = &input.data else {
        cx.error_spanned_by(&input.ident, "#[derive(Collection)] needs an enum with one variant per entity type, e.g. `enum Details { Order(Order), Item(OrderItem) }`");
        return None;
    };
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(
            &input.generics,
            "#[derive(Collection)] does not support generic enums",
        );
    }
    if data.variants.is_empty() {
        cx.error_spanned_by(&input.ident, "a collection needs at least one variant");
    }
    let mut variants = Vec::new();
    for v in &data.variants {
        match &v.fields {
            Fields::Unnamed(f) if f.unnamed.len() == 1 => {
                variants.push((&v.ident, &f.unnamed[0].ty))
            }
            _ => cx.error_spanned_by(
                v,
                "each variant holds exactly one entity, e.g. `Order(Order)`",
            ),
        }
    }
    for (i, (ident, ty)) in variants.iter().enumerate() {
        if variants[..i]
            .iter()
            .any(|(_, other)| quote!(#other).to_string() == quote!(#ty).to_string())
        {
            cx.error_spanned_by(ident, "this entity type already has a variant");
        }
    }
    Some(CollectionModel {
        ident: &input.ident,
        variants,
    })
}
