//! The entity's registration (`dynamo_model::registry`): which keys it can own, its
//! templates as written (for exports), and its attributes.

use super::index_key::key_template_const;
use super::{bucket_type, codec, field, key_type};
use crate::check::EntityModel;
use crate::template::{Function, Segment, Template};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::LitStr;

/// `__IDENTIFY_BY_KEYS`: the entity's own `identify = "keys"`, or its table's.
pub(super) fn identify_by_keys(m: &EntityModel) -> TokenStream {
    let (table, own_identify) = (&m.table, m.identify_by_keys);
    quote!((#own_identify || <#table as ::dynamo_model::Table>::SCHEMA.identify_by_keys))
}

/// The `inventory::submit!` of the entity's `EntityRegistration`.
pub(super) fn registration(m: &EntityModel) -> TokenStream {
    let (ident, table, entity_type) = (&m.ident, &m.table, &m.entity_type);
    let dm = quote!(::dynamo_model);
    let private = quote!(#dm::__private);
    let registered_pk = registered_template(m, &m.pk.0, false);
    let registered_sk = match &m.sk {
        Some((t, _)) => {
            let t = registered_template(m, t, true);
            quote!(::core::option::Option::Some(#t))
        }
        None => quote!(::core::option::Option::None),
    };
    let type_name = ident.to_string();
    // The templates as written, for schema exports (`dynamo_model::export`).
    let pk_text = m.pk.1.value();
    let sk_text = match &m.sk {
        Some((_, lit)) => {
            let text = lit.value();
            quote!(::core::option::Option::Some(#text))
        }
        None => quote!(::core::option::Option::None),
    };
    let index_texts = m.indexes.iter().map(|index| {
        let name = index.index.to_string();
        let text =
            |side: &Option<(Template, LitStr)>, fields: Option<&Vec<usize>>| match (side, fields) {
                (Some((_, lit)), _) => {
                    let text = lit.value();
                    quote!(::core::option::Option::Some(#text))
                }
                (None, Some(fields)) if !fields.is_empty() => {
                    let names: Vec<&str> =
                        fields.iter().map(|&i| m.fields[i].name.as_str()).collect();
                    let text = format!("[{}]", names.join(", "));
                    quote!(::core::option::Option::Some(#text))
                }
                _ => quote!(::core::option::Option::None),
            };
        let pk = text(&index.pk, index.attributes.as_ref().map(|(pk, _)| pk));
        let sk = text(&index.sk, index.attributes.as_ref().map(|(_, sk)| sk));
        let inverted = index.inverted;
        quote!(#private::IndexTemplates { index: #name, pk: #pk, sk: #sk, inverted: #inverted })
    });
    let has_ttl = m.fields.iter().any(|f| f.attrs.ttl);
    let identify_by_keys = identify_by_keys(m);
    let attribute_types = codec::attribute_types(m);
    quote! {
        #private::inventory::submit! {
            #private::EntityRegistration {
                table: ::core::any::TypeId::of::<#table>,
                entity_type: #entity_type,
                type_name: #type_name,
                pk: #registered_pk,
                sk: #registered_sk,
                versioned: <#ident as #dm::Entity>::VERSION.is_some(),
                history: <#ident as #private::EntityInternals>::__HISTORY,
                identify_by_keys: #identify_by_keys,
                pk_template: #pk_text,
                sk_template: #sk_text,
                index_templates: &[#(#index_texts),*],
                attributes: <#ident as #dm::Entity>::ATTRIBUTES,
                attribute_types: #attribute_types,
                ttl: #has_ttl,
            }
        }
    }
}

/// The recogniser of a template's rendered keys: its `KeyTemplate` constant, and a check
/// per placeholder.
fn registered_template(m: &EntityModel, t: &Template, sort: bool) -> TokenStream {
    let private = quote!(::dynamo_model::__private);
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
    quote!(#private::RegisteredKey { template: #template, accepts: &[#(#accepts),*] })
}
