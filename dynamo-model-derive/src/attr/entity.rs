//! `#[derive(Entity)]`'s container options: table, key templates, indexes, history.

use super::*;
use crate::ctxt::Ctxt;
use crate::symbol::*;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, Ident, LitStr, Path, Token};

pub struct IndexTemplate {
    pub index: IndexName,
    pub pk: Option<LitStr>,
    pub sk: Option<LitStr>,
    /// `pk = [field, ..]`: a multi-attribute key made of the entity's own fields.
    pub pk_fields: Option<Vec<Ident>>,
    /// `sk = [field, ..]`.
    pub sk_fields: Option<Vec<Ident>>,
    /// `delimiter = "."`: the delimiter of this index's templates.
    pub delimiter: Option<char>,
}

/// `[a, b]` after `=`: field names of a multi-attribute index key.
pub(crate) fn field_list(meta: &ParseNestedMeta) -> syn::Result<Option<Vec<Ident>>> {
    let value = meta.value()?;
    if !value.peek(syn::token::Bracket) {
        return Ok(None);
    }
    let content;
    syn::bracketed!(content in value);
    let fields: Vec<Ident> = content
        .parse_terminated(<Ident as syn::parse::Parse>::parse, Token![,])?
        .into_iter()
        .collect();
    if fields.is_empty() || fields.len() > 4 {
        return Err(meta.error("a multi-attribute index key has one to four fields"));
    }
    Ok(Some(fields))
}

pub struct EntityAttrs {
    /// Some option could not be parsed: "missing" checks would only add noise.
    pub parse_failed: bool,
    pub table: Option<Path>,
    pub pk: Option<LitStr>,
    pub sk: Option<LitStr>,
    pub indexes: Vec<IndexTemplate>,
    pub entity_type: Option<LitStr>,
    /// The name of the generated key struct, instead of `{Type}Key`.
    pub key_struct: Option<syn::Ident>,
    /// `delimiter = "."`: the delimiter of the entity's templates.
    pub delimiter: Option<char>,
    /// `history` / `history(..)` (or `versioned`, its former spelling): the entity keeps
    /// its history.
    pub versioned: Option<Versioned>,
    /// `identify = "keys"`: items without the entity-type attribute are identified by
    /// their keys.
    pub identify_by_keys: Option<LitStr>,
    /// `store_key_fields = false`: key fields are read from the keys, not stored.
    pub store_key_fields: Option<syn::LitBool>,
    /// `write_type = false`: writes add no entity-type attribute to the entity's items.
    pub no_write_type: Option<syn::LitBool>,
    /// `write_token = false`: single-item writes of the entity store no write token.
    pub no_write_token: Option<syn::LitBool>,
    /// `validate = path`: a function over the whole value, checked before writes.
    pub validate: Option<Path>,
    pub naming: Naming,
}

/// `#[dynamo(history(prefix = "v", width = 20, separator = "#", time_attribute = "_vt"))]`
/// (or `versioned(..)`, the former spelling).
pub struct Versioned {
    /// The `history` (or `versioned`) word, for errors.
    pub word: Path,
    pub prefix: Option<LitStr>,
    pub width: Option<syn::LitInt>,
    pub separator: Option<LitStr>,
    /// `time_attribute = ".."`, or `time_attribute = false` (no revision time).
    pub time_attribute: Option<TimeAttribute>,
    /// `revisions_in(GSI1, "GSI-2", ..)`: indexes whose keys revisions keep.
    pub revisions_in: Vec<IndexName>,
    /// `counter_on_latest`: the version attribute on the latest copy only.
    pub counter_on_latest: Option<Path>,
    /// `numeric_order`: an unpadded history read in revision order.
    pub numeric_order: Option<Path>,
    /// `layout = "aws"`: a published layout by name (sets the four options above and, when
    /// the entity gives none, `sk = ""`).
    pub layout: Option<LitStr>,
}

