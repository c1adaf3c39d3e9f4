//! `#[derive(Entity)]`: the entity's fields, key templates, indexes and history, checked
//! against each other.

mod encrypted;
mod keys;
mod versioned;

use super::*;
use crate::attr::{self, Derive};
use crate::ctxt::Ctxt;
use crate::template::{self, Function, Segment, Template};
use keys::{check_computed_sources, check_key_formats, check_key_storage, parse_template};
use syn::{Data, DeriveInput, Fields, Ident, LitStr};
use versioned::versioned_model;

/// Checks the input of `#[derive(Entity)]` and builds the model its expansion reads;
/// `None` when an error leaves nothing to expand.
pub fn entity(cx: &mut Ctxt, input: &DeriveInput) -> Option<EntityModel> {
    let attrs = attr::entity_attrs(cx, &input.attrs);

    if !input.generics.params.is_empty() {
        cx.error_spanned_by(
            &input.generics,
            "#[derive(Entity)] does not support generic structs",
        );
    }
    let named = named_struct_fields(cx, input)?;
    let mut fields = named_fields(cx, named, attrs.naming.rename_all.as_ref(), Derive::Entity);
    check_managed_fields(cx, &fields);
    for f in &fields {
        if let Some(chunked) = &f.attrs.chunked {
            check_chunked_field(cx, f, chunked, attrs.versioned.is_some());
        }
    }
    if attrs.table.is_none() && !attrs.parse_failed {
        cx.error_spanned_by(
            &input.ident,
            "missing `table`: add #[dynamo(table = YourTable)] (a type deriving `Table`)",
        );
    }
    let pk = partition_key(cx, input, &attrs, &fields);
    let sk = sort_key(cx, &attrs, &fields);
    if attrs.sk.is_some() && sk.is_none() {
        return None;
    }
    let indexes: Vec<IndexModel> = (0..attrs.indexes.len())
        .map(|i| index_model(cx, &attrs, i, &fields))
        .collect();

    let pk = pk?;
    let table = attrs.table?;
    mark_key_fields(&mut fields, &pk, sk.as_ref(), &indexes);
    check_computed_sources(cx, &fields, &pk, sk.as_ref(), &indexes);
    check_key_formats(cx, &fields, &pk, sk.as_ref(), &indexes);

    let versioned = match &attrs.versioned {
        Some(v) => Some(versioned_model(cx, v, &fields, sk.as_ref(), &indexes)?),
        None => None,
    };
    let entity_type = entity_type(cx, input, attrs.entity_type.as_ref());
    if let Some(lit) = &attrs.identify_by_keys {
        check_identified_by_keys(cx, lit, &pk, sk.as_ref());
    }

    let mut model = EntityModel {
        ident: input.ident.clone(),
        vis: input.vis.clone(),
        table,
        entity_type,
        key_struct: attrs
            .key_struct
            .clone()
            .unwrap_or_else(|| quote::format_ident!("{}Key", input.ident)),
        fields,
        pk,
        sk,
        delimiter: attrs.delimiter,
        indexes,
        default: attrs.naming.default,
        versioned,
        identify_by_keys: attrs.identify_by_keys.is_some(),
        no_write_type: attrs.no_write_type.clone(),
        no_write_token: attrs.no_write_token.clone(),
        validate: attrs.validate.clone(),
    };
    check_key_storage(cx, &mut model, attrs.store_key_fields.as_ref());
    check_rules(cx, &model);
    check_auto_fields(cx, &model);
    encrypted::check_encrypted_fields(cx, &model);
    check_unique_fields(cx, &model);
    Some(model)
}

/// The named fields of the struct the derive is on (`None`: not such a struct).
fn named_struct_fields<'a>(cx: &mut Ctxt, input: &'a DeriveInput) -> Option<&'a FieldsNamed> {
    let named = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => Some(named),
            _ => None,
        },
        _ => None,
    };
    if named.is_none() {
        cx.error_spanned_by(
            &input.ident,
            "#[derive(Entity)] needs a struct with named fields",
        );
    }
    named
}

