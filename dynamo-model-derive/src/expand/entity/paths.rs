//! Typed attribute paths: `Type::fields()` returns a struct of one `Path` per stored
//! field, for conditions and updates.

use super::{compression, formatted_attr_type};
use crate::check::{EntityModel, Field};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// The `{Type}Fields` struct (outside the entity's `impl`) and `Type::fields()` (inside).
pub(super) fn paths(m: &EntityModel) -> (TokenStream, TokenStream) {
    let (ident, vis, table) = (&m.ident, &m.vis, &m.table);
    // The struct is defined where users name it (full paths); `fields()` is in the
    // entity's `const` block.
    let dm = quote!(::dynamo_model);
    let rt = super::dm();
    let stored: Vec<&Field> = m.fields.iter().filter(|f| m.stores(f)).collect();
    let fields_ident = format_ident!("{}Fields", ident);
    // Chunked fields are stored as bytes or a manifest: no conditions, no updates.
    let pathed: Vec<&Field> = stored
        .iter()
        .copied()
        .filter(|f| f.attrs.chunked.is_none())
        .collect();
    let path_decls = pathed.iter().map(|f| {
        let (fi, ty) = (&f.ident, &f.ty);
        let value = if f.attrs.serde_codec {
            quote!(#dm::Serde<#ty>)
        } else if let Some(attr_ty) = formatted_attr_type(f) {
            attr_ty
        } else if f.attrs.ttl {
            quote!(<#ty as #dm::TtlValue>::Stored)
        } else {
            quote!(#ty)
        };
        if f.attrs.encrypt.is_some() {
            let doc = format!(
                "Path of attribute `{}`, stored encrypted: `exists`/`not_exists` in conditions, `set`/`remove` in updates.",
                f.name
            );
            return quote!(#[doc = #doc] pub #fi: #dm::EncryptedPath<#ident, #value>,);
        }
        if f.attrs.compress.is_some() {
            let doc = format!(
                "Path of attribute `{}`, stored compressed: `exists`/`not_exists` in conditions, `set`/`remove` in updates.",
                f.name
            );
            return quote!(#[doc = #doc] pub #fi: #dm::CompressedPath<#ident, #value>,);
        }
        let doc = format!("Path of attribute `{}`.", f.name);
        // Key fields and the version (managed by the crate) take conditions, not updates.
        if f.in_primary_key || f.attrs.version {
            return quote!(#[doc = #doc] pub #fi: #dm::KeyPath<#ident, #value>,);
        }
        quote!(#[doc = #doc] pub #fi: #dm::Path<#ident, #value>,)
    });
    let path_inits = pathed.iter().map(|f| {
        let (fi, name) = (&f.ident, &f.name);
        if f.attrs.ttl {
            return quote!(#fi: #rt::Path::__new(match <#table as #rt::Table>::SCHEMA.ttl {
                Some(ttl) => ttl,
                None => #name,
            }),);
        }
        if f.attrs.encrypt.is_some() {
            return quote!(#fi: #rt::EncryptedPath::__new(#name),);
        }
        if let Some(c) = &f.attrs.compress {
            let c = compression(c);
            return quote!(#fi: #rt::CompressedPath::__new(#name, *#c),);
        }
        quote!(#fi: #rt::Path::__new(#name),)
    });
    let fields_doc = format!("Typed attribute paths of [`{ident}`], for conditions and updates.");
    (
        quote! {
            #[doc = #fields_doc]
            #[derive(Debug, Copy)]
            #vis struct #fields_ident {
                #(#path_decls)*
            }
            // Not derived: a derived `Clone` asserts each field's type is `Clone` again.
            impl ::core::clone::Clone for #fields_ident {
                fn clone(&self) -> Self { *self }
            }
        },
        quote! {
            /// Typed attribute paths of this entity's fields.
            #vis const fn fields() -> #fields_ident {
                #fields_ident { #(#path_inits)* }
            }
        },
    )
}
