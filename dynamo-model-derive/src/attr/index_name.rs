//! An index named in an entity's options: an identifier (`GSI1`) or, for a name that is
//! not one, a string (`"GSI-1"`).

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::parse::ParseStream;
use syn::{Ident, LitStr};

/// The DynamoDB name of an index as an entity's `index(..)` or `revisions_in(..)` gives it,
/// with where it was written.
#[derive(Clone)]
pub struct IndexName {
    name: String,
    span: Span,
}

impl IndexName {
    /// `GSI1` or `"GSI-1"`.
    pub fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.peek(LitStr) {
            let lit: LitStr = input.parse()?;
            return Ok(IndexName {
                name: lit.value(),
                span: lit.span(),
            });
        }
        let ident: Ident = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected an index name: `GSI1`, or a string for a name that is not a Rust identifier (`\"GSI-1\"`)",
            )
        })?;
        Ok(IndexName {
            name: ident.to_string(),
            span: ident.span(),
        })
    }

    /// The name as DynamoDB knows it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where the name was written.
    pub fn span(&self) -> Span {
        self.span
    }
}

impl PartialEq for IndexName {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl PartialEq<&str> for IndexName {
    fn eq(&self, other: &&str) -> bool {
        self.name == *other
    }
}

impl std::fmt::Display for IndexName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

/// For errors: the name as a string literal at its span.
impl ToTokens for IndexName {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        LitStr::new(&self.name, self.span).to_tokens(tokens);
    }
}