pub(crate) fn versioned(meta: &ParseNestedMeta) -> syn::Result<Versioned> {
    let mut out = Versioned {
        word: meta.path.clone(),
        prefix: None,
        width: None,
        separator: None,
        time_attribute: None,
        revisions_in: Vec::new(),
        counter_on_latest: None,
        numeric_order: None,
        layout: None,
    };
    if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| {
            if inner.path == PREFIX {
                set_once(&mut out.prefix, inner.value()?.parse()?, &inner, "prefix")
            } else if inner.path == WIDTH {
                set_once(&mut out.width, inner.value()?.parse()?, &inner, "width")
            } else if inner.path == SEPARATOR {
                set_once(&mut out.separator, inner.value()?.parse()?, &inner, "separator")
            } else if inner.path == TIME_ATTRIBUTE {
                let value = inner.value()?;
                let time = if value.peek(syn::LitBool) {
                    TimeAttribute::Off(super::table::off(
                        value.parse()?,
                        "time_attribute",
                        "revision time",
                    )?)
                } else {
                    TimeAttribute::Named(value.parse()?)
                };
                set_once(&mut out.time_attribute, time, &inner, "time_attribute")
            } else if inner.path == COUNTER_ON_LATEST {
                set_once(
                    &mut out.counter_on_latest,
                    inner.path.clone(),
                    &inner,
                    "counter_on_latest",
                )
            } else if inner.path == NUMERIC_ORDER {
                set_once(
                    &mut out.numeric_order,
                    inner.path.clone(),
                    &inner,
                    "numeric_order",
                )
            } else if inner.path == LAYOUT {
                set_once(&mut out.layout, inner.value()?.parse()?, &inner, "layout")
            } else if inner.path == REVISIONS_IN {
                let content;
                syn::parenthesized!(content in inner.input);
                let names = content.parse_terminated(IndexName::parse, Token![,])?;
                out.revisions_in.extend(names);
                Ok(())
            } else {
                Err(inner.error(
                    "unknown history option; expected `layout`, `prefix`, `width`, `separator`, `time_attribute`, `revisions_in(..)`, `counter_on_latest` or `numeric_order`",
                ))
            }
        })?;
    }
    if let Some(layout) = out.layout.clone() {
        apply_layout(&mut out, &layout)?;
    }
    Ok(out)
}

/// Where revisions record when they were written: `time_attribute = "_vt"` (the default
/// name) or `time_attribute = false` (nowhere).
pub enum TimeAttribute {
    Named(LitStr),
    Off(syn::LitBool),
}

impl TimeAttribute {
    /// The literal, for spans.
    pub fn span(&self) -> proc_macro2::Span {
        match self {
            TimeAttribute::Named(lit) => lit.span(),
            TimeAttribute::Off(lit) => lit.span(),
        }
    }
}

/// `layout = "aws"`: AWS's number-based version-control layout (`v0` the latest copy with
/// the counter, `v1`, `v2`, … unpadded, nothing after the number, read in revision order,
/// no revision time unless `time_attribute = ".."` is given), the options it stands for
/// set here.
fn apply_layout(out: &mut Versioned, layout: &LitStr) -> syn::Result<()> {
    if layout.value() != "aws" {
        return Err(syn::Error::new(
            layout.span(),
            "unknown history layout; expected `layout = \"aws\"` (AWS's number-based layout: `v0` is the latest copy, `v1`, `v2`, … the revisions)",
        ));
    }
    let given = [
        ("width", out.width.is_some()),
        ("separator", out.separator.is_some()),
        ("counter_on_latest", out.counter_on_latest.is_some()),
        ("numeric_order", out.numeric_order.is_some()),
    ];
    if let Some((name, _)) = given.iter().find(|(_, given)| *given) {
        return Err(syn::Error::new(
            layout.span(),
            format!("`layout = \"aws\"` sets `width = 0`, `separator = \"\"`, `counter_on_latest` and `numeric_order`: remove `{name}`, or spell the layout out without `layout`"),
        ));
    }
    let span = layout.span();
    let word = || Path::from(Ident::new("layout", span));
    out.width = Some(syn::LitInt::new("0", span));
    out.separator = Some(LitStr::new("", span));
    out.counter_on_latest = Some(word());
    out.numeric_order = Some(word());
    // The sample's revisions record no time: written as it writes them.
    out.time_attribute
        .get_or_insert_with(|| TimeAttribute::Off(syn::LitBool::new(false, span)));
    Ok(())
}