/// `#[dynamo(version)]` and `#[dynamo(ttl)]`: one field each at most, a number stored as
/// it is.
fn check_managed_fields(cx: &mut Ctxt, fields: &[Field]) {
    check_managed_field(
        cx,
        fields,
        "version",
        |f| f.attrs.version,
        "the version is a number the crate compares and increments",
    );
    check_managed_field(
        cx,
        fields,
        "ttl",
        |f| f.attrs.ttl,
        "DynamoDB's TTL reads a number of epoch seconds",
    );
}

/// The fields `marked` as the `#[dynamo({what})]` field; `why_uncompressed`: why it cannot
/// be compressed.
fn check_managed_field(
    cx: &mut Ctxt,
    fields: &[Field],
    what: &str,
    marked: fn(&Field) -> bool,
    why_uncompressed: &str,
) {
    let marked: Vec<&Field> = fields.iter().filter(|f| marked(f)).collect();
    if marked.len() > 1 {
        cx.error_spanned_by(
            &marked[1].ident,
            format!("only one field can be #[dynamo({what})]"),
        );
    }
    for f in marked {
        if f.attrs.skip || f.attrs.serde_codec {
            cx.error_spanned_by(
                &f.ident,
                format!(
                    "a #[dynamo({what})] field cannot be skipped or stored with #[dynamo(serde)]"
                ),
            );
        }
        if let Some(c) = &f.attrs.compress {
            cx.error_spanned_by(
                &c.word,
                format!("a #[dynamo({what})] field cannot be compressed: {why_uncompressed}"),
            );
        }
        if f.attrs.version && f.attrs.ttl {
            cx.error_spanned_by(&f.ident, "a field cannot be both the version and the TTL");
        }
    }
}

/// A `#[dynamo(chunked)]` field: none of the options of a plain field, not in a versioned
/// entity, and sizes within DynamoDB's item limit.
fn check_chunked_field(cx: &mut Ctxt, f: &Field, chunked: &attr::ChunkedAttr, versioned: bool) {
    let a = &f.attrs;
    if a.serde_codec
        || a.version
        || a.ttl
        || a.skip
        || a.skip_serializing_if.is_some()
        || a.default.is_some()
    {
        cx.error_spanned_by(
            &chunked.word,
            "a #[dynamo(chunked)] field takes no `serde`, `version`, `ttl`, `skip`, `skip_serializing_if` or `default`: its type is `dynamo_model::Chunked<String>` or `Chunked<Vec<u8>>`",
        );
    }
    if versioned {
        cx.error_spanned_by(
            &chunked.word,
            "a #[dynamo(history)] entity cannot have chunked fields yet: its revisions are written in one transaction, which has no room for chunk items",
        );
    }
    // An item holds at most 400 KB (its key and other attributes included), and so
    // does a chunk item.
    check_byte_count(
        cx,
        chunked.inline.as_ref(),
        "inline",
        0..=300 * 1024,
        "a value stored inline shares DynamoDB's 400 KB item limit with the item's key and other attributes",
    );
    check_byte_count(
        cx,
        chunked.chunk_size.as_ref(),
        "chunk_size",
        1024..=390 * 1024,
        "a chunk item holds its key and a few attributes besides its share of the value, within DynamoDB's 400 KB item limit; smaller chunks would multiply the requests",
    );
}

/// Option `what`, a number of bytes, within `range`; `why`: what the bounds come from.
fn check_byte_count(
    cx: &mut Ctxt,
    lit: Option<&syn::LitInt>,
    what: &str,
    range: std::ops::RangeInclusive<usize>,
    why: &str,
) {
    let Some(lit) = lit else {
        return;
    };
    match lit.base10_parse::<usize>() {
        Ok(n) if range.contains(&n) => {}
        _ => cx.error_spanned_by(
            lit,
            format!(
                "`{what}` is a number of bytes from {} to {} ({} to {} KiB): {why}",
                range.start(),
                range.end(),
                range.start() / 1024,
                range.end() / 1024
            ),
        ),
    }
}

