//! `#[derive(Table)]`: a `const SCHEMA` describing the table.

use crate::attr::{self, IndexKind, KeyAttr, Projection, ScalarType};
use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::DeriveInput;

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

fn valid_index_name(name: &str) -> bool {
    // DynamoDB naming rule: 3 to 255 characters from [a-zA-Z0-9_.-].
    (3..=255).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// The part of the generated type names an index contributes: `GSI1` → `Gsi1`.
fn generated_name(index: &str) -> String {
    crate::expand::entity::pascal_case(&crate::expand::entity::snake_case(index))
}

/// Billing, capacity and stream: what DynamoDB would refuse, refused here.
fn check_capacity(cx: &mut Ctxt, input: &DeriveInput, attrs: &attr::TableAttrs) {
    let provisioned = attrs.billing.as_ref().is_some_and(|b| b.provisioned);
    for (capacity, whose) in attrs
        .capacity
        .iter()
        .map(|c| (c, "the table".to_owned()))
        .chain(attrs.indexes.iter().filter_map(|i| {
            i.capacity
                .as_ref()
                .map(|c| (c, format!("index `{}`", i.name.value())))
        }))
    {
        if !provisioned {
            cx.error_spanned_by(
                &capacity.span,
                format!(
                    "capacity for {whose} needs provisioned billing: add `billing = \"provisioned\"` to the table (on-demand tables have no capacity units)"
                ),
            );
        }
        if capacity.read == 0 || capacity.write == 0 {
            cx.error_spanned_by(
                &capacity.span,
                format!("capacity for {whose}: read and write are at least 1 unit each"),
            );
        }
    }
    if provisioned && attrs.capacity.is_none() {
        let span = attrs.billing.as_ref().map(|b| &b.lit);
        match span {
            Some(lit) => cx.error_spanned_by(
                lit,
                "provisioned billing needs the table's units: add `capacity(read = N, write = N)`",
            ),
            None => cx.error_spanned_by(&input.ident, "provisioned billing needs `capacity(..)`"),
        }
    }
}

pub fn expand(input: &DeriveInput) -> Result<TokenStream, Vec<syn::Error>> {
    let mut cx = Ctxt::default();
    let attrs = attr::table_attrs(&mut cx, &input.attrs);
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(
            &input.generics,
            "#[derive(Table)] does not support generic types",
        );
    }
    if attrs.pk.is_none() && !attrs.parse_failed {
        cx.error_spanned_by(
            &input.ident,
            "missing `pk`: name the partition key attribute, e.g. #[dynamo(pk = \"PK\", sk = \"SK\")]",
        );
    }
    for (i, index) in attrs.indexes.iter().enumerate() {
        let name = index.name.value();
        if !valid_index_name(&name) {
            cx.error_spanned_by(
                &index.name,
                "an index name is 3 to 255 characters from a-z, A-Z, 0-9, `_`, `-` and `.`",
            );
        }
        if attrs.indexes[..i].iter().any(|o| o.name.value() == name) {
            cx.error_spanned_by(&index.name, format!("index `{name}` is declared twice"));
        } else if let Some(other) = attrs.indexes[..i]
            .iter()
            .find(|o| generated_name(&o.name.value()) == generated_name(&name))
        {
            // The derives name a type per index after it (`AppGsi1`, `OrderGsi1Partition`).
            cx.error_spanned_by(
                &index.name,
                format!(
                    "indexes `{}` and `{name}` would both generate the type names `{}{}` and `<Entity>{}Partition`; rename one",
                    other.name.value(),
                    input.ident,
                    generated_name(&name),
                    generated_name(&name),
                ),
            );
        }
        if index.kind == IndexKind::Local && attrs.sk.is_none() {
            cx.error_spanned_by(&index.name, "an LSI needs a table with a sort key");
        }
    }
    if attrs
        .indexes
        .iter()
        .filter(|i| i.kind == IndexKind::Local)
        .count()
        > 5
    {
        cx.error_spanned_by(&input.ident, "DynamoDB allows at most five LSIs per table");
    }
    // Table key values are rendered templates: strings.
    for key in attrs.pk.iter().chain(attrs.sk.iter()) {
        if !matches!(key.ty, ScalarType::S) {
            cx.error_spanned_by(
                &input.ident,
                format!(
                    "table key attribute `{}` holds rendered key templates, so it is a string (S)",
                    key.name
                ),
            );
        }
    }
    // The crate writes these attributes on every item: they must be distinct.
    let entity_type = attrs.entity_type.as_deref().unwrap_or("_type");
    let mut roles: Vec<(&str, &str)> = Vec::new();
    roles.extend(
        attrs
            .pk
            .iter()
            .map(|k| (k.name.as_str(), "the partition key")),
    );
    roles.extend(attrs.sk.iter().map(|k| (k.name.as_str(), "the sort key")));
    roles.push((entity_type, "the entity-type attribute"));
    roles.extend(attrs.ttl.iter().map(|n| (n.as_str(), "the TTL attribute")));
    let write_token = attrs.write_token.as_deref().unwrap_or("_wt");
    if write_token.is_empty() {
        cx.error_spanned_by(
            &input.ident,
            "`write_token` names an attribute: it cannot be empty",
        );
    }
    roles.push((write_token, "the write-token attribute"));
    for (i, (name, role)) in roles.iter().enumerate() {
        if let Some((_, other)) = roles[..i].iter().find(|(n, _)| n == name) {
            cx.error_spanned_by(
                &input.ident,
                format!("`{name}` cannot be both {other} and {role}"),
            );
        }
    }
    for index in &attrs.indexes {
        for key in index.pk.iter().chain(index.sk.iter()) {
            if key.name == entity_type || attrs.ttl.as_deref() == Some(key.name.as_str()) {
                cx.error_spanned_by(
                    &index.name,
                    format!(
                        "index key attribute `{}` is also the entity-type or TTL attribute",
                        key.name
                    ),
                );
            }
            if key.name == write_token {
                cx.error_spanned_by(
                    &index.name,
                    format!(
                        "index key attribute `{}` is also the write-token attribute",
                        key.name
                    ),
                );
            }
        }
    }
    check_capacity(&mut cx, input, &attrs);
    cx.check()?;

    let ident = &input.ident;
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
    // Only a declared delimiter is written: the trait's default is `#`.
    let delimiter = attrs.delimiter.map(|c| {
        let name = crate::expand::entity::delimiter_const(c);
        quote!(const DELIMITER: ::dynamo_model::key::Delimiter = ::dynamo_model::key::Delimiter::#name;)
    });

    // One marker type per index: the key space its partitions and sort-key conditions
    // carry, `{Table}{Index}` (`App` + `GSI1` → `AppGsi1`).
    let vis = &input.vis;
    let dm = quote!(::dynamo_model);
    let markers = attrs.indexes.iter().enumerate().map(|(position, index)| {
        let name = index.name.value();
        let marker = format_ident!("{}{}", ident, generated_name(&name));
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
        }
    });

    Ok(quote! {
        impl #dm::__private::Sealed for #ident {}
        #(#markers)*

        impl ::dynamo_model::Table for #ident {
            const SCHEMA: ::dynamo_model::TableSchema = ::dynamo_model::TableSchema {
                type_name: #type_name,
                pk: #pk,
                sk: #sk,
                indexes: &[#(#indexes),*],
                ttl: #ttl,
                entity_type: #entity_type,
                write_token: #write_token,
                identify_by_keys: #identify_by_keys,
                billing: #billing,
                stream: #stream,
            };
            #delimiter
        }
    })
}
