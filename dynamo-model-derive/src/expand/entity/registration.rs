//! The entity's registration (`dynamo_model::registry`): which keys it can own, its
//! templates as written (for exports), and its attributes.

use super::index_key::index_template_const;
use super::key::key_template_const;
use super::{codec, private};
use crate::check::EntityModel;
use crate::template::Template;
use proc_macro2::TokenStream;
use quote::quote;
use syn::LitStr;

/// The `inventory::submit!` of the entity's `EntityRegistration`.
pub(super) fn registration(m: &EntityModel) -> TokenStream {
    let ident = &m.ident;
    let private = private();
    let pk = key_template_const(false);
    let sk = match &m.sk {
        Some(_) => {
            let sk = key_template_const(true);
            quote!(Some(#sk))
        }
        None => quote!(None),
    };
    let type_name = ident.to_string();
    // The index templates as written, for schema exports (`dynamo_model::export`): a
    // template's text is its `KeyTemplate`'s.
    let index_texts = m.indexes.iter().enumerate().map(|(n, index)| {
        let name = index.index.to_string();
        let text = |side: &Option<(Template, LitStr)>, fields: Option<&Vec<usize>>, sort| match (
            side, fields,
        ) {
            (Some(_), _) => {
                let template = index_template_const(n, sort);
                quote!(Some(#template.text))
            }
            (None, Some(fields)) if !fields.is_empty() => {
                let names: Vec<&str> = fields.iter().map(|&i| m.fields[i].name.as_str()).collect();
                let text = format!("[{}]", names.join(", "));
                quote!(Some(#text))
            }
            _ => quote!(None),
        };
        let pk = text(
            &index.pk,
            index.attributes.as_ref().map(|(pk, _)| pk),
            false,
        );
        let sk = text(&index.sk, index.attributes.as_ref().map(|(_, sk)| sk), true);
        let inverted = index.inverted;
        quote!(#private::IndexTemplates::new(#name, #pk, #sk, #inverted))
    });
    let has_ttl = m.fields.iter().any(|f| f.attrs.ttl);
    let attribute_types = codec::attribute_types(m);
    quote! {
        const __REGISTRATION: #private::EntityRegistration = #private::registration::<#ident>(
            #type_name,
            #pk,
            #sk,
            &[#(#index_texts),*],
            #attribute_types,
            #has_ttl,
        );
        #private::inventory::submit!(__REGISTRATION);
    }
}