/// The table's partition-key template, parsed (`None`: missing or malformed).
fn partition_key(
    cx: &mut Ctxt,
    input: &DeriveInput,
    attrs: &attr::EntityAttrs,
    fields: &[Field],
) -> Option<(Template, LitStr)> {
    let Some(lit) = &attrs.pk else {
        cx.error_spanned_by(
            &input.ident,
            "missing `pk`: add a partition key template, e.g. #[dynamo(pk = \"USER#{id}\")]",
        );
        return None;
    };
    parse_template(cx, lit, attrs.delimiter, fields, "pk", true).map(|t| (t, lit.clone()))
}

/// The table's sort-key template, parsed (`None`: none, or malformed).
fn sort_key(
    cx: &mut Ctxt,
    attrs: &attr::EntityAttrs,
    fields: &[Field],
) -> Option<(Template, LitStr)> {
    let lit = attrs.sk.as_ref()?;
    // A versioned entity's template is what follows its revision slot, which may be
    // nothing (AWS's `v0`, `v1`, … layout: `sk = ""`).
    if attrs.versioned.is_some() && lit.value().is_empty() {
        return Some((Template::empty(), lit.clone()));
    }
    parse_template(cx, lit, attrs.delimiter, fields, "sk", false).map(|t| (t, lit.clone()))
}

/// The entity's `i`th index: its key templates or key fields, or neither (inverted).
fn index_model(cx: &mut Ctxt, attrs: &attr::EntityAttrs, i: usize, fields: &[Field]) -> IndexModel {
    let it = &attrs.indexes[i];
    if attrs.indexes[..i].iter().any(|o| o.index == it.index) {
        cx.error_spanned_by(&it.index, format!("index `{}` has two templates", it.index));
    }
    let delimiter = it.delimiter.or(attrs.delimiter);
    let pk = it.pk.as_ref().and_then(|lit| {
        parse_template(cx, lit, delimiter, fields, "index pk", true).map(|t| (t, lit.clone()))
    });
    let sk = it.sk.as_ref().and_then(|lit| {
        parse_template(cx, lit, delimiter, fields, "index sk", false).map(|t| (t, lit.clone()))
    });
    let attributes = (it.pk_fields.is_some() || it.sk_fields.is_some()).then(|| {
        (
            index_key_fields(cx, it.pk_fields.as_deref(), fields),
            index_key_fields(cx, it.sk_fields.as_deref(), fields),
        )
    });
    let inverted = it.pk.is_none() && it.sk.is_none() && attributes.is_none();
    if inverted && attrs.sk.is_none() {
        cx.error_spanned_by(
            &it.index,
            "an inverted index (no templates) swaps the table's keys, so the entity needs an `sk` template",
        );
    }
    IndexModel {
        index: it.index.clone(),
        inverted,
        attributes,
        pk,
        sk,
        delimiter,
    }
}

/// The positions of the fields a multi-attribute index key lists (`pk = [a, b]`), each
/// stored as it is.
fn index_key_fields(cx: &mut Ctxt, list: Option<&[Ident]>, fields: &[Field]) -> Vec<usize> {
    let mut out = Vec::new();
    for ident in list.into_iter().flatten() {
        match fields.iter().position(|f| f.ident == *ident) {
            Some(i) if fields[i].attrs.compress.is_some() => cx.error_spanned_by(
                ident,
                format!("field `{ident}` is stored compressed (#[dynamo(compress)]) and cannot be an index key attribute"),
            ),
            Some(i) if fields[i].attrs.skip || fields[i].attrs.serde_codec => cx.error_spanned_by(
                ident,
                format!("field `{ident}` is skipped or stored with #[dynamo(serde)] and cannot be an index key attribute"),
            ),
            Some(i) => out.push(i),
            None => cx.error_spanned_by(ident, format!("unknown field `{ident}` in the index key")),
        }
    }
    out
}

