//! `#[derive(Entity)]`: `impl Entity`, the typed key constructor, typed field paths, and
//! compile-time assertions against the table declaration.
//!
//! One module per concern: `assertions` (const assertions against the table), `key` (key
//! rendering and constructors), `index_key` (index keys written with the item), `codec`
//! (item encoding and decoding), `paths` (typed attribute paths), `sort_chain` and
//! `index_query` (typed queries), `registration` (the entity's runtime registration),
//! `args` (constructor arguments). This module assembles them.

mod args;
mod assertions;
mod auto;
mod codec;
#[cfg(test)]
mod expansion_size;
mod index_key;
mod index_query;
mod key;
mod paths;
mod registration;
mod sort_chain;
mod unique;
mod validate;

use crate::check::{self, EntityModel, Field};
use crate::ctxt::Ctxt;
pub(crate) use crate::names::{index_rust_name, pascal_case};
use crate::template::{Bucket, Segment, Template};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{DeriveInput, Ident, LitStr};

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
    let index = index_key::index_code(m);
    let (fields_struct, fields_fn) = paths::paths(m);
    let key::KeyConstructors {
        definitions,
        key_from,
        key_fn,
        partition_fn,
        random_fns,
    } = key::constructors(m);
    let positions = &index.positions;
    let positions = (!positions.is_empty()).then(|| quote!(impl #ident { #(#positions)* }));
    let sk_chain = m.sk.as_ref().map(|(t, lit)| {
        let chain = format_ident!("{}Sk", ident);
        sort_chain::sort_key_chain(
            m,
            t,
            lit,
            &chain,
            &format_ident!("sk"),
            (&quote!(::dynamo_model::Primary), &quote!(__dm::Primary)),
            false,
            // The delimiter of the entity's key templates, a constant of its `const` block.
            &quote!(__DELIMITER),
        )
    });
    let queries: Vec<Items> = sk_chain
        .into_iter()
        .chain(
            m.indexes
                .iter()
                .enumerate()
                .map(|(n, i)| index_query::index_query(m, n, i)),
        )
        .collect();
    let query_defs = queries.iter().map(|i| &i.defs);
    let query_methods = queries.iter().map(|i| &i.methods);
    let query_bodies = queries.iter().map(|i| &i.body);
    let impls = impls(m, &index);
    let unique_lookups = unique::unique_lookups(m);
    let runtime_names = runtime_names();
    quote! {
        #fields_struct
        #definitions
        #(#query_defs)*

        #positions

        const _: () = {
            #runtime_names

            #key_from

            impl #ident {
                #key_fn
                #fields_fn
                #partition_fn
                #random_fns
                #unique_lookups
                #(#query_methods)*
            }

            #(#query_bodies)*

            #impls
        };
    }
}

/// The names the code in a derive's `const` block uses (serde_derive's habit: short
/// names in a scope users never see): `__dm` for the runtime, `__p` for its `__private`
/// module, and (`__private::names`) `core`'s `Some`, `None` and `Ok`, which a user's
/// items of those names cannot shadow there (not `Option` or `Result`: an entity may have
/// either name), with the traits of the registration's type probes. The types users name
/// are defined outside the block, with full paths.
pub(crate) fn runtime_names() -> TokenStream {
    quote! {
        #[allow(unused_imports)]
        use ::dynamo_model::{self as __dm, __private as __p};
        #[allow(unused_imports)]
        use ::dynamo_model::__private::names::*;
    }
}

/// `::dynamo_model` in the entity's `const` block.
pub(crate) fn dm() -> TokenStream {
    quote!(__dm)
}

/// `::dynamo_model::__private` in the entity's `const` block.
pub(crate) fn private() -> TokenStream {
    quote!(__p)
}

/// Items of one concern: the type definitions users name (at the entity's module level),
/// the entity's inherent methods (one `impl` for all concerns) and the rest (in the
/// entity's `const` block, see [`dm`]).
#[derive(Default)]
pub(super) struct Items {
    pub defs: TokenStream,
    pub methods: TokenStream,
    pub body: TokenStream,
}

