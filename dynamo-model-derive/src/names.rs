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
    use super::{pascal_case, snake_case};

    #[test]
    fn index_names_become_rust_names() {
        assert_eq!(snake_case("GSI1"), "gsi1");
        assert_eq!(snake_case("ByEmail"), "by_email");
        assert_eq!(snake_case("orders-by-date"), "orders_by_date");
        assert_eq!(pascal_case("user_id"), "UserId");
        assert_eq!(pascal_case(&snake_case("GSI1")), "Gsi1");
    }
}
