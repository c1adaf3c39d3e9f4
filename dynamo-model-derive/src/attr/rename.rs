//! `rename_all` rules, as serde applies them.

#[derive(Clone, Copy)]
pub enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    pub(crate) fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "lowercase" => RenameRule::Lower,
            "UPPERCASE" => RenameRule::Upper,
            "PascalCase" => RenameRule::Pascal,
            "camelCase" => RenameRule::Camel,
            "snake_case" => RenameRule::Snake,
            "SCREAMING_SNAKE_CASE" => RenameRule::ScreamingSnake,
            "kebab-case" => RenameRule::Kebab,
            "SCREAMING-KEBAB-CASE" => RenameRule::ScreamingKebab,
            _ => return None,
        })
    }

    /// Applies the rule to a PascalCase variant name, as serde does.
    pub fn apply_to_variant(self, variant: &str) -> String {
        match self {
            RenameRule::Pascal => variant.to_owned(),
            RenameRule::Lower => variant.to_ascii_lowercase(),
            RenameRule::Upper => variant.to_ascii_uppercase(),
            RenameRule::Camel => {
                let mut chars = variant.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => String::new(),
                }
            }
            RenameRule::Snake => {
                let mut snake = String::new();
                for (i, ch) in variant.char_indices() {
                    if i > 0 && ch.is_uppercase() {
                        snake.push('_');
                    }
                    snake.push(ch.to_ascii_lowercase());
                }
                snake
            }
            RenameRule::ScreamingSnake => RenameRule::Snake
                .apply_to_variant(variant)
                .to_ascii_uppercase(),
            RenameRule::Kebab => RenameRule::Snake
                .apply_to_variant(variant)
                .replace('_', "-"),
            RenameRule::ScreamingKebab => RenameRule::ScreamingSnake
                .apply_to_variant(variant)
                .replace('_', "-"),
        }
    }

    /// Applies the rule to a snake_case field name, as serde does.
    pub fn apply(self, field: &str) -> String {
        match self {
            RenameRule::Lower | RenameRule::Snake => field.to_string(),
            RenameRule::Upper | RenameRule::ScreamingSnake => field.to_ascii_uppercase(),
            RenameRule::Pascal => {
                let mut out = String::new();
                let mut upper = true;
                for c in field.chars() {
                    if c == '_' {
                        upper = true;
                    } else if upper {
                        out.push(c.to_ascii_uppercase());
                        upper = false;
                    } else {
                        out.push(c);
                    }
                }
                out
            }
            RenameRule::Camel => {
                let pascal = RenameRule::Pascal.apply(field);
                let mut chars = pascal.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => pascal,
                }
            }
            RenameRule::Kebab => field.replace('_', "-"),
            RenameRule::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RenameRule;

    #[test]
    fn rename_rules_match_serde() {
        assert_eq!(RenameRule::Camel.apply("display_name"), "displayName");
        assert_eq!(RenameRule::Pascal.apply("display_name"), "DisplayName");
        assert_eq!(
            RenameRule::ScreamingSnake.apply("display_name"),
            "DISPLAY_NAME"
        );
        assert_eq!(RenameRule::Kebab.apply("display_name"), "display-name");
        assert_eq!(RenameRule::ScreamingKebab.apply("a_b"), "A-B");
        assert_eq!(RenameRule::Lower.apply("a_b"), "a_b");
    }

    #[test]
    fn variant_rename_rules_match_serde() {
        assert_eq!(
            RenameRule::Snake.apply_to_variant("OutOfStock"),
            "out_of_stock"
        );
        assert_eq!(
            RenameRule::ScreamingSnake.apply_to_variant("OutOfStock"),
            "OUT_OF_STOCK"
        );
        assert_eq!(
            RenameRule::Kebab.apply_to_variant("OutOfStock"),
            "out-of-stock"
        );
        assert_eq!(
            RenameRule::ScreamingKebab.apply_to_variant("OutOfStock"),
            "OUT-OF-STOCK"
        );
        assert_eq!(
            RenameRule::Camel.apply_to_variant("OutOfStock"),
            "outOfStock"
        );
        assert_eq!(
            RenameRule::Pascal.apply_to_variant("OutOfStock"),
            "OutOfStock"
        );
        assert_eq!(
            RenameRule::Lower.apply_to_variant("OutOfStock"),
            "outofstock"
        );
        assert_eq!(
            RenameRule::Upper.apply_to_variant("OutOfStock"),
            "OUTOFSTOCK"
        );
    }
}
