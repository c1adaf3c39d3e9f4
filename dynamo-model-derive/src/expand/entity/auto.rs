//! The values the crate sets (`#[dynamo(created)]`, `#[dynamo(updated)]`,
//! `#[dynamo(generate = "..")]`): `__STAMPS`, `__stamp`, `__stamp_values` and
//! `__unset_id`, each a call of `dynamo_model::auto` per field.

use super::{dm, formatted_attr_type, private};
use crate::check::{EntityModel, Field};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

/// The trait items of the entity's times and generated ids; the trait's defaults
/// without any.
pub(super) fn auto_items(m: &EntityModel) -> Option<TokenStream> {
    let dm = dm();
    let created = m.fields.iter().find(|f| f.attrs.created.is_some());
    let updated = m.fields.iter().find(|f| f.attrs.updated.is_some());
    let generated: Vec<&Field> = m
        .fields
        .iter()
        .filter(|f| f.attrs.generate.is_some())
        .collect();
    if created.is_none() && updated.is_none() && generated.is_empty() {
        return None;
    }
    let name = |f: Option<&Field>| match f {
        Some(f) => {
            let name = &f.name;
            quote!(Some(#name))
        }
        None => quote!(None),
    };
    let (created_name, updated_name) = (name(created), name(updated));
    let set_time = |f: &Field| {
        let (fi, ty, at) = (&f.ident, &f.ty, at_of(f));
        quote_spanned!(ty.span()=> self.#fi = <#ty as #dm::auto::Timestamp>::at(#at);)
    };
    let fills = generated.iter().map(|f| {
        let (fi, ty, kind) = (&f.ident, &f.ty, kind(f));
        let id =
            quote_spanned!(ty.span()=> <#ty as #dm::auto::GeneratedId<#dm::auto::kind::#kind>>);
        quote!(if #id::is_unset(&self.#fi) { self.#fi = #id::generate(); })
    });
    let set_created = created.map(set_time);
    let set_updated = updated.map(set_time);
    let created_value = created.map(|f| {
        let put = put_time(f);
        quote!(if creating { #put })
    });
    let updated_value = updated.map(put_time);
    let created_unset = created.map(|f| {
        let (fi, ty) = (&f.ident, &f.ty);
        let time = quote_spanned!(ty.span()=> <#ty as #dm::auto::Timestamp>);
        quote! {
            fn __created_unset(&self) -> bool {
                #time::is_unset(&self.#fi)
            }
        }
    });
    let unset = generated.iter().map(|f| {
        let (fi, ty, kind, name) = (&f.ident, &f.ty, kind(f), &f.name);
        let id =
            quote_spanned!(ty.span()=> <#ty as #dm::auto::GeneratedId<#dm::auto::kind::#kind>>);
        quote!(if #id::is_unset(&self.#fi) { return Some(#name); })
    });
    // One instant for both times, cut to both formats' steps (powers of ten, so the
    // coarser is a multiple of the finer): a value never updated has them equal.
    let one_instant = match (created, updated) {
        (Some(c), Some(u)) => {
            let (c, u) = (resolution(c), resolution(u));
            quote!(let at = #dm::auto::cut(#dm::auto::cut(at, #c), #u);)
        }
        _ => TokenStream::new(),
    };
    Some(quote! {
        const __STAMPS: #dm::auto::Stamps = #dm::auto::Stamps {
            created: #created_name,
            updated: #updated_name,
        };

        fn __stamp(&mut self, at: ::std::time::SystemTime, creating: bool) {
            #one_instant
            if creating {
                #(#fills)*
                #set_created
            }
            #set_updated
        }

        fn __stamp_values(
            at: ::std::time::SystemTime,
            creating: bool,
        ) -> ::core::result::Result<#dm::Item, #dm::Error> {
            #one_instant
            let mut item = #dm::Item::new();
            #created_value
            #updated_value
            let _ = (at, creating);
            Ok(item)
        }

        #created_unset

        fn __unset_id(&self) -> ::core::option::Option<&'static str> {
            #(#unset)*
            None
        }
    })
}

/// The marker type of a generated field's kind.
fn kind(f: &Field) -> syn::Ident {
    let kind = f
        .attrs
        .generate
        .as_ref()
        .map(|l| l.value())
        .unwrap_or_default();
    format_ident!(
        "{}",
        match kind.as_str() {
            "uuid_v7" => "UuidV7",
            "uuid_v4" => "UuidV4",
            _ => "Ulid",
        }
    )
}

/// Puts the time `at` of field `f` into `item`, encoded as `to_item` encodes the field.
fn put_time(f: &Field) -> TokenStream {
    let (dm, private) = (dm(), private());
    let (ty, name) = (&f.ty, &f.name);
    let at = at_of(f);
    let now = quote_spanned!(ty.span()=> &<#ty as #dm::auto::Timestamp>::at(#at));
    match formatted_attr_type(f) {
        Some(attr_ty) => quote_spanned! {ty.span()=>
            #private::put_formatted_field::<Self, #attr_ty>(&mut item, #name, #now)?;
        },
        None => quote_spanned! {ty.span()=>
            #private::put_field::<Self, #ty>(&mut item, #name, #now)?;
        },
    }
}

/// The instant `at` as field `f` holds it: cut to the step of its format, which refuses
/// more precision than it holds.
fn at_of(f: &Field) -> TokenStream {
    let dm = dm();
    if f.attrs.key_format.is_none() {
        return quote!(at);
    }
    let step = resolution(f);
    quote!(#dm::auto::cut(at, #step))
}

/// The step of field `f`'s format in nanoseconds (`1` without a format).
fn resolution(f: &Field) -> TokenStream {
    let private = private();
    match formatted_attr_type(f) {
        Some(attr_ty) => quote!(<#attr_ty as #private::FormattedAttr>::RESOLUTION_NANOS),
        None => quote!(1),
    }
}
