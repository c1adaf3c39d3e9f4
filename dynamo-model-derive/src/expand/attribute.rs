//! `#[derive(Attribute)]`: `impl AttrValue` for a struct or enum stored as one attribute.
//! The generated code lists fields and variants; the map walking, defaults and error
//! paths are `dynamo_model::__private` functions (`dynamo-model/src/attribute.rs`).

use crate::check::{self, AttributeModel, Field, Shape, Variant, VariantKind};
use crate::ctxt::Ctxt;
use crate::expand::entity::{codec_assertion, compression, field_default};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::DeriveInput;

pub fn expand(input: &DeriveInput) -> Result<TokenStream, Vec<syn::Error>> {
    let mut cx = Ctxt::default();
    let model = check::attribute(&mut cx, input);
    cx.check()?;
    let Some(model) = model else {
        return Err(vec![syn::Error::new_spanned(
            &input.ident,
            "invalid #[derive(Attribute)] input",
        )]);
    };
    Ok(generate(&model))
}

fn generate(m: &AttributeModel) -> TokenStream {
    let dm = quote!(::dynamo_model);
    let private = quote!(#dm::__private);
    let ident = &m.ident;
    let mut generics = m.generics.clone();
    // Every type parameter is stored as an attribute value (serde's approach to bounds).
    let params: Vec<syn::Ident> = generics.type_params().map(|p| p.ident.clone()).collect();
    {
        let clause = generics.make_where_clause();
        for p in &params {
            clause
                .predicates
                .push(syn::parse_quote!(#p: #dm::AttrValue));
        }
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();

    let body = match &m.shape {
        Shape::Newtype(ty) => quote_spanned! {ty.span()=>
            fn to_attr(&self) -> ::core::result::Result<#private::Av, #private::EncodeError> {
                <#ty as #dm::AttrValue>::to_attr(&self.0)
            }
            fn to_attr_opt(&self) -> ::core::result::Result<::core::option::Option<#private::Av>, #private::EncodeError> {
                <#ty as #dm::AttrValue>::to_attr_opt(&self.0)
            }
            fn from_attr(value: #private::Av) -> ::core::result::Result<Self, #dm::DecodeErrorKind> {
                <#ty as #dm::AttrValue>::from_attr(value).map(Self)
            }
            fn from_missing() -> ::core::result::Result<Self, #dm::DecodeErrorKind> {
                <#ty as #dm::AttrValue>::from_missing().map(Self)
            }
        },
        Shape::Struct { fields, default } => {
            let map = format_ident!("__map");
            let puts = put_members(fields, &map, |f| {
                let fi = &f.ident;
                quote!(&self.#fi)
            });
            let capacity = fields.iter().filter(|f| !f.attrs.skip).count();
            let takes = take_members(fields, &map, default);
            quote! {
                fn to_attr(&self) -> ::core::result::Result<#private::Av, #private::EncodeError> {
                    let mut __members = #private::Map::with_capacity(#capacity);
                    let #map = &mut __members;
                    #(#puts)*
                    ::core::result::Result::Ok(#private::Av::M(__members))
                }
                fn from_attr(value: #private::Av) -> ::core::result::Result<Self, #dm::DecodeErrorKind> {
                    let mut #map = #private::into_map(value)?;
                    let #map = &mut #map;
                    ::core::result::Result::Ok(Self { #(#takes)* })
                }
            }
        }
        Shape::Enum(variants) => enum_body(variants),
    };
    let map_marker = matches!(m.shape, Shape::Struct { .. }).then(
        || quote!(impl #impl_generics #dm::MapAttribute for #ident #ty_generics #where_clause {}),
    );
    let (members_struct, members_impl) = crate::expand::members::members(m, &generics);
    // Fields of the struct and of struct variants naming a codec whose feature is off.
    let codec_assertions = match &m.shape {
        Shape::Struct { fields, .. } => fields.iter().collect::<Vec<_>>(),
        Shape::Enum(variants) => variants
            .iter()
            .flat_map(|v| match &v.kind {
                VariantKind::Struct(fields) => fields.iter().collect::<Vec<_>>(),
                _ => Vec::new(),
            })
            .collect(),
        Shape::Newtype(_) => Vec::new(),
    }
    .into_iter()
    .filter_map(|f| {
        f.attrs
            .compress
            .as_ref()
            .map(|c| codec_assertion(&f.ident, c))
    })
    .collect::<Vec<_>>();
    let codec_assertions =
        (!codec_assertions.is_empty()).then(|| quote!(const _: () = { #(#codec_assertions)* };));
    // The stored type, for the schema exports: a map for a struct, a string for a unit
    // variant, a map for any other variant.
    let stored_type = match &m.shape {
        Shape::Newtype(ty) => quote!(<#ty as #dm::AttrValue>::__DYNAMO_TYPE),
        Shape::Struct { .. } => quote!(::core::option::Option::Some("M")),
        Shape::Enum(variants) => {
            let units = variants
                .iter()
                .filter(|v| matches!(v.kind, VariantKind::Unit))
                .count();
            if units == variants.len() {
                quote!(::core::option::Option::Some("S"))
            } else if units == 0 {
                quote!(::core::option::Option::Some("M"))
            } else {
                quote!(::core::option::Option::None)
            }
        }
    };
    // The entity derive's names for the runtime, which the shared helpers
    // (`compression`, `codec_assertion`) emit.
    let runtime_names = crate::expand::entity::runtime_names();
    quote! {
        #members_struct
        const _: () = {
            #runtime_names
            #members_impl

            impl #impl_generics #dm::AttrValue for #ident #ty_generics #where_clause {
                const __DYNAMO_TYPE: ::core::option::Option<&'static str> = #stored_type;
                #body
            }
            #map_marker
            #codec_assertions
        };
    }
}

/// Statements writing each stored field into `map` (a `&mut Map` or a `Map`), where
/// `access` is how a field's value is reached.
fn put_members(
    fields: &[Field],
    map: &syn::Ident,
    access: impl Fn(&Field) -> TokenStream,
) -> Vec<TokenStream> {
    let private = quote!(::dynamo_model::__private);
    fields
        .iter()
        .filter(|f| !f.attrs.skip)
        .map(|f| {
            let (ty, name, value) = (&f.ty, &f.name, access(f));
            let put = if let Some(c) = &f.attrs.compress {
                let c = compression(c);
                if f.attrs.serde_codec {
                    quote_spanned!(ty.span()=> #private::put_compressed_serde_member::<#ty>(#map, #name, #value, #c)?;)
                } else {
                    quote_spanned!(ty.span()=> #private::put_compressed_member::<#ty>(#map, #name, #value, #c)?;)
                }
            } else if f.attrs.serde_codec {
                quote_spanned!(ty.span()=> #private::put_serde_member::<#ty>(#map, #name, #value)?;)
            } else {
                quote_spanned!(ty.span()=> #private::put_member::<#ty>(#map, #name, #value)?;)
            };
            match &f.attrs.skip_serializing_if {
                Some(pred) => quote!(if !#pred(#value) { #put }),
                None => put,
            }
        })
        .collect()
}

/// `field: value,` initialisers taking each field out of `map` (a `&mut Map`).
fn take_members(
    fields: &[Field],
    map: &syn::Ident,
    container_default: &Option<Option<syn::Path>>,
) -> Vec<TokenStream> {
    let private = quote!(::dynamo_model::__private);
    fields
        .iter()
        .map(|f| {
            let (fi, ty, name) = (&f.ident, &f.ty, &f.name);
            let default = field_default(fi, &f.attrs.default, container_default);
            if f.attrs.skip {
                let default = default.unwrap_or(quote!(::core::default::Default::default));
                return quote!(#fi: #default(),);
            }
            let default = match default {
                Some(default) => quote!(::core::option::Option::Some(#default)),
                None => quote!(::core::option::Option::None),
            };
            if let Some(c) = &f.attrs.compress {
                let c = compression(c);
                if f.attrs.serde_codec {
                    quote_spanned!(ty.span()=> #fi: #private::take_compressed_serde_member::<#ty>(#map, #name, #c, #default)?,)
                } else {
                    quote_spanned!(ty.span()=> #fi: #private::take_compressed_member::<#ty>(#map, #name, #c, #default)?,)
                }
            } else if f.attrs.serde_codec {
                quote_spanned!(ty.span()=> #fi: #private::take_serde_member::<#ty>(#map, #name, #default)?,)
            } else {
                quote_spanned!(ty.span()=> #fi: #private::take_member::<#ty>(#map, #name, #default)?,)
            }
        })
        .collect()
}

fn enum_body(variants: &[Variant]) -> TokenStream {
    let dm = quote!(::dynamo_model);
    let private = quote!(#dm::__private);
    let map = format_ident!("__map");
    let items = format_ident!("__items");
    let encodes = variants.iter().map(|v| {
        let (vi, name) = (&v.ident, &v.name);
        match &v.kind {
            VariantKind::Unit => quote!(Self::#vi => ::core::result::Result::Ok(#private::unit_variant(#name)),),
            VariantKind::Newtype(ty) => quote_spanned! {ty.span()=>
                Self::#vi(__v) => #private::newtype_variant::<#ty>(#name, __v),
            },
            VariantKind::Tuple(types) => {
                let bindings: Vec<syn::Ident> =
                    (0..types.len()).map(|i| format_ident!("__v{}", i)).collect();
                let len = types.len();
                let pushes = types.iter().zip(&bindings).map(|(ty, b)| {
                    quote_spanned!(ty.span()=> #private::push_item::<#ty>(#items, #b)?;)
                });
                quote! {
                    Self::#vi(#(#bindings),*) => #private::tuple_variant(#name, #len, |#items| {
                        #(#pushes)*
                        ::core::result::Result::Ok(())
                    }),
                }
            }
            VariantKind::Struct(fields) => {
                let bindings = fields.iter().map(|f| &f.ident);
                let capacity = fields.iter().filter(|f| !f.attrs.skip).count();
                let puts = put_members(fields, &map, |f| {
                    let fi = &f.ident;
                    quote!(#fi)
                });
                quote! {
                    #[allow(unused_variables)]
                    Self::#vi { #(#bindings),* } => #private::struct_variant(#name, #capacity, |#map| {
                        #(#puts)*
                        ::core::result::Result::Ok(())
                    }),
                }
            }
        }
    });
    let decodes = variants.iter().map(|v| {
        let (vi, name) = (&v.ident, &v.name);
        match &v.kind {
            VariantKind::Unit => {
                quote!(#name => #private::unit_value(#name, __value).map(|()| Self::#vi),)
            }
            VariantKind::Newtype(ty) => quote_spanned! {ty.span()=>
                #name => #private::newtype_value::<#ty>(#name, __value).map(Self::#vi),
            },
            VariantKind::Tuple(types) => {
                let len = types.len();
                let nexts = types.iter().enumerate().map(
                    |(i, ty)| quote_spanned!(ty.span()=> #private::next_item::<#ty>(#items, #i)?),
                );
                quote! {
                    #name => #private::tuple_value(#name, __value, #len, |#items| {
                        ::core::result::Result::Ok(Self::#vi(#(#nexts),*))
                    }),
                }
            }
            VariantKind::Struct(fields) => {
                let takes = take_members(fields, &map, &None);
                quote! {
                    #name => #private::struct_value(#name, __value, |#map| {
                        ::core::result::Result::Ok(Self::#vi { #(#takes)* })
                    }),
                }
            }
        }
    });
    let names = variants.iter().map(|v| &v.name);
    let encode = if variants.is_empty() {
        // An uninhabited enum has no value to encode.
        quote!(match *self {})
    } else {
        quote!(match self { #(#encodes)* })
    };
    quote! {
        fn to_attr(&self) -> ::core::result::Result<#private::Av, #private::EncodeError> {
            #encode
        }
        fn from_attr(value: #private::Av) -> ::core::result::Result<Self, #dm::DecodeErrorKind> {
            let (__name, __value) = #private::split_variant(value)?;
            match __name.as_str() {
                #(#decodes)*
                _ => {
                    let _ = __value;
                    ::core::result::Result::Err(#private::unknown_variant(__name, &[#(#names),*]))
                }
            }
        }
    }
}