/// Marks the fields the primary key and the index keys are made of.
fn mark_key_fields(
    fields: &mut [Field],
    pk: &(Template, LitStr),
    sk: Option<&(Template, LitStr)>,
    indexes: &[IndexModel],
) {
    // A computed part's source is a key field too: changing it would move the item.
    for name in std::iter::once(&pk.0)
        .chain(sk.map(|s| &s.0))
        .flat_map(Template::sources)
    {
        if let Some(f) = fields.iter_mut().find(|f| f.ident == name) {
            f.in_primary_key = true;
        }
    }
    for index in indexes {
        for name in index
            .pk
            .iter()
            .chain(index.sk.iter())
            .flat_map(|t| t.0.sources())
        {
            if let Some(f) = fields.iter_mut().find(|f| f.ident == name) {
                f.in_index_key = true;
            }
        }
    }
}

/// The entity type its items are written with: given, not empty, or the type's name.
fn entity_type(cx: &mut Ctxt, input: &DeriveInput, given: Option<&LitStr>) -> String {
    match given {
        Some(lit) if lit.value().is_empty() => {
            cx.error_spanned_by(lit, "the entity type cannot be empty");
            String::new()
        }
        Some(lit) => lit.value(),
        None => input.ident.to_string(),
    }
}

/// `identify = "keys"` needs literal text in a key template to tell the entity's items
/// from others.
fn check_identified_by_keys(
    cx: &mut Ctxt,
    lit: &LitStr,
    pk: &(Template, LitStr),
    sk: Option<&(Template, LitStr)>,
) {
    let literal = |t: &Template| t.segments.iter().any(|s| matches!(s, Segment::Lit(_)));
    if !literal(&pk.0) && !sk.is_some_and(|s| literal(&s.0)) {
        cx.error_spanned_by(
            lit,
            "an entity identified by its keys needs literal text in its key templates (e.g. `pk = \"DEVICE#{id}\"`): templates of placeholders only match the keys of every entity of the table, so they cannot tell its items apart",
        );
    }
}

/// Rules only where a write sets the value: not on a field the crate writes itself (the
/// version, the TTL), stores elsewhere (chunked) or does not store (skipped).
fn check_rules(cx: &mut Ctxt, m: &EntityModel) {
    for f in &m.fields {
        let Some(rule) = f.attrs.rules.first() else {
            continue;
        };
        let why = if f.attrs.skip {
            "a skipped field is not written, so it has nothing to validate"
        } else if f.attrs.version {
            "the version field is set by the crate, not by writes: it takes no rules"
        } else if f.attrs.ttl {
            "a TTL field takes no rules: check the time in a `validate = path` function of the entity"
        } else if f.attrs.chunked.is_some() {
            "a chunked field takes no rules: check the value in a `validate = path` function of the entity"
        } else if f.attrs.created.is_some()
            || f.attrs.updated.is_some()
            || f.attrs.generate.is_some()
        {
            "a field the crate sets (`created`, `updated`, `generate`) takes no rules: its value is the crate's"
        } else if f.attrs.serde_codec || f.attrs.key_format.is_some() {
            "a `serde` or `key_format` field takes no rules: an update gives it in its stored form; check it in a `validate = path` function of the entity"
        } else {
            continue;
        };
        cx.syn_error(syn::Error::new(rule.span(), why));
    }
}

