//! `#[derive(Table)]`: the table's keys, indexes, reserved attributes, billing and stream,
//! checked as DynamoDB would check them when the table is created.

use crate::attr::{self, IndexKind, ScalarType};
use crate::ctxt::Ctxt;
use crate::names::{index_rust_name, pascal_case};
use syn::{DeriveInput, Ident, Visibility};

/// A checked `#[derive(Table)]`.
pub struct TableModel {
    pub ident: Ident,
    pub vis: Visibility,
    pub attrs: attr::TableAttrs,
}

/// Reads and checks the table's declaration; errors go to `cx`.
pub fn table(cx: &mut Ctxt, input: &DeriveInput) -> TableModel {
    let attrs = attr::table_attrs(cx, &input.attrs);
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
    check_indexes(cx, input, &attrs);
    check_attributes(cx, input, &attrs);
    check_capacity(cx, input, &attrs);
    if let (Some(lit), false) = (&attrs.no_write_type, attrs.identify_by_keys) {
        cx.error_spanned_by(
            lit,
            "a table whose items carry no entity-type attribute (`write_type = false`) identifies them by their keys: add `identify = \"keys\"`",
        );
    }
    TableModel {
        ident: input.ident.clone(),
        vis: input.vis.clone(),
        attrs,
    }
}

/// Index names as DynamoDB takes them, distinct (also in the type names generated from
/// them), and at most five LSIs, on a table with a sort key.
fn check_indexes(cx: &mut Ctxt, input: &DeriveInput, attrs: &attr::TableAttrs) {
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
}

/// The table's key attributes are strings, and the attributes the crate writes on every
/// item (keys, entity type, TTL, write token) are distinct, also from index keys.
fn check_attributes(cx: &mut Ctxt, input: &DeriveInput, attrs: &attr::TableAttrs) {
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
}

fn valid_index_name(name: &str) -> bool {
    // DynamoDB naming rule: 3 to 255 characters from [a-zA-Z0-9_.-].
    (3..=255).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// The part of the generated type names an index contributes: `GSI1` → `Gsi1`, `GSI-1` →
/// `Gsi1` (the Pascal case of [`index_rust_name`]).
pub(crate) fn generated_name(index: &str) -> String {
    pascal_case(&index_rust_name(index))
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
