//! Error collection, so a user sees every mistake at once (as serde_derive does).

use proc_macro2::TokenStream;
use std::fmt::Display;
use std::thread;

/// Collects errors while the input is read and checked.
///
/// It must be consumed by [`Ctxt::check`]: dropping it unchecked panics (outside an
/// unwinding panic), so no code path can collect an error and then forget to report it.
pub struct Ctxt {
    /// `None` once checked.
    errors: Option<Vec<syn::Error>>,
}

impl Ctxt {
    /// An empty context, which must still be checked.
    pub fn new() -> Self {
        Ctxt {
            errors: Some(Vec::new()),
        }
    }

    /// Records an error pointing at `tokens`.
    pub fn error_spanned_by<T: quote::ToTokens, M: Display>(&mut self, tokens: T, message: M) {
        self.syn_error(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// Records one of syn's errors.
    pub fn syn_error(&mut self, error: syn::Error) {
        if let Some(errors) = self.errors.as_mut() {
            errors.push(error);
        }
    }

    /// All collected errors, or `Ok` when there were none.
    pub fn check(mut self) -> Result<(), Vec<syn::Error>> {
        let errors = self.errors.take().unwrap_or_default();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

impl Default for Ctxt {
    fn default() -> Self {
        Ctxt::new()
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !thread::panicking() && self.errors.is_some() {
            panic!("a Ctxt was dropped without check(): its errors would never be reported");
        }
    }
}

pub fn to_compile_errors(errors: Vec<syn::Error>) -> TokenStream {
    let errors = errors.iter().map(syn::Error::to_compile_error);
    quote::quote!(#(#errors)*)
}

#[cfg(test)]
mod tests {
    use super::Ctxt;

    #[test]
    fn check_returns_every_error_in_order() {
        let mut cx = Ctxt::new();
        cx.error_spanned_by(quote::quote!(a), "first");
        cx.error_spanned_by(quote::quote!(b), "second");
        let errors = cx.check().unwrap_err();
        let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(messages, ["first", "second"]);
        assert!(Ctxt::new().check().is_ok());
    }

    #[test]
    #[should_panic(expected = "without check()")]
    fn an_unchecked_ctxt_panics_on_drop() {
        let mut cx = Ctxt::new();
        cx.error_spanned_by(quote::quote!(a), "never reported");
        drop(cx);
    }

    #[test]
    #[should_panic(expected = "without check()")]
    fn an_unchecked_empty_ctxt_panics_too() {
        drop(Ctxt::new());
    }
}
