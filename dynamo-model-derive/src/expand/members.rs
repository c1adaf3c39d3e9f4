//! The typed member paths of a `#[derive(Attribute)]` struct: `{Type}AttributeFields`,
//! one `NestedPath` per stored member, and `impl Members`, which `Path::fields` reads.

use crate::check::{AttributeModel, Field, Shape};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// The struct (defined beside the type, where users name it) and the `Members` impl
/// (inside the derive's `const` block) of a struct with named fields; nothing for another
/// shape. `generics` are the type's, with their bounds.
pub fn members(m: &AttributeModel, generics: &syn::Generics) -> (TokenStream, TokenStream) {
    let Shape::Struct { fields, .. } = &m.shape else {
        return (TokenStream::new(), TokenStream::new());
    };
    let dm = quote!(::dynamo_model);
    let (ident, vis) = (&m.ident, &m.vis);
    let paths = format_ident!("{}AttributeFields", ident);
    // Compressed members hold bytes, not their value: no path into them.
    let pathed: Vec<&Field> = fields
        .iter()
        .filter(|f| !f.attrs.skip && f.attrs.compress.is_none())
        .collect();
    let decls = pathed.iter().map(|f| {
        let (fi, ty) = (&f.ident, &f.ty);
        let value = if f.attrs.serde_codec {
            quote!(#dm::Serde<#ty>)
        } else {
            quote!(#ty)
        };
        let doc = format!("Path of member `{}`.", f.name);
        quote!(#[doc = #doc] pub #fi: #dm::NestedPath<__E, #value, __M>,)
    });
    let inits = pathed.iter().map(|f| {
        let (fi, name) = (&f.ident, &f.name);
        quote!(#fi: #dm::NestedPath::__member(__parent, #name),)
    });
    let idents: Vec<&syn::Ident> = pathed.iter().map(|f| &f.ident).collect();
    let labels = idents
        .iter()
        .map(|i| i.to_string().trim_start_matches("r#").to_owned());
    let params: Vec<&syn::Ident> = generics.type_params().map(|p| &p.ident).collect();
    // The type's own parameters with their bounds (a member may be `K::Value`).
    let bounded = generics.type_params();
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    // A marker only where a parameter could be unused (no member, or the type's own
    // parameters only in skipped members), so that a misspelt member's error lists the
    // members alone.
    let (marker_decl, marker_init) = if pathed.is_empty() || !params.is_empty() {
        (
            quote!(__marker: ::core::marker::PhantomData<fn() -> (__E, __M, #(#params),*)>,),
            quote!(__marker: ::core::marker::PhantomData),
        )
    } else {
        (TokenStream::new(), TokenStream::new())
    };
    let doc = format!(
        "Typed paths of the members of [`{ident}`] (`path.fields()` on a path holding one), for conditions and updates."
    );
    let name = paths.to_string();
    // Clone and Debug whatever the entity and the type's parameters are: a path holds
    // neither, only their types.
    let bounded: Vec<_> = bounded.collect();
    (
        quote! {
            #[doc = #doc]
            #vis struct #paths<__E, __M, #(#bounded),*> #where_clause {
                #(#decls)*
                #marker_decl
            }
            impl<__E, __M, #(#bounded),*> ::core::clone::Clone for #paths<__E, __M, #(#params),*> #where_clause {
                fn clone(&self) -> Self {
                    #paths { #(#idents: self.#idents.clone(),)* #marker_init }
                }
            }
            impl<__E, __M, #(#bounded),*> ::core::fmt::Debug for #paths<__E, __M, #(#params),*> #where_clause {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    f.debug_struct(#name) #(.field(#labels, &self.#idents))* .finish()
                }
            }
        },
        quote! {
            impl #impl_generics #dm::Members for #ident #ty_generics #where_clause {
                type Paths<__E, __M> = #paths<__E, __M, #(#params),*>;
                fn __paths<__E, __M>(__parent: &#dm::AttrPath) -> Self::Paths<__E, __M> {
                    #paths { #(#inits)* #marker_init }
                }
            }
        },
    )
}