/// The fields the crate sets: one `created` and one `updated` at most, each on a field a
/// write stores as it is, and an `updated` time in no key (a put could not keep the key
/// current with the time it sets).
fn check_auto_fields(cx: &mut Ctxt, m: &EntityModel) {
    let mut seen: [Option<&Ident>; 2] = [None, None];
    for f in &m.fields {
        let a = &f.attrs;
        let marks = [(&a.created, "created", 0), (&a.updated, "updated", 1)];
        for (word, name, slot) in marks {
            let Some(word) = word else { continue };
            if let Some(first) = seen[slot] {
                let message = format!("`{name}` is already field `{first}`: an entity has one");
                cx.error_spanned_by(word, message);
            }
            seen[slot] = Some(&f.ident);
        }
        let word: Option<&dyn quote::ToTokens> = match (&a.created, &a.updated, &a.generate) {
            (Some(w), _, _) | (_, Some(w), _) => Some(w),
            (_, _, Some(lit)) => Some(lit),
            _ => None,
        };
        let Some(word) = word else { continue };
        let why = if a.created.is_some() && a.updated.is_some() {
            "a field is `created` or `updated`, not both"
        } else if a.generate.is_some() && (a.created.is_some() || a.updated.is_some()) {
            "a generated id is not a time"
        } else if a.skip || a.version || a.ttl || a.chunked.is_some() || a.serde_codec {
            "a field the crate sets is stored as it is: not `skip`, `version`, `ttl`, `chunked` or `serde`"
        } else if (a.updated.is_some() || a.created.is_some())
            && (f.in_primary_key || f.in_index_key)
        {
            "a time the crate sets is in no key: a put sets it in the item without rendering the keys again, and an update cannot move the item"
        } else if a.created.is_some() && m.fields.iter().any(|f| f.attrs.chunked.is_some()) {
            "an entity with chunked fields takes no `created` field: the chunk protocol cannot send its put again with the stored creation time"
        } else if a.generate.is_some() && m.versioned.is_some() {
            "an entity with history takes no generated id: its items are written by `db.history()`, which does not create them with `db.create`"
        } else {
            continue;
        };
        cx.error_spanned_by(word, why);
    }
}

/// `#[dynamo(unique)]`: on a field stored as it is, of an entity whose writes can keep
/// sentinels (not one with history or chunked fields).
fn check_unique_fields(cx: &mut Ctxt, m: &EntityModel) {
    for f in &m.fields {
        let a = &f.attrs;
        let Some((word, _)) = &a.unique else { continue };
        let why = if a.encrypt.is_some() {
            "an encrypted value is not a unique value: its sentinel's key would hold it in plain text"
        } else if a.skip || a.serde_codec || a.compress.is_some() || a.chunked.is_some() {
            "a unique value is stored as it is: not `skip`, `serde`, `compress` or `chunked`"
        } else if a.version || a.ttl || a.created.is_some() || a.updated.is_some() {
            "a value the crate sets (`version`, `ttl`, `created`, `updated`) is not a unique value"
        } else if a.key_format.is_some() || f.not_stored || !a.aliases.is_empty() {
            "a unique field is stored in an attribute of its own, under one name, in its type's own form: not `key_format`, `key_only` or `alias`"
        } else if m.fields.iter().any(|f| f.attrs.ttl) {
            "an entity with a `ttl` field takes no unique values: DynamoDB deletes expired items without their sentinels, which would keep the values taken"
        } else if m.versioned.is_some() {
            "an entity with history takes no unique values: its items are written by `db.history()`, which does not keep sentinels"
        } else if m.fields.iter().any(|f| f.attrs.chunked.is_some()) {
            "an entity with chunked fields takes no unique values: the chunk protocol's put is not a transaction"
        } else {
            continue;
        };
        cx.error_spanned_by(word, why);
    }
    check_unique_names(cx, m);
}

/// A group's name (`unique = "name"`) is lower snake case (it names the lookup
/// `by_<name>`) and no single field's constraint (named after its attribute, looked up by
/// `by_<field>`).
fn check_unique_names(cx: &mut Ctxt, m: &EntityModel) {
    let singles: Vec<(&Ident, &str)> = m
        .fields
        .iter()
        .filter(|f| matches!(&f.attrs.unique, Some((_, None))))
        .map(|f| (&f.ident, f.name.as_str()))
        .collect();
    for f in &m.fields {
        let Some((_, Some(lit))) = &f.attrs.unique else {
            continue;
        };
        let name = lit.value();
        let snake = name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !snake {
            cx.error_spanned_by(lit, "a unique group's name is lower snake case (`[a-z][a-z0-9_]*`): it names the lookup `by_<name>`");
        } else if let Some((field, _)) = singles
            .iter()
            .find(|(ident, attribute)| *ident == name.as_str() || *attribute == name)
        {
            let message = format!("`{name}` is already the unique constraint of field `{field}`; give the group another name");
            cx.error_spanned_by(lit, message);
        }
    }
}
