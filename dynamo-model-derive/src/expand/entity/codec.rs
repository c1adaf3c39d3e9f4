//! The item codec: `to_item` and `from_item`, field by field, with the chunked fields,
//! the attribute names and types the item holds, and the managed fields (version, history).

use super::index_key::{index_template_const, IndexAttributes, IndexCode};
use super::key::key_template_const;
use super::{compression, dm, field_default, formatted_attr_type, private};
use crate::check::{EntityModel, Field};
use crate::template::{Segment, Template};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

/// The fields the item stores as attributes of their own.
fn stored(m: &EntityModel) -> Vec<&Field> {
    m.fields.iter().filter(|f| m.stores(f)).collect()
}

/// Chunked fields, numbered in declaration order (`crate::chunk`).
fn chunked(m: &EntityModel) -> Vec<&Field> {
    stored(m)
        .into_iter()
        .filter(|f| f.attrs.chunked.is_some())
        .collect()
}

/// The number of a chunked field.
fn chunk_index(m: &EntityModel, f: &Field) -> usize {
    chunked(m)
        .iter()
        .position(|c| c.ident == f.ident)
        .unwrap_or(0)
}

/// The body of `to_item`.
pub(super) fn to_item(m: &EntityModel, index: &IndexCode) -> TokenStream {
    let private = private();
    let stored = stored(m);
    let index_attributes = &index.attributes;
    let key_only_checks: Vec<TokenStream> = m
        .fields
        .iter()
        .filter(|f| f.not_stored && !f.attrs.skip && m.key_source(f).is_none())
        .map(|f| {
            let (fi, ty) = (&f.ident, &f.ty);
            let field_name = f.ident.to_string();
            let attributes = m
                .index_sources(f)
                .into_iter()
                .filter_map(|(position, sort, _)| {
                    let a = index_attributes[position].as_ref()?;
                    Some(if sort { a.sk.clone() } else { a.pk.clone() })
                });
            quote_spanned! {ty.span()=>
                #private::key_only_held::<Self>(
                    &item,
                    #field_name,
                    <#ty as #private::OptionalKeyPart>::present(&self.#fi).is_some(),
                    &[#(#attributes),*],
                )?;
            }
        })
        .collect();

    let capacity = stored.len() + 3 + 2 * m.indexes.len();
    let encode_fields = stored.iter().map(|f| encode_field(m, f));
    quote! {
        // The primary key and every index key the templates render (sparse: only where
        // all fields are present).
        let mut item = #private::new_item(self, #capacity)?;
        #(#key_only_checks)*
        #(#encode_fields)*
        #private::finish_item::<Self>(item)
    }
}

