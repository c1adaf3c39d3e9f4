//! `#[derive(Collection)]`: an enum over entity types sharing a partition, decoded by
//! dispatching on the entity-type attribute.

use crate::check;
use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::DeriveInput;

pub fn expand(input: &DeriveInput) -> Result<TokenStream, Vec<syn::Error>> {
    let mut cx = Ctxt::new();
    let model = check::collection(&mut cx, input);
    cx.check()?;
    let Some(check::CollectionModel { ident, variants }) = model else {
        return Err(vec![syn::Error::new_spanned(
            &input.ident,
            "invalid collection",
        )]);
    };

    let name = ident.to_string();
    let dm = quote!(::dynamo_model);
    let private = quote!(#dm::__private);
    let first = variants[0].1;
    let table = quote!(<#first as #dm::Entity>::Table);
    let same_table = variants
        .iter()
        .map(|(_, ty)| quote_spanned!(ty.span()=> __same_table::<#ty, #table>();));
    let types: Vec<TokenStream> = variants
        .iter()
        .map(|(_, ty)| quote!(<#ty as #dm::Entity>::ENTITY_TYPE))
        .collect();
    let arms = variants.iter().enumerate().map(|(i, (_, ty))| {
        quote!(::core::option::Option::Some(t) if t == <#ty as #dm::Entity>::ENTITY_TYPE => #i,)
    });
    // An untyped item is the first variant identified by its keys whose templates render
    // them (decoding refuses one that several render).
    let by_keys = variants.iter().enumerate().map(|(i, (_, ty))| {
        quote! {
            if which == usize::MAX
                && <#ty as ::dynamo_model::Entity>::__IDENTIFY_BY_KEYS
                && #private::identified_as::<#ty>(&item)
            {
                which = #i;
            }
        }
    });
    let decodes = variants.iter().enumerate().map(|(i, (variant, ty))| {
        quote!(#i => <#ty as #dm::Entity>::from_item(item).map(|e| #private::Decoded::Item(#ident::#variant(e))),)
    });
    let includes = variants
        .iter()
        .map(|(_, ty)| quote!(impl #private::Includes<#ty> for #ident {}));
    let n = variants.len();
    let member_types: Vec<_> = variants.iter().map(|(_, ty)| ty).collect();

    Ok(quote! {
        const _: () = {
            fn __same_table<E: #dm::Entity<Table = T>, T: #dm::Table>() {}
            #[allow(dead_code)]
            fn __assert_same_table() { #(#same_table)* }
            const __TYPES: [&str; #n] = [#(#types),*];
            const _: () = {
                let mut i = 0;
                while i < __TYPES.len() {
                    let mut j = 0;
                    while j < i {
                        if #dm::schema::const_str_eq(__TYPES[i], __TYPES[j]) {
                            ::core::panic!("two variants of the collection have the same entity type");
                        }
                        j += 1;
                    }
                    i += 1;
                }
            };

            impl #dm::Target for #ident {
                type Table = #table;
                const NAME: &'static str = #name;
                const ENTITY_TYPES: &'static [&'static str] = &__TYPES;
                const IS_COLLECTION: bool = true;
                const IDENTIFIED_BY_KEYS: bool = false #(|| <#member_types as ::dynamo_model::Entity>::__IDENTIFY_BY_KEYS)*;
                const MEMBER_ATTRIBUTES: &'static [&'static [&'static str]] =
                    &[#(<#member_types as #dm::Entity>::ATTRIBUTES),*];
                const ENCRYPTED_MEMBERS: &'static [&'static [&'static str]] =
                    &[#(<#member_types as #private::EntityInternals>::__ENCRYPTED),*];

                fn decode(item: #dm::Item) -> ::core::result::Result<#private::Decoded<Self>, #dm::DecodeError> {
                    let which = match #private::entity_type_of::<Self>(&item) {
                        #(#arms)*
                        ::core::option::Option::None if <Self as #dm::Target>::IDENTIFIED_BY_KEYS => {
                            let mut which = usize::MAX;
                            #(#by_keys)*
                            which
                        }
                        _ => usize::MAX,
                    };
                    match which {
                        #(#decodes)*
                        _ => ::core::result::Result::Ok(#private::unknown::<Self>(&item)),
                    }
                }
            }

            impl #dm::Collection for #ident {}

            #(#includes)*
        };
    })
}
