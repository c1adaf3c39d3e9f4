//! Compile-time assertions of an entity against its table's declaration, which only the
//! compiler knows: `const` items calling the runtime's `generated::assert`, or panicking
//! themselves, with a message at the attribute to change. The derive's own checks of the
//! input, which need no table, are `crate::check`'s.

use super::index_key::index_template_const;
use super::key::key_template_const;
use super::{codec_assertion, const_panic, dm, formatted_attr_type, table_name};
use crate::check::{EntityModel, IndexModel};
use crate::template::{Segment, Template};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, LitStr};

/// Every const assertion of the entity, in the order they are evaluated: the primary key,
/// the fields, the identification by keys, the history, then each index.
pub(super) fn assertions(m: &EntityModel) -> Vec<TokenStream> {
    let mut assertions = key_assertions(m);
    assertions.extend(field_assertions(m));
    assertions.extend(identify_assertion(m));
    assertions.extend(footprint_assertions(m));
    assertions.extend(versioned_assertion(m));
    for (n, index) in m.indexes.iter().enumerate() {
        assertions.extend(index_assertions(m, n, index));
    }
    assertions
}

/// An assertion that a template which declares no delimiter, and so takes the table's,
/// follows its placeholders with the table's delimiter (the table's declaration is only
/// known to the compiler).
fn table_delimiter_assertion(
    declared: Option<char>,
    (template, lit): &(Template, LitStr),
    (which, name): (&str, Ident),
    table_name: &str,
) -> Option<TokenStream> {
    let (None, Some(follower)) = (declared, template.delimiter) else {
        return None;
    };
    let follower = follower as u8;
    Some(quote_spanned! {lit.span()=>
        // Declaring none, the entity's delimiter (`__DELIMITER`) is the table's.
        __assert::delimiter(__DELIMITER, #follower, #which, #name.text, #table_name);
    })
}

/// The sort key against the table's, and each template's delimiter against the table's.
fn key_assertions(m: &EntityModel) -> Vec<TokenStream> {
    let table_name = table_name(m);
    let mut assertions = Vec::new();
    let (pk_lit, sk_lit) = (&m.pk.1, m.sk.as_ref().map(|s| &s.1));
    let span = sk_lit.unwrap_or(pk_lit).span();
    let (has_sk, versioned) = (sk_lit.is_some(), m.versioned.is_some());
    assertions.push(quote_spanned! {span=>
        __assert::sort_key(&__SCHEMA, #table_name, #has_sk, #versioned);
    });
    let primary_templates =
        std::iter::once(("pk", &m.pk, false)).chain(m.sk.as_ref().map(|s| ("sk", s, true)));
    for (which, t, sort) in primary_templates {
        let name = key_template_const(sort);
        assertions.extend(table_delimiter_assertion(
            m.delimiter,
            t,
            (which, name),
            &table_name,
        ));
    }
    for (n, index) in m.indexes.iter().enumerate() {
        let templates = index.pk.iter().map(|t| ("index pk", t, false));
        for (which, t, sort) in templates.chain(index.sk.iter().map(|t| ("index sk", t, true))) {
            let name = index_template_const(n, sort);
            assertions.extend(table_delimiter_assertion(
                index.delimiter,
                t,
                (which, name),
                &table_name,
            ));
        }
    }
    assertions
}

/// Each field against the attributes the table reserves: the TTL, the codec's feature,
/// the keys, the entity type and the write token, and its aliases.
fn field_assertions(m: &EntityModel) -> Vec<TokenStream> {
    let (table, table_name) = (&m.table, table_name(m));
    let dm = dm();
    let _ = (&table, &dm);
    let mut assertions = Vec::new();
    for f in m.fields.iter().filter(|f| f.attrs.ttl) {
        let p = const_panic(
            f.ident.span(),
            format!(
                "field `{}` is #[dynamo(ttl)] but table `{table_name}` declares no `ttl` attribute",
                f.ident
            ),
        );
        assertions.push(quote!(if __SCHEMA.ttl.is_none() { #p }));
    }
    for f in &m.fields {
        if let Some(c) = &f.attrs.compress {
            assertions.push(codec_assertion(&f.ident, c));
        }
    }
    for f in m.fields.iter().filter(|f| m.stores(f) && !f.attrs.ttl) {
        let name = &f.name;
        // Point at the rename when there is one: that is what to change.
        let span = f.attrs.rename.as_ref().map_or(f.ident.span(), LitStr::span);
        let field = f.ident.to_string();
        assertions.push(quote_spanned! {span=>
            __assert::stored_field(&__SCHEMA, #table_name, #field, #name);
        });
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
            assertions.push(quote! {
                if __SCHEMA.is_reserved_attribute(#alias)
                    || __SCHEMA.is_index_key_attribute(#alias)
                    || #dm::schema::const_str_eq(__SCHEMA.write_token, #alias)
                    || #dm::schema::const_str_eq(__TTL_ATTR, #alias)
                { #p }
            });
        }
    }
    assertions
}

/// A table whose entities are all identified by their keys: each needs literal text in
/// its templates (an entity declaring it is checked when its templates are read).
fn identify_assertion(m: &EntityModel) -> Option<TokenStream> {
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

/// What the table's declaration says of the attributes the crate writes besides the
/// entity's: an entity without the entity-type attribute must be identified by its keys
/// (on the entity or its table).
fn footprint_assertions(m: &EntityModel) -> Vec<TokenStream> {
    let table_name = table_name(m);
    let mut assertions = Vec::new();
    if let (Some(lit), false) = (&m.no_write_type, m.identify_by_keys) {
        let p = const_panic(
            lit.span(),
            format!("items written without the entity-type attribute (`write_type = false`) are identified by their keys: add `identify = \"keys\"` to the entity or to table `{table_name}`"),
        );
        assertions.push(quote!(if !__SCHEMA.identify_by_keys { #p }));
    }
    assertions
}

/// Every write of a versioned entity stores the revision's time under its time
/// attribute, on the latest copy and on the revision: it must be no attribute the
/// table gives another role (a key, the entity type, the write token, the TTL, an
/// index key), or the time would overwrite it.
fn versioned_assertion(m: &EntityModel) -> Option<TokenStream> {
    let table_name = table_name(m);
    let dm = dm();
    let v = m.versioned.as_ref()?;
    let time = v.time_attribute.as_ref()?;
    let role = |what: &str| {
        const_panic(
            v.time_span,
            format!("table `{table_name}` uses `{time}` for {what}, and a #[dynamo(history)] entity writes the time of each revision there; choose another attribute with history(time_attribute = \"..\")"),
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
fn index_assertions(m: &EntityModel, n: usize, index: &IndexModel) -> Vec<TokenStream> {
    let idx = format_ident!("__INDEX_{}", n);
    if let Some((pk_ix, sk_ix)) = &index.attributes {
        return vec![attribute_index_assertion(m, index, &idx, pk_ix, sk_ix)];
    }
    if index.inverted {
        return vec![inverted_index_assertion(index, &idx)];
    }
    template_index_assertions(m, index, &idx)
}

/// A multi-attribute index key: its key attributes are the listed fields', in order and
/// of their types.
fn attribute_index_assertion(
    m: &EntityModel,
    index: &IndexModel,
    idx: &Ident,
    pk_ix: &[usize],
    sk_ix: &[usize],
) -> TokenStream {
    let dm = dm();
    let index_name = index.index.to_string();
    let span = index.index.span();
    let mut assertions = Vec::new();
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
                Some(sk) => #dm::schema::const_str_eq(sk.name, #idx.sk[0].name),
                None => false,
            }
    };
    assertions.push(quote! {
        if #idx.pk.len() != #npk || (#idx.sk.len() != #nsk && !(#table_sk)) { #count }
        #(#per_field)*
    });
    quote!(#(#assertions)*)
}

/// An index used without templates: the table's keys swapped.
fn inverted_index_assertion(index: &IndexModel, idx: &Ident) -> TokenStream {
    let dm = dm();
    let index_name = index.index.to_string();
    let span = index.index.span();
    let mut assertions = Vec::new();
    let not_inverted = const_panic(span, format!(
        "index `{index_name}` is used without templates, so its keys must be the table's keys swapped (pk = the table's sort key, sk = its partition key): an inverted index"
    ));
    assertions.push(quote! {
        let __inverted = match (#idx.pk, #idx.sk, __SCHEMA.sk) {
            ([pk], [sk], Some(table_sk)) => {
                #dm::schema::const_str_eq(pk.name, table_sk.name)
                    && #dm::schema::const_str_eq(sk.name, __SCHEMA.pk.name)
            }
            _ => false,
        };
        if !__inverted { #not_inverted }
    });
    quote!(#(#assertions)*)
}

/// An index with key templates: its kind and number of key attributes, and the
/// attributes its templates write.
fn template_index_assertions(m: &EntityModel, index: &IndexModel, idx: &Ident) -> Vec<TokenStream> {
    let table_name = table_name(m);
    let entity = m.ident.to_string();
    let repeats = |index_t: Option<&(Template, LitStr)>, own: Option<&(Template, LitStr)>| {
        matches!((index_t, own), (Some(a), Some(b)) if a.1.value() == b.1.value())
            && index.delimiter == m.delimiter
    };
    let (has_pk, has_sk) = (index.pk.is_some(), index.sk.is_some());
    let repeats_pk = repeats(index.pk.as_ref(), Some(&m.pk));
    let repeats_sk = repeats(index.sk.as_ref(), m.sk.as_ref());
    let stored = m.fields.iter().filter(|f| m.stores(f)).map(|f| &f.name);
    vec![quote_spanned! {index.index.span()=>
        __assert::template_index(
            &__SCHEMA, #idx, #table_name, #entity, (#has_pk, #has_sk), (#repeats_pk, #repeats_sk),
            &[#(#stored),*]);
    }]
}
