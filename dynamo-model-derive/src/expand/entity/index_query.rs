//! Typed queries of an index: `Type::{index}_partition(..)` and `Type::{index}_sk()`, for
//! an index with key templates, an inverted index, or a multi-attribute key.

use super::args::{
    constructor_args, partition_struct_doc, sharded_doc, template_doc, ArgField, Args,
};
use super::index_key::{index_delimiter, index_template_const};
use super::key::key_template_const;
use super::key::{partition_build, partition_uses};
use super::sort_chain::sort_key_chain;
use super::{
    dm, index_rust_name, pascal_case, position_const, present_type, private, template_root, Items,
};
use crate::check::{EntityModel, IndexModel};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};
use syn::Ident;

/// `Type::{index}_partition(..)` and `Type::{index}_sk()` for an index template.
pub(super) fn index_query(m: &EntityModel, n: usize, index: &IndexModel) -> Items {
    let ident = &m.ident;
    let vis = &m.vis;
    let table = &m.table;
    let index_name = index.index.to_string();
    let snake = index_rust_name(&index_name);
    let position = position_const(n);
    // The index's key space: in the chain's definition, outside the entity's `const`
    // block, with full paths; inside it, an alias.
    let def_space =
        quote!(<#table as ::dynamo_model::__private::TableIndex<{ #ident::#position }>>::Space);
    let space = format_ident!("__Space{}", n).to_token_stream();
    // The alias, and the entity's membership of the index (what an index scan asks).
    let space_alias = quote! {
        type #space = <#table as __p::TableIndex<{ #ident::#position }>>::Space;
        impl __dm::InIndex<#space> for #ident {}
    };
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
            (&def_space, &space),
            pk_ix,
            sk_ix,
        )
        .with_body(space_alias);
    }
    // An inverted index is partitioned by the table's sort key and sorted by its
    // partition key; an LSI shares the table's partition key; a GSI has its own template.
    // An inverted index's keys are the table's: their templates' delimiter is the entity's.
    let (key_delim, index_delim) = (quote!(__DELIMITER), index_delimiter(m, index));
    let inverted_sk = if index.inverted { m.sk.as_ref() } else { None };
    // The template constant (`index_key::template_consts`) holds its delimiter.
    let (pk_template, pk_lit, pk_const) = match (&index.pk, inverted_sk) {
        (_, Some((t, l))) => (t, l, key_template_const(true)),
        (Some((t, l)), None) => (t, l, index_template_const(n, false)),
        (None, None) => (&m.pk.0, &m.pk.1, key_template_const(false)),
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
    let chain = sort_template.map(|(t, lit)| {
        sort_key_chain(
            m,
            t,
            lit,
            &chain,
            &sk_fn,
            (&def_space, &space),
            !index.inverted,
            sort_delim,
        )
    });
    let (partition_type, partition_body) =
        partition_build(m, (&pk_const, pk_template), true, &space, (&root, fixed));
    let partition = quote! {
        #[doc = #doc]
        #vis fn #partition_fn #generics (#params) -> #partition_type {
            #bind
            #partition_body
        }
    };
    chain
        .unwrap_or_default()
        .after(definition, partition)
        .with_body(space_alias)
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
    (def_space, space): (&TokenStream, &TokenStream),
    pk_ix: &[usize],
    sk_ix: &[usize],
) -> Items {
    let ident = &m.ident;
    let vis = &m.vis;
    let dm = dm();
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
    let values = partition_values(m, pk_ix);
    let doc = format!(
        "The partition of index `{index_name}` (a multi-attribute key) holding [`{ident}`] items.{see}"
    );
    // No sort-key fields: sorted by the table's own sort key (the derive's assertions allow it
    // only then), so the conditions are those of the entity's sort-key template.
    let table_sorted = match (&m.sk, sk_ix.is_empty()) {
        (Some((t, lit)), true) => Some(sort_key_chain(
            m,
            t,
            lit,
            chain,
            sk_fn,
            (def_space, space),
            false,
            &quote!(__DELIMITER),
        )),
        _ => None,
    };
    let chain = table_sorted.or_else(|| {
        (!sk_ix.is_empty())
            .then(|| attribute_sort_chain(m, index_name, chain, sk_fn, (def_space, space), sk_ix))
    });
    let partition = quote! {
        #[doc = #doc]
        #vis fn #partition_fn #generics (#params) -> #dm::MultiPartition<#ident, #space> {
            #bind
            #dm::MultiPartition::__build(::std::vec![#(#values),*])
        }
    };
    chain.unwrap_or_default().after(definition, partition)
}

/// The partition's key attributes as values, each in its key format.
fn partition_values(m: &EntityModel, pk_ix: &[usize]) -> Vec<TokenStream> {
    let (dm, private) = (dm(), private());
    pk_ix
        .iter()
        .map(|&i| {
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
        })
        .collect()
}

/// The sort-key chain of a multi-attribute sort key: one level per key attribute, each
/// fixed by equality or ending in a comparison.
fn attribute_sort_chain(
    m: &EntityModel,
    index_name: &str,
    chain: &Ident,
    sk_fn: &Ident,
    (def_space, space): (&TokenStream, &TokenStream),
    sk_ix: &[usize],
) -> Items {
    let ident = &m.ident;
    let vis = &m.vis;
    let (dm, private) = (dm(), private());
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
    Items {
        defs: quote! {
            #[doc = #sk_doc]
            #[derive(Debug, Clone)]
            #vis struct #chain<const N: usize>(::dynamo_model::__private::AttributePrefix<#ident, #def_space>);
        },
        methods: quote! {
            #[doc = #sk_doc]
                        #vis fn #sk_fn() -> #chain<0> {
                #chain(#private::AttributePrefix::__root())
            }
        },
        body: quote! {
            #(#levels)*

            // Generic, so compiled where used without `#[inline]`.
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
        },
    }
}
