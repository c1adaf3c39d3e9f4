//! The size of what `#[derive(Entity)]` generates, held to a budget: generated code is
//! compiled in every user's crate, once per entity, so it only shrinks.
//!
//! Measured on the reference entity of `scripts/expansion.sh` (5 fields, a sort key of 3
//! parts, one GSI), in tokens of the derive's output: the script's figure (lines of the
//! compiler's expansion, which needs a nightly flag) follows the same code.

use proc_macro2::{TokenStream, TokenTree};

/// Tokens of the reference entity's expansion, at most (`scripts/expansion.sh` gives its
/// lines). Lower it with every change that shrinks the expansion.
const BUDGET: usize = 3_522;

fn tokens(stream: TokenStream) -> usize {
    stream
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Group(group) => 2 + tokens(group.stream()),
            _ => 1,
        })
        .sum()
}

#[test]
fn the_reference_entity_expands_within_its_budget() {
    let input: syn::DeriveInput = syn::parse_quote! {
        #[dynamo(table = App, pk = "CUSTOMER#{customer_id}",
                 sk = "ORDER#{placed_at}#{region}#{order_id}",
                 index(GSI1, pk = "STATUS#{status}", sk = "{placed_at}#{order_id}"))]
        pub struct Order {
            pub customer_id: String,
            pub placed_at: u64,
            pub region: String,
            pub order_id: String,
            pub status: String,
        }
    };
    let expansion = match super::expand(&input) {
        Ok(expansion) => expansion,
        Err(errors) => panic!("the reference entity does not expand: {errors:?}"),
    };
    let count = tokens(expansion);
    assert!(
        count <= BUDGET,
        "the reference entity expands to {count} tokens, over the budget of {BUDGET}: \
         generated code must not grow (move logic into the runtime)"
    );
}
