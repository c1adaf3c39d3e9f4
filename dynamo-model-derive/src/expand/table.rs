//! `#[derive(Table)]`: a `const SCHEMA` describing the table, and one key-space marker
//! type per index.

use crate::attr::{self, IndexKind, KeyAttr, Projection, ScalarType};
use crate::check::{self, generated_name, TableModel};
use crate::ctxt::Ctxt;
use crate::expand::entity::delimiter_const;
use crate::names::index_name_type;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::DeriveInput;

pub fn expand(input: &DeriveInput) -> Result<TokenStream, Vec<syn::Error>> {
    let mut cx = Ctxt::new();
    let model = check::table(&mut cx, input);
    cx.check()?;
    let ident = &model.ident;
    let dm = quote!(::dynamo_model);
    let schema = schema(&model);
    let markers = markers(&model);
    let delimiter = model.attrs.delimiter.map(|c| {
        // Only a declared delimiter is written: the trait's default is `#`.
        let name = delimiter_const(c);
        quote!(const DELIMITER: ::dynamo_model::key::Delimiter = ::dynamo_model::key::Delimiter::#name;)
    });
    Ok(quote! {
        impl #dm::__private::Sealed for #ident {}
        #markers

        impl ::dynamo_model::Table for #ident {
            const SCHEMA: ::dynamo_model::TableSchema = #schema;
            #delimiter
        }
    })
}

fn key_attr(k: &KeyAttr) -> TokenStream {
    let name = &k.name;
    let ty = match k.ty {
        ScalarType::S => quote!(S),
        ScalarType::N => quote!(N),
        ScalarType::B => quote!(B),
    };
    quote!(::dynamo_model::schema::KeyAttribute { name: #name, ty: ::dynamo_model::schema::ScalarType::#ty })
}

fn throughput(capacity: Option<&attr::Capacity>) -> TokenStream {
    match capacity {
        Some(c) => {
            let (read, write) = (c.read, c.write);
            quote!(::core::option::Option::Some(::dynamo_model::schema::Throughput { read: #read, write: #write }))
        }
        None => quote!(::core::option::Option::None),
    }
}

/// The table's `TableSchema`.
fn schema(model: &TableModel) -> TokenStream {
    let (ident, attrs) = (&model.ident, &model.attrs);
    let type_name = ident.to_string();
    let pk = attrs.pk.as_ref().map(key_attr);
    let sk = match &attrs.sk {
        Some(sk) => {
            let sk = key_attr(sk);
            quote!(::core::option::Option::Some(#sk))
        }
        None => quote!(::core::option::Option::None),
    };
    let indexes = attrs.indexes.iter().map(|index| {
        let name = index.name.value();
        let kind = match index.kind {
            IndexKind::Global => quote!(Global),
            IndexKind::Local => quote!(Local),
        };
        let pk = index.pk.iter().map(key_attr);
        let sk = index.sk.iter().map(key_attr);
        let throughput = throughput(index.capacity.as_ref());
        let projection = match &index.projection {
            Projection::All => quote!(All),
            Projection::KeysOnly => quote!(KeysOnly),
            Projection::Include(names) => quote!(Include(&[#(#names),*])),
        };
        quote! {
            ::dynamo_model::schema::IndexSchema {
                name: #name,
                kind: ::dynamo_model::schema::IndexKind::#kind,
                pk: &[#(#pk),*],
                sk: &[#(#sk),*],
                projection: ::dynamo_model::schema::Projection::#projection,
                throughput: #throughput,
            }
        }
    });
    let ttl = match &attrs.ttl {
        Some(ttl) => quote!(::core::option::Option::Some(#ttl)),
        None => quote!(::core::option::Option::None),
    };
    let entity_type = attrs.entity_type.as_deref().unwrap_or("_type");
    let write_token = attrs.write_token.as_deref().unwrap_or("_wt");
    let identify_by_keys = attrs.identify_by_keys;
    let writes_entity_type = attrs.no_write_type.is_none();
    let writes_token = attrs.no_write_token.is_none();
    // Checked above: a provisioned table has its capacity, an on-demand one none.
    let billing = match &attrs.capacity {
        Some(c) => {
            let (read, write) = (c.read, c.write);
            quote!(::dynamo_model::schema::Billing::Provisioned(::dynamo_model::schema::Throughput { read: #read, write: #write }))
        }
        None => quote!(::dynamo_model::schema::Billing::OnDemand),
    };
    let stream = match &attrs.stream {
        Some(view) => {
            let variant = format_ident!("{}", view.variant);
            quote!(::core::option::Option::Some(::dynamo_model::schema::StreamView::#variant))
        }
        None => quote!(::core::option::Option::None),
    };

    quote! {
        ::dynamo_model::TableSchema {
            type_name: #type_name,
            pk: #pk,
            sk: #sk,
            indexes: &[#(#indexes),*],
            ttl: #ttl,
            entity_type: #entity_type,
            write_token: #write_token,
            identify_by_keys: #identify_by_keys,
            writes_entity_type: #writes_entity_type,
            writes_token: #writes_token,
            billing: #billing,
            stream: #stream,
        }
    }
}

/// One marker type per index: the key space its partitions and sort-key conditions
/// carry, `{Table}{Index}` (`App` + `GSI1` → `AppGsi1`).
fn markers(model: &TableModel) -> TokenStream {
    let (ident, attrs, vis) = (&model.ident, &model.attrs, &model.vis);
    let dm = quote!(::dynamo_model);
    let markers = attrs.indexes.iter().enumerate().map(|(position, index)| {
        let name = index.name.value();
        let marker = format_ident!("{}{}", ident, generated_name(&name));
        let name_type = index_name_type(&name, proc_macro2::Span::call_site());
        let doc = format!(
            "The key space of index `{name}` of [`{ident}`]: the type parameter of its \
             partitions and sort-key conditions."
        );
        quote! {
            #[doc = #doc]
            #[derive(Debug, Clone, Copy)]
            #vis enum #marker {}
            impl #dm::__private::Sealed for #marker {}
            impl #dm::KeySpace for #marker {
                const INDEX: ::core::option::Option<&'static str> = ::core::option::Option::Some(#name);
            }
            impl #dm::__private::TableIndex<#position> for #ident {
                type Space = #marker;
            }
            #[diagnostic::do_not_recommend]
            impl #dm::__private::DeclaresIndex<#name_type> for #ident {
                const POSITION: usize = #position;
            }
        }
    });

    quote!(#(#markers)*)
}
