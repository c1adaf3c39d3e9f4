//! The arguments of key and partition constructors: positional for one field, a generated
//! struct naming them for two or more; and the rustdoc of the constructors.

use super::{bucket_type, key_type, pascal_case, present_type, private};
use crate::check::{EntityModel, Field};
use crate::template::{Bucket, Function, Template};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};
use syn::{Ident, LitStr};

/// For a partition constructor's rustdoc: what it returns when the template is sharded.
pub(super) fn sharded_doc(t: &Template) -> String {
    match t.shard() {
        Some((_, c)) => format!(
            " The template spreads the items over {} shards (`{{{}:..}}`), so this is every              shard's partition ([`ShardedPartition`](dynamo_model::ShardedPartition)): query              them all, or name one with `.shard(n)`.",
            c.function.shards().unwrap_or(1),
            c.field
        ),
        None => String::new(),
    }
}

/// The arguments of a key or partition constructor. With at most one field they stay
/// positional, short to write (`User::key("u-1")`); with two or more, one generated struct
/// names them (`Order::key(OrderKey { user_id, placed_at, order_id })`), so two fields of
/// one type can never be swapped silently, and a missing, unknown or repeated field is
/// rustc's own error at the call.
pub(super) struct Args {
    /// `<A: Bound, ..>` of the constructor; empty when positional.
    pub generics: TokenStream,
    /// The constructor's parameter list.
    pub params: TokenStream,
    /// Binds each field's value to a local named after the field.
    pub bind: TokenStream,
    /// The generated struct's definition, if any.
    pub definition: TokenStream,
    /// The struct's type with its parameters (`OrderKey<UserId, ..>`), if any.
    pub named: Option<TokenStream>,
    /// For the constructor's rustdoc: where the fields are named, if they are.
    pub see: String,
}

/// One field of a key or partition constructor.
pub(super) struct ArgField<'a> {
    pub ident: &'a Ident,
    /// The trait its argument implements.
    pub bound: TokenStream,
    /// What the argument may be, for the rustdoc of the struct's field.
    pub accepts: String,
}

impl<'a> ArgField<'a> {
    /// A key-template field, used by the template as `uses` says (`None`: as it is): a
    /// `KeyArg` of its type (of its present type for an index template, whose fields may be
    /// `Option`: sparse indexes) for its own encoding or a shard of it, a `ShardValue` for a
    /// random shard, a `BucketArg` for each time bucket of it.
    pub(super) fn template(f: &'a Field, index: bool, uses: &[Option<Function>]) -> Self {
        let private = private();
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
    pub(super) fn attribute(f: &'a Field) -> Self {
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
pub(super) fn constructor_args(
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

/// A template as users wrote it, for docs: `pk = "USER#{user_id}"`.
pub(super) fn template_doc(which: &str, lit: &LitStr) -> String {
    format!("`{which} = {:?}`", lit.value())
}

/// The rustdoc of a generated partition struct: which key it renders, and a call.
pub(super) fn partition_struct_doc(
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
