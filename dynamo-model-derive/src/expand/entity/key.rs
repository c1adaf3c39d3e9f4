//! The primary key: its rendering from the item, the key and partition constructors
//! (from arguments named after the fields), and the random-shard pickers.

use super::args::{
    constructor_args, partition_struct_doc, sharded_doc, template_doc, ArgField, Args,
};
use super::{bucket_type, field, key_delimiter, key_type, template_root};
use crate::check::{EntityModel, Field};
use crate::template::{Function, Segment, Template};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Ident;

/// Code that appends a rendered template to `out`. `part` produces the code for one
/// placeholder: a field, and the function computing the part from it (`None`: the field's
/// own encoding).
pub(super) fn render(
    template: &Template,
    out: &Ident,
    part: impl Fn(&str, Option<Function>, &Ident) -> TokenStream,
) -> TokenStream {
    render_segments(&template.segments, out, part)
}

/// [`render`] for some of a template's segments.
fn render_segments(
    segments: &[Segment],
    out: &Ident,
    part: impl Fn(&str, Option<Function>, &Ident) -> TokenStream,
) -> TokenStream {
    let steps = segments.iter().map(|segment| match segment {
        Segment::Lit(lit) => quote!(#out.push_str(#lit);),
        Segment::Field(name) => part(name, None, out),
        Segment::Computed(c) => part(&c.field, Some(c.function), out),
    });
    quote!(#(#steps)*)
}

/// Code appending one placeholder of a key template rendered from constructor arguments
/// (locals named after the fields); `index`: an index template, whose arguments take the
/// present value of an optional field; `delimiter`: the template's delimiter (an
/// expression of type `dynamo_model::key::Delimiter`).
pub(super) fn arg_part<'a>(
    m: &'a EntityModel,
    index: bool,
    delimiter: &'a TokenStream,
) -> impl Fn(&str, Option<Function>, &Ident) -> TokenStream + 'a {
    move |name, function, out| {
        let private = quote!(::dynamo_model::__private);
        let f = field(m, name);
        let (fi, ty) = (&f.ident, key_type(f, index));
        match function {
            None => {
                quote_spanned!(f.ty.span()=> #private::KeyArg::<#ty>::encode_key_arg(&#fi, #delimiter, #out)?;)
            }
            Some(Function::Shard(n)) => {
                quote_spanned!(f.ty.span()=> #private::push_shard_arg::<#ty, _>(&#fi, #n, #out)?;)
            }
            Some(Function::Random(n)) => {
                quote_spanned!(f.ty.span()=> #private::push_random_shard(&#fi, #n, #out)?;)
            }
            Some(Function::Bucket(b)) => {
                let bucket = bucket_type(b);
                quote_spanned!(f.ty.span()=> #private::push_bucket_arg::<#bucket, _>(&#fi, #out)?;)
            }
        }
    }
}

/// How a template uses each of its fields (`None`: as it is), in order of first appearance.
pub(super) fn field_uses<'a>(
    m: &'a EntityModel,
    templates: &[&Template],
) -> Vec<(&'a Field, Vec<Option<Function>>)> {
    let mut out: Vec<(&Field, Vec<Option<Function>>)> = Vec::new();
    for segment in templates.iter().flat_map(|t| &t.segments) {
        let (name, function) = match segment {
            Segment::Field(name) => (name, None),
            Segment::Computed(c) => (&c.field, Some(c.function)),
            Segment::Lit(_) => continue,
        };
        let f = field(m, name);
        match out.iter_mut().find(|(o, _)| o.ident == f.ident) {
            Some((_, uses)) => uses.push(function),
            None => out.push((f, vec![function])),
        }
    }
    out
}

/// The arguments of a partition constructor for template `t`: its fields, except those a
/// shard is computed from (the partition lists every shard instead).
pub(super) fn partition_uses<'a>(
    m: &'a EntityModel,
    t: &Template,
) -> Vec<(&'a Field, Vec<Option<Function>>)> {
    field_uses(m, &[t])
        .into_iter()
        .filter_map(|(f, uses)| {
            let uses: Vec<_> = uses
                .into_iter()
                .filter(|u| !u.is_some_and(|f| f.shards().is_some()))
                .collect();
            (!uses.is_empty()).then_some((f, uses))
        })
        .collect()
}

/// The return type and body of a partition constructor for template `t`, from arguments
/// named after the fields: a `Partition`, or a `ShardedPartition` listing every shard when
/// the template has a shard.
pub(super) fn partition_build(
    m: &EntityModel,
    t: &Template,
    index: bool,
    space: &TokenStream,
    sort: (&str, bool),
    delimiter: &TokenStream,
) -> (TokenStream, TokenStream) {
    let dm = quote!(::dynamo_model);
    let ident = &m.ident;
    let (root, fixed) = sort;
    let out = format_ident!("__pk");
    let ok = quote!(::core::result::Result::Ok(()));
    match t.shard() {
        Some((at, c)) => {
            let count = c.function.shards().unwrap_or(1);
            let before = render_segments(&t.segments[..at], &out, arg_part(m, index, delimiter));
            let after = render_segments(&t.segments[at + 1..], &out, arg_part(m, index, delimiter));
            (
                quote!(#dm::ShardedPartition<#ident, #space>),
                quote! {
                    #dm::ShardedPartition::__build(
                        #root,
                        #fixed,
                        #count,
                        |#out| { let _ = &#out; #before #ok },
                        |#out| { let _ = &#out; #after #ok },
                    )
                },
            )
        }
        None => {
            let all = render(t, &out, arg_part(m, index, delimiter));
            (
                quote!(#dm::Partition<#ident, #space>),
                quote!(#dm::Partition::__build(#root, #fixed, |#out| { let _ = &#out; #all #ok })),
            )
        }
    }
}

/// The local names of the rendered primary key.
pub(super) fn key_outs() -> (Ident, Ident) {
    (format_ident!("__pk"), format_ident!("__sk"))
}

/// Code appending one placeholder of a primary-key template rendered from the item's field.
fn self_part<'a>(
    m: &'a EntityModel,
    key_delim: &'a TokenStream,
) -> impl Fn(&str, Option<Function>, &Ident) -> TokenStream + 'a {
    let private = quote!(::dynamo_model::__private);
    move |name: &str, function: Option<Function>, out: &Ident| {
        let f = field(m, name);
        let (fi, ty) = (&f.ident, &f.ty);
        match function {
            None if f.attrs.key_format.is_some() => {
                let kty = key_type(f, false);
                quote_spanned!(ty.span()=> <#ty as #private::KeyArg<#kty>>::encode_key_arg(&self.#fi, #key_delim, #out)?;)
            }
            None => {
                quote_spanned!(ty.span()=> <#ty as #private::KeyPart>::encode_key_with(&self.#fi, #key_delim, #out)?;)
            }
            Some(Function::Shard(n)) => {
                quote_spanned!(ty.span()=> #private::push_shard::<#ty>(&self.#fi, #n, #out)?;)
            }
            Some(Function::Random(n)) => {
                quote_spanned!(ty.span()=> #private::push_random_shard::<#ty>(&self.#fi, #n, #out)?;)
            }
            Some(Function::Bucket(b)) => {
                let bucket = bucket_type(b);
                quote_spanned!(ty.span()=> #private::push_bucket::<#bucket, #ty>(&self.#fi, #out)?;)
            }
        }
    }
}

/// The body of `__render_primary_key`: both templates rendered from the item's fields.
pub(super) fn render_primary_key(m: &EntityModel) -> TokenStream {
    let key_delim = quote!(__DELIMITER);
    let (pk_out, sk_out) = key_outs();
    let pk_self = render(&m.pk.0, &pk_out, self_part(m, &key_delim));
    let sk_self =
        m.sk.as_ref()
            .map(|s| render(&s.0, &sk_out, self_part(m, &key_delim)));
    quote! {
        let _ = &#sk_out;
        #pk_self
        #sk_self
        ::core::result::Result::Ok(())
    }
}

/// The key and partition constructors: the structs naming their arguments (outside the
/// entity's `impl`) and the constructors with the random-shard pickers (inside it).
pub(super) struct KeyConstructors {
    pub definitions: TokenStream,
    pub key_fn: TokenStream,
    pub partition_fn: TokenStream,
    pub random_fns: TokenStream,
}

pub(super) fn constructors(m: &EntityModel) -> KeyConstructors {
    let (key_definitions, key_fn) = key_constructor(m);
    let (partition_definition, partition_fn) = partition_constructor(m);
    KeyConstructors {
        definitions: quote!(#key_definitions #partition_definition),
        key_fn,
        partition_fn,
        random_fns: random_fns(m),
    }
}

/// `Type::key(..)`, its named-argument struct and the struct's conversion into the key.
fn key_constructor(m: &EntityModel) -> (TokenStream, TokenStream) {
    let (ident, vis) = (&m.ident, &m.vis);
    let dm = quote!(::dynamo_model);
    let has_sk = m.sk.is_some();
    let key_delim = key_delimiter(m);
    let (pk_out, sk_out) = key_outs();
    let pk_args = render(&m.pk.0, &pk_out, arg_part(m, false, &key_delim));
    let sk_args =
        m.sk.as_ref()
            .map(|s| render(&s.0, &sk_out, arg_part(m, false, &key_delim)));
    let key_templates = std::iter::once(template_doc("pk", &m.pk.1))
        .chain(m.sk.as_ref().map(|s| template_doc("sk", &s.1)))
        .collect::<Vec<_>>()
        .join(", ");
    let key_templates_list: Vec<&Template> = std::iter::once(&m.pk.0)
        .chain(m.sk.as_ref().map(|s| &s.0))
        .collect();
    let key_fields: Vec<ArgField> = field_uses(m, &key_templates_list)
        .into_iter()
        .map(|(f, uses)| ArgField::template(f, false, &uses))
        .collect();
    let key_struct = m.key_struct.clone();
    let key_example = format!(
        "{ident}::key({key_struct} {{ {} }})",
        key_fields
            .iter()
            .map(|a| a.ident.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let key_args = constructor_args(
        m,
        key_struct.clone(),
        format_ident!("key"),
        &key_fields,
        format!(
            "The key fields of [`{ident}`] ({key_templates}), by name, in any order: \
             `{key_example}`, or `db.get({key_struct} {{ .. }})` \
             (a [`Key<{ident}>`](dynamo_model::Key))."
        ),
    );
    let key_doc = format!(
        "The key of the [`{ident}`] item with these key fields ({key_templates}).{}",
        key_args.see
    );
    let Args {
        generics,
        params,
        bind,
        definition,
        named,
        ..
    } = key_args;
    // `db.get(OrderKey { .. })`: the struct converts to the key it names.
    let key_from = named.map(|named| {
        quote! {
            impl #generics ::core::convert::From<#named> for #dm::Key<#ident> {
                fn from(key: #named) -> Self {
                    #ident::key(key)
                }
            }
        }
    });
    let key_fn = quote! {
        #[doc = #key_doc]
        #vis fn key #generics (#params) -> #dm::Key<#ident> {
            #bind
            #dm::Key::__build(#has_sk, |#pk_out, #sk_out| {
                let _ = &#sk_out;
                #pk_args
                #sk_args
                ::core::result::Result::Ok(())
            })
        }
    };
    (quote!(#definition #key_from), key_fn)
}

/// `Type::partition(..)` and its named-argument struct.
fn partition_constructor(m: &EntityModel) -> (TokenStream, TokenStream) {
    let (ident, vis) = (&m.ident, &m.vis);
    let dm = quote!(::dynamo_model);
    let partition_fields: Vec<ArgField> = partition_uses(m, &m.pk.0)
        .into_iter()
        .map(|(f, uses)| ArgField::template(f, false, &uses))
        .collect();
    let partition_struct = format_ident!("{}Partition", ident);
    let partition_args = constructor_args(
        m,
        partition_struct.clone(),
        format_ident!("partition"),
        &partition_fields,
        partition_struct_doc(
            ident,
            &template_doc("pk", &m.pk.1),
            &format_ident!("partition"),
            &partition_struct,
            &partition_fields,
        ),
    );
    let partition_doc = format!(
        "The partition `{}` of [`{ident}`] items, for queries.{}{}",
        m.pk.1.value(),
        sharded_doc(&m.pk.0),
        partition_args.see
    );
    let (sk_prefix, sk_fixed) = match &m.sk {
        Some((t, _)) => template_root(t),
        None => (String::new(), true),
    };
    let (partition_type, partition_body) = partition_build(
        m,
        &m.pk.0,
        false,
        &quote!(#dm::Primary),
        (&sk_prefix, sk_fixed),
        &key_delimiter(m),
    );
    let Args {
        generics,
        params,
        bind,
        definition,
        ..
    } = partition_args;
    let partition_fn = quote! {
        #[doc = #partition_doc]
        #vis fn partition #generics (#params) -> #partition_type {
            #bind
            #partition_body
        }
    };
    (definition, partition_fn)
}

/// `Type::random_{field}()` picks a shard for a new item, for each `random(n)` field.
fn random_fns(m: &EntityModel) -> TokenStream {
    let vis = &m.vis;
    let private = quote!(::dynamo_model::__private);
    let mut random_fields: Vec<(&Field, u16)> = Vec::new();
    let all_templates = std::iter::once(&m.pk).chain(m.sk.as_ref()).chain(
        m.indexes
            .iter()
            .flat_map(|i| i.pk.iter().chain(i.sk.iter())),
    );
    for (t, _) in all_templates {
        for c in t.computed() {
            if let Function::Random(n) = c.function {
                let f = field(m, &c.field);
                if !random_fields.iter().any(|(o, _)| o.ident == f.ident) {
                    random_fields.push((f, n));
                }
            }
        }
    }
    let random_fns = random_fields.iter().map(|(f, n)| {
        let name = format_ident!("random_{}", f.ident.to_string().trim_start_matches("r#"));
        let doc = format!(
            "A shard picked uniformly at random in `0..{n}`, for the `{{{}:random({n})}}` field of a new item: every shard then takes an equal share of the writes.",
            f.ident
        );
        quote! {
            #[doc = #doc]
            #vis fn #name() -> u16 {
                #private::random_shard(#n)
            }
        }
    });
    quote!(#(#random_fns)*)
}
