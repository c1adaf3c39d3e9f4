//! `#[dynamo(validate(..))]` on a field: its rules, each checked here as far as the
//! macro can (a pattern compiles, a length's bounds are ordered); whether the field's type
//! can meet a rule is the compiler's check of the generated code.

use crate::symbol::*;
use proc_macro2::Span;
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::parse::Parse;
use syn::spanned::Spanned;
use syn::{Expr, LitStr, Path, Token};

/// One rule of a field.
pub enum FieldRule {
    /// `length(min = a, max = b)`.
    Length {
        min: Option<usize>,
        max: Option<usize>,
        span: Span,
    },
    /// `range(min = a, max = b)`: the bounds as written, with their text.
    Range {
        min: Option<Box<(Expr, String)>>,
        max: Option<Box<(Expr, String)>>,
        span: Span,
    },
    /// `pattern = ".."`, which compiles.
    Pattern(LitStr),
    /// `one_of(a, b, ..)`: the values, with their text.
    OneOf(Vec<(Expr, String)>, Span),
    /// `with = path`.
    With(Path),
}

impl FieldRule {
    /// Where the rule is written, for errors about it.
    pub fn span(&self) -> Span {
        match self {
            FieldRule::Length { span, .. } | FieldRule::Range { span, .. } => *span,
            FieldRule::OneOf(_, span) => *span,
            FieldRule::Pattern(lit) => lit.span(),
            FieldRule::With(path) => path.span(),
        }
    }
}

/// An expression as written, for messages: `- 5` → `-5`.
fn text(expr: &Expr) -> String {
    let tokens = expr.to_token_stream().to_string();
    tokens.replace("- ", "-").replace(" :: ", "::")
}

/// Appends the rules of `validate(..)` to `out`.
pub fn field_rules(meta: &ParseNestedMeta, out: &mut Vec<FieldRule>) -> syn::Result<()> {
    if !meta.input.peek(syn::token::Paren) {
        return Err(meta.error(
            "expected `validate(..)` with rules: `length(min = .., max = ..)`, `range(min = .., max = ..)`, `pattern = \"..\"`, `one_of(..)` or `with = path`",
        ));
    }
    meta.parse_nested_meta(|rule| {
        let span = rule.path.span();
        if rule.path == LENGTH {
            let (min, max) = bounds(&rule, "length")?;
            let parse = |b: Option<Expr>| -> syn::Result<Option<usize>> {
                b.map(|e| match &e {
                    Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(i),
                        ..
                    }) => i.base10_parse::<usize>(),
                    _ => Err(syn::Error::new(
                        e.span(),
                        "a length bound is a non-negative integer",
                    )),
                })
                .transpose()
            };
            let (min, max) = (parse(min)?, parse(max)?);
            if let (Some(a), Some(b)) = (min, max) {
                if a > b {
                    return Err(rule.error(format!(
                        "`length(min = {a}, max = {b})` holds for no value: `min` is above `max`"
                    )));
                }
            }
            out.push(FieldRule::Length { min, max, span });
        } else if rule.path == RANGE {
            let (min, max) = bounds(&rule, "range")?;
            out.push(FieldRule::Range {
                min: min.map(|e| {
                    let t = text(&e);
                    Box::new((e, t))
                }),
                max: max.map(|e| {
                    let t = text(&e);
                    Box::new((e, t))
                }),
                span,
            });
        } else if rule.path == PATTERN {
            let lit: LitStr = rule.value()?.parse()?;
            if let Err(e) = regex_lite::Regex::new(&lit.value()) {
                return Err(syn::Error::new(
                    lit.span(),
                    format!("this pattern does not compile: {e}"),
                ));
            }
            out.push(FieldRule::Pattern(lit));
        } else if rule.path == ONE_OF {
            let content;
            syn::parenthesized!(content in rule.input);
            let values = content.parse_terminated(Expr::parse, Token![,])?;
            if values.is_empty() {
                return Err(rule.error("`one_of(..)` needs at least one value"));
            }
            let values = values
                .into_iter()
                .map(|e| {
                    let t = text(&e);
                    (e, t)
                })
                .collect();
            out.push(FieldRule::OneOf(values, span));
        } else if rule.path == WITH {
            let path: Path = rule.value()?.parse()?;
            out.push(FieldRule::With(path));
        } else {
            return Err(rule.error(
                "unknown rule; expected `length(min = .., max = ..)`, `range(min = .., max = ..)`, `pattern = \"..\"`, `one_of(..)` or `with = path`",
            ));
        }
        Ok(())
    })
}

/// `(min = a, max = b)`: either may be left out, not both.
fn bounds(rule: &ParseNestedMeta, name: &str) -> syn::Result<(Option<Expr>, Option<Expr>)> {
    let (mut min, mut max): (Option<Expr>, Option<Expr>) = (None, None);
    if !rule.input.peek(syn::token::Paren) {
        return Err(rule.error(format!("expected `{name}(min = .., max = ..)`")));
    }
    let fork = rule.input.fork();
    let inside;
    syn::parenthesized!(inside in fork);
    if inside.is_empty() {
        return Err(rule.error(format!("`{name}(..)` needs `min`, `max` or both")));
    }
    rule.parse_nested_meta(|bound| {
        let slot = if bound.path == MIN {
            &mut min
        } else if bound.path == MAX {
            &mut max
        } else {
            return Err(bound.error(format!("`{name}` takes `min` and `max`")));
        };
        if slot.is_some() {
            return Err(bound.error("given twice"));
        }
        *slot = Some(bound.value()?.parse()?);
        Ok(())
    })?;
    if min.is_none() && max.is_none() {
        return Err(rule.error(format!("`{name}(..)` needs `min`, `max` or both")));
    }
    Ok((min, max))
}
