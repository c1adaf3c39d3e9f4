//! `#[derive(Table)]`: the table's key attributes, indexes, capacity and stream.

use crate::ctxt::Ctxt;
use crate::symbol::*;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, Ident, LitStr, Path, Token};

/// Stores an option's value, refusing a second occurrence (rather than silently keeping
/// the last one).
pub(crate) fn set_once<T>(
    slot: &mut Option<T>,
    value: T,
    meta: &ParseNestedMeta,
    name: &str,
) -> syn::Result<()> {
    if slot.is_some() {
        return Err(meta.error(format!("`{name}` is given twice")));
    }
    *slot = Some(value);
    Ok(())
}

pub struct KeyAttr {
    pub name: String,
    pub ty: ScalarType,
}

#[derive(Clone, Copy)]
pub enum ScalarType {
    S,
    N,
    B,
}

pub enum Projection {
    All,
    KeysOnly,
    Include(Vec<String>),
}

#[derive(PartialEq, Eq, Clone, Copy)]
pub enum IndexKind {
    Global,
    Local,
}

pub struct IndexDecl {
    pub name: LitStr,
    pub kind: IndexKind,
    pub pk: Vec<KeyAttr>,
    pub sk: Vec<KeyAttr>,
    pub projection: Projection,
    /// `capacity(read = N, write = N)`: a GSI's provisioned units.
    pub capacity: Option<Capacity>,
}

/// `capacity(read = N, write = N)`.
pub struct Capacity {
    pub read: u32,
    pub write: u32,
    /// The `capacity` word, for errors.
    pub span: Path,
}

/// `billing = "provisioned"` / `"on_demand"`.
pub struct BillingAttr {
    pub provisioned: bool,
    pub lit: LitStr,
}

/// `stream = "NEW_AND_OLD_IMAGES"`: the `StreamView` variant it names.
pub struct StreamAttr {
    pub variant: &'static str,
}

/// `write_type = false` / `write_token = false`: an attribute the crate writes on its own,
/// turned off. Only `false` is accepted (on is the default): `option` names the option
/// and `what` says what it turns off, for the error.
pub(crate) fn turned_off(
    meta: &ParseNestedMeta,
    option: &str,
    what: &str,
) -> syn::Result<syn::LitBool> {
    off(meta.value()?.parse()?, option, what)
}

/// `lit` if it is `false` (see [`turned_off`]).
pub(crate) fn off(lit: syn::LitBool, option: &str, what: &str) -> syn::Result<syn::LitBool> {
    if lit.value {
        return Err(syn::Error::new(
            lit.span(),
            format!("`{option}` is on by default: only `{option} = false` is accepted, which writes no {what}"),
        ));
    }
    Ok(lit)
}

/// `write_token = "name"` (the table's token attribute) or `write_token = false` (no token).
pub(crate) enum WriteTokenAttr {
    Named(String),
    Off(syn::LitBool),
}

pub(crate) fn capacity(meta: &ParseNestedMeta) -> syn::Result<Capacity> {
    let mut read = None;
    let mut write = None;
    meta.parse_nested_meta(|inner| {
        let slot = if inner.path == READ {
            &mut read
        } else if inner.path == WRITE {
            &mut write
        } else {
            return Err(inner.error("expected `read = N` or `write = N` (capacity units)"));
        };
        let lit: syn::LitInt = inner.value()?.parse()?;
        let units = lit.base10_parse::<u32>().map_err(|_| {
            syn::Error::new(
                lit.span(),
                "capacity units are a whole number from 1 to 4294967295",
            )
        })?;
        let name = if inner.path == READ { "read" } else { "write" };
        set_once(slot, units, &inner, name)
    })?;
    match (read, write) {
        (Some(read), Some(write)) => Ok(Capacity {
            read,
            write,
            span: meta.path.clone(),
        }),
        _ => Err(meta.error("capacity needs both `read = N` and `write = N`")),
    }
}

