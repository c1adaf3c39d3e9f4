//! The typed sort-key chain of a key template: one level per placeholder, each fixing
//! its field or ending in a range on it; every operator lives in the runtime.

use super::{bucket_type, dm, field, key_type, private, template_root, Items};
use crate::check::EntityModel;
use crate::template::{Bucket, Function, Segment, Template};
use proc_macro2::TokenStream;
use quote::quote;
use syn::{Ident, LitStr};

/// The typed sort-key chain: `Type::sk()` returns `TypeSk<0>`; level `i` has one accessor,
/// for field `i`, returning the runtime's `SortKeyField` (whose `eq` gives `TypeSk<i+1>`
/// and whose comparisons end the chain). Every operator lives in the runtime.
#[allow(clippy::too_many_arguments)]
pub(super) fn sort_key_chain(
    m: &EntityModel,
    t: &Template,
    lit: &LitStr,
    chain: &Ident,
    root_fn: &Ident,
    (def_space, space): (&TokenStream, &TokenStream),
    index: bool,
    delimiter: &TokenStream,
) -> Items {
    let ident = &m.ident;
    let vis = &m.vis;
    let private = private();
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
    let levels = sort_levels(m, t, chain, index);
    let chain_name = chain.to_string();
    let defs = quote! {
        #[doc = #chain_doc]
        #vis struct #chain<const N: usize>(::dynamo_model::__private::SortKeyPrefix<#ident, #def_space>);
    };
    let body = quote! {
        // Not derived: derives repeat the bounds and paths for nothing.
        impl<const N: usize> ::core::fmt::Debug for #chain<N> {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_tuple(#chain_name).field(&self.0).finish()
            }
        }
        impl<const N: usize> ::core::clone::Clone for #chain<N> {
            fn clone(&self) -> Self {
                #chain(self.0.clone())
            }
        }

        #(#levels)*

        // Generic, so compiled where used without `#[inline]`.
        impl<const N: usize> #private::SortKeyChain for #chain<N> {
            type Entity = #ident;
            type Space = #space;
            fn __from_prefix(prefix: #private::SortKeyPrefix<#ident, Self::Space>) -> Self {
                #chain(prefix)
            }
            fn __into_prefix(self) -> #private::SortKeyPrefix<#ident, Self::Space> {
                self.0
            }
        }
    };
    let methods = quote! {
        #[doc = #sk_doc]
        #vis fn #root_fn() -> #chain<0> {
            #chain(#private::SortKeyPrefix::__root(#root, #fixed, #delimiter))
        }
    };
    Items {
        defs,
        methods,
        body,
    }
}
/// One accessor per level of the chain: a placeholder up to a shard, whose value the
/// level's condition takes.
fn sort_levels(m: &EntityModel, t: &Template, chain: &Ident, index: bool) -> Vec<TokenStream> {
    let vis = &m.vis;
    let dm = dm();
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
    fields
        .iter()
        .enumerate()
        .map(|(level, (at, name, bucket))| {
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
            let doc = level_doc(name, *bucket);
            quote! {
                impl #chain<#level> {
                    #[doc = #doc]
                    #vis fn #fi(self) -> #dm::SortKeyField<#ty, #chain<#next>> {
                        #dm::SortKeyField::__new(self, #following, #complete)
                    }
                }
            }
        })
        .collect()
}

/// The doc of the level of placeholder `name` (a bucket of it when `bucket` is given).
fn level_doc(name: &str, bucket: Option<Bucket>) -> String {
    match bucket {
        Some(b) => format!(
            "Sort-key part `{{{name}:{}}}`, a bucket (`.eq(bucket)`).",
            match b {
                Bucket::Date => "date",
                Bucket::Hour => "hour",
                Bucket::Month => "month",
            }
        ),
        // The chain's own doc says what a level does.
        None => format!("Sort-key field `{name}`."),
    }
}
