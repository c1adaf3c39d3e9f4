//! Derive macros for [`dynamo-model`](https://docs.rs/dynamo-model): `#[derive(Table)]`,
//! `#[derive(Entity)]`, `#[derive(Attribute)]` and `#[derive(Collection)]`. Use them through the `dynamo_model` crate, which re-exports
//! them and documents their attributes.

mod attr;
mod check;
mod ctxt;
mod expand;
mod names;
mod symbol;
mod template;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Declares a table's key attributes, indexes and TTL attribute. See `dynamo_model::Table`.
#[proc_macro_derive(Table, attributes(dynamo))]
pub fn derive_table(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::table::expand(&input)
        .unwrap_or_else(ctxt::to_compile_errors)
        .into()
}

/// Binds a struct to a table with key templates. See `dynamo_model::Entity`.
#[proc_macro_derive(Entity, attributes(dynamo))]
pub fn derive_entity(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::entity::expand(&input)
        .unwrap_or_else(ctxt::to_compile_errors)
        .into()
}

/// Stores a struct or enum as one attribute value (`impl AttrValue`). See
/// `dynamo_model::Attribute`.
#[proc_macro_derive(Attribute, attributes(dynamo))]
pub fn derive_attribute(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::attribute::expand(&input)
        .unwrap_or_else(ctxt::to_compile_errors)
        .into()
}

/// Declares an enum over entity types sharing a partition. See `dynamo_model::Collection`.
#[proc_macro_derive(Collection)]
pub fn derive_collection(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::collection::expand(&input)
        .unwrap_or_else(ctxt::to_compile_errors)
        .into()
}