/// `write_token = "name"` or `write_token = false`.
pub(crate) fn write_token(meta: &ParseNestedMeta) -> syn::Result<WriteTokenAttr> {
    let value = meta.value()?;
    if value.peek(syn::LitBool) {
        return off(value.parse()?, "write_token", "write token").map(WriteTokenAttr::Off);
    }
    Ok(WriteTokenAttr::Named(value.parse::<LitStr>()?.value()))
}

pub(crate) fn billing(meta: &ParseNestedMeta) -> syn::Result<BillingAttr> {
    let lit: LitStr = meta.value()?.parse()?;
    let provisioned = match lit.value().as_str() {
        "provisioned" => true,
        "on_demand" => false,
        _ => {
            return Err(syn::Error::new(
                lit.span(),
                "`billing` is `\"on_demand\"` (the default) or `\"provisioned\"` (with `capacity(read = N, write = N)`)",
            ))
        }
    };
    Ok(BillingAttr { provisioned, lit })
}

pub(crate) fn stream(meta: &ParseNestedMeta) -> syn::Result<StreamAttr> {
    let lit: LitStr = meta.value()?.parse()?;
    let variant = match lit.value().as_str() {
        "KEYS_ONLY" => "KeysOnly",
        "NEW_IMAGE" => "NewImage",
        "OLD_IMAGE" => "OldImage",
        "NEW_AND_OLD_IMAGES" => "NewAndOldImages",
        _ => {
            return Err(syn::Error::new(
                lit.span(),
                "unknown stream view type; expected `KEYS_ONLY`, `NEW_IMAGE`, `OLD_IMAGE` or `NEW_AND_OLD_IMAGES`",
            ))
        }
    };
    Ok(StreamAttr { variant })
}

pub struct TableAttrs {
    /// Some option could not be parsed: "missing" checks would only add noise.
    pub parse_failed: bool,
    pub pk: Option<KeyAttr>,
    pub sk: Option<KeyAttr>,
    pub indexes: Vec<IndexDecl>,
    pub ttl: Option<String>,
    pub entity_type: Option<String>,
    pub write_token: Option<String>,
    /// `write_token = false`: single-item writes store no write token.
    pub no_write_token: Option<syn::LitBool>,
    /// `write_type = false`: writes add no entity-type attribute.
    pub no_write_type: Option<syn::LitBool>,
    /// `delimiter = "."`: the table's default key delimiter.
    pub delimiter: Option<char>,
    /// `identify = "keys"`: every entity of the table identifies untyped items by keys.
    pub identify_by_keys: bool,
    /// `billing = ".."`.
    pub billing: Option<BillingAttr>,
    /// `capacity(read = N, write = N)`: the table's provisioned units.
    pub capacity: Option<Capacity>,
    /// `stream = ".."`.
    pub stream: Option<StreamAttr>,
}

/// The key delimiters a template may use (see `dynamo_model::key::Delimiter`): a single
/// ASCII character below `~` that the encodings can keep out of every value.
pub const DELIMITERS: [char; 5] = ['#', '.', '_', '|', ':'];

/// `delimiter = "."`: one of [`DELIMITERS`].
pub(crate) fn delimiter(meta: &ParseNestedMeta) -> syn::Result<char> {
    let lit: LitStr = meta.value()?.parse()?;
    let value = lit.value();
    let mut chars = value.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if DELIMITERS.contains(&c) => Ok(c),
        _ => Err(syn::Error::new(
            lit.span(),
            format!(
                "unsupported key delimiter {value:?}: a delimiter is one of `#` (the default), `.`, `_`, `|` or `:`"
            ),
        )),
    }
}

