//! The entity's registration (`dynamo_model::registry`): which keys it can own, its
//! templates as written (for exports), and its attributes.

use super::key::key_template_const;
use super::{bucket_type, codec, field, key_type, private};
use crate::check::EntityModel;
use crate::template::{Function, Segment, Template};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::LitStr;

/// The `inventory::submit!` of the entity's `EntityRegistration`.
pub(super) fn registration(m: &EntityModel) -> TokenStream {
    let ident = &m.ident;
    let private = private();
    let registered_pk = registered_template(m, &m.pk.0, false);
    let registered_sk = match &m.sk {
        Some((t, _)) => {
            let t = registered_template(m, t, true);
            quote!(Some(#t))
        }
        None => quote!(None),
    };
    let type_name = ident.to_string();
    // The templates as written, for schema exports (`dynamo_model::export`).
    let pk_text = m.pk.1.value();
    let sk_text = match &m.sk {
        Some((_, lit)) => {
            let text = lit.value();
            quote!(Some(#text))
        }
        None => quote!(None),
    };
    let index_texts = m.indexes.iter().map(|index| {
        let name = index.index.to_string();
        let text =
            |side: &Option<(Template, LitStr)>, fields: Option<&Vec<usize>>| match (side, fields) {
                (Some((_, lit)), _) => {
                    let text = lit.value();
                    quote!(Some(#text))
                }
                (None, Some(fields)) if !fields.is_empty() => {
                    let names: Vec<&str> =
                        fields.iter().map(|&i| m.fields[i].name.as_str()).collect();
                    let text = format!("[{}]", names.join(", "));
                    quote!(Some(#text))
                }
                _ => quote!(None),
            };
        let pk = text(&index.pk, index.attributes.as_ref().map(|(pk, _)| pk));
        let sk = text(&index.sk, index.attributes.as_ref().map(|(_, sk)| sk));
        let inverted = index.inverted;
        quote!(#private::IndexTemplates::new(#name, #pk, #sk, #inverted))
    });
    let has_ttl = m.fields.iter().any(|f| f.attrs.ttl);
    let attribute_types = codec::attribute_types(m);
    quote! {
        const __REGISTRATION: #private::EntityRegistration = #private::registration::<#ident>(
            #type_name,
            #registered_pk,
            #registered_sk,
            #pk_text,
            #sk_text,
            &[#(#index_texts),*],
            #attribute_types,
            #has_ttl,
        );
        #private::inventory::submit!(__REGISTRATION);
    }
}

/// The recogniser of a template's rendered keys: its `KeyTemplate` constant, and a check
/// per placeholder.
fn registered_template(m: &EntityModel, t: &Template, sort: bool) -> TokenStream {
    let private = private();
    let template = key_template_const(sort);
    let accepts = t.segments.iter().filter_map(|segment| match segment {
        Segment::Lit(_) => None,
        Segment::Field(name) => {
            let f = field(m, name);
            let (ty, kty) = (&f.ty, key_type(f, false));
            // The same trait path as the key rendering, so a field type that is not a
            // `KeyPart` is reported once.
            Some(quote_spanned!(ty.span()=> <#kty as #private::KeyPart>::__accepts))
        }
        // Any shard or bucket: which one the item's fields give is checked when the
        // item is decoded (`verify_keys`).
        Segment::Computed(c) => Some(match c.function {
            Function::Shard(n) | Function::Random(n) => quote!(#private::accepts_shard::<#n>),
            Function::Bucket(b) => {
                let bucket = bucket_type(b);
                quote!(#private::accepts_bucket::<#bucket>)
            }
        }),
    });
    quote!(#private::RegisteredKey::new(#template, &[#(#accepts),*]))
}
