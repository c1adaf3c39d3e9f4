//! Unique values (`#[dynamo(unique)]`): the entity's constraints (`__UNIQUE`) and one
//! lookup per constraint (`Entity::by_<name>`). The sentinels are the runtime's
//! (`dynamo_model::unique`).

use super::{dm, present_type, private};
use crate::check::{EntityModel, Field};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

/// The entity's constraints, in the order of their first field: a field's own (named
/// after its attribute) or a group's (fields sharing a name).
/// Each with the suffix of its lookup: the field's name, or the group's.
fn constraints(m: &EntityModel) -> Vec<(String, String, Vec<&Field>)> {
    let mut out: Vec<(String, String, Vec<&Field>)> = Vec::new();
    for f in &m.fields {
        let Some((_, group)) = &f.attrs.unique else {
            continue;
        };
        let (name, suffix) = match group {
            Some(lit) => (lit.value(), lit.value()),
            None => (f.name.clone(), f.ident.to_string()),
        };
        match out.iter_mut().find(|(n, ..)| *n == name && group.is_some()) {
            Some((.., fields)) => fields.push(f),
            None => out.push((name, suffix, vec![f])),
        }
    }
    out
}

/// `__UNIQUE` for the internals impl (`None`: no unique values).
pub(super) fn unique_const(m: &EntityModel) -> Option<TokenStream> {
    let constraints = constraints(m);
    if constraints.is_empty() {
        return None;
    }
    let dm = dm();
    let consts = constraints.iter().map(|(name, _, fields)| {
        let attributes = fields.iter().map(|f| &f.name);
        quote!(#dm::unique::Constraint { name: #name, attributes: &[#(#attributes),*] })
    });
    Some(quote!(const __UNIQUE: &'static [#dm::unique::Constraint] = &[#(#consts),*];))
}

/// The lookups by unique values, for the entity's inherent impl.
pub(super) fn unique_lookups(m: &EntityModel) -> TokenStream {
    let constraints = constraints(m);
    let (dm, private) = (dm(), private());
    let lookups = constraints.iter().enumerate().map(|(i, (name, suffix, fields))| {
        let method = format_ident!("by_{}", suffix.trim_start_matches("r#"));
        let params = fields.iter().map(|f| {
            let (fi, ty) = (&f.ident, present_type(&f.ty));
            quote_spanned!(ty.span()=> #fi: &#ty)
        });
        let parts = fields.iter().map(|f| {
            let (fi, attribute) = (&f.ident, &f.name);
            quote!(.__part(#attribute, #fi))
        });
        let doc = format!(
            "The lookup of the item holding a value of unique `{name}`: send it with `Db::get_unique`."
        );
        quote! {
            #[doc = #doc]
            pub fn #method(#(#params),*) -> #dm::unique::Lookup<Self> {
                #dm::unique::Lookup::__new(
                    &<Self as #private::EntityInternals>::__UNIQUE[#i],
                )#(#parts)*
            }
        }
    });
    quote!(#(#lookups)*)
}