/// `"name"` or `"name:N"`, or a list of them (multi-attribute GSI keys).
pub(crate) fn key_attrs(meta: &ParseNestedMeta) -> syn::Result<Vec<KeyAttr>> {
    let value = meta.value()?;
    let lits: Vec<LitStr> = if value.peek(syn::token::Bracket) {
        let content;
        syn::bracketed!(content in value);
        content
            .parse_terminated(<LitStr as syn::parse::Parse>::parse, Token![,])?
            .into_iter()
            .collect()
    } else {
        vec![value.parse()?]
    };
    if lits.is_empty() {
        return Err(meta.error("expected at least one attribute name"));
    }
    lits.iter().map(key_attr).collect()
}

pub(crate) fn key_attr(lit: &LitStr) -> syn::Result<KeyAttr> {
    let text = lit.value();
    let (name, ty) = match text.rsplit_once(':') {
        Some((name, "S")) => (name, ScalarType::S),
        Some((name, "N")) => (name, ScalarType::N),
        Some((name, "B")) => (name, ScalarType::B),
        Some((_, other)) => {
            return Err(syn::Error::new(
                lit.span(),
                format!("unknown key attribute type `{other}`; use S, N or B"),
            ))
        }
        None => (text.as_str(), ScalarType::S),
    };
    if name.is_empty() || name.len() > 255 {
        return Err(syn::Error::new(
            lit.span(),
            "a key attribute name must be 1 to 255 bytes long",
        ));
    }
    Ok(KeyAttr {
        name: name.to_string(),
        ty,
    })
}

pub(crate) fn single_key_attr(meta: &ParseNestedMeta) -> syn::Result<KeyAttr> {
    let lit: LitStr = meta.value()?.parse()?;
    key_attr(&lit)
}

pub(crate) fn projection(meta: &ParseNestedMeta) -> syn::Result<Projection> {
    if meta.input.peek(Token![=]) {
        let ident: Ident = meta.value()?.parse()?;
        return match ident.to_string().as_str() {
            "all" => Ok(Projection::All),
            "keys_only" => Ok(Projection::KeysOnly),
            _ => Err(syn::Error::new(
                ident.span(),
                "expected `all`, `keys_only` or `projection(include = [..])`",
            )),
        };
    }
    let mut include = None;
    meta.parse_nested_meta(|inner| {
        if inner.path == INCLUDE {
            let value = inner.value()?;
            let content;
            syn::bracketed!(content in value);
            let names =
                content.parse_terminated(<LitStr as syn::parse::Parse>::parse, Token![,])?;
            if names.is_empty() {
                return Err(inner.error(
                    "an INCLUDE projection names at least one attribute; use `keys_only` for none",
                ));
            }
            include = Some(names.iter().map(LitStr::value).collect());
            Ok(())
        } else {
            Err(inner.error("expected `include = [\"attr\", ..]`"))
        }
    })?;
    include
        .map(Projection::Include)
        .ok_or_else(|| meta.error("expected `projection(include = [..])`"))
}

pub(crate) fn index_decl(meta: &ParseNestedMeta, kind: IndexKind) -> syn::Result<IndexDecl> {
    let mut name = None;
    let mut pk = Vec::new();
    let mut sk = Vec::new();
    let mut proj = Projection::All;
    let mut cap = None;
    meta.parse_nested_meta(|inner| {
        if inner.path == NAME {
            name = Some(inner.value()?.parse::<LitStr>()?);
        } else if inner.path == PK {
            if kind == IndexKind::Local {
                return Err(inner.error("an LSI uses the table's partition key; give only `sk`"));
            }
            pk = key_attrs(&inner)?;
        } else if inner.path == SK {
            sk = key_attrs(&inner)?;
        } else if inner.path == PROJECTION {
            proj = projection(&inner)?;
        } else if inner.path == CAPACITY {
            if kind == IndexKind::Local {
                return Err(inner.error(
                    "an LSI shares the table's capacity: give `capacity(..)` to the table",
                ));
            }
            let c = capacity(&inner)?;
            set_once(&mut cap, c, &inner, "capacity")?;
        } else {
            return Err(inner.error("expected `name`, `pk`, `sk`, `projection` or `capacity(..)`"));
        }
        Ok(())
    })?;
    let name = name.ok_or_else(|| meta.error("an index needs `name = \"...\"`"))?;
    if kind == IndexKind::Global && pk.is_empty() {
        return Err(meta.error("a GSI needs `pk = \"...\"`"));
    }
    if kind == IndexKind::Local && sk.len() != 1 {
        return Err(meta.error("an LSI needs exactly one `sk = \"...\"`"));
    }
    if pk.len() > 4 || sk.len() > 4 {
        return Err(meta.error("an index key has at most four attributes"));
    }
    Ok(IndexDecl {
        name,
        kind,
        pk,
        sk,
        projection: proj,
        capacity: cap,
    })
}

