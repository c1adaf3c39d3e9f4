//! The primary key: its rendering from the item, the key and partition constructors
//! (from arguments named after the fields), and the random-shard pickers.

use super::args::{
    constructor_args, partition_struct_doc, sharded_doc, template_doc, ArgField, Args,
};
use super::{bucket_type, dm, field, key_type, private, template_root};
use crate::check::{EntityModel, Field};
use crate::template::{Function, Segment, Template};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Ident;

/// The name of the `KeyTemplate` constant of the entity's pk or sk template.
pub(super) fn key_template_const(sort: bool) -> Ident {
    format_ident!("__{}_TEMPLATE", if sort { "SK" } else { "PK" })
}

/// Where the values a template renders come from.
#[derive(Clone, Copy)]
pub(super) enum Source {
    /// The item's fields, for its primary key.
    Item,
    /// The item's fields, for an index key: a field may be absent (`Option`).
    IndexItem,
    /// Constructor arguments (locals named after the fields); `index`: of an index
    /// template, whose arguments take the present value of an optional field.
    Args { index: bool },
}

/// `template.render_key(&[values], out)` (`render` for an index key, which may be
/// absent): the runtime renders the template's `const` descriptor with one value per
/// placeholder, built here.
pub(super) fn render_call(
    m: &EntityModel,
    template: (&Ident, &Template),
    source: Source,
    out: &Ident,
) -> TokenStream {
    let (name, t) = template;
    let values = values(m, &t.segments, source);
    let method = match source {
        Source::IndexItem => format_ident!("render"),
        Source::Item | Source::Args { .. } => format_ident!("render_key"),
    };
    quote!(#name.#method(&[#(#values),*], #out))
}

/// One `&dyn RenderPart` expression per placeholder of `segments`, in order: a call of
/// the runtime's constructor for what the placeholder takes, whose type arguments carry
/// the field type's span (an unfit type is reported there).
fn values(m: &EntityModel, segments: &[Segment], source: Source) -> Vec<TokenStream> {
    let p = private();
    let placeholders = segments.iter().filter_map(|s| match s {
        Segment::Field(name) => Some((name.as_str(), None)),
        Segment::Computed(c) => Some((c.field.as_str(), Some(c.function))),
        Segment::Lit(_) => None,
    });
    placeholders
        .map(|(name, function)| {
            let f = field(m, name);
            let (fi, ty) = (&f.ident, &f.ty);
            let (value, ty) = match source {
                Source::Args { .. } => (quote!(&#fi), quote!(_)),
                Source::Item | Source::IndexItem => (quote!(&self.#fi), quote!(#ty)),
            };
            let part = match function {
                None => own(f, source, &value),
                Some(Function::Shard(n)) => {
                    // The hash is of the field's own encoding (its key format aside).
                    let own = match source {
                        Source::Item => quote_spanned!(f.ty.span()=> <#ty as #p::KeyPart>::__field(#value)),
                        Source::IndexItem => {
                            quote_spanned!(f.ty.span()=> <#ty as #p::OptionalKeyPart>::__present(#value))
                        }
                        Source::Args { .. } => own(f, source, &value),
                    };
                    quote!(#p::Shard(&#own, #n))
                }
                Some(Function::Random(n)) => {
                    quote_spanned!(f.ty.span()=> #p::random::<#ty>(#value, #n))
                }
                Some(Function::Bucket(b)) => {
                    let bucket = bucket_type(b);
                    let make = match source {
                        Source::Item => quote!(bucket),
                        Source::IndexItem => quote!(present_bucket),
                        Source::Args { .. } => quote!(bucket_of),
                    };
                    quote_spanned!(f.ty.span()=> #p::#make::<#bucket, #ty>(#value))
                }
            };
            quote!(&#part)
        })
        .collect()
}

/// A placeholder that takes the field as it is: its encoding, in its key format if it has
/// one (from a constructor argument: as the field's key type).
fn own(f: &Field, source: Source, value: &TokenStream) -> TokenStream {
    let (p, ty) = (private(), &f.ty);
    match (source, &f.attrs.key_format) {
        (Source::Args { index }, _) => {
            let kty = key_type(f, index);
            quote_spanned!(ty.span()=> #p::arg::<#kty, _>(#value))
        }
        (Source::Item, Some(_)) => {
            let kty = key_type(f, false);
            quote_spanned!(ty.span()=> #p::arg::<#kty, #ty>(#value))
        }
        (Source::Item, None) => quote_spanned!(ty.span()=> <#ty as #p::KeyPart>::__field(#value)),
        (Source::IndexItem, Some(format)) => {
            let marker = &format.marker;
            quote_spanned!(ty.span()=> #p::formatted_present::<#ty, #marker>(#value))
        }
        (Source::IndexItem, None) => {
            quote_spanned!(ty.span()=> <#ty as #p::OptionalKeyPart>::__present(#value))
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

/// The return type and body of a partition constructor for template `t` (the constant
/// `name`), from arguments named after the fields: a `Partition`, or a `ShardedPartition`
/// listing every shard when the template has a shard.
pub(super) fn partition_build(
    m: &EntityModel,
    (name, t): (&Ident, &Template),
    index: bool,
    space: &TokenStream,
    sort: (&str, bool),
) -> (TokenStream, TokenStream) {
    let dm = dm();
    let ident = &m.ident;
    let (root, fixed) = sort;
    let source = Source::Args { index };
    match t.shard() {
        Some((at, c)) => {
            let count = c.function.shards().unwrap_or(1);
            let shard = t.segments[..at]
                .iter()
                .filter(|s| !matches!(s, Segment::Lit(_)))
                .count();
            let mut values = values(m, &t.segments[..at], source);
            values.extend(self::values(m, &t.segments[at + 1..], source));
            (
                quote!(#dm::ShardedPartition<#ident, #space>),
                quote! {
                    #dm::ShardedPartition::__build(#root, #fixed, #count, |__head, __tail| {
                        #name.render_around(#shard, &[#(#values),*], __head, __tail)
                    })
                },
            )
        }
        None => {
            let out = format_ident!("__pk");
            let render = render_call(m, (name, t), source, &out);
            (
                quote!(#dm::Partition<#ident, #space>),
                quote!(#dm::Partition::__build(#root, #fixed, |#out| #render)),
            )
        }
    }
}

/// The local names of the rendered primary key.
pub(super) fn key_outs() -> (Ident, Ident) {
    (format_ident!("__pk"), format_ident!("__sk"))
}

/// `__PK_TEMPLATE.render_primary(sk, &[values], __pk, __sk)`: the primary key rendered
/// by the runtime from both templates' constants, with one value per placeholder (the
/// partition key's first) from `source` (the item's fields or a key constructor's
/// arguments).
fn render_primary(m: &EntityModel, source: Source) -> TokenStream {
    let (pk_out, sk_out) = key_outs();
    let pk = key_template_const(false);
    let mut values = values(m, &m.pk.0.segments, source);
    let sk = match &m.sk {
        Some((t, _)) => {
            values.extend(self::values(m, &t.segments, source));
            let sk = key_template_const(true);
            quote!(Some(&#sk))
        }
        None => quote!(None),
    };
    quote!(#pk.render_primary(#sk, &[#(#values),*], #pk_out, #sk_out))
}

/// The body of `__render_primary_key`: both templates rendered from the item's fields.
pub(super) fn render_primary_key(m: &EntityModel) -> TokenStream {
    render_primary(m, Source::Item)
}

/// The key and partition constructors: the structs naming their arguments (outside the
/// entity's `impl`) and the constructors with the random-shard pickers (inside it).
pub(super) struct KeyConstructors {
    /// The argument structs (users name them: outside the entity's `const` block).
    pub definitions: TokenStream,
    /// `From<{Key struct}> for Key<Entity>`.
    pub key_from: TokenStream,
    pub key_fn: TokenStream,
    pub partition_fn: TokenStream,
    pub random_fns: TokenStream,
}

pub(super) fn constructors(m: &EntityModel) -> KeyConstructors {
    let (key_definition, key_from, key_fn) = key_constructor(m);
    let (partition_definition, partition_fn) = partition_constructor(m);
    KeyConstructors {
        definitions: quote!(#key_definition #partition_definition),
        key_from,
        key_fn,
        partition_fn,
        random_fns: random_fns(m),
    }
}

/// `Type::key(..)`, its named-argument struct and the struct's conversion into the key.
fn key_constructor(m: &EntityModel) -> (TokenStream, TokenStream, TokenStream) {
    let (ident, vis) = (&m.ident, &m.vis);
    let dm = dm();
    let has_sk = m.sk.is_some();
    let (pk_out, sk_out) = key_outs();
    let render = render_primary(m, Source::Args { index: false });
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
            #dm::Key::__build(#has_sk, |#pk_out, #sk_out| #render)
        }
    };
    (definition, quote!(#key_from), key_fn)
}

/// `Type::partition(..)` and its named-argument struct.
fn partition_constructor(m: &EntityModel) -> (TokenStream, TokenStream) {
    let (ident, vis) = (&m.ident, &m.vis);
    let dm = dm();
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
        (&key_template_const(false), &m.pk.0),
        false,
        &quote!(#dm::Primary),
        (&sk_prefix, sk_fixed),
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
    let private = private();
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
