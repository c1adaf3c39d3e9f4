//! Error collection, so a user sees every mistake at once (as serde_derive does).

use proc_macro2::TokenStream;
use std::fmt::Display;

/// Collects errors while the input is read and checked.
#[derive(Default)]
pub struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    pub fn error_spanned_by<T: quote::ToTokens, M: Display>(&mut self, tokens: T, message: M) {
        self.errors
            .push(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    pub fn syn_error(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    /// All collected errors, or `Ok` when there were none.
    pub fn check(self) -> Result<(), Vec<syn::Error>> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(self.errors)
        }
    }
}

pub fn to_compile_errors(errors: Vec<syn::Error>) -> TokenStream {
    let errors = errors.iter().map(syn::Error::to_compile_error);
    quote::quote!(#(#errors)*)
}
