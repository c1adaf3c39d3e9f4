//! `#[derive(Entity)]`: the entity's fields, key templates, indexes and history, checked
//! against each other.

use super::*;
use crate::attr::{self, Derive};
use crate::ctxt::Ctxt;
use crate::template::{self, Function, Segment, Template};
use syn::{Data, DeriveInput, Fields, Ident, LitStr};

/// Checks `versioned(..)` against the entity: a version field (the revision number), a
/// constant sort-key template (the item's identity is its partition key, so a range over
/// its revisions holds nothing else of it), and a layout whose slots parse unambiguously.
pub(crate) fn versioned_model(
    cx: &mut Ctxt,
    v: &attr::Versioned,
    fields: &[Field],
    sk: Option<&(Template, LitStr)>,
    indexes: &[IndexModel],
) -> Option<VersionedModel> {
    let mut ok = true;
    for (i, name) in v.revisions_in.iter().enumerate() {
        if v.revisions_in[..i].contains(name) {
            cx.error_spanned_by(name, format!("index `{name}` is named twice"));
            ok = false;
        }
        match indexes.iter().find(|index| index.index == *name) {
            Some(index) if index.pk.is_some() || index.sk.is_some() => {}
            Some(_) => {
                cx.error_spanned_by(
                    name,
                    format!("index `{name}` has no key template of this entity: revisions carry its key attributes anyway (the table's keys or plain attributes), so there is nothing to opt into"),
                );
                ok = false;
            }
            None => {
                cx.error_spanned_by(
                    name,
                    format!("`{name}` is not one of this entity's indexes (`index({name}, ..)`)"),
                );
                ok = false;
            }
        }
    }
    if !fields.iter().any(|f| f.attrs.version) {
        cx.error_spanned_by(
            &v.word,
            "a #[dynamo(history)] entity needs a `#[dynamo(version)] version: u64` field: the revision number, which the latest copy and each revision store",
        );
        ok = false;
    }
    match sk {
        None => {
            cx.error_spanned_by(
                &v.word,
                "#[dynamo(history)] needs a sort key: the revision number is part of it (declare the table with `sk = \"..\"` and give the entity an `sk` template)",
            );
            ok = false;
        }
        Some((template, lit)) if !template.is_constant() => {
            cx.error_spanned_by(
                lit,
                "a #[dynamo(history)] entity's sort-key template must be constant (e.g. `sk = \"DOC\"`): the revision number leads the sort key, so the item's identity must be its partition key",
            );
            ok = false;
        }
        Some(_) => {}
    }
    let prefix = v
        .prefix
        .as_ref()
        .map_or_else(|| "v".to_owned(), LitStr::value);
    if prefix.ends_with(|c: char| c.is_ascii_digit()) {
        if let Some(lit) = &v.prefix {
            cx.error_spanned_by(
                lit,
                "the prefix cannot end with a digit: the revision number follows it, and where it starts would be ambiguous",
            );
        }
        ok = false;
    }
    let separator = v
        .separator
        .as_ref()
        .map_or_else(|| "#".to_owned(), LitStr::value);
    // What follows the digits of a slot: the separator, then the template's constant
    // text. A digit there would read as part of the number; so would a placeholder's
    // value right after an empty separator (`{code}` rendering `7x`).
    let rest = sk
        .map(|(template, _)| template.constant_text())
        .unwrap_or_default();
    let starts_with_placeholder =
        sk.is_some_and(|(template, _)| !template.is_constant() && rest.is_empty());
    if separator.starts_with(|c: char| c.is_ascii_digit()) {
        if let Some(lit) = &v.separator {
            cx.error_spanned_by(
                lit,
                "the separator must not start with a digit: it ends the revision number",
            );
        }
        ok = false;
    } else if separator.is_empty() && rest.starts_with(|c: char| c.is_ascii_digit()) {
        if let Some(lit) = &v.separator {
            cx.error_spanned_by(lit, format!("an empty separator needs a sort-key template that does not start with a digit: `{rest}` would read as part of the revision number"));
        }
        ok = false;
    } else if separator.is_empty() && starts_with_placeholder {
        if let Some(lit) = &v.separator {
            cx.error_spanned_by(lit, "an empty separator needs a sort-key template that is empty or starts with literal text (not a digit): a placeholder's value right after the revision number could start with a digit and read as part of it");
        }
        ok = false;
    }
    let width = match &v.width {
        None => 20,
        Some(lit) => match lit.base10_parse::<usize>() {
            Ok(w) if w <= 20 => w,
            _ => {
                cx.error_spanned_by(lit, "the width must be 0 (unpadded) to 20 digits: a revision number (u64) has at most 20");
                ok = false;
                20
            }
        },
    };
    let time_attribute = match time_attribute(cx, v, fields) {
        Ok(time) => time,
        Err(()) => {
            ok = false;
            None
        }
    };
    if let (Some(word), true) = (&v.numeric_order, width != 0) {
        cx.error_spanned_by(
            word,
            "`numeric_order` is for an unpadded layout (`width = 0`): padded slots already sort by number",
        );
        ok = false;
    }
    let time_span = v.time_attribute.as_ref().map_or_else(
        || syn::spanned::Spanned::span(&v.word),
        attr::TimeAttribute::span,
    );
    ok.then_some(VersionedModel {
        revisions_in: v.revisions_in.iter().map(|n| n.name().to_owned()).collect(),
        prefix,
        width,
        separator,
        time_attribute,
        counter_on_latest: v.counter_on_latest.is_some(),
        numeric_order: v.numeric_order.is_some(),
        time_span,
    })
}

