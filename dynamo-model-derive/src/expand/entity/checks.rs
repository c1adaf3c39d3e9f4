//! Compile-time checks of an entity against its table's declaration, which only the
//! compiler knows: `const` assertions panicking with a message at the attribute to change.

use super::index_key::own_keys;
use super::{codec_check, const_panic, formatted_attr_type, table_name};
use crate::check::{EntityModel, IndexModel};
use crate::template::{Segment, Template};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, LitStr};

/// Every const assertion of the entity, in the order they are evaluated: the primary key,
/// the fields, the identification by keys, the history, then each index.
pub(super) fn checks(m: &EntityModel) -> Vec<TokenStream> {
    let mut checks = key_checks(m);
    checks.extend(field_checks(m));
    checks.extend(identify_check(m));
    checks.extend(versioned_check(m));
    for (n, index) in m.indexes.iter().enumerate() {
        checks.extend(index_checks(m, n, index));
    }
    checks
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

/// The sort key against the table's, and each template's delimiter against the table's.
fn key_checks(m: &EntityModel) -> Vec<TokenStream> {
    let (table, table_name) = (&m.table, table_name(m));
    let dm = quote!(::dynamo_model);
    let _ = (&table, &dm);
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
    checks
}

/// Each field against the attributes the table reserves: the TTL, the codec's feature,
/// the keys, the entity type and the write token, and its aliases.
fn field_checks(m: &EntityModel) -> Vec<TokenStream> {
    let (table, table_name) = (&m.table, table_name(m));
    let dm = quote!(::dynamo_model);
    let _ = (&table, &dm);
    let mut checks = Vec::new();
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
    checks
}

/// A table whose entities are all identified by their keys: each needs literal text in
/// its templates (an entity declaring it is checked when its templates are read).
fn identify_check(m: &EntityModel) -> Option<TokenStream> {
    let table_name = table_name(m);
    let literal = |t: &Template| t.segments.iter().any(|s| matches!(s, Segment::Lit(_)));
    if !literal(&m.pk.0) && !m.sk.as_ref().is_some_and(|s| literal(&s.0)) {
        let p = const_panic(
            m.pk.1.span(),
            format!("table `{table_name}` identifies untyped items by their keys (`identify = \"keys\"`), and these templates have no literal text to tell this entity's items apart from the others'"),
        );
        return Some(quote!(if __SCHEMA.identify_by_keys { #p }));
    }
    None
}

/// Every write of a versioned entity stores the revision's time under its time
/// attribute, on the latest copy and on the revision: it must be no attribute the
/// table gives another role (a key, the entity type, the write token, the TTL, an
/// index key), or the time would overwrite it.
fn versioned_check(m: &EntityModel) -> Option<TokenStream> {
    let table_name = table_name(m);
    let dm = quote!(::dynamo_model);
    let v = m.versioned.as_ref()?;
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
    Some(quote! {
        if __SCHEMA.is_reserved_attribute(#time) { #reserved }
        if #dm::schema::const_str_eq(__SCHEMA.write_token, #time) { #token }
        if #dm::schema::const_str_eq(__TTL_ATTR, #time) { #ttl }
        if __SCHEMA.is_index_key_attribute(#time) { #index }
    })
}

/// An index the entity uses against the table's declaration of it: its kind and key
/// attributes, and what the entity's templates write there.
fn index_checks(m: &EntityModel, n: usize, index: &IndexModel) -> Vec<TokenStream> {
    let idx = format_ident!("__INDEX_{}", n);
    if let Some((pk_ix, sk_ix)) = &index.attributes {
        return vec![attribute_index_check(m, index, &idx, pk_ix, sk_ix)];
    }
    if index.inverted {
        return vec![inverted_index_check(index, &idx)];
    }
    template_index_checks(m, index, &idx)
}

/// A multi-attribute index key: its key attributes are the listed fields', in order and
/// of their types.
fn attribute_index_check(
    m: &EntityModel,
    index: &IndexModel,
    idx: &Ident,
    pk_ix: &[usize],
    sk_ix: &[usize],
) -> TokenStream {
    let dm = quote!(::dynamo_model);
    let index_name = index.index.to_string();
    let span = index.index.span();
    let mut checks = Vec::new();
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
    quote!(#(#checks)*)
}

/// An index used without templates: the table's keys swapped.
fn inverted_index_check(index: &IndexModel, idx: &Ident) -> TokenStream {
    let dm = quote!(::dynamo_model);
    let index_name = index.index.to_string();
    let span = index.index.span();
    let mut checks = Vec::new();
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
    quote!(#(#checks)*)
}

/// An index with key templates: its kind and number of key attributes, and the
/// attributes its templates write.
fn template_index_checks(m: &EntityModel, index: &IndexModel, idx: &Ident) -> Vec<TokenStream> {
    let table_name = table_name(m);
    let dm = quote!(::dynamo_model);
    let index_name = index.index.to_string();
    let span = index.index.span();
    let mut checks = Vec::new();
    let local = const_panic(
        span,
        format!(
            "index `{index_name}` is an LSI: it uses the table's partition key, so give only `sk`"
        ),
    );
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
    // What a template writes: never the table's own keys (that would move the item),
    // always a string attribute, never a field's attribute.
    let stored_names: Vec<&String> = m
        .fields
        .iter()
        .filter(|f| m.stores(f))
        .map(|f| &f.name)
        .collect();
    let (own_pk, own_sk) = own_keys(m, index, idx);
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

    checks
}
