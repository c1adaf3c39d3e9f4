//! Container naming options both `Entity` and `Attribute` take (`rename_all`, `default`),
//! read from `#[dynamo(..)]` and `#[serde(..)]`, which must agree.

use super::*;
use crate::ctxt::Ctxt;
use crate::symbol::*;
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, LitStr, Path, Token};

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
pub(crate) enum Source {
    Dynamo,
    Serde,
}

/// One option as an attribute says it: its value, its text as written (what two sources
/// are compared by, and what messages quote) and the tokens an error points at.
pub(crate) struct Said<T> {
    pub(crate) value: T,
    pub(crate) text: String,
    pub(crate) at: TokenStream,
}

pub(crate) fn said<T>(value: T, text: String, at: impl ToTokens) -> Said<T> {
    Said {
        value,
        text,
        at: at.into_token_stream(),
    }
}

/// Keeps an option given by one source; a second occurrence in `#[dynamo(..)]` is an error
/// (serde reports its own duplicates).
pub(crate) fn say<T>(
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
pub(crate) fn agree<T>(
    cx: &mut Ctxt,
    dynamo: Option<Said<T>>,
    serde: Option<Said<T>>,
) -> Option<Said<T>> {
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

pub(crate) fn rename_rule(lit: &LitStr) -> syn::Result<RenameRule> {
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
pub(crate) fn rename_all_value(
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
pub(crate) fn default_value(meta: &ParseNestedMeta) -> syn::Result<Said<Option<Path>>> {
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
pub(crate) struct NamingSaid {
    pub(crate) rename_all: [Option<Said<(RenameRule, LitStr)>>; 2],
    pub(crate) rename_all_fields: [Option<Said<(RenameRule, LitStr)>>; 2],
    pub(crate) default: [Option<Said<Option<Path>>>; 2],
}

impl NamingSaid {
    pub(crate) fn resolve(self, cx: &mut Ctxt) -> Naming {
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
pub(crate) fn naming_option(
    meta: &ParseNestedMeta,
    out: &mut NamingSaid,
    derive: Derive,
    source: Source,
) -> syn::Result<bool> {
    let i = source as usize;
    if meta.path == RENAME_ALL {
        say(
            &mut out.rename_all[i],
            rename_all_value(meta, derive, "rename_all")?,
            source,
            meta,
        )?;
    } else if meta.path == RENAME_ALL_FIELDS && derive == Derive::Attribute {
        say(
            &mut out.rename_all_fields[i],
            rename_all_value(meta, derive, "rename_all_fields")?,
            source,
            meta,
        )?;
    } else if meta.path == DEFAULT {
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
        let source = if attr.path() == DYNAMO {
            Source::Dynamo
        } else if attr.path() == SERDE {
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
            if [TAG, CONTENT, UNTAGGED, TRANSPARENT, FROM, TRY_FROM, INTO, REMOTE]
                .iter()
                .any(|p| path == *p)
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