/// The attribute revisions record their time in (`_vt` unless named; `None`:
/// `time_attribute = false`): not empty, and no field's.
fn time_attribute(
    cx: &mut Ctxt,
    v: &attr::Versioned,
    fields: &[Field],
) -> Result<Option<String>, ()> {
    let time_attribute = match &v.time_attribute {
        None => "_vt".to_owned(),
        Some(attr::TimeAttribute::Off(_)) => return Ok(None),
        Some(attr::TimeAttribute::Named(lit)) if lit.value().is_empty() => {
            cx.error_spanned_by(
                lit,
                "the time attribute name cannot be empty; `time_attribute = false` records no time",
            );
            return Err(());
        }
        Some(attr::TimeAttribute::Named(lit)) => lit.value(),
    };
    if let Some(f) = fields
        .iter()
        .find(|f| !f.attrs.skip && f.name == time_attribute)
    {
        cx.error_spanned_by(
            &f.ident,
            format!("field `{}` is stored as `{time_attribute}`, the attribute that holds when each revision was written; rename one (history(time_attribute = \"..\"), or `time_attribute = false`)", f.ident),
        );
        return Err(());
    }
    Ok(Some(time_attribute))
}

/// Parses a key template and checks it against the fields; `partition` says whether it
/// is a partition-key template (of the table or of an index), where shards belong.
pub(crate) fn parse_template(
    cx: &mut Ctxt,
    lit: &LitStr,
    delimiter: Option<char>,
    fields: &[Field],
    what: &str,
    partition: bool,
) -> Option<Template> {
    let parsed = match template::parse(&lit.value(), delimiter) {
        Ok(t) => t,
        Err(message) => {
            cx.error_spanned_by(lit, format!("malformed {what} template: {message}"));
            return None;
        }
    };
    let mut ok = true;
    let names: Vec<&str> = parsed.fields().collect();
    for (i, name) in names.iter().enumerate() {
        if names[..i].contains(name) {
            cx.error_spanned_by(
                lit,
                format!("field `{name}` appears twice in the {what} template"),
            );
            ok = false;
        }
    }
    let computed: Vec<_> = parsed.computed().collect();
    for (i, c) in computed.iter().enumerate() {
        if computed[..i].contains(c) {
            cx.error_spanned_by(
                lit,
                format!(
                    "`{{{}:..}}` appears twice in the {what} template: the same computed part twice adds nothing to the key",
                    c.field
                ),
            );
            ok = false;
        }
    }
    let shards: Vec<_> = computed
        .iter()
        .filter(|c| c.function.shards().is_some())
        .collect();
    if !partition && !shards.is_empty() {
        cx.error_spanned_by(
            lit,
            format!(
                "`{{{}:..}}`: a shard (`shard(N)` or `random(N)`) spreads items over partitions, so it belongs in a partition-key template (`pk`), not in the {what} template, where it would only break the sort order",
                shards[0].field
            ),
        );
        ok = false;
    }
    if shards.len() > 1 {
        cx.error_spanned_by(
            lit,
            format!("the {what} template has {} shards: one `shard(N)` or `random(N)` per template (a read queries every shard)", shards.len()),
        );
        ok = false;
    }
    for c in &shards {
        if matches!(c.function, Function::Shard(_)) && names.contains(&c.field.as_str()) {
            cx.error_spanned_by(
                lit,
                format!(
                    "`{{{0}:shard(..)}}` shards by `{0}`, which the {what} template already holds as it is: every value of it has its own partition already, so the shard spreads nothing",
                    c.field
                ),
            );
            ok = false;
        }
    }
    for name in parsed.sources() {
        match fields.iter().find(|f| f.ident == name) {
            None => {
                let known: Vec<String> = fields.iter().map(|f| f.ident.to_string()).collect();
                cx.error_spanned_by(
                    lit,
                    format!(
                        "unknown field `{name}` in {what} template; the struct's fields are: {}",
                        known.join(", ")
                    ),
                );
                ok = false;
            }
            Some(f) if f.attrs.skip => {
                cx.error_spanned_by(
                    lit,
                    format!("field `{name}` is skipped and cannot be part of a key"),
                );
                ok = false;
            }
            Some(f) if f.attrs.chunked.is_some() => {
                cx.error_spanned_by(
                    lit,
                    format!("field `{name}` is chunked (stored in chunk items) and cannot be part of a key"),
                );
                ok = false;
            }
            Some(f) if f.attrs.version || f.attrs.ttl => {
                cx.error_spanned_by(lit, format!("field `{name}` is managed (#[dynamo(version)] or #[dynamo(ttl)]) and cannot be part of a key"));
                ok = false;
            }
            Some(f) if f.attrs.compress.is_some() => {
                cx.error_spanned_by(
                    lit,
                    format!("field `{name}` is stored compressed (#[dynamo(compress)]) and cannot be part of a key: a key is compared and sorted, compressed bytes are neither"),
                );
                ok = false;
            }
            Some(f) if f.attrs.serde_codec => {
                cx.error_spanned_by(
                    lit,
                    format!("field `{name}` is stored with #[dynamo(serde)] and cannot be part of a key; key parts implement `dynamo_model::KeyPart`"),
                );
                ok = false;
            }
            Some(_) => {}
        }
    }
    ok.then_some(parsed)
}