pub fn entity_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> EntityAttrs {
    let mut out = EntityAttrs {
        parse_failed: false,
        table: None,
        pk: None,
        sk: None,
        indexes: Vec::new(),
        entity_type: None,
        key_struct: None,
        delimiter: None,
        versioned: None,
        identify_by_keys: None,
        store_key_fields: None,
        no_write_type: None,
        no_write_token: None,
        validate: None,
        naming: Naming::default(),
    };
    let mut naming = NamingSaid::default();
    let mut deferred: Vec<syn::Error> = Vec::new();
    for attr in attrs {
        if attr.path() == DYNAMO {
            let result = attr.parse_nested_meta(|meta| {
                if meta.path == TABLE {
                    set_once(&mut out.table, meta.value()?.parse()?, &meta, "table")?;
                } else if meta.path == PK {
                    set_once(&mut out.pk, meta.value()?.parse()?, &meta, "pk")?;
                } else if meta.path == SK {
                    set_once(&mut out.sk, meta.value()?.parse()?, &meta, "sk")?;
                } else if meta.path == ENTITY_TYPE {
                    set_once(&mut out.entity_type, meta.value()?.parse()?, &meta, "entity_type")?;
                } else if meta.path == KEY_STRUCT {
                    set_once(&mut out.key_struct, meta.value()?.parse()?, &meta, "key_struct")?;
                } else if meta.path == DELIMITER {
                    set_once(&mut out.delimiter, delimiter(&meta)?, &meta, "delimiter")?;
                } else if meta.path == INDEX {
                    out.indexes.push(index_template(&meta)?);
                } else if meta.path == VALIDATE {
                    set_once(&mut out.validate, meta.value()?.parse()?, &meta, "validate")?;
                } else if meta.path == IDENTIFY {
                    let lit: LitStr = meta.value()?.parse()?;
                    match lit.value().as_str() {
                        "keys" => set_once(&mut out.identify_by_keys, lit, &meta, "identify")?,
                        "type" => {}
                        // Reported after the other options are read, so no "missing `pk`"
                        // follows it.
                        _ => deferred.push(syn::Error::new(
                            lit.span(),
                            "`identify` is `\"keys\"` (items without the entity-type attribute are identified by their keys) or `\"type\"` (the default: by the entity-type attribute)",
                        )),
                    }
                } else if meta.path == STORE_KEY_FIELDS {
                    match meta.value()?.parse::<syn::Lit>()? {
                        syn::Lit::Bool(b) => set_once(&mut out.store_key_fields, b, &meta, "store_key_fields")?,
                        other => deferred.push(syn::Error::new(
                            other.span(),
                            "`store_key_fields` is `true` (key fields are also stored as attributes of their own, the default) or `false` (read from the keys only)",
                        )),
                    }
                } else if meta.path == WRITE_TYPE {
                    let lit = super::table::turned_off(&meta, "write_type", "entity-type attribute")?;
                    set_once(&mut out.no_write_type, lit, &meta, "write_type")?;
                } else if meta.path == WRITE_TOKEN {
                    match super::table::write_token(&meta)? {
                        super::table::WriteTokenAttr::Off(lit) => {
                            set_once(&mut out.no_write_token, lit, &meta, "write_token")?;
                        }
                        // Reported after the other options are read, so no "missing
                        // `pk`" follows it.
                        super::table::WriteTokenAttr::Named(_) => deferred.push(meta.error(
                            "the write token's attribute is named on the table (`write_token = \"..\"` there); an entity only turns the token off: `write_token = false`",
                        )),
                    }
                } else if meta.path == HISTORY {
                    if out.versioned.is_some() {
                        return Err(meta.error(
                            "`history` is given twice",
                        ));
                    }
                    out.versioned = Some(versioned(&meta)?);
                } else if !naming_option(&meta, &mut naming, Derive::Entity, Source::Dynamo)? {
                    return Err(meta.error(
                        "unknown entity option; expected `table`, `pk`, `sk`, `index(..)`, `delimiter`, `entity_type`, `identify`, `store_key_fields`, `write_type`, `write_token`, `key_struct`, `history`, `validate`, `rename_all` or `default`",
                    ));
                }
                Ok(())
            });
            if let Err(e) = result {
                out.parse_failed = true;
                cx.syn_error(e);
            }
        } else if attr.path() == SERDE {
            let result = attr.parse_nested_meta(|meta| {
                if !naming_option(&meta, &mut naming, Derive::Entity, Source::Serde)? {
                    skip_meta_value(&meta)?;
                }
                Ok(())
            });
            if let Err(e) = result {
                cx.syn_error(e);
            }
        }
    }
    // A named layout whose sort key is the revision slot alone: `sk = ""` unless given.
    if let Some(layout) = out.versioned.as_ref().and_then(|v| v.layout.as_ref()) {
        if out.sk.is_none() {
            out.sk = Some(LitStr::new("", layout.span()));
        }
    }
    out.naming = naming.resolve(cx);
    for e in deferred {
        cx.syn_error(e);
    }
    out
}

