//! Key templates checked against the entity's fields, and the checks that span the
//! templates: computed parts, key formats, which key fields are stored.

use super::*;

/// Parses a key template and checks it against the fields; `partition` says whether it
/// is a partition-key template (of the table or of an index), where shards belong.
pub(super) fn parse_template(
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
    // Every check runs (`&=` does not short-circuit), so that each error is reported.
    let mut ok = check_repeated_parts(cx, lit, &parsed, what);
    ok &= check_shards(cx, lit, &parsed, what, partition);
    for name in parsed.sources() {
        if let Some(message) = unusable_in_key(fields, name, what) {
            cx.error_spanned_by(lit, message);
            ok = false;
        }
    }
    ok.then_some(parsed)
}

/// No field and no computed part twice in one template.
fn check_repeated_parts(cx: &mut Ctxt, lit: &LitStr, parsed: &Template, what: &str) -> bool {
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
    ok
}

/// At most one shard, in a partition-key template, of a field the template does not
/// already hold as it is.
fn check_shards(
    cx: &mut Ctxt,
    lit: &LitStr,
    parsed: &Template,
    what: &str,
    partition: bool,
) -> bool {
    let mut ok = true;
    let names: Vec<&str> = parsed.fields().collect();
    let shards: Vec<_> = parsed
        .computed()
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
    ok
}

/// Why field `name`, which a template reads, cannot be part of a key (`None`: it can).
fn unusable_in_key(fields: &[Field], name: &str, what: &str) -> Option<String> {
    let Some(f) = fields.iter().find(|f| f.ident == name) else {
        let known: Vec<String> = fields.iter().map(|f| f.ident.to_string()).collect();
        return Some(format!(
            "unknown field `{name}` in {what} template; the struct's fields are: {}",
            known.join(", ")
        ));
    };
    let a = &f.attrs;
    if a.skip {
        Some(format!(
            "field `{name}` is skipped and cannot be part of a key"
        ))
    } else if a.chunked.is_some() {
        Some(format!(
            "field `{name}` is chunked (stored in chunk items) and cannot be part of a key"
        ))
    } else if a.version || a.ttl {
        Some(format!("field `{name}` is managed (#[dynamo(version)] or #[dynamo(ttl)]) and cannot be part of a key"))
    } else if a.compress.is_some() {
        Some(format!("field `{name}` is stored compressed (#[dynamo(compress)]) and cannot be part of a key: a key is compared and sorted, compressed bytes are neither"))
    } else if a.serde_codec {
        Some(format!("field `{name}` is stored with #[dynamo(serde)] and cannot be part of a key; key parts implement `dynamo_model::KeyPart`"))
    } else {
        None
    }
}

/// Decides which key fields are read from the keys only (`key_only`, or every key field
/// with `store_key_fields = false`) and checks aliases.
pub(super) fn check_key_storage(
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
    for index in &model.indexes {
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
pub(super) fn check_computed_sources(
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
pub(super) fn check_key_formats(
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