pub fn entity(cx: &mut Ctxt, input: &DeriveInput) -> Option<EntityModel> {
    let attrs = attr::entity_attrs(cx, &input.attrs);

    if !input.generics.params.is_empty() {
        cx.error_spanned_by(
            &input.generics,
            "#[derive(Entity)] does not support generic structs",
        );
    }
    let named = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => Some(named),
            _ => None,
        },
        _ => None,
    };
    let Some(named) = named else {
        cx.error_spanned_by(
            &input.ident,
            "#[derive(Entity)] needs a struct with named fields",
        );
        return None;
    };

    let mut fields = named_fields(cx, named, attrs.naming.rename_all.as_ref(), Derive::Entity);

    for (flag, what) in [(0, "version"), (1, "ttl")] {
        let marked: Vec<&Field> = fields
            .iter()
            .filter(|f| {
                if flag == 0 {
                    f.attrs.version
                } else {
                    f.attrs.ttl
                }
            })
            .collect();
        if marked.len() > 1 {
            cx.error_spanned_by(
                &marked[1].ident,
                format!("only one field can be #[dynamo({what})]"),
            );
        }
        for f in marked {
            if f.attrs.skip || f.attrs.serde_codec {
                cx.error_spanned_by(&f.ident, format!("a #[dynamo({what})] field cannot be skipped or stored with #[dynamo(serde)]"));
            }
            if let Some(c) = &f.attrs.compress {
                let why = if flag == 0 {
                    "the version is a number the crate compares and increments"
                } else {
                    "DynamoDB's TTL reads a number of epoch seconds"
                };
                cx.error_spanned_by(
                    &c.word,
                    format!("a #[dynamo({what})] field cannot be compressed: {why}"),
                );
            }
            if f.attrs.version && f.attrs.ttl {
                cx.error_spanned_by(&f.ident, "a field cannot be both the version and the TTL");
            }
        }
    }
    for f in &fields {
        let Some(chunked) = &f.attrs.chunked else {
            continue;
        };
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
        if attrs.versioned.is_some() {
            cx.error_spanned_by(
                &chunked.word,
                "a #[dynamo(history)] entity cannot have chunked fields yet: its revisions are written in one transaction, which has no room for chunk items",
            );
        }
        let bounded = |lit: &Option<syn::LitInt>,
                       what: &str,
                       min: usize,
                       max: usize,
                       why: &str,
                       cx: &mut Ctxt| {
            if let Some(lit) = lit {
                match lit.base10_parse::<usize>() {
                    Ok(n) if (min..=max).contains(&n) => {}
                    _ => cx.error_spanned_by(
                        lit,
                        format!(
                            "`{what}` is a number of bytes from {min} to {max} ({} to {} KiB): {why}",
                            min / 1024,
                            max / 1024
                        ),
                    ),
                }
            }
        };
        // An item holds at most 400 KB (its key and other attributes included), and so
        // does a chunk item.
        bounded(
            &chunked.inline,
            "inline",
            0,
            300 * 1024,
            "a value stored inline shares DynamoDB's 400 KB item limit with the item's key and other attributes",
            cx,
        );
        bounded(
            &chunked.chunk_size,
            "chunk_size",
            1024,
            390 * 1024,
            "a chunk item holds its key and a few attributes besides its share of the value, within DynamoDB's 400 KB item limit; smaller chunks would multiply the requests",
            cx,
        );
    }
    if attrs.table.is_none() && !attrs.parse_failed {
        cx.error_spanned_by(
            &input.ident,
            "missing `table`: add #[dynamo(table = YourTable)] (a type deriving `Table`)",
        );
    }
    let pk = match &attrs.pk {
        Some(lit) => {
            parse_template(cx, lit, attrs.delimiter, &fields, "pk", true).map(|t| (t, lit.clone()))
        }
        None => {
            cx.error_spanned_by(
                &input.ident,
                "missing `pk`: add a partition key template, e.g. #[dynamo(pk = \"USER#{id}\")]",
            );
            None
        }
    };
    let sk = attrs.sk.as_ref().and_then(|lit| {
        // A versioned entity's template is what follows its revision slot, which may be
        // nothing (AWS's `v0`, `v1`, … layout: `sk = ""`).
        if attrs.versioned.is_some() && lit.value().is_empty() {
            return Some((Template::empty(), lit.clone()));
        }
        parse_template(cx, lit, attrs.delimiter, &fields, "sk", false).map(|t| (t, lit.clone()))
    });
    if attrs.sk.is_some() && sk.is_none() {
        return None;
    }

    let mut indexes = Vec::new();
    for (i, it) in attrs.indexes.iter().enumerate() {
        if attrs.indexes[..i].iter().any(|o| o.index == it.index) {
            cx.error_spanned_by(&it.index, format!("index `{}` has two templates", it.index));
        }
        let delimiter = it.delimiter.or(attrs.delimiter);
        let pk = it.pk.as_ref().and_then(|lit| {
            parse_template(cx, lit, delimiter, &fields, "index pk", true).map(|t| (t, lit.clone()))
        });
        let sk = it.sk.as_ref().and_then(|lit| {
            parse_template(cx, lit, delimiter, &fields, "index sk", false).map(|t| (t, lit.clone()))
        });
        let mut attributes = None;
        if it.pk_fields.is_some() || it.sk_fields.is_some() {
            let mut resolve = |list: &Option<Vec<Ident>>| -> Vec<usize> {
                let mut out = Vec::new();
                for ident in list.iter().flatten() {
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
            };
            attributes = Some((resolve(&it.pk_fields), resolve(&it.sk_fields)));
        }
        let inverted = it.pk.is_none() && it.sk.is_none() && attributes.is_none();
        if inverted && attrs.sk.is_none() {
            cx.error_spanned_by(
                &it.index,
                "an inverted index (no templates) swaps the table's keys, so the entity needs an `sk` template",
            );
        }
        indexes.push(IndexModel {
            index: it.index.clone(),
            inverted,
            attributes,
            pk,
            sk,
            delimiter,
        });
    }

    let pk = pk?;
    let table = attrs.table?;
    // A computed part's source is a key field too: changing it would move the item.
    for name in std::iter::once(&pk.0)
        .chain(sk.as_ref().map(|s| &s.0))
        .flat_map(Template::sources)
    {
        if let Some(f) = fields.iter_mut().find(|f| f.ident == name) {
            f.in_primary_key = true;
        }
    }
    for index in &indexes {
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
    check_computed_sources(cx, &fields, &pk, sk.as_ref(), &indexes);
    check_key_formats(cx, &fields, &pk, sk.as_ref(), &indexes);

    let versioned = match &attrs.versioned {
        Some(v) => Some(versioned_model(cx, v, &fields, sk.as_ref(), &indexes)?),
        None => None,
    };

    let entity_type = match &attrs.entity_type {
        Some(lit) if lit.value().is_empty() => {
            cx.error_spanned_by(lit, "the entity type cannot be empty");
            String::new()
        }
        Some(lit) => lit.value(),
        None => input.ident.to_string(),
    };

    if let Some(lit) = &attrs.identify_by_keys {
        let literal = |t: &Template| t.segments.iter().any(|s| matches!(s, Segment::Lit(_)));
        if !literal(&pk.0) && !sk.as_ref().is_some_and(|s| literal(&s.0)) {
            cx.error_spanned_by(
                lit,
                "an entity identified by its keys needs literal text in its key templates (e.g. `pk = \"DEVICE#{id}\"`): templates of placeholders only match the keys of every entity of the table, so they cannot tell its items apart",
            );
        }
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
    };
    check_key_storage(cx, &mut model, attrs.store_key_fields.as_ref());
    Some(model)
}

/// Decides which key fields are read from the keys only (`key_only`, or every key field
/// with `store_key_fields = false`) and checks aliases.
pub(crate) fn check_key_storage(
    cx: &mut Ctxt,
    model: &mut EntityModel,
    store: Option<&syn::LitBool>,
) {
    let store_all = store.is_none_or(|b| b.value);
    let mut not_stored = Vec::with_capacity(model.fields.len());
    for f in &model.fields {
        let readable = model.key_source(f).is_some();
        let in_index = !model.index_sources(f).is_empty();
        if let Some(word) = &f.attrs.key_only {
            if !readable && !in_index {
                cx.error_spanned_by(
                    word,
                    format!(
                        "`key_only` reads field `{}` from a key, which must hold it as it is (`{{{}}}` in `pk`, in `sk` of an entity that is not versioned, or in an index key template)",
                        f.ident, f.ident
                    ),
                );
            } else if !readable && model.versioned.is_some() {
                cx.error_spanned_by(
                    word,
                    format!(
                        "`key_only` on field `{}` would read it from an index key, but the revisions of a versioned entity do not carry every index key: store it (remove `key_only`) or put `{{{}}}` in `pk`",
                        f.ident, f.ident
                    ),
                );
            }
        }
        // `store_key_fields = false` is about the primary key; a field only an index key
        // holds is left unstored only when it says so (`key_only`).
        not_stored.push(
            (readable && (f.attrs.key_only.is_some() || !store_all))
                || (in_index && f.attrs.key_only.is_some()),
        );
    }
    for (i, index) in model.indexes.iter().enumerate() {
        let _ = i;
        if let Some((pk, sk)) = &index.attributes {
            for &fi in pk.iter().chain(sk) {
                if not_stored[fi] {
                    cx.error_spanned_by(
                        &model.fields[fi].ident,
                        format!(
                            "field `{}` is a key attribute of index `{}`, so it must be stored: remove `key_only` (or set `store_key_fields = true`)",
                            model.fields[fi].ident, index.index
                        ),
                    );
                }
            }
        }
    }
    for (f, flag) in model.fields.iter_mut().zip(not_stored) {
        f.not_stored = flag;
    }
    let names: Vec<String> = model.fields.iter().map(|f| f.name.clone()).collect();
    for f in &model.fields {
        for alias in &f.attrs.aliases {
            if names.contains(&alias.value()) {
                cx.error_spanned_by(
                    alias,
                    format!(
                        "alias `{}` is the attribute of a field: an alias names where field `{}` was stored before",
                        alias.value(),
                        f.ident
                    ),
                );
            }
        }
    }
}

/// Checks that span templates: a random shard field has one shard count, and an index
/// template that an update must recompute can read every primary-key field it uses back
/// from the primary key (which holds a computed part's source only through the part, when
/// the source is not also in the key as it is).
pub(crate) fn check_computed_sources(
    cx: &mut Ctxt,
    fields: &[Field],
    pk: &(Template, LitStr),
    sk: Option<&(Template, LitStr)>,
    indexes: &[IndexModel],
) {
    let templates: Vec<&(Template, LitStr)> = std::iter::once(pk)
        .chain(sk)
        .chain(indexes.iter().flat_map(|i| i.pk.iter().chain(i.sk.iter())))
        .collect();
    let mut random: Vec<(&str, u16)> = Vec::new();
    for (template, lit) in &templates {
        for c in template.computed() {
            if let Function::Random(n) = c.function {
                match random.iter().find(|(f, _)| *f == c.field) {
                    Some((_, m)) if *m != n => cx.error_spanned_by(
                        lit,
                        format!("`{}` is a random shard of {m} shards in another template: one count per field", c.field),
                    ),
                    Some(_) => {}
                    None => random.push((&c.field, n)),
                }
            }
        }
    }
    // A random shard is the field's value itself, so it reads back as well as `{field}`.
    let readable_from_key = |name: &str| {
        let key = std::iter::once(&pk.0).chain(sk.map(|s| &s.0));
        key.flat_map(|t| &t.segments).any(|s| match s {
            Segment::Field(f) => f == name,
            Segment::Computed(c) => c.field == name && matches!(c.function, Function::Random(_)),
            Segment::Lit(_) => false,
        })
    };
    for index in indexes {
        let mut sources: Vec<&str> = Vec::new();
        for name in index
            .pk
            .iter()
            .chain(index.sk.iter())
            .flat_map(|t| t.0.sources())
        {
            if !sources.contains(&name) {
                sources.push(name);
            }
        }
        let field = |name: &str| fields.iter().find(|f| f.ident == name);
        // Only a template mixing key and other fields is recomputed by updates.
        if sources
            .iter()
            .all(|n| field(n).is_some_and(|f| f.in_primary_key))
        {
            continue;
        }
        for name in &sources {
            if field(name).is_some_and(|f| f.in_primary_key) && !readable_from_key(name) {
                let lit = index.pk.as_ref().or(index.sk.as_ref()).map(|t| &t.1);
                let message = format!(
                    "index `{}` uses `{name}`, which the primary key holds only through a computed part (a shard or a time bucket): an update of the index's other fields could not read `{name}` back to recompute the index key; add `{{{name}}}` to the primary key as it is",
                    index.index
                );
                match lit {
                    Some(lit) => cx.error_spanned_by(lit, message),
                    None => cx.error_spanned_by(&index.index, message),
                }
            }
        }
    }
}

/// A `key_format` says how a field's value is written, wherever it is: in key templates,
/// as its own attribute, as a multi-attribute index key. A shard or a time bucket computed
/// from the field uses the default encoding, so a format there would be two encodings.
pub(crate) fn check_key_formats(
    cx: &mut Ctxt,
    fields: &[Field],
    pk: &(Template, LitStr),
    sk: Option<&(Template, LitStr)>,
    indexes: &[IndexModel],
) {
    let templates: Vec<&Template> = std::iter::once(&pk.0)
        .chain(sk.map(|s| &s.0))
        .chain(
            indexes
                .iter()
                .flat_map(|i| i.pk.iter().chain(i.sk.iter()))
                .map(|t| &t.0),
        )
        .collect();
    for f in fields {
        let Some(format) = &f.attrs.key_format else {
            continue;
        };
        let computed = templates
            .iter()
            .flat_map(|t| &t.segments)
            .any(|segment| matches!(segment, Segment::Computed(c) if f.ident == c.field));
        if computed {
            cx.error_spanned_by(
                &format.lit,
                format!(
                    "field `{}` has a key_format, but a template computes a shard or a time bucket from it, which uses the default encoding: keep the default format, or store the computed value in a field of its own",
                    f.ident
                ),
            );
        }
    }
}
