//! Field and variant options: rename, aliases, codecs, compression, chunking, key formats.

use super::*;
use crate::ctxt::Ctxt;
use crate::symbol::*;
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, LitStr, Path, Token};

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
pub(crate) const MAX_ITEM_BYTES: usize = 400 * 1024;

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

pub(crate) fn codec_name(lit: &LitStr) -> syn::Result<CodecName> {
    match lit.value().as_str() {
        "zstd" => Ok(CodecName::Zstd),
        "gzip" => Ok(CodecName::Gzip),
        other => Err(syn::Error::new(
            lit.span(),
            format!("unknown compression codec `{other}`; expected \"zstd\" or \"gzip\""),
        )),
    }
}

pub(crate) fn compress(meta: &ParseNestedMeta) -> syn::Result<Compress> {
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
        if inner.path == CODEC {
            set_once(&mut codec, inner.value()?.parse()?, &inner, "codec")
        } else if inner.path == LEVEL {
            set_once(&mut level, int_value(&inner, "level")?, &inner, "level")
        } else if inner.path == THRESHOLD {
            set_once(
                &mut threshold,
                int_value(&inner, "threshold")?,
                &inner,
                "threshold",
            )
        } else if inner.path == MAX_SIZE {
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

pub(crate) fn default_level(codec: CodecName) -> i32 {
    match codec {
        CodecName::Zstd => 3,
        CodecName::Gzip => 6,
    }
}

/// An unsuffixed integer literal after `=`.
pub(crate) fn int_value(meta: &ParseNestedMeta, name: &str) -> syn::Result<syn::LitInt> {
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
    /// `#[dynamo(key_format = "..")]`: how the field is written, in keys and as an attribute.
    pub key_format: Option<KeyFormat>,
    /// `#[dynamo(alias = "..")]`: older attribute names the field is also read from.
    pub aliases: Vec<LitStr>,
    /// `#[dynamo(key_only)]`: a key field read from the keys and not stored on its own.
    pub key_only: Option<Path>,
    /// `#[dynamo(validate(..))]`: the field's rules, checked before writes.
    pub rules: Vec<FieldRule>,
    /// `#[dynamo(created)]` / `#[dynamo(updated)]`: a time the crate sets.
    pub created: Option<Path>,
    pub updated: Option<Path>,
    /// `#[dynamo(generate = "ulid")]`: an id made on create (`"ulid"`, `"uuid_v7"`,
    /// `"uuid_v4"`).
    pub generate: Option<LitStr>,
    /// `#[dynamo(encrypt)]`: stored as a ciphertext (`dynamo_model::encrypt`).
    pub encrypt: Option<Path>,
    /// `#[dynamo(unique)]` / `#[dynamo(unique = "name")]`: the word (for errors) and the
    /// constraint's name, when given (fields sharing one form a group).
    pub unique: Option<(Path, Option<LitStr>)>,
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
pub(crate) fn key_format_value(input: syn::parse::ParseStream) -> syn::Result<KeyFormat> {
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

pub(crate) fn key_format(lit: LitStr) -> syn::Result<KeyFormat> {
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

pub(crate) fn chunked_attr(meta: &ParseNestedMeta) -> syn::Result<ChunkedAttr> {
    let mut out = ChunkedAttr {
        word: meta.path.clone(),
        inline: None,
        chunk_size: None,
    };
    if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| {
            if inner.path == INLINE {
                set_once(&mut out.inline, inner.value()?.parse()?, &inner, "inline")
            } else if inner.path == CHUNK_SIZE {
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
            || !self.rules.is_empty()
            || self.created.is_some()
            || self.updated.is_some()
            || self.generate.is_some()
            || self.encrypt.is_some()
    }
}

#[derive(Default)]
pub(crate) struct FieldSaid {
    pub(crate) rename: [Option<Said<LitStr>>; 2],
    pub(crate) default: [Option<Said<Option<Path>>>; 2],
    pub(crate) skip_serializing_if: [Option<Said<Path>>; 2],
}

/// Reads a field option both sources share; `false` when `meta` is another option.
pub(crate) fn common_field_option(
    meta: &ParseNestedMeta,
    out: &mut FieldSaid,
    skip: &mut bool,
    derive: Derive,
    source: Source,
) -> syn::Result<bool> {
    let i = source as usize;
    let path = &meta.path;
    if path == RENAME {
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
    } else if path == SKIP {
        *skip = true;
    } else if path == DEFAULT {
        say(&mut out.default[i], default_value(meta)?, source, meta)?;
    } else if path == SKIP_SERIALIZING_IF {
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
        rules: Vec::new(),
        created: None,
        updated: None,
        generate: None,
        encrypt: None,
        unique: None,
    };
    let mut said = FieldSaid::default();
    let mut skips = Skips::default();
    for attr in attrs {
        let result = if attr.path() == DYNAMO {
            attr.parse_nested_meta(|meta| {
                dynamo_field_option(&meta, &mut out, &mut said, &mut skips.dynamo, derive)
            })
        } else if attr.path() == SERDE {
            attr.parse_nested_meta(|meta| {
                serde_field_option(&meta, attr, &mut out, &mut said, &mut skips, derive)
            })
        } else {
            continue;
        };
        if let Err(e) = result {
            cx.syn_error(e);
        }
    }
    settle_field_attrs(cx, &mut out, said, &skips, derive);
    out
}

/// Where a field is said to be skipped: `#[dynamo(skip)]`, `#[serde(skip)]`, or serde's
/// skips of one direction (which skip the field only together).
#[derive(Default)]
struct Skips<'a> {
    dynamo: bool,
    serde: bool,
    serializing: bool,
    deserializing: bool,
    /// The `#[serde(..)]` attribute that skips one direction, for errors.
    one_direction: Option<&'a Attribute>,
}

/// One option of `#[dynamo(..)]` on a field.
fn dynamo_field_option(
    meta: &ParseNestedMeta,
    out: &mut FieldAttrs,
    said: &mut FieldSaid,
    skip: &mut bool,
    derive: Derive,
) -> syn::Result<()> {
    if common_field_option(meta, said, skip, derive, Source::Dynamo)? {
    } else if meta.path == SERDE {
        out.serde_codec = true;
    } else if meta.path == COMPRESS {
        let c = compress(meta)?;
        set_once(&mut out.compress, c, meta, "compress")?;
    } else if meta.path == VERSION && derive == Derive::Entity {
        out.version = true;
    } else if meta.path == TTL && derive == Derive::Entity {
        out.ttl = true;
    } else if meta.path == KEY_FORMAT && derive == Derive::Entity {
        let f = key_format_value(meta.value()?)?;
        set_once(&mut out.key_format, f, meta, "key_format")?;
    } else if meta.path == KEY_ONLY && derive == Derive::Entity {
        out.key_only = Some(meta.path.clone());
    } else if meta.path == ALIAS && derive == Derive::Entity {
        let lit: LitStr = meta.value()?.parse()?;
        if lit.value().is_empty() {
            return Err(syn::Error::new(lit.span(), "an alias cannot be empty"));
        }
        out.aliases.push(lit);
    } else if meta.path == CREATED && derive == Derive::Entity {
        set_once(&mut out.created, meta.path.clone(), meta, "created")?;
    } else if meta.path == UPDATED && derive == Derive::Entity {
        set_once(&mut out.updated, meta.path.clone(), meta, "updated")?;
    } else if meta.path == GENERATE && derive == Derive::Entity {
        let lit: LitStr = meta.value()?.parse()?;
        if !["ulid", "uuid_v7", "uuid_v4"].contains(&lit.value().as_str()) {
            return Err(syn::Error::new(
                lit.span(),
                "`generate` makes `\"ulid\"`, `\"uuid_v7\"` (both time-ordered) or `\"uuid_v4\"` (random)",
            ));
        }
        set_once(&mut out.generate, lit, meta, "generate")?;
    } else if meta.path == ENCRYPT && derive == Derive::Entity {
        set_once(&mut out.encrypt, meta.path.clone(), meta, "encrypt")?;
    } else if meta.path == ENCRYPT {
        return Err(meta.error(
            "`encrypt` applies to the fields of an Entity: encrypt the whole field that holds this value",
        ));
    } else if meta.path == UNIQUE && derive == Derive::Entity {
        let name = if meta.input.peek(Token![=]) {
            let lit: LitStr = meta.value()?.parse()?;
            if lit.value().is_empty() {
                return Err(syn::Error::new(
                    lit.span(),
                    "a unique constraint's name cannot be empty",
                ));
            }
            Some(lit)
        } else {
            None
        };
        set_once(&mut out.unique, (meta.path.clone(), name), meta, "unique")?;
    } else if meta.path == VALIDATE && derive == Derive::Entity {
        field_rules(meta, &mut out.rules)?;
    } else if meta.path == CHUNKED && derive == Derive::Entity {
        if out.chunked.is_some() {
            return Err(meta.error("`chunked` is given twice"));
        }
        out.chunked = Some(chunked_attr(meta)?);
    } else if meta.path == CHUNKED {
        return Err(meta.error(
            "`chunked` applies to the fields of an Entity: a nested attribute is stored inside its item's attribute, which cannot name chunk items; make the large value a `#[dynamo(chunked)]` field of the entity",
        ));
    } else {
        return Err(meta.error(format!(
            "unknown field option; expected {}",
            field_options(derive)
        )));
    }
    Ok(())
}

/// The options `#[dynamo(..)]` takes on a field of `derive`, for errors.
fn field_options(derive: Derive) -> &'static str {
    match derive {
        Derive::Entity => {
            "`rename`, `alias`, `default`, `skip`, `skip_serializing_if`, `serde`, `compress`, `version`, `ttl`, `chunked`, `key_format`, `key_only`, `validate`, `created`, `updated`, `generate`, `unique` or `encrypt`"
        }
        Derive::Attribute => {
            "`rename`, `default`, `skip`, `skip_serializing_if`, `serde` or `compress`"
        }
    }
}

/// One option of `#[serde(..)]` (the attribute `attr`) on a field: those the crate reads
/// alike, those it refuses, and others (serde's own business) passed over.
fn serde_field_option<'a>(
    meta: &ParseNestedMeta,
    attr: &'a Attribute,
    out: &mut FieldAttrs,
    said: &mut FieldSaid,
    skips: &mut Skips<'a>,
    derive: Derive,
) -> syn::Result<()> {
    let path = &meta.path;
    if common_field_option(meta, said, &mut skips.serde, derive, Source::Serde)? {
    } else if path == SKIP_SERIALIZING {
        skips.serializing = true;
        skips.one_direction = Some(attr);
    } else if path == SKIP_DESERIALIZING {
        skips.deserializing = true;
        skips.one_direction = Some(attr);
    } else if path == ALIAS && derive == Derive::Entity {
        let lit: LitStr = meta.value()?.parse()?;
        out.aliases.push(lit);
    } else if path == ALIAS {
        // Reading under an old name too, as serde does, would need writing it
        // back under the new one: refused rather than silently read as missing.
        return Err(meta.error(format!(
            "`#[serde(alias)]` is not supported by {}, which reads each field under one attribute name; \
             rewrite the stored items under the new name (or keep the old one with `rename`)",
            derive.name()
        )));
    } else if [FLATTEN, WITH, SERIALIZE_WITH, DESERIALIZE_WITH, GETTER]
        .iter()
        .any(|p| path == *p)
    {
        let name = path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        return Err(meta.error(format!(
            "`#[serde({name})]` is not supported by {}, whose attribute codec does not go through serde; \
             implement `dynamo_model::AttrValue` for the field's type (e.g. a newtype) instead",
            derive.name()
        )));
    } else {
        skip_meta_value(meta)?;
    }
    Ok(())
}

/// What both attributes said, agreed into one value each; the skip, which compression
/// and one-direction skips are checked against.
fn settle_field_attrs(
    cx: &mut Ctxt,
    out: &mut FieldAttrs,
    said: FieldSaid,
    skips: &Skips,
    derive: Derive,
) {
    let [d, s] = said.rename;
    out.rename = agree(cx, d, s).map(|x| x.value);
    let [d, s] = said.default;
    out.default = agree(cx, d, s).map(|x| x.value);
    let [d, s] = said.skip_serializing_if;
    out.skip_serializing_if = agree(cx, d, s).map(|x| x.value);
    out.skip = skips.dynamo || skips.serde || (skips.serializing && skips.deserializing);
    if let (true, Some(c)) = (out.skip, &out.compress) {
        cx.error_spanned_by(
            &c.word,
            "a skipped field is not stored, so it cannot be compressed",
        );
    }
    if (skips.serializing != skips.deserializing) && !skips.dynamo {
        cx.error_spanned_by(
            skips.one_direction,
            format!(
                "{} reads and writes the same attributes: skip a field with `#[dynamo(skip)]`, not only one direction",
                derive.name()
            ),
        );
    }
}

pub struct VariantAttrs {
    pub rename: Option<LitStr>,
    /// `rename_all` on a struct variant: the rule for its fields.
    pub rename_all: Option<(RenameRule, LitStr)>,
}

pub fn variant_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> VariantAttrs {
    let mut rename: [Option<Said<LitStr>>; 2] = [None, None];
    let mut rename_all: [Option<Said<(RenameRule, LitStr)>>; 2] = [None, None];
    for attr in attrs {
        let source = if attr.path() == DYNAMO {
            Source::Dynamo
        } else if attr.path() == SERDE {
            Source::Serde
        } else {
            continue;
        };
        let result = attr.parse_nested_meta(|meta| {
            let path = &meta.path;
            let i = source as usize;
            if path == RENAME {
                if !meta.input.peek(Token![=]) {
                    return Err(meta.error(
                        "#[derive(Attribute)] needs one name per variant: use `rename = \"..\"`, not separate serialize/deserialize names",
                    ));
                }
                let lit: LitStr = meta.value()?.parse()?;
                let text = format!("rename = {:?}", lit.value());
                say(&mut rename[i], said(lit.clone(), text, quote::quote!(#path = #lit)), source, &meta)?;
            } else if path == RENAME_ALL {
                say(&mut rename_all[i], rename_all_value(&meta, Derive::Attribute, "rename_all")?, source, &meta)?;
            } else if source == Source::Dynamo {
                return Err(meta.error("unknown variant option; expected `rename` or `rename_all`"));
            } else if [SKIP, SKIP_SERIALIZING, SKIP_DESERIALIZING, OTHER, UNTAGGED, WITH, SERIALIZE_WITH, DESERIALIZE_WITH, ALIAS]
                .iter()
                .any(|p| path == *p)
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
