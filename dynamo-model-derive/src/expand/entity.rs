//! `#[derive(Entity)]`: `impl Entity`, the typed key constructor, typed field paths, and
//! compile-time checks against the table declaration.

use crate::check::{self, EntityModel, Field};
use crate::ctxt::Ctxt;
use crate::template::{Segment, Template};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{DeriveInput, Ident, LitStr};

/// A message for `panic!` in a const assertion (a literal format string, so braces are escaped).
fn const_panic(span: Span, message: String) -> TokenStream {
    let lit = LitStr::new(&message.replace('{', "{{").replace('}', "}}"), span);
    quote_spanned!(span=> ::core::panic!(#lit))
}

/// Code that appends a rendered template to `out`. `part` produces the code for one field.
fn render(
    template: &Template,
    out: &Ident,
    part: impl Fn(&str, &Ident) -> TokenStream,
) -> TokenStream {
    let steps = template.segments.iter().map(|segment| match segment {
        Segment::Lit(lit) => quote!(#out.push_str(#lit);),
        Segment::Field(name) => part(name, out),
    });
    quote!(#(#steps)*)
}

pub fn expand(input: &DeriveInput) -> Result<TokenStream, Vec<syn::Error>> {
    let mut cx = Ctxt::default();
    let model = check::entity(&mut cx, input);
    cx.check()?;
    let Some(model) = model else {
        return Err(vec![syn::Error::new_spanned(
            &input.ident,
            "invalid entity",
        )]);
    };
    Ok(generate(&model))
}

fn generate(m: &EntityModel) -> TokenStream {
    let ident = &m.ident;
    let vis = &m.vis;
    let table = &m.table;
    let table_name = table.to_token_stream().to_string().replace(' ', "");
    let entity_type = &m.entity_type;
    let has_sk = m.sk.is_some();
    let dm = quote!(::dynamo_model);
    let private = quote!(#dm::__private);

    // ---- compile-time checks against the table declaration
    let mut checks = Vec::new();
    let (pk_lit, sk_lit) = (&m.pk.1, m.sk.as_ref().map(|s| &s.1));
    match sk_lit {
        Some(lit) => {
            let p = const_panic(
                lit.span(),
                format!("table `{table_name}` has no sort key: remove `sk`"),
            );
            checks.push(quote!(if __SCHEMA.sk.is_none() { #p }));
        }
        None => {
            let p = const_panic(
                pk_lit.span(),
                format!("table `{table_name}` has a sort key: add an `sk` template (a literal like \"PROFILE\" is fine)"),
            );
            checks.push(quote!(if __SCHEMA.sk.is_some() { #p }));
        }
    }
    for f in m.fields.iter().filter(|f| !f.attrs.skip) {
        let name = &f.name;
        let p = const_panic(
            f.ident.span(),
            format!(
                "field `{}` would be stored as attribute `{name}`, which table `{table_name}` uses for a key or the entity type; rename it with #[serde(rename = \"...\")]",
                f.ident
            ),
        );
        checks.push(quote!(if __SCHEMA.is_reserved_attribute(#name) { #p }));
    }

    // Index attribute names, resolved at compile time (a missing index fails compilation).
    let mut index_consts = Vec::new();
    let mut index_writes = Vec::new();
    for (n, index) in m.indexes.iter().enumerate() {
        let index_name = index.index.to_string();
        let span = index.index.span();
        let missing = const_panic(
            span,
            format!("index `{index_name}` is not declared on table `{table_name}`"),
        );
        let idx = format_ident!("__INDEX_{}", n);
        index_consts.push(quote_spanned! {span=>
            const #idx: &#dm::schema::IndexSchema = match __SCHEMA_REF.index(#index_name) {
                ::core::option::Option::Some(index) => index,
                ::core::option::Option::None => #missing,
            };
        });
        let local = const_panic(span, format!("index `{index_name}` is an LSI: it uses the table's partition key, so give only `sk`"));
        let no_pk = const_panic(
            span,
            format!("index `{index_name}` is a GSI: its template needs `pk`"),
        );
        let multi = const_panic(
            span,
            format!("index `{index_name}` has a multi-attribute key: its key attributes are the entity's own fields, not a template"),
        );
        let sk_mismatch = const_panic(
            span,
            format!("the `sk` template of index `{index_name}` does not match its declaration (a template exactly when the index has one sort key attribute)"),
        );
        let has_pk_template = index.pk.is_some();
        let has_sk_template = index.sk.is_some();
        checks.push(quote! {
            match #idx.kind {
                #dm::schema::IndexKind::Local if #has_pk_template => #local,
                #dm::schema::IndexKind::Global if !#has_pk_template => #no_pk,
                _ => {}
            }
            if (#has_pk_template && #idx.pk.len() != 1) || #idx.sk.len() > 1 { #multi }
            if #has_sk_template != (#idx.sk.len() == 1) { #sk_mismatch }
        });

        let optional_part = |name: &str, out: &Ident| {
            let f = field(m, name);
            let (fi, ty) = (&f.ident, &f.ty);
            quote_spanned! {ty.span()=>
                if !<#ty as #private::OptionalKeyPart>::encode_optional_key(&self.#fi, #out)? {
                    return ::core::result::Result::Ok(false);
                }
            }
        };
        let (ipk, isk) = (format_ident!("__ipk"), format_ident!("__isk"));
        let pk_render = index.pk.as_ref().map(|t| render(&t.0, &ipk, optional_part));
        let sk_render = index.sk.as_ref().map(|t| render(&t.0, &isk, optional_part));
        let pk_attr = if has_pk_template {
            quote!(::core::option::Option::Some(#idx.pk[0].name))
        } else {
            quote!(::core::option::Option::None)
        };
        let sk_attr = if has_sk_template {
            quote!(::core::option::Option::Some(#idx.sk[0].name))
        } else {
            quote!(::core::option::Option::None)
        };
        index_writes.push(quote! {
            #private::put_index::<Self>(&mut item, #pk_attr, #sk_attr, |#ipk, #isk| {
                let _ = (&#ipk, &#isk);
                #pk_render
                #sk_render
                ::core::result::Result::Ok(true)
            })?;
        });
    }

    // ---- primary key
    let (pk_out, sk_out) = (format_ident!("__pk"), format_ident!("__sk"));
    let self_part = |name: &str, out: &Ident| {
        let f = field(m, name);
        let (fi, ty) = (&f.ident, &f.ty);
        quote_spanned!(ty.span()=> <#ty as #private::KeyPart>::encode_key(&self.#fi, #out)?;)
    };
    let arg_part = |name: &str, out: &Ident| {
        let f = field(m, name);
        let (fi, ty) = (&f.ident, &f.ty);
        quote_spanned!(ty.span()=> #private::KeyArg::<#ty>::encode_key_arg(&#fi, #out)?;)
    };
    let pk_self = render(&m.pk.0, &pk_out, self_part);
    let sk_self = m.sk.as_ref().map(|s| render(&s.0, &sk_out, self_part));
    let pk_args = render(&m.pk.0, &pk_out, arg_part);
    let sk_args = m.sk.as_ref().map(|s| render(&s.0, &sk_out, arg_part));
    let params = m.key_params();
    let param_decls = params.iter().map(|f| {
        let (fi, ty) = (&f.ident, &f.ty);
        quote!(#fi: impl #private::KeyArg<#ty>)
    });
    let key_doc = format!(
        "The key of the [`{ident}`] item with these key fields (`pk = {:?}`{}).",
        m.pk.1.value(),
        m.sk.as_ref()
            .map(|s| format!(", `sk = {:?}`", s.1.value()))
            .unwrap_or_default()
    );

    // ---- fields
    let stored: Vec<&Field> = m.fields.iter().filter(|f| !f.attrs.skip).collect();
    let capacity = stored.len() + 3 + 2 * m.indexes.len();
    let encode_fields = stored.iter().map(|f| {
        let (fi, ty, name) = (&f.ident, &f.ty, &f.name);
        let put = if f.attrs.serde_codec {
            quote_spanned!(ty.span()=> #private::put_serde_field::<Self, #ty>(&mut item, #name, &self.#fi)?;)
        } else {
            quote_spanned!(ty.span()=> #private::put_field::<Self, #ty>(&mut item, #name, &self.#fi)?;)
        };
        match &f.attrs.skip_serializing_if {
            Some(pred) => quote!(if !#pred(&self.#fi) { #put }),
            None => put,
        }
    });
    let decode_fields = m.fields.iter().map(|f| {
        let (fi, ty, name) = (&f.ident, &f.ty, &f.name);
        let default = match &f.attrs.default {
            Some(Some(path)) => Some(quote!(#path)),
            Some(None) => Some(quote!(::core::default::Default::default)),
            None if m.serde_default => Some(quote!(::core::default::Default::default)),
            None => None,
        };
        if f.attrs.skip {
            let default = default.unwrap_or(quote!(::core::default::Default::default));
            return quote!(#fi: #default(),);
        }
        let take = if f.attrs.serde_codec {
            quote_spanned!(ty.span()=> #private::take_serde_field::<Self, #ty>)
        } else {
            quote_spanned!(ty.span()=> #private::take_field::<Self, #ty>)
        };
        match default {
            Some(default) => {
                quote!(#fi: #take(&mut item, #name, ::core::option::Option::Some(#default))?,)
            }
            None => quote!(#fi: #take(&mut item, #name, ::core::option::Option::None)?,),
        }
    });
    let key_fields: Vec<&String> = m
        .fields
        .iter()
        .filter(|f| f.in_primary_key)
        .map(|f| &f.name)
        .collect();
    let index_fields: Vec<&String> = m
        .fields
        .iter()
        .filter(|f| f.in_index_key)
        .map(|f| &f.name)
        .collect();

    // ---- typed paths
    let fields_ident = format_ident!("{}Fields", ident);
    let path_decls = stored.iter().map(|f| {
        let (fi, ty) = (&f.ident, &f.ty);
        let value = if f.attrs.serde_codec {
            quote!(#dm::Serde<#ty>)
        } else {
            quote!(#ty)
        };
        let marker = if f.in_primary_key {
            quote!(KeyField)
        } else {
            quote!(Mutable)
        };
        let doc = format!("Path of attribute `{}`.", f.name);
        quote!(#[doc = #doc] pub #fi: #dm::Path<#ident, #value, #private::#marker>,)
    });
    let path_inits = stored.iter().map(|f| {
        let (fi, name) = (&f.ident, &f.name);
        quote!(#fi: #dm::Path::__new(#name),)
    });
    let fields_doc = format!("Typed attribute paths of [`{ident}`], for conditions and updates.");

    quote! {
        #[doc = #fields_doc]
        #[derive(Debug, Clone, Copy)]
        #vis struct #fields_ident {
            #(#path_decls)*
        }

        impl #ident {
            #[doc = #key_doc]
            #[allow(clippy::too_many_arguments)]
            #vis fn key(#(#param_decls),*) -> #dm::Key<#ident> {
                #dm::Key::__build(#has_sk, |#pk_out, #sk_out| {
                    let _ = &#sk_out;
                    #pk_args
                    #sk_args
                    ::core::result::Result::Ok(())
                })
            }

            /// Typed attribute paths of this entity's fields.
            #vis const fn fields() -> #fields_ident {
                #fields_ident { #(#path_inits)* }
            }
        }

        const _: () = {
            const __SCHEMA: #dm::TableSchema = <#table as #dm::Table>::SCHEMA;
            static __SCHEMA_REF: #dm::TableSchema = __SCHEMA;
            #(#index_consts)*
            const _: () = { #(#checks)* };

            impl #dm::Entity for #ident {
                type Table = #table;
                const ENTITY_TYPE: &'static str = #entity_type;
                const KEY_FIELDS: &'static [&'static str] = &[#(#key_fields),*];
                const INDEX_FIELDS: &'static [&'static str] = &[#(#index_fields),*];

                fn primary_key(&self) -> #dm::Key<Self> {
                    #dm::Key::__build(#has_sk, |#pk_out, #sk_out| {
                        let _ = &#sk_out;
                        #pk_self
                        #sk_self
                        ::core::result::Result::Ok(())
                    })
                }

                fn to_item(&self) -> ::core::result::Result<#dm::Item, #dm::Error> {
                    let mut item = #dm::Item::with_capacity(#capacity);
                    #private::put_key::<Self>(&mut item, #dm::Entity::primary_key(self))?;
                    #(#index_writes)*
                    #(#encode_fields)*
                    ::core::result::Result::Ok(item)
                }

                fn from_item(mut item: #dm::Item) -> ::core::result::Result<Self, #dm::DecodeError> {
                    #private::check_entity_type::<Self>(&item)?;
                    ::core::result::Result::Ok(Self {
                        #(#decode_fields)*
                    })
                }
            }
        };
    }
}

fn field<'a>(m: &'a EntityModel, name: &str) -> &'a Field {
    // Template fields were checked to exist in `check::entity`.
    m.field(name).unwrap_or_else(|| &m.fields[0])
}