/// `index(GSI1, pk = "..", sk = "..")`, `index("GSI-1", ..)`: the index name first, an
/// identifier or a string.
pub(crate) fn index_template(meta: &ParseNestedMeta) -> syn::Result<IndexTemplate> {
    let content;
    syn::parenthesized!(content in meta.input);
    let index = if content.is_empty() {
        None
    } else if content.peek(LitStr) || !content.peek2(Token![=]) {
        let name = IndexName::parse(&content)?;
        if !content.is_empty() {
            content.parse::<Token![,]>()?;
        }
        Some(name)
    } else {
        None
    };
    let mut pk = None;
    let mut sk = None;
    let mut pk_fields = None;
    let mut sk_fields = None;
    let mut delimiter_char = None;
    let options: proc_macro2::TokenStream = content.parse()?;
    let parse_option = |inner: ParseNestedMeta| {
        if !inner.input.peek(Token![=]) {
            return Err(if index.is_none() {
                inner.error("expected the index name first, e.g. `index(GSI1, pk = \"..\")` or `index(\"GSI-1\", pk = \"..\")`")
            } else {
                inner.error("the index name is given twice")
            });
        }
        let fork = inner.input.fork();
        let _ = fork.parse::<Token![=]>();
        let is_list = fork.peek(syn::token::Bracket);
        if inner.path == DELIMITER {
            set_once(&mut delimiter_char, delimiter(&inner)?, &inner, "delimiter")?;
        } else if inner.path == PK {
            if is_list {
                pk_fields = field_list(&inner)?;
            } else {
                pk = Some(inner.value()?.parse()?);
            }
        } else if inner.path == SK {
            if is_list {
                sk_fields = field_list(&inner)?;
            } else {
                sk = Some(inner.value()?.parse()?);
            }
        } else {
            return Err(
                inner.error("expected `pk = \"..\"`, `sk = \"..\"` or `delimiter = \"..\"`")
            );
        }
        Ok(())
    };
    syn::parse::Parser::parse2(syn::meta::parser(parse_option), options)?;
    let index = index.ok_or_else(|| {
        meta.error("expected the index name first, e.g. `index(GSI1, pk = \"..\")` or `index(\"GSI-1\", pk = \"..\")`")
    })?;
    if (pk.is_some() || sk.is_some()) && (pk_fields.is_some() || sk_fields.is_some()) {
        return Err(meta.error(
            "an index key is either templates (`pk = \"..\"`) or the entity's own fields (`pk = [a, b]`), not both",
        ));
    }
    if delimiter_char.is_some() && pk.is_none() && sk.is_none() {
        return Err(meta.error(
            "`delimiter` applies to an index's templates (`pk = \"..\"`, `sk = \"..\"`), and this index has none",
        ));
    }
    Ok(IndexTemplate {
        index,
        pk,
        sk,
        pk_fields,
        sk_fields,
        delimiter: delimiter_char,
    })
}

/// Consumes the value of a `#[serde(...)]` item this derive does not interpret.
pub(crate) fn skip_meta_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| skip_meta_value(&inner))?;
    }
    Ok(())
}