/// `__CHUNKED` and the chunk slots, when the entity has chunked fields.
pub(super) fn chunk_items(m: &EntityModel) -> Option<TokenStream> {
    let dm = dm();
    let private = private();
    let chunked = chunked(m);
    let chunked_fields = chunked.iter().map(|f| {
        let name = &f.name;
        let config = f.attrs.chunked.as_ref();
        let inline = match config.and_then(|c| c.inline.as_ref()) {
            Some(n) => quote!(#n),
            None => quote!(#dm::chunk::DEFAULT_INLINE),
        };
        let chunk_size = match config.and_then(|c| c.chunk_size.as_ref()) {
            Some(n) => quote!(#n),
            None => quote!(#dm::chunk::DEFAULT_CHUNK_SIZE),
        };
        let compression = match &f.attrs.compress {
            Some(c) => {
                let c = compression(c);
                quote!(Some(#c))
            }
            None => quote!(None),
        };
        quote!(#dm::chunk::ChunkedField { attribute: #name, inline: #inline, chunk_size: #chunk_size, compression: #compression })
    });
    let chunk_arms: Vec<_> = chunked
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (fi, ty) = (&f.ident, &f.ty);
            quote_spanned!(ty.span()=> #i => Some(<#ty as #private::ChunkedFieldType>::slot(&self.#fi)),)
        })
        .collect();
    let chunk_arms_mut: Vec<_> = chunked
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (fi, ty) = (&f.ident, &f.ty);
            quote_spanned!(ty.span()=> #i => Some(<#ty as #private::ChunkedFieldType>::slot_mut(&mut self.#fi)),)
        })
        .collect();
    (!chunked.is_empty()).then(|| {
        quote! {
            const __CHUNKED: &'static [#dm::chunk::ChunkedField] = &[#(#chunked_fields),*];
            #[inline]
            fn __chunk_slot(&self, i: usize) -> ::core::option::Option<&dyn #dm::chunk::ChunkSlot> {
                match i { #(#chunk_arms)* _ => None }
            }
            #[inline]
            fn __chunk_slot_mut(&mut self, i: usize) -> ::core::option::Option<&mut dyn #dm::chunk::ChunkSlot> {
                match i { #(#chunk_arms_mut)* _ => None }
            }
        }
    })
}

/// The statement writing one stored field into `item`.
fn encode_field(m: &EntityModel, f: &Field) -> TokenStream {
    let dm = dm();
    let private = private();
    let (fi, ty, name) = (&f.ident, &f.ty, &f.name);
    if f.attrs.chunked.is_some() {
        let k = chunk_index(m, f);
        return quote_spanned! {ty.span()=>
            <#ty as #private::ChunkedFieldType>::put_chunked::<Self>(
                &self.#fi,
                &mut item,
                &<Self as #private::EntityInternals>::__CHUNKED[#k],
            );
        };
    }
    let put = if let Some(c) = &f.attrs.compress {
        let c = compression(c);
        if f.attrs.serde_codec {
            quote_spanned!(ty.span()=> #private::put_compressed_serde_field::<Self, #ty>(&mut item, #name, &self.#fi, #c)?;)
        } else {
            quote_spanned!(ty.span()=> #private::put_compressed_field::<Self, #ty>(&mut item, #name, &self.#fi, #c)?;)
        }
    } else if f.attrs.ttl {
        quote_spanned!(ty.span()=> #private::put_field::<Self, <#ty as #dm::TtlValue>::Stored>(&mut item, __TTL_ATTR, &#dm::TtlValue::to_stored(&self.#fi))?;)
    } else if f.attrs.serde_codec {
        quote_spanned!(ty.span()=> #private::put_serde_field::<Self, #ty>(&mut item, #name, &self.#fi)?;)
    } else if let Some(attr_ty) = formatted_attr_type(f) {
        quote_spanned!(ty.span()=> #private::put_formatted_field::<Self, #attr_ty>(&mut item, #name, &self.#fi)?;)
    } else {
        quote_spanned!(ty.span()=> #private::put_field::<Self, #ty>(&mut item, #name, &self.#fi)?;)
    };
    match &f.attrs.skip_serializing_if {
        Some(pred) => quote!(if !#pred(&self.#fi) { #put }),
        None => put,
    }
}

/// The body of `from_item`.
pub(super) fn from_item(
    m: &EntityModel,
    index_attributes: &[Option<IndexAttributes>],
) -> TokenStream {
    let private = private();
    let decode_fields = m
        .fields
        .iter()
        .map(|f| decode_field(m, f, index_attributes));
    quote! {
        #private::check_entity_type::<Self>(&item)?;
        let value = Self {
            #(#decode_fields)*
        };
        // The key attributes, not the plain ones, say which item this is.
        #private::verify_keys::<Self>(&item, &value)?;
        Ok(value)
    }
}

/// The field initializer reading one field from `item`.
fn decode_field(
    m: &EntityModel,
    f: &Field,
    index_attributes: &[Option<IndexAttributes>],
) -> TokenStream {
    let dm = dm();
    let private = private();
    let (fi, ty, name) = (&f.ident, &f.ty, &f.name);
    let default = field_default(fi, &f.attrs.default, &m.default);
    if f.attrs.skip {
        let default = default.unwrap_or(quote!(::core::default::Default::default));
        return quote!(#fi: #default(),);
    }
    if f.attrs.chunked.is_some() {
        let k = chunk_index(m, f);
        return quote_spanned! {ty.span()=>
            #fi: <#ty as #private::ChunkedFieldType>::take_chunked::<Self>(
                &mut item,
                &<Self as #private::EntityInternals>::__CHUNKED[#k],
            )?,
        };
    }
    if f.attrs.ttl {
        let fallback = match default {
            Some(default) => {
                quote!(Some(|| #dm::TtlValue::to_stored(&#default())))
            }
            None => quote!(None),
        };
        return quote_spanned! {ty.span()=>
            #fi: {
                let stored = #private::take_field::<Self, <#ty as #dm::TtlValue>::Stored>(&mut item, __TTL_ATTR, #fallback)?;
                #private::ttl_field::<Self, #ty>(&item, __TTL_ATTR, stored)?
            },
        };
    }
    let default_path = default.clone();
    let default = match default {
        Some(default) => quote!(Some(#default)),
        None => quote!(None),
    };
    if let Some(c) = &f.attrs.compress {
        let c = compression(c);
        let take = if f.attrs.serde_codec {
            quote_spanned!(ty.span()=> #private::take_compressed_serde_field::<Self, #ty>)
        } else {
            quote_spanned!(ty.span()=> #private::take_compressed_field::<Self, #ty>)
        };
        return quote!(#fi: #take(&mut item, #name, #c, #default)?,);
    }
    let aliases = f.attrs.aliases.iter();
    if let Some((sort, template)) = m.key_source(f) {
        return decode_key_field(f, sort, template);
    }
    if let Some(decode) = decode_index_field(m, f, index_attributes, &default_path, &default) {
        return decode;
    }
    if let Some(attr_ty) = formatted_attr_type(f) {
        let default = match &default_path {
            Some(path) => {
                quote!(Some(|| <#attr_ty as #private::FormattedAttr>::from_plain(#path())))
            }
            None => quote!(None),
        };
        return quote_spanned! {ty.span()=>
            #fi: <#attr_ty as #private::FormattedAttr>::unformat(
                #private::take_aliased_field::<Self, #attr_ty>(&mut item, #name, &[#(#aliases),*], #default)?,
            ),
        };
    }
    if !f.attrs.aliases.is_empty() && !f.attrs.serde_codec {
        return quote_spanned! {ty.span()=>
            #fi: #private::take_aliased_field::<Self, #ty>(&mut item, #name, &[#(#aliases),*], #default)?,
        };
    }
    let rename = (!f.attrs.aliases.is_empty()).then(|| {
        let aliases = f.attrs.aliases.iter();
        quote!(#private::rename_alias(&mut item, #name, &[#(#aliases),*]);)
    });
    let take = if f.attrs.serde_codec {
        quote_spanned!(ty.span()=> #private::take_serde_field::<Self, #ty>)
    } else {
        quote_spanned!(ty.span()=> #private::take_field::<Self, #ty>)
    };
    quote!(#fi: { #rename #take(&mut item, #name, #default)? },)
}

/// A field the primary key holds: read back from the key when the item does not store it
/// (written by another program, or `key_only`).
fn decode_key_field(f: &Field, sort: bool, template: &Template) -> TokenStream {
    let private = private();
    let (fi, ty, name) = (&f.ident, &f.ty, &f.name);
    let aliases = f.attrs.aliases.iter();
    let template_const = key_template_const(sort);
    let ordinal = placeholder_ordinal(f, template);
    // A key field is never an `Option`: with a key format, the attribute type is
    // `Formatted`, which is also the key part, and the field takes its value out of it.
    let formatted = formatted_attr_type(f);
    let part = formatted.clone().unwrap_or_else(|| quote!(#ty));
    // The placeholder names the field (its attribute).
    let take = if f.attrs.aliases.is_empty() {
        quote_spanned! {ty.span()=>
            #template_const.take::<Self, #part>(&mut item, #ordinal)?
        }
    } else {
        quote_spanned! {ty.span()=>
            #private::take_key_field::<Self, #part>(
                &mut item,
                #name,
                &[#(#aliases),*],
                #template_const.key_source(#ordinal),
                <#part as #private::KeyPart>::decode_key_with,
            )?
        }
    };
    match formatted {
        Some(attr_ty) => quote_spanned! {ty.span()=>
            #fi: <#attr_ty as #private::FormattedAttr>::unformat(#take),
        },
        None => quote_spanned! {ty.span()=> #fi: #take, },
    }
}

/// The position of `f`'s placeholder among the placeholders of `template` (what the
/// template's `key_source` takes).
fn placeholder_ordinal(f: &Field, template: &Template) -> usize {
    template
        .segments
        .iter()
        .filter(|s| !matches!(s, Segment::Lit(_)))
        .position(|s| matches!(s, Segment::Field(n) if f.ident == n))
        .unwrap_or(0)
}

/// `__STORED_KEY_FIELDS`: the stored key fields, which the trait's `__key_fields` decodes
/// from the key (what an update that creates its item writes); the trait's default when
/// none is stored.
pub(super) fn key_field_items(m: &EntityModel) -> Option<TokenStream> {
    let private = private();
    let fields: Vec<TokenStream> = stored(m)
        .into_iter()
        .filter_map(|f| {
            let (sort, template) = m.key_source(f)?;
            let ty = &f.ty;
            let template_const = key_template_const(sort);
            let ordinal = placeholder_ordinal(f, template);
            // The type `to_item` encodes the field as (its key format's, if it has one),
            // which is also its key part; the placeholder names the field.
            let part = formatted_attr_type(f).unwrap_or_else(|| quote!(#ty));
            Some(quote_spanned! {ty.span()=>
                #template_const.key_field(#ordinal, <#part as #private::KeyPart>::__key_attribute)
            })
        })
        .collect();
    (!fields.is_empty()).then(|| {
        quote! {
            const __STORED_KEY_FIELDS: &'static [#private::StoredKeyField] = &[#(#fields),*];
        }
    })
}

/// A field an index key template holds: read back from an index key when the item does
/// not store it (written by another program, or `key_only`); `verify_keys` then checks
/// every stored index key against the fields, so a plain attribute that disagrees with one
/// is refused. `None`: no index holds it.
fn decode_index_field(
    m: &EntityModel,
    f: &Field,
    index_attributes: &[Option<IndexAttributes>],
    default_path: &Option<TokenStream>,
    default: &TokenStream,
) -> Option<TokenStream> {
    let dm = dm();
    let private = private();
    let (fi, ty, name) = (&f.ident, &f.ty, &f.name);
    let aliases = f.attrs.aliases.iter();
    let sources = m.index_sources(f);
    if sources.is_empty() || f.attrs.serde_codec {
        return None;
    }
    let sources = sources.iter().filter_map(|(position, sort, template)| {
        let attributes = index_attributes[*position].as_ref()?;
        let attribute = if *sort {
            &attributes.sk
        } else {
            &attributes.pk
        };
        let template_const = index_template_const(*position, *sort);
        let ordinal = template
            .segments
            .iter()
            .filter(|s| !matches!(s, Segment::Lit(_)))
            .position(|s| matches!(s, Segment::Field(n) if f.ident == n))
            .unwrap_or(0);
        Some(quote! {
            #template_const.index_source(#attribute, #ordinal)
        })
    });
    let key_only = f.not_stored;
    let part = quote_spanned!(ty.span()=> <#ty as #private::OptionalKeyPart>::Part);
    if let (Some(format), Some(attr_ty)) = (&f.attrs.key_format, formatted_attr_type(f)) {
        let marker = &format.marker;
        let default = match &default_path {
            Some(path) => {
                quote!(Some(|| <#attr_ty as #private::FormattedAttr>::from_plain(#path())))
            }
            None => quote!(None),
        };
        return Some(quote_spanned! {ty.span()=>
            #fi: <#attr_ty as #private::FormattedAttr>::unformat(#private::take_index_key_field::<Self, #attr_ty>(
                &mut item,
                #name,
                &[#(#aliases),*],
                #key_only,
                &[#(#sources),*],
                |component, delimiter| {
                    <#dm::key::format::Formatted<#part, #marker> as #private::KeyPart>::decode_key_with(component, delimiter)
                        .map(|v| <#attr_ty as #private::FormattedAttr>::from_plain(
                            <#ty as #private::OptionalKeyPart>::from_part(v.into_inner()),
                        ))
                },
                #default,
            )?),
        });
    }
    if f.attrs.aliases.is_empty() && !key_only && default_path.is_none() {
        return Some(quote_spanned! {ty.span()=>
            #fi: #private::take_indexed::<Self, #ty>(&mut item, #name, &[#(#sources),*])?,
        });
    }
    Some(quote_spanned! {ty.span()=>
        #fi: #private::take_index_key_field::<Self, #ty>(
            &mut item,
            #name,
            &[#(#aliases),*],
            #key_only,
            &[#(#sources),*],
            <#ty as #private::OptionalKeyPart>::__decode,
            #default,
        )?,
    })
}

/// `Entity::ATTRIBUTES`: the stored attribute names (the TTL field lives under the table's
/// TTL attribute), with the older names of renamed fields (a projection reads them too).
pub(super) fn attribute_names(m: &EntityModel) -> TokenStream {
    let stored = stored(m);
    let attribute_names: Vec<TokenStream> = stored
        .iter()
        .flat_map(|f| {
            let own = if f.attrs.ttl {
                quote!(__TTL_ATTR)
            } else {
                let n = &f.name;
                quote!(#n)
            };
            // A projection reads a renamed field's older names too.
            std::iter::once(own).chain(f.attrs.aliases.iter().map(|a| quote!(#a)))
        })
        .collect();

    quote!(&[#(#attribute_names),*])
}

/// The type each written attribute is stored as, for the exports (`None`: it depends on
/// the value).
pub(super) fn attribute_types(m: &EntityModel) -> TokenStream {
    let stored = stored(m);
    let attribute_types: Vec<TokenStream> = stored
        .iter()
        .map(|f| {
            let ty = &f.ty;
            let known = |t: &str| quote!(Some(#t));
            let (name, stored_type) = if f.attrs.ttl {
                (quote!(__TTL_ATTR), known("N"))
            } else {
                let n = &f.name;
                let stored_type = if f.attrs.compress.is_some() {
                    known("B")
                } else if f.attrs.chunked.is_some() || f.attrs.serde_codec {
                    quote!(None)
                } else {
                    // A formatted field's attribute is in its format's form (an epoch
                    // format stores a number whatever the field's type).
                    let ty = formatted_attr_type(f).unwrap_or_else(|| quote!(#ty));
                    // Probed, not required: a type without `AttrValue` has its own error.
                    // `HasType` and `NoType` are in scope (`super::impls`).
                    quote!((&__p::TypeProbe::<#ty>::NEW).dynamo_type())
                };
                (quote!(#n), stored_type)
            };
            quote!((#name, #stored_type))
        })
        .collect();

    // One function per entity (what exports call), not one per field.
    quote!(|| [#(#attribute_types),*].to_vec())
}

/// `__ALIASES`: the older attribute names of renamed fields (updates remove them).
pub(super) fn alias_items(m: &EntityModel) -> Option<TokenStream> {
    let stored = stored(m);
    let alias_entries = stored
        .iter()
        .filter(|f| !f.attrs.aliases.is_empty())
        .map(|f| {
            let name = &f.name;
            let aliases = f.attrs.aliases.iter();
            quote!((#name, &[#(#aliases),*]))
        });
    let alias_entries: Vec<TokenStream> = alias_entries.collect();
    // None: the trait's default (no aliases).
    (!alias_entries.is_empty()).then(|| {
        quote! {
            const __ALIASES: &'static [(&'static str, &'static [&'static str])] = &[#(#alias_entries),*];
        }
    })
}

/// The version field: `Entity::VERSION` and `version()`.
pub(super) fn version_items(m: &EntityModel) -> Option<TokenStream> {
    let dm = dm();
    let version_items = m.fields.iter().find(|f| f.attrs.version).map(|f| {
        let (fi, ty, name) = (&f.ident, &f.ty, &f.name);
        quote_spanned! {ty.span()=>
            const VERSION: ::core::option::Option<&'static str> = Some(#name);
            #[inline]
            fn version(&self) -> u64 {
                <#ty as #dm::VersionValue>::get(&self.#fi)
            }
        }
    });
    version_items
}

/// The version-prefix history: `__HISTORY` and `__set_version`, and the `Versioned` impl.
pub(super) fn history_items(m: &EntityModel) -> (Option<TokenStream>, Option<TokenStream>) {
    let dm = dm();
    let ident = &m.ident;
    let history_items = m.versioned.as_ref().map(|v| {
        let (prefix, width, separator) = (&v.prefix, v.width, &v.separator);
        let time = match &v.time_attribute {
            Some(time) => quote!(::core::option::Option::Some(#time)),
            None => quote!(::core::option::Option::None),
        };
        let (counter_on_latest, numeric_order) = (v.counter_on_latest, v.numeric_order);
        let revisions_in = &v.revisions_in;
        // Through `VersionValue`, spanned on the field's type: a field of the wrong type
        // is reported once, by the trait's message, not also as a type mismatch here.
        let set_version = m.fields.iter().find(|f| f.attrs.version).map(|f| {
            let (fi, ty) = (&f.ident, &f.ty);
            quote_spanned! {ty.span()=>
                #[inline]
                fn __set_version(&mut self, version: u64) {
                    <#ty as #dm::VersionValue>::set(&mut self.#fi, version);
                }
            }
        });
        quote! {
            const __HISTORY: ::core::option::Option<&'static #dm::history::HistoryLayout> =
                Some(&#dm::history::HistoryLayout {
                    prefix: #prefix,
                    width: #width,
                    separator: #separator,
                    time_attribute: #time,
                    revisions_in: &[#(#revisions_in),*],
                    counter_on_latest: #counter_on_latest,
                    numeric_order: #numeric_order,
                });
            #set_version
        }
    });
    let versioned_impl = m
        .versioned
        .as_ref()
        .map(|_| quote!(impl #dm::history::Versioned for #ident {} impl #dm::__private::VersionedSeal for #ident {}));
    (history_items, versioned_impl)
}
