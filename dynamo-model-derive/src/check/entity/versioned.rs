//! `#[dynamo(history)]` checked against the entity: the version field, the sort key the
//! revision slots lead, and a slot layout (prefix, width, separator) that parses back.

use super::*;

/// The width of a revision slot when none is given: every digit of a u64.
const DEFAULT_WIDTH: usize = 20;

/// Checks `versioned(..)` against the entity: a version field (the revision number), a
/// constant sort-key template (the item's identity is its partition key, so a range over
/// its revisions holds nothing else of it), and a layout whose slots parse unambiguously.
pub(super) fn versioned_model(
    cx: &mut Ctxt,
    v: &attr::Versioned,
    fields: &[Field],
    sk: Option<&(Template, LitStr)>,
    indexes: &[IndexModel],
) -> Option<VersionedModel> {
    // Every check runs (`&=` does not short-circuit), so that each error is reported.
    let mut ok = check_revisions_in(cx, v, indexes);
    ok &= check_version_field(cx, v, fields);
    ok &= check_sort_key(cx, v, sk);
    let prefix = prefix(cx, v);
    let separator = separator(cx, v, sk);
    let width = width(cx, v);
    let time_attribute = time_attribute(cx, v, fields);
    ok &= check_numeric_order(cx, v, width.unwrap_or(DEFAULT_WIDTH));
    if !ok {
        return None;
    }
    let time_span = v.time_attribute.as_ref().map_or_else(
        || syn::spanned::Spanned::span(&v.word),
        attr::TimeAttribute::span,
    );
    Some(VersionedModel {
        revisions_in: v.revisions_in.iter().map(|n| n.name().to_owned()).collect(),
        prefix: prefix?,
        width: width?,
        separator: separator?,
        time_attribute: time_attribute.ok()?,
        counter_on_latest: v.counter_on_latest.is_some(),
        numeric_order: v.numeric_order.is_some(),
        time_span,
    })
}

/// `revisions_in(..)`: each index named once, one of the entity's, with a key template of
/// the entity (an index keyed by plain attributes is carried by revisions anyway).
fn check_revisions_in(cx: &mut Ctxt, v: &attr::Versioned, indexes: &[IndexModel]) -> bool {
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
    ok
}

/// The revision number is the entity's `#[dynamo(version)]` field.
fn check_version_field(cx: &mut Ctxt, v: &attr::Versioned, fields: &[Field]) -> bool {
    if fields.iter().any(|f| f.attrs.version) {
        return true;
    }
    cx.error_spanned_by(
        &v.word,
        "a #[dynamo(history)] entity needs a `#[dynamo(version)] version: u64` field: the revision number, which the latest copy and each revision store",
    );
    false
}

/// A sort key, constant: the revision number leads it.
fn check_sort_key(cx: &mut Ctxt, v: &attr::Versioned, sk: Option<&(Template, LitStr)>) -> bool {
    match sk {
        None => {
            cx.error_spanned_by(
                &v.word,
                "#[dynamo(history)] needs a sort key: the revision number is part of it (declare the table with `sk = \"..\"` and give the entity an `sk` template)",
            );
            false
        }
        Some((template, lit)) if !template.is_constant() => {
            cx.error_spanned_by(
                lit,
                "a #[dynamo(history)] entity's sort-key template must be constant (e.g. `sk = \"DOC\"`): the revision number leads the sort key, so the item's identity must be its partition key",
            );
            false
        }
        Some(_) => true,
    }
}

/// The text before a slot's digits (`v` unless given); `None` when it ends with a digit.
fn prefix(cx: &mut Ctxt, v: &attr::Versioned) -> Option<String> {
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
        return None;
    }
    Some(prefix)
}

/// The text after a slot's digits (`#` unless given); `None` when the digits would not end
/// where the number does.
fn separator(
    cx: &mut Ctxt,
    v: &attr::Versioned,
    sk: Option<&(Template, LitStr)>,
) -> Option<String> {
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
    let error = if separator.starts_with(|c: char| c.is_ascii_digit()) {
        "the separator must not start with a digit: it ends the revision number".to_owned()
    } else if separator.is_empty() && rest.starts_with(|c: char| c.is_ascii_digit()) {
        format!("an empty separator needs a sort-key template that does not start with a digit: `{rest}` would read as part of the revision number")
    } else if separator.is_empty() && starts_with_placeholder {
        "an empty separator needs a sort-key template that is empty or starts with literal text (not a digit): a placeholder's value right after the revision number could start with a digit and read as part of it".to_owned()
    } else {
        return Some(separator);
    };
    if let Some(lit) = &v.separator {
        cx.error_spanned_by(lit, error);
    }
    None
}

/// The digits of a slot, 0 (unpadded) to 20; `None` when out of range.
fn width(cx: &mut Ctxt, v: &attr::Versioned) -> Option<usize> {
    let Some(lit) = &v.width else {
        return Some(DEFAULT_WIDTH);
    };
    match lit.base10_parse::<usize>() {
        Ok(w) if w <= DEFAULT_WIDTH => Some(w),
        _ => {
            cx.error_spanned_by(
                lit,
                "the width must be 0 (unpadded) to 20 digits: a revision number (u64) has at most 20",
            );
            None
        }
    }
}

/// `numeric_order` only for unpadded slots, which do not sort by number by themselves.
fn check_numeric_order(cx: &mut Ctxt, v: &attr::Versioned, width: usize) -> bool {
    match (&v.numeric_order, width != 0) {
        (Some(word), true) => {
            cx.error_spanned_by(
                word,
                "`numeric_order` is for an unpadded layout (`width = 0`): padded slots already sort by number",
            );
            false
        }
        _ => true,
    }
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