pub fn table_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> TableAttrs {
    let mut out = TableAttrs {
        parse_failed: false,
        pk: None,
        sk: None,
        indexes: Vec::new(),
        ttl: None,
        entity_type: None,
        write_token: None,
        no_write_token: None,
        no_write_type: None,
        delimiter: None,
        identify_by_keys: false,
        billing: None,
        capacity: None,
        stream: None,
    };
    for attr in attrs.iter().filter(|a| a.path() == DYNAMO) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path == PK {
                set_once(&mut out.pk, single_key_attr(&meta)?, &meta, "pk")?;
            } else if meta.path == SK {
                set_once(&mut out.sk, single_key_attr(&meta)?, &meta, "sk")?;
            } else if meta.path == GSI {
                out.indexes.push(index_decl(&meta, IndexKind::Global)?);
            } else if meta.path == LSI {
                out.indexes.push(index_decl(&meta, IndexKind::Local)?);
            } else if meta.path == TTL {
                let ttl = meta.value()?.parse::<LitStr>()?.value();
                set_once(&mut out.ttl, ttl, &meta, "ttl")?;
            } else if meta.path == ENTITY_TYPE {
                let name = meta.value()?.parse::<LitStr>()?.value();
                set_once(&mut out.entity_type, name, &meta, "entity_type")?;
            } else if meta.path == WRITE_TOKEN {
                if out.write_token.is_some() || out.no_write_token.is_some() {
                    return Err(meta.error("`write_token` is given twice"));
                }
                match write_token(&meta)? {
                    WriteTokenAttr::Named(name) => out.write_token = Some(name),
                    WriteTokenAttr::Off(lit) => out.no_write_token = Some(lit),
                }
            } else if meta.path == WRITE_TYPE {
                let lit = turned_off(&meta, "write_type", "entity-type attribute")?;
                set_once(&mut out.no_write_type, lit, &meta, "write_type")?;
            } else if meta.path == DELIMITER {
                set_once(&mut out.delimiter, delimiter(&meta)?, &meta, "delimiter")?;
            } else if meta.path == BILLING {
                set_once(&mut out.billing, billing(&meta)?, &meta, "billing")?;
            } else if meta.path == CAPACITY {
                set_once(&mut out.capacity, capacity(&meta)?, &meta, "capacity")?;
            } else if meta.path == STREAM {
                set_once(&mut out.stream, stream(&meta)?, &meta, "stream")?;
            } else if meta.path == IDENTIFY {
                let lit = meta.value()?.parse::<LitStr>()?;
                match lit.value().as_str() {
                    "keys" => out.identify_by_keys = true,
                    "type" => {}
                    _ => {
                        return Err(syn::Error::new(
                            lit.span(),
                            "`identify` is `\"keys\"` (items without the entity-type attribute are identified by their entities' key templates) or `\"type\"` (the default)",
                        ));
                    }
                }
            } else {
                return Err(meta.error(
                    "unknown table option; expected `pk`, `sk`, `gsi(..)`, `lsi(..)`, `ttl`, `entity_type`, `write_token`, `write_type`, `delimiter`, `identify`, `billing`, `capacity(..)` or `stream`",
                ));
            }
            Ok(())
        });
        if let Err(e) = result {
            out.parse_failed = true;
            cx.syn_error(e);
        }
    }
    out
}
