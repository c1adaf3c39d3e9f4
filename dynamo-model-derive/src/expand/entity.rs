//! `#[derive(Entity)]`: `impl Entity`, the typed key constructor, typed field paths, and
//! compile-time checks against the table declaration.

use crate::check::{self, EntityModel, Field, IndexModel};
use crate::ctxt::Ctxt;
use crate::template::{Bucket, Function, Segment, Template};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{DeriveInput, Ident, LitStr};

/// A message for `panic!` in a const assertion (a literal format string, so braces are escaped).
fn const_panic(span: Span, message: String) -> TokenStream {
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
fn delimiter_expr(declared: Option<char>, table: &syn::Path) -> TokenStream {
    match declared {
        Some(c) => {
            let name = delimiter_const(c);
            quote!(::dynamo_model::key::Delimiter::#name)
        }
        None => quote!(<#table as ::dynamo_model::Table>::DELIMITER),
    }
}

/// A check that a template which declares no delimiter, and so takes the table's, follows
/// its placeholders with the table's delimiter (the table's declaration is only known to
/// the compiler).
fn table_delimiter_check(
    declared: Option<char>,
    template: &Template,
    lit: &LitStr,
    which: &str,
    table: &syn::Path,
    table_name: &str,
) -> Option<TokenStream> {
    let (None, Some(follower)) = (declared, template.delimiter) else {
        return None;
    };
    let fix = if which.starts_with("index") {
        format!("declare `delimiter = \"{follower}\"` in the index (or #[dynamo(delimiter = \"{follower}\")] on the entity or the table)")
    } else {
        format!("declare #[dynamo(delimiter = \"{follower}\")] on the entity (or on the table)")
    };
    let p = const_panic(
        lit.span(),
        format!(
            "the {which} template {:?} separates its fields with `{follower}`, which is not the delimiter of table `{table_name}`: {fix}",
            lit.value()
        ),
    );
    Some(quote!(if <#table as ::dynamo_model::Table>::DELIMITER.as_char() != #follower { #p }))
}

/// Code that appends a rendered template to `out`. `part` produces the code for one
/// placeholder: a field, and the function computing the part from it (`None`: the field's
/// own encoding).
fn render(
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

/// The runtime type of a time bucket.
fn bucket_type(bucket: Bucket) -> TokenStream {
    let ident = format_ident!("{}", bucket.type_name());
    quote!(::dynamo_model::key::computed::#ident)
}

/// Code appending one placeholder of a key template rendered from constructor arguments
/// (locals named after the fields); `index`: an index template, whose arguments take the
/// present value of an optional field; `delimiter`: the template's delimiter (an
/// expression of type `dynamo_model::key::Delimiter`).
fn arg_part<'a>(
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
fn field_uses<'a>(
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
fn partition_uses<'a>(m: &'a EntityModel, t: &Template) -> Vec<(&'a Field, Vec<Option<Function>>)> {
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
fn partition_build(
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
            let message = if m.versioned.is_some() {
                format!("table `{table_name}` has no sort key, and a #[dynamo(versioned)] entity needs one: the revision number is part of it (declare the table with `sk = \"..\"`)")
            } else {
                format!("table `{table_name}` has no sort key: remove `sk`")
            };
            let p = const_panic(lit.span(), message);
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
    let key_delim = delimiter_expr(m.delimiter, table);
    let primary_templates = std::iter::once(("pk", &m.pk)).chain(m.sk.as_ref().map(|s| ("sk", s)));
    for (which, (t, lit)) in primary_templates {
        checks.extend(table_delimiter_check(
            m.delimiter,
            t,
            lit,
            which,
            table,
            &table_name,
        ));
    }
    for index in &m.indexes {
        let templates = index.pk.iter().map(|t| ("index pk", t));
        for (which, (t, lit)) in templates.chain(index.sk.iter().map(|t| ("index sk", t))) {
            checks.extend(table_delimiter_check(
                index.delimiter,
                t,
                lit,
                which,
                table,
                &table_name,
            ));
        }
    }
    for f in m.fields.iter().filter(|f| f.attrs.ttl) {
        let p = const_panic(
            f.ident.span(),
            format!(
                "field `{}` is #[dynamo(ttl)] but table `{table_name}` declares no `ttl` attribute",
                f.ident
            ),
        );
        checks.push(quote!(if __SCHEMA.ttl.is_none() { #p }));
    }
    for f in &m.fields {
        if let Some(c) = &f.attrs.compress {
            checks.push(codec_check(&f.ident, c));
        }
    }
    for f in m.fields.iter().filter(|f| m.stores(f) && !f.attrs.ttl) {
        let name = &f.name;
        // Point at the rename when there is one: that is what to change.
        let span = f.attrs.rename.as_ref().map_or(f.ident.span(), LitStr::span);
        let p = const_panic(
            span,
            format!(
                "field `{}` would be stored as attribute `{name}`, which table `{table_name}` uses for a key or the entity type; store it under another name with #[dynamo(rename = \"...\")]",
                f.ident
            ),
        );
        checks.push(quote!(if __SCHEMA.is_reserved_attribute(#name) { #p }));
        let token = const_panic(
            span,
            format!(
                "field `{}` would be stored as attribute `{name}`, which table `{table_name}` uses for the write token; store the field under another name with #[dynamo(rename = \"...\")] or rename the token with #[dynamo(write_token = \"...\")] on the table",
                f.ident
            ),
        );
        checks.push(quote!(if #dm::schema::const_str_eq(__SCHEMA.write_token, #name) { #token }));
    }
    // An older name is read when the field's attribute is missing, and removed by updates
    // of the field: it must not be an attribute the crate writes for itself.
    for f in &m.fields {
        for alias in &f.attrs.aliases {
            let p = const_panic(
                alias.span(),
                format!(
                    "alias `{}` of field `{}` is an attribute table `{table_name}` uses for a key, an index key, the entity type, the write token or the TTL: an alias names where the field was stored before",
                    alias.value(),
                    f.ident
                ),
            );
            checks.push(quote! {
                if __SCHEMA.is_reserved_attribute(#alias)
                    || __SCHEMA.is_index_key_attribute(#alias)
                    || #dm::schema::const_str_eq(__SCHEMA.write_token, #alias)
                    || #dm::schema::const_str_eq(__TTL_ATTR, #alias)
                { #p }
            });
        }
    }

    // A table whose entities are all identified by their keys: each needs literal text in
    // its templates (an entity declaring it is checked when its templates are read).
    let literal = |t: &Template| t.segments.iter().any(|s| matches!(s, Segment::Lit(_)));
    if !literal(&m.pk.0) && !m.sk.as_ref().is_some_and(|s| literal(&s.0)) {
        let p = const_panic(
            m.pk.1.span(),
            format!("table `{table_name}` identifies untyped items by their keys (`identify = \"keys\"`), and these templates have no literal text to tell this entity's items apart from the others'"),
        );
        checks.push(quote!(if __SCHEMA.identify_by_keys { #p }));
    }

    // Every write of a versioned entity stores the revision's time under its time
    // attribute, on the latest copy and on the revision: it must be no attribute the
    // table gives another role (a key, the entity type, the write token, the TTL, an
    // index key), or the time would overwrite it.
    if let Some(v) = &m.versioned {
        let time = &v.time_attribute;
        let role = |what: &str| {
            const_panic(
                v.time_span,
                format!("table `{table_name}` uses `{time}` for {what}, and a #[dynamo(versioned)] entity writes the time of each revision there; choose another attribute with versioned(time_attribute = \"..\")"),
            )
        };
        let (reserved, token, ttl, index) = (
            role("a key or the entity type"),
            role("the write token"),
            role("the TTL"),
            role("an index key"),
        );
        checks.push(quote! {
            if __SCHEMA.is_reserved_attribute(#time) { #reserved }
            if #dm::schema::const_str_eq(__SCHEMA.write_token, #time) { #token }
            if #dm::schema::const_str_eq(__TTL_ATTR, #time) { #ttl }
            if __SCHEMA.is_index_key_attribute(#time) { #index }
        });
    }

    // Index attribute names, resolved at compile time (a missing index fails compilation).
    let mut index_consts = Vec::new();
    let mut index_positions = Vec::new();
    let mut index_writes = Vec::new();
    let mut index_renders = Vec::new();
    let mut index_keys = Vec::new();
    let mut index_updates = Vec::new();
    // Per index with key templates: its key attributes (`Option<&str>` expressions, `None`
    // where the table's own key is written) and its delimiter, for reading fields back.
    let mut index_attribute_exprs: Vec<Option<(TokenStream, TokenStream, TokenStream)>> =
        vec![None; m.indexes.len()];
    let (ipk, isk) = (format_ident!("__ipk"), format_ident!("__isk"));
    for (n, index) in m.indexes.iter().enumerate() {
        let index_name = index.index.to_string();
        let span = index.index.span();
        let missing = const_panic(
            span,
            format!("index `{index_name}` is not declared on table `{table_name}`"),
        );
        let idx = format_ident!("__INDEX_{}", n);
        let position = position_const(n);
        // The index's position, resolved once (a missing index fails here, with the
        // message): its key space type and the checks below both use it.
        index_positions.push(quote_spanned! {span=>
            #[doc(hidden)]
            const #position: usize = match <#table as #dm::Table>::SCHEMA.index_position(#index_name) {
                ::core::option::Option::Some(position) => position,
                ::core::option::Option::None => #missing,
            };
        });
        index_consts.push(quote_spanned! {span=>
            const #idx: &#dm::schema::IndexSchema = &__SCHEMA_REF.indexes[#ident::#position];
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
        if let Some((pk_ix, sk_ix)) = &index.attributes {
            let count = const_panic(span, format!(
                "index `{index_name}` has another number of key attributes than the {} + {} fields listed", pk_ix.len(), sk_ix.len()
            ));
            let (npk, nsk) = (pk_ix.len(), sk_ix.len());
            let mut per_field = Vec::new();
            for (key, list) in [(format_ident!("pk"), pk_ix), (format_ident!("sk"), sk_ix)] {
                for (i, &fi) in list.iter().enumerate() {
                    let f = &m.fields[fi];
                    let (name, ty) = (&f.name, &f.ty);
                    let attr_ty = formatted_attr_type(f).unwrap_or_else(|| quote!(#ty));
                    let wrong_name = const_panic(f.ident.span(), format!(
                        "key attribute {} of the `{key}` of index `{index_name}` is not `{name}`, the attribute of field `{}`", i + 1, f.ident
                    ));
                    let wrong_type = const_panic(f.ident.span(), format!(
                        "field `{}` does not have the DynamoDB type index `{index_name}` declares for `{name}`", f.ident
                    ));
                    per_field.push(quote_spanned! {ty.span()=>
                        if !#dm::schema::const_str_eq(#idx.#key[#i].name, #name) { #wrong_name }
                        if !#dm::schema::scalar_eq(#idx.#key[#i].ty, <#attr_ty as #dm::schema::KeyAttrType>::TYPE) { #wrong_type }
                    });
                }
            }
            // No sort-key fields: the index may be sorted by the table's own sort key
            // attribute, which the primary key writes (e.g. pk = `EscalatedTo`, sk =
            // the table's `SK`).
            let table_sk = quote! {
                #nsk == 0
                    && #idx.sk.len() == 1
                    && match __SCHEMA.sk {
                        ::core::option::Option::Some(sk) => #dm::schema::const_str_eq(sk.name, #idx.sk[0].name),
                        ::core::option::Option::None => false,
                    }
            };
            checks.push(quote! {
                if #idx.pk.len() != #npk || (#idx.sk.len() != #nsk && !(#table_sk)) { #count }
                #(#per_field)*
            });
            continue; // the key attributes are the fields themselves: nothing to derive
        }
        if index.inverted {
            let not_inverted = const_panic(span, format!(
                "index `{index_name}` is used without templates, so its keys must be the table's keys swapped (pk = the table's sort key, sk = its partition key): an inverted index"
            ));
            checks.push(quote! {
                let __inverted = match (#idx.pk, #idx.sk, __SCHEMA.sk) {
                    ([pk], [sk], ::core::option::Option::Some(table_sk)) => {
                        #dm::schema::const_str_eq(pk.name, table_sk.name)
                            && #dm::schema::const_str_eq(sk.name, __SCHEMA.pk.name)
                    }
                    _ => false,
                };
                if !__inverted { #not_inverted }
            });
            continue; // its keys are the table's own: nothing extra to write or update
        }
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
        // What a template writes: never the table's own keys (that would move the item),
        // always a string attribute, never a field's attribute.
        let stored_names: Vec<&String> = m
            .fields
            .iter()
            .filter(|f| m.stores(f))
            .map(|f| &f.name)
            .collect();
        // A template that repeats the entity's own key template, for an index key attribute
        // that is the table's own key attribute (e.g. a GSI sorted by the table's `SK`): the
        // primary key writes it, so the index neither writes nor removes it.
        let repeats = |index_t: Option<&(Template, LitStr)>, own: Option<&(Template, LitStr)>| {
            matches!((index_t, own), (Some(a), Some(b)) if a.1.value() == b.1.value())
                && index.delimiter == m.delimiter
        };
        let own_pk = if has_pk_template && repeats(index.pk.as_ref(), Some(&m.pk)) {
            quote!(#dm::schema::const_str_eq(#idx.pk[0].name, __SCHEMA.pk.name))
        } else {
            quote!(false)
        };
        let own_sk = if has_sk_template && repeats(index.sk.as_ref(), m.sk.as_ref()) {
            quote!(match __SCHEMA.sk {
                ::core::option::Option::Some(sk) => #dm::schema::const_str_eq(#idx.sk[0].name, sk.name),
                ::core::option::Option::None => false,
            })
        } else {
            quote!(false)
        };
        for (which, present, own) in [
            ("pk", has_pk_template, &own_pk),
            ("sk", has_sk_template, &own_sk),
        ] {
            if !present {
                continue;
            }
            let key = format_ident!("{}", which);
            let reserved = const_panic(span, format!(
                "the `{which}` key attribute of index `{index_name}` is a key or the entity-type attribute of table `{table_name}`: a template cannot write it"
            ));
            let not_string = const_panic(span, format!(
                "the `{which}` key attribute of index `{index_name}` is not a string (S), so it cannot hold a rendered template"
            ));
            let collides = const_panic(span, format!(
                "the `{which}` key attribute of index `{index_name}` is also the attribute of a field of `{}`", m.ident
            ));
            checks.push(quote! {
                if __SCHEMA.is_reserved_attribute(#idx.#key[0].name) && !(#own) { #reserved }
                if !::core::matches!(#idx.#key[0].ty, #dm::schema::ScalarType::S) { #not_string }
                #( if #dm::schema::const_str_eq(#idx.#key[0].name, #stored_names) { #collides } )*
            });
        }

        let index_delim = delimiter_expr(index.delimiter, table);
        let optional_part = |name: &str, function: Option<Function>, out: &Ident| {
            let f = field(m, name);
            let (fi, ty) = (&f.ident, &f.ty);
            let absent = quote!(return ::core::result::Result::Ok(false););
            match function {
                None => match &f.attrs.key_format {
                    Some(format) => {
                        let marker = &format.marker;
                        quote_spanned! {ty.span()=>
                            if !#dm::key::format::encode_optional::<#ty, #marker>(&self.#fi, #index_delim, #out)? { #absent }
                        }
                    }
                    None => quote_spanned! {ty.span()=>
                        if !<#ty as #private::OptionalKeyPart>::encode_optional_key(&self.#fi, #index_delim, #out)? { #absent }
                    },
                },
                Some(Function::Shard(n)) => quote_spanned! {ty.span()=>
                    if !#private::push_shard_optional::<#ty>(&self.#fi, #n, #out)? { #absent }
                },
                Some(Function::Random(n)) => quote_spanned! {ty.span()=>
                    #private::push_random_shard::<#ty>(&self.#fi, #n, #out)?;
                },
                Some(Function::Bucket(b)) => {
                    let bucket = bucket_type(b);
                    quote_spanned! {ty.span()=>
                        if !#private::push_bucket_optional::<#bucket, #ty>(&self.#fi, #out)? { #absent }
                    }
                }
            }
        };
        let pk_render = index.pk.as_ref().map(|t| render(&t.0, &ipk, optional_part));
        let sk_render = index.sk.as_ref().map(|t| render(&t.0, &isk, optional_part));
        let pk_attr = if has_pk_template {
            quote!(if #own_pk { ::core::option::Option::None } else { ::core::option::Option::Some(#idx.pk[0].name) })
        } else {
            quote!(::core::option::Option::None)
        };
        let sk_attr = if has_sk_template {
            quote!(if #own_sk { ::core::option::Option::None } else { ::core::option::Option::Some(#idx.sk[0].name) })
        } else {
            quote!(::core::option::Option::None)
        };
        index_attribute_exprs[n] = Some((pk_attr.clone(), sk_attr.clone(), index_delim.clone()));
        // Rendered once, by `__render_index_key`: for writing the item and for checking
        // a decoded item against its stored index keys.
        let position = index_keys.len();
        index_keys.push(
            quote!(#private::IndexKeyAttributes { index: #index_name, pk: #pk_attr, sk: #sk_attr }),
        );
        index_renders.push(quote! {
            #position => {
                let _ = (&#ipk, &#isk);
                #pk_render
                #sk_render
                ::core::result::Result::Ok(true)
            }
        });
        index_writes.push(quote! {
            #private::put_index::<Self>(&mut item, #pk_attr, #sk_attr, |#ipk, #isk| {
                #private::EntityInternals::__render_index_key(self, #position, #ipk, #isk)
            })?;
        });

        // The same rendering from an update's values, for index_updates.
        let mut template_fields: Vec<&Field> = Vec::new();
        for name in index
            .pk
            .iter()
            .chain(index.sk.iter())
            .flat_map(|t| t.0.sources())
        {
            let f = field(m, name);
            if !template_fields.iter().any(|o| o.ident == f.ident) {
                template_fields.push(f);
            }
        }
        if template_fields.is_empty() {
            continue; // literal-only templates never change
        }
        // Primary-key fields never change and are read back from the key; the others
        // must all come with the update.
        if template_fields.iter().all(|f| f.in_primary_key) {
            continue; // built from key fields only: never changes
        }
        let descriptors = template_fields.iter().map(|f| {
            let (ty, attr) = (&f.ty, &f.name);
            if !f.in_primary_key {
                let encode = match &f.attrs.key_format {
                    Some(format) => {
                        let marker = &format.marker;
                        let attr_ty = formatted_attr_type(f);
                        quote_spanned!(ty.span()=> #private::encode_touch_formatted::<#ty, #attr_ty, #marker>)
                    }
                    None => quote_spanned!(ty.span()=> #private::encode_touch::<#ty>),
                };
                return quote_spanned! {ty.span()=>
                    #private::TemplateField::Stored { attribute: #attr, encode: #encode }
                };
            }
            // Read back from where the primary key holds the field as it is, or as a
            // random shard (its value too); `check` refuses an index that needs a field
            // the key holds only through a hash or a bucket.
            let readable = |s: &Segment| match s {
                Segment::Field(n) => f.ident == n,
                Segment::Computed(c) => {
                    f.ident == c.field && matches!(c.function, Function::Random(_))
                }
                Segment::Lit(_) => false,
            };
            let (template, sort) = if m.pk.0.segments.iter().any(readable) {
                (&m.pk.0, false)
            } else {
                (m.sk.as_ref().map(|s| &s.0).unwrap_or(&m.pk.0), true)
            };
            let segments = template.segments.iter().map(|s| match s {
                Segment::Lit(l) => quote!(::core::option::Option::Some(#l)),
                Segment::Field(_) | Segment::Computed(_) => quote!(::core::option::Option::None),
            });
            // Every placeholder is a component of the key, computed or not.
            let placeholders: Vec<&Segment> = template
                .segments
                .iter()
                .filter(|s| !matches!(s, Segment::Lit(_)))
                .collect();
            let ordinal = placeholders.iter().position(|s| readable(s)).unwrap_or(0);
            let reencode = match placeholders.get(ordinal) {
                Some(Segment::Computed(c)) => {
                    let n = c.function.shards().unwrap_or(1);
                    quote!(#private::reencode_random_shard::<#n>)
                }
                _ => {
                    let kty = key_type(f, false);
                    quote!(#private::reencode::<#kty>)
                }
            };
            quote_spanned! {ty.span()=>
                #private::TemplateField::Key {
                    sort: #sort,
                    segments: &[#(#segments),*],
                    delimiter: #key_delim,
                    ordinal: #ordinal,
                    reencode: #reencode,
                }
            }
        });
        let segments = |t: Option<&Template>| {
            let position = |name: &str| {
                template_fields
                    .iter()
                    .position(|f| f.ident == name)
                    .unwrap_or(0)
            };
            let segments = t.into_iter().flat_map(|t| &t.segments).map(|s| match s {
                Segment::Lit(l) => quote!(#private::TemplateSegment::Literal(#l)),
                Segment::Field(name) => {
                    let at = position(name);
                    quote!(#private::TemplateSegment::Field(#at))
                }
                Segment::Computed(c) => {
                    let at = position(&c.field);
                    let part = match c.function {
                        Function::Shard(n) => quote!(#private::ComputedPart::Shard(#n)),
                        Function::Random(n) => quote!(#private::ComputedPart::Random(#n)),
                        Function::Bucket(b) => {
                            let bucket = bucket_type(b);
                            let ty = &field(m, &c.field).ty;
                            quote_spanned! {ty.span()=>
                                #private::ComputedPart::Bucket(
                                    #private::bucket_from_component::<<#ty as #private::OptionalKeyPart>::Part, #bucket>
                                )
                            }
                        }
                    };
                    quote!(#private::TemplateSegment::Computed { field: #at, part: #part })
                }
            });
            quote!(&[#(#segments),*])
        };
        let (pk_segments, sk_segments) = (
            segments(index.pk.as_ref().map(|t| &t.0)),
            segments(index.sk.as_ref().map(|t| &t.0)),
        );
        index_updates.push(quote! {
            #private::IndexTemplate {
                index: #index_name,
                pk_attribute: #pk_attr,
                sk_attribute: #sk_attr,
                pk: #pk_segments,
                sk: #sk_segments,
                delimiter: #index_delim,
                fields: &[#(#descriptors),*],
            }
        });
    }

    // ---- primary key
    let (pk_out, sk_out) = (format_ident!("__pk"), format_ident!("__sk"));
    let self_part = |name: &str, function: Option<Function>, out: &Ident| {
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
    };
    let pk_self = render(&m.pk.0, &pk_out, self_part);
    let sk_self = m.sk.as_ref().map(|s| render(&s.0, &sk_out, self_part));
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

    // ---- fields
    let stored: Vec<&Field> = m.fields.iter().filter(|f| m.stores(f)).collect();
    // A `key_only` field only index keys hold must be in one the item writes.
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
                    let (pk_attr, sk_attr, _) = index_attribute_exprs[position].as_ref()?;
                    Some(if sort {
                        sk_attr.clone()
                    } else {
                        pk_attr.clone()
                    })
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
    // Chunked fields, numbered in declaration order (`crate::chunk`).
    let chunked: Vec<&Field> = stored
        .iter()
        .copied()
        .filter(|f| f.attrs.chunked.is_some())
        .collect();
    let chunk_index = |f: &Field| chunked.iter().position(|c| c.ident == f.ident).unwrap_or(0);
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
                quote!(::core::option::Option::Some(#c))
            }
            None => quote!(::core::option::Option::None),
        };
        quote!(#dm::chunk::ChunkedField { attribute: #name, inline: #inline, chunk_size: #chunk_size, compression: #compression })
    });
    let chunk_arms: Vec<_> = chunked
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (fi, ty) = (&f.ident, &f.ty);
            quote_spanned!(ty.span()=> #i => ::core::option::Option::Some(<#ty as #private::ChunkedFieldType>::slot(&self.#fi)),)
        })
        .collect();
    let chunk_arms_mut: Vec<_> = chunked
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (fi, ty) = (&f.ident, &f.ty);
            quote_spanned!(ty.span()=> #i => ::core::option::Option::Some(<#ty as #private::ChunkedFieldType>::slot_mut(&mut self.#fi)),)
        })
        .collect();
    let chunk_items = (!chunked.is_empty()).then(|| {
        quote! {
            const __CHUNKED: &'static [#dm::chunk::ChunkedField] = &[#(#chunked_fields),*];
            fn __chunk_slot(&self, i: usize) -> ::core::option::Option<&dyn #dm::chunk::ChunkSlot> {
                match i { #(#chunk_arms)* _ => ::core::option::Option::None }
            }
            fn __chunk_slot_mut(&mut self, i: usize) -> ::core::option::Option<&mut dyn #dm::chunk::ChunkSlot> {
                match i { #(#chunk_arms_mut)* _ => ::core::option::Option::None }
            }
        }
    });
    let encode_fields = stored.iter().map(|f| {
        let (fi, ty, name) = (&f.ident, &f.ty, &f.name);
        if f.attrs.chunked.is_some() {
            let k = chunk_index(f);
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
    });
    let decode_fields = m.fields.iter().map(|f| {
        let (fi, ty, name) = (&f.ident, &f.ty, &f.name);
        let default = field_default(fi, &f.attrs.default, &m.default);
        if f.attrs.skip {
            let default = default.unwrap_or(quote!(::core::default::Default::default));
            return quote!(#fi: #default(),);
        }
        if f.attrs.chunked.is_some() {
            let k = chunk_index(f);
            return quote_spanned! {ty.span()=>
                #fi: <#ty as #private::ChunkedFieldType>::take_chunked::<Self>(
                    &mut item,
                    &<Self as #private::EntityInternals>::__CHUNKED[#k],
                )?,
            };
        }
        if f.attrs.ttl {
            let fallback = match default {
                Some(default) => quote!(::core::option::Option::Some(|| #dm::TtlValue::to_stored(&#default()))),
                None => quote!(::core::option::Option::None),
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
            Some(default) => quote!(::core::option::Option::Some(#default)),
            None => quote!(::core::option::Option::None),
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
            // Read back from the key when the item does not store it (written by another
            // program, or `key_only`).
            let segments = template.segments.iter().map(|s| match s {
                Segment::Lit(l) => quote!(::core::option::Option::Some(#l)),
                Segment::Field(_) | Segment::Computed(_) => quote!(::core::option::Option::None),
            });
            let ordinal = template
                .segments
                .iter()
                .filter(|s| !matches!(s, Segment::Lit(_)))
                .position(|s| matches!(s, Segment::Field(n) if f.ident == n))
                .unwrap_or(0);
            let key_source = quote! {
                #private::KeySource {
                    sort: #sort,
                    segments: &[#(#segments),*],
                    delimiter: #key_delim,
                    ordinal: #ordinal,
                }
            };
            if let Some(attr_ty) = formatted_attr_type(f) {
                // A key field is never an `Option`: the attribute type is `Formatted`,
                // which is also the key part.
                return quote_spanned! {ty.span()=>
                    #fi: <#attr_ty as #private::FormattedAttr>::unformat(#private::take_key_field::<Self, #attr_ty>(
                        &mut item,
                        #name,
                        &[#(#aliases),*],
                        #key_source,
                        <#attr_ty as #private::KeyPart>::decode_key_with,
                    )?),
                };
            }
            return quote_spanned! {ty.span()=>
                #fi: #private::take_key_field::<Self, #ty>(
                    &mut item,
                    #name,
                    &[#(#aliases),*],
                    #key_source,
                    <#ty as #private::KeyPart>::decode_key_with,
                )?,
            };
        }
        let sources = m.index_sources(f);
        if !sources.is_empty() && !f.attrs.serde_codec {
            // Read back from an index key when the item does not store it (written by
            // another program, or `key_only`); `verify_keys` then checks every stored
            // index key against the fields, so a plain attribute that disagrees with one is
            // refused.
            let sources = sources.iter().filter_map(|(position, sort, template)| {
                let (pk_attr, sk_attr, delimiter) = index_attribute_exprs[*position].as_ref()?;
                let attribute = if *sort { sk_attr } else { pk_attr };
                let segments = template.segments.iter().map(|s| match s {
                    Segment::Lit(l) => quote!(::core::option::Option::Some(#l)),
                    Segment::Field(_) | Segment::Computed(_) => quote!(::core::option::Option::None),
                });
                let ordinal = template
                    .segments
                    .iter()
                    .filter(|s| !matches!(s, Segment::Lit(_)))
                    .position(|s| matches!(s, Segment::Field(n) if f.ident == n))
                    .unwrap_or(0);
                Some(quote! {
                    #private::IndexKeySource {
                        attribute: #attribute,
                        segments: &[#(#segments),*],
                        delimiter: #delimiter,
                        ordinal: #ordinal,
                    }
                })
            });
            let key_only = f.not_stored;
            let part = quote_spanned!(ty.span()=> <#ty as #private::OptionalKeyPart>::Part);
            if let (Some(format), Some(attr_ty)) = (&f.attrs.key_format, formatted_attr_type(f)) {
                let marker = &format.marker;
                let default = match &default_path {
                    Some(path) => quote!(::core::option::Option::Some(|| <#attr_ty as #private::FormattedAttr>::from_plain(#path()))),
                    None => quote!(::core::option::Option::None),
                };
                return quote_spanned! {ty.span()=>
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
                };
            }
            return quote_spanned! {ty.span()=>
                #fi: #private::take_index_key_field::<Self, #ty>(
                    &mut item,
                    #name,
                    &[#(#aliases),*],
                    #key_only,
                    &[#(#sources),*],
                    |component, delimiter| {
                        <#part as #private::KeyPart>::decode_key_with(component, delimiter)
                            .map(<#ty as #private::OptionalKeyPart>::from_part)
                    },
                    #default,
                )?,
            };
        }
        if let Some(attr_ty) = formatted_attr_type(f) {
            let default = match &default_path {
                Some(path) => quote!(::core::option::Option::Some(|| <#attr_ty as #private::FormattedAttr>::from_plain(#path()))),
                None => quote!(::core::option::Option::None),
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
    });
    // ---- stored attribute names (the TTL field lives under the table's TTL attribute)
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

    // ---- the type each written attribute is stored as, for the exports (`None`: it
    // depends on the value)
    let attribute_types: Vec<TokenStream> = stored
        .iter()
        .map(|f| {
            let ty = &f.ty;
            let known = |t: &str| quote!((|| ::core::option::Option::Some(#t)) as fn() -> ::core::option::Option<&'static str>);
            let (name, stored_type) = if f.attrs.ttl {
                (quote!(__TTL_ATTR), known("N"))
            } else {
                let n = &f.name;
                let stored_type = if f.attrs.compress.is_some() {
                    known("B")
                } else if f.attrs.chunked.is_some() || f.attrs.serde_codec {
                    quote!((|| ::core::option::Option::None) as fn() -> ::core::option::Option<&'static str>)
                } else {
                    // A formatted field's attribute is in its format's form (an epoch
                    // format stores a number whatever the field's type).
                    let ty = formatted_attr_type(f).unwrap_or_else(|| quote!(#ty));
                    // Probed, not required: a type without `AttrValue` has its own error.
                    quote!((|| {
                        #[allow(unused_imports)]
                        use #dm::__private::{HasType as _, NoType as _};
                        (&#dm::__private::TypeProbe::<#ty>::NEW).dynamo_type()
                    }) as fn() -> ::core::option::Option<&'static str>)
                };
                (quote!(#n), stored_type)
            };
            quote!((#name, #stored_type))
        })
        .collect();

    // ---- older attribute names of renamed fields (updates remove them)
    let alias_entries = stored
        .iter()
        .filter(|f| !f.attrs.aliases.is_empty())
        .map(|f| {
            let name = &f.name;
            let aliases = f.attrs.aliases.iter();
            quote!((#name, &[#(#aliases),*]))
        });
    let alias_items = quote! {
        const __ALIASES: &'static [(&'static str, &'static [&'static str])] = &[#(#alias_entries),*];
    };

    // ---- managed fields
    let version_items = m.fields.iter().find(|f| f.attrs.version).map(|f| {
        let (fi, ty, name) = (&f.ident, &f.ty, &f.name);
        quote_spanned! {ty.span()=>
            const VERSION: ::core::option::Option<&'static str> = ::core::option::Option::Some(#name);
            fn version(&self) -> u64 {
                <#ty as #dm::VersionValue>::get(&self.#fi)
            }
        }
    });

    // ---- version-prefix history
    let history_items = m.versioned.as_ref().map(|v| {
        let (prefix, width, separator, time) =
            (&v.prefix, v.width, &v.separator, &v.time_attribute);
        let (counter_on_latest, numeric_order) = (v.counter_on_latest, v.numeric_order);
        let revisions_in = &v.revisions_in;
        // Through `VersionValue`, spanned on the field's type: a field of the wrong type
        // is reported once, by the trait's message, not also as a type mismatch here.
        let set_version = m.fields.iter().find(|f| f.attrs.version).map(|f| {
            let (fi, ty) = (&f.ident, &f.ty);
            quote_spanned! {ty.span()=>
                fn __set_version(&mut self, version: u64) {
                    <#ty as #dm::VersionValue>::set(&mut self.#fi, version);
                }
            }
        });
        quote! {
            const __HISTORY: ::core::option::Option<&'static #dm::history::HistoryLayout> =
                ::core::option::Option::Some(&#dm::history::HistoryLayout {
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

    // ---- typed paths
    let fields_ident = format_ident!("{}Fields", ident);
    // Chunked fields are stored as bytes or a manifest: no conditions, no updates.
    let pathed: Vec<&Field> = stored
        .iter()
        .copied()
        .filter(|f| f.attrs.chunked.is_none())
        .collect();
    let path_decls = pathed.iter().map(|f| {
        let (fi, ty) = (&f.ident, &f.ty);
        let value = if f.attrs.serde_codec {
            quote!(#dm::Serde<#ty>)
        } else if let Some(attr_ty) = formatted_attr_type(f) {
            attr_ty
        } else if f.attrs.ttl {
            quote!(<#ty as #dm::TtlValue>::Stored)
        } else {
            quote!(#ty)
        };
        // The version is managed by the crate: conditions yes, updates no.
        let marker = if f.in_primary_key || f.attrs.version {
            quote!(KeyField)
        } else {
            quote!(Mutable)
        };
        if f.attrs.compress.is_some() {
            let doc = format!(
                "Path of attribute `{}`, stored compressed: `exists`/`not_exists` in conditions, `set`/`remove` in updates.",
                f.name
            );
            return quote!(#[doc = #doc] pub #fi: #dm::CompressedPath<#ident, #value>,);
        }
        let doc = format!("Path of attribute `{}`.", f.name);
        quote!(#[doc = #doc] pub #fi: #dm::Path<#ident, #value, #private::#marker>,)
    });
    let path_inits = pathed.iter().map(|f| {
        let (fi, name) = (&f.ident, &f.name);
        if f.attrs.ttl {
            return quote!(#fi: #dm::Path::__new(match <#table as #dm::Table>::SCHEMA.ttl {
                ::core::option::Option::Some(ttl) => ttl,
                ::core::option::Option::None => #name,
            }),);
        }
        if let Some(c) = &f.attrs.compress {
            let c = compression(c);
            return quote!(#fi: #dm::CompressedPath::__new(#name, *#c),);
        }
        quote!(#fi: #dm::Path::__new(#name),)
    });
    let fields_doc = format!("Typed attribute paths of [`{ident}`], for conditions and updates.");

    // ---- partition and sort-key chain (queries)
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
        &key_delim,
    );
    let sk_chain = m.sk.as_ref().map(|(t, lit)| {
        let chain = format_ident!("{}Sk", ident);
        sort_key_chain(
            m,
            t,
            lit,
            &chain,
            &format_ident!("sk"),
            &quote!(#dm::Primary),
            false,
            &key_delim,
        )
    });
    // ---- registration: which keys this entity can own (see `dynamo_model::registry`)
    let registered_template = |t: &Template| {
        let segments = t.segments.iter().map(|segment| match segment {
            Segment::Lit(lit) => quote!(#private::KeySegment::Literal(#lit)),
            Segment::Field(name) => {
                let f = field(m, name);
                let (ty, kty) = (&f.ty, key_type(f, false));
                // The same trait path as the key rendering, so a field type that is not a
                // `KeyPart` is reported once.
                quote_spanned!(ty.span()=> #private::KeySegment::Field(|component| {
                    <#kty as #private::KeyPart>::decode_key_with(component, #key_delim).is_ok()
                }))
            }
            // Any shard or bucket: which one the item's fields give is checked when the
            // item is decoded (`verify_keys`).
            Segment::Computed(c) => match c.function {
                Function::Shard(n) | Function::Random(n) => quote! {
                    #private::KeySegment::Field(|component| #private::is_shard(component, #n))
                },
                Function::Bucket(b) => {
                    let bucket = bucket_type(b);
                    quote!(#private::KeySegment::Field(#private::is_bucket::<#bucket>))
                }
            },
        });
        quote!(&[#(#segments),*])
    };
    let registered_pk = registered_template(&m.pk.0);
    let registered_sk = match &m.sk {
        Some((t, _)) => {
            let t = registered_template(t);
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
    let own_identify = m.identify_by_keys;
    let identify_by_keys =
        quote!((#own_identify || <#table as #dm::Table>::SCHEMA.identify_by_keys));

    let index_queries: Vec<TokenStream> = m
        .indexes
        .iter()
        .enumerate()
        .map(|(n, index)| index_query(m, n, index))
        .collect();

    // ---- random shards: `Type::random_{field}()` picks one for a new item
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

    let Args {
        generics: key_generics,
        params: key_params,
        bind: key_bind,
        definition: key_definition,
        named: key_named,
        ..
    } = key_args;
    // `db.get(OrderKey { .. })`: the struct converts to the key it names.
    let key_from = key_named.map(|named| {
        quote! {
            impl #key_generics ::core::convert::From<#named> for #dm::Key<#ident> {
                fn from(key: #named) -> Self {
                    #ident::key(key)
                }
            }
        }
    });
    let Args {
        generics: partition_generics,
        params: partition_params,
        bind: partition_bind,
        definition: partition_definition,
        ..
    } = partition_args;

    quote! {
        #[doc = #fields_doc]
        #[derive(Debug, Clone, Copy)]
        #vis struct #fields_ident {
            #(#path_decls)*
        }

        #key_definition
        #key_from
        #partition_definition

        impl #ident {
            #[doc = #key_doc]
            #vis fn key #key_generics (#key_params) -> #dm::Key<#ident> {
                #key_bind
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

            #[doc = #partition_doc]
            #vis fn partition #partition_generics (#partition_params) -> #partition_type {
                #partition_bind
                #partition_body
            }

            #(#random_fns)*
        }

        impl #ident {
            #(#index_positions)*
        }

        #sk_chain
        #(#index_queries)*

        const _: () = {
            const __SCHEMA: #dm::TableSchema = <#table as #dm::Table>::SCHEMA;
            static __SCHEMA_REF: #dm::TableSchema = __SCHEMA;
            #[allow(dead_code)]
            const __TTL_ATTR: &str = match __SCHEMA.ttl {
                ::core::option::Option::Some(ttl) => ttl,
                ::core::option::Option::None => "",
            };
            #(#index_consts)*
            const _: () = { #(#checks)* };

            #private::inventory::submit! {
                #private::EntityRegistration {
                    table: ::core::any::TypeId::of::<#table>,
                    entity_type: #entity_type,
                    type_name: #type_name,
                    pk: #registered_pk,
                    sk: #registered_sk,
                    delimiter: #key_delim,
                    versioned: <#ident as #dm::Entity>::VERSION.is_some(),
                    history: <#ident as #private::EntityInternals>::__HISTORY,
                    identify_by_keys: #identify_by_keys,
                    pk_template: #pk_text,
                    sk_template: #sk_text,
                    index_templates: &[#(#index_texts),*],
                    attributes: <#ident as #dm::Entity>::ATTRIBUTES,
                    attribute_types: &[#(#attribute_types),*],
                    ttl: #has_ttl,
                }
            }

            impl #dm::Entity for #ident {
                type Table = #table;
                const ENTITY_TYPE: &'static str = #entity_type;
                const ATTRIBUTES: &'static [&'static str] = &[#(#attribute_names),*];
                #version_items

                fn primary_key(&self) -> #dm::Key<Self> {
                    #dm::Key::__build(#has_sk, |#pk_out, #sk_out| {
                        #private::EntityInternals::__render_primary_key(self, #pk_out, #sk_out)
                    })
                }

                fn to_item(&self) -> ::core::result::Result<#dm::Item, #dm::Error> {
                    let mut item = #dm::Item::with_capacity(#capacity);
                    #private::put_key::<Self>(&mut item, #dm::Entity::primary_key(self))?;
                    #(#index_writes)*
                    #(#key_only_checks)*
                    #(#encode_fields)*
                    #private::finish_item::<Self>(item)
                }

                fn from_item(mut item: #dm::Item) -> ::core::result::Result<Self, #dm::DecodeError> {
                    #private::check_entity_type::<Self>(&item)?;
                    let value = Self {
                        #(#decode_fields)*
                    };
                    // The key attributes, not the plain ones, say which item this is.
                    #private::verify_keys::<Self>(&item, &value)?;
                    ::core::result::Result::Ok(value)
                }
            }

            #versioned_impl

            impl #private::EntityInternals for #ident {
                const __IDENTIFY_BY_KEYS: bool = #identify_by_keys;
                #alias_items
                #history_items
                #chunk_items
                const __INDEX_KEYS: &'static [#private::IndexKeyAttributes] = &[#(#index_keys),*];

                fn __render_primary_key(
                    &self,
                    #pk_out: &mut ::std::string::String,
                    #sk_out: &mut ::std::string::String,
                ) -> ::core::result::Result<(), #dm::key::KeyError> {
                    let _ = &#sk_out;
                    #pk_self
                    #sk_self
                    ::core::result::Result::Ok(())
                }

                fn __render_index_key(
                    &self,
                    index: usize,
                    #ipk: &mut ::std::string::String,
                    #isk: &mut ::std::string::String,
                ) -> ::core::result::Result<bool, #dm::key::KeyError> {
                    match index {
                        #(#index_renders)*
                        _ => {
                            let _ = (#ipk, #isk);
                            ::core::result::Result::Ok(false)
                        }
                    }
                }

                const __INDEX_TEMPLATES: &'static [#private::IndexTemplate] = &[#(#index_updates),*];

            }
        };
    }
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

fn field<'a>(m: &'a EntityModel, name: &str) -> &'a Field {
    // Template fields were checked to exist in `check::entity`.
    m.field(name).unwrap_or_else(|| &m.fields[0])
}

/// The typed sort-key chain: `Type::sk()` returns `TypeSk<0>`; level `i` has one accessor,
/// for field `i`, returning the runtime's `SortKeyField` (whose `eq` gives `TypeSk<i+1>`
/// and whose comparisons end the chain). Every operator lives in the runtime.
#[allow(clippy::too_many_arguments)]
fn sort_key_chain(
    m: &EntityModel,
    t: &Template,
    lit: &LitStr,
    chain: &Ident,
    root_fn: &Ident,
    space: &TokenStream,
    index: bool,
    delimiter: &TokenStream,
) -> TokenStream {
    let ident = &m.ident;
    let vis = &m.vis;
    let dm = quote!(::dynamo_model);
    let private = quote!(#dm::__private);
    let (root, fixed) = template_root(t);
    let chain_doc = format!(
        "Sort-key conditions of [`{ident}`] (`sk = {:?}`), from [`{ident}::{root_fn}`]: each level \
         gives the next field, to fix (`.eq(v)`) or to end in a range on (`.lt(v)`, `.between(a, b)`, ...). \
         A level is itself a condition: `begins_with` the fixed part.",
        lit.value()
    );
    let sk_doc = format!(
        "Sort-key conditions for queries of [`{ident}`] (`{}`); see [`{chain}`].",
        lit.value()
    );
    // One level per placeholder, up to a shard (only an inverted index sorts by a
    // partition key, which may have one): no condition can name a shard's items in order.
    let shard = t.shard().map(|(at, _)| at);
    let fields: Vec<(usize, &str, Option<Bucket>)> = t
        .segments
        .iter()
        .enumerate()
        .take_while(|(i, _)| Some(*i) != shard)
        .filter_map(|(i, s)| match s {
            Segment::Field(f) => Some((i, f.as_str(), None)),
            Segment::Computed(c) => match c.function {
                Function::Bucket(b) => Some((i, c.field.as_str(), Some(b))),
                Function::Shard(_) | Function::Random(_) => None,
            },
            Segment::Lit(_) => None,
        })
        .collect();
    let levels = fields.iter().enumerate().map(|(level, (at, name, bucket))| {
        let f = field(m, name);
        let (fi, ty) = match bucket {
            // A bucket placeholder's condition takes buckets (`DayBucket`, ...).
            Some(b) => (&f.ident, bucket_type(*b)),
            None => (&f.ident, key_type(f, index)),
        };
        let following = match t.segments.get(at + 1) {
            Some(Segment::Lit(l)) => l.clone(),
            _ => String::new(),
        };
        let complete = level + 1 == fields.len() && shard.is_none();
        let next = level + 1;
        let doc = match bucket {
            Some(b) => format!(
                "The sort-key part `{{{name}:{}}}`: fix it (`.eq(bucket)`) or end in a range on it.",
                match b {
                    Bucket::Date => "date",
                    Bucket::Hour => "hour",
                    Bucket::Month => "month",
                }
            ),
            None => {
                format!("The sort-key field `{name}`: fix it (`.eq(v)`) or end in a range on it.")
            }
        };
        quote! {
            impl #chain<#level> {
                #[doc = #doc]
                #vis fn #fi(self) -> #dm::SortKeyField<#ty, #chain<#next>> {
                    #dm::SortKeyField::__new(self, #following, #complete)
                }
            }
        }
    });
    quote! {
        #[doc = #chain_doc]
        #[derive(Debug, Clone)]
        #vis struct #chain<const N: usize>(#private::SortKeyPrefix<#ident, #space>);

        impl #ident {
            #[doc = #sk_doc]
            #vis fn #root_fn() -> #chain<0> {
                #chain(#private::SortKeyPrefix::__root(#root, #fixed, #delimiter))
            }
        }

        #(#levels)*

        impl<const N: usize> #private::SortKeyChain for #chain<N> {
            type Entity = #ident;
            type Space = #space;
            fn __from_prefix(prefix: #private::SortKeyPrefix<#ident, #space>) -> Self {
                #chain(prefix)
            }
            fn __into_prefix(self) -> #private::SortKeyPrefix<#ident, #space> {
                self.0
            }
        }
    }
}

/// The name of the entity's hidden constant holding the position of its `n`-th index in
/// the table's declaration.
fn position_const(n: usize) -> Ident {
    format_ident!("__INDEX_POSITION_{}", n)
}

/// The template's leading literal and whether the template has no placeholder at all.
fn template_root(t: &Template) -> (String, bool) {
    let lead = match t.segments.first() {
        Some(Segment::Lit(l)) => l.clone(),
        _ => String::new(),
    };
    (lead, t.is_constant())
}

/// For a partition constructor's rustdoc: what it returns when the template is sharded.
fn sharded_doc(t: &Template) -> String {
    match t.shard() {
        Some((_, c)) => format!(
            " The template spreads the items over {} shards (`{{{}:..}}`), so this is every              shard's partition ([`ShardedPartition`](dynamo_model::ShardedPartition)): query              them all, or name one with `.shard(n)`.",
            c.function.shards().unwrap_or(1),
            c.field
        ),
        None => String::new(),
    }
}

/// The type a key argument takes for field `f`: the field type for the primary key, the
/// present value's type for an index (whose fields may be `Option`: sparse indexes).
fn key_type(f: &Field, index: bool) -> TokenStream {
    let ty = &f.ty;
    let plain = if index {
        quote_spanned!(ty.span()=> <#ty as ::dynamo_model::__private::OptionalKeyPart>::Part)
    } else {
        quote!(#ty)
    };
    match &f.attrs.key_format {
        Some(format) => {
            let marker = &format.marker;
            quote_spanned!(ty.span()=> ::dynamo_model::key::format::Formatted<#plain, #marker>)
        }
        None => plain,
    }
}

/// The attribute type of a field with a key format: `Formatted<T, F>`, or
/// `FormattedOption<T, F>` for an `Option<T>` field (its attribute, conditions and
/// updates are in the format's attribute form). `None` without a key format.
fn formatted_attr_type(f: &Field) -> Option<TokenStream> {
    let marker = &f.attrs.key_format.as_ref()?.marker;
    let ty = &f.ty;
    let present = present_type(ty);
    Some(if std::ptr::eq(present, ty) {
        quote_spanned!(ty.span()=> ::dynamo_model::key::format::Formatted<#ty, #marker>)
    } else {
        quote_spanned!(ty.span()=> ::dynamo_model::key::format::FormattedOption<#present, #marker>)
    })
}

/// `GSI1` → `gsi1`, `ByEmail` → `by_email`, `orders-by-date` → `orders_by_date`.
pub(crate) fn snake_case(name: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            if prev_lower {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        } else {
            if !out.ends_with('_') && !out.is_empty() {
                out.push('_');
            }
            prev_lower = false;
        }
    }
    out
}

/// `Type::{index}_partition(..)` and `Type::{index}_sk()` for an index template.
fn index_query(m: &EntityModel, n: usize, index: &IndexModel) -> TokenStream {
    let ident = &m.ident;
    let vis = &m.vis;
    let table = &m.table;
    let dm = quote!(::dynamo_model);
    let index_name = index.index.to_string();
    let snake = snake_case(&index_name);
    let position = position_const(n);
    let space = quote!(<#table as #dm::__private::TableIndex<{ #ident::#position }>>::Space);
    let partition_fn = format_ident!("{}_partition", snake);
    let sk_fn = format_ident!("{}_sk", snake);
    let pascal = pascal_case(&snake);
    let chain = format_ident!("{}{}Sk", ident, pascal);
    let partition_struct = format_ident!("{}{}Partition", ident, pascal);
    if let Some((pk_ix, sk_ix)) = &index.attributes {
        return attribute_index_query(
            m,
            &index_name,
            &partition_fn,
            &partition_struct,
            &sk_fn,
            &chain,
            &space,
            pk_ix,
            sk_ix,
        );
    }
    // An inverted index is partitioned by the table's sort key and sorted by its
    // partition key; an LSI shares the table's partition key; a GSI has its own template.
    // An inverted index's keys are the table's: their templates' delimiter is the entity's.
    let (key_delim, index_delim) = (
        delimiter_expr(m.delimiter, table),
        delimiter_expr(index.delimiter, table),
    );
    let inverted_sk = if index.inverted { m.sk.as_ref() } else { None };
    let (pk_template, pk_lit, pk_delim) = match (&index.pk, inverted_sk) {
        (_, Some((t, l))) => (t, l, &key_delim),
        (Some((t, l)), None) => (t, l, &index_delim),
        (None, None) => (&m.pk.0, &m.pk.1, &key_delim),
    };
    let (sort_template, sort_delim) = if index.inverted {
        (Some((&m.pk.0, &m.pk.1)), &key_delim)
    } else {
        (index.sk.as_ref().map(|(t, l)| (t, l)), &index_delim)
    };
    let fields: Vec<ArgField> = partition_uses(m, pk_template)
        .into_iter()
        .map(|(f, uses)| ArgField::template(f, true, &uses))
        .collect();
    let rendered = format!("{} of index `{index_name}`", template_doc("pk", pk_lit));
    let struct_doc =
        partition_struct_doc(ident, &rendered, &partition_fn, &partition_struct, &fields);
    let Args {
        generics,
        params,
        bind,
        definition,
        see,
        ..
    } = constructor_args(
        m,
        partition_struct,
        format_ident!("partition"),
        &fields,
        struct_doc,
    );
    let (root, fixed) = match sort_template {
        Some((t, _)) => template_root(t),
        None => (String::new(), true),
    };
    let doc = format!(
        "The partition of index `{index_name}` holding [`{ident}`] items, for queries.{}{see}",
        sharded_doc(pk_template)
    );
    let chain_tokens = sort_template.map(|(t, lit)| {
        sort_key_chain(
            m,
            t,
            lit,
            &chain,
            &sk_fn,
            &space,
            !index.inverted,
            sort_delim,
        )
    });
    let (partition_type, partition_body) =
        partition_build(m, pk_template, true, &space, (&root, fixed), pk_delim);
    quote! {
        #definition

        impl #ident {
            #[doc = #doc]
            #vis fn #partition_fn #generics (#params) -> #partition_type {
                #bind
                #partition_body
            }
        }
        #chain_tokens
    }
}

/// `Option<T>` → `T` (syntactically): multi-attribute key arguments take present values.
fn present_type(ty: &syn::Type) -> &syn::Type {
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

/// The typed partition and sort chain of a multi-attribute index key.
#[allow(clippy::too_many_arguments)]
fn attribute_index_query(
    m: &EntityModel,
    index_name: &str,
    partition_fn: &Ident,
    partition_struct: &Ident,
    sk_fn: &Ident,
    chain: &Ident,
    space: &TokenStream,
    pk_ix: &[usize],
    sk_ix: &[usize],
) -> TokenStream {
    let ident = &m.ident;
    let vis = &m.vis;
    let dm = quote!(::dynamo_model);
    let private = quote!(#dm::__private);
    let fields: Vec<ArgField> = pk_ix
        .iter()
        .map(|&i| ArgField::attribute(&m.fields[i]))
        .collect();
    let attributes = pk_ix
        .iter()
        .map(|&i| format!("`{}`", m.fields[i].name))
        .collect::<Vec<_>>()
        .join(", ");
    let rendered = format!("the key attributes {attributes} of index `{index_name}`");
    let struct_doc =
        partition_struct_doc(ident, &rendered, partition_fn, partition_struct, &fields);
    let Args {
        generics,
        params,
        bind,
        definition,
        see,
        ..
    } = constructor_args(
        m,
        partition_struct.clone(),
        format_ident!("partition"),
        &fields,
        struct_doc,
    );
    let values = pk_ix.iter().map(|&i| {
        let f = &m.fields[i];
        let (fi, ty, name) = (&f.ident, present_type(&f.ty), &f.name);
        match &f.attrs.key_format {
            Some(format) => {
                let marker = &format.marker;
                quote!(#private::attribute_value::<#dm::key::format::Formatted<#ty, #marker>>(
                    #name,
                    #dm::key::format::Formatted::new(#fi.into()),
                ))
            }
            None => quote!(#private::attribute_value::<#ty>(#name, #fi.into())),
        }
    });
    let doc = format!(
        "The partition of index `{index_name}` (a multi-attribute key) holding [`{ident}`] items.{see}"
    );
    let sk_doc = format!("Sort-key conditions on the multi-attribute sort key of index `{index_name}`: equality on leading attributes, then one comparison.");
    let levels = sk_ix.iter().enumerate().map(|(level, &i)| {
        let f = &m.fields[i];
        let (fi, ty, name) = (&f.ident, present_type(&f.ty), &f.name);
        let ty = match &f.attrs.key_format {
            Some(format) => {
                let marker = &format.marker;
                quote!(#dm::key::format::Formatted<#ty, #marker>)
            }
            None => quote!(#ty),
        };
        let next = level + 1;
        let doc =
            format!("The key attribute `{name}`: fix it (`.eq(v)`) or end in a comparison on it.");
        quote! {
            impl #chain<#level> {
                #[doc = #doc]
                #vis fn #fi(self) -> #dm::AttributeField<#ty, #chain<#next>> {
                    #dm::AttributeField::__new(self, #name)
                }
            }
        }
    });
    // No sort-key fields: sorted by the table's own sort key (the derive's checks allow it
    // only then), so the conditions are those of the entity's sort-key template.
    let table_sorted = match (&m.sk, sk_ix.is_empty()) {
        (Some((t, lit)), true) => Some(sort_key_chain(
            m,
            t,
            lit,
            chain,
            sk_fn,
            space,
            false,
            &delimiter_expr(m.delimiter, &m.table),
        )),
        _ => None,
    };
    let chain_tokens = table_sorted.or_else(|| (!sk_ix.is_empty()).then(|| {
        quote! {
            #[doc = #sk_doc]
            #[derive(Debug, Clone)]
            #vis struct #chain<const N: usize>(#private::AttributePrefix<#ident, #space>);

            impl #ident {
                #[doc = #sk_doc]
                #vis fn #sk_fn() -> #chain<0> {
                    #chain(#private::AttributePrefix::__root())
                }
            }

            #(#levels)*

            impl<const N: usize> #private::AttributeChain for #chain<N> {
                type Entity = #ident;
                type Space = #space;
                fn __from_prefix(prefix: #private::AttributePrefix<#ident, #space>) -> Self {
                    #chain(prefix)
                }
                fn __into_prefix(self) -> #private::AttributePrefix<#ident, #space> {
                    self.0
                }
            }

            impl<__T: #private::Includes<#ident>, const N: usize> #private::IntoSortKey<__T, #space> for #chain<N> {
                fn into_sort_key(self) -> ::core::result::Result<#dm::SortCondition, #dm::key::KeyError> {
                    #private::IntoSortKey::<__T, #space>::into_sort_key(self.0)
                }
            }
        }
    }));
    quote! {
        #definition

        impl #ident {
            #[doc = #doc]
            #vis fn #partition_fn #generics (#params) -> #dm::MultiPartition<#ident, #space> {
                #bind
                #dm::MultiPartition::__build(::std::vec![#(#values),*])
            }
        }
        #chain_tokens
    }
}

/// The arguments of a key or partition constructor. With at most one field they stay
/// positional, short to write (`User::key("u-1")`); with two or more, one generated struct
/// names them (`Order::key(OrderKey { user_id, placed_at, order_id })`), so two fields of
/// one type can never be swapped silently, and a missing, unknown or repeated field is
/// rustc's own error at the call.
struct Args {
    /// `<A: Bound, ..>` of the constructor; empty when positional.
    generics: TokenStream,
    /// The constructor's parameter list.
    params: TokenStream,
    /// Binds each field's value to a local named after the field.
    bind: TokenStream,
    /// The generated struct's definition, if any.
    definition: TokenStream,
    /// The struct's type with its parameters (`OrderKey<UserId, ..>`), if any.
    named: Option<TokenStream>,
    /// For the constructor's rustdoc: where the fields are named, if they are.
    see: String,
}

/// One field of a key or partition constructor.
struct ArgField<'a> {
    ident: &'a Ident,
    /// The trait its argument implements.
    bound: TokenStream,
    /// What the argument may be, for the rustdoc of the struct's field.
    accepts: String,
}

impl<'a> ArgField<'a> {
    /// A key-template field, used by the template as `uses` says (`None`: as it is): a
    /// `KeyArg` of its type (of its present type for an index template, whose fields may be
    /// `Option`: sparse indexes) for its own encoding or a shard of it, a `ShardValue` for a
    /// random shard, a `BucketArg` for each time bucket of it.
    fn template(f: &'a Field, index: bool, uses: &[Option<Function>]) -> Self {
        let private = quote!(::dynamo_model::__private);
        let ty = key_type(f, index);
        let shown = type_doc(if index { present_type(&f.ty) } else { &f.ty });
        let mut bounds = Vec::new();
        let mut accepts = Vec::new();
        if uses
            .iter()
            .any(|u| matches!(u, None | Some(Function::Shard(_))))
        {
            bounds.push(quote!(#private::KeyArg<#ty>));
            accepts.push(if shown == "String" {
                "`String`, `&String` or `&str`".to_string()
            } else {
                format!("`{shown}` or `&{shown}`")
            });
        }
        if uses.iter().any(|u| matches!(u, Some(Function::Random(_)))) {
            bounds.push(quote!(#private::ShardValue));
            accepts.push("a `u16` shard number".to_string());
        }
        let mut buckets: Vec<Bucket> = Vec::new();
        for u in uses {
            if let Some(Function::Bucket(b)) = u {
                if !buckets.contains(b) {
                    buckets.push(*b);
                }
            }
        }
        for b in buckets {
            let bucket = bucket_type(b);
            bounds.push(quote!(#private::BucketArg<#bucket>));
            accepts.push(format!("a `{}` or a `{shown}` inside it", b.type_name()));
        }
        let accepts = match accepts.as_slice() {
            [one] => one.clone(),
            // Several uses: the value itself satisfies all of them.
            _ => format!("`{shown}` or `&{shown}`"),
        };
        ArgField {
            ident: &f.ident,
            bound: quote!(#(#bounds)+*),
            accepts,
        }
    }

    /// A field of a multi-attribute index key: anything that converts into its value.
    fn attribute(f: &'a Field) -> Self {
        let ty = present_type(&f.ty);
        ArgField {
            ident: &f.ident,
            bound: quote!(::core::convert::Into<#ty>),
            accepts: format!("anything `Into<{}>`", type_doc(ty)),
        }
    }
}

/// A type as written, for rustdoc: `time :: OffsetDateTime` → `time::OffsetDateTime`.
fn type_doc(ty: &syn::Type) -> String {
    ty.to_token_stream()
        .to_string()
        .replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" <", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" ,", ",")
}

/// `fields`: each field with the bound its argument must meet. `strukt`: the struct's name
/// when named; `doc`: its rustdoc.
fn constructor_args(
    m: &EntityModel,
    strukt: Ident,
    param: Ident,
    fields: &[ArgField],
    doc: String,
) -> Args {
    if fields.len() < 2 {
        let params = fields.iter().map(|a| {
            let (fi, bound) = (a.ident, &a.bound);
            quote!(#fi: impl #bound)
        });
        return Args {
            generics: TokenStream::new(),
            params: quote!(#(#params),*),
            bind: TokenStream::new(),
            definition: TokenStream::new(),
            named: None,
            see: String::new(),
        };
    }
    let vis = &m.vis;
    let generics = generic_names(&m.ident, fields);
    let idents: Vec<&Ident> = fields.iter().map(|a| a.ident).collect();
    let bounds = fields.iter().map(|a| &a.bound);
    let field_docs = fields.iter().map(|a| {
        let name = a.ident.to_string();
        format!(
            "Value of `{}`: {}.",
            name.trim_start_matches("r#"),
            a.accepts
        )
    });
    let named = quote!(#strukt<#(#generics),*>);
    Args {
        generics: quote!(<#(#generics: #bounds),*>),
        params: quote!(#param: #named),
        bind: quote!(let #strukt { #(#idents),* } = #param;),
        definition: quote! {
            #[doc = #doc]
            #[derive(Debug, Clone, Copy)]
            #vis struct #strukt<#(#generics),*> {
                #( #[doc = #field_docs] pub #idents: #generics, )*
            }
        },
        named: Some(named),
        see: format!(" Its fields are named: see [`{strukt}`]."),
    }
}

/// One type parameter per field, named after it (`user_id` → `UserId`), renamed when the
/// name would shadow a type its bounds name, the entity, or `Self`.
fn generic_names(entity: &Ident, fields: &[ArgField]) -> Vec<Ident> {
    fn idents_of(tokens: TokenStream, out: &mut Vec<String>) {
        for tree in tokens {
            match tree {
                proc_macro2::TokenTree::Ident(i) => out.push(i.to_string()),
                proc_macro2::TokenTree::Group(g) => idents_of(g.stream(), out),
                _ => {}
            }
        }
    }
    let mut taken = vec![entity.to_string(), "Self".to_string()];
    for a in fields {
        idents_of(a.bound.clone(), &mut taken);
    }
    fields
        .iter()
        .map(|a| {
            let mut name = pascal_case(a.ident.to_string().trim_start_matches("r#"));
            if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
                name.insert_str(0, "Field");
            }
            while taken.contains(&name) {
                name.push_str("Arg");
            }
            taken.push(name.clone());
            format_ident!("{}", name)
        })
        .collect()
}

/// `user_id` → `UserId`, `gsi1` → `Gsi1`.
pub(crate) fn pascal_case(snake: &str) -> String {
    snake
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// A template as users wrote it, for docs: `pk = "USER#{user_id}"`.
fn template_doc(which: &str, lit: &LitStr) -> String {
    format!("`{which} = {:?}`", lit.value())
}

/// The rustdoc of a generated partition struct: which key it renders, and a call.
fn partition_struct_doc(
    ident: &Ident,
    rendered: &str,
    constructor: &Ident,
    strukt: &Ident,
    fields: &[ArgField],
) -> String {
    let names = fields
        .iter()
        .map(|a| a.ident.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "The partition-key fields of [`{ident}`] ({rendered}), by name, in any order: \
         `{ident}::{constructor}({strukt} {{ {names} }})`."
    )
}

/// `&Compression { .. }` for a compressed field (a constant, promoted to `'static`).
pub(crate) fn compression(c: &crate::attr::Compress) -> TokenStream {
    let private = quote!(::dynamo_model::__private);
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
        None => quote!(::dynamo_model::compress::DEFAULT_THRESHOLD),
    };
    let max_size = match c.max_size {
        Some(n) => quote!(#n),
        None => quote!(::dynamo_model::compress::DEFAULT_MAX_SIZE),
    };
    quote!(&#private::Compression { codec: #codec, threshold: #threshold, max_size: #max_size })
}

/// A statement failing compilation, at the codec's name, when the codec's feature of
/// dynamo-model is off.
pub(crate) fn codec_check(field: &Ident, c: &crate::attr::Compress) -> TokenStream {
    let private = quote!(::dynamo_model::__private);
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
