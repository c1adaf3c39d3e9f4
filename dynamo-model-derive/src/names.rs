//! Case conversions for the names the derives generate.

/// `GSI1` → `gsi1`, `ByEmail` → `by_email`, `orders-by-date` → `orders_by_date`.
pub(crate) fn snake_case(name: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            if prev_lower {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        } else {
            if !out.ends_with('_') && !out.is_empty() {
                out.push('_');
            }
            prev_lower = false;
        }
    }
    out
}

/// The Rust name of an index, from which its generated methods and types are named:
/// [`snake_case`] of the DynamoDB name, without leading or trailing `_`, and `index_`
/// before a name that would start with a digit (`GSI-1` → `gsi_1`, `Customer_Complaint_GSI`
/// → `customer_complaint_gsi`, `1st.by-date` → `index_1st_by_date`).
pub(crate) fn index_rust_name(name: &str) -> String {
    let snake = snake_case(name);
    let trimmed = snake.trim_matches('_');
    match trimmed.chars().next() {
        None => "index".to_owned(),
        Some(c) if c.is_ascii_digit() => format!("index_{trimmed}"),
        Some(_) => trimmed.to_owned(),
    }
}

/// The type that spells an index name, so that the table's declaration of an index and an
/// entity's use of it meet in the trait system: eight characters a link
/// (`IndexName<'G', 'S', 'I', '-', '1', '\0', '\0', '\0', IndexNameEnd>`).
pub(crate) fn index_name_type(name: &str, span: proc_macro2::Span) -> proc_macro2::TokenStream {
    let chars: Vec<char> = name.chars().collect();
    let mut out = quote::quote_spanned!(span=> ::dynamo_model::__private::IndexNameEnd);
    for chunk in chars.chunks(8).rev() {
        let mut chunk = chunk.to_vec();
        chunk.resize(8, '\0');
        out = quote::quote_spanned!(span=> ::dynamo_model::__private::IndexName<#(#chunk),*, #out>);
    }
    out
}

/// `user_id` → `UserId`, `gsi1` → `Gsi1`.
pub(crate) fn pascal_case(snake: &str) -> String {
    snake
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{index_rust_name, pascal_case, snake_case};

    #[test]
    fn index_names_become_rust_names() {
        assert_eq!(snake_case("GSI1"), "gsi1");
        assert_eq!(snake_case("ByEmail"), "by_email");
        assert_eq!(snake_case("orders-by-date"), "orders_by_date");
        assert_eq!(pascal_case("user_id"), "UserId");
        assert_eq!(pascal_case(&snake_case("GSI1")), "Gsi1");
    }

    #[test]
    fn any_dynamodb_index_name_has_a_rust_name() {
        assert_eq!(index_rust_name("GSI1"), "gsi1");
        assert_eq!(index_rust_name("GSI_1"), "gsi_1");
        assert_eq!(index_rust_name("GSI-1"), "gsi_1");
        assert_eq!(
            index_rust_name("Customer_Complaint_GSI"),
            "customer_complaint_gsi"
        );
        assert_eq!(index_rust_name("orders.by-date"), "orders_by_date");
        assert_eq!(index_rust_name("1st.by-date"), "index_1st_by_date");
        assert_eq!(index_rust_name("-_-"), "index");
        assert_eq!(index_rust_name("_byDate_"), "by_date");
        // Every name DynamoDB accepts becomes an identifier.
        for name in ["GSI-1", "a.b", "9ab", "___", "x--y", "ABC"] {
            let rust = index_rust_name(name);
            assert!(
                syn::parse_str::<syn::Ident>(&format!("{rust}_partition")).is_ok(),
                "{name}"
            );
            assert!(
                syn::parse_str::<syn::Ident>(&format!("App{}", pascal_case(&rust))).is_ok(),
                "{name}"
            );
        }
    }
}