impl Items {
    /// The items after a definition and methods of their own concern (an index's
    /// partition struct and constructor before its sort chain).
    pub(super) fn after(self, defs: TokenStream, methods: TokenStream) -> Items {
        let (own_defs, own_methods) = (self.defs, self.methods);
        Items {
            defs: quote!(#defs #own_defs),
            methods: quote!(#methods #own_methods),
            body: self.body,
        }
    }

    /// The items with `body` before their own body.
    pub(super) fn with_body(self, body: TokenStream) -> Items {
        let own = self.body;
        Items {
            body: quote!(#body #own),
            ..self
        }
    }
}

/// The trait impls, with the assertions against the table and the registration (the table's
/// schema and the index schemas are local constants of the entity's `const` block).
fn impls(m: &EntityModel, index: &index_key::IndexCode) -> TokenStream {
    let table = &m.table;
    let dm = dm();
    let consts = &index.consts;
    let template_consts = index_key::template_consts(m);
    let assertions = assertions::assertions(m);
    let registration = registration::registration(m);
    let entity_impl = entity_impl(m, index);
    let internals_impl = internals_impl(m, index);
    let (_, versioned_impl) = codec::history_items(m);
    // The index schemas are `&'static` borrows of it.
    let schema_ref =
        (!m.indexes.is_empty()).then(|| quote!(static __SCHEMA_REF: #dm::TableSchema = __SCHEMA;));
    // The TTL attribute, for a TTL field and the assertions of aliases and history.
    let uses_ttl = m.versioned.is_some()
        || m.fields
            .iter()
            .any(|f| f.attrs.ttl || !f.attrs.aliases.is_empty());
    let ttl_attr = uses_ttl.then(|| {
        quote! {
            const __TTL_ATTR: &str = match __SCHEMA.ttl {
                Some(ttl) => ttl,
                None => "",
            };
        }
    });
    quote! {
        const __SCHEMA: #dm::TableSchema = <#table as #dm::Table>::SCHEMA;
        #schema_ref
        #ttl_attr
        #(#consts)*
        #template_consts
        const _: () = {
            use __dm::generated::assert as __assert;
            #(#assertions)*
        };

        #registration

        #entity_impl

        #versioned_impl

        #internals_impl
    }
}

/// `impl Entity`.
fn entity_impl(m: &EntityModel, index: &index_key::IndexCode) -> TokenStream {
    let (ident, table, entity_type) = (&m.ident, &m.table, &m.entity_type);
    let dm = dm();
    let attribute_names = codec::attribute_names(m);
    // The trait's default is the table's `identify = "keys"`.
    let identify_by_keys = m.identify_by_keys.then(|| {
        quote!(
            const __IDENTIFY_BY_KEYS: bool = true;
        )
    });
    let version_items = codec::version_items(m);
    // The trait's defaults are the table's `write_type` and `write_token`.
    let writes_type = m.no_write_type.as_ref().map(|_| {
        quote!(
            const __WRITES_ENTITY_TYPE: bool = false;
        )
    });
    let writes_token = m.no_write_token.as_ref().map(|_| {
        quote!(
            const __WRITES_TOKEN: bool = false;
        )
    });
    let to_item = codec::to_item(m, index);
    let from_item = codec::from_item(m, &index.attributes);
    quote! {
        impl #dm::Entity for #ident {
            type Table = #table;
            const ENTITY_TYPE: &'static str = #entity_type;
            const ATTRIBUTES: &'static [&'static str] = #attribute_names;
            #identify_by_keys
            #writes_type
            #writes_token
            #version_items

            #[inline]
            fn to_item(&self) -> ::core::result::Result<#dm::Item, #dm::Error> {
                #to_item
            }

            #[inline]
            fn from_item(mut item: #dm::Item) -> ::core::result::Result<Self, #dm::DecodeError> {
                #from_item
            }
        }
    }
}

/// `impl EntityInternals`: what the runtime needs of the entity and users never call.
fn internals_impl(m: &EntityModel, index: &index_key::IndexCode) -> TokenStream {
    let ident = &m.ident;
    let (dm, private) = (dm(), private());
    let alias_items = codec::alias_items(m);
    let (history_items, _) = codec::history_items(m);
    let chunk_items = codec::chunk_items(m);
    let key_field_items = codec::key_field_items(m);
    let validate_items = validate::validate_items(m);
    let auto_items = auto::auto_items(m);
    // The attributes the runtime seals after encoding and opens before decoding.
    let encrypted: Vec<&String> = m
        .fields
        .iter()
        .filter(|f| f.attrs.encrypt.is_some())
        .map(|f| &f.name)
        .collect();
    let encrypted_items = (!encrypted.is_empty())
        .then(|| quote!(const __ENCRYPTED: &'static [&'static str] = &[#(#encrypted),*];));
    let unique_items = unique::unique_const(m);
    let (index_keys, index_renders, index_updates) = (&index.keys, &index.renders, &index.updates);
    let (pk_out, sk_out) = key::key_outs();
    let (ipk, isk) = index_key::index_outs();
    let render_primary_key = key::render_primary_key(m);
    // Indexes with key templates (the trait's defaults without): their key attributes and
    // their rendering from the item (`__ipk`, `__isk` may go unused: their names start
    // with `_`).
    let index_items = (!index_renders.is_empty()).then(|| {
        quote! {
            const __INDEX_KEYS: &'static [#private::IndexKeyAttributes] = &[#(#index_keys),*];

            #[inline]
            fn __render_index_key(
                &self,
                index: usize,
                #ipk: &mut ::std::string::String,
                #isk: &mut ::std::string::String,
            ) -> ::core::result::Result<bool, #dm::key::KeyError> {
                match index {
                    #(#index_renders)*
                    _ => Ok(false),
                }
            }
        }
    });
    let index_templates = (!index_updates.is_empty()).then(|| {
        quote!(const __INDEX_TEMPLATES: &'static [#private::IndexTemplate] = &[#(#index_updates),*];)
    });
    quote! {
        impl #private::EntityInternals for #ident {
            #alias_items
            #history_items
            #chunk_items
            #key_field_items
            #index_items
            #validate_items
            #auto_items
            #encrypted_items
            #unique_items

            #[inline]
            fn __render_primary_key(
                &self,
                #pk_out: &mut ::std::string::String,
                #sk_out: &mut ::std::string::String,
            ) -> ::core::result::Result<(), #dm::key::KeyError> {
                #render_primary_key
            }

            #index_templates
        }
    }
}

/// The table's path as written, for messages: `crate::App`.
pub(crate) fn table_name(m: &EntityModel) -> String {
    m.table.to_token_stream().to_string().replace(' ', "")
}

/// A message for `panic!` in a const assertion (a literal format string, so braces are escaped).
pub(crate) fn const_panic(span: Span, message: String) -> TokenStream {
    let lit = LitStr::new(&message.replace('{', "{{").replace('}', "}}"), span);
    quote_spanned!(span=> ::core::panic!(#lit))
}

/// The name of the `dynamo_model::key::Delimiter` constant for a supported delimiter.
pub(crate) fn delimiter_const(c: char) -> Ident {
    let name = match c {
        '.' => "DOT",
        '_' => "UNDERSCORE",
        '|' => "PIPE",
        ':' => "COLON",
        _ => "HASH",
    };
    format_ident!("{}", name)
}

/// The delimiter of templates that declare `declared`, or else the table's.
pub(crate) fn delimiter_expr(declared: Option<char>, table: &syn::Path) -> TokenStream {
    match declared {
        Some(c) => {
            let name = delimiter_const(c);
            quote!(__dm::key::Delimiter::#name)
        }
        None => quote!(<#table as __dm::Table>::DELIMITER),
    }
}

/// The runtime type of a time bucket.
pub(crate) fn bucket_type(bucket: Bucket) -> TokenStream {
    let ident = format_ident!("{}", bucket.type_name());
    quote!(__dm::key::computed::#ident)
}

/// The function giving a missing field's value, as serde has it: the field's own
/// `default` (`Default::default()` or `default = "path"`), else the field of the
/// container's `default` value (`Self::default()` or the container's `default = "path"`).
/// A closure capturing nothing, so it is a `fn() -> T`.
pub(crate) fn field_default(
    field: &Ident,
    own: &Option<Option<syn::Path>>,
    container: &Option<Option<syn::Path>>,
) -> Option<TokenStream> {
    match (own, container) {
        (Some(Some(path)), _) => Some(quote!(#path)),
        (Some(None), _) => Some(quote!(::core::default::Default::default)),
        (None, Some(Some(path))) => Some(quote!((|| #path().#field))),
        (None, Some(None)) => {
            Some(quote!((|| <Self as ::core::default::Default>::default().#field)))
        }
        (None, None) => None,
    }
}

pub(crate) fn field<'a>(m: &'a EntityModel, name: &str) -> &'a Field {
    // Template fields were checked to exist in `check::entity`.
    m.field(name).unwrap_or_else(|| &m.fields[0])
}

/// The name of the entity's hidden constant holding the position of its `n`-th index in
/// the table's declaration.
pub(crate) fn position_const(n: usize) -> Ident {
    format_ident!("__INDEX_POSITION_{}", n)
}

/// The template's leading literal and whether the template has no placeholder at all.
pub(crate) fn template_root(t: &Template) -> (String, bool) {
    let lead = match t.segments.first() {
        Some(Segment::Lit(l)) => l.clone(),
        _ => String::new(),
    };
    (lead, t.is_constant())
}

/// The type a key argument takes for field `f`: the field type for the primary key, the
/// present value's type for an index (whose fields may be `Option`: sparse indexes).
pub(crate) fn key_type(f: &Field, index: bool) -> TokenStream {
    let ty = &f.ty;
    let plain = if index {
        quote_spanned!(ty.span()=> <#ty as __p::OptionalKeyPart>::Part)
    } else {
        quote!(#ty)
    };
    match &f.attrs.key_format {
        Some(format) => {
            let marker = &format.marker;
            quote_spanned!(ty.span()=> __dm::key::format::Formatted<#plain, #marker>)
        }
        None => plain,
    }
}

/// The attribute type of a field with a key format: `Formatted<T, F>`, or
/// `FormattedOption<T, F>` for an `Option<T>` field (its attribute, conditions and
/// updates are in the format's attribute form). `None` without a key format.
pub(crate) fn formatted_attr_type(f: &Field) -> Option<TokenStream> {
    let marker = &f.attrs.key_format.as_ref()?.marker;
    let ty = &f.ty;
    let present = present_type(ty);
    Some(if std::ptr::eq(present, ty) {
        quote_spanned!(ty.span()=> ::dynamo_model::key::format::Formatted<#ty, #marker>)
    } else {
        quote_spanned!(ty.span()=> ::dynamo_model::key::format::FormattedOption<#present, #marker>)
    })
}

/// `Option<T>` → `T` (syntactically): multi-attribute key arguments take present values.
pub(crate) fn present_type(ty: &syn::Type) -> &syn::Type {
    if let syn::Type::Path(p) = ty {
        if let Some(last) = p.path.segments.last() {
            if last.ident == "Option" {
                if let syn::PathArguments::AngleBracketed(args) = &last.arguments {
                    if let Some(syn::GenericArgument::Type(inner)) = args.args.first() {
                        return inner;
                    }
                }
            }
        }
    }
    ty
}

/// `&Compression { .. }` for a compressed field (a constant, promoted to `'static`).
pub(crate) fn compression(c: &crate::attr::Compress) -> TokenStream {
    let private = private();
    let level = c.level;
    let codec = match c.codec {
        crate::attr::CodecName::Zstd => quote!(#private::Codec::Zstd { level: #level }),
        crate::attr::CodecName::Gzip => {
            let level = level as u32;
            quote!(#private::Codec::Gzip { level: #level })
        }
    };
    let threshold = match c.threshold {
        Some(n) => quote!(#n),
        None => quote!(__dm::compress::DEFAULT_THRESHOLD),
    };
    let max_size = match c.max_size {
        Some(n) => quote!(#n),
        None => quote!(__dm::compress::DEFAULT_MAX_SIZE),
    };
    quote!(&#private::Compression { codec: #codec, threshold: #threshold, max_size: #max_size })
}

/// A statement failing compilation, at the codec's name, when the codec's feature of
/// dynamo-model is off.
pub(crate) fn codec_assertion(field: &Ident, c: &crate::attr::Compress) -> TokenStream {
    let private = private();
    let name = c.codec.name();
    let available = match c.codec {
        crate::attr::CodecName::Zstd => quote!(#private::ZSTD_AVAILABLE),
        crate::attr::CodecName::Gzip => quote!(#private::GZIP_AVAILABLE),
    };
    let p = const_panic(
        c.codec_lit.span(),
        format!(
            "field `{field}` is compressed with {name}, but feature `{name}` of dynamo-model is off: enable it (dynamo-model = {{ features = [\"{name}\"] }})"
        ),
    );
    quote!(if !#available { #p })
}
