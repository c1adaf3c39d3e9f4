//! The entity's rules (`#[dynamo(validate(..))]` on fields, `validate = path` on the
//! entity): one runtime call per rule, spanned on the rule, so a rule the field's type
//! cannot meet is reported there. Every check lives in `dynamo_model::validate`.

use super::{dm, present_type};
use crate::attr::FieldRule;
use crate::check::{EntityModel, Field};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;

/// `__RULED`, `__validate_attribute` and `__validate` (the trait's defaults when the
/// entity declares no rule).
pub(super) fn validate_items(m: &EntityModel) -> Option<TokenStream> {
    let dm = dm();
    let ruled: Vec<&Field> = m
        .fields
        .iter()
        .filter(|f| !f.attrs.rules.is_empty())
        .collect();
    if ruled.is_empty() && m.validate.is_none() {
        return None;
    }
    let names = ruled.iter().map(|f| &f.name);
    let arms = ruled.iter().map(|f| field_arm(f));
    let each_field = ruled.iter().map(|f| {
        let (fi, name) = (&f.ident, &f.name);
        quote!(Self::__validate_attribute(#name, &self.#fi)?;)
    });
    let whole = match &m.validate {
        Some(path) => {
            let text = path_text(path);
            quote_spanned!(path.span()=> #dm::validate::function::<Self, _>(None, #text, #path(self)))
        }
        None => quote!(Ok(())),
    };
    Some(quote! {
        const __RULED: &'static [&'static str] = &[#(#names),*];

        fn __validate_attribute(
            attribute: &str,
            value: &dyn ::core::any::Any,
        ) -> ::core::result::Result<(), #dm::Error> {
            match attribute {
                #(#arms)*
                _ => Ok(()),
            }
        }

        fn __validate(&self) -> ::core::result::Result<(), #dm::Error> {
            #(#each_field)*
            #whole
        }
    })
}

/// A path as written, for messages: `checks :: email` → `checks::email`.
fn path_text(path: &syn::Path) -> String {
    path.to_token_stream().to_string().replace(' ', "")
}

/// `"attribute" => { rules }`: the value taken as the field's type; an `Option` field's
/// rules check the value when there is one.
fn field_arm(f: &Field) -> TokenStream {
    let dm = dm();
    let (ty, name) = (&f.ty, &f.name);
    let rules = f.attrs.rules.iter().map(|r| rule_call(name, r));
    let checks = quote!(#(#rules)*);
    let present = present_type(ty);
    let body = if std::ptr::eq(present, ty) {
        quote!(let value = #dm::validate::value_of::<Self, #ty>(#name, value)?; #checks)
    } else {
        quote! {
            if let Some(value) = #dm::validate::value_of::<Self, #ty>(#name, value)? {
                #checks
            }
        }
    };
    quote!(#name => { #body Ok(()) })
}

/// One rule's check of `value` (the field's present value).
fn rule_call(name: &str, rule: &FieldRule) -> TokenStream {
    let dm = dm();
    let v = quote!(#dm::validate);
    let span = rule.span();
    let option = |b: &Option<Box<(syn::Expr, String)>>| match b.as_deref() {
        Some((e, _)) => quote!(Some(#e)),
        None => quote!(None),
    };
    let text = |b: &Option<Box<(syn::Expr, String)>>| match b.as_deref() {
        Some((_, t)) => quote!(Some(#t)),
        None => quote!(None),
    };
    match rule {
        FieldRule::Length { min, max, .. } => {
            let (min, max) = (opt_usize(*min), opt_usize(*max));
            quote_spanned!(span=> #v::length::<Self, _>(#name, value, #min, #max)?;)
        }
        FieldRule::Range { min, max, .. } => {
            let (lo, hi, lo_t, hi_t) = (option(min), option(max), text(min), text(max));
            quote_spanned!(span=> #v::range::<Self, _>(#name, value, (#lo, #hi), (#lo_t, #hi_t))?;)
        }
        FieldRule::Pattern(lit) => quote_spanned! {span=>
            {
                static PATTERN: #v::Pattern = #v::Pattern::new(#lit);
                #v::pattern::<Self, _>(#name, value, &PATTERN)?;
            }
        },
        FieldRule::OneOf(values, _) => {
            let exprs = values.iter().map(|(e, _)| e);
            let texts = values.iter().map(|(_, t)| t);
            quote_spanned!(span=> #v::one_of::<Self, _, _>(#name, value, &[#(#exprs),*], &[#(#texts),*])?;)
        }
        FieldRule::With(path) => {
            let text = path_text(path);
            quote_spanned!(span=> #v::function::<Self, _>(Some(#name), #text, #path(value))?;)
        }
    }
}

fn opt_usize(n: Option<usize>) -> TokenStream {
    match n {
        Some(n) => quote!(Some(#n)),
        None => quote!(None),
    }
}
