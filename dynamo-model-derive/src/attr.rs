//! `#[dynamo(...)]` and the relevant `#[serde(...)]` attributes → plain structs.

use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, Ident, LitStr, Path, Token};

// ---------------------------------------------------------------- table

/// Stores an option's value, refusing a second occurrence (rather than silently keeping
/// the last one).
fn set_once<T>(
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

fn capacity(meta: &ParseNestedMeta) -> syn::Result<Capacity> {
    let mut read = None;
    let mut write = None;
    meta.parse_nested_meta(|inner| {
        let slot = if inner.path.is_ident("read") {
            &mut read
        } else if inner.path.is_ident("write") {
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
        let name = if inner.path.is_ident("read") {
            "read"
        } else {
            "write"
        };
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

fn billing(meta: &ParseNestedMeta) -> syn::Result<BillingAttr> {
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

fn stream(meta: &ParseNestedMeta) -> syn::Result<StreamAttr> {
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
fn delimiter(meta: &ParseNestedMeta) -> syn::Result<char> {
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
fn key_attrs(meta: &ParseNestedMeta) -> syn::Result<Vec<KeyAttr>> {
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

fn key_attr(lit: &LitStr) -> syn::Result<KeyAttr> {
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

fn single_key_attr(meta: &ParseNestedMeta) -> syn::Result<KeyAttr> {
    let lit: LitStr = meta.value()?.parse()?;
    key_attr(&lit)
}

fn projection(meta: &ParseNestedMeta) -> syn::Result<Projection> {
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
        if inner.path.is_ident("include") {
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

fn index_decl(meta: &ParseNestedMeta, kind: IndexKind) -> syn::Result<IndexDecl> {
    let mut name = None;
    let mut pk = Vec::new();
    let mut sk = Vec::new();
    let mut proj = Projection::All;
    let mut cap = None;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("name") {
            name = Some(inner.value()?.parse::<LitStr>()?);
        } else if inner.path.is_ident("pk") {
            if kind == IndexKind::Local {
                return Err(inner.error("an LSI uses the table's partition key; give only `sk`"));
            }
            pk = key_attrs(&inner)?;
        } else if inner.path.is_ident("sk") {
            sk = key_attrs(&inner)?;
        } else if inner.path.is_ident("projection") {
            proj = projection(&inner)?;
        } else if inner.path.is_ident("capacity") {
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
        delimiter: None,
        identify_by_keys: false,
        billing: None,
        capacity: None,
        stream: None,
    };
    for attr in attrs.iter().filter(|a| a.path().is_ident("dynamo")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("pk") {
                set_once(&mut out.pk, single_key_attr(&meta)?, &meta, "pk")?;
            } else if meta.path.is_ident("sk") {
                set_once(&mut out.sk, single_key_attr(&meta)?, &meta, "sk")?;
            } else if meta.path.is_ident("gsi") {
                out.indexes.push(index_decl(&meta, IndexKind::Global)?);
            } else if meta.path.is_ident("lsi") {
                out.indexes.push(index_decl(&meta, IndexKind::Local)?);
            } else if meta.path.is_ident("ttl") {
                let ttl = meta.value()?.parse::<LitStr>()?.value();
                set_once(&mut out.ttl, ttl, &meta, "ttl")?;
            } else if meta.path.is_ident("entity_type") {
                let name = meta.value()?.parse::<LitStr>()?.value();
                set_once(&mut out.entity_type, name, &meta, "entity_type")?;
            } else if meta.path.is_ident("write_token") {
                let name = meta.value()?.parse::<LitStr>()?.value();
                set_once(&mut out.write_token, name, &meta, "write_token")?;
            } else if meta.path.is_ident("delimiter") {
                set_once(&mut out.delimiter, delimiter(&meta)?, &meta, "delimiter")?;
            } else if meta.path.is_ident("billing") {
                set_once(&mut out.billing, billing(&meta)?, &meta, "billing")?;
            } else if meta.path.is_ident("capacity") {
                set_once(&mut out.capacity, capacity(&meta)?, &meta, "capacity")?;
            } else if meta.path.is_ident("stream") {
                set_once(&mut out.stream, stream(&meta)?, &meta, "stream")?;
            } else if meta.path.is_ident("identify") {
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
                    "unknown table option; expected `pk`, `sk`, `gsi(..)`, `lsi(..)`, `ttl`, `entity_type`, `write_token`, `delimiter`, `identify`, `billing`, `capacity(..)` or `stream`",
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

// ---------------------------------------------------------------- entity

pub struct IndexTemplate {
    pub index: Ident,
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
fn field_list(meta: &ParseNestedMeta) -> syn::Result<Option<Vec<Ident>>> {
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
    /// `versioned` / `versioned(..)`: the entity keeps its history.
    pub versioned: Option<Versioned>,
    /// `identify = "keys"`: items without the entity-type attribute are identified by
    /// their keys.
    pub identify_by_keys: Option<LitStr>,
    /// `store_key_fields = false`: key fields are read from the keys, not stored.
    pub store_key_fields: Option<syn::LitBool>,
    pub naming: Naming,
}

/// `#[dynamo(versioned(prefix = "v", width = 20, separator = "#", time_attribute = "_vt"))]`.
pub struct Versioned {
    /// The `versioned` word, for errors.
    pub word: Path,
    pub prefix: Option<LitStr>,
    pub width: Option<syn::LitInt>,
    pub separator: Option<LitStr>,
    pub time_attribute: Option<LitStr>,
    /// `revisions_in(GSI1, ..)`: indexes whose keys revisions keep.
    pub revisions_in: Vec<Ident>,
    /// `counter_on_latest`: the version attribute on the latest copy only.
    pub counter_on_latest: Option<Path>,
    /// `numeric_order`: an unpadded history read in revision order.
    pub numeric_order: Option<Path>,
}

fn versioned(meta: &ParseNestedMeta) -> syn::Result<Versioned> {
    let mut out = Versioned {
        word: meta.path.clone(),
        prefix: None,
        width: None,
        separator: None,
        time_attribute: None,
        revisions_in: Vec::new(),
        counter_on_latest: None,
        numeric_order: None,
    };
    if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| {
            if inner.path.is_ident("prefix") {
                set_once(&mut out.prefix, inner.value()?.parse()?, &inner, "prefix")
            } else if inner.path.is_ident("width") {
                set_once(&mut out.width, inner.value()?.parse()?, &inner, "width")
            } else if inner.path.is_ident("separator") {
                set_once(&mut out.separator, inner.value()?.parse()?, &inner, "separator")
            } else if inner.path.is_ident("time_attribute") {
                set_once(
                    &mut out.time_attribute,
                    inner.value()?.parse()?,
                    &inner,
                    "time_attribute",
                )
            } else if inner.path.is_ident("counter_on_latest") {
                set_once(
                    &mut out.counter_on_latest,
                    inner.path.clone(),
                    &inner,
                    "counter_on_latest",
                )
            } else if inner.path.is_ident("numeric_order") {
                set_once(
                    &mut out.numeric_order,
                    inner.path.clone(),
                    &inner,
                    "numeric_order",
                )
            } else if inner.path.is_ident("revisions_in") {
                inner.parse_nested_meta(|index| match index.path.get_ident() {
                    Some(ident) => {
                        out.revisions_in.push(ident.clone());
                        Ok(())
                    }
                    None => Err(index.error("expected an index name, e.g. `revisions_in(GSI1)`")),
                })
            } else {
                Err(inner.error(
                    "unknown versioned option; expected `prefix`, `width`, `separator`, `time_attribute`, `revisions_in(..)`, `counter_on_latest` or `numeric_order`",
                ))
            }
        })?;
    }
    Ok(out)
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
        naming: Naming::default(),
    };
    let mut naming = NamingSaid::default();
    let mut deferred: Vec<syn::Error> = Vec::new();
    for attr in attrs {
        if attr.path().is_ident("dynamo") {
            let result = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("table") {
                    set_once(&mut out.table, meta.value()?.parse()?, &meta, "table")?;
                } else if meta.path.is_ident("pk") {
                    set_once(&mut out.pk, meta.value()?.parse()?, &meta, "pk")?;
                } else if meta.path.is_ident("sk") {
                    set_once(&mut out.sk, meta.value()?.parse()?, &meta, "sk")?;
                } else if meta.path.is_ident("entity_type") {
                    set_once(&mut out.entity_type, meta.value()?.parse()?, &meta, "entity_type")?;
                } else if meta.path.is_ident("key_struct") {
                    set_once(&mut out.key_struct, meta.value()?.parse()?, &meta, "key_struct")?;
                } else if meta.path.is_ident("delimiter") {
                    set_once(&mut out.delimiter, delimiter(&meta)?, &meta, "delimiter")?;
                } else if meta.path.is_ident("index") {
                    out.indexes.push(index_template(&meta)?);
                } else if meta.path.is_ident("identify") {
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
                } else if meta.path.is_ident("store_key_fields") {
                    match meta.value()?.parse::<syn::Lit>()? {
                        syn::Lit::Bool(b) => set_once(&mut out.store_key_fields, b, &meta, "store_key_fields")?,
                        other => deferred.push(syn::Error::new(
                            other.span(),
                            "`store_key_fields` is `true` (key fields are also stored as attributes of their own, the default) or `false` (read from the keys only)",
                        )),
                    }
                } else if meta.path.is_ident("versioned") {
                    if out.versioned.is_some() {
                        return Err(meta.error("`versioned` is given twice"));
                    }
                    out.versioned = Some(versioned(&meta)?);
                } else if !naming_option(&meta, &mut naming, Derive::Entity, Source::Dynamo)? {
                    return Err(meta.error(
                        "unknown entity option; expected `table`, `pk`, `sk`, `index(..)`, `delimiter`, `entity_type`, `identify`, `store_key_fields`, `key_struct`, `versioned`, `rename_all` or `default`",
                    ));
                }
                Ok(())
            });
            if let Err(e) = result {
                out.parse_failed = true;
                cx.syn_error(e);
            }
        } else if attr.path().is_ident("serde") {
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
    out.naming = naming.resolve(cx);
    for e in deferred {
        cx.syn_error(e);
    }
    out
}

fn index_template(meta: &ParseNestedMeta) -> syn::Result<IndexTemplate> {
    let mut index = None;
    let mut pk = None;
    let mut sk = None;
    let mut pk_fields = None;
    let mut sk_fields = None;
    let mut delimiter_char = None;
    meta.parse_nested_meta(|inner| {
        if inner.input.peek(Token![=]) {
            let fork = inner.input.fork();
            let _ = fork.parse::<Token![=]>();
            let is_list = fork.peek(syn::token::Bracket);
            if inner.path.is_ident("delimiter") {
                set_once(&mut delimiter_char, delimiter(&inner)?, &inner, "delimiter")?;
            } else if inner.path.is_ident("pk") {
                if is_list {
                    pk_fields = field_list(&inner)?;
                } else {
                    pk = Some(inner.value()?.parse()?);
                }
            } else if inner.path.is_ident("sk") {
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
        } else if index.is_none() {
            match inner.path.get_ident() {
                Some(ident) => index = Some(ident.clone()),
                None => {
                    return Err(
                        inner.error("expected the index name, e.g. `index(GSI1, pk = \"..\")`")
                    )
                }
            }
        } else {
            return Err(inner.error("the index name is given twice"));
        }
        Ok(())
    })?;
    let index = index.ok_or_else(|| {
        meta.error("expected the index name first, e.g. `index(GSI1, pk = \"..\")`")
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
fn skip_meta_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| skip_meta_value(&inner))?;
    }
    Ok(())
}

// ---------------------------------------------------------------- naming (both derives)

/// The derive reading the attributes: for messages, and for the options it takes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Derive {
    Entity,
    Attribute,
}

impl Derive {
    pub fn name(self) -> &'static str {
        match self {
            Derive::Entity => "#[derive(Entity)]",
            Derive::Attribute => "#[derive(Attribute)]",
        }
    }
}

/// Which attribute an option comes from. Both are honoured: `#[dynamo(..)]` is the
/// crate's own vocabulary, `#[serde(..)]` is read so serde-annotated types keep their
/// attribute names without repeating them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    Dynamo,
    Serde,
}

/// One option as an attribute says it: its value, its text as written (what two sources
/// are compared by, and what messages quote) and the tokens an error points at.
struct Said<T> {
    value: T,
    text: String,
    at: TokenStream,
}

fn said<T>(value: T, text: String, at: impl ToTokens) -> Said<T> {
    Said {
        value,
        text,
        at: at.into_token_stream(),
    }
}

/// Keeps an option given by one source; a second occurrence in `#[dynamo(..)]` is an error
/// (serde reports its own duplicates).
fn say<T>(
    slot: &mut Option<Said<T>>,
    value: Said<T>,
    source: Source,
    meta: &ParseNestedMeta,
) -> syn::Result<()> {
    if source == Source::Dynamo && slot.is_some() {
        let name = meta
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        return Err(meta.error(format!("`{name}` is given twice")));
    }
    *slot = Some(value);
    Ok(())
}

/// The option both sources give, which must be the same when both give it.
fn agree<T>(cx: &mut Ctxt, dynamo: Option<Said<T>>, serde: Option<Said<T>>) -> Option<Said<T>> {
    match (dynamo, serde) {
        (Some(d), Some(s)) => {
            if d.text != s.text {
                cx.error_spanned_by(
                    &d.at,
                    format!(
                        "`#[dynamo({})]` disagrees with `#[serde({})]`: both are honoured, so they must say the same; remove one",
                        d.text, s.text
                    ),
                );
            }
            Some(d)
        }
        (d, s) => d.or(s),
    }
}

fn rename_rule(lit: &LitStr) -> syn::Result<RenameRule> {
    RenameRule::parse(&lit.value()).ok_or_else(|| {
        syn::Error::new(
            lit.span(),
            format!(
                "unknown rename rule {:?}; expected one of \"lowercase\", \"UPPERCASE\", \"PascalCase\", \"camelCase\", \"snake_case\", \"SCREAMING_SNAKE_CASE\", \"kebab-case\", \"SCREAMING-KEBAB-CASE\"",
                lit.value()
            ),
        )
    })
}

/// `rename_all = ".."` (one rule for both directions).
fn rename_all_value(
    meta: &ParseNestedMeta,
    derive: Derive,
    option: &str,
) -> syn::Result<Said<(RenameRule, LitStr)>> {
    if !meta.input.peek(Token![=]) {
        return Err(meta.error(format!(
            "{} needs one attribute name per field: use `{option} = \"..\"`, not separate serialize/deserialize rules",
            derive.name()
        )));
    }
    let lit: LitStr = meta.value()?.parse()?;
    let rule = rename_rule(&lit)?;
    let path = &meta.path;
    Ok(said(
        (rule, lit.clone()),
        format!("{option} = {:?}", lit.value()),
        quote::quote!(#path = #lit),
    ))
}

/// `default` or `default = "path"`.
fn default_value(meta: &ParseNestedMeta) -> syn::Result<Said<Option<Path>>> {
    let path = &meta.path;
    if meta.input.peek(Token![=]) {
        let lit: LitStr = meta.value()?.parse()?;
        let function: Path = lit.parse()?;
        let text = format!(
            "default = \"{}\"",
            function.to_token_stream().to_string().replace(' ', "")
        );
        Ok(said(Some(function), text, quote::quote!(#path = #lit)))
    } else {
        Ok(said(None, "default".to_owned(), path))
    }
}

/// Container options both derives take: how members are named, and defaults.
#[derive(Default)]
pub struct Naming {
    /// `rename_all`: the rule for field names (for an enum: variant names).
    pub rename_all: Option<(RenameRule, LitStr)>,
    /// `rename_all_fields` (enums): the rule for the fields of every struct variant.
    pub rename_all_fields: Option<(RenameRule, LitStr)>,
    /// `default` (`Some(None)`: `Default::default()`) or `default = "path"`: missing
    /// fields take their value from this value of the whole struct.
    pub default: Option<Option<Path>>,
}

#[derive(Default)]
struct NamingSaid {
    rename_all: [Option<Said<(RenameRule, LitStr)>>; 2],
    rename_all_fields: [Option<Said<(RenameRule, LitStr)>>; 2],
    default: [Option<Said<Option<Path>>>; 2],
}

impl NamingSaid {
    fn resolve(self, cx: &mut Ctxt) -> Naming {
        let [d, s] = self.rename_all;
        let rename_all = agree(cx, d, s).map(|x| x.value);
        let [d, s] = self.rename_all_fields;
        let rename_all_fields = agree(cx, d, s).map(|x| x.value);
        let [d, s] = self.default;
        let default = agree(cx, d, s).map(|x| x.value);
        Naming {
            rename_all,
            rename_all_fields,
            default,
        }
    }
}

/// Reads a container naming option; `false` when `meta` is another option.
fn naming_option(
    meta: &ParseNestedMeta,
    out: &mut NamingSaid,
    derive: Derive,
    source: Source,
) -> syn::Result<bool> {
    let i = source as usize;
    if meta.path.is_ident("rename_all") {
        say(
            &mut out.rename_all[i],
            rename_all_value(meta, derive, "rename_all")?,
            source,
            meta,
        )?;
    } else if meta.path.is_ident("rename_all_fields") && derive == Derive::Attribute {
        say(
            &mut out.rename_all_fields[i],
            rename_all_value(meta, derive, "rename_all_fields")?,
            source,
            meta,
        )?;
    } else if meta.path.is_ident("default") {
        say(&mut out.default[i], default_value(meta)?, source, meta)?;
    } else {
        return Ok(false);
    }
    Ok(true)
}

/// Container options of `#[derive(Attribute)]`.
pub struct AttributeAttrs {
    pub naming: Naming,
}

pub fn attribute_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> AttributeAttrs {
    let mut naming = NamingSaid::default();
    for attr in attrs {
        let source = if attr.path().is_ident("dynamo") {
            Source::Dynamo
        } else if attr.path().is_ident("serde") {
            Source::Serde
        } else {
            continue;
        };
        let result = attr.parse_nested_meta(|meta| {
            if naming_option(&meta, &mut naming, Derive::Attribute, source)? {
                return Ok(());
            }
            if source == Source::Dynamo {
                return Err(meta.error(
                    "unknown option of #[derive(Attribute)]; expected `rename_all`, `rename_all_fields` or `default`",
                ));
            }
            let path = &meta.path;
            if ["tag", "content", "untagged", "transparent", "from", "try_from", "into", "remote"]
                .iter()
                .any(|p| path.is_ident(p))
            {
                let name = path.get_ident().map(ToString::to_string).unwrap_or_default();
                return Err(meta.error(format!(
                    "`#[serde({name})]` changes how serde represents the type, which #[derive(Attribute)] does not follow: it stores structs as maps and enums externally tagged, serde's default; \
                     remove it, or store the type through serde with `#[dynamo(serde)]` on the fields holding it"
                )));
            }
            skip_meta_value(&meta)
        });
        if let Err(e) = result {
            cx.syn_error(e);
        }
    }
    AttributeAttrs {
        naming: naming.resolve(cx),
    }
}

// ---------------------------------------------------------------- fields

/// A compression codec a field may name.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum CodecName {
    Zstd,
    Gzip,
}

impl CodecName {
    pub fn name(self) -> &'static str {
        match self {
            CodecName::Zstd => "zstd",
            CodecName::Gzip => "gzip",
        }
    }
}

/// DynamoDB's 400 KB item limit: a threshold above it would leave values uncompressed
/// that no item can hold.
const MAX_ITEM_BYTES: usize = 400 * 1024;

/// `#[dynamo(compress = "zstd")]` or
/// `#[dynamo(compress(codec = "gzip", level = 9, threshold = 1024, max_size = 1048576))]`.
pub struct Compress {
    /// The `compress` word, for errors.
    pub word: Path,
    pub codec: CodecName,
    /// The codec's literal, where a disabled codec is reported.
    pub codec_lit: LitStr,
    /// Checked against the codec's range.
    pub level: i32,
    pub threshold: Option<usize>,
    pub max_size: Option<usize>,
}

fn codec_name(lit: &LitStr) -> syn::Result<CodecName> {
    match lit.value().as_str() {
        "zstd" => Ok(CodecName::Zstd),
        "gzip" => Ok(CodecName::Gzip),
        other => Err(syn::Error::new(
            lit.span(),
            format!("unknown compression codec `{other}`; expected \"zstd\" or \"gzip\""),
        )),
    }
}

fn compress(meta: &ParseNestedMeta) -> syn::Result<Compress> {
    let word = meta.path.clone();
    if meta.input.peek(Token![=]) {
        let lit: LitStr = meta.value()?.parse()?;
        let codec = codec_name(&lit)?;
        return Ok(Compress {
            word,
            level: default_level(codec),
            codec,
            codec_lit: lit,
            threshold: None,
            max_size: None,
        });
    }
    if !meta.input.peek(syn::token::Paren) {
        return Err(meta.error(
            "expected `compress = \"zstd\"`, `compress = \"gzip\"` or `compress(codec = \"..\", level = .., threshold = .., max_size = ..)`",
        ));
    }
    let mut codec: Option<LitStr> = None;
    let mut level: Option<syn::LitInt> = None;
    let mut threshold: Option<syn::LitInt> = None;
    let mut max_size: Option<syn::LitInt> = None;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("codec") {
            set_once(&mut codec, inner.value()?.parse()?, &inner, "codec")
        } else if inner.path.is_ident("level") {
            set_once(&mut level, int_value(&inner, "level")?, &inner, "level")
        } else if inner.path.is_ident("threshold") {
            set_once(
                &mut threshold,
                int_value(&inner, "threshold")?,
                &inner,
                "threshold",
            )
        } else if inner.path.is_ident("max_size") {
            set_once(
                &mut max_size,
                int_value(&inner, "max_size")?,
                &inner,
                "max_size",
            )
        } else {
            Err(inner.error(
                "unknown compress option; expected `codec`, `level`, `threshold` or `max_size`",
            ))
        }
    })?;
    let codec_lit = codec
        .ok_or_else(|| meta.error("compress(..) needs `codec = \"zstd\"` or `codec = \"gzip\"`"))?;
    let codec = codec_name(&codec_lit)?;
    let level = match level {
        None => default_level(codec),
        Some(lit) => {
            let (low, high) = match codec {
                CodecName::Zstd => (1, 22),
                CodecName::Gzip => (1, 9),
            };
            match lit.base10_parse::<i32>() {
                Ok(n) if (low..=high).contains(&n) => n,
                _ => {
                    return Err(syn::Error::new(
                        lit.span(),
                        format!("a {} level is {low} to {high}", codec.name()),
                    ))
                }
            }
        }
    };
    let threshold = match threshold {
        None => None,
        Some(lit) => match lit.base10_parse::<usize>() {
            Ok(n) if n <= MAX_ITEM_BYTES => Some(n),
            _ => {
                return Err(syn::Error::new(
                    lit.span(),
                    format!("a compression threshold is 0 to {MAX_ITEM_BYTES} bytes (DynamoDB's 400 KB item limit): values under it are stored uncompressed"),
                ))
            }
        },
    };
    let max_size =
        match max_size {
            None => None,
            Some(lit) => match lit.base10_parse::<usize>() {
                Ok(n) if n > 0 => Some(n),
                _ => return Err(syn::Error::new(
                    lit.span(),
                    "`max_size` is the most a stored value may decompress to, in bytes: at least 1",
                )),
            },
        };
    Ok(Compress {
        word,
        codec,
        codec_lit,
        level,
        threshold,
        max_size,
    })
}

fn default_level(codec: CodecName) -> i32 {
    match codec {
        CodecName::Zstd => 3,
        CodecName::Gzip => 6,
    }
}

/// An unsuffixed integer literal after `=`.
fn int_value(meta: &ParseNestedMeta, name: &str) -> syn::Result<syn::LitInt> {
    let value = meta.value()?;
    match value.parse::<syn::Lit>()? {
        syn::Lit::Int(lit) if lit.suffix().is_empty() => Ok(lit),
        other => Err(syn::Error::new(
            other.span(),
            format!("`{name}` takes an integer, e.g. `{name} = 1024`"),
        )),
    }
}

pub struct FieldAttrs {
    pub serde_codec: bool,
    /// `#[dynamo(version)]`: optimistic-locking counter managed by the crate.
    pub version: bool,
    /// `#[dynamo(ttl)]`: stored as epoch seconds under the table's TTL attribute.
    pub ttl: bool,
    pub rename: Option<LitStr>,
    pub skip: bool,
    pub default: Option<Option<Path>>,
    pub skip_serializing_if: Option<Path>,
    /// `#[dynamo(chunked)]` / `chunked(inline = N, chunk_size = N)`.
    pub chunked: Option<ChunkedAttr>,
    /// `#[dynamo(compress = ..)]`: stored compressed in a binary attribute.
    pub compress: Option<Compress>,
    /// `#[dynamo(key_format = "..")]`: how the field is written in keys.
    pub key_format: Option<KeyFormat>,
    /// `#[dynamo(alias = "..")]`: older attribute names the field is also read from.
    pub aliases: Vec<LitStr>,
    /// `#[dynamo(key_only)]`: a key field read from the keys and not stored on its own.
    pub key_only: Option<Path>,
}

/// `#[dynamo(key_format = "..")]` on a field: the format marker of
/// `dynamo_model::key::format` it names; or `#[dynamo(key_format = path::To::Format)]`, a
/// type of the user's own implementing `KeyFormat` for the field's type.
pub struct KeyFormat {
    /// The value as written, for errors.
    pub lit: TokenStream,
    /// The marker type, e.g. `Rfc3339<3, true>`.
    pub marker: TokenStream,
}

/// The value of `key_format`: a built-in format's name, or a type.
fn key_format_value(input: syn::parse::ParseStream) -> syn::Result<KeyFormat> {
    if input.peek(LitStr) {
        return key_format(input.parse()?);
    }
    let ty: syn::Type = input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            "`key_format` takes a built-in format as a string (`key_format = \"rfc3339\"`) or a type implementing `dynamo_model::key::format::KeyFormat` for the field's type (`key_format = MyFormat`)",
        )
    })?;
    Ok(KeyFormat {
        lit: ty.to_token_stream(),
        marker: ty.to_token_stream(),
    })
}

fn key_format(lit: LitStr) -> syn::Result<KeyFormat> {
    let text = lit.value();
    let text = text.trim();
    let expected = "unknown key format; expected `unpadded`, `padded(N)`, `rfc3339`, `rfc3339(N)`, `rfc3339(N, no_z)`, `epoch_seconds`, `epoch_millis` or `verbatim` (or, without quotes, a type of your own implementing `dynamo_model::key::format::KeyFormat`)";
    let (name, args) = match text.split_once('(') {
        Some((name, rest)) => match rest.strip_suffix(')') {
            Some(args) => (name.trim(), Some(args)),
            None => return Err(syn::Error::new(lit.span(), expected)),
        },
        None => (text, None),
    };
    let fm = quote::quote!(::dynamo_model::key::format);
    let marker = match (name, args) {
        ("unpadded", None) => quote::quote!(#fm::Unpadded),
        ("verbatim", None) => quote::quote!(#fm::Verbatim),
        ("epoch_seconds", None) => quote::quote!(#fm::EpochSeconds),
        ("epoch_millis", None) => quote::quote!(#fm::EpochMillis),
        ("padded", Some(n)) => {
            let width: usize = n
                .trim()
                .parse()
                .ok()
                .filter(|w| (1..=39).contains(w))
                .ok_or_else(|| {
                    syn::Error::new(lit.span(), "`padded(N)` takes a width from 1 to 39")
                })?;
            quote::quote!(#fm::Padded<#width>)
        }
        ("rfc3339", args) => {
            let mut digits = 0u8;
            let mut z = true;
            for arg in args.into_iter().flat_map(|a| a.split(',')).map(str::trim) {
                match arg {
                    "no_z" => z = false,
                    "0" | "3" | "6" | "9" => digits = arg.parse().unwrap_or(0),
                    _ => {
                        return Err(syn::Error::new(
                            lit.span(),
                            "`rfc3339(..)` takes 0, 3, 6 or 9 fraction digits and optionally `no_z`, e.g. `rfc3339(3, no_z)`",
                        ));
                    }
                }
            }
            quote::quote!(#fm::Rfc3339<#digits, #z>)
        }
        _ => return Err(syn::Error::new(lit.span(), expected)),
    };
    Ok(KeyFormat {
        lit: lit.to_token_stream(),
        marker,
    })
}

/// `#[dynamo(chunked(inline = N, chunk_size = N))]` on a field.
pub struct ChunkedAttr {
    /// The `chunked` word, for errors.
    pub word: Path,
    pub inline: Option<syn::LitInt>,
    pub chunk_size: Option<syn::LitInt>,
}

fn chunked_attr(meta: &ParseNestedMeta) -> syn::Result<ChunkedAttr> {
    let mut out = ChunkedAttr {
        word: meta.path.clone(),
        inline: None,
        chunk_size: None,
    };
    if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| {
            if inner.path.is_ident("inline") {
                set_once(&mut out.inline, inner.value()?.parse()?, &inner, "inline")
            } else if inner.path.is_ident("chunk_size") {
                set_once(
                    &mut out.chunk_size,
                    inner.value()?.parse()?,
                    &inner,
                    "chunk_size",
                )
            } else {
                Err(inner.error("unknown chunked option; expected `inline` or `chunk_size`"))
            }
        })?;
    }
    Ok(out)
}

impl FieldAttrs {
    /// Whether any option is given (a newtype's single field takes none).
    pub fn any(&self) -> bool {
        self.serde_codec
            || self.chunked.is_some()
            || self.version
            || self.ttl
            || self.rename.is_some()
            || self.skip
            || self.default.is_some()
            || self.skip_serializing_if.is_some()
            || self.compress.is_some()
            || self.key_format.is_some()
            || !self.aliases.is_empty()
            || self.key_only.is_some()
    }
}

#[derive(Default)]
struct FieldSaid {
    rename: [Option<Said<LitStr>>; 2],
    default: [Option<Said<Option<Path>>>; 2],
    skip_serializing_if: [Option<Said<Path>>; 2],
}

/// Reads a field option both sources share; `false` when `meta` is another option.
fn common_field_option(
    meta: &ParseNestedMeta,
    out: &mut FieldSaid,
    skip: &mut bool,
    derive: Derive,
    source: Source,
) -> syn::Result<bool> {
    let i = source as usize;
    let path = &meta.path;
    if path.is_ident("rename") {
        if !meta.input.peek(Token![=]) {
            return Err(meta.error(format!(
                "{} needs one attribute name per field: use `rename = \"..\"`, not separate serialize/deserialize names",
                derive.name()
            )));
        }
        let lit: LitStr = meta.value()?.parse()?;
        let text = format!("rename = {:?}", lit.value());
        say(
            &mut out.rename[i],
            said(lit.clone(), text, quote::quote!(#path = #lit)),
            source,
            meta,
        )?;
    } else if path.is_ident("skip") {
        *skip = true;
    } else if path.is_ident("default") {
        say(&mut out.default[i], default_value(meta)?, source, meta)?;
    } else if path.is_ident("skip_serializing_if") {
        let lit: LitStr = meta.value()?.parse()?;
        let function: Path = lit.parse()?;
        let text = format!(
            "skip_serializing_if = \"{}\"",
            function.to_token_stream().to_string().replace(' ', "")
        );
        say(
            &mut out.skip_serializing_if[i],
            said(function, text, quote::quote!(#path = #lit)),
            source,
            meta,
        )?;
    } else {
        return Ok(false);
    }
    Ok(true)
}

pub fn field_attrs(cx: &mut Ctxt, attrs: &[Attribute], derive: Derive) -> FieldAttrs {
    let mut out = FieldAttrs {
        serde_codec: false,
        version: false,
        ttl: false,
        rename: None,
        skip: false,
        default: None,
        skip_serializing_if: None,
        chunked: None,
        compress: None,
        key_format: None,
        aliases: Vec::new(),
        key_only: None,
    };
    let mut said = FieldSaid::default();
    let (mut dynamo_skip, mut serde_skip) = (false, false);
    let (mut skip_ser, mut skip_de) = (false, false);
    let mut one_direction: Option<&Attribute> = None;
    let field_options = match derive {
        Derive::Entity => {
            "`rename`, `alias`, `default`, `skip`, `skip_serializing_if`, `serde`, `compress`, `version`, `ttl`, `chunked`, `key_format` or `key_only`"
        }
        Derive::Attribute => {
            "`rename`, `default`, `skip`, `skip_serializing_if`, `serde` or `compress`"
        }
    };
    for attr in attrs {
        if attr.path().is_ident("dynamo") {
            let result = attr.parse_nested_meta(|meta| {
                if common_field_option(&meta, &mut said, &mut dynamo_skip, derive, Source::Dynamo)?
                {
                } else if meta.path.is_ident("serde") {
                    out.serde_codec = true;
                } else if meta.path.is_ident("compress") {
                    let c = compress(&meta)?;
                    set_once(&mut out.compress, c, &meta, "compress")?;
                } else if meta.path.is_ident("version") && derive == Derive::Entity {
                    out.version = true;
                } else if meta.path.is_ident("ttl") && derive == Derive::Entity {
                    out.ttl = true;
                } else if meta.path.is_ident("key_format") && derive == Derive::Entity {
                    let f = key_format_value(meta.value()?)?;
                    set_once(&mut out.key_format, f, &meta, "key_format")?;
                } else if meta.path.is_ident("key_only") && derive == Derive::Entity {
                    out.key_only = Some(meta.path.clone());
                } else if meta.path.is_ident("alias") && derive == Derive::Entity {
                    let lit: LitStr = meta.value()?.parse()?;
                    if lit.value().is_empty() {
                        return Err(syn::Error::new(lit.span(), "an alias cannot be empty"));
                    }
                    out.aliases.push(lit);
                } else if meta.path.is_ident("chunked") && derive == Derive::Entity {
                    if out.chunked.is_some() {
                        return Err(meta.error("`chunked` is given twice"));
                    }
                    out.chunked = Some(chunked_attr(&meta)?);
                } else if meta.path.is_ident("chunked") {
                    return Err(meta.error(
                        "`chunked` applies to the fields of an Entity: a nested attribute is stored inside its item's attribute, which cannot name chunk items; make the large value a `#[dynamo(chunked)]` field of the entity",
                    ));
                } else {
                    return Err(
                        meta.error(format!("unknown field option; expected {field_options}"))
                    );
                }
                Ok(())
            });
            if let Err(e) = result {
                cx.syn_error(e);
            }
        } else if attr.path().is_ident("serde") {
            let result = attr.parse_nested_meta(|meta| {
                let path = &meta.path;
                if common_field_option(&meta, &mut said, &mut serde_skip, derive, Source::Serde)? {
                } else if path.is_ident("skip_serializing") {
                    skip_ser = true;
                    one_direction = Some(attr);
                } else if path.is_ident("skip_deserializing") {
                    skip_de = true;
                    one_direction = Some(attr);
                } else if path.is_ident("alias") && derive == Derive::Entity {
                    let lit: LitStr = meta.value()?.parse()?;
                    out.aliases.push(lit);
                } else if path.is_ident("alias") {
                    // Reading under an old name too, as serde does, would need writing it
                    // back under the new one: refused rather than silently read as missing.
                    return Err(meta.error(format!(
                        "`#[serde(alias)]` is not supported by {}, which reads each field under one attribute name; \
                         rewrite the stored items under the new name (or keep the old one with `rename`)",
                        derive.name()
                    )));
                } else if ["flatten", "with", "serialize_with", "deserialize_with", "getter"]
                    .iter()
                    .any(|p| path.is_ident(p))
                {
                    let name = path.get_ident().map(ToString::to_string).unwrap_or_default();
                    return Err(meta.error(format!(
                        "`#[serde({name})]` is not supported by {}, whose attribute codec does not go through serde; \
                         implement `dynamo_model::AttrValue` for the field's type (e.g. a newtype) instead",
                        derive.name()
                    )));
                } else {
                    skip_meta_value(&meta)?;
                }
                Ok(())
            });
            if let Err(e) = result {
                cx.syn_error(e);
            }
        }
    }
    let [d, s] = said.rename;
    out.rename = agree(cx, d, s).map(|x| x.value);
    let [d, s] = said.default;
    out.default = agree(cx, d, s).map(|x| x.value);
    let [d, s] = said.skip_serializing_if;
    out.skip_serializing_if = agree(cx, d, s).map(|x| x.value);
    out.skip = dynamo_skip || serde_skip || (skip_ser && skip_de);
    if let (true, Some(c)) = (out.skip, &out.compress) {
        cx.error_spanned_by(
            &c.word,
            "a skipped field is not stored, so it cannot be compressed",
        );
    }
    if (skip_ser != skip_de) && !dynamo_skip {
        cx.error_spanned_by(
            one_direction,
            format!(
                "{} reads and writes the same attributes: skip a field with `#[dynamo(skip)]`, not only one direction",
                derive.name()
            ),
        );
    }
    out
}

// ---------------------------------------------------------------- variants

pub struct VariantAttrs {
    pub rename: Option<LitStr>,
    /// `rename_all` on a struct variant: the rule for its fields.
    pub rename_all: Option<(RenameRule, LitStr)>,
}

pub fn variant_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> VariantAttrs {
    let mut rename: [Option<Said<LitStr>>; 2] = [None, None];
    let mut rename_all: [Option<Said<(RenameRule, LitStr)>>; 2] = [None, None];
    for attr in attrs {
        let source = if attr.path().is_ident("dynamo") {
            Source::Dynamo
        } else if attr.path().is_ident("serde") {
            Source::Serde
        } else {
            continue;
        };
        let result = attr.parse_nested_meta(|meta| {
            let path = &meta.path;
            let i = source as usize;
            if path.is_ident("rename") {
                if !meta.input.peek(Token![=]) {
                    return Err(meta.error(
                        "#[derive(Attribute)] needs one name per variant: use `rename = \"..\"`, not separate serialize/deserialize names",
                    ));
                }
                let lit: LitStr = meta.value()?.parse()?;
                let text = format!("rename = {:?}", lit.value());
                say(&mut rename[i], said(lit.clone(), text, quote::quote!(#path = #lit)), source, &meta)?;
            } else if path.is_ident("rename_all") {
                say(&mut rename_all[i], rename_all_value(&meta, Derive::Attribute, "rename_all")?, source, &meta)?;
            } else if source == Source::Dynamo {
                return Err(meta.error("unknown variant option; expected `rename` or `rename_all`"));
            } else if ["skip", "skip_serializing", "skip_deserializing", "other", "untagged", "with", "serialize_with", "deserialize_with", "alias"]
                .iter()
                .any(|p| path.is_ident(p))
            {
                let name = path.get_ident().map(ToString::to_string).unwrap_or_default();
                return Err(meta.error(format!(
                    "`#[serde({name})]` on a variant is not supported by #[derive(Attribute)], which reads and writes every variant under its name"
                )));
            } else {
                skip_meta_value(&meta)?;
            }
            Ok(())
        });
        if let Err(e) = result {
            cx.syn_error(e);
        }
    }
    let [d, s] = rename;
    let rename = agree(cx, d, s).map(|x| x.value);
    let [d, s] = rename_all;
    let rename_all = agree(cx, d, s).map(|x| x.value);
    VariantAttrs { rename, rename_all }
}

// ---------------------------------------------------------------- rename rules

#[derive(Clone, Copy)]
pub enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "lowercase" => RenameRule::Lower,
            "UPPERCASE" => RenameRule::Upper,
            "PascalCase" => RenameRule::Pascal,
            "camelCase" => RenameRule::Camel,
            "snake_case" => RenameRule::Snake,
            "SCREAMING_SNAKE_CASE" => RenameRule::ScreamingSnake,
            "kebab-case" => RenameRule::Kebab,
            "SCREAMING-KEBAB-CASE" => RenameRule::ScreamingKebab,
            _ => return None,
        })
    }

    /// Applies the rule to a PascalCase variant name, as serde does.
    pub fn apply_to_variant(self, variant: &str) -> String {
        match self {
            RenameRule::Pascal => variant.to_owned(),
            RenameRule::Lower => variant.to_ascii_lowercase(),
            RenameRule::Upper => variant.to_ascii_uppercase(),
            RenameRule::Camel => {
                let mut chars = variant.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => String::new(),
                }
            }
            RenameRule::Snake => {
                let mut snake = String::new();
                for (i, ch) in variant.char_indices() {
                    if i > 0 && ch.is_uppercase() {
                        snake.push('_');
                    }
                    snake.push(ch.to_ascii_lowercase());
                }
                snake
            }
            RenameRule::ScreamingSnake => RenameRule::Snake
                .apply_to_variant(variant)
                .to_ascii_uppercase(),
            RenameRule::Kebab => RenameRule::Snake
                .apply_to_variant(variant)
                .replace('_', "-"),
            RenameRule::ScreamingKebab => RenameRule::ScreamingSnake
                .apply_to_variant(variant)
                .replace('_', "-"),
        }
    }

    /// Applies the rule to a snake_case field name, as serde does.
    pub fn apply(self, field: &str) -> String {
        match self {
            RenameRule::Lower | RenameRule::Snake => field.to_string(),
            RenameRule::Upper | RenameRule::ScreamingSnake => field.to_ascii_uppercase(),
            RenameRule::Pascal => {
                let mut out = String::new();
                let mut upper = true;
                for c in field.chars() {
                    if c == '_' {
                        upper = true;
                    } else if upper {
                        out.push(c.to_ascii_uppercase());
                        upper = false;
                    } else {
                        out.push(c);
                    }
                }
                out
            }
            RenameRule::Camel => {
                let pascal = RenameRule::Pascal.apply(field);
                let mut chars = pascal.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => pascal,
                }
            }
            RenameRule::Kebab => field.replace('_', "-"),
            RenameRule::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RenameRule;

    #[test]
    fn rename_rules_match_serde() {
        assert_eq!(RenameRule::Camel.apply("display_name"), "displayName");
        assert_eq!(RenameRule::Pascal.apply("display_name"), "DisplayName");
        assert_eq!(
            RenameRule::ScreamingSnake.apply("display_name"),
            "DISPLAY_NAME"
        );
        assert_eq!(RenameRule::Kebab.apply("display_name"), "display-name");
        assert_eq!(RenameRule::ScreamingKebab.apply("a_b"), "A-B");
        assert_eq!(RenameRule::Lower.apply("a_b"), "a_b");
    }

    #[test]
    fn variant_rename_rules_match_serde() {
        assert_eq!(
            RenameRule::Snake.apply_to_variant("OutOfStock"),
            "out_of_stock"
        );
        assert_eq!(
            RenameRule::ScreamingSnake.apply_to_variant("OutOfStock"),
            "OUT_OF_STOCK"
        );
        assert_eq!(
            RenameRule::Kebab.apply_to_variant("OutOfStock"),
            "out-of-stock"
        );
        assert_eq!(
            RenameRule::ScreamingKebab.apply_to_variant("OutOfStock"),
            "OUT-OF-STOCK"
        );
        assert_eq!(
            RenameRule::Camel.apply_to_variant("OutOfStock"),
            "outOfStock"
        );
        assert_eq!(
            RenameRule::Pascal.apply_to_variant("OutOfStock"),
            "OutOfStock"
        );
        assert_eq!(
            RenameRule::Lower.apply_to_variant("OutOfStock"),
            "outofstock"
        );
        assert_eq!(
            RenameRule::Upper.apply_to_variant("OutOfStock"),
            "OUTOFSTOCK"
        );
    }
}
