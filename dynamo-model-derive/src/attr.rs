//! `#[dynamo(...)]` and the relevant `#[serde(...)]` attributes → plain structs.

use crate::ctxt::Ctxt;
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
        } else {
            return Err(inner.error("expected `name`, `pk`, `sk` or `projection`"));
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
            } else {
                return Err(meta.error(
                    "unknown table option; expected `pk`, `sk`, `gsi(..)`, `lsi(..)`, `ttl`, `entity_type` or `write_token`",
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
    pub rename_all: Option<(RenameRule, LitStr)>,
    pub serde_default: bool,
}

pub fn entity_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> EntityAttrs {
    let mut out = EntityAttrs {
        parse_failed: false,
        table: None,
        pk: None,
        sk: None,
        indexes: Vec::new(),
        entity_type: None,
        rename_all: None,
        serde_default: false,
    };
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
                } else if meta.path.is_ident("index") {
                    out.indexes.push(index_template(&meta)?);
                } else {
                    return Err(meta.error(
                        "unknown entity option; expected `table`, `pk`, `sk`, `index(..)` or `entity_type`",
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
                if meta.path.is_ident("rename_all") {
                    if meta.input.peek(Token![=]) {
                        let lit: LitStr = meta.value()?.parse()?;
                        match RenameRule::parse(&lit.value()) {
                            Some(rule) => out.rename_all = Some((rule, lit)),
                            None => return Err(syn::Error::new(lit.span(), "unknown rename_all rule")),
                        }
                    } else {
                        return Err(meta.error(
                            "#[derive(Entity)] needs one attribute name per field: use `rename_all = \"..\"`, not separate serialize/deserialize rules",
                        ));
                    }
                } else if meta.path.is_ident("default") {
                    if meta.input.peek(Token![=]) {
                        return Err(meta.error(
                            "#[derive(Entity)] supports container `#[serde(default)]` but not `default = \"path\"`",
                        ));
                    }
                    out.serde_default = true;
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
    out
}

fn index_template(meta: &ParseNestedMeta) -> syn::Result<IndexTemplate> {
    let mut index = None;
    let mut pk = None;
    let mut sk = None;
    let mut pk_fields = None;
    let mut sk_fields = None;
    meta.parse_nested_meta(|inner| {
        if inner.input.peek(Token![=]) {
            let fork = inner.input.fork();
            let _ = fork.parse::<Token![=]>();
            let is_list = fork.peek(syn::token::Bracket);
            if inner.path.is_ident("pk") {
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
                return Err(inner.error("expected `pk = \"..\"` or `sk = \"..\"`"));
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
    Ok(IndexTemplate {
        index,
        pk,
        sk,
        pk_fields,
        sk_fields,
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

// ---------------------------------------------------------------- fields

pub struct FieldAttrs {
    pub serde_codec: bool,
    /// `#[dynamo(version)]`: optimistic-locking counter managed by the crate.
    pub version: bool,
    /// `#[dynamo(ttl)]`: stored as epoch seconds under the table's TTL attribute.
    pub ttl: bool,
    pub rename: Option<String>,
    pub skip: bool,
    pub default: Option<Option<Path>>,
    pub skip_serializing_if: Option<Path>,
}

pub fn field_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> FieldAttrs {
    let mut out = FieldAttrs {
        serde_codec: false,
        version: false,
        ttl: false,
        rename: None,
        skip: false,
        default: None,
        skip_serializing_if: None,
    };
    let (mut skip_ser, mut skip_de) = (false, false);
    let mut one_direction: Option<&Attribute> = None;
    for attr in attrs {
        if attr.path().is_ident("dynamo") {
            let result = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("serde") {
                    out.serde_codec = true;
                    Ok(())
                } else if meta.path.is_ident("version") {
                    out.version = true;
                    Ok(())
                } else if meta.path.is_ident("ttl") {
                    out.ttl = true;
                    Ok(())
                } else {
                    Err(meta.error("unknown field option; expected `serde`, `version` or `ttl`"))
                }
            });
            if let Err(e) = result {
                cx.syn_error(e);
            }
        } else if attr.path().is_ident("serde") {
            let result = attr.parse_nested_meta(|meta| {
                let path = &meta.path;
                if path.is_ident("rename") {
                    if meta.input.peek(Token![=]) {
                        out.rename = Some(meta.value()?.parse::<LitStr>()?.value());
                    } else {
                        return Err(meta.error(
                            "#[derive(Entity)] needs one attribute name per field: use `rename = \"..\"`, not separate serialize/deserialize names",
                        ));
                    }
                } else if path.is_ident("skip") {
                    out.skip = true;
                } else if path.is_ident("skip_serializing") {
                    skip_ser = true;
                    one_direction = Some(attr);
                } else if path.is_ident("skip_deserializing") {
                    skip_de = true;
                    one_direction = Some(attr);
                } else if path.is_ident("default") {
                    out.default = Some(if meta.input.peek(Token![=]) {
                        let lit: LitStr = meta.value()?.parse()?;
                        Some(lit.parse()?)
                    } else {
                        None
                    });
                } else if path.is_ident("skip_serializing_if") {
                    let lit: LitStr = meta.value()?.parse()?;
                    out.skip_serializing_if = Some(lit.parse()?);
                } else if ["flatten", "with", "serialize_with", "deserialize_with", "getter"]
                    .iter()
                    .any(|p| path.is_ident(p))
                {
                    let name = path.get_ident().map(ToString::to_string).unwrap_or_default();
                    return Err(meta.error(format!(
                        "`#[serde({name})]` is not supported by #[derive(Entity)], whose attribute codec does not go through serde; \
                         implement `dynamo_model::AttrValue` for the field's type (e.g. a newtype) instead"
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
    if skip_ser && skip_de {
        out.skip = true;
    } else if skip_ser || skip_de {
        cx.error_spanned_by(
            one_direction,
            "#[derive(Entity)] reads and writes the same attributes: skip a field with `#[serde(skip)]`, not only one direction",
        );
    }
    out
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
}
